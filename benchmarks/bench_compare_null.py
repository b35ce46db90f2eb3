"""How often ``compare`` reads noise as a change: a null simulation of the overall row and its diagnostic.

Each comparison draws A and B from one distribution: for each of the three metrics and each question a rate
(Beta(2, 2)) shared by both sides (questions differ, as real ones do), then each side's units (2–7) and hits
(binomial) independently. Nothing changed between A and B, so every "associated" reading is a false alarm, and so
is the both-lower diagnostic ("check segmentation and document versions first").

Printed on the same draws, beside what the rules give:

- any of the three metrics worded "associated" with the three Holm-adjusted together (what ``compare`` prints),
  and with each metric's own p-value (the rule before the family was adjusted);
- the both-lower diagnostic fired only when both falls are told from noise (what ``compare`` does), and fired on
  point estimates (the rule before).

Target: both printed rates at or below 5 % (the level's complement at 95 %). Last line: ``met`` or ``not met``.

Run: python benchmarks/bench_compare_null.py [--comparisons N] [--questions Q] [--resamples B] [--seed S]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from citeaudit.core.stats import ASSOCIATED
from citeaudit.scoring.comparison import METRICS, SliceComparison, both_lower, compare_totals

TARGET = 0.05


def null_comparison(rng: np.random.Generator, questions: int, resamples: int) -> SliceComparison:
    """A and B drawn from one distribution: per question a support rate (Beta(2, 2)) shared by both sides for each
    metric, then each side's units (2–7) and hits (binomial) drawn independently."""
    sides: tuple[dict[str, tuple[np.ndarray, np.ndarray]], ...] = ({}, {})
    for metric in METRICS:
        rate = rng.beta(2, 2, questions)
        for side in sides:
            units = rng.integers(2, 8, questions)
            side[metric] = (rng.binomial(units, rate).astype(float), units.astype(float))
    return compare_totals(sides[0], sides[1], resamples=resamples, seed=int(rng.integers(0, 2**31)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--comparisons", type=int, default=4000)
    parser.add_argument("--questions", type=int, default=20)
    parser.add_argument("--resamples", type=int, default=999)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    counts = {"adjusted": 0, "unadjusted": 0, "diagnosed": 0, "points": 0}
    per_metric = dict.fromkeys(METRICS, 0)
    started = time.perf_counter()
    for _ in range(args.comparisons):
        overall = null_comparison(rng, args.questions, args.resamples)
        wording = overall.wording
        counts["adjusted"] += any(w == ASSOCIATED for w in wording.values())
        counts["unadjusted"] += any(d.wording == ASSOCIATED for d in overall.metrics.values())
        counts["diagnosed"] += both_lower(overall)
        deltas = [overall.metrics[m].delta for m in ("precision", "coverage")]
        counts["points"] += all(d is not None and d < 0 for d in deltas)
        for metric, difference in overall.metrics.items():
            per_metric[metric] += difference.wording == ASSOCIATED
    elapsed = time.perf_counter() - started
    n = args.comparisons
    se = (TARGET * (1 - TARGET) / n) ** 0.5
    print(
        f"null comparisons: {n} × {args.questions} questions, {args.resamples} resamples, seed {args.seed} "
        f"({elapsed:.1f} s); Monte Carlo SE of a 5 % share: {se:.4f}"
    )
    print("each metric alone, unadjusted: " + ", ".join(f"{m} {per_metric[m] / n:.4f}" for m in METRICS))
    print(f"any metric 'associated', unadjusted (the old rule):     {counts['unadjusted'] / n:.4f}")
    print(f"any metric 'associated', Holm over the three (compare): {counts['adjusted'] / n:.4f}  target ≤ {TARGET}")
    print(f"both lower on point estimates (the old rule):           {counts['points'] / n:.4f}")
    print(f"both lower, each fall told from noise (compare):        {counts['diagnosed'] / n:.4f}  target ≤ {TARGET}")
    met = counts["adjusted"] / n <= TARGET and counts["diagnosed"] / n <= TARGET
    print(f"target (each share <= {TARGET}): {'met' if met else 'not met'}")


if __name__ == "__main__":
    import machine

    machine.run(main)
