"""What a reader is, and what an answer-engine reader produces.

Two kinds of reader exist. A *document* reader (``audit-json``, ``expertqa``) reads a file that is a whole
audit, protocol included, and returns an :class:`~citeaudit.core.model.Audit`. An *answer* reader (one per
engine payload shape) returns :class:`ParsedAnswer` records: the complete text, citation locations and claim
candidates; the ingest service attaches them to a protocol question, a run and a platform.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple, Protocol

from citeaudit.core.model import AnswerStatus, Audit, CitationKind, RetrievalStatus
from citeaudit.core.model import Protocol as AuditProtocol
from citeaudit.ingest.shape import Shape

__all__ = [
    "ANSWER_LEVEL",
    "CUT_OFF",
    "Attachment",
    "ClaimCandidate",
    "ParsedAnswer",
    "ParsedCitation",
    "Reader",
    "ReaderKind",
]


@dataclass(frozen=True, slots=True)
class Attachment:
    """Where answers read from a payload belong (kept beside the records readers make, in a module that is not
    compiled: it goes to a worker process as a pickle, which a compiled frozen class does not come back from)."""

    protocol: AuditProtocol
    """The protocol whose questions they answer."""
    run_id: str | None = None
    """Run id (default: ``<platform>-<date of import>``)."""
    platform: str | None = None
    """Platform (default: what the payload says, else the reader's default)."""
    question_id: str | None = None
    """Question every answer in the payload answers (default: the payload's own, or the only question)."""


CHUNK = 5_000
"""Answers per chunk when a payload is assembled and written a piece at a time."""


CUT_OFF = "{reason}: cut off at the token limit"
"""Why an answer that stopped at the engine's token limit is incomplete. The rule is the same for every engine:
its last claim may be cut and a required fact may be missing through truncation, not through what the engine
chose to say, so it is recorded and counted but not scored."""


ANSWER_LEVEL = (
    "answer-level: cited by the answer (they count for the official-domain rate), no claim edge; counted in the "
    "import summary"
)
"""What every reader does with a cited source it cannot place in the answer text: the answer cites it (so it
counts for the official-domain rate), but no claim is attached to it unless a marker for it can be located."""


class ReaderKind(StrEnum):
    """What a reader returns."""

    DOCUMENT = "document"
    """A whole audit (protocol included)."""
    ANSWERS = "answers"
    """Answer records to attach to a protocol question, run and platform."""


class ParsedCitation(NamedTuple):
    """One citation location as the payload gives it.

    Immutable like the other records, as a named tuple: a reader makes one for every citation location, and a
    tuple is made in a fifth of the time a frozen dataclass takes."""

    url: str | None
    """URL exactly as given (tracking parameters and redirects included)."""
    title: str | None = None
    """Title shown for the source."""
    marker: str | None = None
    """Marker text in the answer, e.g. ``[2]``."""
    kind: CitationKind = CitationKind.CITED
    """Cited, only retrieved, or dangling (a marker with no source behind it)."""
    start: int | None = None
    """Start of the marker / chip in the answer text (characters)."""
    end: int | None = None
    """End of the marker / chip (exclusive)."""
    quote: str | None = None
    """Evidence quote the engine attached (e.g. Anthropic ``cited_text``)."""
    publisher: str | None = None
    """Publisher / site name when the payload gives one."""
    document: str | None = None
    """What identifies a source that has no URL in the engine's own terms (an uploaded file's id, a file-search
    document name): the source is keyed ``document:<document>`` (see :func:`citeaudit.core.identity.document_key`)."""
    answer_scoped: bool = False
    """``document`` identifies the source only within its answer (e.g. a retrieved chunk known only by its
    position): the key is then ``document:<answer id>:<document>``."""


class ClaimCandidate(NamedTuple):
    """A span of the answer that the engine attached citations to (a named tuple, as :class:`ParsedCitation`)."""

    text: str
    """The claim text with engine artefacts (markers, link chips) stripped."""
    start: int
    """Start of the span in the answer text (characters)."""
    end: int
    """End of the span (exclusive)."""
    citations: tuple[int, ...]
    """Indices into :attr:`ParsedAnswer.citations` of the citations attached to it (duplicates allowed)."""


class ParsedAnswer(NamedTuple):
    """One answer read from an engine payload (a named tuple, as :class:`ParsedCitation`: a reader of a large file
    makes one for every answer, and a compiled reader makes it as the tuple it is; change one with ``_replace``)."""

    text: str
    """The complete answer text exactly as returned."""
    citations: tuple[ParsedCitation, ...] = ()
    """Every citation location, cited, retrieved and dangling."""
    claims: tuple[ClaimCandidate, ...] = ()
    """One claim candidate per cited span."""
    status: AnswerStatus = AnswerStatus.COMPLETE
    """Whether the engine answered."""
    failure: str | None = None
    """Why the answer is failed or incomplete."""
    retrieval: RetrievalStatus | None = None
    """Whether web retrieval ran (``failed`` for a search-tool error, never read as "no citation")."""
    platform: str | None = None
    """Platform the payload says it came from (``--platform`` overrides)."""
    model: str | None = None
    """Model name given in the payload."""
    question_id: str | None = None
    """Question id given in the payload (JSON Lines)."""
    answer_id: str | None = None
    """Answer id given in the payload (JSON Lines)."""
    queries: tuple[str, ...] = ()
    """Search queries the engine issued (kept for the record)."""
    retrieval_reason: str | None = None
    """Why retrieval failed or is unknown (e.g. the search tool's error code)."""
    notes: tuple[str, ...] = ()
    """What the reader saw in the payload but did not understand (e.g. a content block type it does not know):
    such an answer is *partly understood*, and the import summary counts it."""
    placed_by_markers: int = 0
    """Citations the payload gives without a position that the answer's ``[n]`` markers placed (the list is
    numbered in order, as Sonar's is); the import summary counts them."""


class _CanRead(Protocol):
    def __call__(self, shape: Shape, /) -> bool: ...


class _ReadAudit(Protocol):
    def __call__(self, data: bytes, source: str) -> Audit: ...


class _ReadAnswers(Protocol):
    def __call__(self, data: bytes, source: str) -> Iterable[ParsedAnswer]: ...


@dataclass(frozen=True, slots=True)
class Reader:
    """A file format citeaudit can import."""

    name: str
    """Format name for ``--format``."""
    description: str
    """One line for ``citeaudit formats``."""
    can_read: _CanRead
    """Whether a file's content is this format, decided from the structure of its first JSON value (its first
    bytes for text formats)."""
    read_audit: _ReadAudit | None = None
    """Document readers: parse and check a whole audit; ``source`` names the file in errors."""
    read_answers: _ReadAnswers | None = None
    """Answer readers: parse the payload's answers (JSON payloads one at a time, as they are iterated);
    ``source`` names the file in errors."""
    generic: bool = False
    """True when answers of this format do not say which engine produced them (``--platform`` needed)."""
    media_type: str = "application/json"
    """Media type the raw payload is archived under."""
    reads: str = ""
    """Which API versions and payload variants it reads (for ``citeaudit formats``)."""
    positionless: str = ""
    """What it does with citations that have no position in the answer text (for ``citeaudit formats``)."""
    streams: str = ""
    """The saved event streams it reads, put back together into responses (for ``citeaudit formats``)."""

    @property
    def kind(self) -> ReaderKind:
        """Whether the reader returns a whole audit or answer records."""
        return ReaderKind.DOCUMENT if self.read_audit is not None else ReaderKind.ANSWERS
