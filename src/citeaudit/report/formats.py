"""Machine-readable results: JSON (each proportion as value, numerator and denominator, docs/metrics.md), and CSV
with one row per scope."""

from __future__ import annotations

import io

from citeaudit.core.model import Label
from citeaudit.core.results import ScopeScore, ScoreResult
from citeaudit.core.scored import result_json
from citeaudit.report.csv_cells import SafeDictWriter

__all__ = ["result_csv", "result_json", "score_row"]


def score_row(result: ScoreResult, scope: ScopeScore, unresolved: int = 0) -> dict[str, object]:
    """One flat row for a scope: group values (``all`` for the whole scope), fractions, counts, and each figure's
    state and pending count (``unresolved`` cited links make the whole scope's official rate provisional)."""
    row: dict[str, object] = {"scoring": result.scoring, "fingerprint": result.fingerprint}
    by = dict(scope.by)
    for name in result.group_by:
        row[name] = by.get(name) if scope.by else "all"
    row["answers"] = scope.answers
    row["provisional"] = scope.provisional
    for name in ("official_rate", "precision", "coverage"):
        metric = getattr(scope, name)
        shown = scope.shown(name, unresolved if scope is result.overall else 0)
        row[name] = metric.value
        row[f"{name}_numerator"] = metric.numerator
        row[f"{name}_denominator"] = metric.denominator
        row[f"{name}_state"] = str(shown.state)
        row[f"{name}_pending"] = shown.pending
    row.update({f"edges_{k}": v for k, v in scope.edges.to_dict().items() if k != "by_label"})
    for label in Label:
        row[f"label_{label}"] = scope.edges.by_label[label]
    row.update({f"required_{k}": v for k, v in scope.required.to_dict().items()})
    return row


def result_csv(result: ScoreResult, unresolved: int = 0) -> str:
    """One row per group (or one row for the whole scope); empty cells where a metric is undefined."""
    scopes = result.groups if result.group_by else (result.overall,)
    buffer = io.StringIO()
    writer = SafeDictWriter(buffer, fieldnames=list(score_row(result, result.overall)), lineterminator="\n")
    writer.writeheader()
    writer.writerows(score_row(result, scope, unresolved) for scope in scopes)
    return buffer.getvalue()
