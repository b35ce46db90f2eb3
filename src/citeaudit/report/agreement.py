"""Terminal tables for the agreement of two raters: coefficients with intervals, the confusion matrix, per-class
agreement and prevalence, supported-vs-rest, and the kappa-paradox warning."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from citeaudit.core.agreement import LABELS, Agreement, Coefficient
from citeaudit.core.stats import few_clusters_caution

__all__ = ["agreement_tables"]

_UNDEFINED = "— n/a (undefined)"


def _number(value: float | None) -> str:
    return _UNDEFINED if value is None else f"{value:.3f}"


def _interval(coefficient: Coefficient) -> str:
    ci = coefficient.ci
    if ci is None:
        return "—"
    if ci.low is None or ci.high is None:
        return "— n/a"
    return f"[{ci.low:.3f}, {ci.high:.3f}]"


def _method(coefficient: Coefficient) -> str:
    return "" if coefficient.ci is None else coefficient.ci.method


def _share(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def agreement_tables(result: Agreement, title: str) -> RenderableType:
    """Everything the JSON holds, as tables; undefined values as an em-dash with the reason."""
    pairs = result.pairs
    level = f"{result.level:.0%}"
    total = "?" if pairs.edges_total is None else f"{pairs.edges_total:,}"
    lines: list[RenderableType] = [
        Text(f"{title}\nA = {pairs.rater_a} (gold)   B = {pairs.rater_b}", style="bold"),
        Text(
            f"edges paired {result.n:,} of {total} in {result.clusters:,} answers · A only {pairs.a_only:,} · "
            f"B only {pairs.b_only:,} · neither {pairs.neither if pairs.neither is not None else '?'} · "
            f"ambiguous {pairs.ambiguous:,}"
        ),
    ]

    coefficients = Table(title="Agreement", title_justify="left", header_style="bold")
    for header in ("coefficient", "value", f"{level} interval", "method"):
        coefficients.add_column(header, justify="left" if header == "coefficient" else "right", no_wrap=True)
    for name, coefficient in (
        ("observed agreement", result.observed),
        ("Cohen's kappa", result.cohen_kappa),
        ("Krippendorff's alpha (nominal)", result.krippendorff_alpha),
        ("Gwet's AC1", result.gwet_ac1),
    ):
        coefficients.add_row(name, _number(coefficient.value), _interval(coefficient), _method(coefficient))
    lines.append(coefficients)
    counted = ", ".join(str(label) for label in result.ac1_categories) or "none"
    source = "declared" if result.ac1_declared else "the labels either rater used"
    lines.append(Text(f"Gwet's AC1 counts {len(result.ac1_categories)} categories ({source}): {counted}"))

    confusion = Table(title="Confusion (rows A, columns B)", title_justify="left", header_style="bold")
    confusion.add_column("A \\ B", no_wrap=True)
    for label in LABELS:
        confusion.add_column(str(label), justify="right", no_wrap=True)
    confusion.add_column("total A", justify="right", no_wrap=True)
    for label, row in zip(LABELS, result.confusion, strict=True):
        confusion.add_row(str(label), *(str(x) for x in row), str(sum(row)))
    confusion.add_section()
    confusion.add_row("total B", *(str(c.b) for c in result.per_class), str(result.n))
    lines.append(confusion)

    classes = Table(title="Per class", title_justify="left", header_style="bold")
    for header in ("label", "specific agreement", "both", "A", "B", "prevalence A", "prevalence B", "pooled"):
        classes.add_column(header, justify="left" if header == "label" else "right", no_wrap=True)
    for c in result.per_class:
        classes.add_row(
            str(c.label),
            "— n/a (unused)" if c.specific is None else f"{c.specific:.3f}",
            str(c.both),
            str(c.a),
            str(c.b),
            _share(c.prevalence_a),
            _share(c.prevalence_b),
            _share(c.prevalence),
        )
    lines.append(classes)

    supported = result.supported
    binary = Table(title="Supported vs rest (A as gold)", title_justify="left", header_style="bold")
    for header in ("figure", "value", f"{level} interval", "counts"):
        binary.add_column(header, justify="left" if header == "figure" else "right", no_wrap=True)
    binary.add_row("precision", _number(supported.precision.value), _interval(supported.precision), "tp / (tp + fp)")
    binary.add_row("recall", _number(supported.recall.value), _interval(supported.recall), "tp / (tp + fn)")
    binary.add_row("f1", _number(supported.f1.value), _interval(supported.f1), "2tp / (2tp + fp + fn)")
    binary.add_row("accuracy", _number(supported.accuracy.value), _interval(supported.accuracy), "(tp + tn) / n")
    lines.append(binary)
    lines.append(Text(f"tp {supported.tp}  fp {supported.fp}  fn {supported.fn}  tn {supported.tn}"))

    if result.kappa_paradox:
        lines.append(Text(f"warning: {result.kappa_paradox}", style="bold yellow"))
    notes = sorted(
        {
            c.ci.note
            for c in (result.observed, result.cohen_kappa, result.krippendorff_alpha, result.gwet_ac1)
            if c.ci is not None and c.ci.note
        }
    )
    if result.resamples:
        lines.append(
            Text(
                f"intervals: cluster bootstrap over {result.clusters:,} answers, {result.resamples:,} resamples, "
                f"seed {result.seed}"
                + "".join(f"\nnote: {note}" for note in notes)
                + (f"\ncaution: {caution}" if (caution := few_clusters_caution(result.clusters, result.level)) else ""),
                style="dim",
            )
        )
    return Group(*lines)
