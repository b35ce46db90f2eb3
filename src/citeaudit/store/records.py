"""Plain records the services hand the store: what resolving a source produces (the hops followed, the
document read and the run's counts) and the claim → required-fact proposals of fact mapping.

Frozen records only; the services (network, models) and the store (SQL) both speak in these. They are defined
with the store, which keeps them, so that the store needs nothing from the services that produce them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from citeaudit.core.model import SourceStatus

__all__ = [
    "FAILURE_REASONS",
    "Document",
    "FactCandidate",
    "FetchOutcome",
    "Hop",
    "Proposal",
    "ResolveReport",
    "Snapshot",
]

FAILURE_REASONS = (
    "bad_url",
    "blocked_private_address",
    "connect",
    "dns",
    "extract_timeout",
    "extract_too_large",
    "http_<status>",
    "network",
    "redirect_loop",
    "too_large",
    "too_many_redirects",
    "timeout",
    "tls",
    "unreadable",
    "unsupported_encoding",
    "unsupported_type",
)
"""Reasons a source ends ``failed`` (``http_<status>`` stands for e.g. ``http_404``, ``http_429``).
A title-only card stays ``pending`` with reason ``no_link``."""


@dataclass(frozen=True, slots=True)
class Hop:
    """One step of the way from the cited URL to the page."""

    url: str
    """The URL at this step."""
    status: int | None
    """HTTP status received, or ``None`` for a wrapper unwrapped without a request or a request that failed."""
    note: str | None = None
    """``unwrapped`` (a known wrapper read without a request), ``retry`` (429/503, tried again) or the failure."""


@dataclass(frozen=True, slots=True)
class Document:
    """Bytes read from a page, content-addressed, with the text and metadata taken from them."""

    sha256: str
    """SHA-256 of ``body`` (hex): the snapshot's content address."""
    media_type: str
    """Media type the server gave (``text/html``, ``text/plain``, ``application/pdf``)."""
    body: bytes
    """The bytes as received (after content decoding)."""
    text: str
    """Extracted main text (HTML: main content; PDF: page text; plain text: decoded)."""
    title: str | None = None
    """Page title, when the document names one."""
    published: str | None = None
    """Publication date (ISO date) found in the document, if any."""
    updated: str | None = None
    """Latest update date (ISO date) found in the document, if any."""
    canonical_url: str | None = None
    """``<link rel="canonical">`` of an HTML page (absolute)."""


@dataclass(frozen=True, slots=True)
class FetchOutcome:
    """Everything one attempt to resolve a URL found out, success or not."""

    requested_url: str
    """The URL the attempt started from."""
    status: SourceStatus
    """``resolved`` or ``failed`` (an attempt never leaves a source ``pending``)."""
    reason: str | None
    """Why it failed (one of :data:`FAILURE_REASONS`), ``None`` when resolved."""
    chain: tuple[Hop, ...]
    """Every hop, wrappers and redirects included, the final page last."""
    fetched_at: str
    """When the final response was received (UTC, ISO 8601)."""
    final_url: str | None = None
    """Where the link really goes: the last URL that answered with something other than a redirect."""
    canonical_url: str | None = None
    """Canonical URL the page declares (HTTP ``Link`` header first, else HTML), absolute."""
    http_status: int | None = None
    """Status of the final response."""
    headers: tuple[tuple[str, str], ...] = ()
    """Headers of the final response that matter for the record (type, length, dates, etag, canonical link)."""
    document: Document | None = None
    """What was read, when the page could be read."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One successful read of a source, as stored (never updated in place)."""

    source_key: str
    """The source (its key now)."""
    requested_url: str
    """URL the fetch started from."""
    final_url: str
    """URL that gave the document."""
    canonical_url: str | None
    """Canonical URL the page declared."""
    fetched_at: str
    """When it was read."""
    http_status: int
    """HTTP status of the final response."""
    headers: tuple[tuple[str, str], ...]
    """Headers that matter."""
    chain: tuple[Hop, ...]
    """Hops from the requested URL to the page."""
    content_hash: str
    """``sha256:<hex>`` of the bytes."""
    media_type: str
    """Media type."""
    size: int
    """Bytes."""
    title: str | None
    """Page title."""
    published: str | None
    """Publication date found in the document."""
    updated: str | None
    """Update date found in the document."""
    text: str
    """Extracted text the passages point into."""


@dataclass(frozen=True, slots=True)
class ResolveReport:
    """What one resolver run did. Nothing is dropped: every source it looked at is in exactly one count."""

    selected: int = 0
    """Sources with a link that this run set out to resolve."""
    resolved: int = 0
    """Now resolved."""
    failed: dict[str, int] = field(default_factory=dict)
    """Now failed, by reason."""
    no_link: int = 0
    """Title-only cards left pending (``no_link``): they need ``citeaudit source set-url``."""
    skipped_resolved: int = 0
    """Already resolved and left alone (pass ``refresh`` to read them again)."""
    skipped_failed: int = 0
    """Failed before and left alone (pass ``retry_failed`` to try them again)."""
    merged_sources: int = 0
    """Sources that turned out to be the same page as another and were merged into it."""
    merged_edges: int = 0
    """Edges of one claim that became one edge through those merges."""
    disputed_edges: int = 0
    """Merged edges whose labels differed: sent back to review as ``disputed``."""


@dataclass(frozen=True, slots=True)
class FactCandidate:
    """A required fact an answer had to contain."""

    pk: int
    """Row id of the fact."""
    id: str
    """Fact id."""
    text: str
    """Fact text."""


@dataclass(frozen=True, slots=True)
class Proposal:
    """A proposed claim → required-fact mapping."""

    claim_pk: int
    """Row id of the claim."""
    fact_pk: int
    """Row id of the fact."""
    score: float
    """Similarity used for the decision (0..1)."""
    lexical: float
    """Lexical similarity (0..1)."""
    dense: float | None
    """Cosine similarity of the embeddings, when an embedder was used."""
    entities: str
    """Outcome of the entity check."""
