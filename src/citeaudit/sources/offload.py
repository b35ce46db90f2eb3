"""When to start a text-extraction worker process beside the fetching loop.

Reading a small page takes the fetching process about half a millisecond to tens of milliseconds; while it
does, the responses that arrive wait. A worker process takes that work off the loop, but it costs the machine
about 0.2 s of CPU to start and some CPU for every page handed over, so it only pays when extraction takes a
real share of the loop's time, some core has idle time to run it, and enough pages are left; never on a machine
with a single core. :class:`WorkerGate` decides that from measurements it is given (it reads no clock and no
counter itself), one window at a time:

* the seconds the loop spent extracting pages in the window, as a share of the window's wall time;
* the idle time of the machine's cores over the same window (:func:`machine_cpu`): on a machine whose cores
  are all busy, a worker takes its share of them from the loop, and measured runs were slower with it;
* the pages still to be read, times the mean extraction time seen so far.

The worker, once started, is handed an HTML page only while it keeps up (a few pages waiting on it at most); every
other page is still read in the loop. So it adds capacity and never makes the loop wait for it (handing it
every page, ``extract_workers=1``, can make it the bottleneck).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

__all__ = ["WorkerGate", "machine_cpu"]


def machine_cpu() -> tuple[float, float] | None:
    """``(idle, total)`` CPU seconds of the whole machine since boot, summed over its cores (``/proc/stat``);
    ``None`` where the kernel does not say."""
    try:
        with open("/proc/stat", "rb") as stat:
            fields = stat.readline().split()
    except OSError:
        return None
    if len(fields) < 6 or fields[0] != b"cpu":
        return None
    ticks = [int(value) for value in fields[1:9]]
    tick = os.sysconf("SC_CLK_TCK")
    # idle + iowait: a core waiting for the disk would run a worker
    return (ticks[3] + ticks[4]) / tick, sum(ticks) / tick


@dataclass
class WorkerGate:
    """Decides, window by window, whether starting an extraction worker would pay (see the module text).

    Feed it with :meth:`extracted` after every page the loop reads itself; when :meth:`due` says a window has
    passed, call :meth:`check` with the time, the machine's CPU counters (:func:`machine_cpu`) and the pages
    left.
    """

    cores: int
    """Cores this process may run on."""
    window: float = 0.5
    """Seconds of wall time over which a share is measured."""
    min_pages: int = 16
    """Pages read in a window at least, for its share to count."""
    share: float = 0.2
    """Share of the window's wall time spent extracting from which a worker is wanted."""
    spare: float = 0.25
    """Idle cores over the window (time idle / window, summed over the cores) needed to run it."""
    min_left: float = 0.5
    """Seconds of extraction still expected (pages left × mean time a page) needed for it to pay."""
    started: bool = field(default=False, init=False)
    """Whether a worker has been asked for (the gate then says no more)."""
    _since: float | None = field(default=None, init=False)
    _cpu: tuple[float, float] | None = field(default=None, init=False)
    _busy: float = field(default=0.0, init=False)
    _pages: int = field(default=0, init=False)
    _all_busy: float = field(default=0.0, init=False)
    _all_pages: int = field(default=0, init=False)
    reasons: list[str] = field(default_factory=list, init=False)
    """Why each window ended as it did (for the benchmark and for tests)."""

    def extracted(self, seconds: float) -> None:
        """One page read in the loop, taking ``seconds``."""
        self._busy += seconds
        self._pages += 1
        self._all_busy += seconds
        self._all_pages += 1

    def due(self, now: float) -> bool:
        """Whether :meth:`check` has something to decide at ``now``."""
        return not self.started and self.cores >= 2 and (self._since is None or now - self._since >= self.window)

    def check(self, now: float, cpu: tuple[float, float] | None, left: int | None) -> bool:
        """End the window at ``now``, given the machine's ``(idle, total)`` CPU seconds then (``None``: unknown,
        taken as idle enough) and the pages still to be read (``None``: unknown): ``True`` when a worker should
        start now (only ever once)."""
        if not self.due(now):
            return False
        since, before, busy, pages = self._since, self._cpu, self._busy, self._pages
        self._since, self._cpu, self._busy, self._pages = now, cpu, 0.0, 0
        if since is None:
            return False  # the first call opens the first window
        verdict = self._verdict(now - since, busy, pages, before, cpu, left)
        self.reasons.append(verdict)
        if verdict == "start":
            self.started = True
        return self.started

    def _verdict(
        self,
        elapsed: float,
        busy: float,
        pages: int,
        before: tuple[float, float] | None,
        after: tuple[float, float] | None,
        left: int | None,
    ) -> str:
        if pages < self.min_pages:
            return f"{pages} pages in the window"
        if busy < self.share * elapsed:
            return f"extraction took {busy / elapsed:.2f} of the time"
        if before is not None and after is not None and after[1] > before[1]:
            idle = self.cores * (after[0] - before[0]) / (after[1] - before[1])
            if idle < self.spare:
                return f"{idle:.2f} idle cores"
        if left is not None and left * self._all_busy / self._all_pages < self.min_left:
            return f"{left} pages left"
        return "start"
