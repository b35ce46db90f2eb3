"""The HTML report at 1 000, 10 000 and 100 000 edges: generation time against `citeaudit score --format json` on
the same database, the file's size, and how fast headless Chromium shows its headline at 10 000 edges.

Each database comes from ``scoring_db.build`` (8 unique edges a claim, 5 platforms, labels from a hash of the row).
`citeaudit report DB` and `citeaudit score DB --format json --ci --by platform` run as processes of their own, in
turn, with the same resamples; their times are the medians of the runs (wall time, the target's, and beside it the
CPU time each used, which a loaded machine moves less). The children may write byte-code caches
(``PYTHONDONTWRITEBYTECODE`` is dropped for them), as an installed package has them, and each command runs once
uncounted first, so neither pays for compiling modules the other has cached. The report holds every edge of its scope
as evidence (a JSON blob listed on demand), so its size grows with the edges.

Opening: Playwright drives /usr/bin/chromium headless; a fresh page loads the report from its file, and the time
is taken from the start of navigation to the moment the headline's cards are visible (and, beside it, the
browser's own first contentful paint). Targets: generation within 2x of `score --format json`; the headline
visible within 3 s at 10 000 edges.

Run: python benchmarks/bench_report.py [--repeat K] [--resamples R] [--keep FOLDER]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import machine
import scoring_db

EDGES = (1_000, 10_000, 100_000)
OPEN_AT = 10_000
GENERATION_RATIO = 2.0
OPEN_SECONDS = 3.0
CHROMIUM = "/usr/bin/chromium"


def _timed(command: list[str]) -> tuple[float, float]:
    """Wall seconds of ``command`` and the CPU seconds (user and system) it used."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, env=machine.installed_env())
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-c", "import sys; from citeaudit.cli import main; sys.exit(main())", *args]


def _generation(db: Path, out: Path, repeat: int, resamples: int) -> tuple[float, float, float, float]:
    """Median wall seconds of `report` and of `score --format json`, run in turn, and their median CPU seconds
    (which a loaded machine moves less than wall time)."""
    report_command = _cli("report", str(db), "--out", str(out), "--resamples", str(resamples))
    score_command = _cli(
        "score", str(db), "--format", "json", "--ci", "--resamples", str(resamples), "--by", "platform"
    )
    _timed(report_command)  # uncounted: byte-code caches written, the file brought into the page cache
    _timed(score_command)
    report, score = [], []
    for _ in range(repeat):
        report.append(_timed(report_command))
        score.append(_timed(score_command))
    return (
        statistics.median(r[0] for r in report),
        statistics.median(s[0] for s in score),
        statistics.median(r[1] for r in report),
        statistics.median(s[1] for s in score),
    )


def _opening(page_path: Path, repeat: int) -> tuple[float, float]:
    """Median seconds until the headline is visible, and the browser's first contentful paint (seconds)."""
    from playwright.sync_api import sync_playwright

    visible, painted = [], []
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"], headless=True)
        for _ in range(repeat):
            page = browser.new_page()
            start = time.perf_counter()
            page.goto(page_path.as_uri(), wait_until="commit")
            page.wait_for_selector("#headline .card", state="visible")
            visible.append(time.perf_counter() - start)
            page.wait_for_load_state("load")
            fcp = page.evaluate(
                "() => { const e = performance.getEntriesByName('first-contentful-paint')[0];"
                " return e ? e.startTime : null; }"
            )
            painted.append((fcp or 0.0) / 1000)
            page.close()
        browser.close()
    return statistics.median(visible), statistics.median(painted)


def main() -> None:
    """Measure, print one line per size, then the verdict."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--keep", type=Path, default=None, help="Folder to keep the databases and reports in.")
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():  # refused before minutes of generation, not with a traceback after them
        print(
            f"bench_report: no Chromium at {CHROMIUM}, which times the report's opening: install Debian's chromium "
            "(apt-get install chromium) and run it again",
            file=sys.stderr,
        )
        print("not met")  # the opening target cannot be shown met
        raise SystemExit(2)
    folder = args.keep or Path(tempfile.mkdtemp(prefix="bench-report-"))
    folder.mkdir(parents=True, exist_ok=True)
    ratios, opened = [], None
    for edges in EDGES:
        db = folder / f"report-{edges}.db"
        if not db.exists():
            scoring_db.build(db, edges * 5 // 4)  # 4 unique edges in 5 citation locations
        out = folder / f"report-{edges}.html"
        report, score, report_cpu, score_cpu = _generation(db, out, args.repeat, args.resamples)
        ratios.append(report / score)
        size = out.stat().st_size
        print(
            f"{edges:>7} edges: report {report:6.2f} s, score --format json {score:6.2f} s, "
            f"ratio {report / score:4.2f}x (CPU {report_cpu:5.2f} s against {score_cpu:5.2f} s, "
            f"{report_cpu / score_cpu:4.2f}x); file {size / 1_048_576:6.1f} MiB ({size / edges:5.0f} bytes an edge)",
            flush=True,
        )
        if edges == OPEN_AT:
            opened = _opening(out, args.repeat)
            print(
                f"{edges:>7} edges: headline visible in Chromium after {opened[0]:.2f} s "
                f"(first contentful paint {opened[1]:.2f} s)",
                flush=True,
            )
    met = all(r <= GENERATION_RATIO for r in ratios) and opened is not None and opened[0] <= OPEN_SECONDS
    print(
        f"targets: generation within {GENERATION_RATIO}x of score (worst {max(ratios):.2f}x), headline within "
        f"{OPEN_SECONDS} s at {OPEN_AT} edges ({'—' if opened is None else f'{opened[0]:.2f} s'})"
    )
    print("met" if met else "not met")


if __name__ == "__main__":
    machine.run(main)
