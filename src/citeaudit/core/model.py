"""The vocabulary of an audit as frozen types (docs/ingest.md, "The interchange format"). No I/O, no validation of
outside data here: the boundary (``citeaudit.interchange``) checks input and builds these; the core trusts them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from citeaudit.core.errors import InvalidValue

__all__ = [
    "Answer",
    "AnswerStatus",
    "Audit",
    "Brand",
    "Citation",
    "CitationKind",
    "Claim",
    "Competitor",
    "Edge",
    "EngineName",
    "EvidenceGroup",
    "FailedAnswer",
    "Judgement",
    "Label",
    "Location",
    "OfficialDomain",
    "Origin",
    "Protocol",
    "Question",
    "RequiredFact",
    "RetrievalStatus",
    "ReviewState",
    "Run",
    "RunKind",
    "Segmentation",
    "Severity",
    "Source",
    "SourceStatus",
    "Stage",
    "check_span",
    "review_outcome",
]


class Label(StrEnum):
    """The judgement on one edge. Only ``SUPPORTED`` is full support."""

    SUPPORTED = "supported"
    """The source states the claim in full."""
    PARTIAL = "partial"
    """The source states part of the claim; never counted as support."""
    CONFLICTING = "conflicting"
    """The source contradicts the claim."""
    IRRELEVANT = "irrelevant"
    """The source says nothing about the claim."""
    UNKNOWN = "unknown"
    """Support could not be judged (source inaccessible or unreadable); stays in the denominator."""


class ReviewState(StrEnum):
    """Where an edge is in review; only some states carry a final label."""

    PENDING = "pending"
    """No human judgement yet (model suggestions alone never make a final label)."""
    LABELLED = "labelled"
    """One human reviewer has labelled the edge; that label is final under single review."""
    AGREED = "agreed"
    """Two or more human reviewers gave the same label."""
    DISPUTED = "disputed"
    """Human reviewers disagree; no final label until adjudicated."""
    ADJUDICATED = "adjudicated"
    """An adjudicator recorded the final label."""


class Origin(StrEnum):
    """Who produced a judgement."""

    HUMAN = "human"
    """A person."""
    MODEL = "model"
    """A model; a suggestion only, never a final label by itself."""


class Stage(StrEnum):
    """Whether a judgement is an independent review or the adjudication of a dispute."""

    REVIEW = "review"
    """An independent review."""
    ADJUDICATION = "adjudication"
    """The adjudicator's final decision; it overrides the reviews."""


class CitationKind(StrEnum):
    """Whether the engine cited a source in its answer or only consulted it."""

    CITED = "cited"
    """Shown to the reader as a reference; makes edges and counts for the official-domain rate."""
    RETRIEVED = "retrieved"
    """Consulted by the engine but not cited; kept, never scored."""
    DANGLING = "dangling"
    """A marker that points past the engine's source list: counted and reported, never an edge."""


class RetrievalStatus(StrEnum):
    """Whether the engine's web retrieval ran for an answer."""

    USED = "used"
    """Retrieval ran (search results came back)."""
    NOT_USED = "not_used"
    """The engine answered without searching."""
    FAILED = "failed"
    """The search tool reported an error: a retrieval failure, not an answer without citations."""
    UNKNOWN = "unknown"
    """The payload does not say."""


class SourceStatus(StrEnum):
    """Whether a source's link has been followed."""

    RESOLVED = "resolved"
    """The link was followed; ``resolved_url`` is where it really goes."""
    PENDING = "pending"
    """Not followed yet, or a title-only card without a link."""
    FAILED = "failed"
    """Following the link failed; ``reason`` says why."""


class RunKind(StrEnum):
    """What a run measures; fixture runs never enter platform figures unless asked for."""

    PLATFORM = "platform"
    """Answers collected from an answer engine."""
    FIXTURE = "fixture"
    """A reference case (e.g. the four-claim fixture) kept for checking the arithmetic."""


class Severity(StrEnum):
    """How much a wrong or missing fact matters; reported as a separate breakdown."""

    CRITICAL = "critical"
    """Safety, legal or certification facts."""
    HIGH = "high"
    """Facts a buyer decides on."""
    MEDIUM = "medium"
    """Useful facts."""
    LOW = "low"
    """Nice to have."""


class AnswerStatus(StrEnum):
    """Whether the engine returned an answer."""

    COMPLETE = "complete"
    """A complete answer."""
    INCOMPLETE = "incomplete"
    """Only part of the answer is in the payload (e.g. an AI Overview behind a page token)."""
    FAILED = "failed"
    """The engine reported a failure (e.g. an HTTP 200 whose body says ``status: failed``)."""


@dataclass(frozen=True, slots=True)
class FailedAnswer:
    """An answer the engine did not give: recorded and counted, never dropped."""

    ordinal: int
    """Position of the answer in its payload."""
    status: AnswerStatus
    """``failed`` or ``incomplete``."""
    reason: str | None
    """What the payload says went wrong."""
    run_id: str
    """Run it belongs to."""
    question_id: str | None
    """Question it was meant to answer."""
    platform: str
    """Platform asked."""


@dataclass(frozen=True, slots=True)
class RequiredFact:
    """A fact an answer to a question has to contain."""

    id: str
    """Fact identifier, unique within a protocol."""
    text: str
    """The fact as it must be stated."""
    severity: Severity | None = None
    """How much missing it matters."""


@dataclass(frozen=True, slots=True)
class Question:
    """One question of a protocol."""

    id: str
    """Question identifier, unique within a protocol."""
    text: str
    """The question as asked."""
    locale: str | None = None
    """Locale it is asked in (BCP 47, e.g. ``en-GB``)."""
    required_facts: tuple[RequiredFact, ...] = ()
    """Facts every answer to it has to contain."""


@dataclass(frozen=True, slots=True)
class OfficialDomain:
    """One official presence of the brand: a registrable domain, or a host with an optional path prefix."""

    domain: str | None = None
    """Registrable domain (subdomains included), e.g. ``brand.co.uk``."""
    host: str | None = None
    """Exact host, for a presence on someone else's domain."""
    path_prefix: str | None = None
    """Path prefix under ``host`` (segment-aligned), e.g. ``/brand/``."""


@dataclass(frozen=True, slots=True)
class Brand:
    """The brand an audit is about, by the names an answer may call it (for the mention rate)."""

    name: str
    """The brand's name as usually written, e.g. ``Brand``."""
    aliases: tuple[str, ...] = ()
    """Other names that count as a mention (product lines, former names, spellings)."""

    @property
    def names(self) -> tuple[str, ...]:
        """The name and every alias."""
        return (self.name, *self.aliases)


@dataclass(frozen=True, slots=True)
class Competitor:
    """A competitor declared by the protocol: whose citations and mentions are counted beside the brand's."""

    name: str
    """Competitor name, unique within a protocol; also a mention when an answer writes it."""
    domains: tuple[OfficialDomain, ...] = ()
    """Where the competitor publishes, matched like the brand's official domains."""
    aliases: tuple[str, ...] = ()
    """Other names that count as a mention of it."""

    @property
    def names(self) -> tuple[str, ...]:
        """The name and every alias."""
        return (self.name, *self.aliases)


@dataclass(frozen=True, slots=True)
class Segmentation:
    """How answers were split into claims; part of the fingerprint."""

    method: str = "external"
    """Method name (``external`` = claims supplied with the audit)."""
    version: str | None = None
    """Method version."""
    parameters: tuple[tuple[str, str], ...] = ()
    """Method parameters as sorted (name, canonical JSON value) pairs."""


@dataclass(frozen=True, slots=True)
class EngineName:
    """The name a report gives the answers of one engine (protocol ``engines[].label``)."""

    engine: str
    """The engine (``openai``, ``perplexity``, ...)."""
    platform: str | None
    """The platform its answers are recorded under, when the protocol sets one (default: the engine's own)."""
    label: str
    """What readers see, e.g. ``ChatGPT search``."""


@dataclass(frozen=True, slots=True)
class Protocol:
    """The fixed question set of an audit and everything that changes a score."""

    id: str
    """Protocol identifier."""
    version: str
    """Protocol version."""
    scoring: str = "strict-v1"
    """Named scoring convention."""
    official_domains: tuple[OfficialDomain, ...] = ()
    """The brand's official presences."""
    questions: tuple[Question, ...] = ()
    """Questions with their required facts."""
    segmentation: Segmentation = Segmentation()
    """How answers are split into claims."""
    weights: tuple[tuple[Severity, float], ...] | None = None
    """Per-severity weights for the labelled weighted variant; ``None`` = unweighted."""
    brand: Brand | None = None
    """The brand's names, when declared (mention rate); ``None`` leaves the fingerprint as it was."""
    competitors: tuple[Competitor, ...] = ()
    """Declared competitors (citation share, mentions); none leaves the fingerprint as it was."""
    engine_names: tuple[EngineName, ...] = ()
    """Display names of engines declared with a label; never part of the fingerprint (a name changes no score)."""
    review_assistance: str | None = None
    """How the human labels in scope were assisted (``suggestions shown`` when some were made with model
    suggestions on the page); never declared, set by the store's effective protocol; ``None`` leaves the
    fingerprint as it was."""


@dataclass(frozen=True, slots=True)
class Run:
    """One collection of answers under one protocol."""

    id: str
    """Run identifier, unique in a database."""
    kind: RunKind = RunKind.PLATFORM
    """Platform answers or a fixture."""
    platform: str | None = None
    """Engine / platform when the whole run has one (answers may still say their own)."""
    model: str | None = None
    """Model name when the whole run has one."""
    collected_at: str | None = None
    """ISO-8601 date or time of collection."""
    locale: str | None = None
    """Locale the run was collected in."""
    sample: int | None = None
    """Repeat number when a protocol is run several times."""


@dataclass(frozen=True, slots=True)
class Citation:
    """One occurrence of a reference in an answer: a location, not a source."""

    source_key: str | None
    """Identity of the source it points to (its normalised URL, docs/ingest.md); ``None`` for a dangling marker."""
    url: str | None = None
    """The URL exactly as the engine gave it."""
    title: str | None = None
    """The title shown on the card, if any."""
    marker: str | None = None
    """The marker in the text, e.g. ``[2]``."""
    kind: CitationKind = CitationKind.CITED
    """Cited in the answer or only retrieved."""
    start: int | None = None
    """Start of the cited span (character offset into the answer text)."""
    end: int | None = None
    """End of the cited span (exclusive)."""
    quote: str | None = None
    """Evidence quote the engine attached to the citation (e.g. Anthropic ``cited_text``)."""


@dataclass(frozen=True, slots=True)
class Answer:
    """A complete answer exactly as the engine returned it."""

    id: str
    """Answer identifier, unique in a database."""
    question_id: str
    """The protocol question it answers."""
    run_id: str
    """The run it was collected in."""
    text: str
    """The complete answer text, verbatim."""
    platform: str | None = None
    """Engine / platform (falls back to the run's)."""
    model: str | None = None
    """Model (falls back to the run's)."""
    locale: str | None = None
    """Locale (falls back to the question's)."""
    citations: tuple[Citation, ...] = ()
    """Citation locations in order of appearance."""
    payload_sha256: str | None = None
    """Hash of the raw payload the answer came from, when archived."""
    retrieval: RetrievalStatus | None = None
    """Whether the engine's web retrieval ran, when the payload says."""
    queries: tuple[str, ...] = ()
    """Search queries the engine issued for this answer, as the payload lists them."""
    retrieval_reason: str | None = None
    """Why retrieval is ``failed`` or ``unknown`` (e.g. the search tool's ``error_code``), when the payload says."""


def check_span(source: str, where: str, start: int | None, end: int | None, text_length: int) -> None:
    """Refuse a span (of a claim, a citation or an edge location) given by one bound only, or reaching outside the
    answer text of ``text_length`` characters, as an :class:`~citeaudit.core.errors.InvalidValue` naming
    ``source`` and ``where``."""
    if (start is None) != (end is None):
        raise InvalidValue(source, where, f"a span needs both start and end (got start={start!r}, end={end!r})")
    if start is not None and end is not None and not 0 <= start <= end <= text_length:
        raise InvalidValue(source, where, f"span {start}..{end} is outside the answer text (0..{text_length})")


@dataclass(frozen=True, slots=True)
class Claim:
    """One independently checkable assertion taken from an answer."""

    id: str
    """Claim identifier, unique in a database."""
    answer_id: str
    """The answer it was taken from."""
    text: str
    """The exact assertion."""
    start: int | None = None
    """Start of its span in the answer text."""
    end: int | None = None
    """End of its span (exclusive)."""
    required_fact_id: str | None = None
    """The required fact it states, if mapped."""
    severity: Severity | None = None
    """Severity when set on the claim (else the fact's)."""
    entity: str | None = None
    """The entity it is about, e.g. a model identifier."""


@dataclass(frozen=True, slots=True)
class Source:
    """What citations point to, identified by ``key``: the normalised URL (docs/ingest.md, "Source identity")."""

    key: str
    """``source_key``: normalized resolved URL, else normalized raw URL, else a title key."""
    url: str | None = None
    """Raw URL as first seen."""
    resolved_url: str | None = None
    """Where the link really goes, once resolved."""
    title: str | None = None
    """Title of the card or page."""
    publisher: str | None = None
    """Publisher name, when known."""
    status: SourceStatus = SourceStatus.PENDING
    """Resolution state."""
    reason: str | None = None
    """Why resolution failed or is pending (e.g. ``no_link``, ``http_404``)."""
    fetched_at: str | None = None
    """When the snapshot was fetched (ISO-8601)."""
    content_hash: str | None = None
    """sha256 of the snapshot bytes."""


@dataclass(frozen=True, slots=True)
class Location:
    """Where one citation of an edge stands; duplicates of an edge add locations, never edges."""

    marker: str | None = None
    """Marker text, e.g. ``[1]``."""
    start: int | None = None
    """Start offset in the answer text."""
    end: int | None = None
    """End offset (exclusive)."""


@dataclass(frozen=True, slots=True)
class Judgement:
    """One reviewer's (or model's) label on one edge. Immutable: a change is a new judgement."""

    label: Label
    """The label given."""
    reviewer: str | None = None
    """Reviewer or model id."""
    origin: Origin = Origin.HUMAN
    """Human or model."""
    stage: Stage = Stage.REVIEW
    """Independent review or adjudication."""
    passage: str | None = None
    """Supporting passage quote or page locator."""
    period: str | None = None
    """Period the evidence applies to (e.g. ``2026``)."""
    reasoning: str | None = None
    """Why the label was given."""
    created_at: str | None = None
    """When it was given (ISO-8601)."""
    judge: str | None = None
    """For a model judgement: the judge that proposed it (``checks``, ``nli``, ``openai``)."""
    judge_model: str | None = None
    """For a model judgement: the model (local path or endpoint model name)."""
    judge_version: str | None = None
    """For a model judgement: the judge's version (rules or prompt version)."""
    prompt_sha256: str | None = None
    """For a model judgement: hash of the prompt, label options and output schema."""
    confidence: float | None = None
    """For a model judgement: the probability the judge gave its label, when it gives one."""
    severity: Severity | None = None
    """How much the claim matters, as the reviewer judged it with the label (the review page asks for it)."""


def _latest_labels(judgements: Iterable[Judgement]) -> set[Label]:
    """Labels of the latest judgement(s) by ``created_at`` (unset sorts first); several if tied."""
    ordered = sorted(judgements, key=lambda j: j.created_at or "")
    if not ordered:
        return set()
    latest = ordered[-1].created_at or ""
    return {j.label for j in ordered if (j.created_at or "") == latest}


def review_outcome(judgements: Iterable[Judgement], reviews_required: int = 1) -> tuple[ReviewState, Label | None]:
    """The review state and final label that a set of judgements gives.

    Human judgements only: model suggestions never make a final label. The latest adjudication
    (by ``created_at``) wins. Otherwise each human reviewer's latest review counts once: one reviewer →
    ``labelled``; several who agree → ``agreed``; any disagreement → ``disputed`` with no final label.
    Judgements that tie on time but disagree count as a disagreement, so the outcome never depends on
    the order the judgements were listed in.

    ``reviews_required`` is the review policy: 1 for single review (the default), 2 for double independent
    review, under which a ``labelled`` edge (one reviewer so far) has no final label yet.

    Notes: the final label is ``None`` exactly when the state is ``pending`` or ``disputed``, or when it is
    ``labelled`` under a policy that requires more than one review.
    """
    if reviews_required < 1:
        raise ValueError(f"reviews_required must be 1 or more, not {reviews_required!r}")
    human = [j for j in judgements if j.origin is Origin.HUMAN]
    adjudications = [j for j in human if j.stage is Stage.ADJUDICATION]
    if adjudications:
        final = _latest_labels(adjudications)
        if len(final) == 1:
            return ReviewState.ADJUDICATED, final.pop()
        return ReviewState.DISPUTED, None
    by_reviewer: dict[str | None, list[Judgement]] = {}
    for judgement in human:
        by_reviewer.setdefault(judgement.reviewer, []).append(judgement)
    if not by_reviewer:
        return ReviewState.PENDING, None
    labels: set[Label] = set()
    for reviews in by_reviewer.values():
        labels |= _latest_labels(reviews)
    if len(labels) > 1:
        return ReviewState.DISPUTED, None
    (label,) = labels
    state = ReviewState.LABELLED if len(by_reviewer) == 1 else ReviewState.AGREED
    return state, (label if len(by_reviewer) >= reviews_required else None)


@dataclass(frozen=True, slots=True)
class Edge:
    """One unique (claim, source) pair with all its citation locations and judgements."""

    claim_id: str
    """The claim."""
    source_key: str
    """The source."""
    locations: tuple[Location, ...] = (Location(),)
    """Every citation location of this pair (at least one)."""
    judgements: tuple[Judgement, ...] = ()
    """Every judgement in the order given."""

    @property
    def review_state(self) -> ReviewState:
        """State under the single-review policy."""
        return review_outcome(self.judgements)[0]

    @property
    def final_label(self) -> Label | None:
        """Final label, or ``None`` while pending or disputed."""
        return review_outcome(self.judgements)[1]


@dataclass(frozen=True, slots=True)
class EvidenceGroup:
    """Joint support: several sources that together support one claim; reported apart from precision."""

    id: str
    """Group identifier."""
    claim_id: str
    """The claim supported jointly."""
    source_keys: tuple[str, ...]
    """The sources taken together."""
    label: Label | None = None
    """The reviewer's decision on joint support (``None`` while undecided)."""
    required_documents: tuple[str, ...] = ()
    """What documents the joint argument needs."""
    reasoning_steps: tuple[str, ...] = ()
    """The steps linking the documents to the claim."""
    reviewer: str | None = None
    """Who decided."""


@dataclass(frozen=True, slots=True)
class Audit:
    """A whole audit: protocol plus everything measured under it. Edges are unique (claim, source_key)."""

    protocol: Protocol
    """What was measured and how."""
    runs: tuple[Run, ...] = ()
    """Runs (a run referenced by an answer but not listed here is a platform run)."""
    answers: tuple[Answer, ...] = ()
    """Complete answers."""
    claims: tuple[Claim, ...] = ()
    """Checkable assertions."""
    sources: tuple[Source, ...] = ()
    """Every source cited or referenced by an edge, by key."""
    edges: tuple[Edge, ...] = ()
    """Unique (claim, source) pairs."""
    evidence_groups: tuple[EvidenceGroup, ...] = field(default=())
    """Joint-support groups."""
    failed_answers: tuple[FailedAnswer, ...] = ()
    """Answers the engines did not give (failed or incomplete): recorded, counted, never scored."""
