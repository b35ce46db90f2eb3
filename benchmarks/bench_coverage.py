"""Coverage of citeaudit's 95 % cluster-bootstrap intervals for a ratio metric, by number of clusters.

A simulation with known truth: each question (cluster) has a random number of edges (1 + Poisson(4)) and its own
support rate drawn from Beta(2, 1.5) (within-question correlation, as real questions have), so the population
ratio ΣS/ΣE is E[p·m]/E[m] = E[p] = 2/3.5 (edge counts independent of p). Each replication draws C questions,
builds the interval and checks whether it covers 2/3.5. Methods, on the same draws:

- ``bca``: ``citeaudit.core.stats.cluster_bootstrap_ratio`` (what ``score --ci`` prints);
- ``studentized``: bootstrap-t with the delta-method (linearised) standard error of the ratio in every resample,
  ``SE = sqrt(Σ_c (S_c − R·E_c)²) / ΣE`` (the candidate for few clusters);
- ``percentile``: plain percentile, for reference.

Target: every interval printed without a few-clusters caution (``Interval.few_clusters``: fewer than 50 clusters)
covers at least 0.93 (the Monte Carlo SE of a share near 0.95 over 1 000 replications is ≈ 0.007), i.e. coverage
≥ 0.93 at 50 clusters and more. Below 50 the figures show what the caution warns of.

Run: make bench   (or: python benchmarks/bench_coverage.py [--replications N] [--resamples B])
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from citeaudit.core.stats import FEW_CLUSTERS, cluster_bootstrap_ratio

TRUTH = 2 / 3.5
SIZES = (10, 20, 30, 50, 100, 200)


def draw(rng: np.random.Generator, clusters: int) -> tuple[np.ndarray, np.ndarray]:
    edges = 1 + rng.poisson(4, clusters)
    supported = rng.binomial(edges, rng.beta(2, 1.5, clusters))
    return supported.astype(float), edges.astype(float)


def studentized(s: np.ndarray, e: np.ndarray, resamples: int, rng: np.random.Generator) -> tuple[float, float]:
    c = len(e)
    ratio = s.sum() / e.sum()
    se = np.sqrt(((s - ratio * e) ** 2).sum()) / e.sum()
    index = rng.integers(0, c, (resamples, c))
    ss, ee = s[index], e[index]
    ratios = ss.sum(1) / ee.sum(1)
    ses = np.sqrt(((ss - ratios[:, None] * ee) ** 2).sum(1)) / ee.sum(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (ratios - ratio) / ses
    t = t[np.isfinite(t)]
    low_t, high_t = np.quantile(t, [0.975, 0.025])
    return float(ratio - low_t * se), float(ratio - high_t * se)


def percentile(s: np.ndarray, e: np.ndarray, resamples: int, rng: np.random.Generator) -> tuple[float, float]:
    c = len(e)
    index = rng.integers(0, c, (resamples, c))
    low, high = np.quantile(s[index].sum(1) / e[index].sum(1), [0.025, 0.975])
    return float(low), float(high)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=999)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(
        f"95 % intervals of ΣS/ΣE, truth {TRUTH:.4f}; {args.replications} replications × {args.resamples} "
        f"resamples per cluster count (Monte Carlo SE of coverage ≈ {np.sqrt(0.95 * 0.05 / args.replications):.3f})"
    )
    print(f"{'clusters':>8}  {'bca':>6}  {'studentized':>11}  {'percentile':>10}  caution printed")
    worst_uncautioned = 1.0
    start = time.perf_counter()
    for clusters in SIZES:
        hits = {"bca": 0, "studentized": 0, "percentile": 0}
        for _ in range(args.replications):
            s, e = draw(rng, clusters)
            interval = cluster_bootstrap_ratio(s, e, resamples=args.resamples, seed=rng)
            assert interval.low is not None
            assert interval.high is not None
            hits["bca"] += interval.low <= TRUTH <= interval.high
            low, high = studentized(s, e, args.resamples, rng)
            hits["studentized"] += low <= TRUTH <= high
            low, high = percentile(s, e, args.resamples, rng)
            hits["percentile"] += low <= TRUTH <= high
        coverage = {name: count / args.replications for name, count in hits.items()}
        cautioned = clusters < FEW_CLUSTERS
        if not cautioned:
            worst_uncautioned = min(worst_uncautioned, coverage["bca"])
        print(
            f"{clusters:>8}  {coverage['bca']:>6.3f}  {coverage['studentized']:>11.3f}  "
            f"{coverage['percentile']:>10.3f}  {'yes' if cautioned else 'no'}"
        )
    print(f"({time.perf_counter() - start:.0f} s)")
    met = worst_uncautioned >= 0.93
    print(
        f"target: BCa coverage ≥ 0.93 wherever no few-clusters caution is printed (≥ {FEW_CLUSTERS} clusters): "
        f"lowest {worst_uncautioned:.3f} — {'met' if met else 'not met'}"
    )


if __name__ == "__main__":
    import machine

    machine.run(main)
