"""Agreement between two raters on the same edges (docs/statistics.md, "Agreement"): observed agreement, Cohen's
kappa, Krippendorff's alpha (nominal), Gwet's AC1, per-class agreement, the confusion matrix, label prevalence, a
kappa-paradox flag and supported-vs-rest precision / recall / F1 / accuracy taking rater A as gold.

Gwet's AC1 divides its chance agreement by ``q - 1``, so it depends on how many categories count. Counting
labels neither rater ever used inflates it (a constant judge on balanced binary gold reads 0.448 over five labels,
0.2 over the two in use), so by default AC1 counts the labels either rater used, the categories are reported with
the figure, and a study can declare its categories (e.g. all five) instead.

Every coefficient is a function of the 5 × 5 confusion matrix alone (all five labels declared, fixed order), so
the cluster bootstrap over answers pools per-answer confusion matrices
(:func:`citeaudit.core.stats.cluster_bootstrap_counts`) instead of recomputing from edges: one matrix product per batch
of resamples.

With two raters and every unit rated by both, Krippendorff's coincidence matrix is ``C + Cᵀ`` (each unit adds one
ordered pair each way), so ``A_o`` is the observed agreement and ``A_e = Σ_k n_k(n_k - 1) / (2n(2n - 1))`` with
``n_k`` the label's count over both raters. The point estimate is the ``krippendorff`` package's; the closed form
drives the bootstrap and is tested equal to it.

Who the raters are and how their labels are paired is :mod:`citeaudit.core.raters`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import krippendorff
import numpy as np
import numpy.typing as npt

from citeaudit.core.model import Label
from citeaudit.core.raters import LabelPairs
from citeaudit.core.stats import CountStatistic, Interval, cluster_bootstrap_counts

__all__ = [
    "LABELS",
    "PARADOX_KAPPA_BELOW",
    "PARADOX_OBSERVED_AT_LEAST",
    "Agreement",
    "ClassAgreement",
    "Coefficient",
    "SupportedVsRest",
    "agreement",
]

LABELS: tuple[Label, ...] = tuple(Label)
"""Row and column order of the confusion matrix: all five labels, always declared."""

_K = len(LABELS)
_CODE: dict[Label | str, int] = {label: i for i, label in enumerate(LABELS)}
_SUPPORTED = _CODE[Label.SUPPORTED]

PARADOX_OBSERVED_AT_LEAST = 0.80
"""Kappa-paradox rule, first half: the raters agree on at least this share of edges ..."""
PARADOX_KAPPA_BELOW = 0.40
"""... and Cohen's kappa is below this (``fair`` or worse on the Landis–Koch scale) or undefined."""


@dataclass(frozen=True, slots=True)
class Coefficient:
    """One agreement figure with its cluster-bootstrap interval over answers.

    Notes: ``value`` is ``None`` when undefined (see each field of :class:`Agreement`), never NaN.
    """

    value: float | None
    """The estimate on all paired edges."""
    ci: Interval | None = None
    """Cluster-bootstrap interval over answers; ``None`` when no resamples were asked for."""

    def to_dict(self) -> dict[str, object]:
        """JSON form ``{"value", "ci"}``."""
        return {"value": self.value, "ci": None if self.ci is None else self.ci.to_dict()}


@dataclass(frozen=True, slots=True)
class ClassAgreement:
    """Agreement and prevalence of one label.

    Notes: ``specific`` is ``None`` when neither rater used the label (``a + b == 0``); the prevalences are
    ``None`` when there are no paired edges.
    """

    label: Label
    """The label."""
    both: int
    """Edges both raters gave this label (the confusion matrix's diagonal cell)."""
    a: int
    """Edges A gave this label."""
    b: int
    """Edges B gave this label."""
    specific: float | None
    """Specific agreement ``2·both / (a + b)`` (Cicchetti & Feinstein 1990)."""
    prevalence_a: float | None
    """Share of A's labels that are this label, ``a / n``."""
    prevalence_b: float | None
    """Share of B's labels, ``b / n``."""
    prevalence: float | None
    """Pooled share over both raters, ``(a + b) / 2n`` (the ``π_k`` of Gwet's AC1)."""


@dataclass(frozen=True, slots=True)
class SupportedVsRest:
    """``supported`` against every other label, taking A as gold and B as the prediction.

    Notes: precision is undefined when B never says supported (``tp + fp == 0``), recall when A never does
    (``tp + fn == 0``), F1 when neither does (``2tp + fp + fn == 0``), accuracy when ``n == 0``.
    """

    tp: int
    """Both say supported."""
    fp: int
    """B says supported, A does not."""
    fn: int
    """A says supported, B does not."""
    tn: int
    """Neither says supported."""
    precision: Coefficient
    """``tp / (tp + fp)``."""
    recall: Coefficient
    """``tp / (tp + fn)``."""
    f1: Coefficient
    """``2tp / (2tp + fp + fn)``."""
    accuracy: Coefficient
    """``(tp + tn) / n``."""

    def to_dict(self) -> dict[str, object]:
        """JSON form: the four figures and the counts behind them."""
        return {
            "precision": self.precision.to_dict(),
            "recall": self.recall.to_dict(),
            "f1": self.f1.to_dict(),
            "accuracy": self.accuracy.to_dict(),
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "tn": self.tn,
        }


@dataclass(frozen=True, slots=True)
class Agreement:
    """How far two raters agree on the same edges.

    Notes: with ``n`` paired edges, row marginals ``r_k`` (A) and column marginals ``c_k`` (B):
    observed is undefined when ``n == 0``; Cohen's kappa when ``Σ r_k c_k == n²`` (both raters used one and the
    same label throughout, so chance agreement is 1); Krippendorff's alpha when every one of the ``2n`` labels is
    the same (or ``n == 0``); Gwet's AC1 when ``n == 0`` or fewer than two categories count. Undefined values are
    ``None``.
    """

    n: int
    """Paired edges."""
    clusters: int
    """Answers the paired edges belong to (the bootstrap's resampling units)."""
    observed: Coefficient
    """Observed agreement ``p_o = Σ_k C_kk / n``."""
    cohen_kappa: Coefficient
    """``(p_o - p_e) / (1 - p_e)`` with ``p_e = Σ_k r_k c_k / n²`` (each rater's own marginals)."""
    krippendorff_alpha: Coefficient
    """Nominal alpha ``(A_o - A_e) / (1 - A_e)``, ``A_e = Σ_k n_k(n_k - 1) / (2n(2n - 1))``, ``n_k = r_k + c_k``."""
    gwet_ac1: Coefficient
    """``(p_o - p_e) / (1 - p_e)`` with ``p_e = Σ_k π_k(1 - π_k) / (q - 1)``, ``π_k = n_k / 2n``, over the
    ``q`` labels of :attr:`ac1_categories`; undefined when ``q < 2``."""
    confusion: tuple[tuple[int, ...], ...]
    """5 × 5 counts, rows = A's label, columns = B's label, both in :data:`LABELS` order."""
    per_class: tuple[ClassAgreement, ...]
    """One entry per label, in :data:`LABELS` order."""
    supported: SupportedVsRest
    """Supported vs the rest, A as gold."""
    kappa_paradox: str | None
    """Why kappa may mislead here, when the rule of :data:`PARADOX_OBSERVED_AT_LEAST` /
    :data:`PARADOX_KAPPA_BELOW` fires; else ``None``."""
    pairs: LabelPairs
    """The input, with the counts of what was not paired."""
    level: float
    """Confidence level of the intervals."""
    resamples: int
    """Bootstrap resamples (0 = no intervals)."""
    seed: int
    """Random seed of the bootstrap."""
    ac1_categories: tuple[Label, ...] = LABELS
    """The categories Gwet's AC1 counts (its ``q``), in :data:`LABELS` order."""
    ac1_declared: bool = False
    """Whether :attr:`ac1_categories` were declared by the caller (else: the labels either rater used)."""

    def to_dict(self) -> dict[str, object]:
        """JSON form: ``n``, ``observed``, ``cohen_kappa``, ``krippendorff_alpha``, ``gwet_ac1``, ``confusion``,
        ``supported`` and the rest (raters, edges, per-class, prevalence, paradox, bootstrap settings)."""
        return {
            "raters": {"a": self.pairs.rater_a, "b": self.pairs.rater_b, "gold": "a"},
            "n": self.n,
            "clusters": self.clusters,
            "edges": self.pairs.to_dict(),
            "observed": self.observed.to_dict(),
            "cohen_kappa": self.cohen_kappa.to_dict(),
            "krippendorff_alpha": self.krippendorff_alpha.to_dict(),
            "gwet_ac1": {
                **self.gwet_ac1.to_dict(),
                "categories": [str(label) for label in self.ac1_categories],
                "categories_from": "declared" if self.ac1_declared else "used by either rater",
            },
            "confusion": {
                "rows": "a",
                "columns": "b",
                "labels": [str(label) for label in LABELS],
                "counts": [list(row) for row in self.confusion],
            },
            "per_class": {
                str(c.label): {"agreement": c.specific, "both": c.both, "a": c.a, "b": c.b} for c in self.per_class
            },
            "prevalence": {
                str(c.label): {"a": c.prevalence_a, "b": c.prevalence_b, "pooled": c.prevalence} for c in self.per_class
            },
            "kappa_paradox": {
                "flagged": self.kappa_paradox is not None,
                "rule": (
                    f"observed >= {PARADOX_OBSERVED_AT_LEAST:.2f} and cohen_kappa < {PARADOX_KAPPA_BELOW:.2f} "
                    "(or undefined)"
                ),
                "message": self.kappa_paradox,
            },
            "supported": self.supported.to_dict(),
            "bootstrap": {
                "level": self.level,
                "resamples": self.resamples,
                "seed": self.seed,
                "clusters": self.clusters,
                "unit": "answer",
            },
        }


# -- the statistics, vectorized over rows of flattened 5 × 5 confusion matrices --------------------------------


def _parts(
    flat: npt.NDArray[np.float64],
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """(n, diagonal sum, row marginals, column marginals) of each row."""
    matrix = flat.reshape(-1, _K, _K)
    return matrix.sum(axis=(1, 2)), np.trace(matrix, axis1=1, axis2=2), matrix.sum(axis=2), matrix.sum(axis=1)


def _divide(numerator: npt.NDArray[np.float64], denominator: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """``numerator / denominator``, NaN (never a warning) where the denominator is 0."""
    out = np.full(np.broadcast(numerator, denominator).shape, np.nan)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def _observed(flat: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    n, agreed, _, _ = _parts(flat)
    return _divide(agreed, n)


def _cohen(flat: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    # in counts: κ = (n·agreed - Σ r c) / (n² - Σ r c); exact in float64 for integer counts below 2**26
    n, agreed, rows, cols = _parts(flat)
    chance = (rows * cols).sum(axis=1)
    return _divide(n * agreed - chance, n * n - chance)


def _alpha(flat: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    # α = 1 - D_o/D_e = ((2n - 1)·2·agreed - Σ n_k(n_k - 1)) / (2n(2n - 1) - Σ n_k(n_k - 1)), n_k = r_k + c_k
    n, agreed, rows, cols = _parts(flat)
    values = 2 * n
    pooled = rows + cols
    expected = (pooled * (pooled - 1)).sum(axis=1)
    return _divide((values - 1) * 2 * agreed - expected, values * (values - 1) - expected)


def _gwet_over(categories: npt.NDArray[np.bool_]) -> CountStatistic:
    """Gwet's AC1 counting only ``categories`` (a mask over :data:`LABELS`); NaN when fewer than two count."""
    q = int(categories.sum())

    def gwet(flat: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        n, agreed, rows, cols = _parts(flat)
        if q < 2:
            return np.full(len(n), np.nan)
        share = _divide(rows + cols, (2 * n)[:, None])[:, categories]
        chance = (share * (1 - share)).sum(axis=1) / (q - 1)
        return _divide(_divide(agreed, n) - chance, 1 - chance)

    return gwet


_gwet = _gwet_over(np.ones(_K, dtype=bool))


def _supported_counts(
    flat: npt.NDArray[np.float64],
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """(tp, fp, fn, n) of supported-vs-rest with A as gold."""
    matrix = flat.reshape(-1, _K, _K)
    tp = matrix[:, _SUPPORTED, _SUPPORTED]
    return (
        tp,
        matrix[:, :, _SUPPORTED].sum(axis=1) - tp,
        matrix[:, _SUPPORTED, :].sum(axis=1) - tp,
        matrix.sum(axis=(1, 2)),
    )


def _precision(flat: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    tp, fp, _, _ = _supported_counts(flat)
    return _divide(tp, tp + fp)


def _recall(flat: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    tp, _, fn, _ = _supported_counts(flat)
    return _divide(tp, tp + fn)


def _f1(flat: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    tp, fp, fn, _ = _supported_counts(flat)
    return _divide(2 * tp, 2 * tp + fp + fn)


def _accuracy(flat: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    _, fp, fn, n = _supported_counts(flat)
    return _divide(n - fp - fn, n)


_STATISTICS: dict[str, CountStatistic] = {
    "observed": _observed,
    "cohen_kappa": _cohen,
    "krippendorff_alpha": _alpha,
    "gwet_ac1": _gwet,  # replaced per call by the categories in use
    "precision": _precision,
    "recall": _recall,
    "f1": _f1,
    "accuracy": _accuracy,
}


def _value(number: float) -> float | None:
    return float(number) if np.isfinite(number) else None


def _codes(labels: Sequence[Label | str], side: str) -> npt.NDArray[np.int64]:
    """Label codes in :data:`LABELS` order (a ``Label`` hashes as its string, so plain strings work too)."""
    try:
        return np.fromiter(map(_CODE.__getitem__, labels), dtype=np.int64, count=len(labels))
    except KeyError as exc:
        allowed = ", ".join(str(label) for label in LABELS)
        raise ValueError(f"{side}: {exc.args[0]!r} is not a label; labels are {allowed}") from None


def _krippendorff_package(codes_a: npt.NDArray[np.int64], codes_b: npt.NDArray[np.int64]) -> float:
    """Nominal alpha from the ``krippendorff`` package (raters × units, every label in the value domain)."""
    reliability = np.vstack([codes_a, codes_b]).astype(np.float64)
    return float(
        krippendorff.alpha(reliability_data=reliability, value_domain=list(range(_K)), level_of_measurement="nominal")
    )


def _paradox(
    observed: float | None, kappa: float | None, gwet: float | None, per_class: Sequence[ClassAgreement]
) -> str | None:
    if observed is None or observed < PARADOX_OBSERVED_AT_LEAST:
        return None
    if kappa is not None and kappa >= PARADOX_KAPPA_BELOW:
        return None
    common = max(per_class, key=lambda c: c.prevalence or 0.0)
    kappa_text = "undefined (both raters used one label only)" if kappa is None else f"{kappa:.3f}"
    gwet_text = "n/a" if gwet is None else f"{gwet:.3f}"
    return (
        f"kappa paradox: observed agreement {observed:.3f} but Cohen's kappa {kappa_text}. "
        f"{common.prevalence or 0.0:.0%} of all labels are {str(common.label)!r}, so chance agreement is high and "
        f"kappa mostly reflects the rare labels; read Gwet's AC1 ({gwet_text}) and the per-class agreement too"
    )


def agreement(
    pairs: LabelPairs,
    *,
    level: float = 0.95,
    resamples: int = 9999,
    seed: int = 0,
    batch: int = 1000,
    progress: Callable[[int], None] | None = None,
    ac1_categories: Sequence[Label | str] | None = None,
) -> Agreement:
    """Agreement of two raters on paired edges, every coefficient with a cluster-bootstrap interval over answers.

    ``resamples=0`` skips the intervals (``ci`` is then ``None``). ``progress`` is called with the number of
    resamples done after each batch (for a progress bar). ``ac1_categories`` are the categories Gwet's AC1 counts
    (e.g. :data:`LABELS` for the five-label figure); by default the labels either rater used. Raises
    ``ValueError`` for a level outside (0, 1), fewer than 2 resamples (other than 0), a batch below 1, or declared
    categories that leave out a label a rater used.
    """
    if resamples != 0 and resamples < 2:
        raise ValueError(f"resamples must be 0 (no intervals) or at least 2 (got {resamples!r})")
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1 (got {level!r})")
    codes_a, codes_b = _codes(pairs.a, "a"), _codes(pairs.b, "b")
    used = np.zeros(_K, dtype=bool)
    used[codes_a] = used[codes_b] = True
    if ac1_categories is None:
        categories = used
    else:
        categories = np.zeros(_K, dtype=bool)
        categories[_codes(list(ac1_categories), "ac1_categories")] = True
        missing = [str(LABELS[k]) for k in np.flatnonzero(used & ~categories)]
        if missing:
            raise ValueError(f"ac1_categories leave out {missing[0]!r}, which a rater used; declare every label used")
    statistics = {**_STATISTICS, "gwet_ac1": _gwet_over(categories)}
    # sorted answer ids: the same pairs listed in another order resample the same clusters
    answer_ids, cluster = np.unique(np.array(pairs.answers, dtype=str), return_inverse=True)
    clusters = len(answer_ids)
    n = len(codes_a)
    cell = codes_a * _K + codes_b
    # one flattened confusion matrix per answer
    per_answer = np.zeros((clusters, _K * _K), dtype=np.float64)
    np.add.at(per_answer, (cluster.reshape(-1), cell), 1.0)
    total = per_answer.sum(axis=0)
    values = {name: _value(statistic(total[None, :])[0]) for name, statistic in statistics.items()}
    if values["krippendorff_alpha"] is not None:
        values["krippendorff_alpha"] = _krippendorff_package(codes_a, codes_b)
    intervals: dict[str, Interval] = {}
    if resamples:
        intervals = cluster_bootstrap_counts(
            per_answer, statistics, level=level, resamples=resamples, seed=seed, batch=batch, progress=progress
        )

    def coefficient(name: str) -> Coefficient:
        return Coefficient(values[name], intervals.get(name))

    confusion = total.reshape(_K, _K).astype(np.int64)
    rows, cols = confusion.sum(axis=1), confusion.sum(axis=0)
    per_class = tuple(
        ClassAgreement(
            label=label,
            both=int(confusion[k, k]),
            a=int(rows[k]),
            b=int(cols[k]),
            specific=None if rows[k] + cols[k] == 0 else 2 * float(confusion[k, k]) / float(rows[k] + cols[k]),
            prevalence_a=None if n == 0 else float(rows[k]) / n,
            prevalence_b=None if n == 0 else float(cols[k]) / n,
            prevalence=None if n == 0 else float(rows[k] + cols[k]) / (2 * n),
        )
        for k, label in enumerate(LABELS)
    )
    tp = int(confusion[_SUPPORTED, _SUPPORTED])
    fp = int(cols[_SUPPORTED]) - tp
    fn = int(rows[_SUPPORTED]) - tp
    supported = SupportedVsRest(
        tp=tp,
        fp=fp,
        fn=fn,
        tn=n - tp - fp - fn,
        precision=coefficient("precision"),
        recall=coefficient("recall"),
        f1=coefficient("f1"),
        accuracy=coefficient("accuracy"),
    )
    return Agreement(
        n=n,
        clusters=clusters,
        observed=coefficient("observed"),
        cohen_kappa=coefficient("cohen_kappa"),
        krippendorff_alpha=coefficient("krippendorff_alpha"),
        gwet_ac1=coefficient("gwet_ac1"),
        confusion=tuple(tuple(int(x) for x in row) for row in confusion),
        per_class=per_class,
        supported=supported,
        kappa_paradox=_paradox(values["observed"], values["cohen_kappa"], values["gwet_ac1"], per_class),
        pairs=pairs,
        level=level,
        resamples=resamples,
        seed=seed,
        ac1_categories=tuple(label for label, counted in zip(LABELS, categories, strict=True) if counted),
        ac1_declared=ac1_categories is not None,
    )
