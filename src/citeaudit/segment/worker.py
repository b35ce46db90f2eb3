"""Segmenting answers in a worker process while the caller writes the claim sets of those before them.

``citeaudit segment`` does two kinds of work per answer: the rules (pure Python, the segmenter's time) and the
store's (reading the answer's claims, planning, writing rows). On a machine with a second core they can overlap:
:class:`SegmentedAhead` hands the texts to one worker process, which segments them in order, while the caller's
process reads and writes; the caller takes each segmentation when it gets to that answer. The results are the
ones the rules give in the caller's process (the same pure function on the same text and spans); an answer whose
text or spans are not those handed out (changed in between) is segmented in the caller's process.

The worker is made by ``fork`` (the modules are loaded already; starting it takes about 10 ms), and only when
no other thread runs in the caller's process, so nothing another thread holds is copied half-done. It ignores
``Ctrl-C``: the caller stops it. Leaving the ``with`` block ends the worker and waits for it, whatever happened.
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from functools import partial
from multiprocessing.pool import Pool
from types import TracebackType

from citeaudit.segment import rules as rules_v1
from citeaudit.segment import rules_v2
from citeaudit.segment.rules import ClaimSpan, Rules, Segmented, Skipped, SkipReason
from citeaudit.segment.rules_v2 import RulesV2

__all__ = ["CHUNK", "SegmentedAhead", "segment_with", "worker_possible"]

Regions = tuple[tuple[int, int], ...]
Compact = tuple[
    tuple[tuple[int, int, str, int], ...], tuple[tuple[int, int, int], ...], tuple[tuple[int, int, str], ...]
]
"""A :class:`~citeaudit.segment.rules.Segmented` as plain tuples: what crosses between the processes (for the
ExpertQA answers, pickled in a third of the time the frozen dataclasses take, read back and rebuilt in 0.7 of it)."""

CHUNK = 16
"""Answers the worker segments per message."""


def segment_with(text: str, regions: Sequence[tuple[int, int]], rules: Rules | RulesV2) -> Segmented:
    """``text`` segmented by the rules method ``rules`` belong to."""
    if isinstance(rules, RulesV2):
        return rules_v2.segment(text, regions, rules)
    return rules_v1.segment(text, regions, rules)


def worker_possible() -> bool:
    """Whether a worker can be started here: a second core, ``fork`` available, and no other thread running."""
    return (
        (multiprocessing.cpu_count() or 1) > 1
        and sys.platform == "linux"
        and "fork" in multiprocessing.get_all_start_methods()
        and threading.active_count() == 1
    )


def _compact(segmented: Segmented) -> Compact:
    return (
        tuple((c.start, c.end, c.text, c.sentence) for c in segmented.claims),
        segmented.sentences,
        tuple((s.start, s.end, str(s.reason)) for s in segmented.skipped),
    )


def _restore(compact: Compact) -> Segmented:
    claims, sentences, skipped = compact
    return Segmented(
        tuple(ClaimSpan(*c) for c in claims),
        sentences,
        tuple(Skipped(start, end, SkipReason(reason)) for start, end, reason in skipped),
    )


def _segment_compact(rules: Rules | RulesV2, item: tuple[str, Regions]) -> tuple[Compact | None, Exception | None]:
    """The segmentation of one answer, or what the rules raised on it (so that an error is raised for its own
    answer, not for the first of the answers sent with it)."""
    try:
        return _compact(segment_with(item[0], item[1], rules)), None
    except Exception as exc:  # raised again in the caller's process by SegmentedAhead.take
        return None, exc


def _ignore_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class SegmentedAhead:
    """The segmentations of ``items`` (``(answer pk, text, spans)``, in the order the caller will ask for them),
    made by a worker process ahead of the caller.

    :meth:`take` returns the segmentation of one answer; answers skipped by the caller are passed over. Raises
    what the rules raised, for the answer they raised on.
    """

    def __init__(self, rules: Rules | RulesV2, items: Sequence[tuple[int, str, Regions]]) -> None:
        self._rules = rules
        self._items = items
        self._order = {pk: i for i, (pk, _, _) in enumerate(items)}
        self._next = 0
        self._pool: Pool | None = None
        self._results: Iterator[tuple[Compact | None, Exception | None]] = iter(())

    def __enter__(self) -> SegmentedAhead:
        context = multiprocessing.get_context("fork")
        self._pool = context.Pool(1, initializer=_ignore_interrupts)
        work = partial(_segment_compact, self._rules)
        self._results = self._pool.imap(work, [(text, regions) for _, text, regions in self._items], CHUNK)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if exc_type is None and self._next == len(self._items):
            pool.close()
        else:
            pool.terminate()  # stopped early: what the worker still has to do is not needed
        pool.join()

    def take(self, answer_pk: int, text: str, regions: Sequence[tuple[int, int]]) -> Segmented:
        """The segmentation of one answer: the worker's, or made here when the answer was not handed out as it
        is now."""
        position = self._order.get(answer_pk)
        if position is None or position < self._next:
            return segment_with(text, regions, self._rules)
        while self._next < position:  # answers the caller left alone
            next(self._results)
            self._next += 1
        compact, error = next(self._results)
        self._next += 1
        _, handed_text, handed_regions = self._items[position]
        if handed_text != text or handed_regions != tuple(regions):
            return segment_with(text, regions, self._rules)
        if error is not None:
            raise error
        assert compact is not None
        return _restore(compact)
