"""Confidence intervals for ratio metrics: a cluster bootstrap over questions (BCa, percentile fallback).

Precision, coverage and the official-domain rate are ratio estimators ΣS/ΣE over clusters. Edges within an
answer, and answers to one question, are not independent, so whole clusters are resampled (the outermost
level where correlation is plausible: questions) and the ratio is recomputed from the resampled totals. The
BCa acceleration comes from the leave-one-cluster-out jackknife, which for a ratio has a closed form.

The resampling draws ``rng.integers(0, C, (batch, C))`` per batch, the same draws as
``scipy.stats.bootstrap(..., paired=True, batch=batch, rng=rng)``, so both give the same interval for the
same seed (tested); this one only needs two gathers per batch instead of a generic statistic and a generic
jackknife.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

__all__ = [
    "ASSOCIATED",
    "FEW_CLUSTERS",
    "NOISE",
    "CountStatistic",
    "Difference",
    "Interval",
    "RepeatVariance",
    "cluster_bootstrap_counts",
    "cluster_bootstrap_ratio",
    "few_clusters_caution",
    "holm",
    "paired_ratio_difference",
    "reading",
    "repeat_variance",
]

_NORMAL = NormalDist()

FEW_CLUSTERS = 50
"""Below this many clusters a bootstrap interval's coverage falls short of its level (simulated: a 95 % interval
covers about 0.92–0.93 at 30 clusters; ``benchmarks/bench_coverage.py``), so intervals say so."""


def few_clusters_caution(clusters: int, level: float) -> str | None:
    """The caution printed beside an interval over fewer than :data:`FEW_CLUSTERS` clusters, else ``None``."""
    if clusters >= FEW_CLUSTERS or clusters == 0:
        return None
    return (
        f"only {clusters} clusters: a {level:.0%} bootstrap interval covers less often than {level:.0%} below "
        f"{FEW_CLUSTERS} clusters (read it as narrower than it should be)"
    )


@dataclass(frozen=True, slots=True)
class Interval:
    """A confidence interval with how it was made.

    Notes: ``low`` and ``high`` are ``None`` exactly when the estimate is undefined (total denominator 0).
    """

    low: float | None
    """Lower bound."""
    high: float | None
    """Upper bound."""
    level: float
    """Confidence level, e.g. 0.95."""
    method: str
    """``bca``, or ``percentile`` when BCa is degenerate (every resample equals the estimate), or ``none``."""
    clusters: int
    """Clusters resampled (questions with at least one unit in scope)."""
    resamples: int
    """Bootstrap resamples drawn."""
    note: str | None = None
    """Why the method fell back, when it did."""

    @property
    def caution(self) -> str | None:
        """The few-clusters caution (:func:`few_clusters_caution`) when the interval rests on fewer than
        :data:`FEW_CLUSTERS` clusters."""
        return None if self.low is None else few_clusters_caution(self.clusters, self.level)

    def to_dict(self) -> dict[str, object]:
        """The ``ci`` object of a proportion in ``score --format json`` (docs/metrics.md), with ``resamples``,
        ``note`` and ``caution``."""
        body: dict[str, object] = {
            "low": self.low,
            "high": self.high,
            "level": self.level,
            "method": self.method,
            "clusters": self.clusters,
            "resamples": self.resamples,
        }
        if self.note:
            body["note"] = self.note
        if self.caution:
            body["caution"] = self.caution
        return body


def _check(level: float, resamples: int, batch: int) -> None:
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1 (got {level!r})")
    if resamples < 2:
        raise ValueError(f"resamples must be at least 2 (got {resamples!r})")
    if batch < 1:
        raise ValueError(f"batch must be at least 1 (got {batch!r})")


def _percentile_of_score(values: npt.NDArray[np.float64], score: float) -> float:
    # ties count half, as scipy's BCa does
    return float((np.count_nonzero(values < score) + np.count_nonzero(values <= score)) / (2 * len(values)))


def cluster_bootstrap_ratio(
    numerators: npt.ArrayLike,
    denominators: npt.ArrayLike,
    *,
    level: float = 0.95,
    resamples: int = 9999,
    seed: int | np.random.Generator = 0,
    batch: int = 1000,
) -> Interval:
    """BCa interval of ΣS/ΣE from per-cluster totals ``S_c`` (numerators) and ``E_c`` (denominators).

    Clusters with ``E_c == 0`` carry no information about the ratio and are left out before resampling.
    Resamples whose total denominator is 0 cannot occur once those are gone. Falls back to the percentile
    interval, and says so, when BCa is degenerate.
    """
    _check(level, resamples, batch)
    s = np.asarray(numerators, dtype=np.float64)
    e = np.asarray(denominators, dtype=np.float64)
    if s.shape != e.shape or s.ndim != 1:
        raise ValueError(f"numerators and denominators must be 1-D and equally long (got {s.shape} and {e.shape})")
    keep = e > 0
    s, e = s[keep], e[keep]
    clusters = len(e)
    if clusters == 0:
        return Interval(None, None, level, "none", 0, 0, "undefined: no units in scope")
    estimate = float(s.sum() / e.sum())
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    distribution = np.empty(resamples, dtype=np.float64)
    for start in range(0, resamples, batch):
        size = min(batch, resamples - start)
        index = rng.integers(0, clusters, (size, clusters))
        distribution[start : start + size] = s[index].sum(axis=1) / e[index].sum(axis=1)
    # Leave-one-cluster-out ratios: the jackknife for the acceleration, in closed form.
    jackknife = (s.sum() - s) / (e.sum() - e) if clusters > 1 else np.zeros(1)
    return _bca(distribution, estimate, jackknife, level, clusters, resamples)


def _bca(
    distribution: npt.NDArray[np.float64],
    estimate: float,
    jackknife: npt.NDArray[np.float64],
    level: float,
    clusters: int,
    resamples: int,
    note: str | None = None,
) -> Interval:
    """BCa interval from a bootstrap distribution and leave-one-cluster-out values; percentile (and why) when
    BCa is degenerate or undefined."""
    alpha = (1 - level) / 2

    def percentile(reason: str) -> Interval:
        low, high = np.quantile(distribution, [alpha, 1 - alpha])
        joined = f"{note}; {reason}" if note else reason
        return Interval(float(low), float(high), level, "percentile", clusters, resamples, joined)

    if clusters < 2 or np.all(distribution == distribution[0]):
        return percentile(
            "degenerate bootstrap distribution (every resample gives the same ratio): percentile interval"
        )
    if not np.all(np.isfinite(jackknife)):
        return percentile("a leave-one-cluster-out value is undefined, so BCa is undefined: percentile interval")
    deviation = jackknife.mean() - jackknife
    spread = float(np.sum(deviation**2))
    acceleration = float(np.sum(deviation**3)) / (6 * spread**1.5) if spread > 0 else 0.0
    share = _percentile_of_score(distribution, estimate)
    if not 0 < share < 1:
        return percentile(
            "the estimate lies outside the bootstrap distribution, so BCa is undefined: percentile interval"
        )
    bias = _NORMAL.inv_cdf(share)
    levels = []
    for z in (_NORMAL.inv_cdf(alpha), _NORMAL.inv_cdf(1 - alpha)):
        shifted = bias + z
        levels.append(_NORMAL.cdf(bias + shifted / (1 - acceleration * shifted)))
    low, high = np.quantile(distribution, levels)
    return Interval(float(low), float(high), level, "bca", clusters, resamples, note)


CountStatistic = Callable[[npt.NDArray[np.float64]], npt.NDArray[np.float64]]
"""Maps rows of pooled count vectors, shape ``(r, k)``, to one value per row (NaN where undefined)."""


def cluster_bootstrap_counts(
    counts: npt.ArrayLike,
    statistics: Mapping[str, CountStatistic],
    *,
    level: float = 0.95,
    resamples: int = 9999,
    seed: int | np.random.Generator = 0,
    batch: int = 1000,
    cell_budget: int = 1 << 24,
    progress: Callable[[int], None] | None = None,
) -> dict[str, Interval]:
    """BCa intervals of statistics of pooled counts, resampling whole clusters.

    ``counts`` holds one count vector per cluster, shape ``(C, k)`` (e.g. an answer's flattened confusion
    matrix). Every statistic is a function of the pooled vector ``Σ_c counts[c]``; all of them are computed from
    the same resamples, so their intervals belong together. A resample is drawn as
    ``rng.integers(0, C, (batch, C))`` (the draws of :func:`cluster_bootstrap_ratio`), turned into how often each
    cluster was drawn, and pooled with one matrix product, so the cost is ``O(resamples · C · k)`` with no
    per-resample Python. ``batch`` shrinks so that ``batch · C`` stays under ``cell_budget``. ``progress`` is
    called with the number of resamples done after each batch.

    Resamples on which a statistic is undefined are left out of its interval and counted in its note. The
    acceleration comes from the leave-one-cluster-out jackknife ``statistic(total - counts[c])``.

    Notes: a statistic's interval has ``low`` and ``high`` ``None`` when it is undefined on the full sample.
    """
    _check(level, resamples, batch)
    table = np.asarray(counts, dtype=np.float64)
    if table.ndim != 2:
        raise ValueError(f"counts must be 2-D, one row per cluster (got shape {table.shape})")
    clusters = table.shape[0]
    total = table.sum(axis=0)
    estimates = {name: float(statistic(total[None, :])[0]) for name, statistic in statistics.items()}
    if clusters == 0:
        return {name: Interval(None, None, level, "none", 0, 0, "undefined: no units") for name in statistics}
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    distributions = {name: np.empty(resamples, dtype=np.float64) for name in statistics}
    # Clusters with equal count vectors pool alike: draws are counted per distinct vector, and the product runs
    # over those (an answer of a few edges has one of few confusion vectors). Sums of whole counts are exact in
    # any order, so the pooled vectors, and every statistic of them, are the same as cluster by cluster.
    whole = bool(np.all(table == np.floor(table))) and float(np.abs(table).sum()) < 2.0**52
    if whole:
        kinds, kind_of = np.unique(table, axis=0, return_inverse=True)
        kind_of = kind_of.reshape(-1)
    else:  # fractional counts: pooled cluster by cluster, in one order
        kinds, kind_of = table, np.arange(clusters)
    n_kinds = len(kinds)
    step = max(1, min(batch, cell_budget // clusters))
    for start in range(0, resamples, step):
        size = min(step, resamples - start)
        index = rng.integers(0, clusters, (size, clusters))
        # how often each kind of cluster was drawn, per resample: one bincount over row-offset indices
        offsets = kind_of[index]
        offsets += (np.arange(size, dtype=np.int64) * n_kinds)[:, None]
        drawn = np.bincount(offsets.ravel(), minlength=size * n_kinds).reshape(size, n_kinds)
        pooled = drawn.astype(np.float64) @ kinds
        for name, statistic in statistics.items():
            distributions[name][start : start + size] = statistic(pooled)
        if progress is not None:
            progress(size)
    jackknife_totals = total[None, :] - table
    intervals = {}
    for name, statistic in statistics.items():
        estimate = estimates[name]
        if not np.isfinite(estimate):
            intervals[name] = Interval(None, None, level, "none", clusters, resamples, "undefined on the sample")
            continue
        values = distributions[name]
        defined = np.isfinite(values)
        note = None
        if not defined.all():
            note = f"{int((~defined).sum())} of {resamples} resamples left out (statistic undefined on them)"
            values = values[defined]
        if len(values) == 0:
            intervals[name] = Interval(None, None, level, "none", clusters, resamples, note)
            continue
        jackknife = statistic(jackknife_totals) if clusters > 1 else np.zeros(1)
        intervals[name] = _bca(values, estimate, jackknife, level, clusters, resamples, note)
    return intervals


@dataclass(frozen=True, slots=True)
class Difference:
    """B − A for a ratio metric measured on the same clusters (questions), paired.

    Notes: every field but ``clusters`` is ``None`` when either ratio is undefined (total denominator 0).
    """

    a: float | None
    """The ratio in A."""
    b: float | None
    """The ratio in B."""
    delta: float | None
    """``b - a``."""
    low: float | None
    """Lower bound of the paired cluster-bootstrap percentile interval of ``delta``."""
    high: float | None
    """Upper bound."""
    p_value: float | None
    """Two-sided sign-flip permutation p-value: ``(1 + #{|δ*| ≥ |δ|}) / (1 + N)``."""
    mde: float | None
    """Minimum detectable effect at 80 % power and the interval's level, from the bootstrap SE of ``delta``."""
    level: float
    """Confidence level."""
    clusters: int
    """Questions paired."""
    resamples: int
    """Bootstrap resamples and permutations drawn (each)."""
    informative: int = 0
    """Clusters whose A and B totals differ: the only ones a sign flip can move."""

    @property
    def smallest_p(self) -> float:
        """The smallest p-value the sign-flip test can reach, ``2 / 2**informative`` (capped at 1): the observed
        pattern and its mirror image are always at least as extreme."""
        return min(1.0, 2.0 ** (1 - self.informative))

    @property
    def wording(self) -> str:
        """How the difference may be described on its own (one test, no adjustment): never causal."""
        return reading(self, self.p_value)

    def to_dict(self) -> dict[str, object]:
        """JSON form ``{a, b, delta, ci: {low, high}, p_value, mde}`` plus the method details."""
        return self.described(self.wording)

    def described(self, wording: str) -> dict[str, object]:
        """JSON form with a wording decided by the caller (e.g. from a Holm-adjusted p-value)."""
        return {
            "a": self.a,
            "b": self.b,
            "delta": self.delta,
            "ci": {
                "low": self.low,
                "high": self.high,
                "level": self.level,
                "method": "paired cluster bootstrap (percentile)",
                "clusters": self.clusters,
                "resamples": self.resamples,
                **({"caution": caution} if (caution := few_clusters_caution(self.clusters, self.level)) else {}),
            },
            "p_value": self.p_value,
            "mde": self.mde,
            "informative_clusters": self.informative,
            "wording": wording,
        }


NOISE = "not distinguishable from noise"
"""Wording of a difference the test cannot tell from zero."""
ASSOCIATED = "associated with the run (B vs A), not a measured effect of any one change"
"""Wording of a difference the test tells from zero (never causal)."""


def reading(difference: Difference, p_value: float | None) -> str:
    """How a difference may be described, given the p-value that governs it (raw for one test, Holm-adjusted for
    one of several).

    ``associated …`` needs both the p-value at or below ``1 - level`` and an interval that excludes 0, so the
    printed p-value and the words never disagree. When even the most extreme sign pattern could not reach that
    p-value (too few clusters where A and B differ), the comparison says it is too small to say anything; when
    no cluster differs at all there is nothing to tell from noise.
    """
    if difference.low is None or difference.high is None or difference.delta is None:
        return "undefined"
    alpha = 1 - difference.level
    if difference.informative and difference.smallest_p > alpha:
        return (
            f"too few questions to say anything ({difference.informative} differ between A and B; "
            f"the smallest reachable p-value is {difference.smallest_p:.3f})"
        )
    if p_value is None or p_value > alpha or difference.low <= 0 <= difference.high:
        return NOISE
    return ASSOCIATED


def _ratio_rows(numerators: npt.NDArray[np.float64], denominators: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    with np.errstate(invalid="ignore", divide="ignore"):
        return numerators / denominators


def paired_ratio_difference(
    a: tuple[npt.ArrayLike, npt.ArrayLike],
    b: tuple[npt.ArrayLike, npt.ArrayLike],
    *,
    level: float = 0.95,
    resamples: int = 9999,
    seed: int = 0,
    batch: int = 1000,
) -> Difference:
    """Paired comparison of ΣS/ΣE between A and B over the same clusters (index ``c`` is the same question).

    The bootstrap resamples questions and recomputes both ratios from the same draw; the permutation test swaps
    A and B within each question with probability ½. Neither is a causal estimate.
    """
    _check(level, resamples, batch)
    sa, ea = (np.asarray(x, dtype=np.float64) for x in a)
    sb, eb = (np.asarray(x, dtype=np.float64) for x in b)
    if not (sa.shape == ea.shape == sb.shape == eb.shape) or sa.ndim != 1:
        raise ValueError("A and B need per-cluster totals of the same clusters, as 1-D arrays of one length")
    keep = (ea > 0) | (eb > 0)
    sa, ea, sb, eb = sa[keep], ea[keep], sb[keep], eb[keep]
    clusters = len(sa)
    informative = int(np.count_nonzero((sa != sb) | (ea != eb)))
    if ea.sum() == 0 or eb.sum() == 0:
        return Difference(None, None, None, None, None, None, None, level, clusters, 0, informative)
    ratio_a, ratio_b = float(sa.sum() / ea.sum()), float(sb.sum() / eb.sum())
    delta = ratio_b - ratio_a
    rng = np.random.default_rng(seed)
    deltas = np.empty(resamples, dtype=np.float64)
    flipped = np.empty(resamples, dtype=np.float64)
    for start in range(0, resamples, batch):
        size = min(batch, resamples - start)
        index = rng.integers(0, clusters, (size, clusters))
        deltas[start : start + size] = _ratio_rows(sb[index].sum(1), eb[index].sum(1)) - _ratio_rows(
            sa[index].sum(1), ea[index].sum(1)
        )
        swap = rng.random((size, clusters)) < 0.5
        flipped[start : start + size] = _ratio_rows(
            np.where(swap, sa, sb).sum(1), np.where(swap, ea, eb).sum(1)
        ) - _ratio_rows(np.where(swap, sb, sa).sum(1), np.where(swap, eb, ea).sum(1))
    valid = deltas[np.isfinite(deltas)]
    alpha = (1 - level) / 2
    low, high = (float(v) for v in np.quantile(valid, [alpha, 1 - alpha]))
    extreme = np.count_nonzero(np.abs(flipped[np.isfinite(flipped)]) >= abs(delta) - 1e-12)
    p_value = (1 + int(extreme)) / (1 + int(np.isfinite(flipped).sum()))
    spread = float(np.std(valid, ddof=1)) if len(valid) > 1 else 0.0
    mde = (_NORMAL.inv_cdf(1 - alpha) + _NORMAL.inv_cdf(0.8)) * spread
    return Difference(ratio_a, ratio_b, delta, low, high, p_value, mde, level, clusters, resamples, informative)


def holm(p_values: list[float | None]) -> list[float | None]:
    """Holm–Bonferroni adjusted p-values (``None`` stays ``None``), in the given order."""
    present = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(present):
        running = max(running, min(1.0, (len(present) - rank) * p))
        adjusted[i] = running
    return adjusted


@dataclass(frozen=True, slots=True)
class RepeatVariance:
    """How much a per-answer metric varies between repeats of one question on one platform, and between
    questions.

    Notes: ``within`` is ``None`` when no cell has two defined values; ``between`` when fewer than two cells
    have any.
    """

    cells_with_repeats: int
    """(question, platform, collection) cells with at least two answers whose value is defined."""
    within: float | None
    """Mean within-cell variance of per-answer values (sample variance, ddof 1)."""
    between: float | None
    """Variance of the cell means across cells (ddof 1)."""

    def to_dict(self) -> dict[str, object]:
        """JSON form."""
        return {"cells_with_repeats": self.cells_with_repeats, "within": self.within, "between": self.between}


def repeat_variance(numerators: npt.ArrayLike, denominators: npt.ArrayLike, cells: npt.ArrayLike) -> RepeatVariance:
    """Within- and between-cell variance of per-answer ratios (answers with a zero denominator left out)."""
    s = np.asarray(numerators, dtype=np.float64)
    e = np.asarray(denominators, dtype=np.float64)
    cell = np.asarray(cells, dtype=np.int64)
    defined = e > 0
    values, cell = s[defined] / e[defined], cell[defined]
    if len(values) == 0:
        return RepeatVariance(0, None, None)
    size = int(cell.max()) + 1
    count = np.bincount(cell, minlength=size).astype(np.float64)
    total = np.bincount(cell, weights=values, minlength=size)
    squares = np.bincount(cell, weights=values**2, minlength=size)
    repeated = count >= 2
    within = None
    if repeated.any():
        variance = (squares[repeated] - total[repeated] ** 2 / count[repeated]) / (count[repeated] - 1)
        within = float(np.mean(np.maximum(variance, 0.0)))
    present = count > 0
    means = total[present] / count[present]
    between = float(np.var(means, ddof=1)) if len(means) >= 2 else None
    return RepeatVariance(int(repeated.sum()), within, between)
