"""What trackers count and precision cannot show, with the same explicit denominators: competitor citation share,
mentions beside citations, official pages retrieved but not cited, entity confusion and version drift.

Pure functions over an :class:`Audit` and the outcome of each edge (:class:`EdgeOutcome`: final label, reviewed
passage; a database gives them under its review policy without loading every judgement) and, for version drift,
the snapshot history of its pages; no I/O. None of these figures enters precision, coverage or the official-domain
rate: each has its own result type (:mod:`citeaudit.core.brand.results`) and its own key in the JSON. The same
figures from a database's columns are :mod:`citeaudit.core.brand.columns`.

Notes: every :class:`Metric` here is undefined exactly when its denominator is 0, and its value is then ``None``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import NamedTuple

from citeaudit.core.brand.results import (
    OWNER_OFFICIAL,
    OWNER_THIRD_PARTY,
    OWNER_UNKNOWN,
    BrandFigures,
    BrandScope,
    CiSettings,
    CompetitorShare,
    EntityCase,
    EntityConfusion,
    IdentifierCheck,
    Mentions,
    NameMentions,
    RetrievedNotCited,
    questions_metric,
    units_metric,
)
from citeaudit.core.drift import PageSnapshot, VersionDrift, drift
from citeaudit.core.identity import OfficialMatcher, url_location
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

__all__ = [
    "EdgeOutcome",
    "Owners",
    "brand_figures",
    "cited_keys",
    "competitor_share",
    "edge_outcomes",
    "entity_confusion",
    "mentions",
    "name_pattern",
    "names_in",
    "retrieved_not_cited",
    "snapshots_of_audit",
    "version_drift",
]


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
    """Sources an answer cites: its cited citations and the sources of its claims' edges (docs/metrics.md)."""
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
        owners = Owners(audit.protocol)
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


class Owners:
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
        answers_citing={name: units_metric(units, ci) for name, units in answer_units.items()},
        sources_by_owner={
            owner: questions_metric({q: (pairs[(q, owner)], n) for q, n in per_question.items()}, ci) for owner in names
        },
    )


# --- mentions beside citations -----------------------------------------------------------------------------------


def name_pattern(names: Sequence[str]) -> re.Pattern[str]:
    # Whole words only ("Brand" is not in "Brandt"), any case, longest name first so an alias that extends the
    # name wins the match.
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)


def names_in(text: str, names: Sequence[str]) -> bool:
    """True when ``text`` names any of ``names`` as a whole word, in any case."""
    return bool(names) and name_pattern(names).search(text) is not None


def _name_mentions(
    answers: Sequence[Answer], names: Sequence[str], cites: Callable[[Answer], bool], ci: CiSettings | None
) -> NameMentions:
    pattern = name_pattern(names)
    named = [pattern.search(a.text) is not None for a in answers]
    cited = [cites(a) for a in answers]
    return NameMentions(
        mention_rate=units_metric([(a.question_id, n) for a, n in zip(answers, named, strict=True)], ci),
        citation_rate=units_metric([(a.question_id, c) for a, c in zip(answers, cited, strict=True)], ci),
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
    return RetrievedNotCited(units_metric(units, ci), len(units), not_reported, without_official)


# --- entity confusion --------------------------------------------------------------------------------------------


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
    return EntityConfusion(units_metric(units, ci), pending, without_passage, tuple(cases))


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
