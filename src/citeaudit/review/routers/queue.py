"""The queue: the edges that need the viewer's judgement, in their own stable pseudo-random order, a page at a
time, filterable by run, platform, question and review state; the viewer's counts (assigned, done, skipped);
the next edge, leased to the viewer so reviewers working at once are handed different edges; and the viewer's
recent labels, each with a way to revise it."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from fastapi import APIRouter, Request
from fastapi.responses import Response

from citeaudit.core.errors import DatabaseBusy
from citeaudit.core.model import ReviewState, Stage
from citeaudit.review.pages import (
    Current,
    Db,
    Denied,
    context,
    leases_of,
    page,
    queue_query,
    redirect,
    require,
)
from citeaudit.review.queue import decode_cursor, encode_cursor, page_order, start_key
from citeaudit.store.review import QueueFilter, Reviewer, ReviewStore

__all__ = ["NEEDS_BY_ROLE", "NEXT_PAGES", "PAGE_SIZE", "Refused", "next_edge", "queue_page", "router"]

PAGE_SIZE = 50
NEXT_PAGES = 20
"""Pages of the queue the next edge is looked for in before the skipped edges at its back are offered."""
NEEDS_BY_ROLE = {
    "reviewer": ("review",),
    "adjudicator": ("review", "adjudicate"),
    "admin": ("browse", "review", "adjudicate"),
}
"""What each role may list: edges to review, disputed edges to adjudicate, or everything (never with labels)."""

router = APIRouter()


@dataclass(frozen=True, slots=True)
class Refused:
    """A review the policy refused, shown on top of the queue it came from with what the reviewer typed."""

    edge_pk: int
    """The edge the review was for."""
    reason: str
    """Why, in one line."""
    kept: Mapping[str, str]
    """The form's text fields as sent (passage, period, reasoning, severity, label)."""


def _filters(params: Mapping[str, str]) -> QueueFilter:
    state = params.get("state") or None
    if state is not None and state not in {s.value for s in ReviewState}:
        raise Denied(400, f"state {state!r} is not one of {', '.join(s.value for s in ReviewState)}")
    return QueueFilter(
        run=params.get("run") or None,
        platform=params.get("platform") or None,
        question=params.get("question") or None,
        state=ReviewState(state) if state else None,
    )


def _needs(params: Mapping[str, str], reviewer: Reviewer) -> str:
    allowed = NEEDS_BY_ROLE[reviewer.role]
    needs = params.get("needs") or allowed[0]
    if needs not in allowed:
        raise Denied(403, f"a {reviewer.role} may list {', '.join(allowed)}, not {needs!r}")
    return needs


@router.get("/")
def home(current: Current) -> Response:
    """The queue is the home page."""
    return redirect("/queue")


def queue_page(
    request: Request,
    db: ReviewStore,
    reviewer: Reviewer,
    csrf: str,
    params: Mapping[str, str],
    status: int = 200,
    refused: Refused | None = None,
) -> Response:
    """One page of the viewer's queue picked by ``params`` (filters and cursor), with a cursor to the next, the
    viewer's counts and skipped edges, and a refused review on top when there is one."""
    filters = _filters(params)
    needs = _needs(params, reviewer)
    after = decode_cursor(params.get("after"))
    rows = db.queue.page(reviewer, needs, filters, start_key(reviewer.pk), after, PAGE_SIZE + 1)
    more = len(rows) > PAGE_SIZE
    rows = rows[:PAGE_SIZE]
    next_after = None
    if more:
        last = rows[-1]
        lap = 0 if last.key >= start_key(reviewer.pk) else 1
        next_after = encode_cursor(lap, last.key)
    page_key = rows[0].key if rows else 0
    kept = {k: v for k, v in params.items() if k not in ("after", "full") and v}
    leases = leases_of(request, db)
    reviews = reviewer.role in ("reviewer", "adjudicator")
    # skipped edges wait at the back of the queue: listed apart, not among the edges still to do
    skipped = leases.skipped(reviewer) if reviews else []
    put_off = {edge.edge_pk for edge in skipped}
    progress = db.queue.progress(reviewer) if reviews else None
    return page(
        request,
        "queue.html.j2",
        status,
        user=reviewer,
        csrf=csrf,
        rows=[row for row in page_order(rows, reviewer.pk, page_key) if row.edge_pk not in put_off],
        filters=filters,
        needs=needs,
        needs_choices=NEEDS_BY_ROLE[reviewer.role],
        values=db.queue.filter_values(),
        states=[s.value for s in ReviewState],
        next_query={**kept, "after": next_after} if next_after else None,
        edge_query=queue_query(params),
        # counted on the first page only: deeper pages are reached from it
        retired=db.queue.retired_edges(needs) if after is None else None,
        counts=None if progress is None else {"assigned": progress[1], "done": progress[0]},
        skipped=skipped,
        skipped_count=leases.skipped_count(reviewer) if reviews else 0,
        full=params.get("full") == "1",
        refused=refused,
    )


@router.get("/queue")
def queue(request: Request, db: Db, current: Current) -> Response:
    """One page of the viewer's queue, with a cursor to the next."""
    reviewer = require(current, "reviewer", "adjudicator", "admin")
    return queue_page(request, db, reviewer, current.csrf, request.query_params)


def _pick(request: Request, db: ReviewStore, reviewer: Reviewer, needs: str, candidates: Sequence[int]) -> int | None:
    """The first of ``candidates`` the viewer may have: leased to them when leases are on (``None`` when every
    one is held by as many others as still owe it a review), else simply the first."""
    if not candidates:
        return None
    if not context(request).config.leases or needs == "browse":
        return candidates[0]
    stage = Stage.ADJUDICATION if needs == "adjudicate" else Stage.REVIEW
    try:
        return leases_of(request, db).take(reviewer, candidates, stage, db.accounts.reviews_required())
    except DatabaseBusy:  # an import holds the database: hand out the edge unleased rather than wait for it
        return candidates[0]


def next_edge(
    request: Request, db: ReviewStore, reviewer: Reviewer, params: Mapping[str, str], leaving: int | None = None
) -> int | None:
    """The viewer's next edge in the queue ``params`` pick: the first free one in queue order, page by page; then
    the edges at the back of the queue, those the viewer skipped (oldest skip first) and last ``leaving``, the
    edge they are moving on from."""
    needs, filters = _needs(params, reviewer), _filters(params)
    leases = leases_of(request, db)
    start = start_key(reviewer.pk)
    after: tuple[int, int] | None = None
    later: list[int] = []
    skipped_at: dict[int, str] = {}
    for _ in range(NEXT_PAGES):
        rows = db.queue.page(reviewer, needs, filters, start, after, PAGE_SIZE)
        if not rows:
            break
        ordered = [row.edge_pk for row in page_order(rows, reviewer.pk, rows[0].key)]
        times = leases.skip_times(reviewer, ordered)
        skipped_at.update(times)
        found = _pick(request, db, reviewer, needs, [pk for pk in ordered if pk not in times and pk != leaving])
        if found is not None:
            return found
        later.extend(pk for pk in ordered if pk in times or pk == leaving)
        if len(rows) < PAGE_SIZE:
            break
        last = rows[-1]
        after = (0 if last.key >= start else 1, last.key)
    later.sort(key=lambda pk: (pk == leaving, skipped_at.get(pk, "")))
    return _pick(request, db, reviewer, needs, later)


@router.get("/queue/next")
def queue_next(request: Request, db: Db, current: Current) -> Response:
    """The viewer's next edge (leased to them), keeping the queue's filters; the queue itself when nothing is left,
    or when every edge left is open with as many other reviewers as it still needs."""
    reviewer = require(current, "reviewer", "adjudicator", "admin")
    leaving = request.query_params.get("from", "")
    edge = next_edge(request, db, reviewer, request.query_params, int(leaving) if leaving.isdigit() else None)
    query = queue_query(request.query_params)
    if edge is None:
        remaining = db.queue.page(
            reviewer, _needs(request.query_params, reviewer), _filters(request.query_params), 0, None, 1
        )
        full = "full=1" if remaining else ""
        tail = "&".join(part for part in (query, full) if part)
        return redirect(f"/queue?{tail}" if tail else "/queue")
    return redirect(f"/edges/{edge}?{query}" if query else f"/edges/{edge}")


@router.get("/mine")
def mine(request: Request, db: Db, current: Current) -> Response:
    """The viewer's recent labels (their own only), newest first, each with a link to revise it."""
    reviewer = require(current, "reviewer", "adjudicator")
    required = db.accounts.reviews_required()
    return page(
        request,
        "mine.html.j2",
        user=reviewer,
        csrf=current.csrf,
        labels=leases_of(request, db).recent_labels(reviewer, required),
        policy=db.accounts.settings()["policy"],
    )
