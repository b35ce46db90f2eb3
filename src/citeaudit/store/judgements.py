"""Reading review judgements for agreement: who rated what, and each chosen rater's review-stage judgements."""

from __future__ import annotations

import sqlite3

from citeaudit.agreement import Rater, SidedLabel
from citeaudit.model import Origin

__all__ = ["read_raters", "read_sided_labels"]

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


def read_sided_labels(
    db: sqlite3.Connection, a: Rater, b: Rater, protocol_pk: int | None
) -> tuple[list[SidedLabel], int]:
    """The review-stage judgements of A (side 0) and B (side 1) in scope, in insertion order, and the number of
    edges in scope."""
    condition, params = _protocol_filter(protocol_pk)
    rows: list[SidedLabel] = db.execute(
        "SELECT j.edge_pk, a.id, CASE WHEN j.origin = ? AND j.reviewer = ? THEN 0 ELSE 1 END, j.label, j.created_at "
        f"{_EDGE_SCOPE} WHERE {condition} AND j.stage = 'review' "
        "AND ((j.origin = ? AND j.reviewer = ?) OR (j.origin = ? AND j.reviewer = ?)) ORDER BY j.pk",
        [str(a.origin), a.name, *params, str(a.origin), a.name, str(b.origin), b.name],
    ).fetchall()
    (edges,) = db.execute(
        "SELECT count(*) FROM edges e JOIN claims c ON c.pk = e.claim_pk JOIN answers a ON a.pk = c.answer_pk "
        f"JOIN runs r ON r.pk = a.run_pk WHERE {condition}",
        params,
    ).fetchone()
    return rows, int(edges)
