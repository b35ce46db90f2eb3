"""The brand figures computed from columns (a database's path): :class:`BrandColumns` holds what a reader reads of a
scope without a model object per row, :class:`SourceOwners` places its sources, and
:func:`brand_figures_columns` gives the figures :func:`citeaudit.core.brand.figures.brand_figures` gives for the
same audit."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from citeaudit.core.brand.figures import Owners, name_pattern
from citeaudit.core.brand.results import (
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
)
from citeaudit.core.drift import PageSnapshot, VersionDrift, drift
from citeaudit.core.identity import OfficialMatcher, RowsOn
from citeaudit.core.model import Label, Protocol
from citeaudit.core.results import Metric
from citeaudit.core.scoring import LABEL_CODE, LABELS
from citeaudit.core.stats import cluster_bootstrap_ratio

__all__ = ["BrandColumns", "SourceOwners", "brand_figures_columns", "claim_text_read", "identified_texts"]


class SourceOwners:
    """Owner codes for sources decided per host where the host decides (sources far outnumber hosts), per
    ``(host, path)`` where a declared domain has a path prefix: the codes index :attr:`names`, whose last entry is
    ``unknown`` (a source without a URL)."""

    def __init__(self, protocol: Protocol) -> None:
        self._matchers = [
            OfficialMatcher(protocol.official_domains),
            *(OfficialMatcher(c.domains) for c in protocol.competitors),
        ]
        self.names = [*Owners(protocol).names, OWNER_UNKNOWN]
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
    """A proportion over units (question code, hit), as :func:`units_metric` gives it."""
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
            pattern = name_pattern(names)
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
