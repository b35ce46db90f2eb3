"""What trackers count and precision cannot show, with the same explicit denominators: competitor citation share,
mentions beside citations, official pages retrieved but not cited, entity confusion and version drift.

Pure functions over an :class:`Audit` and the outcome of each edge (:class:`EdgeOutcome`: final label, reviewed
passage; a database gives them under its review policy without loading every judgement) and, for version drift,
the snapshot history of its pages; no I/O. None of these figures enters precision, coverage or the official-domain
rate: each has its own result type and its own key in the JSON.

Notes: every :class:`Metric` here is undefined exactly when its denominator is 0, and its value is then ``None``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from citeaudit.core.drift import ChangedAfterCollection, PageSnapshot, StaleSnapshot, VersionDrift, drift
from citeaudit.core.identity import OfficialMatcher, RowsOn, url_location
from citeaudit.core.model import (
    Answer,
    Audit,
    CitationKind,
    Claim,
    Edge,
    Label,
    Origin,
    Protocol,
    RetrievalStatus,
    Source,
    review_outcome,
)
from citeaudit.core.results import Metric
from citeaudit.core.scoring import LABEL_CODE, LABELS
from citeaudit.core.stats import cluster_bootstrap_ratio

__all__ = [
    "OWNER_OFFICIAL",
    "OWNER_THIRD_PARTY",
    "OWNER_UNKNOWN",
    "BrandColumns",
    "BrandFigures",
    "BrandScope",
    "ChangedAfterCollection",
    "CompetitorShare",
    "EdgeOutcome",
    "EntityCase",
    "EntityConfusion",
    "IdentifierCheck",
    "Mentions",
    "NameMentions",
    "PageSnapshot",
    "RetrievedNotCited",
    "SourceOwners",
    "StaleSnapshot",
    "VersionDrift",
    "brand_figures",
    "brand_figures_columns",
    "cited_keys",
    "claim_text_read",
    "competitor_share",
    "edge_outcomes",
    "entity_confusion",
    "identified_texts",
    "mentions",
    "names_in",
    "retrieved_not_cited",
    "snapshots_of_audit",
    "version_drift",
]

OWNER_OFFICIAL = "official"
"""Owner of a source on one of the brand's official presences."""
OWNER_THIRD_PARTY = "third_party"
"""Owner of a source on neither an official nor a competitor's presence."""
OWNER_UNKNOWN = "unknown"
"""Owner of a source without a URL (a title-only card): it cannot be placed."""

IdentifierCheck = Callable[[str, str], "tuple[tuple[str, ...], tuple[str, str] | None]"]
"""``check(claim_text, passage)`` → ``(identifiers the claim names, (claim's, passage's) when the passage is about
another identifier of the same family, else None)``; with an empty passage only the first part matters."""

CiSettings = tuple[float, int, int]
"""``(level, resamples, seed)`` of a cluster bootstrap over questions."""


def _metric(units: Sequence[tuple[str, bool]], ci: CiSettings | None) -> Metric:
    """A proportion over units ``(question id, hit)``, with a cluster-bootstrap interval over questions."""
    if ci is None:
        return Metric(sum(1 for _, hit in units if hit), len(units))
    per_question: dict[str, tuple[int, int]] = {}
    for question, hit in units:
        n, d = per_question.get(question, (0, 0))
        per_question[question] = (n + hit, d + 1)
    return _counted(per_question, ci)


def _counted(per_question: Mapping[str, tuple[int, int]], ci: CiSettings | None) -> Metric:
    """A proportion from per-question ``(numerator, denominator)`` counts, with its interval when asked for."""
    hits = sum(n for n, _ in per_question.values())
    total = sum(d for _, d in per_question.values())
    if ci is None:
        return Metric(hits, total)
    table = np.array(list(per_question.values()), dtype=np.float64).reshape(-1, 2)
    level, resamples, seed = ci
    interval = cluster_bootstrap_ratio(table[:, 0], table[:, 1], level=level, resamples=resamples, seed=seed)
    return Metric(hits, total, interval)


def _location(source: Source) -> str | None:
    return source.resolved_url or source.url


class EdgeOutcome(NamedTuple):
    """What the figures need of one edge: its pair, its final label and what the review quoted.

    A named tuple rather than a frozen dataclass: a database score builds one per edge, and a tuple is built
    several times faster, immutable all the same."""

    claim_id: str
    """The claim."""
    source_key: str
    """The source."""
    label: Label | None
    """Final label under the review policy (``None`` while pending or disputed)."""
    passage: str | None = None
    """Passage quoted by the latest human judgement that quotes one."""
    judged_at: str | None = None
    """Time of the latest human judgement (``None`` without one, or when no human judgement records its time)."""
    human_judged: bool = False
    """Whether a human judged the edge at all (with or without a recorded time)."""


def _reviewed_passage(edge: Edge) -> str | None:
    """The passage of the latest human judgement that quotes one."""
    human = [j for j in edge.judgements if j.origin is Origin.HUMAN and j.passage]
    if not human:
        return None
    return sorted(human, key=lambda j: j.created_at or "")[-1].passage


def edge_outcomes(audit: Audit, reviews_required: int = 1) -> list[EdgeOutcome]:
    """The outcome of every edge of an audit under a review policy (single review by default)."""
    found = []
    for edge in audit.edges:
        human = [j for j in edge.judgements if j.origin is Origin.HUMAN]
        times = [j.created_at for j in human if j.created_at]
        label = review_outcome(edge.judgements, reviews_required)[1]
        found.append(
            EdgeOutcome(
                edge.claim_id, edge.source_key, label, _reviewed_passage(edge), max(times, default=None), bool(human)
            )
        )
    return found


def cited_keys(answer: Answer, edges_of_answer: Iterable[EdgeOutcome]) -> set[str]:
    """Sources an answer cites: its cited citations and the sources of its claims' edges (DESIGN §6)."""
    keys = {c.source_key for c in answer.citations if c.kind is CitationKind.CITED and c.source_key is not None}
    keys |= {edge.source_key for edge in edges_of_answer}
    return keys


class _Frame:
    """One pass over an audit shared by every figure and group: each source's owner, each answer's cited sources
    and its claims' edges (owners are decided once per source, not once per citation)."""

    def __init__(
        self,
        audit: Audit,
        edges: Sequence[EdgeOutcome] | None,
        locations: Mapping[str, tuple[str | None, str]] | None = None,
    ) -> None:
        self.audit = audit
        self.edges = edge_outcomes(audit) if edges is None else list(edges)
        owners = _Owners(audit.protocol)
        self.owner_names = owners.names
        where = locations or {}
        self.owner = {s.key: owners(s, where.get(s.key)) for s in audit.sources}
        self.sources = {s.key: s for s in audit.sources}
        answer_of = {claim.id: claim.answer_id for claim in audit.claims}
        self.edges_of: dict[str, list[EdgeOutcome]] = {}
        for edge in self.edges:
            if edge.claim_id in answer_of:
                self.edges_of.setdefault(answer_of[edge.claim_id], []).append(edge)
        self.cited = {a.id: cited_keys(a, self.edges_of.get(a.id, ())) for a in audit.answers}
        self.owned = {a.id: {self.owner[key] for key in self.cited[a.id]} for a in audit.answers}
        self._identified: dict[str, str | None] = {}
        self._identifier_edges: dict[str, list[tuple[EdgeOutcome, str]]] = {}

    def identifier_edges(
        self, answer_id: str, claims: Mapping[str, Claim], check: IdentifierCheck
    ) -> list[tuple[EdgeOutcome, str]]:
        """The answer's edges whose claim names a model identifier, with the claim text read; kept, since the
        whole scope and each group ask for the same answers."""
        found = self._identifier_edges.get(answer_id)
        if found is None:
            found = []
            for edge in self.edges_of.get(answer_id, ()):
                text = self.identified(claims[edge.claim_id], check)
                if text is not None:
                    found.append((edge, text))
            self._identifier_edges[answer_id] = found
        return found

    def identified(self, claim: Claim, check: IdentifierCheck) -> str | None:
        """The claim's text (its entity prefixed when the text omits it) when it names a model identifier, else
        ``None``; read once per claim, however many edges it has."""
        if claim.id not in self._identified:
            text = claim.text if claim.entity is None or claim.entity in claim.text else f"{claim.entity}: {claim.text}"
            self._identified[claim.id] = text if check(text, "")[0] else None
        return self._identified[claim.id]


# --- competitor citation share ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CompetitorShare:
    """Who the cited sources of a scope belong to.

    Notes: ``answers_citing`` has the scope's answers as denominator; ``sources_by_owner`` the cited
    (answer, source) pairs (a source cited twice in one answer counts once).
    """

    answers_citing: Mapping[str, Metric]
    """Per competitor: answers citing at least one of its sources / answers in scope."""
    sources_by_owner: Mapping[str, Metric]
    """Per owner (``official``, ``competitor:NAME``…, ``third_party``, ``unknown``): cited pairs / cited pairs."""

    def to_dict(self) -> dict[str, object]:
        """JSON form: every metric ``{"value", "numerator", "denominator"}`` (plus ``ci`` when computed)."""
        return {
            "answers_citing": {name: m.to_dict() for name, m in self.answers_citing.items()},
            "sources_by_owner": {owner: m.to_dict() for owner, m in self.sources_by_owner.items()},
        }


class _Owners:
    """Which owner a source belongs to: official first, then the first competitor that claims it."""

    def __init__(self, protocol: Protocol) -> None:
        self._official = OfficialMatcher(protocol.official_domains)
        self._competitors = [(c.name, OfficialMatcher(c.domains)) for c in protocol.competitors]

    def __call__(self, source: Source, location: tuple[str | None, str] | None = None) -> str:
        """The owner of ``source``; ``location`` is its ``(host, path)`` when already known (a database keeps
        them per source), which spares parsing its URL."""
        url = _location(source)
        if not url:
            return OWNER_UNKNOWN
        host, path = url_location(url) if location is None else location
        if self._official.match_location(host, path):
            return OWNER_OFFICIAL
        for name, matcher in self._competitors:
            if matcher.match_location(host, path):
                return f"competitor:{name}"
        return OWNER_THIRD_PARTY

    @property
    def names(self) -> list[str]:
        return [OWNER_OFFICIAL, *(f"competitor:{name}" for name, _ in self._competitors), OWNER_THIRD_PARTY]


def competitor_share(
    audit: Audit, *, edges: Sequence[EdgeOutcome] | None = None, ci: CiSettings | None = None
) -> CompetitorShare:
    """Share of answers citing each declared competitor, and of cited sources by owner.

    An answer cites a source as for the official-domain rate (cited citations and edge sources). A source's
    owner is ``official`` when it matches the brand's official presences (that wins over a competitor's domain),
    else the first competitor whose domains match, else ``third_party``; ``unknown`` when it has no URL.
    """
    frame = _Frame(audit, edges)
    return _competitor_share(frame, audit.answers, ci)


def _competitor_share(frame: _Frame, answers: Sequence[Answer], ci: CiSettings | None) -> CompetitorShare:
    competitors = [c.name for c in frame.audit.protocol.competitors]
    answer_units: dict[str, list[tuple[str, bool]]] = {name: [] for name in competitors}
    # cited (answer, source) pairs per (question, owner): a count, not one row per pair
    pairs: Counter[tuple[str, str]] = Counter()
    for answer in answers:
        owned = frame.owned[answer.id]
        pairs.update((answer.question_id, frame.owner[key]) for key in frame.cited[answer.id])
        for name, units in answer_units.items():
            units.append((answer.question_id, f"competitor:{name}" in owned))
    names = list(frame.owner_names)
    if any(owner == OWNER_UNKNOWN for _, owner in pairs):
        names.append(OWNER_UNKNOWN)
    per_question: dict[str, int] = {}
    for (question, _), n in pairs.items():
        per_question[question] = per_question.get(question, 0) + n
    return CompetitorShare(
        answers_citing={name: _metric(units, ci) for name, units in answer_units.items()},
        sources_by_owner={
            owner: _counted({q: (pairs[(q, owner)], n) for q, n in per_question.items()}, ci) for owner in names
        },
    )


# --- mentions beside citations -----------------------------------------------------------------------------------


def _name_pattern(names: Sequence[str]) -> re.Pattern[str]:
    # Whole words only ("Brand" is not in "Brandt"), any case, longest name first so an alias that extends the
    # name wins the match.
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)


def names_in(text: str, names: Sequence[str]) -> bool:
    """True when ``text`` names any of ``names`` as a whole word, in any case."""
    return bool(names) and _name_pattern(names).search(text) is not None


@dataclass(frozen=True, slots=True)
class NameMentions:
    """How often answers name one brand or competitor, beside how often they cite it."""

    mention_rate: Metric
    """Answers whose text names it (name or alias) / answers in scope."""
    citation_rate: Metric
    """Answers citing at least one of its sources / answers in scope (for the brand: the official rate)."""
    mentioned_not_cited: int
    """Answers that name it without citing any of its sources."""
    cited_not_mentioned: int
    """Answers that cite one of its sources without naming it."""

    def to_dict(self) -> dict[str, object]:
        """JSON form."""
        return {
            "mention_rate": self.mention_rate.to_dict(),
            "citation_rate": self.citation_rate.to_dict(),
            "mentioned_not_cited": self.mentioned_not_cited,
            "cited_not_mentioned": self.cited_not_mentioned,
        }


@dataclass(frozen=True, slots=True)
class Mentions:
    """Mentions of the brand and of each competitor, beside their citations."""

    brand: NameMentions | None
    """The brand (``None`` when the protocol declares no brand names)."""
    competitors: Mapping[str, NameMentions] = field(default_factory=dict)
    """Each declared competitor, by name."""

    def to_dict(self) -> dict[str, object]:
        """JSON form."""
        return {
            "brand": None if self.brand is None else self.brand.to_dict(),
            "competitors": {name: m.to_dict() for name, m in self.competitors.items()},
        }


def _name_mentions(
    answers: Sequence[Answer], names: Sequence[str], cites: Callable[[Answer], bool], ci: CiSettings | None
) -> NameMentions:
    pattern = _name_pattern(names)
    named = [pattern.search(a.text) is not None for a in answers]
    cited = [cites(a) for a in answers]
    return NameMentions(
        mention_rate=_metric([(a.question_id, n) for a, n in zip(answers, named, strict=True)], ci),
        citation_rate=_metric([(a.question_id, c) for a, c in zip(answers, cited, strict=True)], ci),
        mentioned_not_cited=sum(n and not c for n, c in zip(named, cited, strict=True)),
        cited_not_mentioned=sum(c and not n for n, c in zip(named, cited, strict=True)),
    )


def mentions(audit: Audit, *, edges: Sequence[EdgeOutcome] | None = None, ci: CiSettings | None = None) -> Mentions:
    """Mention rates of the brand and the competitors, each beside its citation rate.

    The brand's citation rate is the official-domain rate, computed the same way (cited citations and edges).
    """
    return _mentions(_Frame(audit, edges), audit.answers, ci)


def _mentions(frame: _Frame, answers: Sequence[Answer], ci: CiSettings | None) -> Mentions:
    brand = frame.audit.protocol.brand

    def cites(owner: str) -> Callable[[Answer], bool]:
        return lambda answer: owner in frame.owned[answer.id]

    return Mentions(
        brand=None if brand is None else _name_mentions(answers, brand.names, cites(OWNER_OFFICIAL), ci),
        competitors={
            c.name: _name_mentions(answers, c.names, cites(f"competitor:{c.name}"), ci)
            for c in frame.audit.protocol.competitors
        },
    )


# --- retrieved but not cited -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RetrievedNotCited:
    """Answers whose engine retrieved an official page and did not cite it.

    Notes: the denominator is the answers whose engine reports what it retrieved (a ``retrieved`` citation, or
    ``retrieval: used``) and which retrieved an official page, cited or not (a page the answer cites was
    retrieved); undefined (``None``) when there are none. Answers without such a report are counted in
    ``not_reported``, answers that retrieved no official page in ``without_official``; neither is in the rate.
    """

    rate: Metric
    """Answers that retrieved an official page without citing it / answers that retrieved an official page."""
    retrieved_official: int
    """Answers reporting what they retrieved that retrieved at least one official page (the denominator)."""
    not_reported: int
    """Answers whose engine reports nothing of what it retrieved."""
    without_official: int = 0
    """Answers reporting what they retrieved that retrieved no official page."""

    def to_dict(self) -> dict[str, object]:
        """JSON form."""
        return {
            "rate": self.rate.to_dict(),
            "retrieved_official": self.retrieved_official,
            "not_reported": self.not_reported,
            "without_official": self.without_official,
        }


def retrieved_not_cited(
    audit: Audit, *, edges: Sequence[EdgeOutcome] | None = None, ci: CiSettings | None = None
) -> RetrievedNotCited:
    """The rate of answers that retrieved an official page without citing that page."""
    return _retrieved_not_cited(_Frame(audit, edges), audit.answers, ci)


def _retrieved_not_cited(frame: _Frame, answers: Sequence[Answer], ci: CiSettings | None) -> RetrievedNotCited:
    units: list[tuple[str, bool]] = []
    not_reported = without_official = 0
    for answer in answers:
        retrieved = {
            c.source_key for c in answer.citations if c.kind is CitationKind.RETRIEVED and c.source_key is not None
        }
        if not retrieved and answer.retrieval is not RetrievalStatus.USED:
            not_reported += 1
            continue
        cited = frame.cited[answer.id]
        # what it cites it retrieved: an answer that cited every official page it retrieved is in the denominator
        if not any(frame.owner[key] == OWNER_OFFICIAL for key in retrieved | cited):
            without_official += 1
            continue
        uncited = {key for key in retrieved if frame.owner[key] == OWNER_OFFICIAL} - cited
        units.append((answer.question_id, bool(uncited)))
    return RetrievedNotCited(_metric(units, ci), len(units), not_reported, without_official)


# --- entity confusion --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class EntityCase:
    """One edge whose reviewed passage is about another model than the claim."""

    claim_id: str
    """The claim."""
    source_key: str
    """The cited source."""
    claim_identifier: str
    """The identifier the claim names."""
    passage_identifier: str
    """The other identifier the passage names instead."""
    passage: str
    """The reviewed passage."""

    def to_dict(self) -> dict[str, object]:
        """JSON form."""
        return {
            "claim_id": self.claim_id,
            "source_key": self.source_key,
            "claim_identifier": self.claim_identifier,
            "passage_identifier": self.passage_identifier,
            "passage": self.passage,
        }


@dataclass(frozen=True, slots=True)
class EntityConfusion:
    """Edges whose passage is about another model identifier than the claim's.

    Notes: the denominator is every edge whose claim names a model identifier; edges without a final label or
    without a reviewed passage stay in it (as unknown edges stay in precision) and are counted apart.
    """

    rate: Metric
    """Confused edges / edges whose claim names an identifier."""
    pending: int
    """Edges in the denominator without a final label (cannot be confirmed yet)."""
    without_passage: int
    """Labelled edges in the denominator whose human judgements quote no passage (nothing to compare)."""
    cases: tuple[EntityCase, ...] = ()
    """The confused edges."""

    def to_dict(self) -> dict[str, object]:
        """JSON form."""
        return {
            "rate": self.rate.to_dict(),
            "pending": self.pending,
            "without_passage": self.without_passage,
            "cases": [case.to_dict() for case in self.cases],
        }


def entity_confusion(
    audit: Audit, check: IdentifierCheck, *, edges: Sequence[EdgeOutcome] | None = None, ci: CiSettings | None = None
) -> EntityConfusion:
    """Entity confusion rate: an edge is confused when its final label is not ``supported`` and its reviewed
    passage names only another identifier of the claim's model family (the consistency checks' identifier
    finding, confirmed by the review)."""
    return _entity_confusion(_Frame(audit, edges), audit.answers, check, ci)


def _entity_confusion(
    frame: _Frame, answers: Sequence[Answer], check: IdentifierCheck, ci: CiSettings | None
) -> EntityConfusion:
    claims = {c.id: c for c in frame.audit.claims}
    units: list[tuple[str, bool]] = []
    cases: list[EntityCase] = []
    pending = without_passage = 0
    for answer in answers:
        for edge, text in frame.identifier_edges(answer.id, claims, check):
            if edge.label is None:
                pending += 1
            elif edge.passage is None:
                without_passage += 1
            confused = None
            if edge.label is not None and edge.label is not Label.SUPPORTED and edge.passage is not None:
                confused = check(text, edge.passage)[1]
            if confused is not None and edge.passage is not None:
                cases.append(EntityCase(edge.claim_id, edge.source_key, confused[0], confused[1], edge.passage))
            units.append((answer.question_id, confused is not None))
    return EntityConfusion(_metric(units, ci), pending, without_passage, tuple(cases))


# --- version drift (the arithmetic is in citeaudit.core.drift) ---------------------------------------------------


def version_drift(
    audit: Audit, snapshots: Iterable[PageSnapshot], *, edges: Sequence[EdgeOutcome] | None = None
) -> VersionDrift:
    """Stale judged snapshots and pages changed after collection, for the official pages the answers cite.

    The judged snapshot of a page is the newest one taken no later than the latest human judgement of an edge to
    it (the page the reviewers could read); it is stale when a later snapshot has other content. A page changed
    after an answer was collected when its own date is later than the collection day, or when a snapshot taken
    after the collection has other content than the newest one taken before it.
    """
    return _version_drift(_Frame(audit, edges), snapshots)


def _version_drift(frame: _Frame, snapshots: Iterable[PageSnapshot]) -> VersionDrift:
    # a page judged without a recorded time is judged all the same: None, "judged, time unknown"
    judged_at: dict[str, str | None] = {}
    for edge in frame.edges:
        if edge.judged_at:
            judged_at[edge.source_key] = max(judged_at.get(edge.source_key) or "", edge.judged_at)
        elif edge.human_judged:
            judged_at.setdefault(edge.source_key, None)
    cited_official: dict[str, list[tuple[str, str | None]]] = {}
    runs = {r.id: r for r in frame.audit.runs}
    for answer in frame.audit.answers:
        run = runs.get(answer.run_id)
        for key in sorted(frame.cited[answer.id]):
            if frame.owner[key] == OWNER_OFFICIAL:
                cited_official.setdefault(key, []).append((answer.id, run.collected_at if run else None))
    return drift(cited_official, judged_at, snapshots)


# --- one scope ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BrandScope:
    """The figures of one scope (the whole audit or one group), each under its own JSON key."""

    competitor_share: CompetitorShare
    """Citation share by owner and answers citing each competitor."""
    mentions: Mentions
    """Mention rates beside citation rates."""
    retrieved_not_cited: RetrievedNotCited
    """Official pages retrieved but not cited."""
    entity_confusion: EntityConfusion
    """Edges whose passage is about another model."""

    def to_dict(self) -> dict[str, object]:
        """The keys added beside precision, coverage and the official rate."""
        return {
            "competitor_share": self.competitor_share.to_dict(),
            "mentions": self.mentions.to_dict(),
            "retrieved_not_cited": self.retrieved_not_cited.to_dict(),
            "entity_confusion": self.entity_confusion.to_dict(),
        }


def _scope(frame: _Frame, answers: Sequence[Answer], check: IdentifierCheck, ci: CiSettings | None) -> BrandScope:
    return BrandScope(
        competitor_share=_competitor_share(frame, answers, ci),
        mentions=_mentions(frame, answers, ci),
        retrieved_not_cited=_retrieved_not_cited(frame, answers, ci),
        entity_confusion=_entity_confusion(frame, answers, check, ci),
    )


Groups = list[tuple[tuple[tuple[str, str | None], ...], list[Answer]]]
"""Groups of answers with their dimension values."""


def _answer_groups(audit: Audit, by: Sequence[str]) -> Groups:
    """The answers split by dimensions, groups sorted by their values (``None`` first) as scores are.

    An answer's value is read as scoring reads it: the answer's own, else its run's (or question's locale)."""
    runs = {r.id: r for r in audit.runs}
    locales = {q.id: q.locale for q in audit.protocol.questions}
    groups: dict[tuple[str | None, ...], list[Answer]] = {}
    for answer in audit.answers:
        run = runs.get(answer.run_id)
        values: dict[str, str | None] = {
            "platform": answer.platform or (run.platform if run else None),
            "run": answer.run_id,
            "question": answer.question_id,
            "model": answer.model or (run.model if run else None),
            "locale": answer.locale or locales[answer.question_id],
            "sample": str(run.sample) if run and run.sample is not None else None,
        }
        groups.setdefault(tuple(values[name] for name in by), []).append(answer)
    ordered = sorted(groups, key=lambda k: tuple((v is not None, v or "") for v in k))
    return [(tuple(zip(by, key, strict=True)), groups[key]) for key in ordered]


def snapshots_of_audit(audit: Audit) -> list[PageSnapshot]:
    """The one snapshot an audit file records per source (``fetched_at`` and ``content_hash``), where it has one."""
    return [
        PageSnapshot(s.key, s.fetched_at, s.content_hash)
        for s in audit.sources
        if s.fetched_at is not None and s.content_hash is not None
    ]


@dataclass(frozen=True, slots=True)
class BrandFigures:
    """Everything this module reports for a scored scope: per scope, per platform, and the drift listing."""

    overall: BrandScope
    """The whole scope."""
    groups: tuple[tuple[tuple[tuple[str, str | None], ...], BrandScope], ...]
    """Per group of the score (same dimension values, same order)."""
    retrieved_by_platform: tuple[tuple[str | None, RetrievedNotCited], ...]
    """Retrieved but not cited, per platform."""
    version_drift: VersionDrift
    """Stale judged snapshots and pages changed after collection."""

    def to_dict(self) -> dict[str, object]:
        """The top-level keys (the whole scope); :meth:`group_dict` gives a group's."""
        body = self.overall.to_dict()
        retrieved = dict(self.overall.retrieved_not_cited.to_dict())
        retrieved["by_platform"] = [
            {"platform": platform, **figure.to_dict()} for platform, figure in self.retrieved_by_platform
        ]
        body["retrieved_not_cited"] = retrieved
        body["version_drift"] = self.version_drift.to_dict()
        return body

    def group_dict(self, by: Mapping[str, str | None]) -> dict[str, object]:
        """The per-scope keys of the group with dimension values ``by`` (empty when there is no such group)."""
        for key, scope in self.groups:
            if dict(key) == dict(by):
                return scope.to_dict()
        return {}


def brand_figures(
    audit: Audit,
    check: IdentifierCheck,
    *,
    edges: Sequence[EdgeOutcome] | None = None,
    snapshots: Iterable[PageSnapshot] | None = None,
    locations: Mapping[str, tuple[str | None, str]] | None = None,
    by: Sequence[str] = (),
    ci: CiSettings | None = None,
) -> BrandFigures:
    """Every figure of this module for ``audit`` (already restricted to the scope), grouped like the score.

    ``edges`` are the edges' outcomes (by default read from the audit's judgements under single review);
    ``snapshots`` the page history (a database's fetches; by default the one snapshot per source the audit
    records); ``locations`` each source's ``(host, path)`` when known."""
    frame = _Frame(audit, edges, locations)
    history = snapshots_of_audit(audit) if snapshots is None else list(snapshots)
    return BrandFigures(
        overall=_scope(frame, audit.answers, check, ci),
        groups=tuple((key, _scope(frame, part, check, ci)) for key, part in _answer_groups(audit, by)) if by else (),
        retrieved_by_platform=tuple(
            (key[0][1], _retrieved_not_cited(frame, part, ci)) for key, part in _answer_groups(audit, ("platform",))
        ),
        version_drift=_version_drift(frame, history),
    )


# --- the same figures from columns (a database's path) ----------------------------------------------------------


class SourceOwners:
    """Owner codes for sources decided per host where the host decides (sources far outnumber hosts), per
    ``(host, path)`` where a declared domain has a path prefix: the codes index :attr:`names`, whose last entry is
    ``unknown`` (a source without a URL)."""

    def __init__(self, protocol: Protocol) -> None:
        self._matchers = [
            OfficialMatcher(protocol.official_domains),
            *(OfficialMatcher(c.domains) for c in protocol.competitors),
        ]
        self.names = [*_Owners(protocol).names, OWNER_UNKNOWN]
        """Owner names by code: official, each competitor, third party, unknown."""
        self.third_party = len(self.names) - 2
        """Code of ``third_party``."""
        self.unknown = len(self.names) - 1
        """Code of ``unknown``."""

    def owner_each(
        self,
        hosts: Sequence[str | None],
        rows_on: RowsOn,
        paths: Callable[[IntArray], Sequence[str | None]],
        size: int,
    ) -> IntArray:
        """Per row of a table of ``size`` sources, its owner code: the first of the official presences and the
        competitors whose :meth:`OfficialMatcher.official_each` claims it, else ``third_party`` (a source
        without a URL is given no host, so it is third party here; the caller marks it ``unknown``)."""
        owner = np.full(size, self.third_party, dtype=np.int64)
        open_rows = np.ones(size, dtype=np.bool_)
        for code, matcher in enumerate(self._matchers):
            claimed = matcher.official_each(hosts, rows_on, paths, size) & open_rows
            owner[claimed] = code
            open_rows &= ~claimed
        return owner


def identified_texts(texts: Iterable[tuple[int, str]], check: IdentifierCheck) -> dict[int, str]:
    """Of ``(claim index, text read)`` pairs, those whose text names a model identifier; each distinct text is
    read once, however many claims say it."""
    named: dict[str, bool] = {}
    found: dict[int, str] = {}
    for index, text in texts:
        hit = named.get(text)
        if hit is None:
            hit = named[text] = bool(check(text, "")[0])
        if hit:
            found[index] = text
    return found


def claim_text_read(text: str, entity: str | None) -> str:
    """The text the identifier check reads for a claim: its entity prefixed when the text omits it."""
    return text if entity is None or entity in text else f"{entity}: {text}"


IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class BrandColumns:
    """What the brand figures read of a scope, as columns: answers in order (position = answer index), sources by
    index with their owner codes (:class:`SourceOwners`), citations and edges as index arrays, and the few texts
    the figures quote. Built by a database reader without a model object per row."""

    answer_ids: Sequence[str]
    """Answer ids, in the scope's order."""
    answer_questions: Sequence[str]
    """Each answer's question id."""
    answer_texts: Sequence[str]
    """Each answer's text (empty when no brand or competitor names are declared: nothing reads them)."""
    answer_collected: Sequence[str | None]
    """Each answer's run's collection time."""
    answer_dims: Mapping[str, Sequence[str | None]]
    """Each answer's value of the grouping dimensions (platform, run, question, model, locale, sample)."""
    source_keys: Sequence[str]
    """Source keys by index."""
    source_owner: IntArray
    """Owner code per source index."""
    cited_answer: IntArray
    """Answer index of each cited citation with a source."""
    cited_source: IntArray
    """Its source index."""
    retrieved_answer: IntArray
    """Answer index of each retrieved citation with a source."""
    retrieved_source: IntArray
    """Its source index."""
    claim_ids: Sequence[str]
    """Claim ids in scope, in the scope's order."""
    claim_answer: IntArray
    """Answer index per claim."""
    claim_identified: Mapping[int, str]
    """Claims naming a model identifier: claim index → text read (:func:`identified_texts`)."""
    edge_claim: IntArray
    """Claim index per edge of the claims in scope, edges in order."""
    edge_source: IntArray
    """Source index per edge."""
    edge_code: IntArray
    """Final code per edge (``citeaudit.core.scoring``'s codes: a label, pending or disputed)."""
    edge_passage: Mapping[int, str]
    """Reviewed passage (latest human judgement that quotes one) of the edges of identified claims that have one."""
    judged_at: Mapping[str, str | None]
    """Latest human judgement time per source key (at least for every official source cited in scope); ``None``
    for a source judged by humans none of whose judgements records its time."""
    answer_retrieval: Sequence[str | None] = ()
    """Each answer's retrieval status (``used``, ``not_used``, ``failed``, ``unknown`` or ``None``); empty: unknown
    for every answer."""


def _label_of(code: int) -> Label | None:
    return LABELS[code] if 0 <= code < len(LABELS) else None


def _question_table(questions: IntArray, numerators: IntArray, denominators: IntArray) -> tuple[int, int, Any]:
    """``(numerator, denominator, table)`` per question in order of first appearance (as the object path builds
    its per-question dictionaries), ``table`` with one ``(n, d)`` row a question as floats."""
    if len(questions) == 0:
        return 0, 0, np.zeros((0, 2), dtype=np.float64)
    uniques, first, inverse = np.unique(questions, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    n = np.bincount(inverse, weights=numerators, minlength=len(uniques))[order]
    d = np.bincount(inverse, weights=denominators, minlength=len(uniques))[order]
    return int(numerators.sum()), int(denominators.sum()), np.stack([n, d], axis=1).astype(np.float64)


def _rate(questions: IntArray, hits: npt.NDArray[np.bool_], ci: CiSettings | None) -> Metric:
    """A proportion over units (question code, hit), as :func:`_metric` gives it."""
    if ci is None:
        return Metric(int(np.count_nonzero(hits)), len(hits))
    return _counts_metric(questions, hits.astype(np.int64), np.ones(len(hits), dtype=np.int64), ci)


def _counts_metric(questions: IntArray, numerators: IntArray, denominators: IntArray, ci: CiSettings | None) -> Metric:
    hits, total, table = _question_table(questions, numerators, denominators)
    if ci is None:
        return Metric(hits, total)
    level, resamples, seed = ci
    interval = cluster_bootstrap_ratio(table[:, 0], table[:, 1], level=level, resamples=resamples, seed=seed)
    return Metric(hits, total, interval)


class _ColumnFrame:
    """The columns with what every figure and group shares: the cited (answer, source) pairs, the counts of
    cited sources per answer and owner, the mention of each name list per answer, the identifier edges."""

    def __init__(self, protocol: Protocol, columns: BrandColumns, check: IdentifierCheck) -> None:
        self.protocol = protocol
        self.c = columns
        self.owners = SourceOwners(protocol)
        n_answers, n_sources = len(columns.answer_ids), max(len(columns.source_keys), 1)
        n_owners = len(self.owners.names)
        _, question_codes = np.unique(np.asarray(columns.answer_questions, dtype=object), return_inverse=True)
        self.question = question_codes.astype(np.int64).reshape(-1)
        edge_answer = columns.claim_answer[columns.edge_claim]
        # cited (answer, source) pairs: cited citations and the sources of the claims' edges, each pair once
        keys = np.concatenate(
            [columns.cited_answer * n_sources + columns.cited_source, edge_answer * n_sources + columns.edge_source]
        )
        keys.sort(kind="stable")
        if len(keys) > 1:
            keys = keys[np.concatenate([[True], keys[1:] != keys[:-1]])]
        self.cited_keys = keys
        self.pair_answer, self.pair_source = keys // n_sources, keys % n_sources
        self.n_sources = n_sources
        pair_owner = columns.source_owner[self.pair_source]
        self.owner_counts = np.bincount(
            self.pair_answer * n_owners + pair_owner, minlength=n_answers * n_owners
        ).reshape(n_answers, n_owners)
        self.owned = self.owner_counts > 0
        self._named: dict[tuple[str, ...], npt.NDArray[np.bool_]] = {}
        # the edges of identified claims, with what entity confusion reads of each (decided once)
        identified = np.zeros(len(columns.claim_ids), dtype=np.bool_)
        if columns.claim_identified:
            identified[np.fromiter(columns.claim_identified, dtype=np.int64)] = True
        self.id_edges = (
            np.flatnonzero(identified[columns.edge_claim]) if len(columns.edge_claim) else np.zeros(0, dtype=np.int64)
        )
        self.id_edge_answer = edge_answer[self.id_edges]
        self.confused: dict[int, tuple[str, str]] = {}
        supported = LABEL_CODE[Label.SUPPORTED]
        for edge in self.id_edges.tolist():
            code = int(columns.edge_code[edge])
            passage = columns.edge_passage.get(edge)
            if _label_of(code) is not None and code != supported and passage is not None:
                found = check(columns.claim_identified[int(columns.edge_claim[edge])], passage)[1]
                if found is not None:
                    self.confused[edge] = found

    def named(self, names: Sequence[str]) -> npt.NDArray[np.bool_]:
        """Per answer, whether its text names any of ``names`` (read once per name list)."""
        key = tuple(names)
        if key not in self._named:
            pattern = _name_pattern(names)
            self._named[key] = np.fromiter(
                (pattern.search(text) is not None for text in self.c.answer_texts),
                dtype=np.bool_,
                count=len(self.c.answer_texts),
            )
        return self._named[key]


def _columns_competitor_share(frame: _ColumnFrame, answers: IntArray, ci: CiSettings | None) -> CompetitorShare:
    questions = frame.question[answers]
    competitors = [c.name for c in frame.protocol.competitors]
    counts = frame.owner_counts[answers]
    per_answer = counts.sum(axis=1)
    with_pairs = per_answer > 0
    names = frame.owners.names[:-1]
    if counts[:, frame.owners.unknown].any():
        names = frame.owners.names
    pair_questions, pair_totals = questions[with_pairs], per_answer[with_pairs]
    return CompetitorShare(
        answers_citing={name: _rate(questions, frame.owned[answers, 1 + i], ci) for i, name in enumerate(competitors)},
        sources_by_owner={
            owner: _counts_metric(pair_questions, counts[with_pairs, code], pair_totals, ci)
            for code, owner in enumerate(names)
        },
    )


def _columns_mentions(frame: _ColumnFrame, answers: IntArray, ci: CiSettings | None) -> Mentions:
    questions = frame.question[answers]

    def one(names: Sequence[str], owner: int) -> NameMentions:
        named = frame.named(names)[answers]
        cited = frame.owned[answers, owner]
        return NameMentions(
            mention_rate=_rate(questions, named, ci),
            citation_rate=_rate(questions, cited, ci),
            mentioned_not_cited=int(np.count_nonzero(named & ~cited)),
            cited_not_mentioned=int(np.count_nonzero(cited & ~named)),
        )

    brand = frame.protocol.brand
    return Mentions(
        brand=None if brand is None else one(brand.names, 0),
        competitors={c.name: one(c.names, 1 + i) for i, c in enumerate(frame.protocol.competitors)},
    )


class _Retrieved:
    """Per answer: whether its engine reports what it retrieved, whether it retrieved an official page (cited or
    not), and whether it retrieved an official page it did not cite."""

    def __init__(self, frame: _ColumnFrame) -> None:
        c = frame.c
        n = len(c.answer_ids)
        self.reported = np.zeros(n, dtype=np.bool_)
        self.reported[c.retrieved_answer] = True
        if len(c.answer_retrieval):
            self.reported |= np.array([status == "used" for status in c.answer_retrieval], dtype=np.bool_)
        official = c.source_owner[c.retrieved_source] == 0
        answers, sources = c.retrieved_answer[official], c.retrieved_source[official]
        self.official = frame.owned[:, 0].copy()  # cited an official page (owner code 0): it retrieved one
        self.official[answers] = True
        keys = answers * frame.n_sources + sources
        at = np.searchsorted(frame.cited_keys, keys)
        cited = np.zeros(len(keys), dtype=np.bool_)
        found = at < len(frame.cited_keys)
        cited[found] = frame.cited_keys[at[found]] == keys[found]
        self.uncited = np.zeros(n, dtype=np.bool_)
        self.uncited[answers[~cited]] = True


def _columns_retrieved(
    frame: _ColumnFrame, retrieved: _Retrieved, answers: IntArray, ci: CiSettings | None
) -> RetrievedNotCited:
    reported = retrieved.reported[answers]
    with_official = reported & retrieved.official[answers]
    units = answers[with_official]
    return RetrievedNotCited(
        _rate(frame.question[units], retrieved.uncited[units], ci),
        len(units),
        int(len(answers) - np.count_nonzero(reported)),
        int(np.count_nonzero(reported & ~retrieved.official[answers])),
    )


def _columns_entity_confusion(frame: _ColumnFrame, answers: IntArray, ci: CiSettings | None) -> EntityConfusion:
    c = frame.c
    rank = np.full(len(c.answer_ids), -1, dtype=np.int64)
    rank[answers] = np.arange(len(answers), dtype=np.int64)
    ranks = rank[frame.id_edge_answer]
    inside = ranks >= 0
    order = np.argsort(ranks[inside], kind="stable")
    edges = frame.id_edges[inside][order]
    codes = c.edge_code[edges]
    labelled = codes < len(LABELS)
    has_passage = np.fromiter((int(e) in c.edge_passage for e in edges), dtype=np.bool_, count=len(edges))
    hits = np.fromiter((int(e) in frame.confused for e in edges), dtype=np.bool_, count=len(edges))
    cases = []
    for edge in edges[hits].tolist():
        claim_identifier, passage_identifier = frame.confused[edge]
        cases.append(
            EntityCase(
                c.claim_ids[int(c.edge_claim[edge])],
                c.source_keys[int(c.edge_source[edge])],
                claim_identifier,
                passage_identifier,
                c.edge_passage[edge],
            )
        )
    return EntityConfusion(
        _rate(frame.question[frame.id_edge_answer[inside][order]], hits, ci),
        int(np.count_nonzero(~labelled)),
        int(np.count_nonzero(labelled & ~has_passage)),
        tuple(cases),
    )


def _columns_version_drift(frame: _ColumnFrame, snapshots: Iterable[PageSnapshot]) -> VersionDrift:
    c = frame.c
    official = c.source_owner[frame.pair_source] == 0
    answers, sources = frame.pair_answer[official], frame.pair_source[official]
    order = np.lexsort((answers, sources))
    cited_official: dict[str, list[tuple[str, str | None]]] = {}
    for answer, source in zip(answers[order].tolist(), sources[order].tolist(), strict=True):
        cited_official.setdefault(c.source_keys[source], []).append((c.answer_ids[answer], c.answer_collected[answer]))
    return drift(cited_official, c.judged_at, snapshots)


def _column_groups(
    columns: BrandColumns, by: Sequence[str]
) -> list[tuple[tuple[tuple[str, str | None], ...], IntArray]]:
    """The answer indices split by dimensions, groups sorted by their values (``None`` first) as scores are."""
    groups: dict[tuple[str | None, ...], list[int]] = {}
    values = [columns.answer_dims[name] for name in by]
    for index in range(len(columns.answer_ids)):
        groups.setdefault(tuple(v[index] for v in values), []).append(index)
    ordered = sorted(groups, key=lambda k: tuple((v is not None, v or "") for v in k))
    return [(tuple(zip(by, key, strict=True)), np.asarray(groups[key], dtype=np.int64)) for key in ordered]


def brand_figures_columns(
    protocol: Protocol,
    columns: BrandColumns,
    check: IdentifierCheck,
    *,
    snapshots: Iterable[PageSnapshot] = (),
    by: Sequence[str] = (),
    ci: CiSettings | None = None,
) -> BrandFigures:
    """:func:`brand_figures` from columns (the scope already selected): the same figures, the same order, the same
    intervals, with the work done per array rather than per edge."""
    frame = _ColumnFrame(protocol, columns, check)
    retrieved = _Retrieved(frame)

    def scope(answers: IntArray) -> BrandScope:
        return BrandScope(
            competitor_share=_columns_competitor_share(frame, answers, ci),
            mentions=_columns_mentions(frame, answers, ci),
            retrieved_not_cited=_columns_retrieved(frame, retrieved, answers, ci),
            entity_confusion=_columns_entity_confusion(frame, answers, ci),
        )

    everything = np.arange(len(columns.answer_ids), dtype=np.int64)
    return BrandFigures(
        overall=scope(everything),
        groups=tuple((key, scope(part)) for key, part in _column_groups(columns, by)) if by else (),
        retrieved_by_platform=tuple(
            (key[0][1], _columns_retrieved(frame, retrieved, part, ci))
            for key, part in _column_groups(columns, ("platform",))
        ),
        version_drift=_columns_version_drift(frame, snapshots),
    )
