"""Terminal tables (rich): fractions beside decimals, an em-dash with the reason where a metric is undefined."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from citeaudit.core.model import Label
from citeaudit.core.results import Metric, ScopeScore, ScoreResult
from citeaudit.core.stats import FEW_CLUSTERS, RepeatVariance, few_clusters_caution

if TYPE_CHECKING:
    from citeaudit.scoring.comparison import Comparison, SliceComparison

__all__ = ["comparison_table", "diagnostics", "fraction", "scope_fraction", "score_tables"]

_SHORT = {
    Label.SUPPORTED: "sup",
    Label.PARTIAL: "part",
    Label.CONFLICTING: "conf",
    Label.IRRELEVANT: "irr",
    Label.UNKNOWN: "unk",
}
LOW = 0.5
"""Below this a diagnostic hint is printed next to the number (an interpretation aid, not a verdict)."""


def fraction(metric: Metric, name: str = "precision", *, pending: int = 0, pending_of: str | None = None) -> str:
    """``1/3  0.333`` (``0/49 · 49 pending`` while provisional, the em-dash form when undefined) with the interval
    on a second line: :meth:`Metric.shown`'s cell."""
    return metric.shown(name, pending=pending, pending_of=pending_of).cell


def scope_fraction(scope: ScopeScore, name: str, unresolved_links: int = 0) -> str:
    """A scope's metric as a table cell, its pending count included."""
    return scope.shown(name, unresolved_links).cell


def diagnostics(scope: ScopeScore) -> list[str]:
    """Interpretation aids for a scope's numbers: where a low precision or coverage points, why it is provisional."""
    hints = []
    precision, coverage = scope.precision.value, scope.coverage.value
    if precision is not None and precision < LOW:
        hints.append("low precision → check claim–source matching (do the cited pages state these claims?)")
    if coverage is not None and coverage < LOW:
        hints.append("low coverage → required facts are missing from the answers or lack supporting evidence")
    if scope.provisional:
        hints.append(f"provisional: {scope.edges.pending} edge(s) have no final label yet and are scored as unknown")
    return hints


def _table(
    title: str | None,
    group_by: Sequence[str],
    headers: Sequence[str],
    rows: list[list[str]],
    *,
    total_last: bool = True,
) -> Table:
    """A table whose columns are never narrower than their widest cell (numbers are never cut short)."""
    table = Table(title=title, title_justify="left", header_style="bold")
    for name in group_by:
        table.add_column(name, no_wrap=True)
    for header in headers:
        table.add_column(header, justify="right", no_wrap=True)
    for column, cells in zip(table.columns, zip(*rows, strict=True), strict=True):
        column.min_width = max(len(str(column.header)), *(len(line) for cell in cells for line in cell.split("\n")))
    for i, row in enumerate(rows):
        if total_last and group_by and i == len(rows) - 1:
            table.add_section()
        table.add_row(*row)
    return table


def score_tables(
    result: ScoreResult,
    title: str,
    notes: Sequence[str] = (),
    disclosure: Mapping[str, object] | None = None,
    unresolved_links: int = 0,
) -> RenderableType:
    """The three numbers per scope, the edges behind them by final label, required facts left uncovered by
    severity, then notes, diagnostics and the disclosure of how the numbers were measured. With
    ``unresolved_links``, the official rate is marked provisional (``*``) and the count is given."""
    labels: list[list[str]] = []
    metrics: list[list[str]] = []
    for group in (*result.groups, result.overall):
        values = dict(group.by)
        if group is result.overall:
            label = (["all"] + [""] * (len(result.group_by) - 1)) if result.group_by else []
        else:
            label = [str(values[name]) if values[name] is not None else "—" for name in result.group_by]
        metrics.append(
            [
                *label,
                str(group.answers),
                scope_fraction(group, "official_rate", unresolved_links if group is result.overall else 0),
                scope_fraction(group, "precision"),
                scope_fraction(group, "coverage"),
            ]
        )
        labels.append(
            [
                *label,
                str(group.edges.unique),
                str(group.edges.locations),
                *(str(group.edges.by_label[name]) for name in Label),
                str(group.edges.pending) + (f" ({group.edges.disputed} disputed)" if group.edges.disputed else ""),
            ]
        )
    official = "official rate*" if unresolved_links else "official rate"
    table = _table(title, result.group_by, ("answers", official, "precision", "coverage"), metrics)
    edges_table = _table(
        None, result.group_by, ("edges", "locations", *(_SHORT[name] for name in Label), "pending"), labels
    )
    parts: list[RenderableType] = [table, edges_table]
    overall = result.overall
    lines = [
        f"scoring {result.scoring} · fingerprint {result.fingerprint[:23]}…"
        + (" · PROVISIONAL" if result.provisional else ""),
        f"edges: {overall.edges.unique} unique from {overall.edges.locations} citation locations "
        f"({overall.edges.collapsed} duplicate location(s) collapsed); final labels sup/part/conf/irr/unk = "
        "supported/partial/conflicting/irrelevant/unknown; pending = no final label yet, scored as unknown",
        f"required facts: {overall.required.pairs} (answer, fact) pairs — {overall.required.covered} covered, "
        f"{overall.required.without_claim} without a claim, {overall.required.without_edge} with a claim but no edge, "
        f"{overall.required.not_supported} with edges but none supported",
    ]
    if unresolved_links:
        lines.append(
            f"* official rate PROVISIONAL: {unresolved_links} cited link(s) in scope not resolved yet (redirects, "
            "title-only cards); it may change once `citeaudit resolve` has followed them"
        )
    if overall.weighted_coverage is not None:
        weighted = overall.weighted_coverage
        shown = "—" if weighted.value is None else f"{weighted.value:.3f}"
        lines.append(f"weighted coverage (protocol weights): {weighted.numerator:g}/{weighted.denominator:g} = {shown}")
    if overall.macro_precision is not None and overall.macro_coverage is not None:
        for name, macro in (("precision", overall.macro_precision), ("coverage", overall.macro_coverage)):
            shown = "—" if macro.value is None else f"{macro.value:.3f}"
            lines.append(
                f"macro {name} (mean of per-answer values): {shown} over {macro.answers} answer(s), "
                f"{macro.excluded} excluded as undefined"
            )
    interval = overall.precision.ci or overall.coverage.ci or overall.official_rate.ci
    if interval is not None:
        lines.append(
            f"intervals: {interval.level:.0%} cluster bootstrap over questions (BCa, percentile when degenerate), "
            f"{interval.resamples} resamples; associations, not effects"
        )
        fallbacks = {
            m.ci.note for m in (overall.precision, overall.coverage, overall.official_rate) if m.ci and m.ci.note
        }
        lines.extend(f"interval note: {note}" for note in sorted(fallbacks))
        cautions = {
            m.ci.caution for m in (overall.precision, overall.coverage, overall.official_rate) if m.ci and m.ci.caution
        }
        lines.extend(f"caution: {caution}" for caution in sorted(cautions))
        few = sum(
            1
            for group in result.groups
            if any(m is not None and m.ci is not None and m.ci.caution for m in (group.precision, group.coverage))
        )
        if few:
            lines.append(
                f"caution: the intervals of {few} group(s) rest on fewer than {FEW_CLUSTERS} questions and cover "
                "less often than their level"
            )
    for name, repeat in result.repeats.items():
        lines.append(_repeat_line(name, repeat))
    lines.extend(notes)
    lines.extend(f"note: {hint}" for hint in diagnostics(overall))
    if disclosure is not None:
        lines.append(_disclosure_line(disclosure))
    severity = _severity_table(overall)
    if severity is not None:
        parts.append(severity)
    parts.append(Text("\n".join(lines), style="dim"))
    return Group(*parts)


def _variance(value: float | None) -> str:
    # a variance of proportions is in squared proportion units; its square root is read on the 0–1 scale itself
    return "—" if value is None else f"{value:.4f} (SD {value**0.5:.3f})"


def _repeat_line(name: str, repeat: RepeatVariance) -> str:
    """What the repeat variance is, in words and units."""
    return (
        f"repeats: variance of per-answer {name} (a proportion, 0–1; variance in squared units, SD beside it) "
        f"between asks of one question on one platform within one collection: {_variance(repeat.within)} on "
        f"average over {repeat.cells_with_repeats} such cell(s) asked more than once; variance of the cells' "
        f"means {_variance(repeat.between)}"
    )


def _severity_table(scope: ScopeScore) -> Table | None:
    """Required facts not covered, by severity (a breakdown, never a weighting)."""
    rows = [
        [
            name,
            str(s.coverage.denominator),
            str(s.coverage.numerator),
            str(s.coverage.denominator - s.coverage.numerator),
        ]
        for name, s in scope.severity.items()
        if s.coverage.denominator
    ]
    if not rows:
        return None
    return _table(None, ("severity",), ("required pairs", "covered", "not covered"), rows, total_last=False)


def _disclosure_line(disclosure: Mapping[str, object]) -> str:
    segmentation = disclosure["segmentation"]
    facts = disclosure["required_facts"]
    assert isinstance(segmentation, Mapping)
    assert isinstance(facts, Mapping)
    weights = disclosure["weights"]
    domains = disclosure["official_domains"]
    assert isinstance(domains, list)
    return (
        f"disclosure: {disclosure['protocol']} · scoring {disclosure['scoring']} (partial = "
        f"{disclosure['partial_handling']}, unknown in the {disclosure['unknown_handling']}, pending scored as "
        f"{disclosure['pending_handling']}) · segmentation {segmentation['method']}"
        f"{' ' + str(segmentation['version']) if segmentation['version'] else ''} · {facts['facts']} required facts "
        f"over {facts['questions']} questions ({str(facts['hash'])[:19]}…) · weights "
        f"{'none' if weights is None else weights} · official: {', '.join(map(str, domains))}"
    )


def _signed(value: float | None) -> str:
    return "—" if value is None else f"{value:+.3f}"


def comparison_table(comparison: Comparison, names: tuple[str, str]) -> RenderableType:
    """B − A per slice and metric, with interval, p-value and MDE (associations, not effects)."""
    group_by = comparison.a.result.group_by
    first = comparison.overall.metrics["precision"]
    table = Table(
        title=f"{names[0]} (A) vs {names[1]} (B) · {comparison.a.result.fingerprint[:23]}…", title_justify="left"
    )
    for name in group_by:
        table.add_column(name, no_wrap=True)
    for header in ("metric", "A", "B", "B − A", f"{first.level:.0%} CI", "p (Holm)", "MDE", "reading"):
        table.add_column(header, justify="right" if header not in ("metric", "reading") else "left")

    def rows(slice_: SliceComparison, label: Sequence[str]) -> None:
        wording = slice_.wording
        for metric, difference in slice_.metrics.items():
            ci = "—" if difference.low is None else f"[{difference.low:+.3f}, {difference.high:+.3f}]"
            p = slice_.adjusted_p[metric]
            table.add_row(
                *label,
                metric,
                "—" if difference.a is None else f"{difference.a:.3f}",
                "—" if difference.b is None else f"{difference.b:.3f}",
                _signed(difference.delta),
                ci,
                "—" if p is None else f"{p:.3f}",
                "—" if difference.mde is None else f"{difference.mde:.3f}",
                wording[metric].split(" (")[0].split(",")[0],
            )

    for group in comparison.groups:
        values = dict(group.by)
        rows(group, [str(values[n]) if values[n] is not None else "—" for n in group_by])
        table.add_section()
    rows(comparison.overall, (["all"] + [""] * (len(group_by) - 1)) if group_by else [])
    caution = few_clusters_caution(first.clusters, first.level)
    note = Text(
        (f"caution: {caution}\n" if caution else "")
        + f"Paired over {first.clusters} question(s): cluster bootstrap of B − A ({first.resamples} resamples), "
        "sign-flip permutation p-value (groups: Holm-adjusted across every group and metric, and worded by "
        "the adjusted value), MDE at 80 % power. Differences are "
        "associations between two measurements, not causal effects.",
        style="dim",
    )
    return Group(table, note)
