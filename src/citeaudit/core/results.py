"""Results of strict scoring: metrics with explicit numerators and denominators, as frozen values.

Notes: every metric is undefined exactly when its denominator is 0, and its value is then ``None``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from citeaudit.core.display import ShownFigure, interval_shown, show_figure
from citeaudit.core.model import Label
from citeaudit.core.stats import Interval, RepeatVariance

__all__ = [
    "EdgeCounts",
    "MacroMetric",
    "Metric",
    "RequiredCounts",
    "ScopeScore",
    "ScoreResult",
    "SeverityScore",
    "WeightedMetric",
]

LABELS: tuple[Label, ...] = tuple(Label)
"""Label order of ``by_label`` in JSON."""


@dataclass(frozen=True, slots=True)
class Metric:
    """A proportion with its explicit numerator and denominator.

    Notes: undefined when ``denominator == 0``; ``value`` is then ``None`` (never 0, 1 or NaN).
    """

    numerator: int
    """Count of units meeting the criterion."""
    denominator: int
    """Count of units in scope."""
    ci: Interval | None = None
    """Confidence interval, when asked for (cluster bootstrap over questions)."""

    @property
    def value(self) -> float | None:
        """``numerator / denominator``, or ``None`` when the denominator is 0."""
        return None if self.denominator == 0 else self.numerator / self.denominator

    def shown(
        self, name: str, *, pending: int = 0, pending_of: str | None = None, not_measured: str | None = None
    ) -> ShownFigure:
        """How this metric is shown (:func:`citeaudit.core.display.show_figure`): every view asks here."""
        return show_figure(
            self.numerator,
            self.denominator,
            name,
            ci=self.ci,
            pending=pending,
            pending_of=pending_of,
            not_measured=not_measured,
        )

    def to_dict(
        self,
        name: str = "",
        *,
        pending: int = 0,
        pending_of: str | None = None,
        not_measured: str | None = None,
    ) -> dict[str, object]:
        """JSON form ``{"value", "numerator", "denominator"}``, plus ``ci`` when an interval was computed, plus
        ``state``, ``pending``, ``reason`` and ``shown`` when the figure is not a plain final measurement (``value``
        is then ``null`` when it was not measured)."""
        shown = self.shown(name, pending=pending, pending_of=pending_of, not_measured=not_measured)
        body: dict[str, object] = {"value": shown.value, "numerator": self.numerator, "denominator": self.denominator}
        if self.ci is not None:
            ci = self.ci.to_dict()
            wording, _ = interval_shown(self.ci)
            if wording is not None and wording.startswith("not informative"):
                ci["informative"] = False
                ci["shown"] = wording
            body["ci"] = ci
        body.update(shown.to_dict())
        return body


@dataclass(frozen=True, slots=True)
class WeightedMetric:
    """A weighted proportion (only when the protocol declares weights; always labelled as weighted).

    Notes: undefined when ``denominator == 0``; ``value`` is then ``None``.
    """

    numerator: float
    """Sum of weights of units meeting the criterion."""
    denominator: float
    """Sum of weights of units in scope."""

    @property
    def value(self) -> float | None:
        """``numerator / denominator``, or ``None`` when the denominator is 0."""
        return None if self.denominator == 0 else self.numerator / self.denominator

    def to_dict(self) -> dict[str, object]:
        """JSON form, marked ``weighted``."""
        return {
            "value": self.value,
            "numerator": self.numerator,
            "denominator": self.denominator,
            "weighted": True,
        }


@dataclass(frozen=True, slots=True)
class MacroMetric:
    """Mean of per-answer values over the answers where the value is defined.

    Notes: undefined when ``answers == 0`` (every answer excluded); ``value`` is then ``None``.
    """

    total: float
    """Sum of the per-answer values."""
    answers: int
    """Answers whose value is defined (they enter the mean)."""
    excluded: int
    """Answers left out because their own value is undefined (denominator 0)."""

    @property
    def value(self) -> float | None:
        """Mean of per-answer values, or ``None`` when no answer has one."""
        return None if self.answers == 0 else self.total / self.answers

    def to_dict(self) -> dict[str, object]:
        """JSON form, marked ``macro``."""
        return {"value": self.value, "answers": self.answers, "excluded": self.excluded, "macro": True}


@dataclass(frozen=True, slots=True)
class EdgeCounts:
    """How many edges and locations a scope has, by final label."""

    unique: int
    """Unique (claim, source) edges: the precision denominator."""
    locations: int
    """Citation locations behind those edges."""
    pending: int
    """Edges without a final label (scored as unknown), disputed ones included."""
    disputed: int
    """Edges whose reviewers disagree and that await adjudication (part of ``pending``)."""
    by_label: Mapping[Label, int]
    """Edges per final label; ``sum(by_label) + pending == unique``."""

    @property
    def collapsed(self) -> int:
        """Duplicate locations folded into an existing edge."""
        return self.locations - self.unique

    def to_dict(self) -> dict[str, object]:
        """JSON form (``score --format json``, docs/metrics.md), plus ``disputed``."""
        return {
            "unique": self.unique,
            "locations": self.locations,
            "collapsed": self.collapsed,
            "pending": self.pending,
            "disputed": self.disputed,
            "by_label": {str(label): self.by_label[label] for label in LABELS},
        }


@dataclass(frozen=True, slots=True)
class RequiredCounts:
    """The (answer, required fact) pairs of a scope and what became of them."""

    pairs: int
    """(answer, required fact) pairs: the coverage denominator."""
    covered: int
    """Pairs with a mapped claim that has a supported edge."""
    without_claim: int
    """Pairs with no claim mapped to the fact."""
    without_edge: int
    """Pairs whose mapped claims have no edge at all."""
    pending: int = 0
    """Pairs not covered whose mapped claims have an edge without a final label (one may still cover it): while
    there are any, coverage is provisional."""

    @property
    def not_supported(self) -> int:
        """Pairs whose mapped claims have edges, none of them supported (conflicting, partial, pending, …).

        With it the four categories add up to ``pairs``."""
        return self.pairs - self.covered - self.without_claim - self.without_edge

    def to_dict(self) -> dict[str, int]:
        """JSON form (``score --format json``, docs/metrics.md), plus ``not_supported`` (the four categories add up
        to ``pairs``) and ``pending`` (pairs a pending edge may still cover; part of ``not_supported``)."""
        return {
            "pairs": self.pairs,
            "covered": self.covered,
            "without_claim": self.without_claim,
            "without_edge": self.without_edge,
            "not_supported": self.not_supported,
            "pending": self.pending,
        }


@dataclass(frozen=True, slots=True)
class SeverityScore:
    """Precision and coverage restricted to one severity (a breakdown, never a weighting)."""

    precision: Metric
    """Precision over edges whose claim has this severity (the claim's own, else its fact's)."""
    coverage: Metric
    """Coverage over pairs whose required fact has this severity."""


@dataclass(frozen=True, slots=True)
class ScopeScore:
    """The three numbers of one scope with their counts."""

    by: tuple[tuple[str, str | None], ...]
    """The group's dimension values (empty for the whole scope)."""
    answers: int
    """Answers in scope."""
    provisional: bool
    """True while any edge in scope has no final label."""
    precision: Metric
    """Supported edges / unique edges."""
    coverage: Metric
    """Covered (answer, required fact) pairs / pairs."""
    official_rate: Metric
    """Answers citing at least one official source / answers."""
    edges: EdgeCounts
    """Edge and location counts."""
    required: RequiredCounts
    """Required-fact pair counts."""
    severity: Mapping[str, SeverityScore]
    """Breakdown by severity (``none`` for unset), only severities present in scope."""
    weighted_coverage: WeightedMetric | None = None
    """Weighted coverage when the protocol declares weights, else ``None``."""
    macro_precision: MacroMetric | None = None
    """Mean per-answer precision (only when asked for)."""
    macro_coverage: MacroMetric | None = None
    """Mean per-answer coverage (only when asked for)."""

    def pending(self, name: str, unresolved_links: int = 0) -> tuple[int, str | None]:
        """What keeps metric ``name`` provisional, and what those inputs are when they are not its own units:
        pending edges for precision, pairs an edge without a final label may still cover for coverage, cited links
        not resolved yet for the official rate."""
        if name == "precision":
            return self.edges.pending, None
        if name == "coverage":
            return self.required.pending, None
        if name == "official_rate":
            return unresolved_links, "links"
        raise ValueError(f"unknown metric {name!r} (precision, coverage, official_rate)")

    def shown(self, name: str, unresolved_links: int = 0) -> ShownFigure:
        """How metric ``name`` of this scope is shown, pending count included."""
        pending, pending_of = self.pending(name, unresolved_links)
        metric: Metric = getattr(self, name)
        return metric.shown(name, pending=pending, pending_of=pending_of)

    def metric_dict(self, name: str, unresolved_links: int = 0) -> dict[str, object]:
        """The JSON object of metric ``name``, with its state and pending count."""
        pending, pending_of = self.pending(name, unresolved_links)
        metric: Metric = getattr(self, name)
        return metric.to_dict(name, pending=pending, pending_of=pending_of)

    def to_dict(self, unresolved_links: int = 0) -> dict[str, object]:
        """JSON form (``score --format json``, docs/metrics.md; ``by`` present on groups only);
        ``unresolved_links`` makes the official rate provisional."""
        body: dict[str, object] = {}
        if self.by:
            body["by"] = dict(self.by)
        body.update(
            {
                "answers": self.answers,
                "provisional": self.provisional,
                "precision": self.metric_dict("precision"),
                "coverage": self.metric_dict("coverage"),
                "official_rate": self.metric_dict("official_rate", unresolved_links),
                "edges": self.edges.to_dict(),
                "required": self.required.to_dict(),
                "severity": {
                    name: {"precision": s.precision.to_dict(), "coverage": s.coverage.to_dict()}
                    for name, s in self.severity.items()
                },
            }
        )
        if self.weighted_coverage is not None:
            body["weighted_coverage"] = self.weighted_coverage.to_dict()
        if self.macro_precision is not None and self.macro_coverage is not None:
            body["macro"] = {
                "precision": self.macro_precision.to_dict(),
                "coverage": self.macro_coverage.to_dict(),
            }
        return body


@dataclass(frozen=True, slots=True)
class ScoreResult:
    """A scored scope, overall and per group, under one protocol fingerprint."""

    scoring: str
    """Scoring-version string."""
    fingerprint: str
    """Protocol fingerprint the numbers were measured under."""
    overall: ScopeScore
    """The whole scope."""
    group_by: tuple[str, ...] = ()
    """Dimensions of ``groups``."""
    groups: tuple[ScopeScore, ...] = field(default=())
    """One score per group, sorted by group values."""
    repeats: Mapping[str, RepeatVariance] = field(default_factory=dict)
    """Per-answer precision and coverage variance between repeats (asks of one question on one platform within one
    collection) and between such cells; empty when no cell was asked more than once."""

    @property
    def provisional(self) -> bool:
        """True while any edge in scope has no final label."""
        return self.overall.provisional

    @property
    def precision(self) -> Metric:
        """Overall precision."""
        return self.overall.precision

    @property
    def coverage(self) -> Metric:
        """Overall coverage."""
        return self.overall.coverage

    @property
    def official_rate(self) -> Metric:
        """Overall official-domain citation rate."""
        return self.overall.official_rate

    def to_dict(self, unresolved_links: int = 0) -> dict[str, object]:
        """JSON form (``score --format json``, docs/metrics.md); ``unresolved_links`` (cited links in scope not
        followed yet) makes the overall official rate provisional."""
        overall = self.overall.to_dict(unresolved_links)
        return {
            "scoring": self.scoring,
            "fingerprint": self.fingerprint,
            **overall,
            "group_by": list(self.group_by),
            "groups": [g.to_dict() for g in self.groups],
            **({"repeats": {name: r.to_dict() for name, r in self.repeats.items()}} if self.repeats else {}),
        }
