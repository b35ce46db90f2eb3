"""Intervals of the three headline metrics of one scope from per-question counts (cluster bootstrap).

Every path that scores (the in-memory columns, DuckDB, Spark) reduces its scope to one small vector of counts
per question; the intervals are then computed here, from the same resamples for all three metrics, so that an
interval costs the same however many citation locations were behind the counts.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from citeaudit.stats import CountStatistic, Interval, cluster_bootstrap_counts

__all__ = ["QUESTION_COUNTS", "metric_intervals"]

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


def metric_intervals(
    per_question: npt.ArrayLike, question_ids: Sequence[str], *, level: float, resamples: int, seed: int
) -> tuple[Interval, Interval, Interval]:
    """Intervals of precision, coverage and official-domain rate from a (questions, 6) count matrix in the
    order of :data:`QUESTION_COUNTS`, one row per id of ``question_ids``. Rows are put in question-id order
    first, so every path draws the same resamples whatever order its questions came in; questions with no
    answer in scope are not clusters of the scope and are left out.

    Notes: an interval has ``low`` and ``high`` ``None`` when its metric is undefined (denominator 0)."""
    table = np.asarray(per_question, dtype=np.float64).reshape(-1, len(QUESTION_COUNTS))
    if len(question_ids) != len(table):
        raise ValueError(f"{len(question_ids)} question ids for {len(table)} rows of counts")
    order = sorted(range(len(table)), key=lambda row: question_ids[row])
    table = table[np.array(order, dtype=np.int64)] if order else table
    table = table[table[:, 5] > 0]
    found = cluster_bootstrap_counts(table, _STATISTICS, level=level, resamples=resamples, seed=seed)
    return found["precision"], found["coverage"], found["official_rate"]
