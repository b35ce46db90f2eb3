"""Review pages for cross pairs (misattribution): a claim whose own edges are not supported, and another source of
the same answer or an official page. Judged like edges, under the same review policy (who may review, who may
adjudicate, which judgements decide: :mod:`citeaudit.core.review_policy`, checked by the store in the write
transaction, a refusal answered 409), stored apart from them: nothing here touches an edge.

Blindness follows the edge pages exactly (:mod:`citeaudit.review.blind`): a reviewer sees their own judgements (and
model suggestions when the project shows them); an adjudicator sees every judgement, the state and the final label
of a disputed or adjudicated pair, and on any other pair is a reviewer like any other; admins see everything.
"""

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import Response

from citeaudit.core.errors import ReviewRefused
from citeaudit.core.model import Judgement, Label, Origin, ReviewState, Stage
from citeaudit.review.auth import new_token
from citeaudit.review.blind import sees_all
from citeaudit.review.pages import Current, Db, Denied, check_csrf, context, page, redirect, require
from citeaudit.store.cross_pairs import CrossPairRow
from citeaudit.store.review import ReviewStore, now
from citeaudit.store.writers import busy_timeout

__all__ = ["router"]

router = APIRouter()


def _state(pair: CrossPairRow) -> tuple[ReviewState, Label | None]:
    return pair.state, pair.final_label


def _load(db: ReviewStore, pair_pk: int) -> tuple[CrossPairRow, bool]:
    pair = db.cross.pair(pair_pk)
    shows_models = db.accounts.settings()["show_model_suggestions"] == "true"
    if pair is None:
        raise Denied(404, f"no cross pair {pair_pk}")
    return pair, shows_models


def _stage(pair: CrossPairRow, name: str, role: str, asked: str) -> Stage:
    """The stage of a form post: as the form says, else an adjudication when an adjudicator who did not review
    the pair posts on a disputed (or adjudicated) one, else a review."""
    if asked:
        try:
            return Stage(asked)
        except ValueError:
            raise Denied(400, f"stage {asked!r} is not one of {', '.join(m.value for m in Stage)}") from None
    reviewed = any(j.origin is Origin.HUMAN and j.stage is Stage.REVIEW and j.reviewer == name for j in pair.judgements)
    if role == "adjudicator" and not reviewed and pair.state in (ReviewState.DISPUTED, ReviewState.ADJUDICATED):
        return Stage.ADJUDICATION
    return Stage.REVIEW


@router.get("/cross-pairs")
def cross_pairs_page(request: Request, db: Db, current: Current) -> Response:
    reviewer = require(current, "reviewer", "adjudicator", "admin")
    pairs = db.cross.pairs()
    rows = [
        (
            pair,
            _state(pair) if sees_all(reviewer, pair.state) else None,
            any(j.origin is Origin.HUMAN and j.reviewer == reviewer.name for j in pair.judgements),
        )
        for pair in pairs
    ]
    shows_states = reviewer.role in ("adjudicator", "admin")
    return page(request, "cross_pairs.html.j2", user=reviewer, csrf=current.csrf, rows=rows, shows_states=shows_states)


@router.get("/cross-pairs/{pair_pk}")
def cross_pair_page(pair_pk: int, request: Request, db: Db, current: Current) -> Response:
    reviewer = require(current, "reviewer", "adjudicator", "admin")
    pair, shows_models = _load(db, pair_pk)
    state, label = _state(pair)
    seen_all = sees_all(reviewer, state)
    show_models = seen_all or shows_models
    passages = db.cross.source_passages(pair.source_key)
    ranked = db.cross.ranked_passages(pair_pk)
    stage = _stage(pair, reviewer.name, reviewer.role, "")
    refused = db.cross.refusal(pair_pk, reviewer.name, stage)
    adjudicating = stage is Stage.ADJUDICATION and refused is None
    return page(
        request,
        "cross_pair.html.j2",
        user=reviewer,
        csrf=current.csrf,
        pair=pair,
        state=state if seen_all else None,
        final_label=label if seen_all else None,
        own=[j for j in pair.judgements if j.origin is Origin.HUMAN and j.reviewer == reviewer.name],
        others=[j for j in pair.judgements if j.origin is Origin.HUMAN and j.reviewer != reviewer.name]
        if seen_all
        else [],
        suggestions=[j for j in pair.judgements if j.origin is Origin.MODEL] if show_models else [],
        passages=passages,
        ranked=ranked,
        labels=[label.value for label in Label],
        adjudicating=adjudicating,
        may_review=stage is Stage.REVIEW and refused is None,
        refused=refused,
        submission=new_token(),
    )


@router.post("/cross-pairs/{pair_pk}/judgements")
def judge_cross_pair(
    pair_pk: int,
    request: Request,
    db: Db,
    current: Current,
    label: Annotated[str, Form()],
    submission: Annotated[str, Form()],
    csrf: Annotated[str, Form()] = "",
    passage: Annotated[str, Form()] = "",
    reasoning: Annotated[str, Form()] = "",
    stage: Annotated[str, Form()] = "",
) -> Response:
    check_csrf(current, csrf)
    # Admins reach the store too, so its policy check refuses them (409) as it refuses anyone else.
    reviewer = require(current, "reviewer", "adjudicator", "admin")
    if label not in {member.value for member in Label}:
        raise Denied(400, f"label {label!r} is not one of {', '.join(m.value for m in Label)}")
    pair, _ = _load(db, pair_pk)
    chosen = _stage(pair, reviewer.name, reviewer.role, stage.strip())
    if chosen is Stage.ADJUDICATION and not reasoning.strip():
        raise Denied(400, "an adjudication needs a rationale")
    judgement = Judgement(
        Label(label),
        reviewer.name,
        Origin.HUMAN,
        chosen,
        passage.strip() or None,
        None,
        reasoning.strip() or None,
        now(),
    )
    try:
        # the write waits for another writer as long as a command would (the busy timeout), not the page's
        with ReviewStore(context(request).config.db, busy_timeout()) as store:
            store.cross.record_judgement(pair_pk, judgement, submission=submission, door="cross-pair web")
    except ReviewRefused as refused:
        raise Denied(409, str(refused)) from None
    return redirect("/cross-pairs")
