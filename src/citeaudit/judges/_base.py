"""What every judge takes and gives: a request about one edge, and a suggestion that never decides on its own."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from citeaudit.core.model import Judgement, Label, Origin, Stage

__all__ = ["LABEL_ORDER", "Judge", "JudgeRequest", "JudgeTraits", "Suggestion"]

LABEL_ORDER: tuple[Label, ...] = tuple(Label)
"""The label options in their canonical order (the battery permutes it)."""


@dataclass(frozen=True, slots=True)
class JudgeRequest:
    """One edge to judge: a claim and the passage(s) of its source(s), in the order shown to the judge."""

    claim: str
    """The claim text."""
    passages: tuple[str, ...]
    """Evidence passages (several for several sources or several ranked passages)."""
    label_order: tuple[Label, ...] = LABEL_ORDER
    """The order the label options are presented in (judges that read a prompt see them in this order)."""
    claim_locale: str = "en"
    """Locale of the claim (numbers and dates)."""
    passage_locale: str | None = None
    """Locale of the passages when it differs."""


@dataclass(frozen=True, slots=True)
class Suggestion:
    """A model's proposed label for one edge, with where it came from. Never a final label by itself."""

    label: Label
    """The proposed label (``unknown`` whenever the judge's output could not be used)."""
    judge: str
    """Judge name: ``checks``, ``nli`` or ``openai``."""
    version: str
    """Judge version (the checks' rule version, the prompt version, the NLI code version)."""
    model: str | None = None
    """Model identifier (path or endpoint model name); ``None`` for the deterministic checks."""
    prompt_sha256: str | None = None
    """Hash of the prompt, label options and output schema the judge used."""
    quote: str | None = None
    """The passage (or quote from it) the label rests on."""
    reasoning: str | None = None
    """Why, in the judge's words."""
    confidence: float | None = None
    """Probability of the proposed label when the judge gives one (NLI softmax), else ``None``."""
    failure: str | None = None
    """Why the output could not be used (malformed, refused, unknown label); the label is then ``unknown``."""
    extra: dict[str, float] = field(default_factory=dict)
    """Judge-specific scores (e.g. NLI probabilities per class)."""

    def to_judgement(self, created_at: str | None = None) -> Judgement:
        """The judgement row to store: origin ``model``, with the judge's provenance."""
        reasoning = (
            self.reasoning
            if self.failure is None
            else f"{self.failure}" + (f" ({self.reasoning})" if self.reasoning else "")
        )
        return Judgement(
            label=self.label,
            reviewer=f"{self.judge}:{self.model}" if self.model else self.judge,
            origin=Origin.MODEL,
            stage=Stage.REVIEW,
            passage=self.quote,
            reasoning=reasoning,
            created_at=created_at,
            judge=self.judge,
            judge_model=self.model,
            judge_version=self.version,
            prompt_sha256=self.prompt_sha256,
            confidence=self.confidence,
        )


@dataclass(frozen=True, slots=True)
class JudgeTraits:
    """What a judge declares about how it reads a request (a judge sets ``battery_traits``; unset means the
    cautious default: nondeterministic, reads both orders)."""

    deterministic: bool = False
    """The same request always gives the same label."""
    reads_passage_order: bool = True
    """The label can depend on the order of the passages (``False``: each passage is read on its own)."""
    reads_label_order: bool = True
    """The judge is shown the label options, so their order can matter."""
    says_supported: bool = True
    """The judge can propose ``supported`` (``False``: it only refutes, so rows about P(supported) cannot move)."""


@runtime_checkable
class Judge(Protocol):
    """Anything that proposes a label for an edge."""

    name: str
    """Judge name."""
    version: str
    """Judge version."""
    model: str | None
    """Model identifier, if any."""

    def judge(self, request: JudgeRequest) -> Suggestion:
        """Propose a label for one edge."""
        ...
