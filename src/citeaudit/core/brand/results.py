"""What the brand figures report (pure records): competitor citation share, mentions beside citations, official
pages retrieved but not cited, entity confusion, each scope's figures and the whole set; with the owner names
and the proportions (:func:`units_metric`, :func:`questions_metric`) that the audit and the column paths share.

Notes: every :class:`Metric` here is undefined exactly when its denominator is 0, and its value is then ``None``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from citeaudit.core.drift import VersionDrift
from citeaudit.core.results import Metric
from citeaudit.core.stats import cluster_bootstrap_ratio

__all__ = [
    "OWNER_OFFICIAL",
    "OWNER_THIRD_PARTY",
    "OWNER_UNKNOWN",
    "BrandFigures",
    "BrandScope",
    "CiSettings",
    "CompetitorShare",
    "EntityCase",
    "EntityConfusion",
    "IdentifierCheck",
    "Mentions",
    "NameMentions",
    "RetrievedNotCited",
    "questions_metric",
    "units_metric",
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


def units_metric(units: Sequence[tuple[str, bool]], ci: CiSettings | None) -> Metric:
    """A proportion over units ``(question id, hit)``, with a cluster-bootstrap interval over questions."""
    if ci is None:
        return Metric(sum(1 for _, hit in units if hit), len(units))
    per_question: dict[str, tuple[int, int]] = {}
    for question, hit in units:
        n, d = per_question.get(question, (0, 0))
        per_question[question] = (n + hit, d + 1)
    return questions_metric(per_question, ci)


def questions_metric(per_question: Mapping[str, tuple[int, int]], ci: CiSettings | None) -> Metric:
    """A proportion from per-question ``(numerator, denominator)`` counts, with its interval when asked for."""
    hits = sum(n for n, _ in per_question.values())
    total = sum(d for _, d in per_question.values())
    if ci is None:
        return Metric(hits, total)
    table = np.array(list(per_question.values()), dtype=np.float64).reshape(-1, 2)
    level, resamples, seed = ci
    interval = cluster_bootstrap_ratio(table[:, 0], table[:, 1], level=level, resamples=resamples, seed=seed)
    return Metric(hits, total, interval)


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
