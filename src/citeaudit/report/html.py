"""The self-contained HTML report: one file, no external scripts, styles, fonts or images.

Charts are inline SVG (``report.charts``). All text from answers and sources is
escaped by the template engine, so a ``<script>`` inside an answer stays text.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from typing import Any

from jinja2 import Environment, select_autoescape

from citeaudit.core.display import FigureState, interval_shown
from citeaudit.core.identity import OfficialMatcher
from citeaudit.core.misattribution import MisattributionReport
from citeaudit.core.model import Audit, Label, review_outcome
from citeaudit.core.results import Metric, ScopeScore, ScoreResult
from citeaudit.report.charts import METRIC_NAMES, Bar, bar_chart
from citeaudit.report.tables import diagnostics, scope_fraction
from citeaudit.report.trend import Trend

__all__ = ["ReportInput", "render_report"]

PROBLEM_LIMIT = 300
"""Unsupported and conflicting claims listed at most (the rest are counted)."""

_NAMES = {"official_rate": "Official-domain rate", "precision": "Citation precision", "coverage": "Fact coverage"}


@dataclass(frozen=True, slots=True)
class ReportInput:
    """Everything one report shows."""

    source: str
    """File or database the audit came from."""
    audit: Audit
    """The audit (for claims, sources and evidence)."""
    result: ScoreResult
    """Scores, grouped by the report's dimension, with intervals."""
    by_question: ScoreResult
    """Scores by question."""
    disclosure: Mapping[str, object]
    """How the numbers were measured."""
    excluded: int = 0
    """Answers of other run kinds left out."""
    failed: int = 0
    """Answers the engines did not give."""
    warnings: tuple[str, ...] = ()
    """Shown above the numbers."""
    support: tuple[Sequence[Any], Sequence[Any]] | None = None
    """Independent support per claim and per required fact (``SupportRow``s), when copy groups were computed."""
    support_note: str = ""
    """Why independent support is not shown, or when the copy groups were computed."""
    comparison: Mapping[str, Any] | None = None
    """A comparison (``Comparison.to_dict()``) and the two names, when asked for."""
    names: tuple[str, str] = ("A", "B")
    """Names of the compared scopes."""
    misattribution: MisattributionReport | None = None
    """Claims at risk supported by another source of the audit (cross pairs), when computed."""
    review_note: str = ""
    """The review policy behind the final labels and the reviewers' agreement."""
    trend: Trend | None = None
    """The three numbers per collection, when the database has collections."""
    unresolved_links: int = 0
    """Cited links in scope not followed yet: the official-domain rate is provisional while there are any."""


def _interval(metric: Metric) -> str:
    if metric.ci is None or metric.ci.low is None or metric.ci.high is None:
        return "no interval (undefined)" if metric.value is None else ""
    ci = metric.ci
    wording, caution = interval_shown(ci)
    questions = "question" if ci.clusters == 1 else "questions"
    shown = (
        f"{ci.level:.0%} CI {wording}"
        if wording and wording.startswith("not informative")
        else f"{ci.level:.0%} CI {ci.low:.3f}–{ci.high:.3f} ({ci.method}, {ci.clusters} {questions})"
    )
    return shown + (f" · caution: {caution}" if caution else "")


def _card_fraction(scope: ScopeScore, name: str, unresolved_links: int) -> str:
    shown = scope.shown(name, unresolved_links)
    if shown.value is None:
        return f"{shown.numerator}/{shown.denominator}: {shown.text.removeprefix('— ')}"
    if shown.state is FigureState.PROVISIONAL:
        return shown.text
    return f"{shown.numerator} of {shown.denominator}"


def _chart(result: ScoreResult) -> str | None:
    if not result.groups:
        return None
    bars = [
        Bar(" / ".join(str(v) for _, v in g.by), [getattr(g, name) for name in METRIC_NAMES]) for g in result.groups
    ]
    return bar_chart(bars)


def _row_labels(result: ScoreResult, scope: ScopeScore) -> list[str]:
    if not scope.by:
        return ["all"] + [""] * (len(result.group_by) - 1) if result.group_by else []
    return [str(v) if v is not None else "—" for _, v in scope.by]


def _pending(scope: ScopeScore) -> str:
    """Pending edges, disputed ones shown as a part of them: the label columns add up to the edge count."""
    edges = scope.edges
    return f"{edges.pending} ({edges.disputed} disputed)" if edges.disputed else str(edges.pending)


def _problems(audit: Audit) -> tuple[list[dict[str, Any]], int]:
    claims = {c.id: c for c in audit.claims}
    answers = {a.id: a for a in audit.answers}
    runs = {r.id: r for r in audit.runs}
    sources = {s.key: s for s in audit.sources}
    found: list[dict[str, Any]] = []
    for edge in audit.edges:
        state, label = review_outcome(edge.judgements)
        if label is Label.SUPPORTED:
            continue
        claim = claims[edge.claim_id]
        answer = answers[claim.answer_id]
        run = runs.get(answer.run_id)
        source = sources[edge.source_key]
        latest = next((j for j in reversed(edge.judgements) if j.origin == "human"), None)
        # the link as this answer cited it (another engine's raw URL of a shared source is not this answer's),
        # with the shared resolved page beside it
        own = next((c.url for c in answer.citations if c.source_key == edge.source_key and c.url), None)
        url = own or source.url or edge.source_key
        shared = source.resolved_url or edge.source_key
        found.append(
            {
                "platform": answer.platform or (run.platform if run else "") or "",
                "claim": claim.text,
                "title": source.title or "",
                "url": url,
                "shared": shared if shared != url else "",
                "label": str(label) if label else str(state),
                "passage": latest.passage if latest else None,
                "reasoning": latest.reasoning if latest and latest.reasoning else "",
            }
        )
    order = {"conflicting": 0, "partial": 1, "unknown": 2, "irrelevant": 3}
    found.sort(key=lambda problem: order.get(str(problem["label"]), 4))
    return found[:PROBLEM_LIMIT], max(0, len(found) - PROBLEM_LIMIT)


def _official(audit: Audit) -> list[tuple[str, int]]:
    matcher = OfficialMatcher(audit.protocol.official_domains)
    sources = {s.key: s for s in audit.sources}
    claims = {c.id: c for c in audit.claims}
    cited: dict[str, set[str]] = {}
    for answer in audit.answers:
        cited[answer.id] = {c.source_key for c in answer.citations if c.kind == "cited" and c.source_key}
    for edge in audit.edges:
        cited.setdefault(claims[edge.claim_id].answer_id, set()).add(edge.source_key)
    counts: Counter[str] = Counter()
    for keys in cited.values():
        for key in keys:
            source = sources[key]
            url = source.resolved_url or source.url
            if url and matcher(url):
                counts[url] += 1
    return counts.most_common()


def _comparison_rows(comparison: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for metric, d in comparison["metrics"].items():
        ci = d["ci"]
        rows.append(
            {
                "metric": _NAMES[metric],
                "a": "—" if d["a"] is None else f"{d['a']:.3f}",
                "b": "—" if d["b"] is None else f"{d['b']:.3f}",
                "delta": "—" if d["delta"] is None else f"{d['delta']:+.3f}",
                "ci": "—" if ci["low"] is None else f"{ci['low']:+.3f} to {ci['high']:+.3f}",
                # the wording follows the p-value adjusted over the three metrics: that one is shown
                "p": "—" if d.get("p_value_holm") is None else f"{d['p_value_holm']:.3f}",
                "caution": ci.get("caution", ""),
                "mde": "—" if d["mde"] is None else f"{d['mde']:.3f}",
                "wording": d["wording"],
            }
        )
    return rows


def _flatten(prefix: str, value: object) -> list[tuple[str, str]]:
    if isinstance(value, Mapping):
        return [item for key, inner in value.items() for item in _flatten(f"{prefix} {key}".strip(), inner)]
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [(prefix, ", ".join(str(v) for v in value) or "—")]
    return [(prefix, "—" if value is None else str(value))]


def render_report(report: ReportInput) -> str:
    """The report as one HTML document."""
    result = report.result
    overall = result.overall
    template_text = resources.files("citeaudit").joinpath("templates/report.html.j2").read_text(encoding="utf-8")
    environment = Environment(autoescape=select_autoescape(default=True, default_for_string=True))
    template = environment.from_string(template_text)
    scopes = [*result.groups, overall]
    labels = [str(label) for label in Label]
    context = {
        "source": report.source,
        "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "disclosure": report.disclosure,
        "disclosure_items": _flatten("", report.disclosure),
        "result": result,
        "excluded": report.excluded,
        "failed": report.failed,
        "warnings": report.warnings,
        "support_claims": [] if report.support is None else list(report.support[0]),
        "support_facts": [] if report.support is None else list(report.support[1]),
        "support_shown": report.support is not None,
        "support_note": report.support_note,
        "headline": [
            {
                "key": name,
                "name": _NAMES[name],
                "value": "—" if getattr(overall, name).value is None else f"{getattr(overall, name).value:.1%}",
                "fraction": _card_fraction(overall, name, report.unresolved_links),
                "interval": _interval(getattr(overall, name)),
                "provisional": (
                    f"provisional: {report.unresolved_links} cited link(s) not resolved yet"
                    if name == "official_rate" and report.unresolved_links
                    else ""
                ),
            }
            for name in ("official_rate", "precision", "coverage")
        ],
        "chart": _chart(result),
        "score_rows": [
            {
                "total": scope is overall and bool(result.group_by),
                "labels": _row_labels(result, scope),
                "answers": scope.answers,
                "official": scope_fraction(scope, "official_rate", report.unresolved_links if scope is overall else 0),
                "precision": scope_fraction(scope, "precision"),
                "coverage": scope_fraction(scope, "coverage"),
            }
            for scope in scopes
        ],
        "labels": labels,
        "review_note": report.review_note,
        "label_rows": [
            {
                "total": scope is overall and bool(result.group_by),
                "labels": _row_labels(result, scope),
                "cells": [
                    scope.edges.unique,
                    scope.edges.locations,
                    *(scope.edges.by_label[label] for label in Label),
                    _pending(scope),
                ],
            }
            for scope in scopes
        ],
        "question_rows": [
            {
                "question": str(dict(g.by)["question"]),
                "answers": g.answers,
                "official": scope_fraction(g, "official_rate"),
                "precision": scope_fraction(g, "precision"),
                "coverage": scope_fraction(g, "coverage"),
            }
            for g in report.by_question.groups
        ],
        "severity_rows": [
            (name, s.coverage.denominator, s.coverage.numerator, s.coverage.denominator - s.coverage.numerator)
            for name, s in overall.severity.items()
            if s.coverage.denominator
        ],
        "groups": [
            {
                "claim": next((c.text for c in report.audit.claims if c.id == g.claim_id), g.claim_id),
                "sources": g.source_keys,
                "label": str(g.label) if g.label else "undecided",
            }
            for g in report.audit.evidence_groups
        ],
        "diagnostics": diagnostics(overall),
        "official_rows": _official(report.audit),
        "comparison": None
        if report.comparison is None
        else {"names": report.names, "rows": _comparison_rows(report.comparison)},
    }
    context["misattribution"] = _misattribution(report)
    context["trend"] = _trend(report.trend)
    problems, omitted = _problems(report.audit)
    context["problems"] = problems
    context["problems_omitted"] = omitted
    return template.render(**context)


def _misattribution(report: ReportInput) -> dict[str, Any] | None:
    """The misattribution section: the count over the claims at risk and each case with both sources."""
    found = report.misattribution
    if found is None:
        return None
    titles = {s.key: s.title or s.resolved_url or s.url or s.key for s in report.audit.sources}
    return {
        "fraction": found.shown().text,
        "provisional": found.provisional,
        "without_cross_pairs": found.at_risk_without_cross_pairs,
        "pending": found.cross_pairs_pending,
        "cases": [
            {
                "claim": case.claim_text,
                "cited": [(titles.get(key, key), label or "pending") for key, label in case.cited],
                "supported_by": titles.get(case.supporting_source, case.supporting_source),
                "kind": str(case.kind),
                "passage": case.passage,
            }
            for case in found.cases
        ],
    }


def _trend(trend: Trend | None) -> dict[str, Any] | None:
    """The trend section: a chart with its breaks and one row per collection."""
    if trend is None:
        return None
    bars = []
    previous = ""
    for point in trend.points:
        overall = point.result.overall
        reason = (
            f"not comparable with {previous}: {', '.join(point.break_before)} changed" if point.break_before else ""
        )
        bars.append(Bar(f"{point.collection} ({point.date})", [getattr(overall, n) for n in METRIC_NAMES], reason))
        previous = point.collection
    return {
        "chart": bar_chart(bars),
        "breaks": trend.breaks,
        "rows": [
            {
                "collection": point.collection,
                "date": point.date,
                "answers": point.result.overall.answers,
                "official": scope_fraction(point.result.overall, "official_rate"),
                "precision": scope_fraction(point.result.overall, "precision"),
                "coverage": scope_fraction(point.result.overall, "coverage"),
                "break": bar.break_before,
                "revised": point.revised_from,
            }
            for point, bar in zip(trend.points, bars, strict=True)
        ],
    }
