"""What a viewer of an edge may see of other people's decisions: the one place that keeps review blind.

A reviewer sees only their own judgements and their own evidence groups; model suggestions only when the project
shows them (always with provenance). An adjudicator sees every judgement and group, with provenance, on an edge
that is disputed or adjudicated; on other edges they are a reviewer like any other. Admins see everything (they
neither review nor adjudicate). Who may record what is the review policy's business
(:mod:`citeaudit.core.review_policy`).
"""

from __future__ import annotations

from collections.abc import Sequence

from citeaudit.core.model import Origin, ReviewState
from citeaudit.store.review import Reviewer, StoredJudgement
from citeaudit.store.review_records import GroupView

__all__ = [
    "can_adjudicate",
    "sees_all",
    "shows_suggestions",
    "suggestions_on_page",
    "visible_groups",
    "visible_judgements",
]


def can_adjudicate(viewer: Reviewer, state: ReviewState) -> bool:
    """Whether ``viewer``'s role lets them record the final label of an edge in ``state`` (the policy also
    refuses an adjudicator who reviewed the edge)."""
    return viewer.role == "adjudicator" and state in (ReviewState.DISPUTED, ReviewState.ADJUDICATED)


def sees_all(viewer: Reviewer, state: ReviewState) -> bool:
    """Whether ``viewer`` sees every decision on an edge in ``state``."""
    return viewer.role == "admin" or can_adjudicate(viewer, state)


def visible_judgements(
    viewer: Reviewer, state: ReviewState, judgements: Sequence[StoredJudgement], show_model_suggestions: bool
) -> list[StoredJudgement]:
    """The judgements ``viewer`` may see on an edge in ``state``."""
    if sees_all(viewer, state):
        return list(judgements)
    return [
        j
        for j in judgements
        if (j.judgement.origin is Origin.HUMAN and j.judgement.reviewer == viewer.name)
        or (j.judgement.origin is Origin.MODEL and show_model_suggestions)
    ]


def shows_suggestions(
    viewer: Reviewer, judgements: Sequence[StoredJudgement], show_model_suggestions: bool, reviews_required: int
) -> bool:
    """Whether ``viewer`` may see the model suggestions of an edge: when the project shows them, except to a
    reviewer of an edge someone else has already reviewed under a policy of more than one review (the second
    review stays independent of the suggestion the first may have confirmed)."""
    if not show_model_suggestions:
        return False
    others = any(j.judgement.origin is Origin.HUMAN and j.judgement.reviewer != viewer.name for j in judgements)
    return not (reviews_required > 1 and others)


def suggestions_on_page(
    viewer: Reviewer,
    state: ReviewState,
    judgements: Sequence[StoredJudgement],
    show_model_suggestions: bool,
    reviews_required: int,
) -> bool:
    """Whether the edge page shows ``viewer`` at least one model suggestion: what a judgement they record from it
    stores as made with suggestions shown (or not)."""
    shown = shows_suggestions(viewer, judgements, show_model_suggestions, reviews_required)
    return any(j.judgement.origin is Origin.MODEL for j in visible_judgements(viewer, state, judgements, shown))


def visible_groups(viewer: Reviewer, state: ReviewState, groups: Sequence[GroupView]) -> list[GroupView]:
    """The evidence groups of the edge's claim that ``viewer`` may see: a group is a decision like a label."""
    if sees_all(viewer, state):
        return list(groups)
    return [g for g in groups if g.reviewer == viewer.name]
