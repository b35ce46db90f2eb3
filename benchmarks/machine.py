"""What every benchmark says about the machine it ran on: the load average at its start and at its end, the
commit it measured, and the date.

A benchmark's ``__main__`` calls :func:`run` with its ``main``. The first line printed names the commit (with
``+changes`` when the work tree differs from it), the date and the load average; the line before the last gives
the load average at the end, so the last line stays the benchmark's verdict ("met" or "not met"). Figures from
a machine whose load moved a lot between the two are figures from a busy machine.
"""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

_REPO = Path(__file__).resolve().parent.parent


def commit() -> str:
    """The checked-out commit (short hash), ``+changes`` when tracked files differ from it; ``unknown`` outside
    a git checkout."""
    try:
        head = subprocess.run(
            ["git", "-C", str(_REPO), "rev-parse", "--short=10", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(_REPO), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+changes" if dirty else "")


def load() -> str:
    """The 1-, 5- and 15-minute load averages, and the cores this process may use."""
    one, five, fifteen = os.getloadavg()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f} on {cores} cores"


def installed_env() -> dict[str, str]:
    """This process's environment for a timed child that should run as an installed package does: with
    ``PYTHONDONTWRITEBYTECODE`` dropped, so it writes byte-code caches once and reads them after."""
    return {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


class _HoldLastLine:
    """A text stream that passes every complete line through except the latest, which it keeps until the next
    one arrives or :meth:`release` is called, so a line can still be put before it."""

    def __init__(self, target: TextIO) -> None:
        self._target = target
        self._pending = ""

    def write(self, text: str) -> int:
        self._pending += text
        cut = self._pending.rfind("\n", 0, len(self._pending) - 1)
        if cut >= 0:
            self._target.write(self._pending[: cut + 1])
            self._pending = self._pending[cut + 1 :]
        return len(text)

    def flush(self) -> None:
        self._target.flush()

    def release(self, before_last: str) -> None:
        """Write ``before_last`` as a line, then the kept line."""
        last, self._pending = self._pending, ""
        self._target.write(before_last + "\n" + last)
        self._target.flush()

    def __getattr__(self, name: str) -> object:
        return getattr(self._target, name)


def run(main: Callable[[], None]) -> None:
    """Run a benchmark's ``main`` between the machine's two lines (module docstring); a benchmark's own child
    process (``--child``), whose output its parent reads, prints neither."""
    if "--child" in sys.argv:
        main()
        return
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(f"machine: commit {commit()}, {now}, load average at start {load()}", flush=True)
    held = _HoldLastLine(sys.stdout)
    sys.stdout = held  # type: ignore[assignment]
    try:
        main()
    finally:
        sys.stdout = held._target
        held.release(f"machine: load average at end {load()}")
