"""``citeaudit suggest`` on a database of WiCE test claims (../shared/data/wice/claim/test.jsonl), each citing its
article stored as a resolved snapshot (the article's sentences, one per line, split into passages as ``resolve``
splits them).

Measured: a full ``suggest_edges`` run with the checks judge and the ranking reviewers get unless told otherwise
(``SUGGEST_METHOD``: trimmed windows), top 3 (ranking, judging and one write
transaction per edge: model judgement, suggestion row, passages, audit-log row), and a rerun that skips every
edge. Baseline in the same run: the same ranking and judging in memory through ``suggest_for_edge`` over the same
passages, nothing stored (ratio = suggest seconds / in-memory seconds: what the database costs). Medians of
``--repeat`` runs, each on a fresh copy of the database. Target: the stored run within 1.5x of the baseline (what
storing each suggestion with its passages and audit row may cost).

Run: make bench   (or: python benchmarks/bench_suggest.py [--limit N] [--repeat R])
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from citeaudit.core.model import SourceStatus
from citeaudit.core.passages import Passage
from citeaudit.evidence import SUGGEST_METHOD, PassageIndex
from citeaudit.interchange import parse_audit_bytes
from citeaudit.judges import ChecksJudge, suggest_for_edge
from citeaudit.store import Store
from citeaudit.store.records import Document, FetchOutcome
from citeaudit.store.suggestions import document_passages
from citeaudit.suggest import suggest_edges

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"


def build(path: Path, rows: list[dict[str, object]]) -> None:
    protocol = {
        "id": "bench",
        "version": "1",
        "official_domains": ["example.org"],
        "questions": [{"id": "q1", "text": "?", "required_facts": []}],
    }
    urls = [f"https://wice.test/{i}" for i in range(len(rows))]
    doc = {
        "format": "citeaudit.audit/v1",
        "protocol": protocol,
        "answers": [{"id": "a1", "question_id": "q1", "run_id": "r1", "text": "x"}],
        "claims": [{"id": f"c{i}", "answer_id": "a1", "text": str(r["claim"])} for i, r in enumerate(rows)],
        "edges": [{"claim_id": f"c{i}", "url": url} for i, url in enumerate(urls)],
    }
    payload = json.dumps(doc).encode()
    with Store(path) as store:
        store.import_audit(parse_audit_bytes(payload, "bench.json"), payload, "bench.json")
        fetches = []
        for url, row in zip(urls, rows, strict=True):
            evidence = row["evidence"]
            assert isinstance(evidence, list)
            text = "\n\n".join(str(s) for s in evidence)
            body = text.encode()
            document = Document(hashlib.sha256(body).hexdigest(), "text/plain", body, text)
            outcome = FetchOutcome(
                url, SourceStatus.RESOLVED, None, (), "2026-11-30T00:00:00+00:00", final_url=url, document=document
            )
            fetches.append((store.sources.pk(url), outcome))
        store.sources.record_fetches(fetches)


def in_memory(path: Path) -> tuple[float, int]:
    """Rank and judge every edge from the stored passages, nothing written: (seconds, edges)."""
    with Store(path) as store:
        db = store.connection
        work = []
        for claim, sha in db.execute(
            "SELECT c.text, f.document_sha256 FROM edges e JOIN claims c ON c.pk = e.claim_pk "
            "JOIN fetches f ON f.source_pk = e.source_pk ORDER BY e.pk"
        ):
            text, rows = document_passages(db, sha)
            work.append((claim, [Passage(text[r.start : r.end], r.start, r.end) for r in rows]))
    judge = ChecksJudge()
    start = time.perf_counter()
    for claim, passages in work:
        suggest_for_edge(judge, claim, PassageIndex(passages), k=3, method=SUGGEST_METHOD)
    return time.perf_counter() - start, len(work)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    source = SHARED / "wice" / "claim" / "test.jsonl"
    if not source.exists():
        print(f"skipped: {source} is absent (see ../shared/data/SOURCES.md); not met")
        return
    rows = [json.loads(line) for line in source.read_text().splitlines()][: args.limit]
    with tempfile.TemporaryDirectory() as folder:
        template = Path(folder) / "template.db"
        build(template, rows)
        full: list[float] = []
        rerun: list[float] = []
        baseline: list[float] = []
        edges = suggested = 0
        for n in range(args.repeat):
            copy = Path(folder) / f"run{n}.db"
            shutil.copy(template, copy)
            start = time.perf_counter()
            report = suggest_edges(copy, ChecksJudge(), k=3, method=SUGGEST_METHOD)
            full.append(time.perf_counter() - start)
            start = time.perf_counter()
            again = suggest_edges(copy, ChecksJudge(), k=3, method=SUGGEST_METHOD)
            rerun.append(time.perf_counter() - start)
            assert again.suggested == 0
            seconds, edges = in_memory(copy)
            baseline.append(seconds)
            suggested = report.suggested
    f, r, b = statistics.median(full), statistics.median(rerun), statistics.median(baseline)
    print(
        f"bench_suggest: {len(rows)} WiCE claims, {suggested} suggested ({SUGGEST_METHOD} top 3); "
        f"median of {args.repeat}; "
        f"load {os.getloadavg()[0]:.2f}"
    )
    print(f"  in memory (baseline)   {b:7.3f} s   {edges / b:8.1f} edges/s")
    print(f"  suggest (stored)       {f:7.3f} s   {suggested / f:8.1f} edges/s   ratio {f / b:5.2f}x baseline")
    print(f"  rerun (all skipped)    {r:7.3f} s   ratio {r / b:5.2f}x baseline")
    verdict = "met" if f <= 1.5 * b else "not met"
    print(f"target: suggest (stored) <= 1.5x the in-memory baseline ({f / b:.2f}x): {verdict}")
    sys.stdout.flush()


if __name__ == "__main__":
    import machine

    machine.run(main)
