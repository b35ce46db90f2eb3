"""Review pages for cross pairs (misattribution): a claim whose own edges are not supported, and another source of
the same answer or an official page. Judged like edges, stored apart from them: nothing here touches an edge.

Blindness follows the edge pages: a reviewer sees their own judgements (and model suggestions when the project
shows them), adjudicators and admins see every judgement and the final label.
"""

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import Response

from citeaudit.model import Judgement, Label, Origin, ReviewState, Stage, review_outcome
from citeaudit.review.auth import new_token
from citeaudit.review.pages import Current, Denied, check_csrf, context, page, redirect, require
from citeaudit.store import Store
from citeaudit.store.cross_pairs import (
    CrossPairRow,
    cross_pair,
    cross_pair_list,
    cross_ranked_passages,
    record_cross_judgement,
    reviews_required,
    shows_model_suggestions,
)
from citeaudit.store.resolution import passages_of
from citeaudit.store.review import now

__all__ = ["router"]

router = APIRouter()


def _state(pair: CrossPairRow, required: int) -> tuple[ReviewState, Label | None]:
    return review_outcome(pair.judgements, required)


def _load(request: Request, pair_pk: int) -> tuple[CrossPairRow, int, bool]:
    with Store(context(request).config.db) as store:
        pair = cross_pair(store.connection, pair_pk)
        required = reviews_required(store)
        shows_models = shows_model_suggestions(store)
    if pair is None:
        raise Denied(404, f"no cross pair {pair_pk}")
    return pair, required, shows_models


@router.get("/cross-pairs")
def cross_pairs_page(request: Request, current: Current) -> Response:
    reviewer = require(current, "reviewer", "adjudicator", "admin")
    with Store(context(request).config.db) as store:
        pairs = cross_pair_list(store.connection)
        required = reviews_required(store)
    sees_all = reviewer.role in ("adjudicator", "admin")
    rows = [
        (
            pair,
            _state(pair, required) if sees_all else None,
            any(j.origin is Origin.HUMAN and j.reviewer == reviewer.name for j in pair.judgements),
        )
        for pair in pairs
    ]
    return page(request, "cross_pairs.html.j2", user=reviewer, csrf=current.csrf, rows=rows)


@router.get("/cross-pairs/{pair_pk}")
def cross_pair_page(pair_pk: int, request: Request, current: Current) -> Response:
    reviewer = require(current, "reviewer", "adjudicator", "admin")
    pair, required, shows_models = _load(request, pair_pk)
    state, label = _state(pair, required)
    sees_all = reviewer.role in ("adjudicator", "admin")
    show_models = sees_all or shows_models
    with Store(context(request).config.db) as store:
        passages = passages_of(store.connection, pair.source_key)
        ranked = cross_ranked_passages(store.connection, pair_pk)
    adjudicating = state is ReviewState.DISPUTED and reviewer.role in ("adjudicator", "admin")
    return page(
        request,
        "cross_pair.html.j2",
        user=reviewer,
        csrf=current.csrf,
        pair=pair,
        state=state if sees_all else None,
        final_label=label if sees_all else None,
        own=[j for j in pair.judgements if j.origin is Origin.HUMAN and j.reviewer == reviewer.name],
        others=[j for j in pair.judgements if j.origin is Origin.HUMAN and j.reviewer != reviewer.name]
        if sees_all
        else [],
        suggestions=[j for j in pair.judgements if j.origin is Origin.MODEL] if show_models else [],
        passages=passages,
        ranked=ranked,
        labels=[label.value for label in Label],
        adjudicating=adjudicating,
        may_review=reviewer.role != "admin" and not adjudicating,
        submission=new_token(),
    )


@router.post("/cross-pairs/{pair_pk}/judgements")
def judge_cross_pair(
    pair_pk: int,
    request: Request,
    current: Current,
    label: Annotated[str, Form()],
    submission: Annotated[str, Form()],
    csrf: Annotated[str, Form()] = "",
    passage: Annotated[str, Form()] = "",
    reasoning: Annotated[str, Form()] = "",
) -> Response:
    check_csrf(current, csrf)
    reviewer = require(current, "reviewer", "adjudicator", "admin")
    if label not in {member.value for member in Label}:
        raise Denied(400, f"label {label!r} is not one of {', '.join(m.value for m in Label)}")
    pair, required, _ = _load(request, pair_pk)
    state, _final = _state(pair, required)
    if state is ReviewState.DISPUTED and reviewer.role in ("adjudicator", "admin"):
        stage = Stage.ADJUDICATION
        if not reasoning.strip():
            raise Denied(400, "an adjudication needs a rationale")
    elif reviewer.role == "admin":
        raise Denied(403, "admins adjudicate disputed cross pairs; they do not review them")
    else:
        stage = Stage.REVIEW
    judgement = Judgement(
        Label(label),
        reviewer.name,
        Origin.HUMAN,
        stage,
        passage.strip() or None,
        None,
        reasoning.strip() or None,
        now(),
    )
    with Store(context(request).config.db) as store, store.transaction() as tx:
        record_cross_judgement(tx, pair_pk, judgement, submission=submission)
    return redirect("/cross-pairs")
