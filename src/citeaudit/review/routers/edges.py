"""An edge: its page (the claim in its answer, the source's passages, the viewer's own judgements and what
else they may see), its review and adjudication, and a link given to a title-only source."""

from contextlib import suppress
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Annotated
from urllib.parse import parse_qsl

from fastapi import APIRouter, Form, Request
from fastapi.responses import Response

from citeaudit.core.clock import iso
from citeaudit.core.errors import DatabaseBusy, ReviewRefused
from citeaudit.core.model import Judgement, Label, Origin, Severity, Stage
from citeaudit.core.review_policy import StoredJudgement, reviewers_of
from citeaudit.review.auth import new_token
from citeaudit.review.blind import (
    sees_all,
    shows_suggestions,
    suggestions_on_page,
    visible_groups,
    visible_judgements,
)
from citeaudit.review.pages import (
    LABEL_DEFINITIONS,
    Current,
    Db,
    Denied,
    Session,
    check_csrf,
    context,
    edge_or_404,
    highlight,
    label_of,
    leases_of,
    local_path,
    page,
    queue_query,
    queue_query_text,
    redirect,
    require,
    safe_href,
    severity_of,
    text_or_none,
)
from citeaudit.review.routers.queue import Refused, queue_page
from citeaudit.sources.copy_groups import Conflict, conflicts
from citeaudit.store import Store
from citeaudit.store.copies import ClaimSupport, SupportRow, claim_support, fact_support
from citeaudit.store.review import Reviewer, ReviewStore, code_label, now

__all__ = ["EvidenceView", "evidence_view", "reviews_in_dispute", "router"]

router = APIRouter()

SKIP_NOTE_LIMIT = 2000
"""The longest note a skip keeps, in characters."""


@dataclass(frozen=True, slots=True)
class EvidenceView:
    """Independent support and the conflict (if any) of one claim, for those who see every label."""

    support: ClaimSupport | None
    fact: SupportRow | None
    conflict: Conflict | None


def evidence_view(db: Path, claim_id: str) -> EvidenceView:
    """Copy-group support and supported-vs-conflicting sources of ``claim_id``."""
    with Store(db) as store:
        support = claim_support(store, [claim_id]).get(claim_id)
        fact = fact_support(store, claim_id)
        conflict = next(iter(conflicts(store, claim_id)), None)
    return EvidenceView(support, fact, conflict)


def reviews_in_dispute(shown: list[StoredJudgement]) -> list[StoredJudgement]:
    """Each reviewer's current review among ``shown`` (their latest, as a revision replaces the one before), in
    the order the reviewers first labelled the edge: what an adjudicator decides between."""
    latest: dict[str, StoredJudgement] = {}
    for stored in shown:
        judgement = stored.judgement
        if judgement.origin is Origin.HUMAN and judgement.stage is Stage.REVIEW and judgement.reviewer:
            latest[judgement.reviewer] = stored
    return list(latest.values())


@router.get("/edges/{edge_pk}")
def edge_page(request: Request, edge_pk: int, db: Db, current: Current) -> Response:
    """The edge page; what of the edge's judgements the viewer sees is decided by the blind-review rules."""
    reviewer = require(current, "reviewer", "adjudicator", "admin")
    edge = edge_or_404(db, edge_pk)
    settings = db.accounts.settings()
    judgements = db.judgements.of_edge(edge_pk)
    show_models = shows_suggestions(
        reviewer, judgements, settings["show_model_suggestions"] == "true", db.accounts.reviews_required()
    )
    shown = visible_judgements(reviewer, edge.review_state, judgements, show_models)
    adjudication_refusal = db.judgements.refusal(edge_pk, reviewer, Stage.ADJUDICATION)
    adjudicating = adjudication_refusal is None
    review_refusal = None if adjudicating else db.judgements.refusal(edge_pk, reviewer, Stage.REVIEW)
    seen_all = sees_all(reviewer, edge.review_state)
    query = queue_query(request.query_params)
    required = db.accounts.reviews_required()
    own_reviews = any(j.judgement.origin is Origin.HUMAN and j.judgement.reviewer == reviewer.name for j in judgements)
    leases = leases_of(request, db)
    # the open page of an edge still to judge holds (or takes) the viewer's lease on it; renewed while it stays open
    to_judge = adjudicating or (not adjudicating and review_refusal is None and not own_reviews)
    held = _hold(request, db, reviewer, edge_pk, adjudicating) if to_judge else None
    # a revision under double review after the set of reviews is complete is recorded, but never decides the edge
    late_change = own_reviews and required > 1 and len(reviewers_of(judgements, required)) >= required
    return page(
        request,
        "edge.html.j2",
        user=reviewer,
        csrf=current.csrf,
        edge=edge,
        highlight=highlight(edge.answer_text, edge.claim_text, edge.claim_start, edge.claim_end),
        passages=db.evidence.passages(edge.source_pk),
        ranked_passages=db.evidence.suggested_passages(edge_pk),
        attachments=db.evidence.url_attachments(edge.source_pk),
        own=[j for j in shown if j.judgement.origin is Origin.HUMAN and j.judgement.reviewer == reviewer.name],
        suggestions=[j for j in shown if j.judgement.origin is Origin.MODEL],
        others=[j for j in shown if j.judgement.origin is Origin.HUMAN and j.judgement.reviewer != reviewer.name],
        show_state=seen_all,
        final_label=code_label(edge.final_code) if seen_all else None,
        adjudicating=adjudicating,
        dispute=reviews_in_dispute(shown) if adjudicating else [],
        may_review=not adjudicating and review_refusal is None,
        refusal=review_refusal if reviewer.role != "adjudicator" or not seen_all else adjudication_refusal,
        queue_query=query,
        progress=db.queue.progress(reviewer) if reviewer.role != "admin" else None,
        labels=[label.value for label in Label],
        label_definitions=LABEL_DEFINITIONS,
        submission=new_token(),
        claim_sources=db.evidence.claim_sources(edge.claim_pk),
        # Other edges' final labels show through these counts: only for those who may see every label.
        evidence_view=evidence_view(context(request).config.db, edge.claim_id) if seen_all else None,
        groups=visible_groups(reviewer, edge.review_state, db.evidence.groups(edge.claim_pk)),
        policy=settings["policy"],
        lease=held,
        reserved=to_judge and held is False,
        may_skip=to_judge,
        last_label=leases.last_label(reviewer) if reviewer.role != "admin" else None,
        revising=request.query_params.get("revise") == "1" and own_reviews,
        late_change=late_change,
    )


def _hold(request: Request, db: ReviewStore, reviewer: Reviewer, edge_pk: int, adjudicating: bool) -> bool | None:
    """Whether the viewer holds the edge's lease after opening its page (taken now when there is room); ``None``
    when leases are off or the viewer is an admin."""
    if not context(request).config.leases or reviewer.role == "admin":
        return None
    stage = Stage.ADJUDICATION if adjudicating else Stage.REVIEW
    config = context(request).config
    leases = leases_of(request, db)
    held = leases.holds(reviewer, edge_pk)
    # a lease with more than half its term left (just taken by the queue's next edge) is not written again
    if held is not None and held > iso(config.clock() + timedelta(seconds=config.lease_seconds / 2)):
        return True
    try:
        return leases.take(reviewer, [edge_pk], stage, db.accounts.reviews_required()) is not None
    except DatabaseBusy:  # an import holds the database: the page is served without a lease
        return None


def _release(request: Request, db: ReviewStore, reviewer: Reviewer, edge_pk: int) -> None:
    """Give up the viewer's lease on the edge when they are done with it; while an import holds the database the
    lease is left to lapse (the judgement is what counts, and it is recorded)."""
    with suppress(DatabaseBusy):
        leases_of(request, db).release(reviewer, edge_pk)


@dataclass(frozen=True, slots=True)
class _Form:
    """A judgement as a form sends it."""

    label: str
    submission: str
    csrf: str
    passage: str
    period: str
    reasoning: str
    severity: str = ""
    queue: str = ""
    passage_offsets: str = ""


def _record(
    request: Request, db: ReviewStore, current: Session, edge_pk: int, stage: Stage, form: _Form, done: str
) -> Response:
    """The one path of a human judgement, review or adjudication: CSRF and role checked, the judgement recorded
    once per submission token, the policy's rules (who may review or adjudicate the edge in its state) checked by
    the store in the same transaction, then on to ``done``. When an import holds the database past the busy
    timeout, the form comes back filled in as sent (503): nothing is lost, and the same submission token keeps a
    second click from recording it twice."""
    check_csrf(current, form.csrf)
    adjudication = stage is Stage.ADJUDICATION
    reviewer = require(current, *(("adjudicator",) if adjudication else ("reviewer", "adjudicator")))
    edge = edge_or_404(db, edge_pk)
    # whether the page this form came from showed model suggestions, by the rules that drew it
    assisted = suggestions_on_page(
        reviewer,
        edge.review_state,
        db.judgements.of_edge(edge_pk),
        db.accounts.settings()["show_model_suggestions"] == "true",
        db.accounts.reviews_required(),
    )
    reasoning = text_or_none(form.reasoning)
    if adjudication and reasoning is None:
        raise Denied(400, "an adjudication needs a rationale")
    judgement = Judgement(
        label_of(form.label),
        reviewer.name,
        Origin.HUMAN,
        stage,
        text_or_none(form.passage),
        text_or_none(form.period),
        reasoning,
        now(),
        # An adjudication settles the label; severity is a reviewer's call on the claim.
        severity=None if adjudication else severity_of(form.severity),
    )
    try:
        db.judgements.record_judgement(
            edge_pk,
            judgement,
            form.submission,
            door="web",
            # where the quoted passage was selected (passage and character range), kept with the record
            detail={"passage_offsets": form.passage_offsets} if form.passage_offsets.strip() else None,
            suggestions_shown=assisted,
        )
    except ReviewRefused as refused:
        if adjudication:
            raise Denied(409, str(refused)) from None
        _release(request, db, reviewer, edge_pk)
        kept = {"label": form.label, "passage": form.passage, "period": form.period, "reasoning": form.reasoning}
        kept["severity"] = form.severity
        params = dict(parse_qsl(queue_query_text(form.queue)))
        return queue_page(request, db, reviewer, current.csrf, params, 409, Refused(edge_pk, str(refused), kept))
    except DatabaseBusy:
        action = f"/edges/{edge_pk}/{'adjudication' if adjudication else 'judgements'}"
        sent = {"label": form.label, "submission": form.submission, "passage": form.passage, "period": form.period}
        sent["reasoning"] = form.reasoning
        sent["queue"], sent["passage_offsets"] = form.queue, form.passage_offsets
        if not adjudication:
            sent["severity"] = form.severity
        response = page(
            request,
            "busy.html.j2",
            503,
            user=current.reviewer,
            csrf=current.csrf,
            action=action,
            form=sent,
            labels=[label.value for label in Label],
            severities=[severity.value for severity in Severity],
            waited=context(request).config.busy_timeout,
        )
        response.headers["Retry-After"] = "5"
        return response
    _release(request, db, reviewer, edge_pk)
    return redirect(done)


@router.post("/edges/{edge_pk}/judgements")
def judge(
    request: Request,
    edge_pk: int,
    db: Db,
    current: Current,
    label: Annotated[str, Form()],
    submission: Annotated[str, Form()],
    csrf: Annotated[str, Form()] = "",
    passage: Annotated[str, Form()] = "",
    period: Annotated[str, Form()] = "",
    reasoning: Annotated[str, Form()] = "",
    severity: Annotated[str, Form()] = "",
    queue: Annotated[str, Form()] = "",
    passage_offsets: Annotated[str, Form()] = "",
) -> Response:
    """Record a review, then go on to the next edge of the same (filtered) queue."""
    form = _Form(label, submission, csrf, passage, period, reasoning, severity, queue, passage_offsets)
    query = queue_query_text(queue)
    return _record(
        request, db, current, edge_pk, Stage.REVIEW, form, f"/queue/next?{query}" if query else "/queue/next"
    )


@router.post("/edges/{edge_pk}/adjudication")
def adjudicate(
    request: Request,
    edge_pk: int,
    db: Db,
    current: Current,
    label: Annotated[str, Form()],
    submission: Annotated[str, Form()],
    csrf: Annotated[str, Form()] = "",
    reasoning: Annotated[str, Form()] = "",
    passage: Annotated[str, Form()] = "",
    period: Annotated[str, Form()] = "",
    passage_offsets: Annotated[str, Form()] = "",
) -> Response:
    """Record the final label of a disputed edge with a rationale, then show the edge again."""
    form = _Form(label, submission, csrf, passage, period, reasoning, passage_offsets=passage_offsets)
    return _record(request, db, current, edge_pk, Stage.ADJUDICATION, form, f"/edges/{edge_pk}")


@router.post("/edges/{edge_pk}/skip")
def skip(
    request: Request,
    edge_pk: int,
    db: Db,
    current: Current,
    csrf: Annotated[str, Form()] = "",
    note: Annotated[str, Form()] = "",
    queue: Annotated[str, Form()] = "",
) -> Response:
    """Put the edge at the back of the viewer's queue with an optional note, then on to the next edge of the same
    (filtered) queue."""
    check_csrf(current, csrf)
    reviewer = require(current, "reviewer", "adjudicator")
    edge_or_404(db, edge_pk)
    if len(note) > SKIP_NOTE_LIMIT:
        raise Denied(400, f"a skip note holds at most {SKIP_NOTE_LIMIT} characters, not {len(note)}")
    leases_of(request, db).skip(reviewer, edge_pk, text_or_none(note))
    query = queue_query_text(queue)
    return redirect(f"/queue/next?{query}" if query else "/queue/next")


@router.post("/edges/{edge_pk}/lease")
def renew_lease(
    request: Request, edge_pk: int, db: Db, current: Current, csrf: Annotated[str, Form()] = ""
) -> Response:
    """Keep the viewer's lease on an edge whose page is open (the page asks every minute): 204 while they hold it
    (taken again when it lapsed and there is room), 409 when others hold every place."""
    check_csrf(current, csrf)
    reviewer = require(current, "reviewer", "adjudicator")
    edge_or_404(db, edge_pk)
    if leases_of(request, db).renew(reviewer, edge_pk) is not None:
        return Response(status_code=204)
    adjudicating = db.judgements.refusal(edge_pk, reviewer, Stage.ADJUDICATION) is None
    if _hold(request, db, reviewer, edge_pk, adjudicating):
        return Response(status_code=204)
    return Response("another reviewer has this edge open", status_code=409, media_type="text/plain")


@router.post("/sources/{source_pk}/url")
def attach_url(
    source_pk: int,
    db: Db,
    current: Current,
    url: Annotated[str, Form()],
    csrf: Annotated[str, Form()] = "",
    back: Annotated[str, Form()] = "/queue",
) -> Response:
    """Give a title-only source a link (who and when are recorded; it stays pending until resolved)."""
    check_csrf(current, csrf)
    reviewer = require(current, "reviewer", "adjudicator", "admin")
    if not safe_href(url):
        raise Denied(400, f"{url!r} is not an http(s) URL")
    db.evidence.attach_url(source_pk, url.strip(), reviewer.name)
    return redirect(local_path(back))
