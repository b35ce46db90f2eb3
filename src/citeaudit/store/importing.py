"""Writing an import into the tables: one audit (or one chunk of a payload) at a time — runs, sources,
answers, citations, claims, edges with their locations and judgements, evidence groups — inside the
transaction :meth:`citeaudit.store.sqlite.Store.import_chunks` holds, a table at a time, after the checks that
refuse a clash (a run under another protocol, an id already stored, a judgement the review rules refuse).

The rows come as :class:`~citeaudit.store.chunk_rows.ChunkRows` (made from an audit by
:func:`~citeaudit.store.chunk_rows.rows_of`). They are written from generators, several to a statement
(:func:`citeaudit.store.bulk.insert_rows`), so a large import never holds a second copy of itself as row tuples
and SQLite's cost per statement is paid once a batch.

Those statements are ``INSERT OR FAIL``: a row that breaks a constraint stops its statement with the rows before it
in place, where SQLite's default (``ABORT``) undoes them first. Nothing is kept either way, as any error rolls the
whole import back (its transaction, or its savepoint inside another). But for ``ABORT``, SQLite keeps a statement
journal: a copy of every page a statement of several rows changes that was there before it. An import of 20 000
Sonar answers wrote 263 MB of those copies to a temporary file, in 128 000 writes.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from operator import is_, itemgetter
from typing import Any

from citeaudit.core.clock import utc_now
from citeaudit.core.errors import DuplicateId, InvalidValue, StoreError
from citeaudit.core.model import CitationKind, Judgement, Origin, Protocol, Run, RunKind, Stage
from citeaudit.core.protocol import fingerprint_components
from citeaudit.core.review_policy import StoredJudgement, counted_judgements, judgement_refusal
from citeaudit.core.scoring import edge_code
from citeaudit.store.bulk import insert_rows
from citeaudit.store.chunk_rows import KIND_TEXT, AnswerRow, ChunkRows, CitationRow, ClaimRow, SourceRow
from citeaudit.store.judgements import INSERT_JUDGEMENT, judgement_row
from citeaudit.store.review_rules import account_role, policy_reviews_required

__all__ = ["SUMMED", "ImportReport", "make_indexes", "write_rows", "written_twice"]


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
    placed_by_markers: int = 0
    """Cited sources the payload gives without a position that the answer's ``[n]`` markers placed; set by the
    ingest service, which reads the payload."""
    moved: int = 0
    """Answers of an earlier import of these bytes moved to the metadata given now (``--replace``)."""


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
    """The edge's state and final code under the policy: only the judgements the policy counts decide it."""
    stored = [StoredJudgement(i, judgement) for i, judgement in enumerate(judgements)]
    state, code = edge_code(counted_judgements(stored, reviews_required), reviews_required)
    return str(state), code


def _log_judgements(db: sqlite3.Connection, rows: ChunkRows, origin: str, sha: str) -> None:
    """One audit-log row for the people's judgements an audit file brings: the door, the file, its hash, how many
    and whose (a judgement's edge leads to its answer and so to the import too)."""
    human = [j for *_, judgements in rows.edges for j in judgements if j.origin is Origin.HUMAN]
    if not human:
        return
    reviewers = sorted({j.reviewer or "" for j in human})
    db.execute(
        "INSERT INTO audit_log (at, actor, action, target, before, after) VALUES (?, ?, ?, ?, NULL, ?)",
        (
            utc_now("microseconds"),
            ", ".join(reviewers),
            "judgements.ingest",
            f"import:{sha}",
            json.dumps(
                {"door": "ingest", "file": origin, "sha256": sha, "judgements": len(human), "reviewers": reviewers},
                sort_keys=True,
                ensure_ascii=False,
            ),
        ),
    )


def _check_judgements(db: sqlite3.Connection, rows: ChunkRows, origin: str, reviews_required: int) -> None:
    """Every person's judgement the rows carry, checked in the order given by the rules every door follows
    (:func:`citeaudit.core.review_policy.judgement_refusal`): the first one that breaks them is an
    :class:`InvalidValue` naming the file, the judgement's place and the rule, before anything is written.

    A reviewer is the database's account of that name, with its role. A database with no review accounts yet
    has no one to go round: the file's names are taken as given, a review as a reviewer's and an adjudication
    as an adjudicator's, and every other rule holds. An audit file may carry the two independent reviews of an
    edge that the format describes (their labels agree or dispute) under either policy, so the reviewers' limit
    is at least two; the state stored is still the one the database's policy gives."""
    accounts = db.execute("SELECT 1 FROM reviewers LIMIT 1").fetchone() is not None
    limit = max(reviews_required, 2)
    roles: dict[str | None, str | None] = {}
    for claim, key, _, judgements in rows.edges:
        existing: list[StoredJudgement] = []
        for number, judgement in enumerate(judgements, start=1):
            if judgement.origin is Origin.HUMAN:
                if accounts:
                    if judgement.reviewer not in roles:
                        roles[judgement.reviewer] = account_role(db, judgement.reviewer)
                    role = roles[judgement.reviewer]
                else:
                    role = "adjudicator" if judgement.stage is Stage.ADJUDICATION else "reviewer"
                why = judgement_refusal(existing, judgement, role, limit)
                if why is not None:
                    raise InvalidValue(
                        origin,
                        f"claim {rows.claims[claim][0]!r}, source {key!r}, judgement {number} of {len(judgements)}",
                        f"{judgement.stage} by {judgement.reviewer!r} is refused: {why}",
                    )
            existing.append(StoredJudgement(number, judgement))


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


def write_rows(
    db: sqlite3.Connection,
    rows: ChunkRows,
    protocol_pk: int,
    import_pk: int,
    origin: str,
    sha: str,
    new_keys: set[str],
    known_keys: set[str],
    earlier_sources: dict[str, int] | None = None,
    *,
    fresh: Collection[str] = (),
    imported: dict[str, int] | None = None,
    retired: bool = True,
) -> ImportReport:
    """Write the rows of one audit (or one chunk of a payload; see :func:`~citeaudit.store.chunk_rows.rows_of`)
    measured under the stored protocol ``protocol_pk``, inside the caller's transaction; ``new_keys`` gathers the
    source keys this import added and ``known_keys`` those it found stored before it. ``earlier_sources``: the row
    ids of the sources that earlier chunks of the import, measured under the same protocol, referred to (by key),
    kept from chunk to chunk: those sources are neither looked up nor tied to the protocol again, and the rows may
    leave them out.

    ``fresh``: the tables that held no row when the import began and whose unique indexes it dropped (see
    :func:`make_indexes`): their ids are not looked up, as nothing was stored before the import, and a clash within
    it is found when the indexes are made. ``imported``: every source the import added, by key, kept from chunk
    to chunk (the sources' keys are then looked up there when ``sources`` is fresh). ``retired``: whether the
    database held a retired source key (a row of ``source_keys``) when the import began; when it held none, a key
    is not looked up there (only resolving sources retires keys, and the import's transaction keeps every other
    writer out)."""
    _check_positions(rows, origin)
    question_pk = dict(db.execute("SELECT id, pk FROM questions WHERE protocol_pk = ?", (protocol_pk,)))
    fact_pk = dict(db.execute("SELECT id, pk FROM required_facts WHERE protocol_pk = ?", (protocol_pk,)))
    run_pk, new_runs = _write_runs(db, rows.runs, protocol_pk, origin)
    earlier = {} if earlier_sources is None else earlier_sources
    added = imported if "sources" in fresh and imported is not None else None
    source_pk = _write_sources(db, rows.sources, protocol_pk, new_keys, known_keys, earlier, added, retired)
    next_answer = _write_answers(db, rows.answers, import_pk, origin, run_pk, question_pk, "answers" in fresh)
    _lock_facts(db, rows, protocol_pk, run_pk)
    kinds, unplaced = _write_citations(db, rows.citations, next_answer, source_pk)
    next_claim = _write_claims(db, rows.claims, origin, next_answer, fact_pk, "claims" in fresh)
    _write_edges(db, rows, origin, sha, next_claim, source_pk)
    _write_evidence_groups(db, rows, origin, next_claim, source_pk)
    return ImportReport(
        origin=origin,
        sha256=sha,
        already_imported=False,
        runs=new_runs,
        answers=len(rows.answers),
        claims=len(rows.claims),
        edges=len(rows.edges),
        locations=len(rows.locations),
        judgements=sum(map(len, filter(None, map(_FOURTH, rows.edges)))),
        evidence_groups=len(rows.evidence_groups),
        dangling=kinds[_DANGLING],
        retrieved=kinds[_RETRIEVED],
        unplaced=unplaced,
    )


_FIRST, _SECOND, _FOURTH, _SEVENTH, _EIGHTH = itemgetter(0), itemgetter(1), itemgetter(3), itemgetter(6), itemgetter(7)
"""Fields of a row by position, for the passes over every row made at C speed (``map``, ``Counter``)."""


def _check_positions(rows: ChunkRows, origin: str) -> None:
    """Raise :class:`~citeaudit.core.errors.StoreError` unless every answer, claim and edge the rows refer to by
    position is one of the chunk's: the row ids written for them are counted from those positions, and the import
    writes them without SQLite's check of each reference (see
    :meth:`~citeaudit.store.sqlite.Store.import_transaction`)."""
    for table, positions, parents, parent in (
        ("citations", map(_FIRST, rows.citations), len(rows.answers), "answers"),
        ("claims", map(_SECOND, rows.claims), len(rows.answers), "answers"),
        ("edges", map(_FIRST, rows.edges), len(rows.claims), "claims"),
        ("edge_locations", map(_FIRST, rows.locations), len(rows.edges), "edges"),
    ):
        seen = list(positions)
        if seen and (min(seen) < 0 or max(seen) >= parents):
            bad = next(p for p in seen if not 0 <= p < parents)
            raise StoreError(
                f"{origin}: a row of {table} refers to {parent[:-1]} {bad} of a chunk of {parents} {parent}; "
                "nothing written"
            )


def _write_runs(
    db: sqlite3.Connection, runs: Sequence[Run], protocol_pk: int, origin: str
) -> tuple[dict[str, int], int]:
    """Row ids of the audit's runs, new ones inserted; and how many were new. A run stored under another
    protocol, or with other settings, is refused."""
    run_pk: dict[str, int] = {}
    new_runs = 0
    for run in runs:
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
    db: sqlite3.Connection,
    sources: Sequence[SourceRow],
    protocol_pk: int,
    new_keys: set[str],
    known_keys: set[str],
    earlier: dict[str, int],
    added: dict[str, int] | None = None,
    retired: bool = True,
) -> dict[str, int]:
    """Row ids of the audit's sources by key, new ones inserted and every one tied to the protocol. ``earlier``
    holds those of the sources that earlier chunks of the import (under the same protocol) referred to: they
    are not looked up again; this chunk's are added to it, and it is returned. ``added``: when the import began
    without sources, every source it added (the keys are looked up there, not in the table, whose index on keys
    is made after the rows); the new ones are added to it. ``retired``: whether keys retired when their source
    resolved or merged are looked up (see :func:`write_rows`)."""
    fresh = [source for source in sources if source[0] not in earlier]
    keys = [source[0] for source in fresh]
    source_pk = _existing(db, "sources", "key", keys) if added is None else {k: added[k] for k in keys if k in added}
    # A key retired when its source resolved to another page (or merged) still finds that source.
    unknown = [source[0] for source in fresh if source[0] not in source_pk] if retired else []
    for chunk in range(0, len(unknown), 500):
        batch = unknown[chunk : chunk + 500]
        source_pk.update(
            db.execute(f"SELECT key, source_pk FROM source_keys WHERE key IN ({', '.join('?' * len(batch))})", batch)
        )
    known_keys.update(key for key in source_pk if key not in new_keys)
    next_source = _next_pk(db, "sources")
    source_rows: list[tuple[object, ...]] = []
    for row in fresh:
        if row[0] in source_pk:
            continue
        source_pk[row[0]] = next_source
        source_rows.append((next_source, *row))
        next_source += 1
    new_keys.update(str(row[1]) for row in source_rows)
    if added is not None:
        added.update((str(row[1]), source_pk[str(row[1])]) for row in source_rows)
    insert_rows(
        db,
        "INSERT OR FAIL INTO sources (pk, key, url, resolved_url, title, publisher, status, reason, fetched_at, "
        "content_hash, host, path) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        source_rows,
    )
    insert_rows(
        db, "INSERT OR IGNORE INTO protocol_sources VALUES (?, ?)", [(protocol_pk, pk) for pk in source_pk.values()]
    )
    earlier.update(source_pk)
    return earlier


def _write_answers(
    db: sqlite3.Connection,
    answers: Sequence[AnswerRow],
    import_pk: int,
    origin: str,
    run_pk: dict[str, int],
    question_pk: dict[str, int],
    fresh: bool = False,
) -> int:
    """Insert the audit's answers (a duplicate id is refused; ``fresh``: the table held no answer when the import
    began, see :func:`write_rows`); the row id of the first (the others follow)."""
    # Rows are written from generators: a large import never holds a second copy of itself as row tuples.
    next_answer = _next_pk(db, "answers")
    _insert_unique(
        db,
        "answers",
        "INSERT OR FAIL INTO answers (pk, id, run_pk, question_pk, text, platform, model, locale, payload_sha256, "
        "import_pk, retrieval, queries, retrieval_reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [answer[0] for answer in answers],
        (
            (
                next_answer + i,
                answer_id,
                run_pk[run_id],
                question_pk[question_id],
                text,
                platform,
                model,
                locale,
                payload_sha256,
                import_pk,
                retrieval,
                queries,
                reason,
            )
            for i, (
                answer_id,
                question_id,
                run_id,
                text,
                platform,
                model,
                locale,
                payload_sha256,
                retrieval,
                queries,
                reason,
            ) in enumerate(answers)
        ),
        origin,
        "answers",
        fresh,
    )
    return next_answer


_CITED, _DANGLING, _RETRIEVED = (
    KIND_TEXT[kind] for kind in (CitationKind.CITED, CitationKind.DANGLING, CitationKind.RETRIEVED)
)


def _write_citations(
    db: sqlite3.Connection, citations: Sequence[CitationRow], next_answer: int, source_pk: dict[str, int]
) -> tuple[Counter[str], int]:
    """Insert every answer's citations in order; how many there are of each kind (by its stored text), and how
    many cited sources have no position in the answer text."""
    kinds = Counter(map(_SEVENTH, citations))
    # the kinds of the citations without a start, counted without a Python step for every row
    unplaced = Counter(compress(map(_SEVENTH, citations), map(is_, map(_EIGHTH, citations), repeat(None))))[_CITED]
    insert_rows(
        db,
        'INSERT OR FAIL INTO citations (answer_pk, ordinal, source_pk, url, title, marker, kind, start, "end", quote) '
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            (
                next_answer + answer,
                ordinal,
                None if key is None else source_pk[key],
                url,
                title,
                marker,
                kind,
                start,
                end,
                quote,
            )
            for answer, ordinal, key, url, title, marker, kind, start, end, quote in citations
        ),
    )
    return kinds, unplaced


def _write_claims(
    db: sqlite3.Connection,
    claims: Sequence[ClaimRow],
    origin: str,
    next_answer: int,
    fact_pk: dict[str, int],
    fresh: bool = False,
) -> int:
    """Insert the audit's claims (a duplicate id is refused; ``fresh``: the table held no claim when the import
    began, see :func:`write_rows`); the row id of the first (the others follow)."""
    next_claim = _next_pk(db, "claims")
    _insert_unique(
        db,
        "claims",
        'INSERT OR FAIL INTO claims (pk, id, answer_pk, text, start, "end", fact_pk, severity, entity) '
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [claim[0] for claim in claims],
        (
            (
                next_claim + i,
                claim_id,
                next_answer + answer,
                text,
                start,
                end,
                fact_pk[fact] if fact else None,
                severity,
                entity,
            )
            for i, (claim_id, answer, text, start, end, fact, severity, entity) in enumerate(claims)
        ),
        origin,
        "claims",
        fresh,
    )
    return next_claim


def _write_edges(
    db: sqlite3.Connection, rows: ChunkRows, origin: str, sha: str, next_claim: int, source_pk: dict[str, int]
) -> None:
    """Insert the edges with their state and final code, their citation locations and their judgements."""
    next_edge = _next_pk(db, "edges")
    # imported judgements are checked and weighed under the database's review policy, as every door's are
    reviews_required = policy_reviews_required(db)
    judged = any(map(_FOURTH, rows.edges))  # an engine payload's edges come without judgements
    if judged:
        _check_judgements(db, rows, origin, reviews_required)
        _log_judgements(db, rows, origin, sha)
    state, code = _state_and_code((), reviews_required)  # what nearly every imported edge has: no judgement yet
    insert_rows(
        db,
        "INSERT OR FAIL INTO edges VALUES (?, ?, ?, ?, ?, ?)",
        (
            (next_edge + i, next_claim + claim, source_pk[key], state, code, locations)
            if not judgements
            else (
                next_edge + i,
                next_claim + claim,
                source_pk[key],
                *_state_and_code(judgements, reviews_required),
                locations,
            )
            for i, (claim, key, locations, judgements) in enumerate(rows.edges)
        ),
    )
    insert_rows(
        db,
        'INSERT OR FAIL INTO edge_locations (edge_pk, marker, start, "end") VALUES (?, ?, ?, ?)',
        ((next_edge + edge, marker, start, end) for edge, marker, start, end in rows.locations),
    )
    if judged:
        db.executemany(
            INSERT_JUDGEMENT,
            (judgement_row(next_edge + i, j) for i, edge in enumerate(rows.edges) if edge[3] for j in edge[3]),
        )


def _write_evidence_groups(
    db: sqlite3.Connection,
    rows: ChunkRows,
    origin: str,
    next_claim: int,
    source_pk: dict[str, int],
) -> None:
    """Insert the audit's evidence groups with their sources (a duplicate id is refused). A group's reviewer is a
    review account that is no admin, as a judgement's is (a database with no accounts takes the file's names)."""
    if not rows.evidence_groups:
        return
    claim_pk = {claim[0]: next_claim + i for i, claim in enumerate(rows.claims)}
    accounts = db.execute("SELECT 1 FROM reviewers LIMIT 1").fetchone() is not None
    for group in rows.evidence_groups:
        if accounts and group.reviewer is not None:
            role = account_role(db, group.reviewer)
            if role is None or role == "admin":
                why = (
                    "is no review account; add it with `citeaudit reviewer add` first"
                    if role is None
                    else "is an admin: admins manage the project; they do not review"
                )
                raise InvalidValue(origin, f"evidence group {group.id!r}", f"reviewer {group.reviewer!r} {why}")
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


def _lock_facts(db: sqlite3.Connection, rows: ChunkRows, protocol_pk: int, run_pk: dict[str, int]) -> None:
    """Fix the required-fact list of each platform run that receives its first answers now."""
    platform_runs = {run.id for run in rows.runs if run.kind is RunKind.PLATFORM}
    answered = {run_pk[run_id] for _, _, run_id, *_ in rows.answers if run_id in platform_runs}
    if answered:
        facts_hash = _facts_hash(rows.protocol)
        db.executemany(
            "INSERT OR IGNORE INTO fact_locks (run_pk, protocol_pk, facts_hash, locked_at) VALUES (?, ?, ?, ?)",
            [(pk, protocol_pk, facts_hash, utc_now()) for pk in sorted(answered)],
        )


_FACTS_HASHES: list[tuple[Protocol, str]] = []
"""The last protocol whose required facts were hashed, with the hash."""


def _facts_hash(protocol: Protocol) -> str:
    """The hash of ``protocol``'s required facts (its fingerprint's component), worked out once for the chunks of
    an import, which share one protocol object (a protocol is never changed once made)."""
    last = _FACTS_HASHES[0] if _FACTS_HASHES else None
    if last is None or last[0] is not protocol:
        last = (protocol, fingerprint_components(protocol)["required_facts"])
        _FACTS_HASHES[:] = [last]
    return last[1]


def _insert_unique(
    db: sqlite3.Connection,
    table: str,
    sql: str,
    ids: list[str],
    rows: Iterable[tuple[object, ...]],
    origin: str,
    path: str,
    fresh: bool = False,
) -> None:
    """Insert rows whose database-wide ids are ``ids`` (in row order); an id already stored is a DuplicateId
    (``fresh``: nothing was stored in ``table`` before the import, and its ids are not looked up)."""
    clash = {} if fresh else _existing(db, table, "id", ids)
    if clash:
        position, first = min((i, item) for i, item in enumerate(ids) if item in clash)
        raise DuplicateId(origin, f"{path}[{position}].id", f"{table[:-1]} {first!r} is already in the database")
    insert_rows(db, sql, rows)


def written_twice(
    error: sqlite3.IntegrityError,
    rows: ChunkRows,
    origin: str,
    db: sqlite3.Connection | None = None,
    starts: dict[str, int] | None = None,
) -> Exception:
    """What to raise for ``error``, raised as a chunk's ``rows`` were written: when a unique index written with the
    rows (:data:`~citeaudit.store.bulk.IN_ORDER_INDEXES`) refused a citation or an edge the chunk holds twice
    (which the readers collapse first), the one-line :class:`DuplicateId` naming it; likewise an answer or claim id
    refused by its index kept while writing (:data:`~citeaudit.store.bulk.OVERLAPPED_INDEXES`; ``starts``: the row
    id of the chunk's first answer and claim, to tell the rows earlier chunks wrote in ``db``); any other error as
    it is."""
    table = str(error).removeprefix("UNIQUE constraint failed: ").partition(".")[0]
    if table in ("answers", "claims") and db is not None and starts and table in starts:
        ids = [row[0] for row in (rows.answers if table == "answers" else rows.claims)]
        return _id_twice(db, table, ids, starts[table], origin)
    if table == "citations":
        twice = _first_twice((answer, ordinal) for answer, ordinal, *_ in rows.citations)
    elif table == "edges":
        twice = _first_twice((claim, key) for claim, key, *_ in rows.edges)
    else:
        return error
    if twice is None:
        return error
    row, other = twice
    if table == "citations":
        what = f"citation {other} of answer {rows.answers[row][0]!r}"
    else:
        what = f"edge from claim {rows.claims[row][0]!r} to source {other!r}"
    return DuplicateId(origin, table, f"{what} is written twice by this import")


def _id_twice(db: sqlite3.Connection, table: str, ids: list[str], start: int, origin: str) -> Exception:
    """The :class:`DuplicateId` of the first of a chunk's ``ids`` that the chunk holds twice or an earlier chunk of
    the import wrote (a row id before ``start``, the chunk's first), as :func:`make_indexes` says it."""
    seen = {key for key, pk in _existing(db, table, "id", ids).items() if pk < start}  # written by earlier chunks
    for value in ids:
        if value in seen:
            return DuplicateId(origin, table, f"{_ROW_NAMES[table]} {value!r} is written twice by this import")
        seen.add(value)
    return DuplicateId(origin, table, f"an {_ROW_NAMES[table]} is written twice by this import")


def _first_twice(pairs: Iterable[tuple[int, Any]]) -> tuple[int, Any] | None:
    """The first pair seen a second time, if any."""
    seen: set[tuple[int, Any]] = set()
    for pair in pairs:
        if pair in seen:
            return pair
        seen.add(pair)
    return None


_UNIQUE_INDEX = re.compile(r"CREATE UNIQUE INDEX (\w+) ON (\w+)\s*\(([^)]*)\)")
_ROW_NAMES = {"answers": "answer id", "claims": "claim id", "sources": "source key"}


def make_indexes(db: sqlite3.Connection, statements: Sequence[str], origin: str) -> None:
    """Make the indexes an import dropped while it wrote into empty tables (the statements of
    :func:`~citeaudit.store.bulk.drop_secondary_indexes`), inside its transaction. A unique index the rows break
    (the same id twice in one import, which the readers refuse first) is a :class:`DuplicateId` naming the table
    and the value, and the caller's transaction is rolled back."""
    for statement in statements:
        try:
            db.execute(statement)
        except sqlite3.IntegrityError:
            match = _UNIQUE_INDEX.match(statement)
            if match is None:
                raise
            _, table, columns = match.groups()
            row = db.execute(f"SELECT {columns} FROM {table} GROUP BY {columns} HAVING count(*) > 1 LIMIT 1").fetchone()
            shown = _ROW_NAMES.get(table, f"{table} ({columns})")
            value = "?" if row is None else (repr(row[0]) if len(row) == 1 else repr(tuple(row)))
            raise DuplicateId(origin, table, f"{shown} {value} is written twice by this import") from None
