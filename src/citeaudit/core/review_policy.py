"""The rules of a review policy over one item's judgements: which reviewers take part, which of their judgements
decide its state, and who may still review or adjudicate it. The items are edges and cross pairs, judged under
the same rules; the functions take plain values (judgements with their row ids, the state, the role), so each
store calls them inside its own write transaction. The wording below speaks of edges.

Under a policy needing ``n`` independent reviews, the first ``n`` reviewers to label an edge are its reviewers and
nobody else may review it (the overlap limit). With ``n`` > 1 their labels are fixed when the ``n``-th reviewer
submits: a reviewer's later change is recorded but never decides the edge, so a dispute ends only by an
adjudication. With ``n`` = 1 the one reviewer may revise their label, which then counts.

An adjudication is recorded only by an adjudicator who did not review the edge, and only on a disputed (or already
adjudicated) edge. Admins manage the project; they neither review nor adjudicate.

These rules are the one gate of every human judgement, whatever door it comes through (:data:`DOORS`): the web
forms of edges and cross pairs, ``judgements import``, ``ingest`` of an audit file and the library.
:func:`judgement_refusal` applies them to plain values (``ingest`` calls it on an audit file's judgements before
writing them); :mod:`citeaudit.store.review_rules` reads what they need inside the writer's transaction — the
reviewer's account and role (never a role the caller claims), whether the claim is retired, the item's judgements
and the policy. What they refuse is a :class:`~citeaudit.core.errors.ReviewRefused`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from citeaudit.core.model import Judgement, Label, Origin, ReviewState, Stage, review_outcome

__all__ = [
    "DOORS",
    "REVIEW_POLICIES",
    "StoredJudgement",
    "adjudication_refusal",
    "counted_judgements",
    "judgement_refusal",
    "policy_outcome",
    "review_refusal",
    "reviewers_of",
]

REVIEW_POLICIES = {"single": 1, "double": 2}
"""Review policies and how many independent human reviews each needs before an edge has a final label."""

DOORS = ("web", "cross-pair web", "judgements import", "ingest", "api")
"""The ways a human judgement enters the database, as the audit log names them (``door``)."""


@dataclass(frozen=True, slots=True)
class StoredJudgement:
    """A judgement row with its id (the rules order reviews by it)."""

    pk: int
    """Row id."""
    judgement: Judgement
    """The judgement."""


def _reviews(judgements: Sequence[StoredJudgement]) -> list[StoredJudgement]:
    return [j for j in judgements if j.judgement.origin is Origin.HUMAN and j.judgement.stage is Stage.REVIEW]


def reviewers_of(judgements: Sequence[StoredJudgement], reviews_required: int) -> list[str]:
    """The edge's reviewers under the policy: the first ``reviews_required`` people to review it, in order."""
    found: list[str] = []
    for stored in sorted(_reviews(judgements), key=lambda j: j.pk):
        name = stored.judgement.reviewer or ""
        if name not in found:
            found.append(name)
    return found[:reviews_required] if reviews_required > 1 else found


def counted_judgements(judgements: Sequence[StoredJudgement], reviews_required: int) -> list[Judgement]:
    """The judgements that decide the edge's state: every adjudication, and the reviews of its reviewers made
    before (and including) the review that completed the set; a later change is left out."""
    adjudications = [
        j.judgement
        for j in judgements
        if j.judgement.origin is Origin.HUMAN and j.judgement.stage is Stage.ADJUDICATION
    ]
    if reviews_required <= 1:
        return [j.judgement for j in _reviews(judgements)] + adjudications
    reviewers = reviewers_of(judgements, reviews_required)
    reviews = sorted(_reviews(judgements), key=lambda j: j.pk)
    cutoff: int | None = None
    if len(reviewers) == reviews_required:
        last = reviewers[-1]
        cutoff = next(j.pk for j in reviews if (j.judgement.reviewer or "") == last)
    counted = [
        j.judgement for j in reviews if (j.judgement.reviewer or "") in reviewers and (cutoff is None or j.pk <= cutoff)
    ]
    return counted + adjudications


def policy_outcome(judgements: Sequence[StoredJudgement], reviews_required: int) -> tuple[ReviewState, Label | None]:
    """The state and final label the policy gives: :func:`citeaudit.core.model.review_outcome` of the
    :func:`counted_judgements` alone, so a reviewer's later change never closes a dispute."""
    return review_outcome(counted_judgements(judgements, reviews_required), reviews_required)


def review_refusal(
    judgements: Sequence[StoredJudgement],
    reviewer: str,
    role: str,
    state: ReviewState,
    reviews_required: int,
    *,
    item: str = "edge",
) -> str | None:
    """Why ``reviewer`` may not record a review on the edge now (``None`` when they may). ``item`` names what is
    judged in the message (``edge`` or ``cross pair``)."""
    if role == "admin":
        return "admins manage the project; they do not review"
    if (
        state in (ReviewState.DISPUTED, ReviewState.ADJUDICATED)
        and role == "adjudicator"
        and not any((j.judgement.reviewer or "") == reviewer for j in _reviews(judgements))
    ):
        return f"this {item} is {state}: record an adjudication instead of a review"
    reviewers = reviewers_of(judgements, reviews_required)
    if reviewer not in reviewers and len(reviewers) >= reviews_required:
        return (
            f"this {item} already has its {reviews_required} independent review(s) under the "
            f"{'single' if reviews_required == 1 else 'double'} policy; it is not yours to review"
        )
    return None


def adjudication_refusal(
    judgements: Sequence[StoredJudgement], reviewer: str, role: str, state: ReviewState, *, item: str = "edge"
) -> str | None:
    """Why ``reviewer`` may not record the final label of the edge now (``None`` when they may); ``item`` as for
    :func:`review_refusal`."""
    if role != "adjudicator":
        return "only adjudicator accounts adjudicate"
    if state not in (ReviewState.DISPUTED, ReviewState.ADJUDICATED):
        return f"only disputed {item}s are adjudicated; this one is {state}"
    if any((j.judgement.reviewer or "") == reviewer for j in _reviews(judgements)):
        return f"you reviewed this {item}: another adjudicator settles its dispute"
    return None


def judgement_refusal(
    existing: Sequence[StoredJudgement],
    judgement: Judgement,
    role: str | None,
    reviews_required: int,
    *,
    item: str = "edge",
) -> str | None:
    """Why ``judgement`` may not be recorded on an item holding ``existing`` (``None`` when it may): the rules
    for every door. ``role`` is the role of the account named by the judgement's reviewer, ``None`` when no
    account has that name; the item's state is the one the policy gives its judgements."""
    if judgement.origin is not Origin.HUMAN:
        return "only a person's judgement is recorded here; model suggestions come from `citeaudit suggest`"
    name = judgement.reviewer or ""
    if role is None:
        if not name:
            return "a judgement names its reviewer (a review account)"
        return f"{name!r} is no review account; add it with `citeaudit reviewer add`"
    # Only an adjudicator's judgement depends on the item's state: it is worked out for them alone (an import
    # checks every judgement of a file, most of them reviewers').
    state = policy_outcome(existing, reviews_required)[0] if role == "adjudicator" else ReviewState.PENDING
    if judgement.stage is Stage.ADJUDICATION:
        return adjudication_refusal(existing, name, role, state, item=item)
    return review_refusal(existing, name, role, state, reviews_required, item=item)
