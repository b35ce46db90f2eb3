"""The queue: the edges that need the viewer's judgement, in their own stable pseudo-random order, a page at a
time, filterable by run, platform, question and review state."""

from fastapi import APIRouter, Request
from fastapi.responses import Response

from citeaudit.core.model import ReviewState
from citeaudit.review.pages import Current, Db, Denied, page, queue_query, redirect, require
from citeaudit.review.queue import decode_cursor, encode_cursor, page_order, start_key
from citeaudit.store.review import QueueFilter, Reviewer

__all__ = ["NEEDS_BY_ROLE", "PAGE_SIZE", "router"]

PAGE_SIZE = 50
NEEDS_BY_ROLE = {
    "reviewer": ("review",),
    "adjudicator": ("review", "adjudicate"),
    "admin": ("browse", "review", "adjudicate"),
}
"""What each role may list: edges to review, disputed edges to adjudicate, or everything (never with labels)."""

router = APIRouter()


def _filters(request: Request) -> QueueFilter:
    query = request.query_params
    state = query.get("state") or None
    if state is not None and state not in {s.value for s in ReviewState}:
        raise Denied(400, f"state {state!r} is not one of {', '.join(s.value for s in ReviewState)}")
    return QueueFilter(
        run=query.get("run") or None,
        platform=query.get("platform") or None,
        question=query.get("question") or None,
        state=ReviewState(state) if state else None,
    )


def _needs(request: Request, reviewer: Reviewer) -> str:
    allowed = NEEDS_BY_ROLE[reviewer.role]
    needs = request.query_params.get("needs") or allowed[0]
    if needs not in allowed:
        raise Denied(403, f"a {reviewer.role} may list {', '.join(allowed)}, not {needs!r}")
    return needs


@router.get("/")
def home(current: Current) -> Response:
    """The queue is the home page."""
    return redirect("/queue")


@router.get("/queue")
def queue(request: Request, db: Db, current: Current) -> Response:
    """One page of the viewer's queue, with a cursor to the next."""
    reviewer = require(current, "reviewer", "adjudicator", "admin")
    filters = _filters(request)
    needs = _needs(request, reviewer)
    after = decode_cursor(request.query_params.get("after"))
    rows = db.queue.page(reviewer, needs, filters, start_key(reviewer.pk), after, PAGE_SIZE + 1)
    more = len(rows) > PAGE_SIZE
    rows = rows[:PAGE_SIZE]
    next_after = None
    if more:
        last = rows[-1]
        lap = 0 if last.key >= start_key(reviewer.pk) else 1
        next_after = encode_cursor(lap, last.key)
    page_key = rows[0].key if rows else 0
    params = {k: v for k, v in request.query_params.items() if k != "after" and v}
    return page(
        request,
        "queue.html.j2",
        user=reviewer,
        csrf=current.csrf,
        rows=page_order(rows, reviewer.pk, page_key),
        filters=filters,
        needs=needs,
        needs_choices=NEEDS_BY_ROLE[reviewer.role],
        values=db.queue.filter_values(),
        states=[s.value for s in ReviewState],
        next_query={**params, "after": next_after} if next_after else None,
        edge_query=queue_query(request.query_params),
        # counted on the first page only: deeper pages are reached from it
        retired=db.queue.retired_edges(needs) if after is None else None,
    )


@router.get("/queue/next")
def queue_next(request: Request, db: Db, current: Current) -> Response:
    """The first edge of the viewer's queue (the queue itself when it is empty)."""
    reviewer = require(current, "reviewer", "adjudicator", "admin")
    rows = db.queue.page(
        reviewer, _needs(request, reviewer), _filters(request), start_key(reviewer.pk), None, PAGE_SIZE
    )
    if not rows:
        return redirect("/queue")
    first = page_order(rows, reviewer.pk, rows[0].key)[0]
    query = queue_query(request.query_params)
    return redirect(f"/edges/{first.edge_pk}?{query}" if query else f"/edges/{first.edge_pk}")
