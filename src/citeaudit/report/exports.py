"""Flat exports for analysis tools: answers, claims, edges, judgements and scores as CSV, JSON Lines or Parquet.

One file per table. Every row keeps its ids, so the tables join back together (``edges.claim_id`` →
``claims.id`` → ``claims.answer_id`` → ``answers.id``). Undefined values are empty cells / ``null``.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from citeaudit.core.errors import CiteauditError
from citeaudit.core.identity import OfficialMatcher
from citeaudit.core.model import Audit, review_outcome
from citeaudit.core.results import ScoreResult
from citeaudit.report.csv_cells import SafeDictWriter
from citeaudit.report.files import write_atomically
from citeaudit.report.formats import score_row

__all__ = ["TABLES", "export_tables", "table_rows"]

TABLES = ("answers", "citations", "required_facts", "claims", "edges", "judgements", "scores")
"""The tables written, in order: with ``citations`` (every citation with its URL and whether its source is
official) and ``required_facts`` (each question's), the three headline numbers can be rebuilt from the files."""

Row = dict[str, Any]


def _answers(audit: Audit) -> list[Row]:
    runs = {run.id: run for run in audit.runs}
    return [
        {
            "id": a.id,
            "question_id": a.question_id,
            "run_id": a.run_id,
            "run_kind": str(runs[a.run_id].kind) if a.run_id in runs else "platform",
            "platform": a.platform or (runs[a.run_id].platform if a.run_id in runs else None),
            "model": a.model or (runs[a.run_id].model if a.run_id in runs else None),
            "locale": a.locale,
            "retrieval": str(a.retrieval) if a.retrieval else None,
            "retrieval_reason": a.retrieval_reason,
            "citations_cited": sum(1 for c in a.citations if c.kind == "cited"),
            "citations_retrieved": sum(1 for c in a.citations if c.kind == "retrieved"),
            "citations_dangling": sum(1 for c in a.citations if c.kind == "dangling"),
            "payload_sha256": a.payload_sha256,
            "text": a.text,
        }
        for a in audit.answers
    ]


def _citations(audit: Audit) -> list[Row]:
    sources = {s.key: s for s in audit.sources}
    official = OfficialMatcher(audit.protocol.official_domains)
    rows = []
    for a in audit.answers:
        for c in a.citations:
            source = sources.get(c.source_key) if c.source_key is not None else None
            url = (source.resolved_url or source.url) if source is not None else c.url
            rows.append(
                {
                    "answer_id": a.id,
                    "kind": str(c.kind),
                    "url": c.url,
                    "title": c.title,
                    "source_key": c.source_key,
                    "source_status": str(source.status) if source is not None else None,
                    "is_official": official(url),
                }
            )
    return rows


def _required_facts(audit: Audit) -> list[Row]:
    return [
        {
            "question_id": q.id,
            "fact_id": f.id,
            "text": f.text,
            "severity": str(f.severity) if f.severity else None,
        }
        for q in audit.protocol.questions
        for f in q.required_facts
    ]


def _claims(audit: Audit) -> list[Row]:
    return [
        {
            "id": c.id,
            "answer_id": c.answer_id,
            "text": c.text,
            "start": c.start,
            "end": c.end,
            "required_fact_id": c.required_fact_id,
            "severity": str(c.severity) if c.severity else None,
            "entity": c.entity,
        }
        for c in audit.claims
    ]


def _edges(audit: Audit) -> list[Row]:
    sources = {s.key: s for s in audit.sources}
    official = OfficialMatcher(audit.protocol.official_domains)
    rows = []
    for e in audit.edges:
        source = sources[e.source_key]
        state, label = review_outcome(e.judgements)
        rows.append(
            {
                "claim_id": e.claim_id,
                "source_key": e.source_key,
                "url": source.url,
                "resolved_url": source.resolved_url,
                "title": source.title,
                "source_status": str(source.status),
                "is_official": official(source.resolved_url or source.url),
                "locations": len(e.locations),
                "review_state": str(state),
                "final_label": str(label) if label else None,
                "judgements": len(e.judgements),
            }
        )
    return rows


def _judgements(audit: Audit) -> list[Row]:
    return [
        {
            "claim_id": e.claim_id,
            "source_key": e.source_key,
            "label": str(j.label),
            "reviewer": j.reviewer,
            "origin": str(j.origin),
            "stage": str(j.stage),
            "passage": j.passage,
            "period": j.period,
            "reasoning": j.reasoning,
            "created_at": j.created_at,
            "judge": j.judge,
            "judge_model": j.judge_model,
            "judge_version": j.judge_version,
            "prompt_sha256": j.prompt_sha256,
            "confidence": j.confidence,
            "severity": None if j.severity is None else str(j.severity),
        }
        for e in audit.edges
        for j in e.judgements
    ]


def _scores(result: ScoreResult, unresolved: int) -> list[Row]:
    return [score_row(result, scope, unresolved) for scope in (*result.groups, result.overall)]


def table_rows(audit: Audit, result: ScoreResult, unresolved: int = 0) -> dict[str, list[Row]]:
    """Every table's rows (``unresolved`` cited links not followed yet keep the whole scope's official rate
    provisional in the scores table, as in every other view)."""
    return {
        "answers": _answers(audit),
        "citations": _citations(audit),
        "required_facts": _required_facts(audit),
        "claims": _claims(audit),
        "edges": _edges(audit),
        "judgements": _judgements(audit),
        "scores": _scores(result, unresolved),
    }


def _csv(rows: list[Row], columns: list[str]) -> bytes:
    buffer = io.StringIO()
    writer = SafeDictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue().encode("utf-8")


def _jsonl(rows: list[Row], columns: list[str]) -> bytes:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8")


def _parquet(rows: list[Row], columns: list[str]) -> bytes:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise CiteauditError(
            "Parquet export needs pyarrow: pip install 'citeaudit[parquet]'  (or: pip install pyarrow)"
        ) from None
    table = pa.Table.from_pylist(rows) if rows else pa.table({name: pa.array([], pa.string()) for name in columns})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return bytes(sink.getvalue().to_pybytes())


WRITERS: dict[str, tuple[str, Callable[[list[Row], list[str]], bytes]]] = {
    "csv": (".csv", _csv),
    "jsonl": (".jsonl", _jsonl),
    "parquet": (".parquet", _parquet),
}


def _columns(rows: list[Row]) -> list[str]:
    return list(rows[0]) if rows else []


def export_tables(audit: Audit, result: ScoreResult, fmt: str, folder: Path, unresolved: int = 0) -> list[Path]:
    """Write every table into ``folder`` (created if needed): all of them, each whole, or none (``unresolved``:
    see :func:`table_rows`)."""
    suffix, writer = WRITERS[fmt]
    tables = table_rows(audit, result, unresolved)
    encoded = {name: writer(rows, _columns(rows)) for name, rows in tables.items()}  # fail before writing
    made = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    try:
        for name in TABLES:
            target = folder / f"{name}{suffix}"
            write_atomically(target, encoded[name])
            written.append(target)
    except BaseException:
        # All tables or none (a full disk after the second table leaves neither it nor the first).
        for path in written:
            path.unlink(missing_ok=True)
        if made:
            folder.rmdir()
        raise
    return written
