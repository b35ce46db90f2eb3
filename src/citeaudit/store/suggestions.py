"""SQL for model suggestions: which edges still need one, the snapshot passages a judge reads, recording a
suggestion (its model judgement, the ranked passages and an audit-log row) and reading them back.

A suggestion never touches ``edges.review_state`` or ``edges.final_code``: those follow human judgements only
(:func:`citeaudit.core.model.review_outcome`), so nothing here recomputes them. Each function takes a connection;
writers run inside the caller's transaction.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from citeaudit.core.clock import utc_now
from citeaudit.core.errors import ReviewRefused
from citeaudit.core.model import Judgement, Origin
from citeaudit.core.scoring import LABELS
from citeaudit.store.judgements import INSERT_JUDGEMENT, judgement_row

__all__ = [
    "EdgeToSuggest",
    "GoldEdge",
    "PassageRow",
    "StoredPassage",
    "document_passages",
    "edges_to_suggest",
    "gold_edges",
    "has_suggestion",
    "latest_passages",
    "record_suggestion",
    "retired_to_suggest",
    "review_raters",
    "run_exists",
]

# edges → claims → answers → runs / questions
_PATH = (
    "FROM edges e JOIN claims c ON c.pk = e.claim_pk JOIN answers a ON a.pk = c.answer_pk "
    "JOIN runs r ON r.pk = a.run_pk JOIN questions q ON q.pk = a.question_pk"
)
# the document of the source's latest fetch that read one (the snapshot `source passages` shows)
_SNAPSHOT = (
    "(SELECT f.document_sha256 FROM fetches f WHERE f.source_pk = e.source_pk "
    "AND f.document_sha256 IS NOT NULL ORDER BY f.pk DESC LIMIT 1)"
)


@dataclass(frozen=True, slots=True)
class EdgeToSuggest:
    """An edge without a final label, with what the judge needs."""

    pk: int
    """Edge row id."""
    claim_id: str
    """Claim id."""
    claim: str
    """Claim text."""
    locale: str
    """Locale of the answer (its run's, else ``en``)."""
    question_id: str
    """Question id (the resampling cluster of the bias battery)."""
    document_sha256: str | None
    """The source's latest snapshot, ``None`` when the source was never read."""


@dataclass(frozen=True, slots=True)
class GoldEdge:
    """An edge the gold reviewer labelled, with the label of their latest review-stage judgement."""

    edge: EdgeToSuggest
    """The edge."""
    gold: str
    """The gold label."""
    answer_id: str
    """Answer of the edge's claim (the agreement bootstrap cluster)."""


@dataclass(frozen=True, slots=True)
class PassageRow:
    """One passage of a document: ``text[start:end]``."""

    ordinal: int
    """Position in the document's passages."""
    start: int
    """Start offset."""
    end: int
    """End offset (exclusive)."""


@dataclass(frozen=True, slots=True)
class StoredPassage:
    """A passage a judge was shown, as stored: rank, score, method and offsets into the snapshot text."""

    rank: int
    """1 for the best passage."""
    ordinal: int
    """Position in the document's passages."""
    start: int
    """Start offset in the snapshot text."""
    end: int
    """End offset (exclusive)."""
    score: float
    """Score under ``method``."""
    method: str
    """How the passages were ranked: a ``RankMethod`` value (``window``, ``bm25``, ...)."""
    text: str
    """The passage: the snapshot text from ``start`` to ``end``."""


def _edge_rows(db: sqlite3.Connection, where: str, params: Sequence[object]) -> list[tuple[object, ...]]:
    return db.execute(
        f"SELECT e.pk, c.id, c.text, COALESCE(a.locale, r.locale, q.locale, 'en'), q.id, {_SNAPSHOT}, a.id "
        f"{_PATH} WHERE {where} ORDER BY e.pk",
        params,
    ).fetchall()


def _edge(row: tuple[object, ...]) -> EdgeToSuggest:
    pk, claim_id, claim, locale, question_id, sha = row[:6]
    return EdgeToSuggest(
        int(str(pk)), str(claim_id), str(claim), str(locale), str(question_id), None if sha is None else str(sha)
    )


def edges_to_suggest(db: sqlite3.Connection, run: str | None = None) -> list[EdgeToSuggest]:
    """Edges of current claims without a final label (pending or disputed), in edge order; ``run`` narrows to one
    run id."""
    where, params = f"e.final_code >= {len(LABELS)} AND c.current = 1", []
    if run is not None:
        where, params = f"{where} AND r.id = ?", [run]
    return [_edge(row) for row in _edge_rows(db, where, params)]


def retired_to_suggest(db: sqlite3.Connection, run: str | None = None) -> int:
    """Edges without a final label whose claims a later segmentation retired: left out of :func:`edges_to_suggest`
    and counted so that the report says so."""
    where, params = f"e.final_code >= {len(LABELS)} AND c.current = 0", []
    if run is not None:
        where, params = f"{where} AND r.id = ?", [run]
    (count,) = db.execute(f"SELECT count(*) {_PATH} WHERE {where}", params).fetchone()
    return int(count)


def gold_edges(db: sqlite3.Connection, reviewer: str) -> list[GoldEdge]:
    """Edges with a review-stage human judgement by ``reviewer`` and the label of their latest one (by time, then
    row order), in edge order."""
    rows = _edge_rows(
        db,
        "EXISTS (SELECT 1 FROM judgements j WHERE j.edge_pk = e.pk AND j.origin = 'human' AND j.stage = 'review' "
        "AND j.reviewer = ?)",
        [reviewer],
    )
    found = []
    for row in rows:
        (label,) = db.execute(
            "SELECT label FROM judgements WHERE edge_pk = ? AND origin = 'human' AND stage = 'review' "
            "AND reviewer = ? ORDER BY created_at DESC, pk DESC LIMIT 1",
            (row[0], reviewer),
        ).fetchone()
        found.append(GoldEdge(_edge(row), str(label), str(row[6])))
    return found


def has_suggestion(
    db: sqlite3.Connection,
    edge_pk: int,
    judge: str,
    model: str | None,
    version: str,
    prompt_sha256: str | None,
) -> bool:
    """Whether the edge has a suggestion from this judge (same name, model, version and prompt hash)."""
    return (
        db.execute(
            "SELECT 1 FROM suggestions s JOIN judgements j ON j.pk = s.judgement_pk WHERE s.edge_pk = ? "
            "AND j.judge = ? AND j.judge_model IS ? AND j.judge_version = ? AND j.prompt_sha256 IS ? LIMIT 1",
            (edge_pk, judge, model, version, prompt_sha256),
        ).fetchone()
        is not None
    )


def document_passages(db: sqlite3.Connection, sha256: str) -> tuple[str, list[PassageRow]]:
    """A document's text and its passages in order."""
    (text,) = db.execute("SELECT text FROM documents WHERE sha256 = ?", (sha256,)).fetchone()
    return str(text), [
        PassageRow(int(ordinal), int(start), int(end))
        for ordinal, start, end in db.execute(
            'SELECT ordinal, start, "end" FROM passages WHERE document_sha256 = ? ORDER BY ordinal', (sha256,)
        )
    ]


def record_suggestion(
    db: sqlite3.Connection,
    edge_pk: int,
    document_sha256: str,
    method: str,
    passages: Sequence[tuple[int, int, int, int, float, float | None, float | None]],
    judgement: Judgement,
) -> int:
    """Store a model judgement with its provenance, the suggestion row and its ranked passages
    ``(rank, ordinal, start, end, score, bm25, dense)``, and an audit-log row; returns the suggestion's pk."""
    if judgement.origin is not Origin.MODEL:
        # a person's judgement goes through the review rules (ReviewStore.judgements.record_judgement), never here
        raise ReviewRefused(f"edge {edge_pk}: a suggestion is a model's judgement, not {judgement.reviewer!r}'s")
    if judgement.created_at is None:
        judgement = dataclasses.replace(judgement, created_at=utc_now("microseconds"))
    judgement_pk = db.execute(INSERT_JUDGEMENT, judgement_row(edge_pk, judgement)).lastrowid
    at = utc_now("microseconds")
    suggestion_pk = db.execute(
        "INSERT INTO suggestions (edge_pk, judgement_pk, document_sha256, method, created_at) VALUES (?, ?, ?, ?, ?)",
        (edge_pk, judgement_pk, document_sha256, method, at),
    ).lastrowid
    assert suggestion_pk is not None
    db.executemany(
        'INSERT INTO suggested_passages (suggestion_pk, rank, ordinal, start, "end", score, bm25, dense) '
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [(suggestion_pk, *row) for row in passages],
    )
    db.execute(
        "INSERT INTO audit_log (at, actor, action, target, before, after) VALUES (?, ?, 'suggestion', ?, NULL, ?)",
        (
            at,
            judgement.reviewer or "",
            f"edge:{edge_pk}",
            json.dumps(
                {"judgement": judgement_pk, "label": str(judgement.label), "method": method, "passages": len(passages)},
                sort_keys=True,
            ),
        ),
    )
    return int(suggestion_pk)


def latest_passages(db: sqlite3.Connection, edge_pk: int) -> list[StoredPassage]:
    """The ranked passages of the edge's latest suggestion, best first (empty when it has none)."""
    row = db.execute(
        "SELECT s.pk, s.method, d.text FROM suggestions s JOIN documents d ON d.sha256 = s.document_sha256 "
        "WHERE s.edge_pk = ? ORDER BY s.pk DESC LIMIT 1",
        (edge_pk,),
    ).fetchone()
    if row is None:
        return []
    suggestion_pk, method, text = row
    return [
        StoredPassage(rank, ordinal, start, end, score, method, text[start:end])
        for rank, ordinal, start, end, score in db.execute(
            'SELECT rank, ordinal, start, "end", score FROM suggested_passages WHERE suggestion_pk = ? ORDER BY rank',
            (suggestion_pk,),
        )
    ]


def run_exists(db: sqlite3.Connection, run: str) -> bool:
    """Whether the database holds a run with id ``run``."""
    return db.execute("SELECT 1 FROM runs WHERE id = ?", (run,)).fetchone() is not None


def review_raters(db: sqlite3.Connection) -> list[str]:
    """Reviewers with at least one human review-stage judgement, by name."""
    return [
        str(name)
        for (name,) in db.execute(
            "SELECT DISTINCT reviewer FROM judgements WHERE origin = 'human' AND stage = 'review' "
            "AND reviewer IS NOT NULL ORDER BY reviewer"
        )
    ]
