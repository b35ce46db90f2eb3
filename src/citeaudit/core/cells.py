"""Scores from cells: the counts per (group, question, severity) that an engine's one pass returns.

:func:`citeaudit.core.convention_sql.cells_sql` reduces any number of citation locations to a few cells; this
module adds them up into the same :class:`ScoreResult` the in-memory path gives (groups, whole scope,
severity breakdown, weighted coverage) and draws the interval of each scope from its per-question cells.

Notes: every metric is undefined exactly when its denominator is 0, and its value is then ``None``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from citeaudit.core.convention_sql import CELL_COUNTS
from citeaudit.core.intervals import metric_intervals_of_scopes
from citeaudit.core.model import Label, Severity
from citeaudit.core.results import (
    EdgeCounts,
    Metric,
    RequiredCounts,
    ScopeScore,
    ScoreResult,
    SeverityScore,
    WeightedMetric,
)
from citeaudit.core.scoring import IntervalSettings
from citeaudit.core.stats import Interval

__all__ = ["score_cells"]

_COUNT = {name: i for i, name in enumerate(CELL_COUNTS)}
_SEVERITY_ORDER = [str(s) for s in Severity] + ["none"]
_INTERVAL_COLUMNS = [_COUNT[n] for n in ("supported", "edges", "covered", "pairs", "official", "answers")]


def _order_key(values: tuple[Any, ...]) -> tuple[tuple[bool, str], ...]:
    # the in-memory path's group order: by values, None first
    return tuple((v is not None, v or "") for v in values)


def score_cells(
    cells: Mapping[str, Sequence[Any]],
    *,
    by: Sequence[str],
    scoring: str,
    fingerprint: str,
    weighted: bool,
    ci: IntervalSettings | None = None,
) -> ScoreResult:
    """A result from the columns of a cells query (``cells_sql`` with the same ``by``).

    ``weighted`` says whether the protocol declares weights (then weighted coverage is reported)."""
    by = tuple(dict.fromkeys(by))
    n_cells = len(cells["question"])
    counts = np.array([[int(v or 0) for v in cells[name]] for name in CELL_COUNTS], dtype=np.int64).T
    counts = counts.reshape(n_cells, len(CELL_COUNTS))
    weights = np.array(
        [[float(v or 0.0) for v in cells[name]] for name in ("weighted_pairs", "weighted_covered")], dtype=np.float64
    ).T.reshape(n_cells, 2)
    group_values = [tuple(cells[d][i] for d in by) for i in range(n_cells)]
    keys = sorted(set(group_values), key=_order_key)
    group_index = {key: g for g, key in enumerate(keys)}
    cell_group = np.array([group_index[v] for v in group_values], dtype=np.int64)
    severities = [str(s) if s is not None else None for s in cells["severity"]]
    questions = [str(q) for q in cells["question"]]

    masks = [cell_group == g for g in range(len(keys))] if by else []
    masks.append(np.ones(n_cells, dtype=np.bool_))
    found: list[tuple[Interval, Interval, Interval]] = []
    if ci is not None:
        # one matrix of per-question counts per scope; scopes with the same questions share their resamples
        per_scope = []
        for in_scope in masks:
            chosen = np.flatnonzero(in_scope)
            names = sorted({questions[i] for i in chosen})
            row_of = {q: r for r, q in enumerate(names)}
            per_question = np.zeros((len(names), len(_INTERVAL_COLUMNS)), dtype=np.int64)
            np.add.at(per_question, [row_of[questions[i]] for i in chosen], counts[chosen][:, _INTERVAL_COLUMNS])
            per_scope.append((per_question, names))
        found = metric_intervals_of_scopes(per_scope, level=ci.level, resamples=ci.resamples, seed=ci.seed)

    def scope(scope_index: int, group: tuple[tuple[str, Any], ...]) -> ScopeScore:
        in_scope = masks[scope_index]
        total = counts[in_scope].sum(axis=0)
        weighted_total = weights[in_scope].sum(axis=0)
        severity = {}
        for name in _SEVERITY_ORDER:
            rows = in_scope & np.array([s == name for s in severities], dtype=np.bool_)
            part = counts[rows].sum(axis=0)
            if part[_COUNT["edges"]] or part[_COUNT["pairs"]]:
                severity[name] = SeverityScore(
                    precision=Metric(int(part[_COUNT["supported"]]), int(part[_COUNT["edges"]])),
                    coverage=Metric(int(part[_COUNT["covered"]]), int(part[_COUNT["pairs"]])),
                )
        intervals: Sequence[Interval | None] = found[scope_index] if found else (None, None, None)
        pending = int(total[_COUNT["pending"]] + total[_COUNT["disputed"]])
        return ScopeScore(
            by=group,
            answers=int(total[_COUNT["answers"]]),
            provisional=pending > 0,
            precision=Metric(int(total[_COUNT["supported"]]), int(total[_COUNT["edges"]]), intervals[0]),
            coverage=Metric(int(total[_COUNT["covered"]]), int(total[_COUNT["pairs"]]), intervals[1]),
            official_rate=Metric(int(total[_COUNT["official"]]), int(total[_COUNT["answers"]]), intervals[2]),
            edges=EdgeCounts(
                unique=int(total[_COUNT["edges"]]),
                locations=int(total[_COUNT["locations"]]),
                pending=pending,
                disputed=int(total[_COUNT["disputed"]]),
                by_label={label: int(total[_COUNT[str(label)]]) for label in Label},
            ),
            required=RequiredCounts(
                pairs=int(total[_COUNT["pairs"]]),
                covered=int(total[_COUNT["covered"]]),
                without_claim=int(total[_COUNT["without_claim"]]),
                without_edge=int(total[_COUNT["without_edge"]]),
                pending=int(total[_COUNT["pending_pairs"]]),
            ),
            severity=severity,
            weighted_coverage=WeightedMetric(float(weighted_total[1]), float(weighted_total[0])) if weighted else None,
        )

    groups = tuple(scope(g, tuple(zip(by, key, strict=True))) for g, key in enumerate(keys)) if by else ()
    return ScoreResult(
        scoring=scoring,
        fingerprint=fingerprint,
        overall=scope(len(masks) - 1, ()),
        group_by=by,
        groups=groups,
    )
