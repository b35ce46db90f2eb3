"""The self-contained HTML report: one file, no external scripts, styles, fonts or images.

Charts are inline SVG (``report.charts``). All text from answers and sources is
escaped by the template engine, so a ``<script>`` inside an answer stays text.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from jinja2 import BytecodeCache, Environment, FileSystemBytecodeCache, PackageLoader, Template, select_autoescape
from jinja2.bccache import Bucket
from markupsafe import Markup

from citeaudit.core.display import FigureState, interval_shown
from citeaudit.core.model import Audit, Label, Protocol
from citeaudit.core.results import Metric, ScopeScore, ScoreResult
from citeaudit.report.charts import METRIC_NAMES, Bar, bar_chart
from citeaudit.report.evidence import EvidenceIndex, build_index, fact_matrix, problems
from citeaudit.report.names import EngineNames, question_names
from citeaudit.report.tables import diagnostics, scope_fraction
from citeaudit.report.trend import Trend
from citeaudit.store.report_input import ReportRows

if TYPE_CHECKING:  # for the annotation only: the scores bring it
    from citeaudit.core.misattribution import MisattributionReport

__all__ = ["ReportInput", "render_report", "report_index"]

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
    names_from: Protocol | None = None
    """A protocol read for its engine labels (over the audit's own)."""
    collections: Mapping[str, str | None] | None = None
    """Per answer id, its collection (a database's answers)."""
    stale: Sequence[Any] = ()
    """Official pages judged on a snapshot older than the newest (``StaleSnapshot``s)."""
    rows: ReportRows | None = None
    """The edges and official sources as a database gives them (without judgement histories); ``None``: made
    from ``audit.edges`` and the sources' URLs."""
    index: EvidenceIndex | None = None
    """The evidence index of ``audit``, ``names_from``, ``collections`` and ``rows`` made already
    (:func:`report_index`); ``None``: made by :func:`render_report`."""


def report_index(
    audit: Audit,
    names_from: Protocol | None = None,
    collections: Mapping[str, str | None] | None = None,
    rows: ReportRows | None = None,
) -> EvidenceIndex:
    """Every row of the audit the report may list (as :class:`ReportInput`'s fields of the same names give them):
    it needs no score, so it can be made while the scores are."""
    return build_index(
        audit, EngineNames(audit.protocol, names_from), question_names(audit.protocol), collections, rows
    )


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


def _label(name: str, value: str | None, engine: EngineNames, questions: dict[str, str]) -> str:
    """A group value as people read it: engines and questions by name."""
    if value is None:
        return "—"
    if name == "platform":
        return engine(value)
    return questions.get(value, value) if name == "question" else value


def _chart(result: ScoreResult, engine: EngineNames, questions: dict[str, str]) -> str | None:
    if not result.groups:
        return None
    bars = [
        Bar(" / ".join(_label(n, v, engine, questions) for n, v in g.by), [getattr(g, name) for name in METRIC_NAMES])
        for g in result.groups
    ]
    return bar_chart(bars)


def _row_labels(result: ScoreResult, scope: ScopeScore, engine: EngineNames, questions: dict[str, str]) -> list[str]:
    if not scope.by:
        return ["all"] + [""] * (len(result.group_by) - 1) if result.group_by else []
    return [_label(n, v, engine, questions) for n, v in scope.by]


def _pending(scope: ScopeScore) -> str:
    """Pending edges, disputed ones shown as a part of them: the label columns add up to the edge count."""
    edges = scope.edges
    return f"{edges.pending} ({edges.disputed} disputed)" if edges.disputed else str(edges.pending)


def _cells(
    index: EvidenceIndex, prefix: str, title: str, scope: ScopeScore, unresolved: int = 0
) -> dict[str, tuple[str, str | None]]:
    """A scope's three figures as (text, evidence set) cells."""
    answers = index.answers_where(scope.by)
    return {
        short: (
            scope_fraction(scope, name, unresolved),
            index.metric_set(f"{name}:{prefix}", f"{_NAMES[name]} · {title}", name, answers, getattr(scope, name)),
        )
        for short, name in (("official", "official_rate"), ("precision", "precision"), ("coverage", "coverage"))
    }


def _label_cells(index: EvidenceIndex, prefix: str, title: str, scope: ScopeScore) -> list[tuple[str, str | None]]:
    """Edges, locations, each label and pending, each with the edges behind it."""
    answers = index.answers_where(scope.by)
    every = index.edges_over(answers)
    all_key = (
        index.add(f"edges:{prefix}", f"Edges · {title}", "e", every, every, ordered=True)
        if len(every) == scope.edges.unique
        else None
    )
    cells: list[tuple[str, str | None]] = [(str(scope.edges.unique), all_key), (str(scope.edges.locations), all_key)]
    by_label = index.edges_by_label(answers)
    for label in Label:
        rows = by_label.get(str(label), [])
        key = index.add(f"label:{label}:{prefix}", f"{label} edges · {title}", "e", rows, rows, ordered=True)
        cells.append(
            (
                str(scope.edges.by_label[label]),
                key if len(index.sets[key]["d"]) == scope.edges.by_label[label] else None,
            )
        )
    pending = by_label.get("pending", []) + by_label.get("disputed", [])
    key = index.add(f"pending:{prefix}", f"Pending edges · {title}", "e", pending, pending)
    cells.append((_pending(scope), key if len(pending) == scope.edges.pending else None))
    return cells


def _official(index: EvidenceIndex) -> list[dict[str, Any]]:
    """Official pages cited, with how many answers cite each and whether the page is dead or redirects."""
    citing: Counter[int] = Counter(s for sources in index.official_answers.values() for s in sources)
    rows = []
    for source, count in citing.most_common():
        title, url, resolved, status, _ = index.sources[source]
        answers = [a for a, sources in index.official_answers.items() if source in sources]
        key = index.add(f"official-page:{source}", title or url, "a", answers, answers)
        dead = status.startswith("failed")
        moved = bool(resolved) and resolved.rstrip("/") != url.rstrip("/")
        mark = (
            f"dead link ({status.removeprefix('failed: ')})" if dead else (f"redirects to {resolved}" if moved else "")
        )
        rows.append({"url": url, "title": title, "count": count, "set": key, "mark": mark, "dead": dead})
    return rows


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


class _CompiledTemplates(FileSystemBytecodeCache):
    """Jinja's cache of compiled templates in its folder of the system's temporary directory (made for this user
    alone, and checked to be), which a failed write leaves as it was: the template is then compiled again next
    time. A cached template is used only when its source is the one compiled (Jinja keeps a checksum with it)."""

    def dump_bytecode(self, bucket: Bucket) -> None:
        with suppress(OSError):  # a full disk or a read-only folder: nothing kept, nothing lost
            super().dump_bytecode(bucket)


def _compiled_templates() -> BytecodeCache | None:
    """The cache of compiled templates, or ``None`` where the temporary folder is not safe to keep them in."""
    try:
        return _CompiledTemplates()
    except (OSError, RuntimeError):  # Jinja refuses a folder another user owns or could write to
        return None


def _template() -> Template:
    """The report's template. Compiling it takes longer than rendering a report of 10 000 edges, so the compiled
    code is kept between runs (:class:`_CompiledTemplates`)."""
    environment = Environment(
        loader=PackageLoader("citeaudit", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        bytecode_cache=_compiled_templates(),
    )
    return environment.get_template("report.html.j2")


_EVIDENCE_PLACE = "<citeaudit-evidence/>"
"""Where the evidence blob goes in the rendered page: written as it is by the template, so it is found by its
``<``, which no escaped text and no blob holds."""


def render_report(report: ReportInput) -> list[bytes]:
    """The report as one HTML document, encoded in UTF-8, in parts to be written one after the other.

    The evidence blob, most of the document at every size, is encoded on its own and put in place: through the
    template, it would be copied into one text with the page's symbols (✓, ◐, ✗), which Python keeps in two bytes a
    character where the blob alone may take one."""
    result = report.result
    overall = result.overall
    protocol = report.audit.protocol
    engine = EngineNames(protocol, report.names_from)
    questions = question_names(protocol)
    index = (
        report_index(report.audit, report.names_from, report.collections, report.rows)
        if report.index is None
        else report.index
    )
    template = _template()
    scopes = [*result.groups, overall]
    labels = [str(label) for label in Label]

    def title(scope: ScopeScore) -> str:
        return " / ".join(_row_labels(result, scope, engine, questions)) if scope.by else "all answers"

    context: dict[str, Any] = {
        "source": report.source,
        "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "disclosure": report.disclosure,
        "disclosure_items": _flatten("", report.disclosure),
        "result": result,
        "group_names": [{"platform": "engine"}.get(n, n) for n in result.group_by],
        "brand": protocol.brand.name if protocol.brand else "",
        "competitors": [c.name for c in protocol.competitors],
        "engines": sorted({engine(d.get("platform")) for d in index.dims.values()}),
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
                "set": index.metric_set(
                    f"{name}:all",
                    f"{_NAMES[name]} · all answers",
                    name,
                    list(index.answer_of.values()),
                    getattr(overall, name),
                ),
                "provisional": (
                    f"provisional: {report.unresolved_links} cited link(s) not resolved yet"
                    if name == "official_rate" and report.unresolved_links
                    else ""
                ),
            }
            for name in ("official_rate", "precision", "coverage")
        ],
        "chart": _chart(result, engine, questions),
        "score_rows": [
            {
                "total": scope is overall and bool(result.group_by),
                "labels": _row_labels(result, scope, engine, questions),
                "answers": scope.answers,
                **_cells(index, f"g{i}", title(scope), scope, report.unresolved_links if scope is overall else 0),
            }
            for i, scope in enumerate(scopes)
        ],
        "labels": labels,
        "review_note": report.review_note,
        "label_rows": [
            {
                "total": scope is overall and bool(result.group_by),
                "labels": _row_labels(result, scope, engine, questions),
                "cells": _label_cells(index, f"g{i}", title(scope), scope),
            }
            for i, scope in enumerate(scopes)
        ],
        "question_rows": [
            {
                "question": questions.get(str(dict(g.by)["question"]), str(dict(g.by)["question"])),
                "answers": g.answers,
                **_cells(index, f"q{i}", questions.get(str(dict(g.by)["question"]), ""), g),
            }
            for i, g in enumerate(report.by_question.groups)
        ],
        "severity_rows": _severity_rows(index, overall),
        "groups": [
            {
                "claim": next((c.text for c in report.audit.claims if c.id == g.claim_id), g.claim_id),
                "sources": g.source_keys,
                "label": str(g.label) if g.label else "undecided",
            }
            for g in report.audit.evidence_groups
        ],
        "diagnostics": diagnostics(overall),
        "official_rows": _official(index),
        "comparison": None
        if report.comparison is None
        else {"names": report.names, "rows": _comparison_rows(report.comparison)},
        "matrix": fact_matrix(report.audit, index, questions),
        "problems": problems(report.audit, index, protocol, report.stale, PROBLEM_LIMIT),
    }
    for listed in context["problems"]["claims"]:
        listed["sources_html"] = _sources_html(listed["sources"])
    context["misattribution"] = _misattribution(report)
    context["trend"] = _trend(report.trend, engine, index)
    context["evidence"] = _EVIDENCE_PLACE
    head, place, tail = template.render(**context).rpartition(_EVIDENCE_PLACE)
    if not place:
        raise RuntimeError("the report template has no place for the evidence")
    return [head.encode("utf-8"), *index.json_parts(), tail.encode("utf-8")]


def escape_html(text: str) -> str:
    """``text`` escaped as the template escapes a value (markupsafe's five characters and entities), by five
    replacements: for cells made here by the thousand."""
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("'", "&#39;").replace('"', "&#34;")
    )


def _sources_html(sources: Sequence[tuple[str, str, str]]) -> Markup:
    """An unsupported claim's sources cell: each source's title (a link when its URL is a web address) and its
    edge's label. The page lists up to :data:`PROBLEM_LIMIT` claims with every source each, so the cell is made here,
    not by the template (at 100 000 edges the template escaped some 12 000 values for these cells alone)."""
    parts = []
    for title, url, label in sources:
        shown = escape_html(title or url)
        if url.startswith(("http://", "https://")):
            parts.append(f'<a href="{escape_html(url)}" rel="noreferrer">{shown}</a>')
        else:
            parts.append(shown)
        parts.append(f' <span class="label-{escape_html(label)}">({escape_html(label)})</span><br>')
    return Markup("".join(parts))


def _severity_rows(index: EvidenceIndex, overall: ScopeScore) -> list[dict[str, Any]]:
    """Required pairs by severity: covered and not, each with its pairs."""
    rows = []
    for name, s in overall.severity.items():
        if not s.coverage.denominator:
            continue
        pairs = [p for p, row in enumerate(index.pairs) if (str(row[6]) if row[6] else "none") == name]
        covered = [p for p in pairs if p in index.covered_pairs]
        missed = [p for p in pairs if p not in index.covered_pairs]
        fits = len(pairs) == s.coverage.denominator and len(covered) == s.coverage.numerator
        rows.append(
            {
                "name": name,
                "pairs": (
                    s.coverage.denominator,
                    index.add(f"sev:{name}", f"{name} pairs", "p", covered, pairs) if fits else None,
                ),
                "covered": (
                    s.coverage.numerator,
                    index.add(f"sev-c:{name}", f"{name} pairs covered", "p", covered, covered) if fits else None,
                ),
                "missed": (
                    s.coverage.denominator - s.coverage.numerator,
                    index.add(f"sev-m:{name}", f"{name} pairs not covered", "p", [], missed) if fits else None,
                ),
            }
        )
    return rows


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


_CHANGES = {
    "revision": "protocol revised after the answers",
    "required_facts": "changed required facts",
    "questions": "changed questions",
    "segmentation": "changed segmentation",
    "official_domains": "changed official domains",
    "scoring": "changed scoring convention",
    "labels": "changed label set",
    "weights": "changed weights",
    "brand": "changed brand names",
    "competitors": "changed competitors",
    "review_assistance": "changed review assistance",
}
"""Fingerprint components as a reader names the change."""


def _comparability(changed: tuple[str, ...], previous: str) -> str:
    """Never blank: the first collection, comparable with the one before, or the break and its reasons."""
    if not previous:
        return "first collection (baseline)"
    if not changed:
        return f"comparable with {previous}"
    reasons = list(dict.fromkeys(_CHANGES.get(c, f"changed {c.replace('_', ' ')}") for c in changed))
    return f"not comparable with {previous}: {', '.join(reasons)}"


def _trend(trend: Trend | None, engine: EngineNames, index: EvidenceIndex) -> dict[str, Any] | None:
    """The trend section: overall and per engine, a chart with its breaks and one row per collection."""
    if trend is None:
        return None
    bars, rows, previous = [], [], ""
    platforms: dict[str | None, list[tuple[int, ScopeScore]]] = {}
    for i, point in enumerate(trend.points):
        overall = point.result.overall
        reason = _comparability(point.break_before, previous) if point.break_before else ""
        bars.append(Bar(f"{point.collection} ({point.date})", [getattr(overall, n) for n in METRIC_NAMES], reason))
        rows.append(_trend_row(point.collection, point.date, overall, _comparability(point.break_before, previous)))
        rows[-1].update(_trend_cells(index, (("collection", point.collection),), point.collection, overall))
        rows[-1]["revised"] = point.revised_from
        for group in point.result.groups:
            platforms.setdefault(dict(group.by).get("platform"), []).append((i, group))
        previous = point.collection
    per_engine = []
    for platform, groups in sorted(platforms.items(), key=lambda item: engine(item[0])):
        engine_bars, engine_rows = [], []
        for i, group in groups:
            point = trend.points[i]
            changed = point.break_before if i else ()
            before = trend.points[i - 1].collection if i else ""
            reason = _comparability(changed, before) if changed else ""
            engine_bars.append(Bar(point.collection, [getattr(group, n) for n in METRIC_NAMES], reason))
            engine_rows.append(_trend_row(point.collection, point.date, group, _comparability(changed, before)))
            where = (("collection", point.collection), ("platform", platform))
            engine_rows[-1].update(_trend_cells(index, where, f"{engine(platform)} · {point.collection}", group))
        per_engine.append({"name": engine(platform), "chart": bar_chart(engine_bars), "rows": engine_rows})
    return {"chart": bar_chart(bars), "breaks": trend.breaks, "rows": rows, "engines": per_engine}


def _trend_cells(
    index: EvidenceIndex, where: tuple[tuple[str, str | None], ...], title: str, scope: ScopeScore
) -> dict[str, Any]:
    """A trend row's figures with their evidence, when the report's audit holds that collection's answers as
    scored (a collection measured under another protocol is listed without links)."""
    answers = index.answers_where(where)
    prefix = "trend:" + ":".join(str(v) for _, v in where)
    cells = {}
    for short, name in (("official", "official_rate"), ("precision", "precision"), ("coverage", "coverage")):
        key = index.metric_set(f"{name}:{prefix}", f"{_NAMES[name]} · {title}", name, answers, getattr(scope, name))
        cells[short] = (scope_fraction(scope, name), key)
    cells["answers"] = (str(scope.answers), cells["official"][1])
    return cells


def _trend_row(collection: str, date: str, scope: ScopeScore, comparability: str) -> dict[str, Any]:
    return {
        "collection": collection,
        "date": date,
        "comparability": comparability,
        "break": comparability.startswith("not comparable"),
    }
