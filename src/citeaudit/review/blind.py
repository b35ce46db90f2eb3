"""Which judgements a viewer of an edge may see: the one place that keeps review blind.

A reviewer sees only their own judgements; model suggestions only when the project shows them, and only before
the reviewer has judged or when the suggestions are their reference (always with provenance). An adjudicator
sees every judgement, with provenance, on an edge that is disputed or adjudicated; on other edges they are a
reviewer like any other. Admins see everything (they do not review).
"""

from __future__ import annotations

from collections.abc import Sequence

from citeaudit.model import Origin, ReviewState
from citeaudit.store.review import Reviewer, StoredJudgement

__all__ = ["can_adjudicate", "visible_judgements"]


def can_adjudicate(viewer: Reviewer, state: ReviewState) -> bool:
    """Whether ``viewer`` may record the final label of an edge in ``state``."""
    return viewer.role in ("adjudicator", "admin") and state in (ReviewState.DISPUTED, ReviewState.ADJUDICATED)


def visible_judgements(
    viewer: Reviewer, state: ReviewState, judgements: Sequence[StoredJudgement], show_model_suggestions: bool
) -> list[StoredJudgement]:
    """The judgements ``viewer`` may see on an edge in ``state``."""
    if viewer.role == "admin" or can_adjudicate(viewer, state):
        return list(judgements)
    return [
        j
        for j in judgements
        if (j.judgement.origin is Origin.HUMAN and j.judgement.reviewer == viewer.name)
        or (j.judgement.origin is Origin.MODEL and show_model_suggestions)
    ]
