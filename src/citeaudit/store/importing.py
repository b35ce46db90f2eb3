"""Writing an import into the tables: one audit (or one chunk of a payload) at a time — runs, sources,
answers, citations, claims, edges with their locations and judgements, evidence groups — inside the
transaction :meth:`citeaudit.store.sqlite.Store.import_chunks` holds, a table at a time.

Rows are written from generators, several to a statement (:func:`insert_rows`), so a large import never holds
a second copy of itself as row tuples and SQLite's cost per statement is paid once a batch.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain, islice

from citeaudit.clock import utc_now
from citeaudit.errors import DuplicateId
from citeaudit.identity import url_location
from citeaudit.model import Audit, CitationKind, Judgement, RunKind
from citeaudit.protocol import fingerprint_components
from citeaudit.scoring import edge_code
from citeaudit.store.judgements import INSERT_JUDGEMENT, judgement_row

__all__ = [
    "IMPORT_TABLES",
    "REVIEW_POLICIES",
    "ROWS_PER_STATEMENT",
    "SUMMED",
    "ImportReport",
    "drop_queue_indexes",
    "drop_secondary_indexes",
    "insert_rows",
    "write_audit",
]

REVIEW_POLICIES = {"single": 1, "double": 2}
"""Review policies and how many independent human reviews each needs before an edge has a final label."""


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What one import wrote (all zero when the same payload was imported before)."""

    origin: str
    """File name or other origin of the payload."""
    sha256: str
    """Content address of the raw payload."""
    already_imported: bool
    """True when these exact bytes were imported before: nothing was written."""
    runs: int = 0
    """New runs."""
    answers: int = 0
    """New answers."""
    claims: int = 0
    """New claims."""
    edges: int = 0
    """New unique edges."""
    locations: int = 0
    """Citation locations behind them."""
    judgements: int = 0
    """Judgements recorded."""
    sources_new: int = 0
    """Sources seen for the first time."""
    sources_known: int = 0
    """Sources already in the database (reused by key, not changed)."""
    evidence_groups: int = 0
    """Joint-support groups."""
    dangling: int = 0
    """Markers that point past the engine's source list (stored, never edges)."""
    retrieved: int = 0
    """Sources the engine consulted but did not cite."""
    failures: int = 0
    """Answers the engine did not give (failed or incomplete), recorded in ``ingest_failures``."""
    unplaced: int = 0
    """Cited sources without a position in the answer text: answer-level citations (they count for the
    official-domain rate and make no claim edge)."""
    partial: int = 0
    """Answers the reader only partly understood (it saw parts of the payload it does not know); set by the
    ingest service, which reads the payload."""


SUMMED = (
    "runs",
    "answers",
    "claims",
    "edges",
    "locations",
    "judgements",
    "evidence_groups",
    "dangling",
    "retrieved",
    "failures",
    "unplaced",
)
"""ImportReport counts that add up over the chunks of one import (the source counts are reckoned over all)."""


def _state_and_code(judgements: Sequence[Judgement], reviews_required: int) -> tuple[str, int]:
    state, code = edge_code(judgements, reviews_required)
    return str(state), code


def _existing(db: sqlite3.Connection, table: str, column: str, values: Sequence[str]) -> dict[str, int]:
    """``{value: pk}`` for the values already stored in ``table.column`` (looked up in batches)."""
    found: dict[str, int] = {}
    distinct = list(dict.fromkeys(values))
    for chunk in range(0, len(distinct), 500):
        batch = distinct[chunk : chunk + 500]
        found.update(
            db.execute(f"SELECT {column}, pk FROM {table} WHERE {column} IN ({', '.join('?' * len(batch))})", batch)
        )
    return found


def _next_pk(db: sqlite3.Connection, table: str) -> int:
    return int(db.execute(f"SELECT coalesce(max(pk), 0) + 1 FROM {table}").fetchone()[0])


def write_audit(
    db: sqlite3.Connection,
    audit: Audit,
    protocol_pk: int,
    import_pk: int,
    origin: str,
    sha: str,
    new_keys: set[str],
    known_keys: set[str],
) -> ImportReport:
    """Write one audit (or one chunk of a payload) measured under the stored protocol ``protocol_pk``, inside
    the caller's transaction; ``new_keys`` gathers the source keys this import added and ``known_keys`` those
    it found stored before it."""
    question_pk = dict(db.execute("SELECT id, pk FROM questions WHERE protocol_pk = ?", (protocol_pk,)))
    fact_pk = dict(db.execute("SELECT id, pk FROM required_facts WHERE protocol_pk = ?", (protocol_pk,)))
    run_pk, new_runs = _write_runs(db, audit, protocol_pk, origin)
    source_pk = _write_sources(db, audit, protocol_pk, new_keys, known_keys)
    answer_pk = _write_answers(db, audit, import_pk, origin, run_pk, question_pk)
    _lock_facts(db, audit, protocol_pk, run_pk)
    kinds = _write_citations(db, audit, answer_pk, source_pk)
    claim_pk = _write_claims(db, audit, origin, answer_pk, fact_pk)
    _write_edges(db, audit, claim_pk, source_pk)
    _write_evidence_groups(db, audit, origin, claim_pk, source_pk)
    return ImportReport(
        origin=origin,
        sha256=sha,
        already_imported=False,
        runs=new_runs,
        answers=len(audit.answers),
        claims=len(audit.claims),
        edges=len(audit.edges),
        locations=sum(len(edge.locations) for edge in audit.edges),
        judgements=sum(len(edge.judgements) for edge in audit.edges),
        evidence_groups=len(audit.evidence_groups),
        dangling=kinds[CitationKind.DANGLING],
        retrieved=kinds[CitationKind.RETRIEVED],
        unplaced=sum(
            1 for answer in audit.answers for c in answer.citations if c.kind is CitationKind.CITED and c.start is None
        ),
    )


def _write_runs(db: sqlite3.Connection, audit: Audit, protocol_pk: int, origin: str) -> tuple[dict[str, int], int]:
    """Row ids of the audit's runs, new ones inserted; and how many were new. A run stored under another
    protocol, or with other settings, is refused."""
    run_pk: dict[str, int] = {}
    new_runs = 0
    for run in audit.runs:
        row = db.execute(
            "SELECT pk, protocol_pk, kind, platform, model, collected_at, locale, sample FROM runs WHERE id = ?",
            (run.id,),
        ).fetchone()
        values = (
            protocol_pk,
            str(run.kind),
            run.platform,
            run.model,
            run.collected_at,
            run.locale,
            run.sample,
        )
        if row is None:
            pk = db.execute(
                "INSERT INTO runs (protocol_pk, kind, platform, model, collected_at, locale, sample, id) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (*values, run.id),
            ).lastrowid
            assert pk is not None
            run_pk[run.id] = pk
            new_runs += 1
        elif row[1] != protocol_pk:
            raise DuplicateId(
                origin,
                "runs",
                f"run {run.id!r} is already in the database under another protocol (its required facts were "
                "locked when its first answers arrived); to change the protocol of a run, use "
                "`citeaudit protocol revise`, which records the change",
            )
        elif row[2] != str(run.kind) or any(
            given is not None and given != stored for given, stored in zip(values[2:], row[3:], strict=True)
        ):
            raise DuplicateId(origin, "runs", f"run {run.id!r} is already in the database with other settings")
        else:
            run_pk[run.id] = int(row[0])
    return run_pk, new_runs


def _write_sources(
    db: sqlite3.Connection, audit: Audit, protocol_pk: int, new_keys: set[str], known_keys: set[str]
) -> dict[str, int]:
    """Row ids of the audit's sources by key, new ones inserted and every one tied to the protocol."""
    source_pk = _existing(db, "sources", "key", [source.key for source in audit.sources])
    # A key retired when its source resolved to another page (or merged) still finds that source.
    retired = [source.key for source in audit.sources if source.key not in source_pk]
    for chunk in range(0, len(retired), 500):
        batch = retired[chunk : chunk + 500]
        source_pk.update(
            db.execute(f"SELECT key, source_pk FROM source_keys WHERE key IN ({', '.join('?' * len(batch))})", batch)
        )
    known_keys.update(key for key in source_pk if key not in new_keys)
    next_source = _next_pk(db, "sources")
    source_rows: list[tuple[object, ...]] = []
    for source in audit.sources:
        if source.key in source_pk:
            continue
        host, path = url_location(source.resolved_url or source.url)
        source_pk[source.key] = next_source
        source_rows.append(
            (
                next_source,
                source.key,
                source.url,
                source.resolved_url,
                source.title,
                source.publisher,
                str(source.status),
                source.reason,
                source.fetched_at,
                source.content_hash,
                host,
                path,
            )
        )
        next_source += 1
    new_keys.update(str(row[1]) for row in source_rows)
    db.executemany(
        "INSERT INTO sources (pk, key, url, resolved_url, title, publisher, status, reason, fetched_at, "
        "content_hash, host, path) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        source_rows,
    )
    db.executemany(
        "INSERT OR IGNORE INTO protocol_sources VALUES (?, ?)",
        [(protocol_pk, pk) for pk in source_pk.values()],
    )
    return source_pk


def _write_answers(
    db: sqlite3.Connection,
    audit: Audit,
    import_pk: int,
    origin: str,
    run_pk: dict[str, int],
    question_pk: dict[str, int],
) -> dict[str, int]:
    """Insert the audit's answers (a duplicate id is refused); their row ids by answer id."""
    # Rows are written from generators: a large import never holds a second copy of itself as row tuples.
    next_answer = _next_pk(db, "answers")
    answer_pk = {answer.id: next_answer + i for i, answer in enumerate(audit.answers)}
    _insert_unique(
        db,
        "answers",
        "INSERT INTO answers (pk, id, run_pk, question_pk, text, platform, model, locale, payload_sha256, "
        "import_pk, retrieval, queries, retrieval_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [answer.id for answer in audit.answers],
        (
            (
                next_answer + i,
                answer.id,
                run_pk[answer.run_id],
                question_pk[answer.question_id],
                answer.text,
                answer.platform,
                answer.model,
                answer.locale,
                answer.payload_sha256,
                import_pk,
                answer.retrieval,
                json.dumps(list(answer.queries), ensure_ascii=False) if answer.queries else None,
                answer.retrieval_reason,
            )
            for i, answer in enumerate(audit.answers)
        ),
        origin,
        "answers",
    )
    return answer_pk


_KIND_TEXT = {kind: str(kind) for kind in CitationKind}
"""How each citation kind is stored."""


def _write_citations(
    db: sqlite3.Connection, audit: Audit, answer_pk: dict[str, int], source_pk: dict[str, int]
) -> Counter[CitationKind]:
    """Insert every answer's citations in order; how many there are of each kind."""
    kinds = Counter(c.kind for answer in audit.answers for c in answer.citations)
    insert_rows(
        db,
        'INSERT INTO citations (answer_pk, ordinal, source_pk, url, title, marker, kind, start, "end", quote) '
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            (
                pk,
                ci,
                None if c.source_key is None else source_pk[c.source_key],
                c.url,
                c.title,
                c.marker,
                _KIND_TEXT[c.kind],
                c.start,
                c.end,
                c.quote,
            )
            for answer in audit.answers
            for pk in (answer_pk[answer.id],)
            for ci, c in enumerate(answer.citations)
        ),
    )
    return kinds


def _write_claims(
    db: sqlite3.Connection,
    audit: Audit,
    origin: str,
    answer_pk: dict[str, int],
    fact_pk: dict[str, int],
) -> dict[str, int]:
    """Insert the audit's claims (a duplicate id is refused); their row ids by claim id."""
    next_claim = _next_pk(db, "claims")
    claim_pk = {claim.id: next_claim + i for i, claim in enumerate(audit.claims)}
    _insert_unique(
        db,
        "claims",
        'INSERT INTO claims (pk, id, answer_pk, text, start, "end", fact_pk, severity, entity) '
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [claim.id for claim in audit.claims],
        (
            (
                next_claim + i,
                claim.id,
                answer_pk[claim.answer_id],
                claim.text,
                claim.start,
                claim.end,
                fact_pk[claim.required_fact_id] if claim.required_fact_id else None,
                claim.severity,
                claim.entity,
            )
            for i, claim in enumerate(audit.claims)
        ),
        origin,
        "claims",
    )
    return claim_pk


def _write_edges(db: sqlite3.Connection, audit: Audit, claim_pk: dict[str, int], source_pk: dict[str, int]) -> None:
    """Insert the edges with their state and final code, their citation locations and their judgements."""
    next_edge = _next_pk(db, "edges")
    # imported judgements are weighed under the database's review policy, as the review UI weighs them
    policy = db.execute("SELECT value FROM review_settings WHERE key = 'policy'").fetchone()
    reviews_required = REVIEW_POLICIES[policy[0]] if policy else 1
    unjudged = _state_and_code((), reviews_required)  # what nearly every imported edge has: no judgement yet
    insert_rows(
        db,
        "INSERT INTO edges VALUES (?, ?, ?, ?, ?, ?)",
        (
            (
                next_edge + i,
                claim_pk[edge.claim_id],
                source_pk[edge.source_key],
                *(_state_and_code(edge.judgements, reviews_required) if edge.judgements else unjudged),
                len(edge.locations),
            )
            for i, edge in enumerate(audit.edges)
        ),
    )
    insert_rows(
        db,
        'INSERT INTO edge_locations (edge_pk, marker, start, "end") VALUES (?, ?, ?, ?)',
        (
            (next_edge + i, loc.marker, loc.start, loc.end)
            for i, edge in enumerate(audit.edges)
            for loc in edge.locations
        ),
    )
    db.executemany(
        INSERT_JUDGEMENT,
        (judgement_row(next_edge + i, j) for i, edge in enumerate(audit.edges) for j in edge.judgements),
    )


def _write_evidence_groups(
    db: sqlite3.Connection,
    audit: Audit,
    origin: str,
    claim_pk: dict[str, int],
    source_pk: dict[str, int],
) -> None:
    """Insert the audit's evidence groups with their sources (a duplicate id is refused)."""
    for group in audit.evidence_groups:
        if db.execute("SELECT 1 FROM evidence_groups WHERE id = ?", (group.id,)).fetchone():
            raise DuplicateId(origin, "evidence_groups", f"evidence group {group.id!r} is already in the database")
        group_pk = db.execute(
            "INSERT INTO evidence_groups (id, claim_pk, label, required_documents, reasoning_steps, reviewer) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (
                group.id,
                claim_pk[group.claim_id],
                group.label,
                json.dumps(list(group.required_documents)),
                json.dumps(list(group.reasoning_steps)),
                group.reviewer,
            ),
        ).lastrowid
        db.executemany(
            "INSERT INTO evidence_group_sources VALUES (?, ?, ?)",
            [(group_pk, i, source_pk[key]) for i, key in enumerate(group.source_keys)],
        )


def _lock_facts(db: sqlite3.Connection, audit: Audit, protocol_pk: int, run_pk: dict[str, int]) -> None:
    """Fix the required-fact list of each platform run that receives its first answers now."""
    platform_runs = {run.id for run in audit.runs if run.kind is RunKind.PLATFORM}
    answered = {run_pk[a.run_id] for a in audit.answers if a.run_id in platform_runs}
    if answered:
        facts_hash = fingerprint_components(audit.protocol)["required_facts"]
        db.executemany(
            "INSERT OR IGNORE INTO fact_locks (run_pk, protocol_pk, facts_hash, locked_at) VALUES (?, ?, ?, ?)",
            [(pk, protocol_pk, facts_hash, utc_now()) for pk in sorted(answered)],
        )


def _insert_unique(
    db: sqlite3.Connection,
    table: str,
    sql: str,
    ids: list[str],
    rows: Iterable[tuple[object, ...]],
    origin: str,
    path: str,
) -> None:
    """Insert rows whose database-wide ids are ``ids`` (in row order); an id already stored is a DuplicateId."""
    clash = _existing(db, table, "id", ids)
    if clash:
        position, first = min((i, item) for i, item in enumerate(ids) if item in clash)
        raise DuplicateId(origin, f"{path}[{position}].id", f"{table[:-1]} {first!r} is already in the database")
    insert_rows(db, sql, rows)


ROWS_PER_STATEMENT = 64
"""Rows one multi-row INSERT carries in :func:`insert_rows` at most."""

_MAX_PARAMETERS = 999
"""Parameters one statement may bind in every SQLite this runs on (older than 3.32 allows no more)."""


def insert_rows(db: sqlite3.Connection, sql: str, rows: Iterable[Sequence[object]]) -> None:
    """``executemany(sql, rows)`` for a one-row ``INSERT … VALUES (?, …)``, written up to ``ROWS_PER_STATEMENT``
    rows to a statement (fewer when the row is wide, so a statement binds at most 999 values). SQLite's cost of
    executing a statement is then paid once a batch instead of once a row: an import's rows took about a fifth
    less time to write (20 000 answers: median 3.2 s against 3.9 s). ``rows`` is read a batch at a time."""
    head, values, one = sql.rpartition(" VALUES ")
    if not values or not one.startswith("(") or not one.endswith(")"):
        raise ValueError(f"not a one-row INSERT … VALUES (…): {sql!r}")
    per = max(1, min(ROWS_PER_STATEMENT, _MAX_PARAMETERS // max(1, one.count("?"))))
    full = f"{head} VALUES {', '.join([one] * per)}"
    remaining = iter(rows)
    while len(batch := list(islice(remaining, per))) == per:
        db.execute(full, list(chain.from_iterable(batch)))
    if batch:
        db.executemany(sql, batch)


def drop_queue_indexes(db: sqlite3.Connection) -> list[str]:
    """Drop the edges' queue indexes; the statements that make them again."""
    indexes = db.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'edges' AND sql IS NOT NULL "
        "AND name GLOB 'edges_queue*' ORDER BY name"
    ).fetchall()
    for name, _ in indexes:
        db.execute(f'DROP INDEX "{name}"')
    return [sql for _, sql in indexes]


IMPORT_TABLES = ("answers", "citations", "claims", "edges", "edge_locations")
"""The tables that receive an import's rows in bulk (several rows for every answer)."""


def drop_secondary_indexes(db: sqlite3.Connection, tables: Iterable[str] = IMPORT_TABLES) -> list[str]:
    """Drop the indexes of ``tables`` that only speed up reads (neither primary keys nor unique constraints,
    which still refuse a clash row by row); the statements that make them again, in a stable order."""
    wanted = list(tables)
    indexes = db.execute(
        "SELECT m.name, m.sql FROM sqlite_master AS m "
        f"WHERE m.type = 'index' AND m.sql IS NOT NULL AND m.tbl_name IN ({', '.join('?' * len(wanted))}) "
        "AND NOT EXISTS (SELECT 1 FROM pragma_index_list(m.tbl_name) AS i WHERE i.name = m.name AND i.[unique]) "
        "ORDER BY m.tbl_name, m.name",
        wanted,
    ).fetchall()
    for name, _ in indexes:
        db.execute(f'DROP INDEX "{name}"')
    return [sql for _, sql in indexes]
