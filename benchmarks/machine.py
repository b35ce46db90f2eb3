"""What every benchmark says about the machine it ran on: the load average at its start and at its end, the CPU
time the host took from this machine meanwhile (Linux's steal time), the commit it measured, and the date.

A benchmark's ``__main__`` calls :func:`run` with its ``main``. The first line printed names the commit (with
``+changes`` when the work tree differs from it), the date and the load average; the line before the last gives
the load average at the end, so the last line stays the benchmark's verdict ("met" or "not met"). Figures from
a machine whose load moved a lot between the two are figures from a busy machine. On a virtual machine the host
may also take the CPUs away (steal time in ``/proc/stat``): the load average does not show it, yet a process
waiting for a CPU the host took runs slower, so the end line gives it too.
"""

from __future__ import annotations

import ast
import datetime
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

from citeaudit.store.pipeline import usable_cores

_REPO = Path(__file__).resolve().parent.parent


def compiled_modules() -> list[str]:
    """The modules setup.py compiles, by name (read from its ``COMPILED`` list, the one place they are named)."""
    tree = ast.parse((_REPO / "setup.py").read_text(encoding="utf-8"))
    for node in tree.body:
        target = (
            node.target
            if isinstance(node, ast.AnnAssign)
            else (node.targets[0] if isinstance(node, ast.Assign) else None)
        )
        if isinstance(target, ast.Name) and target.id == "COMPILED" and node.value is not None:
            paths = ast.literal_eval(node.value)
            return [path.removeprefix("src/").removesuffix(".py").replace("/", ".") for path in paths]
    raise AssertionError("setup.py names no COMPILED modules")


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
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f} on {usable_cores()} cores"


def stolen() -> float | None:
    """CPU seconds the host took from this (virtual) machine since it started, all CPUs together: the steal
    column of ``/proc/stat``; ``None`` where there is no such file."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = stat.readline().split()
        return int(fields[8]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


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
    steal_before, start = stolen(), time.perf_counter()
    try:
        main()
    finally:
        sys.stdout = held._target
        steal_after, seconds = stolen(), time.perf_counter() - start
        steal = ""
        if steal_before is not None and steal_after is not None:
            cores = usable_cores()
            taken = steal_after - steal_before
            steal = f"; the host took {taken:.1f} s of CPU time ({taken / (seconds * cores):.1%} of {cores} cores)"
        held.release(f"machine: load average at end {load()}{steal}")
