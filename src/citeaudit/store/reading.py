"""Reading the store back: the canonical audit of one protocol (for export) and integer columns for scoring."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import numpy.typing as npt

from citeaudit.core.identity import OfficialMatcher
from citeaudit.core.model import (
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
    ReviewState,
    Run,
    RunKind,
    Segmentation,
    Severity,
    Source,
    SourceStatus,
)
from citeaudit.core.scope import Scope
from citeaudit.core.scoring import NO_SEVERITY, SEVERITIES, ScoringColumns
from citeaudit.store.judgements import JUDGEMENT_COLUMNS, judgement_from_row

__all__ = [
    "CURRENT_CLAIM",
    "STATES",
    "STATE_CODE",
    "answers_in_scope",
    "index_of",
    "int_columns",
    "official_mask",
    "read_audit",
    "read_scoring_columns",
    "read_segmentations",
    "suggestions_shown_in_scope",
]

CURRENT_CLAIM = "c.current = 1"
"""SQL condition on a claim row ``c``: it belongs to its answer's newest claim set (or the answer has none)."""

STATES: tuple[str, ...] = tuple(str(state) for state in ReviewState)
"""The review state of each state code."""
STATE_CODE = "CASE e.review_state " + " ".join(f"WHEN '{s}' THEN {i}" for i, s in enumerate(STATES)) + " END"
"""SQL: the review state the store keeps with an edge row ``e``, as its position in :data:`STATES`."""


# Each stored value's member, looked up without a call of the enumeration a row (a value outside them is still
# refused by the call, as before).
_CITATION_KINDS = {kind.value: kind for kind in CitationKind}
_STATUSES = {status.value: status for status in SourceStatus}
_SEVERITIES = {severity.value: severity for severity in Severity}


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
        pk: Source(
            key,
            url,
            resolved,
            title,
            publisher,
            _STATUSES.get(status) or SourceStatus(status),
            reason,
            fetched,
            content,
        )
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
        Claim(cid, aid, text, start, end, fid, (_SEVERITIES.get(sev) or Severity(sev)) if sev else None, entity)
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
                _CITATION_KINDS.get(kind) or CitationKind(kind),
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
    db: sqlite3.Connection,
    protocol: Protocol,
    protocol_pk: int,
    scope: Scope,
    *,
    helper: sqlite3.Connection | None = None,
) -> tuple[ScoringColumns, int]:
    """Columns for scoring one protocol's answers in ``scope``, and how many answers the run-kind
    filter left out. Reads only integer columns; no model objects are built. ``helper``: a second connection on
    the same state as ``db`` (:func:`~citeaudit.store.connection.paired_snapshot`), which reads part of the
    largest table at the same time."""
    kinds = sorted(str(k) for k in scope.run_kinds)
    answers_sql, params = answers_in_scope(protocol_pk, scope)
    expressions = _DIMENSIONS
    rows = db.execute(
        f"SELECT a.pk, q.ordinal, {', '.join(expressions[d] for d in expressions)} {answers_sql} ORDER BY a.pk",
        params,
    ).fetchall()
    return _columns(db, protocol, protocol_pk, kinds, answers_sql, params, rows, helper)


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


def answers_in_scope(protocol_pk: int, scope: Scope) -> tuple[str, list[object]]:
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


def suggestions_shown_in_scope(db: sqlite3.Connection, protocol_pk: int, scope: Scope) -> bool:
    """Whether a person judged an edge of a current claim of an answer in ``scope`` with model suggestions shown
    on the page."""
    answers_sql, params = answers_in_scope(protocol_pk, scope)
    # From the few judgements made with suggestions shown (a partial index holds just those) to their claims:
    # CROSS JOIN keeps the judgements the outer loop, never a scan of every claim in scope.
    found = db.execute(
        "SELECT 1 FROM judgements j CROSS JOIN edges e ON e.pk = j.edge_pk CROSS JOIN claims c ON c.pk = e.claim_pk "
        "WHERE j.suggestions_shown = 1 AND j.origin = 'human' AND c.current AND c.answer_pk IN (SELECT a.pk "
        f"{answers_sql}) LIMIT 1",
        params,
    ).fetchone()
    return found is not None


def read_segmentations(db: sqlite3.Connection, protocol_pk: int, scope: Scope) -> tuple[set[Segmentation], int]:
    """The segmentations of the newest claim sets of the answers in ``scope``, and how many answers in scope
    have no claim set (their claims are as ingested)."""
    answers_sql, params = answers_in_scope(protocol_pk, scope)
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


_TEXT_CHUNK_ROWS = 1 << 23
"""Rows whose integers one ``group_concat`` text carries at most: about 80 MB of digits, far below SQLite's
one-gigabyte limit on a value."""


_SPLIT_ROWS = 1 << 20
"""Rows (by rowid span) from which a table is read by two connections at once when a second one is given."""


_WHOLE_SCAN_SHARE = 0.25
"""Share of the claims table in scope from which the edges are read by one scan of the whole table."""


def int_columns(
    db: sqlite3.Connection,
    expressions: Sequence[str],
    table: str,
    rest: str,
    params: Sequence[object],
    *,
    helper: sqlite3.Connection | None = None,
) -> list[npt.NDArray[np.int64]]:
    """The integer ``expressions`` of ``SELECT … FROM {table} {rest}`` as arrays, rows in one order.

    Each column comes back as one comma-separated text (``group_concat``) that numpy parses in C: fetching a
    row of Python integers costs about five times as much as SQLite's own scan (ten million edges: 17 s
    against 3.4 s). The expressions must not be NULL (``group_concat`` skips NULLs). A large table is read in
    ranges of its rowid so no text grows past :data:`_TEXT_CHUNK_ROWS` rows. With ``helper``, a second
    connection on the same state of the database, a table of :data:`_SPLIT_ROWS` rows or more is read in two
    halves at once, the first by ``helper`` on a thread of its own: SQLite runs a statement without holding
    Python's interpreter lock, so the two scans take a core each."""
    alias = table.split()[-1]
    low, high = db.execute(f"SELECT coalesce(min(rowid), 0), coalesce(max(rowid), -1) FROM {table}").fetchone()
    select = ", ".join(f"group_concat({e})" for e in expressions)
    span = high - low + 1
    if span < _TEXT_CHUNK_ROWS and (helper is None or span < _SPLIT_ROWS):
        row = db.execute(f"SELECT {select} FROM {table} {rest}", params).fetchone()
        return [_parse_ints(text) for text in row]
    pieces = -(-span // _TEXT_CHUNK_ROWS)
    if helper is not None:
        pieces = max(2, pieces + pieces % 2)  # an even number of ranges: half for each connection
    size = -(-span // pieces)
    ranges = [(start, start + size) for start in range(low, high + 1, size)]

    def read(connection: sqlite3.Connection, part: list[tuple[int, int]]) -> list[list[npt.NDArray[np.int64]]]:
        # NOT INDEXED: walk the rowid range, not an index over the whole table once per range.
        statement = f"SELECT {select} FROM {table} NOT INDEXED {rest} AND {alias}.rowid >= ? AND {alias}.rowid < ?"
        return [
            [_parse_ints(text) for text in connection.execute(statement, (*params, *bounds)).fetchone()]
            for bounds in part
        ]

    if helper is None:
        parts = read(db, ranges)
    else:
        half = len(ranges) // 2
        with ThreadPoolExecutor(max_workers=1) as pool:
            first = pool.submit(read, helper, ranges[:half])
            second = read(db, ranges[half:])
            parts = first.result() + second
    return [np.concatenate(column) for column in zip(*parts, strict=True)]


def _parse_ints(text: str | None) -> npt.NDArray[np.int64]:
    if not text:
        return np.zeros(0, dtype=np.int64)
    return np.fromstring(text, dtype=np.int64, sep=",")


def index_of(pks: npt.NDArray[np.int64], sorted_pks: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Positions of ``pks`` in the ascending ``sorted_pks`` (every one present): a gather through a dense
    table when the keys are dense (as rowids are), else a binary search."""
    if len(sorted_pks) and int(sorted_pks[-1]) < 4 * len(sorted_pks) + 1024:
        table = np.zeros(int(sorted_pks[-1]) + 1, dtype=np.int64)
        table[sorted_pks] = np.arange(len(sorted_pks), dtype=np.int64)
        return table[pks]
    return np.searchsorted(sorted_pks, pks).astype(np.int64)


def _sorted_by_first(columns: list[npt.NDArray[np.int64]]) -> list[npt.NDArray[np.int64]]:
    """The columns reordered so the first ascends (a scan usually returns them so already)."""
    first = columns[0]
    if len(first) < 2 or bool(np.all(first[1:] > first[:-1])):
        return columns
    order = np.argsort(first, kind="stable")
    return [column[order] for column in columns]


def official_mask(db: sqlite3.Connection, protocol: Protocol) -> npt.NDArray[np.bool_]:
    """Per source pk, whether the source is official under the protocol (:meth:`OfficialMatcher.official_each`):
    decided once per host, reading the pks only of sources on official hosts or hosts declared with a path
    prefix, and paths only of the latter."""
    (max_source,) = db.execute("SELECT coalesce(max(pk), 0) FROM sources").fetchone()
    hosts: list[str | None] = [host for (host,) in db.execute("SELECT DISTINCT host FROM sources")]

    def rows_on(wanted: Sequence[int]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        chosen = json.dumps({hosts[i]: i for i in wanted})
        pks, codes = int_columns(
            db, ["s.pk", "j.value"], "sources s", "JOIN json_each(?) j ON j.key = s.host WHERE 1", [chosen]
        )
        return pks, codes

    def paths(pks: npt.NDArray[np.int64]) -> list[str | None]:
        found = dict(
            db.execute(
                "SELECT pk, path FROM sources WHERE pk IN (SELECT value FROM json_each(?))", (json.dumps(pks.tolist()),)
            ).fetchall()
        )
        return [found[pk] for pk in pks.tolist()]

    return OfficialMatcher(protocol.official_domains).official_each(hosts, rows_on, paths, int(max_source) + 1)


def _columns(
    db: sqlite3.Connection,
    protocol: Protocol,
    protocol_pk: int,
    kinds: list[str],
    answers_sql: str,
    params: list[object],
    rows: list[Any],
    helper: sqlite3.Connection | None,
) -> tuple[ScoringColumns, int]:
    """Integer columns for the answers ``rows`` selected by ``answers_sql`` (``helper``: see
    :func:`read_scoring_columns`)."""
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

    severity_case = " ".join(f"WHEN '{s}' THEN {i}" for i, s in enumerate(SEVERITIES))
    in_scope = f"IN (SELECT a.pk {answers_sql})"
    claim_pks, claim_answer_pk, claim_fact_pk, claim_severity = _sorted_by_first(
        int_columns(
            db,
            [
                "c.pk",
                "c.answer_pk",
                "coalesce(c.fact_pk, -1)",
                f"CASE coalesce(c.severity, (SELECT f.severity FROM "
                f"required_facts f WHERE f.pk = c.fact_pk)) {severity_case} ELSE {NO_SEVERITY} END",
            ],
            "claims c",
            f"WHERE c.answer_pk {in_scope} AND {CURRENT_CLAIM}",
            params,
            helper=helper,
        )
    )
    claim_fact = np.full(len(claim_pks), -1, dtype=np.int64)
    has_fact = claim_fact_pk >= 0
    claim_fact[has_fact] = fact_order[np.searchsorted(fact_pks[fact_order], claim_fact_pk[has_fact])]

    edge_columns = ["e.claim_pk", "e.source_pk", "e.final_code", "e.n_locations"]
    (claim_span,) = db.execute("SELECT coalesce(max(rowid) - min(rowid) + 1, 0) FROM claims").fetchone()
    if len(claim_pks) >= _WHOLE_SCAN_SHARE * claim_span:
        # Most claims are in scope: one scan of the whole table, the others' edges dropped here, takes half the
        # time of finding each claim's edges through the (claim, source) index (8 M edges: 2.5 s against 5.5 s).
        read = int_columns(db, edge_columns, "edges e", "WHERE 1", [], helper=helper)
        claim_row = np.full(int(claim_pks[-1]) + 1 if len(claim_pks) else 0, -1, dtype=np.int64)
        claim_row[claim_pks] = np.arange(len(claim_pks), dtype=np.int64)
        known = read[0] < len(claim_row)
        kept = np.zeros(len(read[0]), dtype=np.bool_)
        kept[known] = claim_row[read[0][known]] >= 0
        edge_claim_pk, edge_source, edge_code, edge_locations = (
            column if bool(kept.all()) else column[kept] for column in read
        )
    else:
        edge_claim_pk, edge_source, edge_code, edge_locations = int_columns(
            db,
            edge_columns,
            "edges e",
            f"WHERE e.claim_pk IN (SELECT c.pk FROM claims c WHERE c.answer_pk {in_scope} AND {CURRENT_CLAIM})",
            params,
        )
    citation_answer_pk, citation_source = int_columns(
        db,
        ["c.answer_pk", "c.source_pk"],
        "citations c",
        f"WHERE c.kind = 'cited' AND c.source_pk IS NOT NULL AND c.answer_pk {in_scope}",
        params,
        helper=helper,
    )
    weights = dict(protocol.weights) if protocol.weights is not None else None
    columns = ScoringColumns(
        answer_dims=dims,
        answer_question=np.array([r[1] for r in rows], dtype=np.int64),
        question_facts=[np.array(f, dtype=np.int64) for f in question_facts],
        fact_severity=fact_severity,
        claim_answer=index_of(claim_answer_pk, answer_pks),
        claim_fact=claim_fact,
        claim_severity=claim_severity,
        edge_claim=index_of(edge_claim_pk, claim_pks),
        edge_source=edge_source,
        edge_code=edge_code,
        edge_locations=edge_locations,
        source_official=official_mask(db, protocol),
        citation_answer=index_of(citation_answer_pk, answer_pks),
        citation_source=citation_source,
        fact_weight=None
        if weights is None
        else np.array([weights.get(Severity(r[2]), 0.0) if r[2] else 0.0 for r in fact_rows], dtype=np.float64),
    )
    return columns, int(excluded)
