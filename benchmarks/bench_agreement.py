"""Agreement bootstrap at 100 000 edges: pooled per-answer confusion counts vs an edge-level gather per resample.

Synthetic labels for two raters on 100 000 edges in 20 000 answers (5 edges each). citeaudit draws the answers
of each resample, counts how often each answer was drawn and pools per-answer 5 × 5 confusion matrices with one
matrix product per batch (``cluster_bootstrap_counts``). The baseline, measured in the same run on the same
draws, gathers the edges of the drawn answers and rebuilds the confusion matrix with ``np.bincount``, one
resample at a time (already vectorized within a resample). Both must give the same kappa on every resample
(checked). Reported: seconds per 1 000 resamples for each, their ratio, and the whole ``agreement()`` call with
9 999 resamples (eight statistics, BCa) against one ``krippendorff.alpha`` call on the same edges.

Run: make bench   (or: python benchmarks/bench_agreement.py [--edges N] [--per-answer K] [--resamples B])
"""

from __future__ import annotations

import argparse
import statistics
import time

import krippendorff
import numpy as np

from citeaudit.agreement import _STATISTICS, LABELS, LabelPairs, agreement


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", type=int, default=100_000)
    parser.add_argument("--per-answer", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=9_999)
    parser.add_argument("--baseline-resamples", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(2026)
    n = args.edges
    clusters = n // args.per_answer
    a = rng.choice(5, n, p=[0.45, 0.25, 0.1, 0.15, 0.05])
    b = np.where(rng.random(n) < 0.75, a, rng.choice(5, n))
    answer = np.repeat(np.arange(clusters), args.per_answer)[:n]
    cell = a * 5 + b
    per_answer = np.zeros((clusters, 25))
    np.add.at(per_answer, (answer, cell), 1.0)
    kappa = _STATISTICS["cohen_kappa"]

    # the same draws for both: rng.integers(0, C, (B, C)) with one seed
    draws = np.random.default_rng(9).integers(0, clusters, (args.baseline_resamples, clusters))
    sizes = np.bincount(answer, minlength=clusters)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])

    def baseline() -> np.ndarray:
        values = np.empty(len(draws))
        for r, drawn in enumerate(draws):
            lengths = sizes[drawn]
            first = np.repeat(starts[drawn] - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
            edges = first + np.arange(lengths.sum())
            values[r] = kappa(np.bincount(cell[edges], minlength=25).astype(float)[None, :])[0]
        return values

    def pooled() -> np.ndarray:
        values = np.empty(len(draws))
        for start in range(0, len(draws), 50):
            block = draws[start : start + 50]
            offsets = block + (np.arange(len(block)) * clusters)[:, None]
            drawn = np.bincount(offsets.ravel(), minlength=len(block) * clusters).reshape(len(block), clusters)
            values[start : start + len(block)] = kappa(drawn.astype(float) @ per_answer)
        return values

    ours_times, base_times = [], []
    for _ in range(args.repeat):
        start = time.perf_counter()
        mine = pooled()
        ours_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        reference = baseline()
        base_times.append(time.perf_counter() - start)
    if not np.allclose(mine, reference, rtol=0, atol=1e-12):
        raise SystemExit("pooled counts and the edge-level gather disagree on some resample")
    per_thousand = 1000 / args.baseline_resamples
    ours, base = statistics.median(ours_times) * per_thousand, statistics.median(base_times) * per_thousand
    print(
        f"agreement bootstrap, {n:,} edges in {clusters:,} answers, Cohen's kappa per resample, "
        f"median of {args.repeat} ({args.baseline_resamples} resamples each, same draws, equal values checked):"
    )
    print(f"  pooled per-answer counts (citeaudit)   {ours:7.3f} s per 1 000 resamples")
    print(f"  edge-level gather + bincount (baseline) {base:7.3f} s per 1 000 resamples")
    print(f"  ratio citeaudit / baseline: {ours / base:.2f}x")

    pairs = LabelPairs(tuple(LABELS[x] for x in a), tuple(LABELS[x] for x in b), tuple(f"answer-{c}" for c in answer))
    whole, package = [], []
    for _ in range(args.repeat):
        start = time.perf_counter()
        result = agreement(pairs, resamples=args.resamples, seed=1)
        whole.append(time.perf_counter() - start)
        start = time.perf_counter()
        alpha = krippendorff.alpha(
            reliability_data=np.vstack([a, b]).astype(float),
            value_domain=list(range(5)),
            level_of_measurement="nominal",
        )
        package.append(time.perf_counter() - start)
    if result.krippendorff_alpha.value is None or abs(result.krippendorff_alpha.value - alpha) > 1e-12:
        raise SystemExit("alpha differs from the krippendorff package")
    full, one = statistics.median(whole), statistics.median(package)
    ci = result.cohen_kappa.ci
    assert ci is not None
    print(
        f"  agreement() with {args.resamples:,} resamples, 8 statistics, BCa: {full:6.2f} s "
        f"(kappa {result.cohen_kappa.value:.4f} [{ci.low:.4f}, {ci.high:.4f}])"
    )
    print(f"  one krippendorff.alpha call on the same edges: {one:6.3f} s")
    print(f"  ratio whole agreement() / one krippendorff.alpha call: {full / one:.1f}x")


if __name__ == "__main__":
    main()
