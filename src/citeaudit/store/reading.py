"""Reading the store back: the canonical audit of one protocol (for export) and integer columns for scoring."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from citeaudit.identity import OfficialMatcher
from citeaudit.model import (
    Answer,
    AnswerStatus,
    Audit,
    Citation,
    CitationKind,
    Claim,
    Edge,
    EvidenceGroup,
    FailedAnswer,
    Judgement,
    Label,
    Location,
    Protocol,
    RetrievalStatus,
    Run,
    RunKind,
    Segmentation,
    Severity,
    Source,
    SourceStatus,
)
from citeaudit.scope import Scope
from citeaudit.scoring import NO_SEVERITY, SEVERITIES, ScoringColumns
from citeaudit.store.judgements import JUDGEMENT_COLUMNS, judgement_from_row

__all__ = ["CURRENT_CLAIM", "read_audit", "read_scoring_columns", "read_segmentations"]

CURRENT_CLAIM = "c.current = 1"
"""SQL condition on a claim row ``c``: it belongs to its answer's newest claim set (or the answer has none)."""


def _int_rows(db: sqlite3.Connection, sql: str, params: Sequence[object], width: int) -> npt.NDArray[np.int64]:
    """An integer query result as an (n, width) array (n may be 0)."""
    return np.array(db.execute(sql, params).fetchall(), dtype=np.int64).reshape(-1, width)


def read_audit(db: sqlite3.Connection, protocol: Protocol, protocol_pk: int, *, edges: bool = True) -> Audit:
    """Everything measured under one protocol, as the canonical audit (for export); with ``edges`` false, without
    edges, their locations and judgements (for figures that read edge outcomes on their own)."""
    runs = [
        Run(rid, RunKind(kind), platform, model, collected_at, locale, sample)
        for rid, kind, platform, model, collected_at, locale, sample in db.execute(
            "SELECT id, kind, platform, model, collected_at, locale, sample FROM runs WHERE protocol_pk = ? "
            "ORDER BY pk",
            (protocol_pk,),
        )
    ]
    sources = {
        pk: Source(key, url, resolved, title, publisher, SourceStatus(status), reason, fetched, content)
        for pk, key, url, resolved, title, publisher, status, reason, fetched, content in db.execute(
            "SELECT s.pk, key, url, resolved_url, title, publisher, status, reason, fetched_at, content_hash "
            "FROM sources s JOIN protocol_sources ps ON ps.source_pk = s.pk WHERE ps.protocol_pk = ? "
            "ORDER BY s.pk",
            (protocol_pk,),
        )
    }
    answer_scope = "FROM answers a JOIN runs r ON r.pk = a.run_pk WHERE r.protocol_pk = ?"
    answers = _read_answers(db, protocol_pk, sources, answer_scope)
    claim_scope = f"FROM claims c WHERE c.answer_pk IN (SELECT a.pk {answer_scope}) AND {CURRENT_CLAIM}"
    claims = [
        Claim(cid, aid, text, start, end, fid, Severity(sev) if sev else None, entity)
        for cid, aid, text, start, end, fid, sev, entity in db.execute(
            'SELECT c.id, a.id, c.text, c.start, c."end", f.id, c.severity, c.entity FROM claims c '
            "JOIN answers a ON a.pk = c.answer_pk LEFT JOIN required_facts f ON f.pk = c.fact_pk "
            f"WHERE c.pk IN (SELECT c.pk {claim_scope}) ORDER BY c.pk",
            (protocol_pk,),
        )
    ]
    found_edges = _read_edges(db, protocol_pk, sources, claim_scope) if edges else []
    groups = _read_evidence_groups(db, protocol_pk, sources, claim_scope)
    return Audit(
        protocol=protocol,
        runs=tuple(runs),
        answers=tuple(answers),
        claims=tuple(claims),
        sources=tuple(sources.values()),
        edges=tuple(found_edges),
        evidence_groups=tuple(groups),
        failed_answers=tuple(
            FailedAnswer(ordinal, AnswerStatus(status), reason, run_id, question_id, platform)
            for ordinal, status, reason, run_id, question_id, platform in db.execute(
                "SELECT f.ordinal, f.status, f.reason, f.run_id, f.question_id, f.platform FROM ingest_failures f "
                "JOIN runs r ON r.id = f.run_id WHERE r.protocol_pk = ? ORDER BY f.pk",
                (protocol_pk,),
            )
        ),
    )


def _read_answers(
    db: sqlite3.Connection, protocol_pk: int, sources: dict[int, Source], answer_scope: str
) -> list[Answer]:
    """The protocol's answers with their citations in order."""
    citations: dict[int, list[Citation]] = {}
    for answer_pk, source_pk, url, title, marker, kind, start, end, quote in db.execute(
        f'SELECT c.answer_pk, c.source_pk, c.url, c.title, c.marker, c.kind, c.start, c."end", c.quote '
        f"FROM citations c WHERE c.answer_pk IN (SELECT a.pk {answer_scope}) ORDER BY c.answer_pk, c.ordinal",
        (protocol_pk,),
    ):
        citations.setdefault(answer_pk, []).append(
            Citation(
                None if source_pk is None else sources[source_pk].key,
                url,
                title,
                marker,
                CitationKind(kind),
                start,
                end,
                quote,
            )
        )
    answers = [
        Answer(
            aid,
            qid,
            rid,
            text,
            platform,
            model,
            locale,
            tuple(citations.get(pk, ())),
            payload,
            RetrievalStatus(retrieval) if retrieval else None,
            tuple(json.loads(queries)) if queries else (),
            reason,
        )
        for pk, aid, qid, rid, text, platform, model, locale, payload, retrieval, queries, reason in db.execute(
            "SELECT a.pk, a.id, q.id, r.id, a.text, a.platform, a.model, a.locale, a.payload_sha256, a.retrieval, "
            f"a.queries, a.retrieval_reason "
            f"{answer_scope.replace('WHERE', 'JOIN questions q ON q.pk = a.question_pk WHERE')} ORDER BY a.pk",
            (protocol_pk,),
        )
    ]
    return answers


def _read_edges(db: sqlite3.Connection, protocol_pk: int, sources: dict[int, Source], claim_scope: str) -> list[Edge]:
    """The edges of the current claims with their citation locations and judgements."""
    edge_filter = f"e.claim_pk IN (SELECT c.pk {claim_scope})"
    locations: dict[int, list[Location]] = {}
    for edge_pk, marker, start, end in db.execute(
        f'SELECT l.edge_pk, l.marker, l.start, l."end" FROM edge_locations l JOIN edges e ON e.pk = l.edge_pk '
        f"WHERE {edge_filter} ORDER BY l.pk",
        (protocol_pk,),
    ):
        locations.setdefault(edge_pk, []).append(Location(marker, start, end))
    judgements: dict[int, list[Judgement]] = {}
    for edge_pk, *row in db.execute(
        f"SELECT j.edge_pk, {JUDGEMENT_COLUMNS} FROM judgements j JOIN edges e ON e.pk = j.edge_pk "
        f"WHERE {edge_filter} ORDER BY j.pk",
        (protocol_pk,),
    ):
        judgements.setdefault(edge_pk, []).append(judgement_from_row(row))
    edges = [
        Edge(cid, sources[spk].key, tuple(locations[pk]), tuple(judgements.get(pk, ())))
        for pk, cid, spk in db.execute(
            f"SELECT e.pk, c.id, e.source_pk FROM edges e JOIN claims c ON c.pk = e.claim_pk WHERE {edge_filter} "
            "ORDER BY e.pk",
            (protocol_pk,),
        )
    ]
    return edges


def _read_evidence_groups(
    db: sqlite3.Connection, protocol_pk: int, sources: dict[int, Source], claim_scope: str
) -> list[EvidenceGroup]:
    """The evidence groups of the current claims with their sources in order."""
    groups = []
    for gpk, gid, cid, label, docs, steps, reviewer in db.execute(
        "SELECT g.pk, g.id, c.id, g.label, g.required_documents, g.reasoning_steps, g.reviewer "
        "FROM evidence_groups g JOIN claims c ON c.pk = g.claim_pk "
        f"WHERE g.claim_pk IN (SELECT c.pk {claim_scope}) ORDER BY g.pk",
        (protocol_pk,),
    ):
        keys = tuple(
            sources[spk].key
            for (spk,) in db.execute(
                "SELECT source_pk FROM evidence_group_sources WHERE group_pk = ? ORDER BY ordinal", (gpk,)
            )
        )
        groups.append(
            EvidenceGroup(
                gid,
                cid,
                keys,
                Label(label) if label else None,
                tuple(json.loads(docs)),
                tuple(json.loads(steps)),
                reviewer,
            )
        )
    return groups


def read_scoring_columns(
    db: sqlite3.Connection, protocol: Protocol, protocol_pk: int, scope: Scope
) -> tuple[ScoringColumns, int]:
    """Columns for scoring one protocol's answers in ``scope``, and how many answers the run-kind
    filter left out. Reads only integer columns; no model objects are built."""
    kinds = sorted(str(k) for k in scope.run_kinds)
    answers_sql, params = _answers_in_scope(protocol_pk, scope)
    expressions = _DIMENSIONS
    rows = db.execute(
        f"SELECT a.pk, q.ordinal, {', '.join(expressions[d] for d in expressions)} {answers_sql} ORDER BY a.pk",
        params,
    ).fetchall()
    return _columns(db, protocol, protocol_pk, kinds, answers_sql, params, rows)


_DIMENSIONS = {
    "platform": "coalesce(a.platform, r.platform)",
    "run": "r.id",
    "question": "q.id",
    "model": "coalesce(a.model, r.model)",
    "locale": "coalesce(a.locale, q.locale)",
    "sample": "CAST(r.sample AS TEXT)",
}

_COLLECTION_DIMENSIONS = {
    "collection": "(SELECT min(k.name) FROM collection_tasks t JOIN collections k ON k.pk = t.collection_pk "
    "WHERE t.answer_id = a.id)",
    "collection_date": "(SELECT min(substr(k.created_at, 1, 10)) FROM collection_tasks t "
    "JOIN collections k ON k.pk = t.collection_pk WHERE t.answer_id = a.id)",
}
"""The collection an answer was gathered in and its date: read only when the database links answers to
collections (most do not, and then every answer has ``None``)."""


def _collection_dims(db: sqlite3.Connection, answers_sql: str, params: list[object], n: int) -> dict[str, list[Any]]:
    linked = db.execute("SELECT EXISTS (SELECT 1 FROM collection_tasks WHERE answer_id IS NOT NULL)").fetchone()[0]
    if not linked:
        return {name: [None] * n for name in _COLLECTION_DIMENSIONS}
    rows = db.execute(
        f"SELECT {', '.join(_COLLECTION_DIMENSIONS.values())} {answers_sql} ORDER BY a.pk", params
    ).fetchall()
    return {name: [row[i] for row in rows] for i, name in enumerate(_COLLECTION_DIMENSIONS)}


def _answers_in_scope(protocol_pk: int, scope: Scope) -> tuple[str, list[object]]:
    """``FROM … WHERE …`` selecting the answers ``a`` of one protocol in ``scope``, and its parameters."""
    kinds = sorted(str(k) for k in scope.run_kinds)
    conditions = [f"r.kind IN ({', '.join('?' * len(kinds))})"]
    params: list[object] = [protocol_pk, *kinds]
    for name, values in sorted(scope.where.items()):
        expression = _DIMENSIONS.get(name) or _COLLECTION_DIMENSIONS[name]
        conditions.append(f"{expression} IN ({', '.join('?' * len(values))})")
        params.extend(sorted(values))
    where = " AND ".join(conditions)
    answers_sql = (
        "FROM answers a JOIN runs r ON r.pk = a.run_pk JOIN questions q ON q.pk = a.question_pk "
        f"WHERE r.protocol_pk = ? AND {where}"
    )
    return answers_sql, params


def read_segmentations(db: sqlite3.Connection, protocol_pk: int, scope: Scope) -> tuple[set[Segmentation], int]:
    """The segmentations of the newest claim sets of the answers in ``scope``, and how many answers in scope
    have no claim set (their claims are as ingested)."""
    answers_sql, params = _answers_in_scope(protocol_pk, scope)
    found = {
        Segmentation(method, version, tuple((str(n), str(v)) for n, v in json.loads(parameters)))
        for method, version, parameters in db.execute(
            "SELECT DISTINCT s.method, s.version, s.parameters FROM claim_sets s "
            f"JOIN current_claim_sets c ON c.set_pk = s.pk WHERE s.answer_pk IN (SELECT a.pk {answers_sql})",
            params,
        )
    }
    (unsegmented,) = db.execute(
        f"SELECT count(*) {answers_sql} AND a.pk NOT IN (SELECT answer_pk FROM claim_sets)", params
    ).fetchone()
    return found, int(unsegmented)


def _columns(
    db: sqlite3.Connection,
    protocol: Protocol,
    protocol_pk: int,
    kinds: list[str],
    answers_sql: str,
    params: list[object],
    rows: list[Any],
) -> tuple[ScoringColumns, int]:
    """Integer columns for the answers ``rows`` selected by ``answers_sql``."""
    expressions = _DIMENSIONS
    (excluded,) = db.execute(
        "SELECT count(*) FROM answers a JOIN runs r ON r.pk = a.run_pk WHERE r.protocol_pk = ? AND "
        f"r.kind NOT IN ({', '.join('?' * len(kinds))})",
        (protocol_pk, *kinds),
    ).fetchone()
    answer_pks = np.array([r[0] for r in rows], dtype=np.int64)
    dims = {name: [r[2 + i] for r in rows] for i, name in enumerate(expressions)}
    dims.update(_collection_dims(db, answers_sql, params, len(rows)))

    fact_rows = db.execute(
        "SELECT f.pk, q.ordinal, f.severity FROM required_facts f JOIN questions q ON q.pk = f.question_pk "
        "WHERE f.protocol_pk = ? ORDER BY q.ordinal, f.ordinal",
        (protocol_pk,),
    ).fetchall()
    fact_pks = np.array([r[0] for r in fact_rows], dtype=np.int64)
    fact_order = np.argsort(fact_pks)
    question_facts: list[list[int]] = [[] for _ in protocol.questions]
    for index, (_, q_ordinal, _) in enumerate(fact_rows):
        question_facts[q_ordinal].append(index)
    severity_codes = {str(s): i for i, s in enumerate(SEVERITIES)}
    fact_severity = np.array([severity_codes.get(r[2], NO_SEVERITY) for r in fact_rows], dtype=np.int64)

    def to_index(pks: np.ndarray, sorted_pks: np.ndarray, order: np.ndarray | None = None) -> np.ndarray:
        positions = np.searchsorted(sorted_pks, pks)
        return positions if order is None else order[positions]

    severity_case = " ".join(f"WHEN '{s}' THEN {i}" for i, s in enumerate(SEVERITIES))
    claim_rows = _int_rows(
        db,
        f"SELECT c.pk, c.answer_pk, coalesce(c.fact_pk, -1), CASE coalesce(c.severity, f.severity) "
        f"{severity_case} ELSE {NO_SEVERITY} END FROM claims c LEFT JOIN required_facts f ON f.pk = c.fact_pk "
        f"WHERE c.answer_pk IN (SELECT a.pk {answers_sql}) AND {CURRENT_CLAIM} ORDER BY c.pk",
        params,
        width=4,
    )
    claim_pks = claim_rows[:, 0]
    claim_fact_pk = claim_rows[:, 2]
    claim_fact = np.full(len(claim_rows), -1, dtype=np.int64)
    has_fact = claim_fact_pk >= 0
    claim_fact[has_fact] = to_index(claim_fact_pk[has_fact], fact_pks[fact_order], fact_order)

    edge_rows = _int_rows(
        db,
        "SELECT e.claim_pk, e.source_pk, e.final_code, e.n_locations FROM edges e "
        "WHERE e.claim_pk IN (SELECT c.pk FROM claims c WHERE c.answer_pk IN "
        f"(SELECT a.pk {answers_sql}) AND {CURRENT_CLAIM})",
        params,
        width=4,
    )
    citation_rows = _int_rows(
        db,
        "SELECT c.answer_pk, c.source_pk FROM citations c WHERE c.kind = 'cited' AND "
        f"c.answer_pk IN (SELECT a.pk {answers_sql})",
        params,
        width=2,
    )
    matcher = OfficialMatcher(protocol.official_domains)
    max_source = int(db.execute("SELECT coalesce(max(pk), 0) FROM sources").fetchone()[0])
    source_official = np.zeros(max_source + 1, dtype=np.bool_)
    used = np.zeros(max_source + 1, dtype=np.bool_)
    used[edge_rows[:, 1]] = True
    used[citation_rows[:, 1]] = True
    if used.any():
        for pk, host, path in db.execute(
            f"SELECT pk, host, path FROM sources WHERE pk IN ({','.join(map(str, np.flatnonzero(used).tolist()))})"
        ):
            source_official[pk] = matcher.match_location(host, path)
    weights = dict(protocol.weights) if protocol.weights is not None else None
    columns = ScoringColumns(
        answer_dims=dims,
        answer_question=np.array([r[1] for r in rows], dtype=np.int64),
        question_facts=[np.array(f, dtype=np.int64) for f in question_facts],
        fact_severity=fact_severity,
        claim_answer=to_index(claim_rows[:, 1], answer_pks),
        claim_fact=claim_fact,
        claim_severity=claim_rows[:, 3],
        edge_claim=to_index(edge_rows[:, 0], claim_pks),
        edge_source=edge_rows[:, 1],
        edge_code=edge_rows[:, 2],
        edge_locations=edge_rows[:, 3],
        source_official=source_official,
        citation_answer=to_index(citation_rows[:, 0], answer_pks),
        citation_source=citation_rows[:, 1],
        fact_weight=None
        if weights is None
        else np.array([weights.get(Severity(r[2]), 0.0) if r[2] else 0.0 for r in fact_rows], dtype=np.float64),
    )
    return columns, int(excluded)
