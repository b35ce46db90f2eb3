"""Honest run comparison: the same protocol, the same questions, paired per question, never causal.

Two scopes are compared only when their protocol fingerprints match and they cover the same question ids.
For each headline metric and slice the difference B − A gets a paired cluster-bootstrap interval over
questions, a sign-flip permutation p-value and a minimum detectable effect.

The overall row is always the comparison of the whole scopes per question, whatever ``by`` asks for: it equals
the comparison without ``by``. Its three metrics are one family, Holm-adjusted together. The groups form another
family (every group × every metric) whose p-values are Holm-adjusted together. Every wording follows its adjusted
p-value: under the null the chance that any metric of the overall row, or any group, reads "associated" stays at
or below ``1 - level``. A group with too few differing questions for the sign-flip test ever to reach that level
says so instead.

When precision and coverage are both lower in B, each fall distinguishable from noise, the first thing to rule
out is that the two sides were cut up or cited differently rather than answered worse: the comparison then opens
with what changed between the sides in segmentation (method, version, claims per answer) and in the cited
documents (snapshot dates, sources cited on both sides whose snapshot content differs), before any other note.
Lower point estimates alone open it with "no change distinguishable from noise".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from citeaudit.core.errors import IncomparableRuns
from citeaudit.core.model import Audit
from citeaudit.core.protocol import differing_components
from citeaudit.core.results import Metric, ScopeScore
from citeaudit.core.scope import Scope
from citeaudit.core.stats import ASSOCIATED, Difference, holm, paired_ratio_difference, reading
from citeaudit.scoring.paths import ScoredPath, load_scope, score_path

__all__ = [
    "METRICS",
    "NOISE_ONLY",
    "Comparison",
    "SliceComparison",
    "both_lower",
    "compare_groups",
    "compare_overall",
    "compare_paths",
    "compare_totals",
    "diagnose",
    "lower_on_points_only",
]

METRICS = ("official_rate", "precision", "coverage")
"""The headline metrics compared."""


@dataclass(frozen=True, slots=True)
class SliceComparison:
    """One slice (the whole scope, or one group) compared metric by metric."""

    by: tuple[tuple[str, str | None], ...]
    """Group values (empty for the whole scope)."""
    metrics: dict[str, Difference]
    """B − A per metric."""
    adjusted_p: dict[str, float | None]
    """Holm-adjusted p-values: across the three metrics for the whole scope, across every group and metric for
    the groups."""

    @property
    def wording(self) -> dict[str, str]:
        """How each metric's difference may be described, from its adjusted p-value and its interval."""
        return {name: reading(difference, self.adjusted_p[name]) for name, difference in self.metrics.items()}

    def to_dict(self) -> dict[str, object]:
        """JSON form: per metric ``{a, b, delta, ci, p_value, p_value_holm, mde, wording}``."""
        body: dict[str, object] = {"by": dict(self.by)} if self.by else {}
        wording = self.wording
        body["metrics"] = {
            name: {**difference.described(wording[name]), "p_value_holm": self.adjusted_p[name]}
            for name, difference in self.metrics.items()
        }
        return body


@dataclass(frozen=True, slots=True)
class Comparison:
    """A comparison of two scopes measured the same way."""

    a: ScoredPath
    """Scope A as scored."""
    b: ScoredPath
    """Scope B as scored."""
    overall: SliceComparison
    """The whole scopes."""
    groups: tuple[SliceComparison, ...]
    """One comparison per group present in A or B."""
    diagnosis: tuple[str, ...] = ()
    """When precision and coverage are both lower in B: what changed between the sides in segmentation and in the
    cited documents, to read before anything else (empty otherwise)."""

    def to_dict(self) -> dict[str, object]:
        """JSON form."""
        return {
            "diagnosis": list(self.diagnosis),
            "fingerprint": self.a.result.fingerprint,
            "a": self.a.result.to_dict(),
            "b": self.b.result.to_dict(),
            **self.overall.to_dict(),
            "groups": [g.to_dict() for g in self.groups],
            "warnings": {"a": list(self.a.warnings), "b": list(self.b.warnings)},
            "note": "differences are associations between two measurements, not causal effects",
        }


def _pair(metric: Metric | None) -> tuple[float, float]:
    return (float(metric.numerator), float(metric.denominator)) if metric else (0.0, 0.0)


def _per_question(
    scored: ScoredPath, slice_by: tuple[tuple[str, str | None], ...], questions: list[str], metric: str
) -> tuple[np.ndarray, np.ndarray]:
    """Per-question totals of one slice; ``scored`` must be grouped by the slice's dimensions and ``question``,
    so that each question has at most one group in the slice."""
    wanted = dict(slice_by)
    found: dict[str, ScopeScore] = {}
    for group in scored.result.groups:
        values = dict(group.by)
        if all(values[name] == value for name, value in wanted.items()):
            question = str(values["question"])
            if question in found:
                raise ValueError(f"question {question!r} has more than one group in slice {wanted!r}")
            found[question] = group
    totals = [_pair(getattr(found[q], metric)) if q in found else (0.0, 0.0) for q in questions]
    return np.array([t[0] for t in totals]), np.array([t[1] for t in totals])


def compare_overall(metrics: Mapping[str, Difference]) -> SliceComparison:
    """The whole scopes' comparison: the three metrics are one family, their p-values Holm-adjusted together, so
    that under the null the chance that any of them reads "associated" stays at or below ``1 - level``."""
    names = list(metrics)
    adjusted = holm([metrics[name].p_value for name in names])
    return SliceComparison((), dict(metrics), dict(zip(names, adjusted, strict=True)))


def compare_totals(
    a: Mapping[str, tuple[np.ndarray, np.ndarray]],
    b: Mapping[str, tuple[np.ndarray, np.ndarray]],
    *,
    level: float = 0.95,
    resamples: int = 9999,
    seed: int = 0,
) -> SliceComparison:
    """The whole scopes compared from per-question ``(numerators, denominators)`` of each metric (same questions,
    same order, on both sides)."""
    return compare_overall(
        {
            metric: paired_ratio_difference(a[metric], b[metric], level=level, resamples=resamples, seed=seed)
            for metric in METRICS
        }
    )


def compare_groups(
    keys: Sequence[tuple[tuple[str, str | None], ...]], raw: Sequence[dict[str, Difference]]
) -> tuple[SliceComparison, ...]:
    """The groups' comparisons as one family: p-values Holm-adjusted across every group and metric together."""
    flat = holm([difference.p_value for metrics in raw for difference in metrics.values()])
    groups, position = [], 0
    for key, metrics in zip(keys, raw, strict=True):
        adjusted = dict(zip(metrics, flat[position : position + len(metrics)], strict=True))
        position += len(metrics)
        groups.append(SliceComparison(key, metrics, adjusted))
    return tuple(groups)


def compare_paths(
    a: str | Path,
    b: str | Path,
    *,
    scope_a: Scope = Scope(),
    scope_b: Scope = Scope(),
    by: Sequence[str] = (),
    protocol_a: str | None = None,
    protocol_b: str | None = None,
    level: float = 0.95,
    resamples: int = 9999,
    seed: int = 0,
) -> Comparison:
    """Compare two audit files or databases; refused unless measured the same way on the same questions."""
    by = tuple(by)
    per_question = (*[d for d in by if d != "question"], "question")
    left = score_path(a, scope=scope_a, by=per_question, protocol=protocol_a)
    right = score_path(b, scope=scope_b, by=per_question, protocol=protocol_b)
    differences = differing_components(left.protocol, right.protocol)
    if differences:
        raise IncomparableRuns(differences)
    questions_a = {str(dict(g.by)["question"]) for g in left.result.groups}
    questions_b = {str(dict(g.by)["question"]) for g in right.result.groups}
    if questions_a != questions_b:
        raise IncomparableRuns(
            {
                "question ids in scope": (
                    f"only in A: {', '.join(sorted(questions_a - questions_b)) or 'none'}",
                    f"only in B: {', '.join(sorted(questions_b - questions_a)) or 'none'}",
                )
            }
        )
    questions = sorted(questions_a)
    if by:
        # The overall row pairs whole questions: scored by question alone, never from one group per question.
        whole_a = score_path(a, scope=scope_a, by=("question",), protocol=protocol_a)
        whole_b = score_path(b, scope=scope_b, by=("question",), protocol=protocol_b)
    else:
        whole_a, whole_b = left, right
    shown_a = score_path(a, scope=scope_a, by=by, protocol=protocol_a)
    shown_b = score_path(b, scope=scope_b, by=by, protocol=protocol_b)

    def compare_slice(
        slice_by: tuple[tuple[str, str | None], ...], in_a: ScoredPath, in_b: ScoredPath
    ) -> dict[str, Difference]:
        return {
            metric: paired_ratio_difference(
                _per_question(in_a, slice_by, questions, metric),
                _per_question(in_b, slice_by, questions, metric),
                level=level,
                resamples=resamples,
                seed=seed,
            )
            for metric in METRICS
        }

    overall = compare_overall(compare_slice((), whole_a, whole_b))
    keys = sorted(
        {g.by for g in (*shown_a.result.groups, *shown_b.result.groups)},
        key=lambda k: tuple((v is not None, v or "") for _, v in k),
    )
    raw = [compare_slice(key, left, right) for key in keys]
    diagnosis: tuple[str, ...] = ()
    if both_lower(overall):
        diagnosis = diagnose(
            load_scope(a, scope=scope_a, protocol=protocol_a), load_scope(b, scope=scope_b, protocol=protocol_b)
        )
    elif lower_on_points_only(overall):
        diagnosis = (NOISE_ONLY,)
    return Comparison(shown_a, shown_b, overall, compare_groups(keys, raw), diagnosis)


NOISE_ONLY = (
    "precision and coverage are both lower in B on the point estimates only: no change distinguishable from noise"
)
"""What the comparison says when both point estimates fall but neither fall can be told from noise."""


def both_lower(overall: SliceComparison) -> bool:
    """Precision and coverage both lower in B than in A, each fall distinguishable from noise (worded "associated"
    by its adjusted p-value and its interval): only then is it worth checking segmentation and documents."""
    wording = overall.wording
    return all(
        wording[name] == ASSOCIATED and (delta := overall.metrics[name].delta) is not None and delta < 0
        for name in ("precision", "coverage")
    )


def lower_on_points_only(overall: SliceComparison) -> bool:
    """Both point estimates lower in B, but not both falls distinguishable from noise."""
    deltas = [overall.metrics[name].delta for name in ("precision", "coverage")]
    return all(delta is not None and delta < 0 for delta in deltas) and not both_lower(overall)


def _claims_per_answer(audit: Audit) -> str:
    answers = len(audit.answers)
    return "no answers" if not answers else f"{len(audit.claims) / answers:.2f} ({len(audit.claims)}/{answers})"


def _dates(audit: Audit, keys: set[str]) -> str:
    dates = sorted(s.fetched_at[:10] for s in audit.sources if s.key in keys and s.fetched_at)
    undated = len(keys) - len(dates)
    span = "none dated" if not dates else dates[0] if dates[0] == dates[-1] else f"{dates[0]} to {dates[-1]}"
    return span + (f", {undated} undated" if dates and undated else "")


def diagnose(a: Audit, b: Audit) -> tuple[str, ...]:
    """What changed between two scopes whose precision and coverage both fell: segmentation (method, version,
    claims per answer) and cited documents (snapshot dates, sources cited on both sides with different snapshot
    content)."""
    seg_a, seg_b = a.protocol.segmentation, b.protocol.segmentation
    method_a = f"{seg_a.method} {seg_a.version or '(no version)'}"
    method_b = f"{seg_b.method} {seg_b.version or '(no version)'}"
    cited_a = {e.source_key for e in a.edges}
    cited_b = {e.source_key for e in b.edges}
    content_a = {s.key: s.content_hash for s in a.sources if s.content_hash}
    content_b = {s.key: s.content_hash for s in b.sources if s.content_hash}
    shared = cited_a & cited_b
    revised = sorted(k for k in shared if k in content_a and k in content_b and content_a[k] != content_b[k])
    lines = [
        "precision and coverage are both lower in B: check segmentation and document versions first",
        "segmentation: "
        + (f"{method_a} on both sides" if method_a == method_b else f"A {method_a}, B {method_b}")
        + f"; claims per answer A {_claims_per_answer(a)}, B {_claims_per_answer(b)}",
        f"cited documents: A {len(cited_a)} sources (snapshots {_dates(a, cited_a)}), B {len(cited_b)} sources "
        f"(snapshots {_dates(b, cited_b)}); {len(shared)} cited on both sides, "
        f"{len(revised)} of them with a different snapshot (revisions of the same source)"
        + (f": {', '.join(revised[:3])}{' …' if len(revised) > 3 else ''}" if revised else ""),
    ]
    return tuple(lines)
