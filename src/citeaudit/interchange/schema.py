"""Pydantic models of the ``citeaudit.audit/v1`` document and of protocol files: shapes only.

``extra="forbid"`` everywhere: a misspelt key is an error naming its path, never silently ignored.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from annotated_types import Ge, Gt, Le
from pydantic import AllowInfNan, BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from citeaudit.core.limits import MAX_INT, MAX_REPEATS, MIN_INT
from citeaudit.core.model import CitationKind, Label, Origin, RetrievalStatus, RunKind, Severity, SourceStatus, Stage

__all__ = [
    "AUDIT_FORMAT",
    "HOST_NAME_PATTERN",
    "AnswerIn",
    "AuditDocument",
    "BrandIn",
    "CitationIn",
    "ClaimIn",
    "CompetitorIn",
    "EdgeIn",
    "EngineIn",
    "EvidenceGroupIn",
    "FailedAnswerIn",
    "JudgementIn",
    "OfficialHostIn",
    "ProtocolIn",
    "QuestionIn",
    "RequiredFactIn",
    "RunIn",
    "SegmentationIn",
    "SourceIn",
]

AUDIT_FORMAT = "citeaudit.audit/v1"
"""The ``format`` string of an audit document."""


def _number_only(value: object) -> object:
    # pydantic would read "26" as 26 and true as 1; the schema allows neither, so neither does the reader.
    if isinstance(value, (str, bool)):
        raise ValueError(f"expected a number, not {type(value).__name__} {value!r}")
    return value


# The bounds sit inside each type, before the check: pydantic writes them into the JSON Schema only there.
Integer = Annotated[int, Ge(MIN_INT), Le(MAX_INT), BeforeValidator(_number_only)]
"""A JSON integer (not text, not true/false) that SQLite can store."""
Offset = Annotated[int, Ge(0), Le(MAX_INT), BeforeValidator(_number_only)]
"""A character offset or an ordinal: a JSON integer from 0."""
Positive = Annotated[int, Ge(1), Le(MAX_INT), BeforeValidator(_number_only)]
"""A JSON integer from 1."""
Repeats = Annotated[int, Ge(1), Le(MAX_REPEATS), BeforeValidator(_number_only)]
"""How often each question is asked: 1 to :data:`MAX_REPEATS`."""
Number = Annotated[float, AllowInfNan(False), BeforeValidator(_number_only)]
"""A finite JSON number (not text, not true/false)."""
Rate = Annotated[float, Gt(0), AllowInfNan(False), BeforeValidator(_number_only)]
"""A finite JSON number above 0."""
Confidence = Annotated[float, Ge(0), Le(1), AllowInfNan(False), BeforeValidator(_number_only)]
"""A finite JSON number from 0 to 1."""

ENGINE_NAMES = ("openai", "perplexity", "perplexity-agent", "gemini", "anthropic", "serpapi")
"""Engines ``collect`` can ask."""


def _engine_items(schema: dict[str, Any]) -> None:
    # `engines: [openai]` is shorthand for `[{name: openai}]`: the schema says so too.
    items = {"anyOf": [schema["items"], {"enum": list(ENGINE_NAMES), "type": "string"}]}
    # or a mapping from engine name to its settings (or just its label)
    settings = EngineIn.model_json_schema()
    settings["properties"].pop("name")
    settings.pop("required", None)
    for key in ("title", "description"):
        settings.pop(key, None)
    mapping = {
        "type": "object",
        "propertyNames": {"enum": list(ENGINE_NAMES)},
        "additionalProperties": {
            "anyOf": [{"type": "string", "minLength": 1, "pattern": "\\S"}, settings, {"type": "null"}]
        },
    }
    schema.pop("items")
    schema.pop("type", None)
    schema["anyOf"] = [{"type": "array", "items": items}, mapping]


def _version_text_or_integer(schema: dict[str, Any]) -> None:
    schema.pop("type", None)
    schema["anyOf"] = [{"type": "string"}, {"type": "integer"}]


class _In(BaseModel):
    # Validators are built on first use, and only for the models validated directly (the audit document, a
    # protocol): building one for every nested model as its class is made cost start-up time for nothing.
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class RequiredFactIn(_In):
    """A required fact as written in a file."""

    id: str = Field(min_length=1)
    text: str
    severity: Severity | None = None


class QuestionIn(_In):
    """A question as written in a file."""

    id: str = Field(min_length=1)
    text: str
    locale: str | None = None
    required_facts: list[RequiredFactIn] = Field(default_factory=list)


_NOT_IN_HOST_NAMES = (
    "\\s:/?#@\\[\\]()<>\"'\\\\%,;=!*&+$`{}|^~"
    # invisible format characters: encoded, a name holding one would match a domain the file does not show
    "\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff"
)
HOST_NAME_PATTERN = f"^[^{_NOT_IN_HOST_NAMES}]+$"
"""What a host or domain name of a protocol must match."""
HostName = Annotated[str, Field(min_length=1, pattern=HOST_NAME_PATTERN)]
"""A host or domain name: no white space, no URL punctuation (``javascript:alert(1)``, ``https://brand.com/``), no
invisible format character (a zero-width space)."""


class OfficialHostIn(_In):
    """A path-scoped official presence on a host."""

    host: HostName
    path_prefix: str | None = None


MentionName = Annotated[str, Field(min_length=1, pattern=r"\S")]
"""A brand or competitor name as an answer may write it: not empty, not only white space."""


class BrandIn(_In):
    """The brand's names (protocol ``brand``): what counts as a mention."""

    name: MentionName
    aliases: list[MentionName] = Field(default_factory=list)


class CompetitorIn(_In):
    """A competitor (protocol ``competitors[]``): its domains, written like ``official_domains``, and names."""

    name: MentionName
    domains: list[HostName | OfficialHostIn] = Field(default_factory=list)
    aliases: list[MentionName] = Field(default_factory=list)


class SegmentationIn(_In):
    """How claims were made."""

    method: str = Field(min_length=1)
    version: str | None = None
    parameters: dict[str, Any] = Field(default_factory=dict)


class EngineIn(_In):
    """One engine to collect answers from (protocol YAML ``engines``)."""

    name: Literal["openai", "perplexity", "perplexity-agent", "gemini", "anthropic", "serpapi"]
    id: str | None = Field(default=None, min_length=1, pattern=r"^[A-Za-z0-9._-]+$")
    model: str | None = None
    platform: str | None = Field(default=None, min_length=1)
    base_url: str | None = None
    requests_per_minute: Rate | None = None
    concurrency: Positive | None = None
    options: dict[str, Any] = Field(default_factory=dict)
    label: MentionName | None = None
    """The name reports give this engine's answers (default: a readable name for its platform)."""


def _engine_entry(name: object, item: object) -> object:
    """One entry of the ``engines`` mapping as a list item: settings merged, anything else taken as the label
    (so that a number or a list is refused as a label, naming where it is)."""
    if isinstance(item, dict):
        return {**item, "name": name}
    return {"name": name} if item is None else {"name": name, "label": item}


class ProtocolIn(_In):
    """A protocol as written in a file (YAML) or inside an audit document.

    ``engines``, ``locales`` and ``repeats`` say how ``citeaudit collect`` gathers answers. They decide which
    runs exist, not how a run is scored, so they are not part of the fingerprint.
    """

    id: str = Field(min_length=1)
    version: str = Field(json_schema_extra=_version_text_or_integer)
    scoring: str = "strict-v1"
    official_domains: list[HostName | OfficialHostIn] = []
    questions: list[QuestionIn] = Field(default_factory=list)
    segmentation: SegmentationIn | None = None
    weights: dict[Severity, Number] | None = None
    brand: BrandIn | None = None
    competitors: list[CompetitorIn] = Field(default_factory=list)
    engines: list[EngineIn] = Field(default_factory=list, json_schema_extra=_engine_items)
    locales: list[str] = Field(default_factory=list)
    repeats: Repeats = 1

    @field_validator("engines", mode="before")
    @classmethod
    def _engine_names(cls, value: object) -> object:
        # `engines: [openai, gemini]` is shorthand for `[{name: openai}, {name: gemini}]`; the mapping
        # `engines: {openai: {label: ChatGPT}, gemini: Gemini}` for `[{name: openai, label: ChatGPT}, ...]`.
        if isinstance(value, dict):
            return [_engine_entry(name, item) for name, item in value.items()]
        if isinstance(value, list):
            return [{"name": item} if isinstance(item, str) else item for item in value]
        return value

    @field_validator("version", mode="before")
    @classmethod
    def _version_as_text(cls, value: object) -> object:
        # YAML reads `version: 3` as an int; a version is a name, so keep its text. JSON's 3.0 is the integer 3.
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


class RunIn(_In):
    """A run."""

    id: str = Field(min_length=1)
    kind: RunKind = RunKind.PLATFORM
    platform: str | None = None
    model: str | None = None
    collected_at: str | None = None
    locale: str | None = None
    sample: Integer | None = None


class CitationIn(_In):
    """A citation location in an answer."""

    url: str | None = None
    title: str | None = None
    source_key: str | None = None
    marker: str | None = None
    kind: CitationKind = CitationKind.CITED
    start: Offset | None = None
    end: Offset | None = None
    quote: str | None = None


class AnswerIn(_In):
    """A complete answer."""

    id: str = Field(min_length=1)
    question_id: str
    run_id: str = Field(min_length=1)
    text: str
    platform: str | None = None
    model: str | None = None
    locale: str | None = None
    citations: list[CitationIn] = Field(default_factory=list)
    payload_sha256: str | None = None
    retrieval: RetrievalStatus | None = None
    retrieval_reason: str | None = None
    queries: list[str] = Field(default_factory=list)


class ClaimIn(_In):
    """A claim."""

    id: str = Field(min_length=1)
    answer_id: str
    text: str
    start: Offset | None = None
    end: Offset | None = None
    required_fact_id: str | None = None
    severity: Severity | None = None
    entity: str | None = None


class _JudgementFields(_In):
    """Fields of a judgement besides its label (shared by inline edge labels and ``judgements[]``)."""

    reviewer: str | None = None
    origin: Origin = Origin.HUMAN
    stage: Stage = Stage.REVIEW
    passage: str | None = None
    period: str | None = None
    reasoning: str | None = None
    created_at: str | None = None
    judge: str | None = None
    judge_model: str | None = None
    judge_version: str | None = None
    prompt_sha256: str | None = None
    confidence: Confidence | None = None
    severity: Severity | None = None


class JudgementIn(_JudgementFields):
    """One reviewer's label on an edge."""

    label: Label


class EdgeIn(_JudgementFields):
    """One citation location of a (claim, source) pair, with an optional judgement inline."""

    claim_id: str
    url: str | None = None
    title: str | None = None
    source_key: str | None = None
    marker: str | None = None
    start: Offset | None = None
    end: Offset | None = None
    label: Label | None = None
    judgements: list[JudgementIn] = Field(default_factory=list)


class SourceIn(_In):
    """A source record (exports write these; imports merge them by key)."""

    key: str = Field(min_length=1)
    url: str | None = None
    resolved_url: str | None = None
    title: str | None = None
    publisher: str | None = None
    status: SourceStatus = SourceStatus.PENDING
    reason: str | None = None
    fetched_at: str | None = None
    content_hash: str | None = None


class EvidenceGroupIn(_In):
    """Joint support by several sources."""

    id: str = Field(min_length=1)
    claim_id: str
    sources: list[Annotated[str, Field(min_length=1)]] = Field(min_length=2)
    label: Label | None = None
    required_documents: list[str] = Field(default_factory=list)
    reasoning_steps: list[str] = Field(default_factory=list)
    reviewer: str | None = None


class FailedAnswerIn(_In):
    """An answer the engine did not give."""

    run_id: str = Field(min_length=1)
    question_id: str | None = None
    platform: str = Field(min_length=1)
    status: Literal["failed", "incomplete"]
    reason: str | None = None
    ordinal: Offset = 0


class AuditDocument(_In):
    """A ``citeaudit.audit/v1`` document."""

    model_config = ConfigDict(extra="forbid", frozen=True, title="citeaudit.audit/v1", defer_build=True)

    format: Literal["citeaudit.audit/v1"]
    protocol: ProtocolIn
    runs: list[RunIn] = Field(default_factory=list)
    answers: list[AnswerIn] = Field(default_factory=list)
    claims: list[ClaimIn] = Field(default_factory=list)
    edges: list[EdgeIn] = Field(default_factory=list)
    sources: list[SourceIn] = Field(default_factory=list)
    evidence_groups: list[EvidenceGroupIn] = Field(default_factory=list)
    failed_answers: list[FailedAnswerIn] = Field(default_factory=list)
