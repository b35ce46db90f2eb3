"""Judgement rows: the one way a judgement is written, and reading review judgements for agreement (who rated
what, and two raters' review-stage judgements or the edges' final labels, marked with their side), which a
store offers as :class:`Ratings` (``store.ratings``)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from citeaudit.core.errors import StoreError
from citeaudit.core.model import Judgement, Label, Origin, Severity, Stage
from citeaudit.core.raters import FINAL, Rater, SidedLabel, rank_raters, rater_of
from citeaudit.core.scoring import LABELS
from citeaudit.store.connection import Access

__all__ = [
    "INSERT_JUDGEMENT",
    "INSERT_SHOWN_JUDGEMENT",
    "JUDGEMENT_COLUMNS",
    "Ratings",
    "judgement_from_row",
    "judgement_row",
    "read_human_raters",
    "read_raters",
    "read_sided_labels",
]

INSERT_JUDGEMENT = (
    "INSERT INTO judgements (edge_pk, label, reviewer, origin, stage, passage, period, reasoning, created_at, "
    "judge, judge_model, judge_version, prompt_sha256, confidence, severity, submission) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
"""Every column of a judgement row; :func:`judgement_row` gives the values."""

INSERT_SHOWN_JUDGEMENT = (
    "INSERT INTO judgements (edge_pk, label, reviewer, origin, stage, passage, period, reasoning, created_at, "
    "judge, judge_model, judge_version, prompt_sha256, confidence, severity, submission, suggestions_shown) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
"""As :data:`INSERT_JUDGEMENT`, with whether model suggestions were on the page the person judged from (the
values of :func:`judgement_row` and then ``suggestions_shown``: 1, 0 or NULL)."""


def judgement_row(edge_pk: int, judgement: Judgement, submission: str | None = None) -> tuple[object, ...]:
    """The values of :data:`INSERT_JUDGEMENT` for ``judgement`` on edge ``edge_pk`` (model provenance is NULL on a
    human judgement; the form submission id comes from the review UI only)."""
    return (
        edge_pk,
        str(judgement.label),
        judgement.reviewer,
        str(judgement.origin),
        str(judgement.stage),
        judgement.passage,
        judgement.period,
        judgement.reasoning,
        judgement.created_at,
        judgement.judge,
        judgement.judge_model,
        judgement.judge_version,
        judgement.prompt_sha256,
        judgement.confidence,
        None if judgement.severity is None else str(judgement.severity),
        submission,
    )


JUDGEMENT_COLUMNS = (
    "j.pk, j.label, j.reviewer, j.origin, j.stage, j.passage, j.period, j.reasoning, j.created_at, j.judge, "
    "j.judge_model, j.judge_version, j.prompt_sha256, j.confidence, j.severity"
)
"""What :func:`judgement_from_row` reads, in a query over ``judgements j``."""


def judgement_from_row(row: Sequence[Any]) -> Judgement:
    """The judgement in a row of :data:`JUDGEMENT_COLUMNS`."""
    pk, label, reviewer, origin, stage, passage, period, reasoning, created_at, *provenance, severity = row
    judge, judge_model, judge_version, prompt_sha256, confidence = provenance
    return Judgement(
        Label(label),
        reviewer,
        Origin(origin),
        Stage(stage),
        passage,
        period,
        reasoning,
        created_at,
        judge,
        judge_model,
        judge_version,
        prompt_sha256,
        confidence,
        _stored_severity(severity, pk),
    )


def _stored_severity(value: str | None, judgement_pk: int) -> Severity | None:
    """The severity stored with judgement ``judgement_pk``; a value that is no severity is an error naming it."""
    if value is None:
        return None
    try:
        return Severity(value)
    except ValueError:
        allowed = ", ".join(s.value for s in Severity)
        raise StoreError(f"judgement {judgement_pk} has severity {value!r}, which is not one of {allowed}") from None


# edges → claims → answers → runs (for the answer id and the protocol filter)
_PATH = "JOIN claims c ON c.pk = e.claim_pk JOIN answers a ON a.pk = c.answer_pk JOIN runs r ON r.pk = a.run_pk"
_EDGE_SCOPE = f"FROM edges e {_PATH}"
_JUDGEMENT_SCOPE = f"FROM judgements j JOIN edges e ON e.pk = j.edge_pk {_PATH}"
# edges.final_code holds the label's position in LABELS; pending and disputed codes come after them
_FINAL_LABEL = "CASE e.final_code " + " ".join(f"WHEN {i} THEN '{label}'" for i, label in enumerate(LABELS)) + " END"


def _protocol_filter(protocol_pk: int | None) -> tuple[str, list[object]]:
    # Raters are compared on current claims only: a claim a later segmentation replaced is no longer judged.
    return ("r.protocol_pk = ? AND c.current = 1", [protocol_pk]) if protocol_pk is not None else ("c.current = 1", [])


def read_retired_rated(db: sqlite3.Connection, raters: Sequence[Rater], protocol_pk: int | None) -> int:
    """Edges of retired claims that any of ``raters`` labelled (or that have a final label, for ``final``): what
    comparing raters on current claims leaves out."""
    protocol = "" if protocol_pk is None else " AND r.protocol_pk = ?"
    params: list[object] = [] if protocol_pk is None else [protocol_pk]
    conditions = []
    for rater in raters:
        if rater == FINAL:
            conditions.append(f"e.final_code < {len(LABELS)}")
        else:
            conditions.append(
                "EXISTS (SELECT 1 FROM judgements j WHERE j.edge_pk = e.pk AND j.stage = 'review' "
                "AND j.origin = ? AND j.reviewer = ?)"
            )
            params.extend([str(rater.kind), rater.name])
    if not conditions:
        return 0
    (count,) = db.execute(
        f"SELECT count(*) {_EDGE_SCOPE} WHERE c.current = 0{protocol} AND ({' OR '.join(conditions)})",
        params,
    ).fetchone()
    return int(count)


def _rater_counts(db: sqlite3.Connection, protocol_pk: int | None, origin: str | None) -> dict[Rater, int]:
    """Per rater with review-stage judgements in scope (of ``origin`` only, when given), the edges it labelled."""
    condition, params = _protocol_filter(protocol_pk)
    if origin is not None:
        condition, params = condition + " AND j.origin = ?", [*params, origin]
    return {
        rater_of(reviewer, found): int(edges)
        for found, reviewer, edges in db.execute(
            f"SELECT j.origin, j.reviewer, count(DISTINCT j.edge_pk) {_JUDGEMENT_SCOPE} "
            f"WHERE {condition} AND j.stage = 'review' AND j.reviewer IS NOT NULL GROUP BY j.origin, j.reviewer",
            params,
        )
    }


def read_human_raters(db: sqlite3.Connection, protocol_pk: int | None = None) -> list[tuple[Rater, int]]:
    """The people with review-stage judgements in scope (no model, no ``final``) and how many edges each labelled,
    most first."""
    return rank_raters(_rater_counts(db, protocol_pk, "human"))


def read_raters(db: sqlite3.Connection, protocol_pk: int | None) -> list[tuple[Rater, int]]:
    """Every rater with review-stage judgements in scope, and ``final`` when some edge has a final label, with
    how many edges each labelled, most first."""
    condition, params = _protocol_filter(protocol_pk)
    counts = _rater_counts(db, protocol_pk, None)
    (finals,) = db.execute(
        f"SELECT count(*) {_EDGE_SCOPE} WHERE {condition} AND e.final_code < {len(LABELS)}", params
    ).fetchone()
    if finals:
        counts[FINAL] = int(finals)
    return rank_raters(counts)


def _side_rows(db: sqlite3.Connection, rater: Rater, side: int, protocol_pk: int | None) -> list[SidedLabel]:
    condition, params = _protocol_filter(protocol_pk)
    if rater == FINAL:
        return db.execute(
            f"SELECT e.pk, a.id, {side}, {_FINAL_LABEL}, NULL {_EDGE_SCOPE} "
            f"WHERE {condition} AND e.final_code < {len(LABELS)} ORDER BY e.pk",
            params,
        ).fetchall()
    return db.execute(
        f"SELECT j.edge_pk, a.id, {side}, j.label, j.created_at {_JUDGEMENT_SCOPE} "
        f"WHERE {condition} AND j.stage = 'review' AND j.origin = ? AND j.reviewer = ? ORDER BY j.pk",
        [*params, str(rater.kind), rater.name],
    ).fetchall()


def read_sided_labels(
    db: sqlite3.Connection, a: Rater, b: Rater, protocol_pk: int | None
) -> tuple[list[SidedLabel], int]:
    """A's (side 0) and B's (side 1) review-stage judgements in scope, or the edges' final labels for ``final``,
    and the number of edges in scope."""
    rows = _side_rows(db, a, 0, protocol_pk) + _side_rows(db, b, 1, protocol_pk)
    condition, params = _protocol_filter(protocol_pk)
    (edges,) = db.execute(f"SELECT count(*) {_EDGE_SCOPE} WHERE {condition}", params).fetchone()
    return rows, int(edges)


class Ratings:
    """A store's raters and their review-stage labels (``store.ratings``), read for agreement."""

    def __init__(self, access: Access) -> None:
        self._access = access

    def raters(self, protocol_pk: int | None = None) -> list[tuple[Rater, int]]:
        """Raters with review-stage judgements (all protocols, or one) and how many edges each labelled."""
        return read_raters(self._access.db, protocol_pk)

    def human_raters(self, protocol_pk: int | None = None) -> list[tuple[Rater, int]]:
        """The people among :meth:`raters` (no model, no ``final``), in the same order."""
        return read_human_raters(self._access.db, protocol_pk)

    def sided_labels(self, a: Rater, b: Rater, protocol_pk: int | None = None) -> tuple[list[SidedLabel], int]:
        """The review-stage judgements of A (side 0) and B (side 1), all protocols or one, and the number of edges
        in scope (for :func:`citeaudit.core.agreement.pair_sided`)."""
        return read_sided_labels(self._access.db, a, b, protocol_pk)

    def retired_rated(self, raters: Sequence[Rater], protocol_pk: int | None = None) -> int:
        """Edges of retired claims labelled by any of ``raters``: left out when raters are compared."""
        return read_retired_rated(self._access.db, raters, protocol_pk)
