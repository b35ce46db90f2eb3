"""Schema versions 9 to 18 that are SQL scripts: retrieval reasons, the judgement move guard, model suggestions
with their passages, cross pairs, engine response ids, reviewer progress and review assistance. The two
migrations between them that change CHECK constraints are table rebuilds (:mod:`citeaudit.store.migrations.rebuild`).
Released: never edit one, append a new migration."""

from __future__ import annotations

__all__ = [
    "CROSS_PAIRS",
    "JUDGEMENT_MOVE_GUARD",
    "RESPONSE_IDS",
    "RETRIEVAL_REASON",
    "REVIEWER_PROGRESS",
    "REVIEW_ASSISTANCE",
    "REVIEW_ASSISTANCE_INDEX",
    "REVIEW_LEASES",
    "SHARED_INDEXES",
    "SUGGESTED_PASSAGES",
]

RETRIEVAL_REASON = """
-- Why an answer's retrieval failed or is unknown (e.g. the search tool's error code).
ALTER TABLE answers ADD COLUMN retrieval_reason TEXT;
"""

JUDGEMENT_MOVE_GUARD = """
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

SUGGESTED_PASSAGES = """
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

CROSS_PAIRS = """
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

RESPONSE_IDS = """
-- The engine's own id of the response an answer came from (OpenAI's resp_…, Anthropic's msg_…, Gemini's
-- responseId…), when the payload gives one: the way back to the engine's records.
ALTER TABLE answers ADD COLUMN response_id TEXT;

-- Collections as a dimension of scores: an answer's collection is found by its id.
CREATE INDEX collection_tasks_answer ON collection_tasks(answer_id);
"""

REVIEWER_PROGRESS = """
-- A reviewer's own judgements by name: their progress (done / assigned) counts them without reading everyone's.
CREATE INDEX judgements_reviewer ON judgements(reviewer, edge_pk);
-- The engine's quotes of a source, shown on the edge page before the source has a snapshot.
CREATE INDEX citations_source ON citations(source_pk);
"""

REVIEW_ASSISTANCE = """
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

REVIEW_ASSISTANCE_INDEX = """
-- The few judgements made with suggestions shown, found without reading the others: scoring asks whether a scope
-- holds one every time it fingerprints (a full scan took 26 s over 7.2 million judgements).
CREATE INDEX judgements_assisted ON judgements(edge_pk) WHERE suggestions_shown = 1;
"""

REVIEW_LEASES = """
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

SHARED_INDEXES = """
-- The queue's walk over every edge and its walk by review state share one index: the queue key, then the state,
-- which a walk filtered by state reads from the index entry itself (a row is read only for an edge it lists).
DROP INDEX edges_queue_state;
DROP INDEX edges_queue_all;
CREATE INDEX edges_queue_keys ON edges(((pk * 2654435761) % 4294967296), review_state);
-- Indexes whose columns lead another index of their table: every search they served, the longer one serves.
DROP INDEX answers_run;
DROP INDEX claims_answer;
DROP INDEX claim_sets_answer;
DROP INDEX judgements_edge;
-- Each index fewer is one less to keep up as rows are written and to make after an import's rows: the indexes made
-- after the last row of 20 000 answers took about a tenth of a second less (docs/performance.md).
"""
