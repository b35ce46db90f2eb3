"""Forward-only schema migrations. Migration ``n`` takes a database from version ``n`` to ``n + 1``; the
schema version lives in ``PRAGMA user_version``. Never edit a released migration: append a new one."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "Migration"]

Migration = str | Callable[[sqlite3.Connection], None]
"""An SQL script, or a function given the connection inside the migration's transaction."""

_V1 = """
CREATE TABLE payloads (
    sha256      TEXT PRIMARY KEY,
    media_type  TEXT NOT NULL,
    size        INTEGER NOT NULL,
    body        BLOB NOT NULL,
    created_at  TEXT NOT NULL
) WITHOUT ROWID;

CREATE TRIGGER payloads_immutable BEFORE UPDATE ON payloads
BEGIN SELECT RAISE(ABORT, 'payloads are immutable'); END;

CREATE TABLE imports (
    pk              INTEGER PRIMARY KEY,
    payload_sha256  TEXT NOT NULL UNIQUE REFERENCES payloads(sha256),
    origin          TEXT NOT NULL,
    format          TEXT NOT NULL,
    imported_at     TEXT NOT NULL,
    counts          TEXT NOT NULL
);

CREATE TABLE protocols (
    pk           INTEGER PRIMARY KEY,
    fingerprint  TEXT NOT NULL UNIQUE,
    id           TEXT NOT NULL,
    version      TEXT NOT NULL,
    scoring      TEXT NOT NULL,
    body         TEXT NOT NULL
);

CREATE TABLE questions (
    pk           INTEGER PRIMARY KEY,
    protocol_pk  INTEGER NOT NULL REFERENCES protocols(pk),
    ordinal      INTEGER NOT NULL,
    id           TEXT NOT NULL,
    text         TEXT NOT NULL,
    locale       TEXT,
    UNIQUE (protocol_pk, id)
);

CREATE TABLE required_facts (
    pk           INTEGER PRIMARY KEY,
    protocol_pk  INTEGER NOT NULL REFERENCES protocols(pk),
    question_pk  INTEGER NOT NULL REFERENCES questions(pk),
    ordinal      INTEGER NOT NULL,
    id           TEXT NOT NULL,
    text         TEXT NOT NULL,
    severity     TEXT,
    UNIQUE (protocol_pk, id)
);

CREATE TABLE runs (
    pk            INTEGER PRIMARY KEY,
    protocol_pk   INTEGER NOT NULL REFERENCES protocols(pk),
    id            TEXT NOT NULL UNIQUE,
    kind          TEXT NOT NULL CHECK (kind IN ('platform', 'fixture')),
    platform      TEXT,
    model         TEXT,
    collected_at  TEXT,
    locale        TEXT,
    sample        INTEGER
);

CREATE TABLE answers (
    pk              INTEGER PRIMARY KEY,
    id              TEXT NOT NULL UNIQUE,
    run_pk          INTEGER NOT NULL REFERENCES runs(pk),
    question_pk     INTEGER NOT NULL REFERENCES questions(pk),
    text            TEXT NOT NULL,
    platform        TEXT,
    model           TEXT,
    locale          TEXT,
    payload_sha256  TEXT,
    import_pk       INTEGER NOT NULL REFERENCES imports(pk),
    retrieval       TEXT CHECK (retrieval IN ('used', 'not_used', 'failed', 'unknown')),
    queries         TEXT  -- JSON list of the search queries the engine issued, NULL when none were given
);
CREATE INDEX answers_run ON answers(run_pk);

CREATE TABLE sources (
    pk            INTEGER PRIMARY KEY,
    key           TEXT NOT NULL UNIQUE,
    url           TEXT,
    resolved_url  TEXT,
    title         TEXT,
    publisher     TEXT,
    status        TEXT NOT NULL CHECK (status IN ('resolved', 'pending', 'failed')),
    reason        TEXT,
    fetched_at    TEXT,
    content_hash  TEXT,
    -- host and path of the effective URL (resolved, else raw): official matching reads these, not URLs
    host          TEXT,
    path          TEXT NOT NULL DEFAULT '/'
);

CREATE TABLE protocol_sources (
    protocol_pk  INTEGER NOT NULL REFERENCES protocols(pk),
    source_pk    INTEGER NOT NULL REFERENCES sources(pk),
    PRIMARY KEY (protocol_pk, source_pk)
) WITHOUT ROWID;

CREATE TABLE citations (
    pk          INTEGER PRIMARY KEY,
    answer_pk   INTEGER NOT NULL REFERENCES answers(pk),
    ordinal     INTEGER NOT NULL,
    source_pk   INTEGER REFERENCES sources(pk),  -- NULL for a dangling marker
    url         TEXT,
    title       TEXT,
    marker      TEXT,
    kind        TEXT NOT NULL CHECK (kind IN ('cited', 'retrieved', 'dangling')),
    start       INTEGER,
    "end"       INTEGER,
    quote       TEXT,
    UNIQUE (answer_pk, ordinal)
);

CREATE TABLE claims (
    pk           INTEGER PRIMARY KEY,
    id           TEXT NOT NULL UNIQUE,
    answer_pk    INTEGER NOT NULL REFERENCES answers(pk),
    text         TEXT NOT NULL,
    start        INTEGER,
    "end"        INTEGER,
    fact_pk      INTEGER REFERENCES required_facts(pk),
    severity     TEXT,
    entity       TEXT
);
CREATE INDEX claims_answer ON claims(answer_pk);

-- One row per unique (claim, source) pair. final_code / review_state / n_locations are derived from
-- judgements and edge_locations, and kept in step in the same transaction that writes those rows.
CREATE TABLE edges (
    pk            INTEGER PRIMARY KEY,
    claim_pk      INTEGER NOT NULL REFERENCES claims(pk),
    source_pk     INTEGER NOT NULL REFERENCES sources(pk),
    review_state  TEXT NOT NULL,
    final_code    INTEGER NOT NULL,
    n_locations   INTEGER NOT NULL,
    UNIQUE (claim_pk, source_pk)
);

CREATE TABLE edge_locations (
    pk       INTEGER PRIMARY KEY,
    edge_pk  INTEGER NOT NULL REFERENCES edges(pk),
    marker   TEXT,
    start    INTEGER,
    "end"    INTEGER
);
CREATE INDEX edge_locations_edge ON edge_locations(edge_pk);

CREATE TABLE judgements (
    pk          INTEGER PRIMARY KEY,
    edge_pk     INTEGER NOT NULL REFERENCES edges(pk),
    label       TEXT NOT NULL CHECK (label IN ('supported', 'partial', 'conflicting', 'irrelevant', 'unknown')),
    reviewer    TEXT,
    origin      TEXT NOT NULL CHECK (origin IN ('human', 'model')),
    stage       TEXT NOT NULL CHECK (stage IN ('review', 'adjudication')),
    passage     TEXT,
    period      TEXT,
    reasoning   TEXT,
    created_at  TEXT
);
CREATE INDEX judgements_edge ON judgements(edge_pk);

CREATE TRIGGER judgements_immutable BEFORE UPDATE ON judgements
BEGIN SELECT RAISE(ABORT, 'judgements are immutable: record a new judgement'); END;

-- Payload answers the engine did not give (failed or incomplete): recorded and counted, never dropped.
CREATE TABLE ingest_failures (
    pk           INTEGER PRIMARY KEY,
    import_pk    INTEGER NOT NULL REFERENCES imports(pk),
    ordinal      INTEGER NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('failed', 'incomplete')),
    reason       TEXT,
    run_id       TEXT,
    question_id  TEXT,
    platform     TEXT
);

CREATE TABLE evidence_groups (
    pk                  INTEGER PRIMARY KEY,
    id                  TEXT NOT NULL UNIQUE,
    claim_pk            INTEGER NOT NULL REFERENCES claims(pk),
    label               TEXT,
    required_documents  TEXT NOT NULL,
    reasoning_steps     TEXT NOT NULL,
    reviewer            TEXT
);

CREATE TABLE evidence_group_sources (
    group_pk   INTEGER NOT NULL REFERENCES evidence_groups(pk),
    ordinal    INTEGER NOT NULL,
    source_pk  INTEGER NOT NULL REFERENCES sources(pk),
    PRIMARY KEY (group_pk, ordinal)
) WITHOUT ROWID;
"""

_COLLECTION = """
-- One collection: a named pass of `citeaudit collect` over a protocol's plan.
CREATE TABLE collections (
    pk           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    protocol_pk  INTEGER NOT NULL REFERENCES protocols(pk),
    created_at   TEXT NOT NULL
);

-- One row per (question, engine, locale, repeat): asked once, never twice. State moves
-- pending -> fetched (response archived) -> done; `error` (no usable response yet) is retried by a rerun.
CREATE TABLE collection_tasks (
    pk              INTEGER PRIMARY KEY,
    collection_pk   INTEGER NOT NULL REFERENCES collections(pk),
    question_id     TEXT NOT NULL,
    engine          TEXT NOT NULL,
    locale          TEXT NOT NULL,
    repeat          INTEGER NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('pending', 'fetched', 'done', 'error')),
    outcome         TEXT CHECK (outcome IN ('answered', 'no_retrieval', 'retrieval_failed', 'refused',
                                            'engine_failed', 'incomplete', 'malformed', 'duplicate_payload')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    http_status     INTEGER,
    reason          TEXT,
    payload_sha256  TEXT REFERENCES payloads(sha256),
    answer_id       TEXT,
    usage           TEXT,
    cost_usd        REAL,
    updated_at      TEXT NOT NULL,
    UNIQUE (collection_pk, question_id, engine, locale, repeat)
);

-- Every HTTP exchange of a task in order (the request log); bodies are archived payloads, keys never stored.
CREATE TABLE collection_responses (
    pk              INTEGER PRIMARY KEY,
    task_pk         INTEGER NOT NULL REFERENCES collection_tasks(pk),
    attempt         INTEGER NOT NULL,
    url             TEXT NOT NULL,
    http_status     INTEGER,
    error           TEXT,
    payload_sha256  TEXT REFERENCES payloads(sha256),
    received_at     TEXT NOT NULL
);
CREATE INDEX collection_responses_task ON collection_responses(task_pk);
"""

_FACT_LOCKS = """
-- The required-fact list a run was measured against, fixed when its first platform answers arrived.
CREATE TABLE fact_locks (
    pk           INTEGER PRIMARY KEY,
    run_pk       INTEGER NOT NULL UNIQUE REFERENCES runs(pk),
    protocol_pk  INTEGER NOT NULL REFERENCES protocols(pk),
    facts_hash   TEXT NOT NULL,
    locked_at    TEXT NOT NULL
);

-- A run moved to a revised protocol: who changed what and when (append-only).
CREATE TABLE protocol_revisions (
    pk                INTEGER PRIMARY KEY,
    run_pk            INTEGER NOT NULL REFERENCES runs(pk),
    from_protocol_pk  INTEGER NOT NULL REFERENCES protocols(pk),
    to_protocol_pk    INTEGER NOT NULL REFERENCES protocols(pk),
    changed_by        TEXT NOT NULL,
    changed_at        TEXT NOT NULL,
    reason            TEXT,
    changes           TEXT NOT NULL  -- JSON: differing components, facts added / removed / changed
);
CREATE INDEX protocol_revisions_run ON protocol_revisions(run_pk);

CREATE TRIGGER protocol_revisions_append_only BEFORE UPDATE ON protocol_revisions
BEGIN SELECT RAISE(ABORT, 'protocol revisions are a record: append, never update'); END;
"""

_SOURCES_SNAPSHOTS = """
-- Content-addressed bytes of a page as read, with the text taken from them. Never updated.
CREATE TABLE documents (
    sha256      TEXT PRIMARY KEY,
    media_type  TEXT NOT NULL,
    size        INTEGER NOT NULL,
    body        BLOB NOT NULL,
    text        TEXT NOT NULL,
    title       TEXT,
    published   TEXT,
    updated     TEXT
) WITHOUT ROWID;

CREATE TRIGGER documents_immutable BEFORE UPDATE ON documents
BEGIN SELECT RAISE(ABORT, 'documents are immutable'); END;

-- Passages of a document's text: text[start:end].
CREATE TABLE passages (
    document_sha256  TEXT NOT NULL REFERENCES documents(sha256),
    ordinal          INTEGER NOT NULL,
    start            INTEGER NOT NULL,
    "end"            INTEGER NOT NULL,
    PRIMARY KEY (document_sha256, ordinal)
) WITHOUT ROWID;

-- One row per attempt to resolve a source: hops, outcome and, when the page was read, its snapshot.
CREATE TABLE fetches (
    pk               INTEGER PRIMARY KEY,
    source_pk        INTEGER NOT NULL REFERENCES sources(pk),
    requested_url    TEXT NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('resolved', 'failed')),
    reason           TEXT,
    chain            TEXT NOT NULL,
    final_url        TEXT,
    canonical_url    TEXT,
    http_status      INTEGER,
    headers          TEXT NOT NULL,
    fetched_at       TEXT NOT NULL,
    document_sha256  TEXT REFERENCES documents(sha256)
);
CREATE INDEX fetches_source ON fetches(source_pk);

-- A fetch follows its source through a merge (source_pk) and is otherwise never changed.
CREATE TRIGGER fetches_immutable BEFORE UPDATE OF
    pk, requested_url, status, reason, chain, final_url, canonical_url, http_status, headers, fetched_at,
    document_sha256 ON fetches
BEGIN SELECT RAISE(ABORT, 'fetches are immutable'); END;

-- Links attached by hand to sources (title-only cards): who, when, what.
CREATE TABLE source_links (
    pk         INTEGER PRIMARY KEY,
    source_pk  INTEGER NOT NULL REFERENCES sources(pk),
    url        TEXT NOT NULL,
    set_by     TEXT NOT NULL,
    set_at     TEXT NOT NULL
);

-- Keys a source had before resolution gave it its resolved key, or before it merged into another source.
CREATE TABLE source_keys (
    key         TEXT PRIMARY KEY,
    source_pk   INTEGER NOT NULL REFERENCES sources(pk),
    url         TEXT,
    retired_at  TEXT NOT NULL,
    why         TEXT NOT NULL CHECK (why IN ('resolved', 'merged'))
) WITHOUT ROWID;

-- Edges of one claim that became one edge when their sources turned out to be the same page.
CREATE TABLE edge_merges (
    pk               INTEGER PRIMARY KEY,
    from_edge_pk     INTEGER NOT NULL,
    into_edge_pk     INTEGER NOT NULL REFERENCES edges(pk),
    from_source_key  TEXT NOT NULL,
    from_state       TEXT NOT NULL,
    into_state       TEXT NOT NULL,
    merged_state     TEXT NOT NULL,
    merged_at        TEXT NOT NULL
);

-- A merge moves judgements to the merged edge and nothing else: their content stays immutable.
DROP TRIGGER judgements_immutable;

CREATE TRIGGER judgements_immutable BEFORE UPDATE ON judgements
WHEN NEW.edge_pk IS OLD.edge_pk
BEGIN SELECT RAISE(ABORT, 'judgements are immutable: record a new judgement'); END;

CREATE TRIGGER judgements_move_only BEFORE UPDATE ON judgements
WHEN NEW.edge_pk IS NOT OLD.edge_pk AND (
    NEW.pk IS NOT OLD.pk OR NEW.label IS NOT OLD.label OR NEW.reviewer IS NOT OLD.reviewer
    OR NEW.origin IS NOT OLD.origin OR NEW.stage IS NOT OLD.stage OR NEW.passage IS NOT OLD.passage
    OR NEW.period IS NOT OLD.period OR NEW.reasoning IS NOT OLD.reasoning OR NEW.created_at IS NOT OLD.created_at
)
BEGIN SELECT RAISE(ABORT, 'judgements are immutable: a merge may only move one to the merged edge'); END;
"""

_REVIEW_WORKFLOW = """
-- Review workflow: accounts, sessions, an append-only audit log, project settings, and the
-- columns and indexes the reviewer queue needs to stay fast with millions of edges.
CREATE TABLE reviewers (
    pk             INTEGER PRIMARY KEY,
    name           TEXT NOT NULL UNIQUE,
    role           TEXT NOT NULL CHECK (role IN ('reviewer', 'adjudicator', 'admin')),
    password_hash  TEXT NOT NULL,
    created_at     TEXT NOT NULL
);

CREATE TABLE review_sessions (
    token_sha256  TEXT PRIMARY KEY,
    reviewer_pk   INTEGER NOT NULL REFERENCES reviewers(pk),
    csrf          TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    expires_at    TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE review_settings (
    key    TEXT PRIMARY KEY,
    value  TEXT NOT NULL
) WITHOUT ROWID;

-- Who did what, when, with the state before and after: appended, never changed.
CREATE TABLE audit_log (
    pk           INTEGER PRIMARY KEY,
    at           TEXT NOT NULL,
    actor        TEXT NOT NULL,
    action       TEXT NOT NULL,
    target       TEXT NOT NULL,
    before       TEXT,
    after        TEXT
);
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;

-- Severity a reviewer gives with a judgement, and the form submission it came from: a retried POST
-- (same submission id) never records a second judgement.
ALTER TABLE judgements ADD COLUMN severity TEXT;
ALTER TABLE judgements ADD COLUMN submission TEXT;
CREATE UNIQUE INDEX judgements_submission ON judgements(submission) WHERE submission IS NOT NULL;
CREATE INDEX judgements_edge_reviewer ON judgements(edge_pk, reviewer);

-- URLs attached by hand to title-only sources: who and when (the source stays pending until resolved).
CREATE TABLE source_url_attachments (
    pk           INTEGER PRIMARY KEY,
    source_pk    INTEGER NOT NULL REFERENCES sources(pk),
    url          TEXT NOT NULL,
    reviewer     TEXT NOT NULL,
    attached_at  TEXT NOT NULL
);

-- The queue walks edges in a pseudo-random but fixed order (a multiplicative hash of pk) from a starting
-- point chosen per reviewer; these expression indexes let it do so by keyset, without sorting or OFFSET:
-- by final code (what still needs a review or an adjudication), by review state, and all edges.
CREATE INDEX edges_queue ON edges(final_code, ((pk * 2654435761) % 4294967296));
CREATE INDEX edges_queue_state ON edges(review_state, ((pk * 2654435761) % 4294967296));
CREATE INDEX edges_queue_all ON edges(((pk * 2654435761) % 4294967296));
CREATE INDEX answers_question_platform ON answers(question_pk, platform);
CREATE INDEX answers_run_platform ON answers(run_pk, platform);
CREATE INDEX answers_platform ON answers(platform);
"""

_COPY_GROUPS = """
-- Sources whose snapshot text is near-identical (derived; `citeaudit sources copies` recomputes the whole set).
CREATE TABLE copy_groups (
    pk                INTEGER PRIMARY KEY,
    origin_source_pk  INTEGER NOT NULL REFERENCES sources(pk),
    reason            TEXT NOT NULL,
    settings          TEXT NOT NULL,
    computed_at       TEXT NOT NULL
);

CREATE TABLE copy_group_members (
    source_pk  INTEGER PRIMARY KEY REFERENCES sources(pk),
    group_pk   INTEGER NOT NULL REFERENCES copy_groups(pk)
);
CREATE INDEX copy_group_members_group ON copy_group_members(group_pk);

-- When the groups were last computed, how, and over how many pages (no groups may mean "no copies").
CREATE TABLE copy_group_computations (
    pk           INTEGER PRIMARY KEY,
    computed_at  TEXT NOT NULL,
    settings     TEXT NOT NULL,
    pages        INTEGER NOT NULL,
    groups       INTEGER NOT NULL
);
"""

# Provenance of model judgements (issue 7): which judge, model, version and prompt proposed a label, and the
# probability it gave. NULL on human judgements and on rows written before this migration.
_JUDGEMENT_PROVENANCE = """
ALTER TABLE judgements ADD COLUMN judge TEXT;
ALTER TABLE judgements ADD COLUMN judge_model TEXT;
ALTER TABLE judgements ADD COLUMN judge_version TEXT;
ALTER TABLE judgements ADD COLUMN prompt_sha256 TEXT;
ALTER TABLE judgements ADD COLUMN confidence REAL CHECK (confidence IS NULL OR (confidence >= 0 AND confidence <= 1));
"""

_SEGMENTATION = """
-- Claim sets: every segmentation or manual edit of an answer is a new set; the newest set of an answer holds
-- its current claims (an answer without a set uses every claim it has). Claims shared by several sets are
-- the same rows, so their edges and judgements stay with them; nothing here is updated or deleted.
CREATE TABLE claim_sets (
    pk          INTEGER PRIMARY KEY,
    answer_pk   INTEGER NOT NULL REFERENCES answers(pk),
    ordinal     INTEGER NOT NULL,
    method      TEXT NOT NULL,
    version     TEXT,
    parameters  TEXT NOT NULL,  -- JSON list of [name, canonical JSON value] pairs
    action      TEXT NOT NULL CHECK (action IN ('ingest', 'segment', 'split', 'merge', 'edit')),
    actor       TEXT,
    created_at  TEXT NOT NULL,
    counts      TEXT NOT NULL,  -- JSON: kept, new, retired claims, pending edges, skipped pieces...
    UNIQUE (answer_pk, ordinal)
);
CREATE INDEX claim_sets_answer ON claim_sets(answer_pk);

CREATE TABLE claim_set_members (
    set_pk    INTEGER NOT NULL REFERENCES claim_sets(pk),
    claim_pk  INTEGER NOT NULL REFERENCES claims(pk),
    PRIMARY KEY (set_pk, claim_pk)
) WITHOUT ROWID;

CREATE TRIGGER claim_sets_immutable BEFORE UPDATE ON claim_sets
BEGIN SELECT RAISE(ABORT, 'claim sets are immutable: record a new set'); END;

CREATE TRIGGER claim_sets_kept BEFORE DELETE ON claim_sets
BEGIN SELECT RAISE(ABORT, 'claim sets are kept as history'); END;

CREATE TRIGGER claim_set_members_kept BEFORE DELETE ON claim_set_members
BEGIN SELECT RAISE(ABORT, 'claim set members are kept as history'); END;

CREATE TRIGGER claims_text_immutable BEFORE UPDATE OF answer_pk, text, start, "end" ON claims
BEGIN SELECT RAISE(ABORT, 'a claim keeps its text and span: edit it into a new claim set'); END;

-- The newest claim set of each answer that has one.
CREATE VIEW current_claim_sets AS SELECT answer_pk, max(pk) AS set_pk FROM claim_sets GROUP BY answer_pk;

-- 1 when the claim is in its answer's newest claim set (or the answer has none): derived from claim_sets and
-- kept in step in the transaction that writes a set, so scoring filters claims without a join.
ALTER TABLE claims ADD COLUMN current INTEGER NOT NULL DEFAULT 1 CHECK (current IN (0, 1));
CREATE INDEX claims_current ON claims(answer_pk, current);

-- Claim -> required-fact mappings: proposals, confirmations and rejections, one row each, never updated.
-- A confirmation also sets claims.fact_pk, which coverage reads.
CREATE TABLE fact_mappings (
    pk          INTEGER PRIMARY KEY,
    claim_pk    INTEGER NOT NULL REFERENCES claims(pk),
    fact_pk     INTEGER NOT NULL REFERENCES required_facts(pk),
    state       TEXT NOT NULL CHECK (state IN ('proposed', 'confirmed', 'rejected')),
    score       REAL,
    lexical     REAL,
    dense       REAL,
    entities    TEXT,  -- JSON: what the entity check compared
    method      TEXT NOT NULL,
    actor       TEXT,
    created_at  TEXT NOT NULL
);
CREATE INDEX fact_mappings_claim ON fact_mappings(claim_pk);

CREATE TRIGGER fact_mappings_immutable BEFORE UPDATE ON fact_mappings
BEGIN SELECT RAISE(ABORT, 'fact mappings are immutable: record a new decision'); END;
"""

_RETRIEVAL_REASON = """
-- Why an answer's retrieval failed or is unknown (e.g. the search tool's error code).
ALTER TABLE answers ADD COLUMN retrieval_reason TEXT;
"""

_JUDGEMENT_MOVE_GUARD = """
-- A merge may move a judgement to the merged edge and change nothing else: the guard now covers the columns
-- added after it (severity, submission, model provenance).
DROP TRIGGER judgements_move_only;

CREATE TRIGGER judgements_move_only BEFORE UPDATE ON judgements
WHEN NEW.edge_pk IS NOT OLD.edge_pk AND (
    NEW.pk IS NOT OLD.pk OR NEW.label IS NOT OLD.label OR NEW.reviewer IS NOT OLD.reviewer
    OR NEW.origin IS NOT OLD.origin OR NEW.stage IS NOT OLD.stage OR NEW.passage IS NOT OLD.passage
    OR NEW.period IS NOT OLD.period OR NEW.reasoning IS NOT OLD.reasoning OR NEW.created_at IS NOT OLD.created_at
    OR NEW.severity IS NOT OLD.severity OR NEW.submission IS NOT OLD.submission OR NEW.judge IS NOT OLD.judge
    OR NEW.judge_model IS NOT OLD.judge_model OR NEW.judge_version IS NOT OLD.judge_version
    OR NEW.prompt_sha256 IS NOT OLD.prompt_sha256 OR NEW.confidence IS NOT OLD.confidence
)
BEGIN SELECT RAISE(ABORT, 'judgements are immutable: a merge may only move one to the merged edge'); END;
"""

_SUGGESTED_PASSAGES = """
-- One row per model suggestion made by `citeaudit suggest`: the judgement it stored (origin model, with its
-- provenance), the snapshot it read and how the passages were ranked. Never updated.
CREATE TABLE suggestions (
    pk               INTEGER PRIMARY KEY,
    edge_pk          INTEGER NOT NULL REFERENCES edges(pk),
    judgement_pk     INTEGER NOT NULL UNIQUE REFERENCES judgements(pk),
    document_sha256  TEXT NOT NULL REFERENCES documents(sha256),
    method           TEXT NOT NULL CHECK (method IN ('bm25', 'dense', 'hybrid')),
    created_at       TEXT NOT NULL
);
CREATE INDEX suggestions_edge ON suggestions(edge_pk);

CREATE TRIGGER suggestions_immutable BEFORE UPDATE OF
    pk, judgement_pk, document_sha256, method, created_at ON suggestions
BEGIN SELECT RAISE(ABORT, 'suggestions are immutable: run suggest --refresh for a new one'); END;

-- The top passages shown to the judge, best first: passage `ordinal` of the document, text[start:end].
CREATE TABLE suggested_passages (
    suggestion_pk  INTEGER NOT NULL REFERENCES suggestions(pk),
    rank           INTEGER NOT NULL CHECK (rank >= 1),
    ordinal        INTEGER NOT NULL,
    start          INTEGER NOT NULL,
    "end"          INTEGER NOT NULL,
    score          REAL NOT NULL,
    bm25           REAL,
    dense          REAL,
    PRIMARY KEY (suggestion_pk, rank)
) WITHOUT ROWID;
"""

_CROSS_PAIRS = """
-- Cross pairs: a claim whose own edges are not supported, and another source of the audit (co-cited in the
-- same answer, or an official page). Proposed by `citeaudit suggest --cross-pairs`, judged in review like edges,
-- kept apart from edges: never part of precision, coverage or any edge count.
CREATE TABLE cross_pairs (
    pk          INTEGER PRIMARY KEY,
    claim_pk    INTEGER NOT NULL REFERENCES claims(pk),
    source_pk   INTEGER NOT NULL REFERENCES sources(pk),
    kind        TEXT NOT NULL CHECK (kind = 'co_cited' OR kind = 'official'),
    proposed_at TEXT NOT NULL
);
CREATE INDEX cross_pairs_claim ON cross_pairs(claim_pk);
CREATE INDEX cross_pairs_source ON cross_pairs(source_pk);

-- Judgements of cross pairs, human and model, as for edges; a model judgement records the snapshot it read.
CREATE TABLE cross_judgements (
    pk               INTEGER PRIMARY KEY,
    cross_pair_pk    INTEGER NOT NULL REFERENCES cross_pairs(pk),
    label            TEXT NOT NULL CHECK ((label = 'supported' OR label = 'partial' OR label = 'conflicting'
                                           OR label = 'irrelevant' OR label = 'unknown')),
    reviewer         TEXT,
    origin           TEXT NOT NULL CHECK (origin = 'human' OR origin = 'model'),
    stage            TEXT NOT NULL CHECK (stage = 'review' OR stage = 'adjudication'),
    passage          TEXT,
    reasoning        TEXT,
    created_at       TEXT NOT NULL,
    judge            TEXT,
    judge_model      TEXT,
    judge_version    TEXT,
    prompt_sha256    TEXT,
    confidence       REAL,
    document_sha256  TEXT REFERENCES documents(sha256),
    method           TEXT,
    submission       TEXT UNIQUE
);
CREATE INDEX cross_judgements_pair ON cross_judgements(cross_pair_pk);

CREATE TRIGGER cross_judgements_move_only BEFORE UPDATE ON cross_judgements
WHEN NEW.cross_pair_pk IS OLD.cross_pair_pk
BEGIN SELECT RAISE(ABORT, 'cross-pair judgements are immutable: record a new one'); END;

-- The top passages a model judgement of a cross pair was shown, best first.
CREATE TABLE cross_suggested_passages (
    cross_judgement_pk  INTEGER NOT NULL REFERENCES cross_judgements(pk),
    rank                INTEGER NOT NULL CHECK (rank >= 1),
    ordinal             INTEGER NOT NULL,
    start               INTEGER NOT NULL,
    "end"               INTEGER NOT NULL,
    score               REAL NOT NULL,
    PRIMARY KEY (cross_judgement_pk, rank)
) WITHOUT ROWID;
"""

_TEXT = r"'(?:[^']|'')*'"
_IN_LIST = re.compile(rf"CHECK \((\w+) IN \(((?:{_TEXT}\s*,\s*){{2,}}{_TEXT})\)\)")
"""A CHECK constraint that is exactly ``column IN ('a', 'b', 'c', ...)``: three or more text constants."""


def comparisons(sql: str) -> str:
    """``sql`` with every ``CHECK (column IN ('a', 'b', 'c', ...))`` written
    ``CHECK ((column = 'a' OR column = 'b' OR ...))``; any other CHECK is left as it is."""
    return _IN_LIST.sub(
        lambda m: "CHECK ((" + " OR ".join(f"{m[1]} = {value}" for value in re.findall(_TEXT, m[2])) + "))", sql
    )


def _compiles(sql: str) -> bool:
    try:
        sqlite3.connect(":memory:").execute(sql).close()
    except sqlite3.Error:
        return False
    return True


def _check_lists_as_comparisons(db: sqlite3.Connection) -> None:
    """Rewrite the CHECK constraints that test a column against a list of three or more values as a chain of
    comparisons, which accepts and rejects exactly the same values. SQLite evaluates ``IN (list)`` through a
    temporary lookup table made once per execution of a statement, and ``executemany`` executes its statement
    once per row: with the list, writing a citation row one to a statement took 1.9 times as long as with the
    chain (64 rows to a statement, 1.2 times). A CHECK constraint is not part of the stored records, so the table
    definitions are edited in place as SQLite documents for such changes (writable_schema, then a new
    schema_version so every connection reads the edited schema). A definition is only replaced by one that
    SQLite compiles.

    An SQLite built to refuse schema edits (defensive mode) keeps the lists: they accept the same values, and
    only writing is slower."""
    edited = []
    for name, sql in db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND sql LIKE '% IN (%'"):
        rewritten = comparisons(sql)
        if rewritten != sql and _compiles(rewritten):
            edited.append((rewritten, name))
    version = int(db.execute("PRAGMA schema_version").fetchone()[0])
    db.execute("SAVEPOINT check_lists")
    db.execute("PRAGMA writable_schema = ON")
    try:
        db.executemany("UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = ?", edited)
        db.execute(f"PRAGMA schema_version = {version + 1}")
    except sqlite3.DatabaseError:
        db.execute("ROLLBACK TO check_lists")
    finally:
        db.execute("PRAGMA writable_schema = OFF")
        db.execute("RELEASE check_lists")


_SUGGESTION_METHODS = ("bm25", "dense", "hybrid", "window", "window-hybrid")
_METHOD_CHECK = re.compile(rf"CHECK \((?:method IN \((?:{_TEXT}\s*,?\s*)+\)|\((?:method = {_TEXT}(?: OR )?)+\))\)")


def _window_suggestion_methods(db: sqlite3.Connection) -> None:
    """Let ``suggestions.method`` also record ``window`` and ``window-hybrid`` (passage windows ranked as one
    unit). Only the CHECK constraint changes, which is not part of the stored records, so the definition is edited
    in place as in :func:`_check_lists_as_comparisons` (and only replaced by one SQLite compiles). An SQLite built
    to refuse schema edits keeps the old list; storing a window method there fails with a constraint error."""
    row = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'suggestions'").fetchone()
    if row is None:
        return
    allowed = " OR ".join(f"method = '{method}'" for method in _SUGGESTION_METHODS)
    rewritten = _METHOD_CHECK.sub(f"CHECK (({allowed}))", row[0], count=1)
    if rewritten == row[0] or not _compiles(rewritten):
        return
    version = int(db.execute("PRAGMA schema_version").fetchone()[0])
    db.execute("SAVEPOINT window_methods")
    db.execute("PRAGMA writable_schema = ON")
    try:
        db.execute("UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = 'suggestions'", (rewritten,))
        db.execute(f"PRAGMA schema_version = {version + 1}")
    except sqlite3.DatabaseError:
        db.execute("ROLLBACK TO window_methods")
    finally:
        db.execute("PRAGMA writable_schema = OFF")
        db.execute("RELEASE window_methods")


_RESPONSE_IDS = """
-- The engine's own id of the response an answer came from (OpenAI's resp_…, Anthropic's msg_…, Gemini's
-- responseId…), when the payload gives one: the way back to the engine's records.
ALTER TABLE answers ADD COLUMN response_id TEXT;

-- Collections as a dimension of scores: an answer's collection is found by its id.
CREATE INDEX collection_tasks_answer ON collection_tasks(answer_id);
"""

_REVIEWER_PROGRESS = """
-- A reviewer's own judgements by name: their progress (done / assigned) counts them without reading everyone's.
CREATE INDEX judgements_reviewer ON judgements(reviewer, edge_pk);
-- The engine's quotes of a source, shown on the edge page before the source has a snapshot.
CREATE INDEX citations_source ON citations(source_pk);
"""

_REVIEW_ASSISTANCE = """
-- Whether model suggestions were on the page a person judged the edge on: 1 shown, 0 hidden; NULL for
-- judgements recorded before this column and for doors that show no page (import, ingest, the library). A scope
-- holding a judgement made with suggestions shown is fingerprinted as measured with that assistance.
ALTER TABLE judgements ADD COLUMN suggestions_shown INTEGER CHECK (suggestions_shown IN (0, 1));

-- A merge may move a judgement and change nothing else, this column included.
DROP TRIGGER judgements_move_only;

CREATE TRIGGER judgements_move_only BEFORE UPDATE ON judgements
WHEN NEW.edge_pk IS NOT OLD.edge_pk AND (
    NEW.pk IS NOT OLD.pk OR NEW.label IS NOT OLD.label OR NEW.reviewer IS NOT OLD.reviewer
    OR NEW.origin IS NOT OLD.origin OR NEW.stage IS NOT OLD.stage OR NEW.passage IS NOT OLD.passage
    OR NEW.period IS NOT OLD.period OR NEW.reasoning IS NOT OLD.reasoning OR NEW.created_at IS NOT OLD.created_at
    OR NEW.severity IS NOT OLD.severity OR NEW.submission IS NOT OLD.submission OR NEW.judge IS NOT OLD.judge
    OR NEW.judge_model IS NOT OLD.judge_model OR NEW.judge_version IS NOT OLD.judge_version
    OR NEW.prompt_sha256 IS NOT OLD.prompt_sha256 OR NEW.confidence IS NOT OLD.confidence
    OR NEW.suggestions_shown IS NOT OLD.suggestions_shown
)
BEGIN SELECT RAISE(ABORT, 'judgements are immutable: a merge may only move one to the merged edge'); END;
"""

_REVIEW_ASSISTANCE_INDEX = """
-- The few judgements made with suggestions shown, found without reading the others: scoring asks whether a scope
-- holds one every time it fingerprints (a full scan took 26 s over 7.2 million judgements).
CREATE INDEX judgements_assisted ON judgements(edge_pk) WHERE suggestions_shown = 1;
"""

_REVIEW_LEASES = """
-- A reservation of an edge for one reviewer while its page is open: taken by the queue's next edge, renewed while
-- the page stays open, dropped on a submission, a skip or a logout, and void once expires_at has passed. Under a
-- policy of n reviews an edge is reserved by at most as many reviewers as still owe it a review.
CREATE TABLE review_leases (
    edge_pk      INTEGER NOT NULL REFERENCES edges(pk),
    reviewer_pk  INTEGER NOT NULL REFERENCES reviewers(pk),
    taken_at     TEXT NOT NULL,
    expires_at   TEXT NOT NULL,
    PRIMARY KEY (edge_pk, reviewer_pk)
) WITHOUT ROWID;
CREATE INDEX review_leases_reviewer ON review_leases(reviewer_pk);

-- An edge a reviewer put off, with their note: it goes to the back of their queue until they judge it.
CREATE TABLE review_skips (
    edge_pk      INTEGER NOT NULL REFERENCES edges(pk),
    reviewer_pk  INTEGER NOT NULL REFERENCES reviewers(pk),
    note         TEXT,
    skipped_at   TEXT NOT NULL,
    PRIMARY KEY (reviewer_pk, edge_pk)
) WITHOUT ROWID;
"""


MIGRATIONS: tuple[Migration, ...] = (
    _V1,
    _COLLECTION,
    _FACT_LOCKS,
    _SOURCES_SNAPSHOTS,
    _REVIEW_WORKFLOW,
    _COPY_GROUPS,
    _JUDGEMENT_PROVENANCE,
    _SEGMENTATION,
    _RETRIEVAL_REASON,
    _JUDGEMENT_MOVE_GUARD,
    _SUGGESTED_PASSAGES,
    _check_lists_as_comparisons,
    _window_suggestion_methods,
    _CROSS_PAIRS,
    _RESPONSE_IDS,
    _REVIEWER_PROGRESS,
    _REVIEW_ASSISTANCE,
    _REVIEW_ASSISTANCE_INDEX,
    _REVIEW_LEASES,
)
"""``MIGRATIONS[n]`` upgrades schema version ``n`` to ``n + 1``."""

SCHEMA_VERSION = len(MIGRATIONS)
"""The schema version this citeaudit writes."""
