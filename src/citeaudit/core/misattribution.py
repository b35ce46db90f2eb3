"""Misattribution: a claim its own citations do not support, but another source of the audit does.

For a claim *at risk* (no edge with the final label ``supported``), the pairs (claim, another source cited in the
same answer) and (claim, an official page with a snapshot) are *cross pairs*. They are proposed by ``suggest``,
judged in review like edges, and kept apart from edges: they never enter precision, coverage, the official rate
or any count of supplied edges. A claim at risk is *misattributed* when one of its cross pairs is ``supported``:
the support was in the audit, the answer attributed the claim to the wrong source.

Pure functions over an :class:`Audit` and typed cross pairs; no I/O.

Notes: the misattribution rate is undefined when no claim is at risk (``claims_at_risk == 0``); its value is
then ``None``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import numpy.typing as npt

from citeaudit.core.brand.figures import EdgeOutcome, edge_outcomes
from citeaudit.core.display import ShownFigure
from citeaudit.core.model import Audit, Judgement, Label, Origin, Source, review_outcome
from citeaudit.core.results import Metric
from citeaudit.core.scoring import LABELS, SUPPORTED_CODE

__all__ = [
    "CrossCandidate",
    "CrossKind",
    "CrossPair",
    "Misattributed",
    "MisattributionReport",
    "claims_at_risk",
    "cross_candidates",
    "misattribution",
    "misattribution_columns",
]


class CrossKind(StrEnum):
    """Where a cross pair's source comes from."""

    CO_CITED = "co_cited"
    """Another source cited in the same answer."""
    OFFICIAL = "official"
    """An official page the audit has a snapshot of."""


@dataclass(frozen=True, slots=True)
class CrossCandidate:
    """A cross pair to propose: a claim at risk and a source it is not attributed to."""

    claim_id: str
    """The claim at risk."""
    source_key: str
    """The other source."""
    kind: CrossKind
    """Co-cited in the answer, or an official page."""


@dataclass(frozen=True, slots=True)
class CrossPair:
    """A proposed cross pair with its judgements (model suggestions and reviews)."""

    claim_id: str
    """The claim."""
    source_key: str
    """The other source."""
    kind: CrossKind
    """Co-cited in the answer, or an official page."""
    judgements: tuple[Judgement, ...] = ()
    """Every judgement of the pair, in the order given."""
    counted: tuple[Judgement, ...] | None = None
    """The judgements that decide the pair under the project's review policy, as for edges (a reviewer's change
    after the reviews were complete is left out, so only an adjudication ends a dispute); the store fills it in.
    ``None``: every judgement counts."""

    def final_label(self, reviews_required: int = 1) -> Label | None:
        """The final label under the review policy (human judgements only, as for edges)."""
        return review_outcome(self.judgements if self.counted is None else self.counted, reviews_required)[1]


def _location(source: Source) -> str | None:
    return source.resolved_url or source.url


def claims_at_risk(audit: Audit, edges: Sequence[EdgeOutcome]) -> list[str]:
    """Ids of the claims with at least one edge and no ``supported`` one (an edge without a final label is not
    support), in audit order. A claim without any edge attributes nothing, so it is not at risk."""
    with_edge = {e.claim_id for e in edges}
    supported = {e.claim_id for e in edges if e.label is Label.SUPPORTED}
    return [c.id for c in audit.claims if c.id in with_edge and c.id not in supported]


def cross_candidates(
    audit: Audit,
    official: Callable[[str | None], bool],
    snapshots: Collection[str],
    *,
    edges: Sequence[EdgeOutcome] | None = None,
) -> list[CrossCandidate]:
    """Every cross pair of the claims at risk whose edges all have a final label (a pending edge may still turn
    out supported): each other source cited in the claim's answer, then each official page with a snapshot (keys
    in ``snapshots``), none of them a source of one of the claim's own edges.

    ``official`` decides whether a URL is official (the protocol's matcher). Sources without a snapshot are left
    out of the official kind only: a co-cited source is proposed all the same, and ``suggest`` counts those it
    cannot read. ``edges`` are the edges' outcomes (by default from the audit's judgements, single review)."""
    outcomes = edge_outcomes(audit) if edges is None else list(edges)
    claims = {c.id: c for c in audit.claims}
    answers = {a.id: a for a in audit.answers}
    own: dict[str, set[str]] = {}
    cited: dict[str, set[str]] = {}
    for edge in outcomes:
        if edge.claim_id not in claims:
            continue
        own.setdefault(edge.claim_id, set()).add(edge.source_key)
        cited.setdefault(claims[edge.claim_id].answer_id, set()).add(edge.source_key)
    for answer in audit.answers:
        cited.setdefault(answer.id, set()).update(
            c.source_key for c in answer.citations if c.kind == "cited" and c.source_key is not None
        )
    official_pages = sorted(s.key for s in audit.sources if s.key in snapshots and official(_location(s)))
    found: list[CrossCandidate] = []
    undecided = {e.claim_id for e in outcomes if e.label is None}
    for claim_id in claims_at_risk(audit, outcomes):
        if claim_id in undecided:
            continue
        claim = claims[claim_id]
        taken = set(own.get(claim_id, ()))
        for key in sorted(cited.get(answers[claim.answer_id].id, set()) - taken):
            found.append(CrossCandidate(claim_id, key, CrossKind.CO_CITED))
            taken.add(key)
        for key in official_pages:
            if key not in taken:
                found.append(CrossCandidate(claim_id, key, CrossKind.OFFICIAL))
    return found


@dataclass(frozen=True, slots=True)
class Misattributed:
    """One misattributed claim: its own sources, and the source that supports it instead."""

    claim_id: str
    """The claim."""
    answer_id: str
    """Its answer."""
    claim_text: str
    """What it says."""
    cited: tuple[tuple[str, str | None], ...]
    """Its own edges: ``(source key, final label or None while pending)``."""
    supporting_source: str
    """The other source, judged ``supported``."""
    kind: CrossKind
    """Co-cited in the answer, or an official page."""
    passage: str | None
    """The passage the reviewer quoted for the supported cross pair."""
    reviewer: str | None
    """Who judged it."""

    def to_dict(self) -> dict[str, object]:
        """JSON form."""
        return {
            "claim_id": self.claim_id,
            "answer_id": self.answer_id,
            "claim": self.claim_text,
            "cited": [{"source_key": key, "label": label} for key, label in self.cited],
            "supported_by": {"source_key": self.supporting_source, "kind": str(self.kind)},
            "passage": self.passage,
            "reviewer": self.reviewer,
        }


NOT_MEASURED = "no cross pairs proposed: run citeaudit suggest --cross-pairs"
"""Why misattribution is not measured while the claims at risk have no cross pair at all."""


@dataclass(frozen=True, slots=True)
class MisattributionReport:
    """Misattributed claims over the claims at risk, with every case.

    Notes: undefined when ``claims_at_risk == 0`` (``rate.value`` is ``None``). Cross pairs are counted here
    only; they never change a precision, coverage or edge count.
    """

    rate: Metric
    """Misattributed claims / claims at risk (claims with edges, none ``supported``)."""
    at_risk_with_pending_edges: int
    """Claims at risk with an edge that has no final label yet (they may still turn out supported)."""
    at_risk_without_cross_pairs: int
    """Claims at risk with no cross pair proposed (run ``citeaudit suggest --cross-pairs``)."""
    cross_pairs: int
    """Cross pairs of the claims at risk."""
    cross_pairs_pending: int
    """Of those, cross pairs without a final label."""
    cases: tuple[Misattributed, ...] = ()
    """The misattributed claims."""

    @property
    def provisional(self) -> bool:
        """True while some claim at risk has a cross pair or an edge without a final label."""
        return self.cross_pairs_pending > 0 or self.at_risk_with_pending_edges > 0

    def _shown_args(self) -> tuple[int, str | None, str | None]:
        # (pending, what is pending, why not measured)
        if self.rate.denominator and not self.cross_pairs:
            return 0, None, NOT_MEASURED
        if self.cross_pairs_pending:
            return self.cross_pairs_pending, "cross pairs", None
        if self.at_risk_with_pending_edges:
            return self.at_risk_with_pending_edges, "claims with edges", None
        return 0, None, None

    def shown(self) -> ShownFigure:
        """How the rate is shown: not measured while no cross pair was ever proposed for the claims at risk (a count
        over nothing is not 0), provisional with the pending cross pairs (or claims with pending edges)."""
        pending, pending_of, not_measured = self._shown_args()
        return self.rate.shown("misattribution", pending=pending, pending_of=pending_of, not_measured=not_measured)

    def to_dict(self) -> dict[str, object]:
        """JSON form; ``rate.value`` is ``null`` with ``rate.reason`` while not measured."""
        pending, pending_of, not_measured = self._shown_args()
        return {
            "rate": self.rate.to_dict(
                "misattribution", pending=pending, pending_of=pending_of, not_measured=not_measured
            ),
            "provisional": self.provisional,
            "at_risk_with_pending_edges": self.at_risk_with_pending_edges,
            "at_risk_without_cross_pairs": self.at_risk_without_cross_pairs,
            "cross_pairs": self.cross_pairs,
            "cross_pairs_pending": self.cross_pairs_pending,
            "cases": [case.to_dict() for case in self.cases],
        }


def _reviewed(judgements: Iterable[Judgement], label: Label) -> tuple[str | None, str | None]:
    """``(passage, reviewer)`` for a cross pair with a final ``label``: the passage of the latest human judgement
    with that label that quotes one (an adjudicator often quotes none), and who gave the latest such judgement."""
    matching = sorted(
        (j for j in judgements if j.origin is Origin.HUMAN and j.label is label), key=lambda j: j.created_at or ""
    )
    quoted = [j.passage for j in matching if j.passage]
    return (quoted[-1] if quoted else None), (matching[-1].reviewer if matching else None)


def _first_supported(pairs: Iterable[CrossPair], reviews_required: int) -> tuple[CrossPair | None, int, int]:
    """The first of a claim's cross pairs (by source key) whose final label is supported, how many pairs there
    are, and how many of them still wait for a final label."""
    chosen: CrossPair | None = None
    total = pending = 0
    for pair in sorted(pairs, key=lambda p: p.source_key):
        total += 1
        label = pair.final_label(reviews_required)
        pending += label is None
        if label is Label.SUPPORTED and chosen is None:
            chosen = pair
    return chosen, total, pending


def _case(
    claim_id: str, answer_id: str, text: str, own: tuple[tuple[str, str | None], ...], chosen: CrossPair
) -> Misattributed:
    """One misattributed claim: its own edges (source key, final label) and the supported cross pair shown."""
    passage, reviewer = _reviewed(chosen.judgements if chosen.counted is None else chosen.counted, Label.SUPPORTED)
    return Misattributed(claim_id, answer_id, text, own, chosen.source_key, chosen.kind, passage, reviewer)


def misattribution(
    audit: Audit,
    cross_pairs: Iterable[CrossPair],
    *,
    edges: Sequence[EdgeOutcome] | None = None,
    reviews_required: int = 1,
) -> MisattributionReport:
    """Count misattributed claims among the claims at risk of ``audit`` (already restricted to its scope).

    A cross pair whose source has since become one of the claim's own edges (a merge of sources) is no longer a
    cross pair and is left out; several supported cross pairs of one claim make one case (the first by source
    key). ``edges`` are the edges' outcomes (by default from the audit's judgements under ``reviews_required``)."""
    outcomes = edge_outcomes(audit, reviews_required) if edges is None else list(edges)
    claims = {c.id: c for c in audit.claims}
    outcomes = [e for e in outcomes if e.claim_id in claims]
    at_risk = claims_at_risk(audit, outcomes)
    risky = set(at_risk)
    edges_of: dict[str, list[EdgeOutcome]] = {}
    for edge in outcomes:
        edges_of.setdefault(edge.claim_id, []).append(edge)
    pairs_of: dict[str, list[CrossPair]] = {}
    for pair in cross_pairs:
        if pair.claim_id in risky and all(e.source_key != pair.source_key for e in edges_of.get(pair.claim_id, ())):
            pairs_of.setdefault(pair.claim_id, []).append(pair)
    cases: list[Misattributed] = []
    pending = total = 0
    for claim_id in at_risk:
        chosen, judged, waiting = _first_supported(pairs_of.get(claim_id, ()), reviews_required)
        total, pending = total + judged, pending + waiting
        if chosen is not None:
            claim = claims[claim_id]
            own = tuple((e.source_key, None if e.label is None else str(e.label)) for e in edges_of.get(claim_id, ()))
            cases.append(_case(claim_id, claim.answer_id, claim.text, own, chosen))
    return MisattributionReport(
        rate=Metric(len(cases), len(at_risk)),
        at_risk_with_pending_edges=sum(1 for c in at_risk if any(e.label is None for e in edges_of.get(c, ()))),
        at_risk_without_cross_pairs=sum(1 for c in at_risk if c not in pairs_of),
        cross_pairs=total,
        cross_pairs_pending=pending,
        cases=tuple(cases),
    )


def misattribution_columns(
    claim_ids: Sequence[str],
    claim_answer_ids: Callable[[int], str],
    claim_texts: Mapping[str, str],
    edge_claim: npt.NDArray[np.int64],
    edge_source_keys: Callable[[int], str],
    edge_code: npt.NDArray[np.int64],
    cross_pairs: Iterable[CrossPair],
    *,
    reviews_required: int = 1,
) -> MisattributionReport:
    """:func:`misattribution` from columns: the claims in scope in order (``claim_ids``; ``claim_answer_ids`` gives
    a claim index's answer id), their edges in order as claim indices with final codes (``citeaudit.core.scoring``'s),
    ``edge_source_keys`` an edge index's source key, and ``claim_texts`` the text of every claim with a cross pair.
    Claims at risk are counted per array; only the claims with cross pairs are visited one by one."""
    n_claims = len(claim_ids)
    edges = np.bincount(edge_claim, minlength=n_claims)
    supported = np.bincount(edge_claim[edge_code == SUPPORTED_CODE], minlength=n_claims)
    pending_edges = np.bincount(edge_claim[edge_code >= len(LABELS)], minlength=n_claims)
    at_risk = (edges > 0) & (supported == 0)
    index_of = {claim_id: i for i, claim_id in enumerate(claim_ids)}
    order = np.argsort(edge_claim, kind="stable")
    starts = np.concatenate([[0], np.cumsum(edges)])

    def own(claim: int) -> list[int]:
        return [int(e) for e in order[starts[claim] : starts[claim + 1]]]

    pairs_of: dict[int, list[CrossPair]] = {}
    for pair in cross_pairs:
        claim = index_of.get(pair.claim_id)
        if claim is None or not at_risk[claim]:
            continue
        if all(edge_source_keys(e) != pair.source_key for e in own(claim)):
            pairs_of.setdefault(claim, []).append(pair)
    cases: list[Misattributed] = []
    pending = total = 0
    for claim in sorted(pairs_of):
        chosen, judged, waiting = _first_supported(pairs_of[claim], reviews_required)
        total, pending = total + judged, pending + waiting
        if chosen is not None:
            claim_id = claim_ids[claim]
            labelled = tuple(
                (edge_source_keys(e), None if int(edge_code[e]) >= len(LABELS) else str(LABELS[edge_code[e]]))
                for e in own(claim)
            )
            cases.append(_case(claim_id, claim_answer_ids(claim), claim_texts[claim_id], labelled, chosen))
    n_at_risk = int(np.count_nonzero(at_risk))
    return MisattributionReport(
        rate=Metric(len(cases), n_at_risk),
        at_risk_with_pending_edges=int(np.count_nonzero(at_risk & (pending_edges > 0))),
        at_risk_without_cross_pairs=n_at_risk - len(pairs_of),
        cross_pairs=total,
        cross_pairs_pending=pending,
        cases=tuple(cases),
    )
