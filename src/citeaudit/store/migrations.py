"""Forward-only schema migrations. Migration ``n`` takes a database from version ``n`` to ``n + 1``; the
schema version lives in ``PRAGMA user_version``. Never edit a released migration: append a new one."""

from __future__ import annotations

__all__ = ["MIGRATIONS", "SCHEMA_VERSION"]

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

MIGRATIONS: tuple[str, ...] = (_V1, _SEGMENTATION)
"""``MIGRATIONS[n]`` upgrades schema version ``n`` to ``n + 1``."""

SCHEMA_VERSION = len(MIGRATIONS)
"""The schema version this citeaudit writes."""
