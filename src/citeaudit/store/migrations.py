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

# Provenance of model judgements (issue 7): which judge, model, version and prompt proposed a label, and the
# probability it gave. NULL on human judgements and on rows written before this migration.
_JUDGEMENT_PROVENANCE = """
ALTER TABLE judgements ADD COLUMN judge TEXT;
ALTER TABLE judgements ADD COLUMN judge_model TEXT;
ALTER TABLE judgements ADD COLUMN judge_version TEXT;
ALTER TABLE judgements ADD COLUMN prompt_sha256 TEXT;
ALTER TABLE judgements ADD COLUMN confidence REAL CHECK (confidence IS NULL OR (confidence >= 0 AND confidence <= 1));
"""

MIGRATIONS: tuple[str, ...] = (_V1, _JUDGEMENT_PROVENANCE)
"""``MIGRATIONS[n]`` upgrades schema version ``n`` to ``n + 1``."""

SCHEMA_VERSION = len(MIGRATIONS)
"""The schema version this citeaudit writes."""
