"""Every benchmark says what machine it ran on and ends on its verdict (benchmarks/README.md): its ``__main__``
runs ``main`` through ``machine.run``, which prints the commit, the date and the load average first, the load
average at the end on the line before the last, and keeps the benchmark's own last line last."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
SCRIPTS = sorted(BENCHMARKS.glob("bench_*.py"))


def _main_block(tree: ast.Module) -> ast.If | None:
    for node in tree.body:
        if (
            isinstance(node, ast.If)
            and isinstance(node.test, ast.Compare)
            and isinstance(node.test.left, ast.Name)
            and node.test.left.id == "__name__"
        ):
            return node
    return None


def test_there_are_benchmarks() -> None:
    # The Makefile's bench target runs twenty of them; a glob that found none would make the next test vacuous.
    assert len(SCRIPTS) >= 20


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_each_benchmark_runs_through_machine_run(script: Path) -> None:
    block = _main_block(ast.parse(script.read_text(encoding="utf-8")))
    assert block is not None, f"{script.name} has no __main__ block"
    calls = [
        node
        for node in ast.walk(block)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and (node.func.value.id, node.func.attr) == ("machine", "run")
    ]
    assert calls, f"{script.name} does not run its main through machine.run"


def test_machine_run_frames_the_output_and_keeps_the_verdict_last(tmp_path: Path) -> None:
    script = tmp_path / "bench_probe.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import sys
            sys.path.insert(0, {str(BENCHMARKS)!r})
            import machine

            def main():
                print("figure one")
                print("figure two")
                print("target: met")

            machine.run(main)
            """
        ),
        encoding="utf-8",
    )
    lines = subprocess.run(
        [sys.executable, str(script)], check=True, capture_output=True, text=True
    ).stdout.splitlines()
    # 1 line before (commit, date, load), 3 of the benchmark's, 1 after (load at the end) = 5, verdict last.
    assert len(lines) == 5
    assert lines[0].startswith("machine: commit ")
    assert "load average at start" in lines[0]
    assert lines[1:3] == ["figure one", "figure two"]
    assert lines[3].startswith("machine: load average at end ")
    if Path("/proc/stat").exists():  # Linux: the CPU time the host took meanwhile (steal) is said too
        assert re.search(r"; the host took \d+\.\d s of CPU time \(\d+\.\d% of \d+ cores\)$", lines[3]), lines[3]
    assert lines[4] == "target: met"


def test_the_steal_time_is_the_eighth_figure_of_the_cpu_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import machine
    finally:
        sys.path.remove(str(BENCHMARKS))
    import builtins
    import os

    stat = tmp_path / "stat"
    # user nice system idle iowait irq softirq steal guest guest_nice: 250 ticks stolen
    stat.write_text("cpu  100 0 50 9000 10 0 5 250 0 0\ncpu0 50 0 25 4500 5 0 2 125 0 0\n", encoding="ascii")
    opened = builtins.open
    monkeypatch.setattr(builtins, "open", lambda path, *a, **k: opened(stat if path == "/proc/stat" else path, *a, **k))
    assert machine.stolen() == 250 / os.sysconf("SC_CLK_TCK")
    stat.write_text("cpu  100 0 50\n", encoding="ascii")  # an older kernel's line without the column
    assert machine.stolen() is None


def test_a_child_process_prints_no_machine_lines(tmp_path: Path) -> None:
    script = tmp_path / "bench_child.py"
    script.write_text(
        f"import sys\nsys.path.insert(0, {str(BENCHMARKS)!r})\nimport machine\nmachine.run(lambda: print('42'))\n",
        encoding="utf-8",
    )
    done = subprocess.run([sys.executable, str(script), "--child"], check=True, capture_output=True, text=True)
    assert done.stdout == "42\n"


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_each_benchmark_can_say_not_met(script: Path) -> None:
    # A verdict that can only be "met" is no verdict: each benchmark's source holds the words it prints on a miss.
    assert "not met" in script.read_text(encoding="utf-8")


@pytest.mark.parametrize("brand", [False, True], ids=["scoring-shape", "brand-shape"])
def test_bench_brand_check_holds_on_a_small_database(tmp_path: Path, brand: bool) -> None:
    # bench_brand refuses to time anything unless `score DB --format json` equals the object construction it
    # replaced; that check must hold on both of its database shapes, or `make bench` stops there.
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import bench_brand
        import scoring_db
    finally:
        sys.path.remove(str(BENCHMARKS))
    from citeaudit.scoring.paths import score_path

    db = tmp_path / "brand.db"
    scoring_db.build(db, 3_000, brand=brand)
    found = score_path(db, figures=True)
    # The scoring shape's protocol names no brand, so no brand figures; the brand shape names one.
    assert (found.brand is None) is (not brand)
    assert found.to_json() == bench_brand.object_construction(db, found)


def test_bench_scale_files_score_through_duckdb_as_in_memory(tmp_path: Path) -> None:
    # bench_scale writes the export's Parquet layout itself; when the engines read a new column (as they came to
    # read sources.status) its generator must write it, or every engine path of the benchmark fails.
    import argparse

    sys.path.insert(0, str(BENCHMARKS))
    try:
        import bench_scale
    finally:
        sys.path.remove(str(BENCHMARKS))
    bench_scale.write_parquet(20_000, tmp_path)
    args = argparse.Namespace(locations=20_000)
    engine = bench_scale.path_duckdb(tmp_path, args)["counts"]
    in_memory = bench_scale.path_numpy(tmp_path, args)["counts"]
    assert engine == in_memory
    assert engine  # one group per platform, not an empty result
