"""The records the review store reads and writes: accounts, queue rows, an edge as the edge page shows it,
judgements with their row ids (the review policy's record, named here too), passages, evidence groups and
audit-log entries."""

from __future__ import annotations

from dataclasses import dataclass

from citeaudit.core.model import Label, ReviewState, Severity
from citeaudit.core.review_policy import StoredJudgement

__all__ = [
    "AuditLogEntry",
    "EdgeView",
    "FileJudgement",
    "GroupView",
    "QueueFilter",
    "QueueRow",
    "Reviewer",
    "ShownPassage",
    "StoredJudgement",
]


@dataclass(frozen=True, slots=True)
class Reviewer:
    """A review account."""

    pk: int
    """Row id (the queue order is seeded by it)."""
    name: str
    """Login name; judgements carry it as ``reviewer``."""
    role: str
    """``reviewer``, ``adjudicator`` or ``admin``."""
    password_hash: str
    """Argon2id hash of the password."""


@dataclass(frozen=True, slots=True)
class QueueFilter:
    """What the queue may list; ``None`` means any."""

    run: str | None = None
    """Run id."""
    platform: str | None = None
    """Answer platform."""
    question: str | None = None
    """Question id."""
    state: ReviewState | None = None
    """Review state."""


@dataclass(frozen=True, slots=True)
class QueueRow:
    """One edge in the queue (never with a label: the queue is seen before judging)."""

    edge_pk: int
    """Edge row id."""
    key: int
    """Its queue key (for keyset pagination)."""
    claim: str
    """Claim text."""
    source: str
    """Source title or URL."""
    run: str
    """Run id."""
    platform: str | None
    """Platform."""
    question: str
    """Question id."""


@dataclass(frozen=True, slots=True)
class EdgeView:
    """Everything the edge page shows apart from judgements."""

    pk: int
    """Edge row id."""
    review_state: ReviewState
    """Current review state."""
    final_code: int
    """Final label code (as scored)."""
    claim_pk: int
    """Claim row id."""
    claim_id: str
    """Claim id."""
    claim_text: str
    """Claim text."""
    claim_start: int | None
    """Claim span start in the answer."""
    claim_end: int | None
    """Claim span end."""
    claim_severity: str | None
    """Claim severity."""
    answer_id: str
    """Answer id."""
    answer_text: str
    """The complete answer."""
    platform: str | None
    """Platform."""
    run: str
    """Run id."""
    question_id: str
    """Question id."""
    question_text: str
    """Question as asked."""
    source_pk: int
    """Source row id."""
    source_key: str
    """source_key."""
    source_url: str | None
    """Raw URL."""
    resolved_url: str | None
    """Resolved URL."""
    source_title: str | None
    """Title."""
    source_status: str
    """``resolved``, ``pending`` or ``failed``."""
    source_reason: str | None
    """Why resolution failed."""
    locations: int
    """Citation locations behind the edge."""


@dataclass(frozen=True, slots=True)
class ShownPassage:
    """A piece of a source's text shown on the edge page, with where it comes from (a snapshot's passage, the
    engine's quote, the title...)."""

    origin: str
    """Where it comes from (``snapshot``, ``engine quote``, ``title``...)."""
    text: str
    """The passage."""


@dataclass(frozen=True, slots=True)
class GroupView:
    """An evidence group as shown in the UI."""

    id: str
    """Group id."""
    label: str | None
    """Decision on joint support."""
    sources: tuple[str, ...]
    """Source keys."""
    required_documents: tuple[str, ...]
    """Documents the joint argument needs."""
    reasoning_steps: tuple[str, ...]
    """Steps linking them to the claim."""
    reviewer: str | None
    """Who decided."""


@dataclass(frozen=True, slots=True)
class AuditLogEntry:
    """One audit-log row."""

    pk: int
    """Sequence number."""
    at: str
    """When."""
    actor: str
    """Who."""
    action: str
    """What."""
    target: str
    """On what."""
    before: object
    """State before (JSON value)."""
    after: object
    """State after (JSON value)."""

    def to_dict(self) -> dict[str, object]:
        """JSON form."""
        return {
            "seq": self.pk,
            "at": self.at,
            "actor": self.actor,
            "action": self.action,
            "target": self.target,
            "before": self.before,
            "after": self.after,
        }


@dataclass(frozen=True, slots=True)
class FileJudgement:
    """One row of a judgements file (CSV or JSON Lines), as ``citeaudit judgements import`` reads it and
    ``export`` writes it."""

    line: int
    """Line of the file the row starts on (for the error message)."""
    claim_id: str
    """The claim."""
    source: str
    """The source: its key, URL or resolved URL."""
    label: Label
    """The label."""
    passage: str | None = None
    """Supporting passage quote or page locator."""
    period: str | None = None
    """Period the evidence applies to."""
    reasoning: str | None = None
    """Why."""
    severity: Severity | None = None
    """How much the claim matters."""
