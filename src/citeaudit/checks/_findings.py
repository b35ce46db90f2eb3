"""What a consistency check reports: one finding per claim mention that the passage contradicts or leaves open."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["CheckReport", "Finding", "FindingKind", "Match", "Span"]


class FindingKind(StrEnum):
    """What kind of inconsistency a finding reports."""

    QUANTITY_MISMATCH = "quantity_mismatch"
    """A quantity with a unit whose value differs from every comparable quantity in the passage."""
    ENTITY_MISMATCH = "entity_mismatch"
    """The claim names a model identifier or part number; the passage names another of the same family only."""
    CERTIFICATE_MISMATCH = "certificate_mismatch"
    """A certificate identifier (FCC ID, UL file, certificate number, standard edition) differs."""
    CERTIFICATE_SCOPE = "certificate_scope"
    """The certificate the passage names covers something else (another standard, directive or UL category)."""
    DATE_MISMATCH = "date_mismatch"
    """A dated fact (issue, expiry, validity) whose date differs from the passage's date of the same role."""
    VALIDITY_EXPIRED = "validity_expired"
    """The passage says the certificate or statement expired before the date the claim applies it to."""


@dataclass(frozen=True, slots=True)
class Span:
    """A character span of the claim or the passage."""

    start: int
    """Start offset."""
    end: int
    """End offset (exclusive)."""
    text: str
    """The text of the span."""

    def to_dict(self) -> dict[str, object]:
        """``{"start", "end", "text"}``."""
        return {"start": self.start, "end": self.end, "text": self.text}


@dataclass(frozen=True, slots=True)
class Finding:
    """One claim mention the passage contradicts (``conflict``) or leaves in doubt."""

    kind: FindingKind
    """What kind of inconsistency."""
    claim_span: Span
    """Where the claim states it."""
    passage_span: Span | None
    """Where the passage states the other value (``None`` when the passage has nothing to compare)."""
    detail: str
    """A sentence a reviewer can read, with both values."""
    conflict: bool
    """``True`` when the passage states a different value for the same thing; ``False`` for a doubt only."""

    def to_dict(self) -> dict[str, object]:
        """The finding object of ``citeaudit checks --format json``."""
        return {
            "kind": str(self.kind),
            "claim_span": self.claim_span.to_dict(),
            "passage_span": None if self.passage_span is None else self.passage_span.to_dict(),
            "detail": self.detail,
            "conflict": self.conflict,
        }


@dataclass(frozen=True, slots=True)
class Match:
    """A claim mention the passage states equivalently (e.g. 20 L and 20 000 mL): evidence, not a finding."""

    kind: str
    """``quantity``, ``entity``, ``certificate`` or ``date``."""
    claim_span: Span
    """Where the claim states it."""
    passage_span: Span
    """Where the passage states it."""

    def to_dict(self) -> dict[str, object]:
        """``{"kind", "claim_span", "passage_span"}``."""
        return {"kind": self.kind, "claim_span": self.claim_span.to_dict(), "passage_span": self.passage_span.to_dict()}


@dataclass(frozen=True, slots=True)
class CheckReport:
    """Everything the deterministic checks found for one (claim, passage) pair."""

    findings: tuple[Finding, ...]
    """Inconsistencies, in claim order."""
    matches: tuple[Match, ...]
    """Claim mentions the passage states equivalently."""
    checked: int
    """Claim mentions checked (quantities, identifiers, certificates, dates)."""
    version: str
    """Version of the checks (changes when a rule changes)."""

    @property
    def conflicts(self) -> int:
        """Findings that are conflicts."""
        return sum(1 for f in self.findings if f.conflict)

    def to_dict(self) -> dict[str, object]:
        """The JSON object ``citeaudit checks --format json`` prints."""
        return {
            "findings": [f.to_dict() for f in self.findings],
            "matches": [m.to_dict() for m in self.matches],
            "conflicts": self.conflicts,
            "checked": self.checked,
            "version": self.version,
        }
