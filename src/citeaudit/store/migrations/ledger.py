"""Schema versions 1 to 8: the ledger as first made (payloads, imports, protocols, answers, sources, citations,
claims, edges, judgements), then collections, fact locks, sources' snapshots, the review workflow, copy groups,
model judgements' provenance and claim sets. Released: never edit one, append a new migration (see
:mod:`citeaudit.store.migrations`)."""

from __future__ import annotations

__all__ = ["LEDGER"]

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

# Provenance of model judgements: which judge, model, version and prompt proposed a label, and the
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


LEDGER = (
    _V1,
    _COLLECTION,
    _FACT_LOCKS,
    _SOURCES_SNAPSHOTS,
    _REVIEW_WORKFLOW,
    _COPY_GROUPS,
    _JUDGEMENT_PROVENANCE,
    _SEGMENTATION,
)
"""The scripts that take a database from schema version 0 to 8, in order."""
