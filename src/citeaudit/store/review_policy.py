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

This module is the one gate of every human judgement, whatever door it comes through (:data:`DOORS`): the web
forms of edges and cross pairs, ``judgements import``, ``ingest`` of an audit file and the library.
:func:`edge_judgement_refusal` (and its twin for cross pairs in :mod:`citeaudit.store.cross_pairs`) reads what the
rules need inside the writer's transaction — the reviewer's account and role (never a role the caller claims),
whether the claim is retired, the item's judgements and the policy — and :func:`judgement_refusal` applies the
rules to plain values (``ingest`` calls it on an audit file's judgements before writing them).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from citeaudit.core.errors import CiteauditError, UnknownReference
from citeaudit.core.model import Judgement, Label, Origin, ReviewState, Stage, review_outcome
from citeaudit.store.judgements import JUDGEMENT_COLUMNS, judgement_from_row
from citeaudit.store.review_records import StoredJudgement

__all__ = [
    "DOORS",
    "REVIEW_POLICIES",
    "ReviewRefused",
    "account_role",
    "adjudication_refusal",
    "claim_retirement",
    "counted_judgements",
    "edge_judgement_refusal",
    "edge_judgements",
    "judgement_refusal",
    "policy_outcome",
    "policy_reviews_required",
    "require_account",
    "review_refusal",
    "reviewers_of",
    "stored_item_refusal",
]

REVIEW_POLICIES = {"single": 1, "double": 2}
"""Review policies and how many independent human reviews each needs before an edge has a final label."""

DOORS = ("web", "cross-pair web", "judgements import", "ingest", "api")
"""The ways a human judgement enters the database, as the audit log names them (``door``)."""


class ReviewRefused(CiteauditError):
    """A review or adjudication the policy does not allow (the message says which rule)."""


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


def policy_reviews_required(db: sqlite3.Connection) -> int:
    """Independent human reviews the database's review policy needs (``single`` unless set)."""
    row = db.execute("SELECT value FROM review_settings WHERE key = 'policy'").fetchone()
    return REVIEW_POLICIES[str(row[0])] if row is not None and str(row[0]) in REVIEW_POLICIES else 1


def account_role(db: sqlite3.Connection, name: str | None) -> str | None:
    """The role of the review account called ``name`` (``None`` when there is none)."""
    if not name:
        return None
    row = db.execute("SELECT role FROM reviewers WHERE name = ?", (name,)).fetchone()
    return None if row is None else str(row[0])


def claim_retirement(db: sqlite3.Connection, claim_pk: int) -> str | None:
    """Why the claim takes no judgement: it was retired, and by which claim set of its answer (``None`` when it
    is current)."""
    claim_id, current, answer_pk = db.execute(
        "SELECT id, current, answer_pk FROM claims WHERE pk = ?", (claim_pk,)
    ).fetchone()
    if current:
        return None
    found = db.execute(
        "SELECT ordinal, action, method, version, actor, created_at FROM claim_sets WHERE answer_pk = ? "
        "ORDER BY pk DESC LIMIT 1",
        (answer_pk,),
    ).fetchone()
    if found is None:
        return f"claim {claim_id!r} was retired; it takes no judgement"
    ordinal, action, method, version, actor, created_at = found
    how = " ".join(str(part) for part in (action, method, version) if part)
    by = f" by {actor}" if actor else ""
    return (
        f"claim {claim_id!r} was retired by claim set {ordinal} of its answer ({how}{by}, {created_at}); "
        "it takes no judgement"
    )


def edge_judgements(db: sqlite3.Connection, edge_pk: int) -> list[StoredJudgement]:
    """Every judgement on the edge with its row id, oldest first."""
    return [
        StoredJudgement(int(row[0]), judgement_from_row(row))
        for row in db.execute(
            f"SELECT {JUDGEMENT_COLUMNS} FROM judgements j WHERE j.edge_pk = ? ORDER BY j.pk", (edge_pk,)
        )
    ]


def stored_item_refusal(
    db: sqlite3.Connection,
    claim_pk: int,
    existing: Sequence[StoredJudgement],
    judgement: Judgement,
    *,
    item: str = "edge",
) -> str | None:
    """Why ``judgement`` may not be recorded now on an item (an edge or a cross pair) of claim ``claim_pk``
    holding ``existing`` (``None`` when it may), read inside the writer's transaction: a retired claim, then
    :func:`judgement_refusal` with the reviewer's account and the database's policy."""
    retired = claim_retirement(db, claim_pk)
    if retired is not None:
        return retired
    return judgement_refusal(
        existing, judgement, account_role(db, judgement.reviewer), policy_reviews_required(db), item=item
    )


def edge_judgement_refusal(db: sqlite3.Connection, edge_pk: int, judgement: Judgement) -> str | None:
    """Why ``judgement`` may not be recorded on edge ``edge_pk`` now (:func:`stored_item_refusal`)."""
    (claim_pk,) = db.execute("SELECT claim_pk FROM edges WHERE pk = ?", (edge_pk,)).fetchone()
    return stored_item_refusal(db, int(claim_pk), edge_judgements(db, edge_pk), judgement)


def require_account(db: sqlite3.Connection, name: str, what: str, option: str = "--reviewer") -> str:
    """The role of the account called ``name``, who decides ``what`` (a fact mapping, a claim change, a source's
    link, an evidence group), named by ``option``: a name with no account is an
    :class:`~citeaudit.core.errors.UnknownReference`, since the record would name no one."""
    role = account_role(db, name)
    if role is None:
        raise UnknownReference(
            what, option, f"{name!r} is no review account; add it with `citeaudit reviewer add` first"
        )
    return role
