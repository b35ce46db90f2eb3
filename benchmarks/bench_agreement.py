"""Agreement bootstrap at 100 000 edges: citeaudit's ``agreement()`` against an edge-level gather doing equal work.

Synthetic labels for two raters on 100 000 edges in 20 000 answers (5 edges each). citeaudit is timed as a user
calls it: ``citeaudit.core.agreement.agreement(pairs, resamples=B)``, which draws the answers of each resample, counts
how often each answer was drawn and pools per-answer 5 × 5 confusion matrices with one matrix product per batch,
then computes eight statistics on every resample and a BCa interval for each. The baseline does the same work the
obvious way: the same draws (the same generator, seed and batches), the edges of the drawn answers gathered and
their confusion matrix rebuilt with ``np.bincount`` one resample at a time, the same eight statistics on every
resample and the same BCa intervals. Both must give identical intervals for every statistic (checked), so the
work is equal; the ratio of the medians is the figure.

Target: ``agreement()`` takes at most the baseline's time (ratio <= 1.0).

Run: make bench   (or: python benchmarks/bench_agreement.py [--edges N] [--per-answer K] [--resamples B])
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from citeaudit.core.agreement import _STATISTICS, LABELS, _gwet_over, agreement
from citeaudit.core.raters import LabelPairs
from citeaudit.core.stats import Interval, _bca

_K = len(LABELS)


def edge_level_intervals(
    a: np.ndarray, b: np.ndarray, answer: np.ndarray, resamples: int, seed: int, batch: int = 1000
) -> dict[str, Interval]:
    """The intervals ``agreement()`` reports, by gathering the edges of every resample (the baseline)."""
    used = np.zeros(_K, dtype=bool)
    used[a] = used[b] = True
    stats = {**_STATISTICS, "gwet_ac1": _gwet_over(used)}
    clusters = int(answer.max()) + 1
    cell = a * _K + b
    order = np.argsort(answer, kind="stable")
    sizes = np.bincount(answer, minlength=clusters)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    rng = np.random.default_rng(seed)
    distributions = {name: np.empty(resamples) for name in stats}
    step = max(1, min(batch, (1 << 24) // clusters))  # the batches agreement() draws in
    for start in range(0, resamples, step):
        size = min(step, resamples - start)
        index = rng.integers(0, clusters, (size, clusters))
        pooled = np.empty((size, _K * _K))
        for r, drawn in enumerate(index):
            lengths = sizes[drawn]
            first = np.repeat(starts[drawn] - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
            edges = order[first + np.arange(lengths.sum())]
            pooled[r] = np.bincount(cell[edges], minlength=_K * _K)
        for name, statistic in stats.items():
            distributions[name][start : start + size] = statistic(pooled)
    per_answer = np.zeros((clusters, _K * _K))
    np.add.at(per_answer, (answer, cell), 1.0)
    total = per_answer.sum(axis=0)
    intervals = {}
    for name, statistic in stats.items():
        estimate = float(statistic(total[None, :])[0])
        values = distributions[name]
        defined = np.isfinite(values)
        note = None
        if not defined.all():
            note = f"{int((~defined).sum())} of {resamples} resamples left out (statistic undefined on them)"
        jackknife = statistic(total[None, :] - per_answer)
        intervals[name] = _bca(values[defined], estimate, jackknife, 0.95, clusters, resamples, note)
    return intervals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", type=int, default=100_000)
    parser.add_argument("--per-answer", type=int, default=5)
    parser.add_argument("--resamples", type=int, default=1_999)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(2026)
    n = args.edges
    clusters = n // args.per_answer
    a = rng.choice(_K, n, p=[0.45, 0.25, 0.1, 0.15, 0.05])
    b = np.where(rng.random(n) < 0.75, a, rng.choice(_K, n))
    # answers listed in a shuffled order, as a database returns edges
    answer = rng.permutation(np.repeat(np.arange(clusters), args.per_answer)[:n])
    # zero-padded ids sort as the numbers do, so agreement()'s cluster order is the baseline's
    pairs = LabelPairs(tuple(LABELS[x] for x in a), tuple(LABELS[x] for x in b), tuple(f"a{c:07d}" for c in answer))

    ours_times, base_times = [], []
    result = reference = None
    for _ in range(args.repeat):  # alternating, so a change in the machine's load falls on both
        start = time.perf_counter()
        result = agreement(pairs, resamples=args.resamples, seed=1)
        ours_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        reference = edge_level_intervals(a, b, answer, args.resamples, seed=1)
        base_times.append(time.perf_counter() - start)
    assert result is not None
    assert reference is not None
    found = {
        "observed": result.observed.ci,
        "cohen_kappa": result.cohen_kappa.ci,
        "krippendorff_alpha": result.krippendorff_alpha.ci,
        "gwet_ac1": result.gwet_ac1.ci,
        "precision": result.supported.precision.ci,
        "recall": result.supported.recall.ci,
        "f1": result.supported.f1.ci,
        "accuracy": result.supported.accuracy.ci,
    }
    for name, interval in found.items():
        if interval != reference[name]:
            raise SystemExit(f"{name}: agreement() gives {interval}, the edge-level baseline {reference[name]}")
    ours, base = statistics.median(ours_times), statistics.median(base_times)
    kappa = result.cohen_kappa
    assert kappa.ci is not None
    assert kappa.value is not None
    print(
        f"agreement bootstrap, {n:,} edges in {clusters:,} answers, 8 statistics with BCa intervals over "
        f"{args.resamples:,} resamples, median of {args.repeat} (same draws; all 8 intervals identical):"
    )
    print(f"  agreement() (pooled per-answer counts)        {ours:7.2f} s")
    print(f"  edge-level gather + bincount per resample      {base:7.2f} s")
    print(f"  kappa {kappa.value:.4f} [{kappa.ci.low:.4f}, {kappa.ci.high:.4f}]")
    ratio = ours / base
    print(f"target: agreement() <= 1.0x the edge-level baseline ({ratio:.2f}x): {'met' if ratio <= 1.0 else 'not met'}")


if __name__ == "__main__":
    import machine

    machine.run(main)
