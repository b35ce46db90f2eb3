"""Triage: the edges the offline judges are sure about, offered to a reviewer in a batch to confirm or open.

Two reasons put an edge in the triage, each with a threshold on the relevance judge's similarity (the cosine
similarity of the claim and the edge's best passage under the packaged all-MiniLM-L6-v2):

- **check_conflict**: a deterministic check finds a number, unit, date, certificate or model identifier that
  differs between the claim and a passage whose similarity to the claim is at least ``conflict_min`` (the passage
  is about the claim's subject, so the differing value is a conflict, not another topic) → ``conflicting``; off
  unless ``conflict_min`` is given, since no threshold met the precision target on the benchmark
  (:data:`CONFLICT_OFF`);
- **irrelevant**: no check fires and the best passage's similarity is below ``irrelevant_below`` → ``irrelevant``.

Everything else is left to the reviewer as usual. A triage call is a suggestion: it becomes a label only when a
reviewer confirms it, which records a human judgement. The thresholds below were chosen by
``benchmarks/bench_judges.py`` on one half of Factcheck-Bench's claims (for precision ≥ 0.95 against the human
stance) and are reported there on the other half.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from citeaudit.core.model import Label
from citeaudit.judges._base import JudgeRequest, JudgeTraits, Suggestion

if TYPE_CHECKING:
    from citeaudit.evidence import Encoder

__all__ = [
    "CONFLICT_OFF",
    "DEFAULT_THRESHOLDS",
    "TRIAGE_JUDGE",
    "TRIAGE_VERSION",
    "RelevanceJudge",
    "TriageCall",
    "TriageReason",
    "TriageThresholds",
    "triage_call",
]

TRIAGE_JUDGE = "triage"
"""The judge name triage suggestions are stored under."""

TRIAGE_VERSION = "triage-v1"
"""Changes whenever a rule or a default threshold changes."""


class TriageReason(StrEnum):
    """Why an edge is offered in the triage."""

    CHECK_CONFLICT = "check_conflict"
    """A deterministic check finds a differing number, unit, date or identifier in an on-topic passage."""
    IRRELEVANT = "irrelevant"
    """The relevance judge rates the best passage below the threshold."""

    @property
    def label(self) -> Label:
        """The label the reason proposes."""
        return Label.CONFLICTING if self is TriageReason.CHECK_CONFLICT else Label.IRRELEVANT


@dataclass(frozen=True, slots=True)
class TriageThresholds:
    """The similarity thresholds of the two reasons."""

    conflict_min: float | None
    """A check's conflict counts only in a passage at least this similar to the claim; ``None`` turns the reason
    off (an edge whose only reason would be a conflict is left to the reviewer)."""
    irrelevant_below: float
    """An edge whose best passage is less similar than this is offered as irrelevant."""

    def __post_init__(self) -> None:
        for name in ("conflict_min", "irrelevant_below"):
            value = getattr(self, name)
            if value is None and name == "conflict_min":
                continue
            if not -1.0 <= value <= 1.0:
                raise ValueError(f"{name} must be a cosine similarity between -1 and 1 (got {value!r})")


CONFLICT_OFF = (
    "off by default: on Factcheck-Bench no similarity threshold on the selection half reached precision 0.95 "
    "(the best, 0.70, offered 1/2 correctly) and on the held-out half it offered 0/1; --conflict-min turns it on"
)
"""Why the ``check_conflict`` reason is not offered unless asked for, with the measured figures."""

DEFAULT_THRESHOLDS = TriageThresholds(conflict_min=None, irrelevant_below=0.28)
"""Chosen on Factcheck-Bench's selection half by ``benchmarks/bench_judges.py``: ``irrelevant_below`` offers the most
edges at precision ≥ 0.95 there (0.957 on the held-out half); no ``conflict_min`` reaches 0.95, so the conflict
reason is off unless a threshold is given (:data:`CONFLICT_OFF`; docs/review.md, "Triage")."""


@dataclass(frozen=True, slots=True)
class TriageCall:
    """An edge the triage offers: the reason, the proposed label, the passage it rests on and why."""

    reason: TriageReason
    """Why the edge is offered."""
    passage: str
    """The passage the call rests on (the conflicting one, or the best one)."""
    similarity: float
    """The relevance judge's similarity of that passage to the claim."""
    detail: str
    """What a reviewer reads: the check's finding, or the similarity against the threshold."""

    @property
    def label(self) -> Label:
        """The proposed label."""
        return self.reason.label


def triage_call(
    claim: str,
    passages: Sequence[str],
    similarities: Sequence[float],
    conflicts: Sequence[str | None],
    thresholds: TriageThresholds = DEFAULT_THRESHOLDS,
) -> TriageCall | None:
    """The triage call for one edge from its passages' similarities to the claim and the checks' conflicts (one
    finding text per passage, ``None`` where no check fires), or ``None`` when the edge is left to the reviewer.

    Notes: an edge with no passage is never offered (nothing read is not evidence).
    """
    if not len(passages) == len(similarities) == len(conflicts):
        raise ValueError(
            f"passages, similarities and conflicts must be equally long "
            f"(got {len(passages)}, {len(similarities)} and {len(conflicts)})"
        )
    if not passages:
        return None
    on_topic = [
        (s, p, c)
        for p, s, c in zip(passages, similarities, conflicts, strict=True)
        if c and thresholds.conflict_min is not None and s >= thresholds.conflict_min
    ]
    if on_topic:
        similarity, passage, finding = max(on_topic, key=lambda row: row[0])
        assert finding is not None
        return TriageCall(TriageReason.CHECK_CONFLICT, passage, similarity, finding)
    if any(conflicts):
        # A check fired in a passage about something else: neither reason is sure.
        return None
    best = max(range(len(passages)), key=lambda i: similarities[i])
    if similarities[best] < thresholds.irrelevant_below:
        detail = f"best passage similarity {similarities[best]:.3f} < {thresholds.irrelevant_below:.2f}"
        return TriageCall(TriageReason.IRRELEVANT, passages[best], similarities[best], detail)
    return None


class RelevanceJudge:
    """The dense model as a relevance judge: ``irrelevant`` when no passage is as similar to the claim as the
    threshold, else ``unknown`` (relevant, but whether it supports is for a reviewer or another judge).

    ``encoder`` is anything with ``encode(texts)`` returning unit-length rows (by default the packaged
    all-MiniLM-L6-v2, extra ``citeaudit[models]``).
    """

    name = "relevance"
    version = "relevance-v1"
    battery_traits = JudgeTraits(
        deterministic=True, reads_passage_order=False, reads_label_order=False, says_supported=False
    )
    """Same request, same label; each passage is scored on its own; no label options are shown; never supported."""

    def __init__(self, encoder: Encoder | None = None, threshold: float = DEFAULT_THRESHOLDS.irrelevant_below) -> None:
        from citeaudit.evidence import default_encoder

        self.encoder: Encoder = encoder if encoder is not None else default_encoder()
        self.threshold = threshold
        path = getattr(self.encoder, "path", None)
        self.model: str | None = None if path is None else str(getattr(path, "name", path))

    def similarities(self, claim: str, passages: Sequence[str]) -> list[float]:
        """Cosine similarity of each passage to the claim."""
        if not passages:
            return []
        rows = self.encoder.encode([claim, *passages])
        return [float(x) for x in rows[1:] @ rows[0]]

    def judge(self, request: JudgeRequest) -> Suggestion:
        """``irrelevant`` below the threshold, else ``unknown``; the similarity is the confidence's stand-in."""
        if not request.passages:
            return Suggestion(Label.UNKNOWN, self.name, self.version, self.model, failure="no passage to judge")
        scores = self.similarities(request.claim, request.passages)
        best = max(range(len(scores)), key=lambda i: scores[i])
        label = Label.IRRELEVANT if scores[best] < self.threshold else Label.UNKNOWN
        return Suggestion(
            label,
            self.name,
            self.version,
            self.model,
            quote=request.passages[best],
            reasoning=f"best passage similarity {scores[best]:.3f} (threshold {self.threshold:.2f})",
            extra={"similarity": scores[best]},
        )
