"""Cluster bootstrap of a ratio: citeaudit vs ``scipy.stats.bootstrap(..., vectorized=True)`` on the same data.

10 000 resamples over 10 000 clusters, BCa, the same seed and batch size, in one run: both must give the
same interval (checked), and the time ratio citeaudit / SciPy is reported. Target: ratio ≤ 1.0.

Run: make bench   (or: python benchmarks/bench_stats.py [--clusters N] [--resamples B])
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import scipy.stats

from citeaudit.core.stats import cluster_bootstrap_ratio


def ratio(numerators: np.ndarray, denominators: np.ndarray, axis: int = -1) -> np.ndarray:
    return numerators.sum(axis=axis) / denominators.sum(axis=axis)  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusters", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(2026)
    denominators = rng.integers(1, 40, args.clusters).astype(float)
    numerators = rng.binomial(denominators.astype(int), rng.beta(4, 3, args.clusters)).astype(float)
    ours, theirs = [], []
    for _ in range(args.repeat):
        start = time.perf_counter()
        mine = cluster_bootstrap_ratio(
            numerators, denominators, resamples=args.resamples, batch=args.batch, seed=np.random.default_rng(9)
        )
        ours.append(time.perf_counter() - start)
        start = time.perf_counter()
        reference = scipy.stats.bootstrap(
            (numerators, denominators),
            ratio,
            paired=True,
            vectorized=True,
            n_resamples=args.resamples,
            batch=args.batch,
            method="BCa",
            rng=np.random.default_rng(9),
        ).confidence_interval
        theirs.append(time.perf_counter() - start)
    if mine.low is None or mine.high is None:
        raise SystemExit("the bootstrap interval is undefined")
    if abs(mine.low - reference.low) > 1e-12 or abs(mine.high - reference.high) > 1e-12:
        raise SystemExit(f"intervals differ: {mine} vs {reference}")
    a, b = statistics.median(ours), statistics.median(theirs)
    print(
        f"cluster bootstrap, {args.resamples:,} resamples over {args.clusters:,} clusters (BCa), "
        f"median of {args.repeat}:"
    )
    print(f"  citeaudit          {a:7.2f} s   interval [{mine.low:.5f}, {mine.high:.5f}]")
    print(f"  scipy.stats        {b:7.2f} s   same interval (checked)")
    print(f"  ratio citeaudit / scipy: {a / b:.2f}x  (target <= 1.0: {'met' if a <= b else 'not met'})")


if __name__ == "__main__":
    import machine

    machine.run(main)
