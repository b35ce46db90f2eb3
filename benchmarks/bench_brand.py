"""`citeaudit score DB --format json` (the scores and the brand figures) against `citeaudit score DB` (the scores
alone) on the same database, in the same run.

Two databases a size: the scoring benchmark's (`scoring_db.build`: one protocol without brand names or competitors,
one text for every claim; its protocol names no brand, so the brand figures are not computed there and what is timed
is the rest of the JSON, misattribution included), and the same rows with what the brand figures read filled in
(`scoring_db.build(..., brand=True)`: a brand and two competitors, answer and claim texts, retrieved citations,
passages and judgement times, judged cross pairs), where the figures list thousands of cases. Both commands run as
processes, alternately, and their medians are compared. Before timing, the JSON is checked against the construction
it replaces (the audit read as model objects, an outcome per edge and the per-object figures, as the database path
built them before), which is also timed, in-process.

Target: `score DB --format json` within 1.5x of the scores alone, at 200 000 edges and at 1 000 000.

Run: python benchmarks/bench_brand.py [--locations N ...] [--repeat K] [--keep FOLDER]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import scoring_db
from citeaudit.scoring.paths import ScoredPath, score_path


def object_construction(db: Path, new: ScoredPath) -> str:
    """The JSON as the database path built it before: the audit in scope as model objects, an outcome per edge,
    then the figures over them."""
    from citeaudit.checks import model_confusion
    from citeaudit.core.brand.figures import brand_figures
    from citeaudit.core.misattribution import misattribution
    from citeaudit.core.scope import Scope, select_audit
    from citeaudit.store import Store
    from citeaudit.store.brand_input import page_snapshots, read_outcomes, source_locations
    from citeaudit.store.cross_pairs import cross_pairs_of, reviews_required

    scope = Scope()
    with Store(db) as store:
        protocol_pk = store.choose_protocol(None, scope)
        chosen = store.effective_protocol(protocol_pk, scope)
        audit, outcomes = read_outcomes(store, chosen, protocol_pk)
        whole = select_audit(audit, scope)[0]
        claims = {c.id for c in whole.claims}
        outcomes = [e for e in outcomes if e.claim_id in claims]
        brand = brand_figures(
            whole,
            model_confusion,
            edges=outcomes,
            snapshots=page_snapshots(store, protocol_pk),
            locations=source_locations(store, protocol_pk),
        )
        cross = misattribution(
            whole, cross_pairs_of(store, protocol_pk), edges=outcomes, reviews_required=reviews_required(store)
        )
    # The brand figures are computed only when the protocol names a brand or competitors (the JSON's `computed`
    # says so); the construction they replace follows the same rule, so both leave them out for such a protocol.
    return dataclasses.replace(new, brand=brand if new.brand is not None else None, misattribution=cross).to_json()


def _process(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def measure(db: Path, repeat: int) -> dict[str, float]:
    """Medians of the two commands run alternately as processes, and the in-process times of both constructions."""
    start = time.perf_counter()
    score_path(db)
    plain_s = time.perf_counter() - start
    start = time.perf_counter()
    new = score_path(db, figures=True)
    body = new.to_json()
    columns_s = time.perf_counter() - start
    start = time.perf_counter()
    before = object_construction(db, new)
    objects_s = plain_s + time.perf_counter() - start
    assert body == before, "the columns' JSON differs from the object construction's"
    script = str(Path(sys.executable).with_name("citeaudit"))
    plain, figures = [script, "score", str(db)], [script, "score", str(db), "--format", "json"]
    _process(plain), _process(figures)  # warm the page cache and the bytecode
    times: dict[str, list[float]] = {"plain": [], "json": []}
    for _ in range(repeat):
        times["plain"].append(_process(plain))
        times["json"].append(_process(figures))
    return {
        "plain_s": statistics.median(times["plain"]),
        "json_s": statistics.median(times["json"]),
        "plain_in_process_s": plain_s,
        "columns_in_process_s": columns_s,
        "objects_in_process_s": objects_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locations", type=int, nargs="+", default=[250_000, 1_250_000])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--keep", type=Path, help="keep the generated databases in this folder")
    parser.add_argument("--shapes", nargs="+", default=["scoring", "brand"], choices=["scoring", "brand"])
    args = parser.parse_args()
    print(
        f"score DB --format json against score DB, processes alternately, median of {args.repeat}; "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    verdicts = []
    with tempfile.TemporaryDirectory() as folder:
        root = args.keep or Path(folder)
        root.mkdir(parents=True, exist_ok=True)
        for n_locations, shape in [(n, shape) for n in args.locations for shape in args.shapes]:
            db = root / f"{shape}-{n_locations}.db"
            if not db.exists():
                scoring_db.build(db, n_locations, brand=shape == "brand")
            sizes = scoring_db.sizes(n_locations)
            found = measure(db, args.repeat)
            ratio = found["json_s"] / found["plain_s"]
            print(
                f"  {shape:7s} {sizes['edges']:>9,} edges ({sizes['answers']:,} answers): scores alone "
                f"{found['plain_s']:.2f} s, "
                f"with the brand figures {found['json_s']:.2f} s ({ratio:.2f}x); in one process: the scores "
                f"{found['plain_in_process_s']:.2f} s, with the figures from columns "
                f"{found['columns_in_process_s']:.2f} s, "
                f"through the object construction they replace {found['objects_in_process_s']:.2f} s (same JSON, "
                f"checked); load average {os.getloadavg()[0]:.1f}",
                flush=True,
            )
            verdicts.append(f"{shape} {sizes['edges']:,} edges {ratio:.2f}x: {'met' if ratio <= 1.5 else 'not met'}")
    print("target: score DB --format json <= 1.5x the scores alone: " + "; ".join(verdicts))


if __name__ == "__main__":
    import machine

    machine.run(main)
