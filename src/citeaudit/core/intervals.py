"""Intervals of the three headline metrics of one scope from per-question counts (cluster bootstrap).

Every path that scores (the in-memory columns, DuckDB, Spark) reduces its scope to one small vector of counts
per question; the intervals are then computed here, from the same resamples for all three metrics, so that an
interval costs the same however many citation locations were behind the counts.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from citeaudit.core.stats import CountStatistic, Interval, cluster_bootstrap_counts

__all__ = ["QUESTION_COUNTS", "metric_intervals", "metric_intervals_of_scopes"]

QUESTION_COUNTS = ("supported", "edges", "covered", "pairs", "official", "answers")
"""Columns of the per-question count matrix: numerator and denominator of precision, coverage and the
official-domain rate."""


def _ratio(numerator: int, denominator: int) -> CountStatistic:
    def statistic(pooled: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        top, bottom = pooled[:, numerator], pooled[:, denominator]
        out = np.full(len(pooled), np.nan)
        np.divide(top, bottom, out=out, where=bottom > 0)
        return out

    return statistic


_STATISTICS: dict[str, CountStatistic] = {
    "precision": _ratio(0, 1),
    "coverage": _ratio(2, 3),
    "official_rate": _ratio(4, 5),
}


def _clusters(per_question: npt.ArrayLike, question_ids: Sequence[str]) -> tuple[tuple[str, ...], np.ndarray]:
    """The scope's clusters in question-id order: (ids, counts), questions without answers in scope left out."""
    table = np.asarray(per_question, dtype=np.float64).reshape(-1, len(QUESTION_COUNTS))
    if len(question_ids) != len(table):
        raise ValueError(f"{len(question_ids)} question ids for {len(table)} rows of counts")
    order = [row for row in sorted(range(len(table)), key=lambda row: question_ids[row]) if table[row, 5] > 0]
    return tuple(question_ids[row] for row in order), table[np.array(order, dtype=np.int64)] if order else table[:0]


def metric_intervals(
    per_question: npt.ArrayLike, question_ids: Sequence[str], *, level: float, resamples: int, seed: int
) -> tuple[Interval, Interval, Interval]:
    """Intervals of precision, coverage and official-domain rate from a (questions, 6) count matrix in the
    order of :data:`QUESTION_COUNTS`, one row per id of ``question_ids``. Rows are put in question-id order
    first, so every path draws the same resamples whatever order its questions came in; questions with no
    answer in scope are not clusters of the scope and are left out.

    Notes: an interval has ``low`` and ``high`` ``None`` when its metric is undefined (denominator 0)."""
    return metric_intervals_of_scopes([(per_question, question_ids)], level=level, resamples=resamples, seed=seed)[0]


def metric_intervals_of_scopes(
    scopes: Sequence[tuple[npt.ArrayLike, Sequence[str]]], *, level: float, resamples: int, seed: int
) -> list[tuple[Interval, Interval, Interval]]:
    """:func:`metric_intervals` of several scopes at once. Scopes with the same clusters (e.g. platforms that
    each answered every question) share one resampling pass: the draws depend only on the number of clusters
    and the seed, so every interval is exactly the one a pass of its own would give, at a fraction of the cost."""
    prepared = [_clusters(counts, ids) for counts, ids in scopes]
    by_clusters: dict[tuple[str, ...], list[int]] = {}
    for index, (ids, _) in enumerate(prepared):
        by_clusters.setdefault(ids, []).append(index)
    found: dict[int, tuple[Interval, Interval, Interval]] = {}
    width = len(QUESTION_COUNTS)
    for members in by_clusters.values():
        table = np.concatenate([prepared[m][1] for m in members], axis=1)
        statistics = {
            f"{k}:{name}": _ratio(k * width + 2 * position, k * width + 2 * position + 1)
            for k in range(len(members))
            for position, name in enumerate(_STATISTICS)
        }
        intervals = cluster_bootstrap_counts(table, statistics, level=level, resamples=resamples, seed=seed)
        for k, member in enumerate(members):
            found[member] = (
                intervals[f"{k}:precision"],
                intervals[f"{k}:coverage"],
                intervals[f"{k}:official_rate"],
            )
    return [found[index] for index in range(len(scopes))]
