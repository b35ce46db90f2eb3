"""The reviewer queue: which edges an account has to review, adjudicate or may browse, in a fixed pseudo-random
order with keyset pages, the filters it offers, and a reviewer's progress through it.

Counts over every edge (the edges waiting for a review, those of retired claims) are kept per database for a few
seconds (:data:`COUNT_SECONDS`) rather than made on every page; a judgement recorded by this process moves the
kept figure at once (:func:`adjust_count`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from citeaudit.core.model import ReviewState
from citeaudit.core.scoring import DISPUTED_CODE, LABEL_CODE, PENDING_CODE
from citeaudit.store.reading import CURRENT_CLAIM
from citeaudit.store.review_base import ReviewPart, settings_reviews_required
from citeaudit.store.review_records import QueueFilter, QueueRow, Reviewer

__all__ = ["COUNT_SECONDS", "KEY_SPACE", "QUEUE_KEY", "ReviewQueue", "adjust_count"]

QUEUE_KEY = "((e.pk * 2654435761) % 4294967296)"
"""The queue's order key: the exact expression of the ``edges_queue`` and ``edges_queue_keys`` indexes (a
multiplicative hash of pk). A walk by final code reads ``edges_queue`` (final code, key); a walk over every edge, or
by review state alone, ``edges_queue_keys`` (key, review state)."""

KEY_SPACE = 4294967296
"""Queue keys lie in ``[0, KEY_SPACE)``."""

_NEEDED_CODES: Mapping[str, frozenset[int]] = {
    "review": frozenset({PENDING_CODE}),
    "adjudicate": frozenset({DISPUTED_CODE}),
}
"""Final codes of the edges each queue lists (``browse`` lists every edge)."""

COUNT_SECONDS = 10.0
"""How long a count over every edge (progress, retired edges) is reused before it is counted again."""

_COUNTS: dict[tuple[str, str], tuple[tuple[int, int], float, int]] = {}
_COUNTS_LOCK = threading.Lock()
_RECOUNTING: dict[tuple[str, str], threading.Lock] = {}

_NARROW_FILTER = 0.02
"""Below this share of answers a filter is walked from its answers, not in edge key order."""


def _state_codes(state: ReviewState, reviews_required: int) -> frozenset[int]:
    """Final codes an edge in ``state`` can hold under a policy."""
    labels = frozenset(LABEL_CODE.values())
    if state is ReviewState.PENDING:
        return frozenset({PENDING_CODE})
    if state is ReviewState.DISPUTED:
        return frozenset({DISPUTED_CODE})
    if state is ReviewState.LABELLED and reviews_required > 1:
        return frozenset({PENDING_CODE})
    return labels


def adjust_count(path: Path, what: str, delta: int) -> None:
    """Move the count ``what`` kept for the database at ``path`` by ``delta`` after a write of this process changed
    it (left alone when none is kept)."""
    if not delta:
        return
    key = (str(path.resolve()), what)
    with _COUNTS_LOCK:
        found = _COUNTS.get(key)
        if found is not None:
            _COUNTS[key] = (found[0], found[1], found[2] + delta)


class ReviewQueue(ReviewPart):
    """The queue, its filters and progress (``ReviewStore.queue``)."""

    def page(
        self,
        reviewer: Reviewer,
        needs: str,
        filters: QueueFilter,
        start: int,
        after: tuple[int, int] | None,
        limit: int,
    ) -> list[QueueRow]:
        """Edges in queue order from key ``start`` (wrapping once round the key space), after the keyset cursor
        ``after`` = ``(lap, key)``, at most ``limit``.

        ``needs`` picks what the account has to do: ``review`` (no final label yet, not judged by this reviewer),
        ``adjudicate`` (disputed) or ``browse`` (any edge; admins only, labels are never listed).
        """
        rows: list[QueueRow] = []
        laps = [(0, start, KEY_SPACE), (1, 0, start)]
        for lap, low, high in laps:
            if after is not None and lap < after[0]:
                continue
            lower = max(low, after[1] + 1) if after is not None and lap == after[0] else low
            if lower >= high:
                continue
            rows.extend(self._queue_lap(reviewer, needs, filters, lower, high, limit - len(rows)))
            if len(rows) >= limit:
                break
        return rows

    def _queue_lap(
        self, reviewer: Reviewer, needs: str, filters: QueueFilter, low: int, high: int, limit: int
    ) -> list[QueueRow]:
        codes = _NEEDED_CODES.get(needs)
        if needs != "browse" and codes is None:
            raise ValueError(f"needs must be review, adjudicate or browse, not {needs!r}")
        where = [f"{QUEUE_KEY} >= ?", f"{QUEUE_KEY} < ?", CURRENT_CLAIM]
        params: list[object] = [low, high]
        if needs == "review" and filters.state is not None:
            # Blind: every edge a reviewer may review is pending from where they stand; another reviewer's label
            # must not move it between their lists.
            if filters.state is not ReviewState.PENDING:
                return []
        elif filters.state is not None:
            # a state whose edges can never need this action lists nothing (and scans nothing)
            if codes is not None and not codes & _state_codes(filters.state, settings_reviews_required(self._db)):
                return []
            where.append("e.review_state = ?")
            params.append(str(filters.state))
        if codes is not None:
            (code,) = codes
            # by final code (edges_queue) even with a state: the state is then read from each edge the code lists
            where.append("e.final_code = ?")
            params.append(code)
        if needs == "review":
            where.append("NOT EXISTS (SELECT 1 FROM judgements j WHERE j.edge_pk = e.pk AND j.reviewer = ?)")
            params.append(reviewer.name)
        answer_where, answer_params = self._answer_conditions(filters)
        if answer_where is None:
            return []
        edges_first = True
        if answer_where:
            # Walking edges in key order finds a page quickly when the filter keeps a fair share of answers; for
            # a narrow filter, start from its answers and sort their (few) edges instead.
            (matching,) = self._db.execute(
                f"SELECT count(*) FROM answers a WHERE {' AND '.join(answer_where)}", answer_params
            ).fetchone()
            if matching == 0:
                return []
            (total,) = self._db.execute("SELECT coalesce(max(pk), 0) FROM answers").fetchone()
            edges_first = matching >= _NARROW_FILTER * total
        joins = (
            "edges e CROSS JOIN claims c ON c.pk = e.claim_pk CROSS JOIN answers a ON a.pk = c.answer_pk"
            if edges_first
            else "answers a CROSS JOIN claims c ON c.answer_pk = a.pk CROSS JOIN edges e ON e.claim_pk = c.pk"
        )
        sql = (
            f"SELECT e.pk, {QUEUE_KEY}, c.text, coalesce(s.title, s.url, s.key), r.id, "
            "coalesce(a.platform, r.platform), q.id "
            f"FROM {joins} JOIN runs r ON r.pk = a.run_pk JOIN questions q ON q.pk = a.question_pk "
            "JOIN sources s ON s.pk = e.source_pk "
            f"WHERE {' AND '.join(where + answer_where)} ORDER BY {QUEUE_KEY} LIMIT ?"
        )
        return [QueueRow(*row) for row in self._db.execute(sql, (*params, *answer_params, limit))]

    def _answer_conditions(self, filters: QueueFilter) -> tuple[list[str] | None, list[object]]:
        """Conditions on ``answers a`` for the run, platform and question filters (ids turned into row ids);
        ``None`` when a named run or question does not exist."""
        where: list[str] = []
        params: list[object] = []
        for column, table, value in (("run_pk", "runs", filters.run), ("question_pk", "questions", filters.question)):
            if value is None:
                continue
            pks = [pk for (pk,) in self._db.execute(f"SELECT pk FROM {table} WHERE id = ?", (value,))]
            if not pks:
                return None, []
            where.append(f"a.{column} IN ({', '.join('?' * len(pks))})")
            params.extend(pks)
        if filters.platform is not None:
            # An imported answer carries its platform on its run; an answer of its own platform overrides it.
            where.append(
                "(a.platform = ? OR (a.platform IS NULL AND a.run_pk IN (SELECT pk FROM runs WHERE platform = ?)))"
            )
            params.extend((filters.platform, filters.platform))
        return where, params

    def filter_values(self) -> dict[str, list[str]]:
        """Values the queue filters offer (runs, platforms, questions)."""
        return {
            "run": [r for (r,) in self._db.execute("SELECT id FROM runs ORDER BY id")],
            "platform": sorted(
                p
                for (p,) in self._db.execute(
                    "SELECT platform FROM runs WHERE platform IS NOT NULL "
                    "UNION SELECT DISTINCT platform FROM answers WHERE platform IS NOT NULL"
                )
            ),
            "question": [q for (q,) in self._db.execute("SELECT DISTINCT id FROM questions ORDER BY id")],
        }

    def progress(self, reviewer: Reviewer) -> tuple[int, int]:
        """``(done, assigned)`` for a reviewer: edges of current claims they reviewed, and those plus the edges
        still waiting for a review.

        The reviewer's own part is read live (from their judgements alone); how many edges wait in all is counted
        at most every :data:`COUNT_SECONDS` (and again after a segmentation or an import), since counting a
        million edges on every page would cost more than the page."""
        (done, done_pending) = self._db.execute(
            "SELECT count(DISTINCT j.edge_pk), count(DISTINCT CASE WHEN e.final_code = ? THEN j.edge_pk END) "
            "FROM judgements j JOIN edges e ON e.pk = j.edge_pk JOIN claims c ON c.pk = e.claim_pk "
            f"WHERE j.reviewer = ? AND j.origin = 'human' AND {CURRENT_CLAIM}",
            (PENDING_CODE, reviewer.name),
        ).fetchone()
        waiting = self._counted("waiting", lambda: self._count_current(PENDING_CODE)) - int(done_pending)
        return int(done), int(done) + max(0, waiting)

    def _count_current(self, code: int) -> int:
        (total,) = self._db.execute("SELECT count(*) FROM edges WHERE final_code = ?", (code,)).fetchone()
        return int(total) - self._count_retired(code)

    def _count_retired(self, code: int | None) -> int:
        sql = "SELECT count(*) FROM claims c JOIN edges e ON e.claim_pk = c.pk WHERE c.current = 0"
        if code is None:
            return int(self._db.execute(sql).fetchone()[0])
        return int(self._db.execute(sql + " AND e.final_code = ?", (code,)).fetchone()[0])

    def _counted(self, what: str, count: Callable[[], int]) -> int:
        """A count over every edge, kept per database for :data:`COUNT_SECONDS` and recounted at once when a
        segmentation or an import changed which claims are current. While one request recounts, the others
        use the previous figure rather than all counting at once."""
        (claim_sets, imports) = self._db.execute(
            "SELECT (SELECT coalesce(max(pk), 0) FROM claim_sets), (SELECT coalesce(max(pk), 0) FROM imports)"
        ).fetchone()
        key = (str(self.path.resolve()), what)
        at = time.monotonic()
        with _COUNTS_LOCK:
            found = _COUNTS.get(key)
            recounter = _RECOUNTING.setdefault(key, threading.Lock())
        fresh = found is not None and found[0] == (claim_sets, imports)
        if found is not None and fresh and at - found[1] < COUNT_SECONDS:
            return found[2]
        if found is not None and fresh:
            if not recounter.acquire(blocking=False):
                return found[2]  # another request is recounting: the figure of a few seconds ago will do
        else:
            recounter.acquire()  # nothing to show yet: wait for the one count rather than start another
            with _COUNTS_LOCK:
                found = _COUNTS.get(key)
            if found is not None and found[0] == (claim_sets, imports) and at - found[1] < COUNT_SECONDS:
                recounter.release()
                return found[2]
        try:
            value = count()
            with _COUNTS_LOCK:
                _COUNTS[key] = ((claim_sets, imports), at, value)
        finally:
            recounter.release()
        return value

    def retired_edges(self, needs: str) -> int:
        """Edges of retired claims (replaced by a later segmentation) that the queue leaves out for ``needs``."""
        codes = _NEEDED_CODES.get(needs)
        code = None if codes is None else next(iter(codes))
        return self._counted(f"retired:{needs}", lambda: self._count_retired(code))
