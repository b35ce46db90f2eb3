"""Start-up: `citeaudit --help` and `citeaudit score small.audit.json` against a bare `python -c pass`.

Each command is a real process started the way the console script starts it (``from citeaudit.cli import
main; main()``), so interpreter start, imports and the command itself are all counted. The runs of the three
are interleaved (a busy moment hits all of them alike) and each figure is the median of its runs. The
children may write byte-code caches (``PYTHONDONTWRITEBYTECODE`` is dropped for them), as an installed
package has them: the first, uncounted run of each command writes them. The
baseline is the bare interpreter measured in the same invocation; the target is at most 0.3 s over it for
each command.

Run: make bench   (or: python benchmarks/bench_startup.py [--repeat K])
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from importlib import resources

import machine

TARGET_OVER_BARE = 0.3
"""Seconds a command may take beyond the bare interpreter."""

ENTRY = "from citeaudit.cli import main; main()"

# Start-up as installed: with byte-code caches (pip writes them at install; a source checkout writes them on
# first run unless told not to).
_ENV = machine.installed_env()


def _commands() -> dict[str, list[str]]:
    small = resources.files("citeaudit") / "examples" / "four-claim.audit.json"
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "citeaudit --help": [sys.executable, "-c", ENTRY, "--help"],
        "citeaudit score small.audit.json": [sys.executable, "-c", ENTRY, "score", str(small)],
    }


def _time(argv: list[str]) -> tuple[float, float]:
    """Wall-clock seconds of one run, and the CPU seconds (user + system) the process used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_ENV)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=21, help="runs of each command (default 21)")
    args = parser.parse_args()
    commands = _commands()
    for argv in commands.values():  # warm the file cache and write the byte-code caches; not counted
        _time(argv)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(args.repeat):
        for name, argv in commands.items():
            times[name].append(_time(argv))
    medians = {name: statistics.median(wall for wall, _ in values) for name, values in times.items()}
    cpu = {name: statistics.median(used for _, used in values) for name, values in times.items()}
    bare = medians["python -c pass"]
    print(f"{'command':36} {'median s':>9} {'over bare s':>12} {'× bare':>8} {'CPU s':>7} {'CPU over bare':>14}")
    for name, median in medians.items():
        print(
            f"{name:36} {median:9.3f} {median - bare:12.3f} {median / bare:8.1f} "
            f"{cpu[name]:7.3f} {cpu[name] - cpu['python -c pass']:14.3f}"
        )
    # CPU time moves less with other work on the machine than wall time; the target is wall time.
    print(f"runs per command: {args.repeat}, interleaved; load average at the end: {os.getloadavg()[0]:.1f}")
    worst = max(median - bare for name, median in medians.items() if name != "python -c pass")
    verdict = "met" if worst <= TARGET_OVER_BARE else "not met"
    print(f"target: every command ≤ {TARGET_OVER_BARE:.1f} s over bare python (worst {worst:.3f} s): {verdict}")


if __name__ == "__main__":
    machine.run(main)
