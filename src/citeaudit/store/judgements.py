"""Reading review judgements for agreement: who rated what, and each chosen rater's review-stage judgements."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from citeaudit.agreement import RatedJudgement, Rater
from citeaudit.model import Label, Origin

__all__ = ["read_rated_judgements", "read_raters"]

# judgements → edges → claims → answers → runs, optionally restricted to one protocol
_EDGE_SCOPE = (
    "FROM judgements j JOIN edges e ON e.pk = j.edge_pk JOIN claims c ON c.pk = e.claim_pk "
    "JOIN answers a ON a.pk = c.answer_pk JOIN runs r ON r.pk = a.run_pk"
)


def _protocol_filter(protocol_pk: int | None) -> tuple[str, list[object]]:
    return ("r.protocol_pk = ?", [protocol_pk]) if protocol_pk is not None else ("1", [])


def read_raters(db: sqlite3.Connection, protocol_pk: int | None) -> list[tuple[Rater, int]]:
    """Every rater with review-stage judgements in scope and how many edges each labelled, most first."""
    condition, params = _protocol_filter(protocol_pk)
    rows = db.execute(
        f"SELECT j.origin, j.reviewer, count(DISTINCT j.edge_pk) AS edges {_EDGE_SCOPE} "
        f"WHERE {condition} AND j.stage = 'review' AND j.reviewer IS NOT NULL "
        "GROUP BY j.origin, j.reviewer ORDER BY edges DESC, j.origin, j.reviewer",
        params,
    ).fetchall()
    return [(Rater(reviewer, Origin(origin)), int(edges)) for origin, reviewer, edges in rows]


def read_rated_judgements(
    db: sqlite3.Connection, raters: Sequence[Rater], protocol_pk: int | None
) -> tuple[list[RatedJudgement], int]:
    """The review-stage judgements of ``raters`` in scope (in insertion order), and the number of edges in
    scope."""
    condition, params = _protocol_filter(protocol_pk)
    chosen = " OR ".join("(j.origin = ? AND j.reviewer = ?)" for _ in raters)
    for rater in raters:
        params = [*params, str(rater.origin), rater.name]
    by_rater = {(str(r.origin), r.name): r for r in raters}
    rows = [
        RatedJudgement(edge_pk, answer_id, by_rater[(origin, reviewer)], Label(label), created_at)
        for edge_pk, answer_id, origin, reviewer, label, created_at in db.execute(
            f"SELECT j.edge_pk, a.id, j.origin, j.reviewer, j.label, j.created_at {_EDGE_SCOPE} "
            f"WHERE {condition} AND j.stage = 'review' AND ({chosen}) ORDER BY j.pk",
            params,
        )
    ]
    condition, params = _protocol_filter(protocol_pk)
    (edges,) = db.execute(
        "SELECT count(*) FROM edges e JOIN claims c ON c.pk = e.claim_pk JOIN answers a ON a.pk = c.answer_pk "
        f"JOIN runs r ON r.pk = a.run_pk WHERE {condition}",
        params,
    ).fetchone()
    return rows, int(edges)
