"""The triage: a batch page of the edges ``suggest --triage`` offered (a check's conflict, or a passage the
relevance judge rates irrelevant), each with its claim, best passage and reason, to confirm or open.

A confirmation is a human judgement recorded through the same store call as the edge page's form (so the review
policy's rules apply), with the suggestion it confirmed in its rationale and audit-log row. Nothing is recorded
without a person's post. The page lists only edges no person has judged yet, so under double review the second
reviewer never meets the suggestion here, and the edge page hides it from them too
(:func:`citeaudit.review.blind.shows_suggestions`). The triage is off while the project hides model suggestions.
"""

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import Response

from citeaudit.core.errors import ReviewRefused
from citeaudit.core.model import Judgement, Origin, Stage
from citeaudit.judges.triage import TriageReason
from citeaudit.review.auth import new_token
from citeaudit.review.pages import Current, Db, Denied, check_csrf, context, page, redirect, require
from citeaudit.store import Store
from citeaudit.store.review import now
from citeaudit.store.triage import triage_offer, triage_offers

__all__ = ["router"]

router = APIRouter()

_REASONS = tuple(reason.value for reason in TriageReason)


def _reason(request: Request) -> str | None:
    reason = request.query_params.get("reason") or None
    if reason is not None and reason not in _REASONS:
        raise Denied(400, f"reason {reason!r} is not one of {', '.join(_REASONS)}")
    return reason


@router.get("/triage")
def triage_page(request: Request, db: Db, current: Current) -> Response:
    """The offers not yet judged by anyone, one form per offer."""
    reviewer = require(current, "reviewer", "adjudicator")
    reason = _reason(request)
    shown = db.accounts.settings()["show_model_suggestions"] == "true"
    offers = []
    if shown:
        with Store(context(request).config.db) as store:
            offers = triage_offers(store.connection, reason)
    return page(
        request,
        "triage.html.j2",
        user=reviewer,
        csrf=current.csrf,
        shown=shown,
        offers=[(offer, new_token()) for offer in offers],
        reason=reason,
        reasons=_REASONS,
    )


@router.post("/triage/{edge_pk}/confirm")
def confirm(
    request: Request,
    edge_pk: int,
    db: Db,
    current: Current,
    suggestion: Annotated[int, Form()],
    submission: Annotated[str, Form()],
    csrf: Annotated[str, Form()] = "",
    reason: Annotated[str, Form()] = "",
) -> Response:
    """Record the reviewer's confirmation of the offered label as their own review, then back to the triage."""
    check_csrf(current, csrf)
    reviewer = require(current, "reviewer", "adjudicator")
    if db.accounts.settings()["show_model_suggestions"] != "true":
        raise Denied(403, "the triage is off: the project hides model suggestions")
    with Store(context(request).config.db) as store:
        offer = triage_offer(store.connection, edge_pk)
    if offer is None:
        raise Denied(409, f"edge {edge_pk} is not offered in the triage (someone judged it, or it has no suggestion)")
    if offer.suggestion_pk != suggestion:
        raise Denied(409, f"edge {edge_pk}'s suggestion changed since the page was shown; reload the triage")
    judgement = Judgement(
        offer.label,
        reviewer.name,
        Origin.HUMAN,
        Stage.REVIEW,
        offer.passage,
        None,
        f"confirmed triage suggestion #{offer.suggestion_pk} ({offer.reason}: {offer.detail})",
        now(),
    )
    try:
        db.judgements.record_judgement(
            edge_pk,
            judgement,
            submission,
            door="web",
            detail={"confirmed_suggestion": offer.suggestion_pk, "triage_reason": offer.reason},
            # the triage page shows the suggestion it confirms
            suggestions_shown=True,
        )
    except ReviewRefused as refused:
        raise Denied(409, str(refused)) from None
    return redirect(f"/triage?reason={reason}" if reason in _REASONS else "/triage")
