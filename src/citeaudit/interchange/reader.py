"""Reading the interchange format: parse, check every reference, build the canonical audit.

Errors name the file, the JSON path and the offending value; nothing here writes anywhere.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic import ValidationError

from citeaudit.core.errors import (
    UNNAMED,
    DuplicateId,
    InvalidValue,
    MalformedInput,
    ProtocolError,
    UnknownReference,
    naming,
)
from citeaudit.core.identity import SourceRegistry, registrable_domain, source_identity
from citeaudit.core.limits import load_json, load_yaml
from citeaudit.core.model import (
    Answer,
    AnswerStatus,
    Audit,
    Brand,
    Citation,
    CitationKind,
    Claim,
    Competitor,
    Edge,
    EngineName,
    EvidenceGroup,
    FailedAnswer,
    Judgement,
    Location,
    OfficialDomain,
    Protocol,
    Question,
    RequiredFact,
    Run,
    Segmentation,
    Source,
    check_span,
)
from citeaudit.core.protocol import check_protocol, convention_for
from citeaudit.interchange.schema import (
    AUDIT_FORMAT,
    HOST_NAME_PATTERN,
    AuditDocument,
    CompetitorIn,
    EdgeIn,
    JudgementIn,
    OfficialHostIn,
    ProtocolIn,
)

__all__ = [
    "audit_from_document",
    "check_span",
    "load_audit",
    "load_protocol",
    "load_protocol_document",
    "parse_audit_bytes",
    "protocol_from_mapping",
]


_UNION_TAGS = {"str", "int", "float", "bool", "none", "list", "dict", "constrained-str"}


def _json_path(loc: Sequence[int | str]) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif part in _UNION_TAGS or part[:1].isupper() or "[" in part:
            continue  # pydantic's name for a union member, not a key in the document
        else:
            path += f".{part}" if path else part
    return path or "$"


def _validation_error(source: str, error: ValidationError) -> InvalidValue:
    errors = error.errors(include_url=False)
    # A host name that breaks its pattern is named as such (in a union, before the other members' complaints).
    hosts = [e for e in errors if e["type"] == "string_pattern_mismatch" and e["ctx"]["pattern"] == HOST_NAME_PATTERN]
    if hosts:
        return InvalidValue(
            source,
            _json_path(hosts[0]["loc"]),
            f"{hosts[0]['input']!r} is not a host name (white space, URL punctuation or an invisible character)",
        )
    first = errors[0]
    value = first.get("input")
    shown = "" if first["type"] == "missing" else f" (got {value!r})"
    return InvalidValue(source, _json_path(first["loc"]), f"{first['msg']}{shown}")


def parse_audit_bytes(data: bytes, source: str) -> Audit:
    """Parse and check an audit document; ``source`` names it in error messages."""
    raw = load_json(data, source)
    if isinstance(raw, dict) and "format" in raw and raw["format"] != AUDIT_FORMAT:
        raise InvalidValue(source, "format", f"expected {AUDIT_FORMAT!r} (got {raw['format']!r})")
    try:
        document = AuditDocument.model_validate(raw)
    except ValidationError as exc:
        raise _validation_error(source, exc) from None
    return audit_from_document(document, source)


def load_audit(path: str | Path) -> Audit:
    """Read an audit document from a file."""
    file = Path(path)
    return parse_audit_bytes(file.read_bytes(), str(file))


def _unique(ids: Iterable[str], what: str, path: str) -> None:
    seen: set[str] = set()
    for i, item_id in enumerate(ids):
        if item_id in seen:
            raise DuplicateId(UNNAMED, f"{path}[{i}].id", f"duplicate {what} id {item_id!r}")
        seen.add(item_id)


def _domains(entries: Sequence[str | OfficialHostIn], path: str, whose: str) -> tuple[OfficialDomain, ...]:
    """Official (or competitor) presences from their file form: registrable domains or host + path prefix."""
    found: list[OfficialDomain] = []
    for i, entry in enumerate(entries):
        where = f"{path}[{i}]"
        if isinstance(entry, str):
            domain = entry.strip().lower().rstrip(".")
            if registrable_domain(domain) != domain:
                raise InvalidValue(
                    UNNAMED,
                    where,
                    f"{entry!r} is not a registrable domain; list {whose} registrable domain "
                    f"(e.g. brand.com) or declare {{host: {entry}}} for one host",
                )
            found.append(OfficialDomain(domain=domain))
        else:
            prefix_path = entry.path_prefix
            if prefix_path is not None and not prefix_path.startswith("/"):
                raise InvalidValue(UNNAMED, f"{where}.path_prefix", f"must start with '/' (got {prefix_path!r})")
            found.append(OfficialDomain(host=entry.host.strip().lower().rstrip("."), path_prefix=prefix_path))
    return tuple(found)


def _names(names: Sequence[str], path: str) -> tuple[str, ...]:
    """Mention names, stripped; an empty one would match nothing, so it is refused."""
    for i, name in enumerate(names):
        if not name.strip():
            raise InvalidValue(UNNAMED, f"{path}[{i}]", f"a name must not be empty (got {name!r})")
    return tuple(name.strip() for name in names)


def _competitors(entries: Sequence[CompetitorIn], path: str) -> tuple[Competitor, ...]:
    competitors: list[Competitor] = []
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        where = f"{path}[{i}]"
        name = entry.name.strip()
        if name.casefold() in seen:
            raise DuplicateId(UNNAMED, f"{where}.name", f"duplicate competitor {entry.name!r}")
        seen.add(name.casefold())
        competitors.append(
            Competitor(
                name=_names([entry.name], f"{where}.name")[0],
                domains=_domains(entry.domains, f"{where}.domains", "the competitor's"),
                aliases=_names(entry.aliases, f"{where}.aliases"),
            )
        )
    return tuple(competitors)


def _engine_names(document: ProtocolIn, path: str) -> tuple[EngineName, ...]:
    """The labelled engines; two engines may not share a label, nor one platform two labels."""
    names: list[EngineName] = []
    labels: dict[str, str] = {}
    platforms: dict[str, str] = {}
    for i, engine in enumerate(document.engines):
        if engine.label is None:
            continue
        where = f"{path}[{i}].label"
        label = engine.label.strip()
        key = engine.platform or engine.name
        if label.casefold() in labels and labels[label.casefold()] != key:
            raise DuplicateId(UNNAMED, where, f"label {label!r} is already the name of {labels[label.casefold()]!r}")
        if platforms.get(key, label) != label:
            raise InvalidValue(UNNAMED, where, f"{key!r} is already labelled {platforms[key]!r} (got {label!r})")
        labels[label.casefold()], platforms[key] = key, label
        names.append(EngineName(engine.name, engine.platform, label))
    return tuple(names)


def protocol_from_mapping(document: ProtocolIn, source: str, path: str = "protocol") -> Protocol:
    """A checked :class:`Protocol` from its validated file form; ``source`` names it in error messages."""
    with naming(source):
        return _protocol(document, path)


def _protocol(document: ProtocolIn, path: str) -> Protocol:
    """:func:`protocol_from_mapping` below the boundary that names the file: errors give locations only."""
    prefix = f"{path}." if path else ""
    _unique((q.id for q in document.questions), "question", f"{prefix}questions")
    seen_facts: set[str] = set()
    for qi, question in enumerate(document.questions):
        for fi, fact in enumerate(question.required_facts):
            if fact.id in seen_facts:
                raise DuplicateId(
                    UNNAMED,
                    f"{prefix}questions[{qi}].required_facts[{fi}].id",
                    f"duplicate fact id {fact.id!r}",
                )
            seen_facts.add(fact.id)
    official = _domains(document.official_domains, f"{prefix}official_domains", "the brand's")
    try:
        convention_for(document.scoring)
    except ProtocolError as exc:
        raise InvalidValue(UNNAMED, f"{prefix}scoring", str(exc)) from None
    if document.weights is not None:
        for qi, question in enumerate(document.questions):
            for fi, fact in enumerate(question.required_facts):
                if fact.severity is None or fact.severity not in document.weights:
                    raise InvalidValue(
                        UNNAMED,
                        f"{prefix}questions[{qi}].required_facts[{fi}].severity",
                        f"weights are declared, so every required fact needs a weighted severity "
                        f"(got {fact.severity!r}; weights for {sorted(str(s) for s in document.weights)})",
                    )
    segmentation = document.segmentation
    protocol = Protocol(
        id=document.id,
        version=document.version,
        scoring=document.scoring,
        official_domains=official,
        questions=tuple(
            Question(
                id=q.id,
                text=q.text,
                locale=q.locale,
                required_facts=tuple(RequiredFact(f.id, f.text, f.severity) for f in q.required_facts),
            )
            for q in document.questions
        ),
        segmentation=Segmentation()
        if segmentation is None
        else Segmentation(
            method=segmentation.method,
            version=segmentation.version,
            parameters=tuple(
                sorted(
                    (k, json.dumps(v, sort_keys=True, separators=(",", ":")))
                    for k, v in segmentation.parameters.items()
                )
            ),
        ),
        weights=None if document.weights is None else tuple(sorted(document.weights.items())),
        brand=None
        if document.brand is None
        else Brand(
            name=_names([document.brand.name], f"{prefix}brand.name")[0],
            aliases=_names(document.brand.aliases, f"{prefix}brand.aliases"),
        ),
        competitors=_competitors(document.competitors, f"{prefix}competitors"),
        engine_names=_engine_names(document, f"{prefix}engines"),
    )
    check_protocol(protocol)
    return protocol


def load_protocol(path: str | Path) -> Protocol:
    """Read a protocol file (YAML, or JSON which is YAML too)."""
    return protocol_from_mapping(load_protocol_document(path), str(path), path="")


def load_protocol_document(path: str | Path) -> ProtocolIn:
    """A protocol file checked for shape only (collection settings included); see :func:`load_protocol`."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise MalformedInput(str(file), "", f"cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise MalformedInput(str(file), f"byte {exc.start}", "not UTF-8 text") from None
    raw = load_yaml(text, str(file))
    try:
        return ProtocolIn.model_validate(raw)
    except ValidationError as exc:
        raise _validation_error(str(file), exc) from None


def _judgement(row: EdgeIn | JudgementIn) -> Judgement:
    assert row.label is not None
    return Judgement(
        label=row.label,
        reviewer=row.reviewer,
        origin=row.origin,
        stage=row.stage,
        passage=row.passage,
        period=row.period,
        reasoning=row.reasoning,
        created_at=row.created_at,
        judge=row.judge,
        judge_model=row.judge_model,
        judge_version=row.judge_version,
        prompt_sha256=row.prompt_sha256,
        confidence=row.confidence,
        severity=row.severity,
    )


def _undeclared_run(where: str, run_id: str, document: AuditDocument) -> None:
    """Refuse a run id missing from a ``runs[]`` that is given: a fixture or expert answer would otherwise enter a
    new *platform* run. Without ``runs[]`` every run is implicit (a platform run named by its id)."""
    if document.runs:
        known = ", ".join(repr(r.id) for r in document.runs[:5]) + (", ..." if len(document.runs) > 5 else "")
        raise UnknownReference(UNNAMED, where, f"no run {run_id!r} in runs[] (known: {known})")


def audit_from_document(document: AuditDocument, source: str) -> Audit:
    """Check references and build the canonical audit (edges collapsed, sources keyed); ``source`` names the
    document in error messages."""
    with naming(source):
        return _audit(document)


def _audit(document: AuditDocument) -> Audit:
    """:func:`audit_from_document` below the boundary that names the file: errors give locations only."""
    protocol = _protocol(document.protocol, "protocol")
    questions = {q.id: q for q in protocol.questions}
    _unique((r.id for r in document.runs), "run", "runs")
    _unique((a.id for a in document.answers), "answer", "answers")
    _unique((c.id for c in document.claims), "claim", "claims")
    _unique((s.key for s in document.sources), "source", "sources")
    _unique((g.id for g in document.evidence_groups), "evidence group", "evidence_groups")
    for si, declared in enumerate(document.sources):
        for name in ("url", "resolved_url"):
            if getattr(declared, name):
                source_identity(getattr(declared, name), UNNAMED, f"sources[{si}].{name}")
    registry = SourceRegistry(
        [
            Source(e.key, e.url, e.resolved_url, e.title, e.publisher, e.status, e.reason, e.fetched_at, e.content_hash)
            for e in document.sources
        ]
    )
    runs = {r.id: Run(r.id, r.kind, r.platform, r.model, r.collected_at, r.locale, r.sample) for r in document.runs}

    answers: list[Answer] = []
    answer_text: dict[str, str] = {}
    answer_question: dict[str, str] = {}
    for ai, a in enumerate(document.answers):
        if a.question_id not in questions:
            raise UnknownReference(
                UNNAMED, f"answers[{ai}].question_id", f"no question {a.question_id!r} in the protocol"
            )
        if a.run_id not in runs:
            _undeclared_run(f"answers[{ai}].run_id", a.run_id, document)
            runs[a.run_id] = Run(a.run_id)
        citations = []
        for ci, cited in enumerate(a.citations):
            where = f"answers[{ai}].citations[{ci}]"
            check_span(UNNAMED, where, cited.start, cited.end, len(a.text))
            if cited.kind is CitationKind.DANGLING:
                if cited.url or cited.title or cited.source_key:
                    raise InvalidValue(UNNAMED, f"{where}.kind", "a dangling marker has no url, title or source_key")
                key = None
            else:
                key = registry.key_for(UNNAMED, where, a.id, cited.url, cited.title, cited.source_key)
            citations.append(
                Citation(key, cited.url, cited.title, cited.marker, cited.kind, cited.start, cited.end, cited.quote)
            )
        answers.append(
            Answer(
                a.id,
                a.question_id,
                a.run_id,
                a.text,
                a.platform,
                a.model,
                a.locale,
                tuple(citations),
                a.payload_sha256,
                a.retrieval,
                tuple(a.queries),
                a.retrieval_reason,
            )
        )
        answer_text[a.id] = a.text
        answer_question[a.id] = a.question_id

    claims: list[Claim] = []
    claim_answer: dict[str, str] = {}
    for ci, c in enumerate(document.claims):
        if c.answer_id not in answer_text:
            raise UnknownReference(UNNAMED, f"claims[{ci}].answer_id", f"no answer {c.answer_id!r}")
        check_span(UNNAMED, f"claims[{ci}]", c.start, c.end, len(answer_text[c.answer_id]))
        if c.required_fact_id is not None:
            facts = {f.id for f in questions[answer_question[c.answer_id]].required_facts}
            if c.required_fact_id not in facts:
                raise UnknownReference(
                    UNNAMED,
                    f"claims[{ci}].required_fact_id",
                    f"no required fact {c.required_fact_id!r} for question {answer_question[c.answer_id]!r} "
                    f"in the protocol (known: {', '.join(sorted(facts)) or 'none'})",
                )
        claims.append(Claim(c.id, c.answer_id, c.text, c.start, c.end, c.required_fact_id, c.severity, c.entity))
        claim_answer[c.id] = c.answer_id

    locations: dict[tuple[str, str], list[Location]] = {}
    judgements: dict[tuple[str, str], list[Judgement]] = {}
    for ei, e in enumerate(document.edges):
        where = f"edges[{ei}]"
        if e.claim_id not in claim_answer:
            raise UnknownReference(UNNAMED, f"{where}.claim_id", f"no claim {e.claim_id!r}")
        answer_id = claim_answer[e.claim_id]
        check_span(UNNAMED, where, e.start, e.end, len(answer_text[answer_id]))
        if e.label is None:
            for name in ("reviewer", "passage", "period", "reasoning", "created_at"):
                if getattr(e, name) is not None:
                    raise InvalidValue(
                        UNNAMED, f"{where}.{name}", f"is given without a label (got {getattr(e, name)!r})"
                    )
        pair = (e.claim_id, registry.key_for(UNNAMED, where, answer_id, e.url, e.title, e.source_key))
        locations.setdefault(pair, []).append(Location(e.marker, e.start, e.end))
        rows = judgements.setdefault(pair, [])
        for judgement in ([_judgement(e)] if e.label is not None else []) + [_judgement(j) for j in e.judgements]:
            if judgement not in rows:  # the same judgement written on two locations is one judgement
                rows.append(judgement)
    edges = tuple(Edge(c, k, tuple(locs), tuple(judgements[(c, k)])) for (c, k), locs in locations.items())

    groups = []
    for gi, g in enumerate(document.evidence_groups):
        if g.claim_id not in claim_answer:
            raise UnknownReference(UNNAMED, f"evidence_groups[{gi}].claim_id", f"no claim {g.claim_id!r}")
        keys = tuple(
            registry.key_for(
                UNNAMED,
                f"evidence_groups[{gi}].sources[{si}]",
                claim_answer[g.claim_id],
                None if s in registry.sources else s,
                None,
                s if s in registry.sources else None,
            )
            for si, s in enumerate(g.sources)
        )
        groups.append(
            EvidenceGroup(
                g.id,
                g.claim_id,
                keys,
                g.label,
                tuple(g.required_documents),
                tuple(g.reasoning_steps),
                g.reviewer,
            )
        )
    failed = []
    for fi, f in enumerate(document.failed_answers):
        if f.question_id is not None and f.question_id not in questions:
            raise UnknownReference(
                UNNAMED, f"failed_answers[{fi}].question_id", f"no question {f.question_id!r} in the protocol"
            )
        if f.run_id not in runs:
            _undeclared_run(f"failed_answers[{fi}].run_id", f.run_id, document)
            runs[f.run_id] = Run(f.run_id, platform=f.platform)
        failed.append(FailedAnswer(f.ordinal, AnswerStatus(f.status), f.reason, f.run_id, f.question_id, f.platform))
    return Audit(
        protocol=protocol,
        runs=tuple(runs.values()),
        answers=tuple(answers),
        claims=tuple(claims),
        sources=tuple(registry.sources.values()),
        edges=edges,
        evidence_groups=tuple(groups),
        failed_answers=tuple(failed),
    )
