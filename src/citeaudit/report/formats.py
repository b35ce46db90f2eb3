"""Machine-readable results: JSON exactly as DESIGN §6, and CSV with one row per scope."""

from __future__ import annotations

import csv
import io
import json

from citeaudit.model import Label
from citeaudit.results import ScopeScore, ScoreResult

__all__ = ["result_csv", "result_json"]


def result_json(result: ScoreResult, **extra: object) -> str:
    """The result as JSON; ``null`` where a metric is undefined."""
    return json.dumps({**result.to_dict(), **extra}, indent=2, ensure_ascii=False)


_CSV_METRICS = ("precision", "coverage", "official_rate")


def _csv_row(result: ScoreResult, scope: ScopeScore) -> dict[str, object]:
    row: dict[str, object] = {"scoring": result.scoring, "fingerprint": result.fingerprint}
    by = dict(scope.by)
    for name in result.group_by:
        row[name] = by.get(name)
    row["answers"] = scope.answers
    row["provisional"] = scope.provisional
    for name in _CSV_METRICS:
        metric = getattr(scope, name)
        row[name] = metric.value
        row[f"{name}_numerator"] = metric.numerator
        row[f"{name}_denominator"] = metric.denominator
    row.update(
        {
            "edges_unique": scope.edges.unique,
            "edges_locations": scope.edges.locations,
            "edges_collapsed": scope.edges.collapsed,
            "edges_pending": scope.edges.pending,
            "edges_disputed": scope.edges.disputed,
        }
    )
    for label in Label:
        row[f"label_{label}"] = scope.edges.by_label[label]
    row.update({f"required_{k}": v for k, v in scope.required.to_dict().items()})
    return row


def result_csv(result: ScoreResult) -> str:
    """One row per group (or one row for the whole scope); empty cells where a metric is undefined."""
    scopes = result.groups if result.group_by else (result.overall,)
    rows = [_csv_row(result, scope) for scope in scopes]
    buffer = io.StringIO()
    if rows:
        writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return buffer.getvalue()
