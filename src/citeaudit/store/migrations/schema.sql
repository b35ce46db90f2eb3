-- The schema citeaudit's migrations leave a new database with, written by scripts/make_store_schema.py.
-- Not edited by hand: add a migration, then run the script.
-- schema version 21

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

CREATE TABLE protocol_sources (
    protocol_pk  INTEGER NOT NULL REFERENCES protocols(pk),
    source_pk    INTEGER NOT NULL REFERENCES sources(pk),
    PRIMARY KEY (protocol_pk, source_pk)
) WITHOUT ROWID;

CREATE TABLE edge_locations (
    pk       INTEGER PRIMARY KEY,
    edge_pk  INTEGER NOT NULL REFERENCES edges(pk),
    marker   TEXT,
    start    INTEGER,
    "end"    INTEGER
);

CREATE INDEX edge_locations_edge ON edge_locations(edge_pk);

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

CREATE TABLE collections (
    pk           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    protocol_pk  INTEGER NOT NULL REFERENCES protocols(pk),
    created_at   TEXT NOT NULL
);

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

CREATE TABLE fact_locks (
    pk           INTEGER PRIMARY KEY,
    run_pk       INTEGER NOT NULL UNIQUE REFERENCES runs(pk),
    protocol_pk  INTEGER NOT NULL REFERENCES protocols(pk),
    facts_hash   TEXT NOT NULL,
    locked_at    TEXT NOT NULL
);

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

CREATE TABLE passages (
    document_sha256  TEXT NOT NULL REFERENCES documents(sha256),
    ordinal          INTEGER NOT NULL,
    start            INTEGER NOT NULL,
    "end"            INTEGER NOT NULL,
    PRIMARY KEY (document_sha256, ordinal)
) WITHOUT ROWID;

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

CREATE TRIGGER fetches_immutable BEFORE UPDATE OF
    pk, requested_url, status, reason, chain, final_url, canonical_url, http_status, headers, fetched_at,
    document_sha256 ON fetches
BEGIN SELECT RAISE(ABORT, 'fetches are immutable'); END;

CREATE TABLE source_links (
    pk         INTEGER PRIMARY KEY,
    source_pk  INTEGER NOT NULL REFERENCES sources(pk),
    url        TEXT NOT NULL,
    set_by     TEXT NOT NULL,
    set_at     TEXT NOT NULL
);

CREATE TABLE source_keys (
    key         TEXT PRIMARY KEY,
    source_pk   INTEGER NOT NULL REFERENCES sources(pk),
    url         TEXT,
    retired_at  TEXT NOT NULL,
    why         TEXT NOT NULL CHECK (why IN ('resolved', 'merged'))
) WITHOUT ROWID;

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

CREATE TABLE source_url_attachments (
    pk           INTEGER PRIMARY KEY,
    source_pk    INTEGER NOT NULL REFERENCES sources(pk),
    url          TEXT NOT NULL,
    reviewer     TEXT NOT NULL,
    attached_at  TEXT NOT NULL
);

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

CREATE TABLE copy_group_computations (
    pk           INTEGER PRIMARY KEY,
    computed_at  TEXT NOT NULL,
    settings     TEXT NOT NULL,
    pages        INTEGER NOT NULL,
    groups       INTEGER NOT NULL
);

CREATE TABLE claim_set_members (
    set_pk    INTEGER NOT NULL REFERENCES claim_sets(pk),
    claim_pk  INTEGER NOT NULL REFERENCES claims(pk),
    PRIMARY KEY (set_pk, claim_pk)
) WITHOUT ROWID;

CREATE TRIGGER claim_set_members_kept BEFORE DELETE ON claim_set_members
BEGIN SELECT RAISE(ABORT, 'claim set members are kept as history'); END;

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

CREATE TABLE "judgements" (
    pk          INTEGER PRIMARY KEY,
    edge_pk     INTEGER NOT NULL REFERENCES edges(pk),
    label       TEXT NOT NULL CHECK ((label = 'supported' OR label = 'partial' OR label = 'conflicting' OR label = 'irrelevant' OR label = 'unknown')),
    reviewer    TEXT,
    origin      TEXT NOT NULL CHECK (origin IN ('human', 'model')),
    stage       TEXT NOT NULL CHECK (stage IN ('review', 'adjudication')),
    passage     TEXT,
    period      TEXT,
    reasoning   TEXT,
    created_at  TEXT
, severity TEXT, submission TEXT, judge TEXT, judge_model TEXT, judge_version TEXT, prompt_sha256 TEXT, confidence REAL CHECK (confidence IS NULL OR (confidence >= 0 AND confidence <= 1)), suggestions_shown INTEGER CHECK (suggestions_shown IN (0, 1)));

CREATE TRIGGER judgements_immutable BEFORE UPDATE ON judgements
WHEN NEW.edge_pk IS OLD.edge_pk
BEGIN SELECT RAISE(ABORT, 'judgements are immutable: record a new judgement'); END;

CREATE UNIQUE INDEX judgements_submission ON judgements(submission) WHERE submission IS NOT NULL;

CREATE INDEX judgements_edge_reviewer ON judgements(edge_pk, reviewer);

CREATE TABLE "collection_tasks" (
    pk              INTEGER PRIMARY KEY,
    collection_pk   INTEGER NOT NULL REFERENCES collections(pk),
    question_id     TEXT NOT NULL,
    engine          TEXT NOT NULL,
    locale          TEXT NOT NULL,
    repeat          INTEGER NOT NULL,
    state           TEXT NOT NULL CHECK ((state = 'pending' OR state = 'fetched' OR state = 'done' OR state = 'error')),
    outcome         TEXT CHECK ((outcome = 'answered' OR outcome = 'no_retrieval' OR outcome = 'retrieval_failed' OR outcome = 'refused' OR outcome = 'engine_failed' OR outcome = 'incomplete' OR outcome = 'malformed' OR outcome = 'duplicate_payload')),
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

CREATE TABLE "reviewers" (
    pk             INTEGER PRIMARY KEY,
    name           TEXT NOT NULL UNIQUE,
    role           TEXT NOT NULL CHECK ((role = 'reviewer' OR role = 'adjudicator' OR role = 'admin')),
    password_hash  TEXT NOT NULL,
    created_at     TEXT NOT NULL
);

CREATE TABLE "claim_sets" (
    pk          INTEGER PRIMARY KEY,
    answer_pk   INTEGER NOT NULL REFERENCES answers(pk),
    ordinal     INTEGER NOT NULL,
    method      TEXT NOT NULL,
    version     TEXT,
    parameters  TEXT NOT NULL,  -- JSON list of [name, canonical JSON value] pairs
    action      TEXT NOT NULL CHECK ((action = 'ingest' OR action = 'segment' OR action = 'split' OR action = 'merge' OR action = 'edit')),
    actor       TEXT,
    created_at  TEXT NOT NULL,
    counts      TEXT NOT NULL,  -- JSON: kept, new, retired claims, pending edges, skipped pieces...
    UNIQUE (answer_pk, ordinal)
);

CREATE TRIGGER claim_sets_immutable BEFORE UPDATE ON claim_sets
BEGIN SELECT RAISE(ABORT, 'claim sets are immutable: record a new set'); END;

CREATE TRIGGER claim_sets_kept BEFORE DELETE ON claim_sets
BEGIN SELECT RAISE(ABORT, 'claim sets are kept as history'); END;

CREATE TABLE "fact_mappings" (
    pk          INTEGER PRIMARY KEY,
    claim_pk    INTEGER NOT NULL REFERENCES claims(pk),
    fact_pk     INTEGER NOT NULL REFERENCES required_facts(pk),
    state       TEXT NOT NULL CHECK ((state = 'proposed' OR state = 'confirmed' OR state = 'rejected')),
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

CREATE TABLE "suggestions" (
    pk               INTEGER PRIMARY KEY,
    edge_pk          INTEGER NOT NULL REFERENCES edges(pk),
    judgement_pk     INTEGER NOT NULL UNIQUE REFERENCES judgements(pk),
    document_sha256  TEXT NOT NULL REFERENCES documents(sha256),
    method           TEXT NOT NULL CHECK ((method = 'bm25' OR method = 'dense' OR method = 'hybrid' OR method = 'window' OR method = 'window-hybrid')),
    created_at       TEXT NOT NULL
);

CREATE INDEX suggestions_edge ON suggestions(edge_pk);

CREATE TRIGGER suggestions_immutable BEFORE UPDATE OF
    pk, judgement_pk, document_sha256, method, created_at ON suggestions
BEGIN SELECT RAISE(ABORT, 'suggestions are immutable: run suggest --refresh for a new one'); END;

CREATE TABLE cross_pairs (
    pk          INTEGER PRIMARY KEY,
    claim_pk    INTEGER NOT NULL REFERENCES claims(pk),
    source_pk   INTEGER NOT NULL REFERENCES sources(pk),
    kind        TEXT NOT NULL CHECK (kind = 'co_cited' OR kind = 'official'),
    proposed_at TEXT NOT NULL
);

CREATE INDEX cross_pairs_claim ON cross_pairs(claim_pk);

CREATE INDEX cross_pairs_source ON cross_pairs(source_pk);

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

CREATE TABLE cross_suggested_passages (
    cross_judgement_pk  INTEGER NOT NULL REFERENCES cross_judgements(pk),
    rank                INTEGER NOT NULL CHECK (rank >= 1),
    ordinal             INTEGER NOT NULL,
    start               INTEGER NOT NULL,
    "end"               INTEGER NOT NULL,
    score               REAL NOT NULL,
    PRIMARY KEY (cross_judgement_pk, rank)
) WITHOUT ROWID;

CREATE INDEX collection_tasks_answer ON collection_tasks(answer_id);

CREATE INDEX judgements_reviewer ON judgements(reviewer, edge_pk);

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

CREATE INDEX judgements_assisted ON judgements(edge_pk) WHERE suggestions_shown = 1;

CREATE TABLE review_leases (
    edge_pk      INTEGER NOT NULL REFERENCES edges(pk),
    reviewer_pk  INTEGER NOT NULL REFERENCES reviewers(pk),
    taken_at     TEXT NOT NULL,
    expires_at   TEXT NOT NULL,
    PRIMARY KEY (edge_pk, reviewer_pk)
) WITHOUT ROWID;

CREATE INDEX review_leases_reviewer ON review_leases(reviewer_pk);

CREATE TABLE review_skips (
    edge_pk      INTEGER NOT NULL REFERENCES edges(pk),
    reviewer_pk  INTEGER NOT NULL REFERENCES reviewers(pk),
    note         TEXT,
    skipped_at   TEXT NOT NULL,
    PRIMARY KEY (reviewer_pk, edge_pk)
) WITHOUT ROWID;

CREATE TABLE "answers" (
    pk              INTEGER PRIMARY KEY,
    id              TEXT NOT NULL,
    run_pk          INTEGER NOT NULL REFERENCES runs(pk),
    question_pk     INTEGER NOT NULL REFERENCES questions(pk),
    text            TEXT NOT NULL,
    platform        TEXT,
    model           TEXT,
    locale          TEXT,
    payload_sha256  TEXT,
    import_pk       INTEGER NOT NULL REFERENCES imports(pk),
    retrieval       TEXT CHECK ((retrieval = 'used' OR retrieval = 'not_used' OR retrieval = 'failed' OR retrieval = 'unknown')),
    queries         TEXT  -- JSON list of the search queries the engine issued, NULL when none were given
, retrieval_reason TEXT, response_id TEXT);

CREATE INDEX answers_question_platform ON answers(question_pk, platform);

CREATE INDEX answers_run_platform ON answers(run_pk, platform);

CREATE INDEX answers_platform ON answers(platform);

CREATE TABLE "claims" (
    pk           INTEGER PRIMARY KEY,
    id           TEXT NOT NULL,
    answer_pk    INTEGER NOT NULL REFERENCES answers(pk),
    text         TEXT NOT NULL,
    start        INTEGER,
    "end"        INTEGER,
    fact_pk      INTEGER REFERENCES required_facts(pk),
    severity     TEXT,
    entity       TEXT
, current INTEGER NOT NULL DEFAULT 1 CHECK (current IN (0, 1)));

CREATE TRIGGER claims_text_immutable BEFORE UPDATE OF answer_pk, text, start, "end" ON claims
BEGIN SELECT RAISE(ABORT, 'a claim keeps its text and span: edit it into a new claim set'); END;

CREATE INDEX claims_current ON claims(answer_pk, current);

CREATE TABLE "sources" (
    pk            INTEGER PRIMARY KEY,
    key           TEXT NOT NULL,
    url           TEXT,
    resolved_url  TEXT,
    title         TEXT,
    publisher     TEXT,
    status        TEXT NOT NULL CHECK ((status = 'resolved' OR status = 'pending' OR status = 'failed')),
    reason        TEXT,
    fetched_at    TEXT,
    content_hash  TEXT,
    host          TEXT,
    path          TEXT NOT NULL DEFAULT '/'
);

CREATE TABLE "citations" (
    pk          INTEGER PRIMARY KEY,
    answer_pk   INTEGER NOT NULL REFERENCES answers(pk),
    ordinal     INTEGER NOT NULL,
    source_pk   INTEGER REFERENCES sources(pk),  -- NULL for a dangling marker
    url         TEXT,
    title       TEXT,
    marker      TEXT,
    kind        TEXT NOT NULL CHECK ((kind = 'cited' OR kind = 'retrieved' OR kind = 'dangling')),
    start       INTEGER,
    "end"       INTEGER,
    quote       TEXT
);

CREATE INDEX citations_source ON citations(source_pk);

CREATE TABLE "edges" (
    pk            INTEGER PRIMARY KEY,
    claim_pk      INTEGER NOT NULL REFERENCES claims(pk),
    source_pk     INTEGER NOT NULL REFERENCES sources(pk),
    review_state  TEXT NOT NULL,
    final_code    INTEGER NOT NULL,
    n_locations   INTEGER NOT NULL
);

CREATE INDEX edges_queue ON edges(final_code, ((pk * 2654435761) % 4294967296));

CREATE VIEW current_claim_sets AS SELECT answer_pk, max(pk) AS set_pk FROM claim_sets GROUP BY answer_pk;

CREATE UNIQUE INDEX answers_id ON answers(id);

CREATE UNIQUE INDEX claims_id ON claims(id);

CREATE UNIQUE INDEX sources_key ON sources(key);

CREATE UNIQUE INDEX citations_answer_ordinal ON citations(answer_pk, ordinal);

CREATE UNIQUE INDEX edges_claim_source ON edges(claim_pk, source_pk);

CREATE INDEX edges_queue_keys ON edges(((pk * 2654435761) % 4294967296), review_state);
