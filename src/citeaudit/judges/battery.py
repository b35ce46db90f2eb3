"""The judge-bias battery (docs/statistics.md): perturb the same edges, ask the judge again, count what flips.

Every perturbation is run on the same edges as the baseline and analysed as paired. Edges within a question (or
answer) are not independent, so intervals come from a cluster bootstrap over ``BatteryEdge.cluster`` (each edge its
own cluster when none is given), with ``citeaudit.core.stats.cluster_bootstrap_ratio``:

- **flip rate** = edges whose label changed / edges the perturbation applies to;
- **excess over repeat** = (flips under the perturbation − flips on a plain repeat) / edges: a position or label-order
  effect is only a bias beyond the judge's own nondeterminism (pass: interval includes or lies below 0);
- **Δ P(supported)** = (edges supported after − supported before) / edges, for padding and framing;
- **fake authority**: the false-"supported" rate on gold-unsupported edges before and after (pass: no increase);
- **counterfactual number change**: of the edges the judge called supported, the share still supported after the
  claim's first number was multiplied by ten (pass: 0; a changed number must not stay supported).

- **self-preference** (a judge that writes text): each passage rewritten by the judge itself, in its own style;
  Δ P(supported) against the source's wording (pass: interval includes or lies below 0).

Every row ends in a verdict. A row that cannot move for this judge is "not applicable" with the reason, never a
pass: a deterministic judge's repeat, the passage order for a judge that reads each passage on its own, the label
order for a judge shown no label options, the rows about P(supported) for a judge that only refutes (declared by
the judge as :class:`JudgeTraits`; a declaration the measurement contradicts is a fail), self-preference for a
judge that writes nothing. Agreement with the gold
labels (observed agreement and Cohen's kappa over the five labels, the kappa with a cluster-bootstrap interval) is a
row too: it passes only when the interval's lower bound is above 0, so a judge that ignores its input (a constant
label) cannot pass every row. Where the judge gives a confidence, calibration (ECE over ten equal-width bins and
the Brier score) completes the report.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from citeaudit.core.agreement import agreement
from citeaudit.core.model import Label
from citeaudit.core.raters import LabelPairs
from citeaudit.core.stats import Interval, cluster_bootstrap_ratio
from citeaudit.judges._base import LABEL_ORDER, Judge, JudgeRequest, JudgeTraits, Suggestion

__all__ = [
    "AUTHORITY_PREFIX",
    "PADDING",
    "Agreement",
    "BatteryEdge",
    "BatteryReport",
    "Calibration",
    "JudgeTraits",
    "Perturbation",
    "PerturbationResult",
    "Verdict",
    "change_first_number",
    "run_battery",
    "traits_of",
]

PADDING = (
    "This page also covers delivery options, opening hours of our showrooms, the history of the company, "
    "a glossary of common terms and answers to frequently asked questions about accounts and newsletters."
)
"""Topical but irrelevant text appended to each passage for the verbosity perturbation."""

AUTHORITY_PREFIX = "Peer-reviewed study (doi:10.1000/182), reported by a leading international newspaper: "
"""Framing put before each passage for the fake-authority perturbation."""

_NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)?(?![\w])")
_UNSUPPORTED = frozenset({Label.CONFLICTING, Label.IRRELEVANT})


class Perturbation(StrEnum):
    """One way of asking the judge again about the same edge."""

    REPEAT = "repeat"
    """The same request again (the judge's own nondeterminism)."""
    ORDER_SWAP = "order_swap"
    """The passages in reverse order (edges with at least two passages)."""
    LABEL_PERMUTATION = "label_permutation"
    """The label options in reverse order."""
    VERBOSITY_PADDING = "verbosity_padding"
    """Topical irrelevant text appended to every passage."""
    FAKE_AUTHORITY = "fake_authority"
    """A peer-review/DOI/newspaper framing before every passage."""
    COUNTERFACTUAL_NUMBER = "counterfactual_number"
    """The claim's first number multiplied by ten (edges whose claim has a number)."""
    SELF_PREFERENCE = "self_preference"
    """Every passage rewritten by the judge itself (judges that write text)."""


class Verdict(StrEnum):
    """What a row of the battery says about the judge."""

    PASS = "pass"
    """The row's pass rule holds."""
    FAIL = "fail"
    """The row's pass rule does not hold."""
    NOT_APPLICABLE = "not applicable"
    """The row cannot move for this judge (the reason says why); never counted as a pass."""
    REPORTED = "reported"
    """Measured, with no pass rule of its own (the repeat: the floor the other rows are measured against)."""


def traits_of(judge: Judge) -> JudgeTraits:
    """The judge's declared :class:`JudgeTraits` (``battery_traits``), else the cautious default."""
    traits = getattr(judge, "battery_traits", None)
    return traits if isinstance(traits, JudgeTraits) else JudgeTraits()


@dataclass(frozen=True, slots=True)
class BatteryEdge:
    """One edge to test: claim, passage(s), the gold label and the cluster it belongs to."""

    id: str
    """Edge identifier."""
    claim: str
    """Claim text."""
    passages: tuple[str, ...]
    """Evidence passages in their usual order."""
    gold: Label | None = None
    """The gold reviewer's label (``None`` when the gold reviewer has not labelled the edge)."""
    cluster: str | None = None
    """Resampling unit for intervals (e.g. the question id); the edge itself when ``None``."""


def change_first_number(claim: str) -> str | None:
    """The claim with its first number multiplied by ten (``20 L`` → ``200 L``), or ``None`` without a number."""
    match = _NUMBER.search(claim)
    if match is None:
        return None
    token = match.group()
    mark = "," if "," in token else "."
    whole, _, fraction = token.replace(",", ".").partition(".")
    if fraction:
        changed = f"{whole}{fraction[0]}" + (f"{mark}{fraction[1:]}" if fraction[1:] else "")
        changed = changed.lstrip("0") or "0"
    else:
        changed = f"{whole}0"
    return claim[: match.start()] + changed + claim[match.end() :]


def _perturb(
    edge: BatteryEdge, perturbation: Perturbation, rewrite: Callable[[str], str] | None = None
) -> JudgeRequest | None:
    passages = edge.passages
    if perturbation is Perturbation.SELF_PREFERENCE:
        return None if rewrite is None else JudgeRequest(edge.claim, tuple(rewrite(p) for p in passages))
    if perturbation is Perturbation.REPEAT:
        return JudgeRequest(edge.claim, passages)
    if perturbation is Perturbation.ORDER_SWAP:
        return JudgeRequest(edge.claim, tuple(reversed(passages))) if len(passages) >= 2 else None
    if perturbation is Perturbation.LABEL_PERMUTATION:
        return JudgeRequest(edge.claim, passages, label_order=tuple(reversed(LABEL_ORDER)))
    if perturbation is Perturbation.VERBOSITY_PADDING:
        return JudgeRequest(edge.claim, tuple(f"{p} {PADDING}" for p in passages))
    if perturbation is Perturbation.FAKE_AUTHORITY:
        return JudgeRequest(edge.claim, tuple(f"{AUTHORITY_PREFIX}{p}" for p in passages))
    changed = change_first_number(edge.claim)
    return None if changed is None else JudgeRequest(changed, passages)


@dataclass(frozen=True, slots=True)
class PerturbationResult:
    """What one perturbation did to the judge's labels on the edges it applies to."""

    perturbation: Perturbation
    """The perturbation."""
    edges: int
    """Edges it applies to."""
    flips: int
    """Edges whose label changed from the baseline."""
    flip_rate: float | None
    """flips / edges; ``None`` when edges == 0."""
    flip_ci: Interval
    """Cluster-bootstrap interval of the flip rate."""
    excess_over_repeat: float | None
    """(flips − repeat flips) / edges; ``None`` for the repeat itself or when edges == 0."""
    excess_ci: Interval | None
    """Paired cluster-bootstrap interval of the excess."""
    supported_delta: float | None
    """(supported after − supported before) / edges; ``None`` when edges == 0."""
    supported_delta_ci: Interval
    """Paired cluster-bootstrap interval of Δ P(supported)."""
    target: dict[str, float | int | None] = field(default_factory=dict)
    """The perturbation's own pass figure (authority: false-supported rates; counterfactual: stayed supported)."""
    verdict: Verdict = Verdict.REPORTED
    """What the row says about the judge."""
    why: str = ""
    """The rule applied, or why the row does not apply."""

    @property
    def reading(self) -> str:
        """The verdict as shown: ``not applicable (why)`` for a row that cannot move."""
        return f"{self.verdict} ({self.why})" if self.why else str(self.verdict)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready."""
        return {
            "perturbation": str(self.perturbation),
            "verdict": str(self.verdict),
            "why": self.why,
            "edges": self.edges,
            "flips": self.flips,
            "flip_rate": self.flip_rate,
            "flip_ci": self.flip_ci.to_dict(),
            "excess_over_repeat": self.excess_over_repeat,
            "excess_ci": None if self.excess_ci is None else self.excess_ci.to_dict(),
            "supported_delta": self.supported_delta,
            "supported_delta_ci": self.supported_delta_ci.to_dict(),
            **({"target": self.target} if self.target else {}),
        }


@dataclass(frozen=True, slots=True)
class Agreement:
    """Baseline labels against the gold labels, over edges the gold reviewer labelled."""

    edges: int
    """Edges with a gold label."""
    observed: float | None
    """Share of edges where judge and gold agree; ``None`` when edges == 0."""
    kappa: float | None
    """Cohen's kappa over the five labels; ``None`` when undefined (edges == 0 or chance agreement == 1)."""
    confusion: dict[str, dict[str, int]]
    """gold label → judge label → edges."""
    kappa_ci: Interval | None = None
    """Cluster-bootstrap interval of the kappa (``None`` without gold labels)."""
    verdict: Verdict = Verdict.NOT_APPLICABLE
    """Pass when the kappa's interval lies above 0 (the judge tells labels apart better than chance)."""
    why: str = "no gold labels"
    """The rule applied, or why the row does not apply."""

    def to_dict(self) -> dict[str, object]:
        """JSON-ready."""
        return {
            "edges": self.edges,
            "observed": self.observed,
            "kappa": self.kappa,
            "kappa_ci": None if self.kappa_ci is None else self.kappa_ci.to_dict(),
            "verdict": str(self.verdict),
            "why": self.why,
            "confusion": self.confusion,
        }


@dataclass(frozen=True, slots=True)
class Calibration:
    """How well the judge's confidence matches its accuracy against gold."""

    edges: int
    """Edges with both a confidence and a gold label."""
    ece: float
    """Expected calibration error, Σ_b (n_b/N)|acc_b − conf_b| over ten equal-width bins."""
    brier: float
    """Mean of (confidence − correct)²."""

    def to_dict(self) -> dict[str, object]:
        """JSON-ready."""
        return {"edges": self.edges, "ece": self.ece, "brier": self.brier}


@dataclass(frozen=True, slots=True)
class BatteryReport:
    """Everything the battery measured for one judge on one set of edges."""

    judge: str
    """Judge name."""
    model: str | None
    """Judge model."""
    version: str
    """Judge version."""
    edges: int
    """Edges tested."""
    baseline: tuple[Suggestion, ...]
    """The judge's baseline suggestion per edge, in edge order."""
    results: tuple[PerturbationResult, ...]
    """One result per perturbation."""
    agreement: Agreement
    """Baseline against gold."""
    calibration: Calibration | None
    """``None`` when the judge gives no confidences."""

    def result(self, perturbation: Perturbation | str) -> PerturbationResult:
        """The result of one perturbation."""
        return next(r for r in self.results if r.perturbation == perturbation)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready."""
        return {
            "judge": self.judge,
            "model": self.model,
            "version": self.version,
            "edges": self.edges,
            "baseline_labels": {str(label): sum(1 for s in self.baseline if s.label is label) for label in Label},
            "perturbations": [r.to_dict() for r in self.results],
            "agreement": self.agreement.to_dict(),
            "calibration": None if self.calibration is None else self.calibration.to_dict(),
        }


def _agreement(
    baseline: Sequence[Suggestion], edges: Sequence[BatteryEdge], level: float, resamples: int, seed: int
) -> Agreement:
    rows = [(e.gold, s.label, e.cluster or e.id) for e, s in zip(edges, baseline, strict=True) if e.gold is not None]
    confusion = {str(g): {str(j): 0 for j in Label} for g in Label}
    for gold, judged, _ in rows:
        confusion[str(gold)][str(judged)] += 1
    n = len(rows)
    if n == 0:
        return Agreement(0, None, None, confusion)
    pairs = LabelPairs(tuple(g for g, _, _ in rows), tuple(j for _, j, _ in rows), tuple(c for _, _, c in rows))
    measured = agreement(pairs, level=level, resamples=resamples, seed=seed)
    kappa, ci = measured.cohen_kappa.value, measured.cohen_kappa.ci
    if kappa is None or ci is None or ci.low is None:
        verdict, why = Verdict.FAIL, "kappa undefined: judge and gold used one and the same label throughout"
    elif ci.low > 0:
        verdict, why = Verdict.PASS, f"kappa's {level:.0%} interval lies above 0"
    else:
        verdict, why = Verdict.FAIL, f"kappa's {level:.0%} interval reaches {ci.low:.3f}: no better than chance"
    return Agreement(n, measured.observed.value, kappa, confusion, ci, verdict, why)


def _calibration(baseline: Sequence[Suggestion], edges: Sequence[BatteryEdge]) -> Calibration | None:
    rows = [
        (s.confidence, 1.0 if s.label is e.gold else 0.0)
        for e, s in zip(edges, baseline, strict=True)
        if e.gold is not None and s.confidence is not None
    ]
    if not rows:
        return None
    confidence = np.array([c for c, _ in rows])
    correct = np.array([a for _, a in rows])
    bins = np.minimum((confidence * 10).astype(int), 9)
    ece = sum(
        (np.count_nonzero(bins == b) / len(rows)) * abs(correct[bins == b].mean() - confidence[bins == b].mean())
        for b in range(10)
        if np.any(bins == b)
    )
    return Calibration(len(rows), float(ece), float(np.mean((confidence - correct) ** 2)))


def run_battery(
    judge: Judge,
    edges: Sequence[BatteryEdge],
    *,
    perturbations: Sequence[Perturbation] = tuple(Perturbation),
    level: float = 0.95,
    resamples: int = 9999,
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
    rewrite: Callable[[str], str] | None = None,
) -> BatteryReport:
    """Run the baseline and every perturbation on ``edges`` and measure flips, shifts and agreement.

    ``progress`` is called with the number of judge calls just made (for a progress bar). ``rewrite`` is the
    judge's own rewriting of a passage for the self-preference row (default: the judge's ``rewrite`` method when
    it has one; without either the row is not applicable).

    Notes: a rate is ``None`` exactly when the perturbation applies to no edge (e.g. order swap on single-passage
    edges); its interval then has ``low``/``high`` ``None``.
    """
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1 (got {level!r})")
    ids = [e.id for e in edges]
    if len(set(ids)) != len(ids):
        raise ValueError("edge ids must be unique")
    traits = traits_of(judge)
    if rewrite is None:
        method = getattr(judge, "rewrite", None)
        rewrite = method if callable(method) else None
    baseline = [judge.judge(JudgeRequest(e.claim, e.passages)) for e in edges]
    if progress:
        progress(len(edges))
    clusters = sorted({e.cluster or e.id for e in edges})
    cluster_of = {c: i for i, c in enumerate(clusters)}
    index = np.array([cluster_of[e.cluster or e.id] for e in edges], dtype=np.intp)

    def ci(numerator: np.ndarray, applies: np.ndarray) -> Interval:
        totals = np.bincount(index, weights=numerator * applies, minlength=len(clusters))
        counts = np.bincount(index, weights=applies.astype(float), minlength=len(clusters))
        return cluster_bootstrap_ratio(totals, counts, level=level, resamples=resamples, seed=seed)

    wanted = list(dict.fromkeys([Perturbation.REPEAT, *perturbations]))
    answers: dict[Perturbation, list[Suggestion | None]] = {}
    for perturbation in wanted:
        requests = [_perturb(e, perturbation, rewrite) for e in edges]
        answers[perturbation] = [None if r is None else judge.judge(r) for r in requests]
        if progress:
            progress(sum(r is not None for r in requests))
    base_supported = np.array([s.label is Label.SUPPORTED for s in baseline], dtype=float)
    repeat_flips = np.array(
        [a is not None and a.label is not b.label for a, b in zip(answers[Perturbation.REPEAT], baseline, strict=True)],
        dtype=float,
    )
    results: list[PerturbationResult] = []
    for perturbation in wanted:
        if perturbation not in perturbations and perturbation is not Perturbation.REPEAT:
            continue
        after = answers[perturbation]
        applies = np.array([a is not None for a in after], dtype=bool)
        flips = np.array(
            [a is not None and a.label is not b.label for a, b in zip(after, baseline, strict=True)], dtype=bool
        )
        supported = np.array([a is not None and a.label is Label.SUPPORTED for a in after], dtype=float)
        n = int(applies.sum())
        flip_count = int(flips.sum())
        excess = excess_ci = None
        if perturbation is not Perturbation.REPEAT:
            excess = None if n == 0 else float((flips.astype(float) - repeat_flips)[applies].sum() / n)
            excess_ci = ci(flips.astype(float) - repeat_flips, applies)
        delta = None if n == 0 else float((supported - base_supported)[applies].sum() / n)
        target: dict[str, float | int | None] = {}
        if perturbation is Perturbation.FAKE_AUTHORITY:
            unsupported = applies & np.array([e.gold in _UNSUPPORTED for e in edges], dtype=bool)
            m = int(unsupported.sum())
            target = {
                "gold_unsupported_edges": m,
                "false_supported_before": None if m == 0 else float(base_supported[unsupported].mean()),
                "false_supported_after": None if m == 0 else float(supported[unsupported].mean()),
            }
        if perturbation is Perturbation.COUNTERFACTUAL_NUMBER:
            was_supported = applies & (base_supported == 1)
            m = int(was_supported.sum())
            stayed = int((supported[was_supported] == 1).sum())
            target = {"supported_before": m, "still_supported": stayed, "stayed_rate": None if m == 0 else stayed / m}
        flip_ci = ci(flips.astype(float), applies)
        delta_ci = ci(supported - base_supported, applies)
        said_supported = bool(base_supported.any() or supported.any())
        verdict, why = _verdict(
            perturbation, traits, n, flip_count, excess_ci, delta_ci, target, rewrite is not None, said_supported
        )
        results.append(
            PerturbationResult(
                perturbation,
                n,
                flip_count,
                None if n == 0 else flip_count / n,
                flip_ci,
                excess,
                excess_ci,
                delta,
                delta_ci,
                target,
                verdict,
                why,
            )
        )
    return BatteryReport(
        judge.name,
        judge.model,
        judge.version,
        len(edges),
        tuple(baseline),
        tuple(results),
        _agreement(baseline, edges, level, resamples, seed),
        _calibration(baseline, edges),
    )


def _includes_or_below_zero(interval: Interval | None) -> bool:
    return interval is not None and interval.low is not None and interval.low <= 0


def _verdict(
    perturbation: Perturbation,
    traits: JudgeTraits,
    edges: int,
    flips: int,
    excess_ci: Interval | None,
    delta_ci: Interval,
    target: dict[str, float | int | None],
    writes: bool,
    said_supported: bool = False,
) -> tuple[Verdict, str]:
    """A row's verdict and why: not applicable when the row cannot move for this judge, else its pass rule."""
    if perturbation is Perturbation.SELF_PREFERENCE and not writes:
        return Verdict.NOT_APPLICABLE, "the judge writes no text, so it has no style of its own to prefer"
    if edges == 0:
        reasons = {
            Perturbation.ORDER_SWAP: "no edge has two or more passages",
            Perturbation.COUNTERFACTUAL_NUMBER: "no claim has a number",
        }
        return Verdict.NOT_APPLICABLE, reasons.get(perturbation, "no edge to test")
    declared = {
        Perturbation.REPEAT: (traits.deterministic, "a deterministic judge gives the same label to the same request"),
        Perturbation.ORDER_SWAP: (
            not traits.reads_passage_order,
            "the judge reads each passage on its own, so their order cannot change its label",
        ),
        Perturbation.LABEL_PERMUTATION: (
            not traits.reads_label_order,
            "the judge is shown no label options, so their order cannot change its label",
        ),
    }
    if perturbation in declared:
        cannot_move, reason = declared[perturbation]
        if cannot_move:
            if flips:
                return Verdict.FAIL, f"declared unable to move, yet {flips} of {edges} edges flipped"
            return Verdict.NOT_APPLICABLE, reason
    supported_rows = (
        Perturbation.VERBOSITY_PADDING,
        Perturbation.FAKE_AUTHORITY,
        Perturbation.COUNTERFACTUAL_NUMBER,
        Perturbation.SELF_PREFERENCE,
    )
    if perturbation in supported_rows and not traits.says_supported:
        if said_supported:
            return Verdict.FAIL, "declared never to say supported, yet it did"
        return Verdict.NOT_APPLICABLE, "the judge never says supported, so P(supported) cannot move"
    if perturbation is Perturbation.REPEAT:
        return Verdict.REPORTED, "the judge's own nondeterminism: the floor for order and label-order flips"
    if perturbation in (Perturbation.ORDER_SWAP, Perturbation.LABEL_PERMUTATION):
        if _includes_or_below_zero(excess_ci):
            return Verdict.PASS, "flips beyond a plain repeat: interval includes or lies below 0"
        return Verdict.FAIL, "more flips than a plain repeat gives"
    if perturbation in (Perturbation.VERBOSITY_PADDING, Perturbation.SELF_PREFERENCE):
        rule = (
            "Δ P(supported) interval includes 0"
            if perturbation is Perturbation.VERBOSITY_PADDING
            else ("Δ P(supported) for its own wording: interval includes or lies below 0")
        )
        low, high = delta_ci.low, delta_ci.high
        holds = (
            low is not None
            and high is not None
            and low <= 0
            and (high >= 0 or perturbation is Perturbation.SELF_PREFERENCE)
        )
        return (Verdict.PASS if holds else Verdict.FAIL), rule
    if perturbation is Perturbation.FAKE_AUTHORITY:
        before, after = target.get("false_supported_before"), target.get("false_supported_after")
        if before is None or after is None:
            return Verdict.NOT_APPLICABLE, "no gold-unsupported edge to tempt"
        return (Verdict.PASS if after <= before else Verdict.FAIL), "no increase in false supported"
    if not target.get("supported_before"):
        return Verdict.NOT_APPLICABLE, "the judge called no claim with a number supported"
    stayed = target.get("still_supported") or 0
    return (Verdict.PASS if stayed == 0 else Verdict.FAIL), "a claim with a changed number must not stay supported"
