"""Strict scoring (``strict-v1``, docs/stats-reference.md): pure functions from edges, claims and answers to results.

Two paths give the same numbers (property-tested): :func:`score_reference` walks the model objects one by
one and is the readable definition; :func:`score_columns` is the vectorized path for millions of edges
(sorting and ``bincount`` over integer columns). :func:`score` picks the fast path for an :class:`Audit`.

Notes: every metric is undefined exactly when its denominator is 0, and its value is then ``None``.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from citeaudit.core.errors import ScopeError
from citeaudit.core.identity import OfficialMatcher
from citeaudit.core.intervals import metric_intervals
from citeaudit.core.model import Audit, Judgement, Label, ReviewState, Severity, review_outcome
from citeaudit.core.protocol import convention_for, fingerprint
from citeaudit.core.results import (
    EdgeCounts,
    MacroMetric,
    Metric,
    RequiredCounts,
    ScopeScore,
    ScoreResult,
    SeverityScore,
    WeightedMetric,
)
from citeaudit.core.stats import Interval, RepeatVariance, repeat_variance

__all__ = [
    "DIMENSIONS",
    "EDGE_KEY_LIMIT",
    "PACK_BLOCK",
    "IntervalSettings",
    "ScoringColumns",
    "collapse_locations",
    "collapse_packed",
    "columns_from_audit",
    "edge_code",
    "pack_edge_keys",
    "score",
    "score_columns",
    "score_reference",
]

DIMENSIONS = ("platform", "run", "question", "model", "locale", "sample", "collection", "collection_date")
"""Answer attributes a score can be grouped by (an audit file has no collections: ``None`` there)."""

LABELS: tuple[Label, ...] = tuple(Label)
"""Label order used for codes 0..4 in columns."""
LABEL_CODE = {label: code for code, label in enumerate(LABELS)}
PENDING_CODE = len(LABELS)
"""Column code of an edge without a final label and without a dispute."""
DISPUTED_CODE = len(LABELS) + 1
"""Column code of a disputed edge (no final label; counted as pending and as disputed)."""
N_CODES = len(LABELS) + 2
SUPPORTED_CODE = LABEL_CODE[Label.SUPPORTED]
SEVERITIES: tuple[Severity, ...] = tuple(Severity)
NO_SEVERITY = len(SEVERITIES)

Int64Array = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class ScoringColumns:
    """An audit as integer columns: what the vectorized path needs and nothing else.

    Edges must be unique (see :func:`collapse_locations`); indices are positions in the other arrays.
    """

    answer_dims: Mapping[str, Sequence[str | None]]
    """Per answer, its value for each of :data:`DIMENSIONS`."""
    answer_question: Int64Array
    """Per answer, index of its question."""
    question_facts: Sequence[Int64Array]
    """Per question, indices of its required facts."""
    fact_severity: Int64Array
    """Per required fact, severity code (index into ``Severity``, or ``NO_SEVERITY``)."""
    claim_answer: Int64Array
    """Per claim, index of its answer."""
    claim_fact: Int64Array
    """Per claim, index of its required fact, or -1."""
    claim_severity: Int64Array
    """Per claim, effective severity code (its own, else its fact's, else ``NO_SEVERITY``)."""
    edge_claim: Int64Array
    """Per unique edge, index of its claim."""
    edge_source: Int64Array
    """Per unique edge, index of its source."""
    edge_code: Int64Array
    """Per unique edge, label code (0..4 final labels, 5 pending, 6 disputed)."""
    edge_locations: Int64Array
    """Per unique edge, number of citation locations (≥ 1)."""
    source_official: BoolArray
    """Per source, whether it is official under the protocol."""
    citation_answer: Int64Array
    """Per cited citation, index of its answer."""
    citation_source: Int64Array
    """Per cited citation, index of its source."""
    fact_weight: FloatArray | None = None
    """Per required fact, its weight, when the protocol declares weights."""


def _code_of(edge_judgement_state: ReviewState, label: Label | None) -> int:
    if label is not None:
        return LABEL_CODE[label]
    return DISPUTED_CODE if edge_judgement_state is ReviewState.DISPUTED else PENDING_CODE


def edge_code(judgements: Iterable[Judgement], reviews_required: int = 1) -> tuple[ReviewState, int]:
    """The review state of an edge and its final code under a review policy: the code of its final label, else
    :data:`DISPUTED_CODE` or :data:`PENDING_CODE`. The one encoding of edge states — the store keeps this code
    and the scoring counts it."""
    state, label = review_outcome(judgements, reviews_required)
    return state, _code_of(state, label)


EDGE_KEY_LIMIT = 2**59
"""Claims × sources must stay below this for an edge key, with its 3-bit label code, to fit in 64 bits."""
PACK_BLOCK = 1 << 16
"""Locations packed into edge keys at a time (:func:`collapse_locations`, the columnar entry points)."""


def collapse_locations(
    loc_claim: Int64Array, loc_source: Int64Array, loc_code: Int64Array, n_sources: int
) -> tuple[Int64Array, Int64Array, Int64Array, Int64Array]:
    """Fold citation locations into unique (claim, source) edges.

    Returns ``(edge_claim, edge_source, edge_code, edge_locations)``. The label code must be a property
    of the edge (all locations of one edge carry the same code); a ``ValueError`` says so otherwise.
    """
    if n_sources <= 0 or len(loc_claim) == 0:
        return _no_edges()
    max_claim = int(loc_claim.max()) + 1
    if max_claim * n_sources >= EDGE_KEY_LIMIT:
        raise ValueError("too many claims × sources to encode an edge key in 64 bits")
    # One sort of a packed key (claim, source, code) is the whole deduplication; the keys are packed a block at a
    # time, so the steps work on rows still in the processor's cache and no whole-length temporary is made.
    packed = np.empty(len(loc_claim), dtype=np.int64)
    for start in range(0, len(packed), PACK_BLOCK):
        end = start + PACK_BLOCK
        pack_edge_keys(packed[start:end], loc_claim[start:end], loc_source[start:end], loc_code[start:end], n_sources)
    return collapse_packed(packed, n_sources)


def pack_edge_keys(
    out: Int64Array, claim: Int64Array, source: Int64Array, code: Int64Array | int, n_sources: int
) -> None:
    """Write into ``out`` the locations' packed keys, ``(claim * n_sources + source) * 8 + code``, as
    :func:`collapse_packed` reads them (references already checked in range, codes below 8)."""
    np.multiply(claim, n_sources, out=out)
    out += source
    out <<= 3
    out += code


def collapse_packed(packed: Int64Array, n_sources: int) -> tuple[Int64Array, Int64Array, Int64Array, Int64Array]:
    """:func:`collapse_locations` from the locations' packed keys, ``(claim * n_sources + source) * 8 + code``
    (references in range, codes below 8, claims × sources below :data:`EDGE_KEY_LIMIT`): for a reader that packs
    the keys as it goes and never builds the three columns. ``packed`` is consumed: sorted in place, its buffer
    then holds the edges' location counts."""
    if len(packed) == 0:
        return _no_edges()
    packed.sort()
    change = np.empty(len(packed), dtype=np.bool_)
    change[0] = True
    np.not_equal(packed[1:], packed[:-1], out=change[1:])
    starts = np.flatnonzero(change).astype(np.int64, copy=False)
    del change
    edge_key = packed[starts]
    # Each result goes into a buffer already touched where one is free: fresh pages cost the kernel more than
    # the arithmetic on them.
    counts = packed[: len(starts)]
    np.subtract(starts[1:], starts[:-1], out=counts[:-1])
    counts[-1] = len(packed) - starts[-1]
    codes = np.bitwise_and(edge_key, 7, out=starts)
    edge_key >>= 3
    if len(edge_key) > 1 and bool(np.any(edge_key[1:] == edge_key[:-1])):
        raise ValueError("locations of one edge carry different label codes")
    edge_claim = edge_key // n_sources
    edge_source = np.remainder(edge_key, n_sources, out=edge_key)
    return edge_claim, edge_source, codes, counts


def _no_edges() -> tuple[Int64Array, Int64Array, Int64Array, Int64Array]:
    empty = np.zeros(0, dtype=np.int64)
    return empty, empty, empty, empty


REPEAT_CELL = ("question", "platform", "collection")
"""The dimensions of a cell whose answers are repeats of one ask (repeat variance)."""


def _factorize(
    answer_dims: Mapping[str, Sequence[str | None]], by: Sequence[str], n_answers: int
) -> tuple[Int64Array, list[tuple[str | None, ...]]]:
    if not by:
        return np.zeros(n_answers, dtype=np.int64), [()]
    seen: dict[tuple[str | None, ...], int] = {}
    codes = np.empty(n_answers, dtype=np.int64)
    columns = [answer_dims[d] for d in by]
    for i, values in enumerate(zip(*columns, strict=True)):
        codes[i] = seen.setdefault(values, len(seen))
    keys = list(seen)
    # Sort groups by their values (None first) so output order never depends on row order.
    order = sorted(range(len(keys)), key=lambda k: tuple((v is not None, v or "") for v in keys[k]))
    remap = np.empty(len(keys), dtype=np.int64)
    remap[np.array(order, dtype=np.int64)] = np.arange(len(keys), dtype=np.int64)
    return remap[codes], [keys[k] for k in order]


@dataclass(frozen=True, slots=True)
class IntervalSettings:
    """How confidence intervals are computed."""

    level: float = 0.95
    """Confidence level."""
    resamples: int = 9999
    """Bootstrap resamples."""
    seed: int = 0
    """Random seed, so a report can be reproduced exactly."""


def _distinct(values: Int64Array) -> Int64Array:
    """Sorted distinct values (a sort is several times faster than numpy's hash-based ``unique`` here)."""
    ordered = np.sort(values)
    if len(ordered) < 2:
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]


def _check_by(by: Sequence[str]) -> tuple[str, ...]:
    unknown = [d for d in by if d not in DIMENSIONS]
    if unknown:
        raise ScopeError(f"cannot group by {unknown[0]!r}; choose from {', '.join(DIMENSIONS)}")
    return tuple(dict.fromkeys(by))


def _bincount(codes: Int64Array, length: int, weights: npt.NDArray[np.float64] | None = None) -> Int64Array:
    return np.bincount(codes, weights=weights, minlength=length)[:length].astype(np.int64)


def score_columns(
    columns: ScoringColumns,
    *,
    scoring: str,
    fingerprint: str,
    by: Sequence[str] = (),
    macro: bool = False,
    ci: IntervalSettings | None = None,
) -> ScoreResult:
    """Score columns overall and per group (vectorized; same numbers as :func:`score_reference`).

    With ``ci``, every headline metric gets a cluster-bootstrap interval over questions."""
    by = _check_by(by)
    convention_for(scoring)
    n_answers = len(columns.answer_question)
    group_of_answer, keys = _factorize(columns.answer_dims, by, n_answers)
    n_groups = len(keys)
    n_sev = NO_SEVERITY + 1
    n_facts = len(columns.fact_severity)

    # Edges: counts per (group, label code) and per (group, severity).
    edge_answer = columns.claim_answer[columns.edge_claim]
    edge_group = group_of_answer[edge_answer]
    by_code = _bincount(edge_group * N_CODES + columns.edge_code, n_groups * N_CODES).reshape(n_groups, N_CODES)
    locations = np.bincount(edge_group, weights=columns.edge_locations, minlength=n_groups)
    supported = columns.edge_code == SUPPORTED_CODE
    edge_sev = edge_group * n_sev + columns.claim_severity[columns.edge_claim]
    sev_edges = _bincount(edge_sev, n_groups * n_sev).reshape(n_groups, n_sev)
    sev_supported = _bincount(edge_sev[supported], n_groups * n_sev).reshape(n_groups, n_sev)

    # Coverage: (answer, fact) pairs, identified by answer * n_facts + fact.
    facts_per_question = np.array([len(f) for f in columns.question_facts], dtype=np.int64)
    question_sev = np.zeros((len(columns.question_facts), n_sev), dtype=np.int64)
    for q, facts in enumerate(columns.question_facts):
        np.add.at(question_sev[q], columns.fact_severity[facts], 1)
    answer_pairs = facts_per_question[columns.answer_question] if n_answers else np.zeros(0, np.int64)
    pairs = _bincount(group_of_answer, n_groups, answer_pairs.astype(np.float64))
    pair_sev = np.zeros((n_groups, n_sev), dtype=np.int64)
    if n_answers:
        np.add.at(pair_sev, group_of_answer, question_sev[columns.answer_question])
    mapped = columns.claim_fact >= 0
    claim_supported = np.zeros(len(columns.claim_answer), dtype=np.bool_)
    claim_supported[columns.edge_claim[supported]] = True
    claim_has_edge = np.zeros(len(columns.claim_answer), dtype=np.bool_)
    claim_has_edge[columns.edge_claim] = True
    pair_key = columns.claim_answer * max(n_facts, 1) + columns.claim_fact
    covered_keys = _distinct(pair_key[mapped & claim_supported])
    # pairs not covered yet whose mapped claims have an edge without a final label: they may still be covered
    claim_pending = np.zeros(len(columns.claim_answer), dtype=np.bool_)
    claim_pending[columns.edge_claim[columns.edge_code >= PENDING_CODE]] = True
    pending_keys = np.setdiff1d(_distinct(pair_key[mapped & claim_pending]), covered_keys, assume_unique=True)
    with_edge_keys = _distinct(pair_key[mapped & claim_has_edge])
    with_claim_keys = _distinct(pair_key[mapped])
    divisor = max(n_facts, 1)

    def per_group(keys_: Int64Array) -> Int64Array:
        return _bincount(group_of_answer[keys_ // divisor], n_groups)

    covered = per_group(covered_keys)
    pending_pairs = per_group(pending_keys)
    with_edge = per_group(with_edge_keys)
    with_claim = per_group(with_claim_keys)
    covered_fact = covered_keys % divisor
    covered_sev = _bincount(
        group_of_answer[covered_keys // divisor] * n_sev + columns.fact_severity[covered_fact],
        n_groups * n_sev,
    ).reshape(n_groups, n_sev)

    weighted_pairs = weighted_covered = None
    if columns.fact_weight is not None:
        question_weight = np.array([columns.fact_weight[f].sum() for f in columns.question_facts], dtype=np.float64)
        weighted_pairs = np.bincount(
            group_of_answer, weights=question_weight[columns.answer_question], minlength=n_groups
        )
        weighted_covered = np.bincount(
            group_of_answer[covered_keys // divisor],
            weights=columns.fact_weight[covered_fact],
            minlength=n_groups,
        )

    # Official-domain rate: an answer cites a source through a cited citation or through an edge.
    answer_official = np.zeros(n_answers, dtype=np.bool_)
    answer_official[columns.citation_answer[columns.source_official[columns.citation_source]]] = True
    answer_official[edge_answer[columns.source_official[columns.edge_source]]] = True
    answers_per_group = _bincount(group_of_answer, n_groups)
    official = _bincount(group_of_answer[answer_official], n_groups)

    interval_parts = None
    # the intervals order clusters by question id (as every engine does); index order when ids are not given
    question_ids = [f"{q:012d}" for q in range(len(columns.question_facts))]
    named = columns.answer_dims.get("question")
    if ci is not None and named is not None:
        for answer, question in enumerate(columns.answer_question.tolist()):
            question_ids[question] = str(named[answer])
        interval_parts = (
            _bincount(edge_answer[supported], n_answers),
            _bincount(edge_answer, n_answers),
            _bincount(covered_keys // divisor, n_answers),
            answer_pairs,
            answer_official.astype(np.int64),
            np.ones(n_answers, dtype=np.int64),
        )

    macro_parts = None
    if macro:
        answer_edges = _bincount(edge_answer, n_answers)
        answer_supported = _bincount(edge_answer[supported], n_answers)
        answer_covered = _bincount(covered_keys // divisor, n_answers)
        macro_parts = (answer_edges, answer_supported, answer_pairs, answer_covered)

    # Groups partition the answers, so every count of the whole scope is the sum of the group rows:
    # row ``n_groups`` is that total, computed once instead of scoring the scope a second time.
    def total(rows: npt.NDArray[Any]) -> npt.NDArray[Any]:
        return np.concatenate([rows, rows.sum(axis=0, keepdims=True)])

    by_code, locations, sev_edges, sev_supported = (
        total(by_code),
        total(locations),
        total(sev_edges),
        total(sev_supported),
    )
    pairs, pair_sev, covered, with_edge, with_claim, pending_pairs = (
        total(pairs),
        total(pair_sev),
        total(covered),
        total(with_edge),
        total(with_claim),
        total(pending_pairs),
    )
    covered_sev, answers_per_group, official = total(covered_sev), total(answers_per_group), total(official)
    if weighted_pairs is not None and weighted_covered is not None:
        weighted_pairs, weighted_covered = total(weighted_pairs), total(weighted_covered)

    def scope(g: int) -> ScopeScore:
        is_total = g == n_groups
        codes = by_code[g]
        severity = {}
        for s in range(n_sev):
            if sev_edges[g, s] or pair_sev[g, s]:
                name = "none" if s == NO_SEVERITY else str(SEVERITIES[s])
                severity[name] = SeverityScore(
                    precision=Metric(int(sev_supported[g, s]), int(sev_edges[g, s])),
                    coverage=Metric(int(covered_sev[g, s]), int(pair_sev[g, s])),
                )
        macro_p = macro_c = None
        if macro_parts is not None:
            in_group = np.ones(n_answers, dtype=np.bool_) if is_total else group_of_answer == g
            macro_p = _macro(macro_parts[1][in_group], macro_parts[0][in_group])
            macro_c = _macro(macro_parts[3][in_group], macro_parts[2][in_group])
        unique = int(codes.sum())
        intervals: list[Interval | None] = [None, None, None]
        if ci is not None and interval_parts is not None:
            in_scope = np.ones(n_answers, dtype=np.bool_) if is_total else group_of_answer == g
            questions = columns.answer_question[in_scope]
            n_questions = len(columns.question_facts)
            per_question = np.stack(
                [np.bincount(questions, weights=part[in_scope], minlength=n_questions) for part in interval_parts],
                axis=1,
            )
            intervals = list(
                metric_intervals(per_question, question_ids, level=ci.level, resamples=ci.resamples, seed=ci.seed)
            )
        return ScopeScore(
            by=() if is_total else tuple(zip(by, keys[g], strict=True)),
            answers=int(answers_per_group[g]),
            provisional=bool(codes[PENDING_CODE] + codes[DISPUTED_CODE] > 0),
            precision=Metric(int(codes[SUPPORTED_CODE]), unique, intervals[0]),
            coverage=Metric(int(covered[g]), int(pairs[g]), intervals[1]),
            official_rate=Metric(int(official[g]), int(answers_per_group[g]), intervals[2]),
            edges=EdgeCounts(
                unique=unique,
                locations=round(float(locations[g])),
                pending=int(codes[PENDING_CODE] + codes[DISPUTED_CODE]),
                disputed=int(codes[DISPUTED_CODE]),
                by_label={label: int(codes[LABEL_CODE[label]]) for label in LABELS},
            ),
            required=RequiredCounts(
                pairs=int(pairs[g]),
                covered=int(covered[g]),
                without_claim=int(pairs[g] - with_claim[g]),
                without_edge=int(with_claim[g] - with_edge[g]),
                pending=int(pending_pairs[g]),
            ),
            severity=severity,
            weighted_coverage=None
            if weighted_pairs is None or weighted_covered is None
            else WeightedMetric(float(weighted_covered[g]), float(weighted_pairs[g])),
            macro_precision=macro_p,
            macro_coverage=macro_c,
        )

    groups = tuple(scope(g) for g in range(n_groups)) if by else ()
    # repeats are asks of one question on one platform within one collection: two monthly collections are not
    # repeats of each other (answers outside any collection, and an audit file's, form one)
    unset: list[str | None] = [None] * n_answers
    cell, _ = _factorize({d: columns.answer_dims.get(d, unset) for d in REPEAT_CELL}, REPEAT_CELL, n_answers)
    repeats = {}
    if n_answers and int(np.bincount(cell).max()) >= 2:
        repeats = {
            "precision": repeat_variance(
                _bincount(edge_answer[supported], n_answers), _bincount(edge_answer, n_answers), cell
            ),
            "coverage": repeat_variance(_bincount(covered_keys // divisor, n_answers), answer_pairs, cell),
        }
    return ScoreResult(
        scoring=scoring,
        fingerprint=fingerprint,
        overall=scope(n_groups),
        group_by=by,
        groups=groups,
        repeats={name: value for name, value in repeats.items() if value.cells_with_repeats},
    )


def _macro(numerators: Int64Array, denominators: Int64Array) -> MacroMetric:
    defined = denominators > 0
    total = float(np.sum(numerators[defined] / denominators[defined])) if defined.any() else 0.0
    return MacroMetric(total=total, answers=int(defined.sum()), excluded=int((~defined).sum()))


def _answer_dims(audit: Audit) -> dict[str, list[str | None]]:
    runs = {run.id: run for run in audit.runs}
    questions = {q.id: q for q in audit.protocol.questions}
    dims: dict[str, list[str | None]] = {d: [] for d in DIMENSIONS}
    for answer in audit.answers:
        run = runs.get(answer.run_id)
        dims["platform"].append(answer.platform or (run.platform if run else None))
        dims["run"].append(answer.run_id)
        dims["question"].append(answer.question_id)
        dims["model"].append(answer.model or (run.model if run else None))
        dims["locale"].append(answer.locale or questions[answer.question_id].locale)
        dims["sample"].append(str(run.sample) if run and run.sample is not None else None)
    dims["collection"] = dims["collection_date"] = [None] * len(audit.answers)
    return dims


def _severity_code(severity: Severity | None) -> int:
    return NO_SEVERITY if severity is None else SEVERITIES.index(severity)


def columns_from_audit(audit: Audit) -> ScoringColumns:
    """Integer columns for an audit whose references are valid (as the boundary guarantees)."""
    protocol = audit.protocol
    question_index = {q.id: i for i, q in enumerate(protocol.questions)}
    facts = [f for q in protocol.questions for f in q.required_facts]
    fact_index = {f.id: i for i, f in enumerate(facts)}
    question_facts = [
        np.array([fact_index[f.id] for f in q.required_facts], dtype=np.int64) for q in protocol.questions
    ]
    answer_index = {a.id: i for i, a in enumerate(audit.answers)}
    claim_index = {c.id: i for i, c in enumerate(audit.claims)}
    source_index = {s.key: i for i, s in enumerate(audit.sources)}
    matcher = OfficialMatcher(protocol.official_domains)
    weights = dict(protocol.weights) if protocol.weights is not None else None

    def claim_sev(claim_fact: int, own: Severity | None) -> int:
        if own is not None:
            return _severity_code(own)
        return _severity_code(facts[claim_fact].severity) if claim_fact >= 0 else NO_SEVERITY

    claim_fact = np.array(
        [fact_index[c.required_fact_id] if c.required_fact_id else -1 for c in audit.claims], dtype=np.int64
    )
    cited = [
        (answer_index[a.id], source_index[c.source_key])
        for a in audit.answers
        for c in a.citations
        if c.kind == "cited" and c.source_key is not None
    ]
    return ScoringColumns(
        answer_dims=_answer_dims(audit),
        answer_question=np.array([question_index[a.question_id] for a in audit.answers], dtype=np.int64),
        question_facts=question_facts,
        fact_severity=np.array([_severity_code(f.severity) for f in facts], dtype=np.int64),
        claim_answer=np.array([answer_index[c.answer_id] for c in audit.claims], dtype=np.int64),
        claim_fact=claim_fact,
        claim_severity=np.array(
            [claim_sev(int(claim_fact[i]), c.severity) for i, c in enumerate(audit.claims)], dtype=np.int64
        ),
        edge_claim=np.array([claim_index[e.claim_id] for e in audit.edges], dtype=np.int64),
        edge_source=np.array([source_index[e.source_key] for e in audit.edges], dtype=np.int64),
        edge_code=np.array([edge_code(e.judgements)[1] for e in audit.edges], dtype=np.int64),
        edge_locations=np.array([len(e.locations) for e in audit.edges], dtype=np.int64),
        source_official=np.array([matcher(s.resolved_url or s.url) for s in audit.sources], dtype=np.bool_).reshape(-1),
        citation_answer=np.array([a for a, _ in cited], dtype=np.int64),
        citation_source=np.array([s for _, s in cited], dtype=np.int64),
        fact_weight=None
        if weights is None
        else np.array([weights[f.severity] if f.severity else 0.0 for f in facts], dtype=np.float64),
    )


def score(
    audit: Audit, *, by: Sequence[str] = (), macro: bool = False, ci: IntervalSettings | None = None
) -> ScoreResult:
    """Score an audit with its protocol's convention (vectorized path)."""
    return score_columns(
        columns_from_audit(audit),
        scoring=audit.protocol.scoring,
        fingerprint=fingerprint(audit.protocol),
        by=by,
        macro=macro,
        ci=ci,
    )


def score_reference(audit: Audit, *, by: Sequence[str] = (), macro: bool = False) -> ScoreResult:
    """Score an audit by walking its objects one at a time: the readable definition of ``strict-v1``."""
    by = _check_by(by)
    convention_for(audit.protocol.scoring)
    dims = _answer_dims(audit)
    groups: dict[tuple[str | None, ...], list[int]] = defaultdict(list)
    for i in range(len(audit.answers)):
        groups[tuple(dims[d][i] for d in by)].append(i)
    ordered = sorted(groups, key=lambda k: tuple((v is not None, v or "") for v in k))
    result_groups = tuple(_reference_scope(audit, groups[k], tuple(zip(by, k, strict=True)), macro) for k in ordered)
    overall = _reference_scope(audit, list(range(len(audit.answers))), (), macro)
    return ScoreResult(
        scoring=audit.protocol.scoring,
        fingerprint=fingerprint(audit.protocol),
        overall=overall,
        group_by=by,
        groups=result_groups if by else (),
        repeats=_reference_repeats(audit, dims),
    )


def _reference_repeats(audit: Audit, dims: Mapping[str, Sequence[str | None]]) -> dict[str, RepeatVariance]:
    """Per-answer precision and coverage, grouped into (question, platform, collection) cells, variance by hand."""
    claims = {c.id: c for c in audit.claims}
    edges: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    supported_claims: set[str] = set()
    for edge in audit.edges:
        answer_id = claims[edge.claim_id].answer_id
        label = review_outcome(edge.judgements)[1]
        edges[answer_id][1] += 1
        if label is Label.SUPPORTED:
            edges[answer_id][0] += 1
            supported_claims.add(edge.claim_id)
    facts = {q.id: [f.id for f in q.required_facts] for q in audit.protocol.questions}
    cells: dict[tuple[str | None, ...], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for i, answer in enumerate(audit.answers):
        cell = cells[tuple(dims[d][i] for d in REPEAT_CELL)]
        supported, total = edges[answer.id]
        if total:
            cell["precision"].append(supported / total)
        wanted = facts[answer.question_id]
        if wanted:
            covered = {
                c.required_fact_id for c in audit.claims if c.answer_id == answer.id and c.id in supported_claims
            }
            cell["coverage"].append(len(covered & set(wanted)) / len(wanted))
    sizes: dict[tuple[str | None, ...], int] = defaultdict(int)
    for i in range(len(audit.answers)):
        sizes[tuple(dims[d][i] for d in REPEAT_CELL)] += 1
    if not sizes or max(sizes.values()) < 2:
        return {}
    found = {}
    for name in ("precision", "coverage"):
        values = [cell[name] for cell in cells.values() if cell[name]]
        repeated = [v for v in values if len(v) >= 2]
        within = sum(statistics.variance(v) for v in repeated) / len(repeated) if repeated else None
        means = [sum(v) / len(v) for v in values]
        between = statistics.variance(means) if len(means) >= 2 else None
        if repeated:
            found[name] = RepeatVariance(len(repeated), within, between)
    return found


def _reference_scope(
    audit: Audit, answer_positions: list[int], by: tuple[tuple[str, str | None], ...], macro: bool
) -> ScopeScore:
    protocol = audit.protocol
    answers = [audit.answers[i] for i in answer_positions]
    answer_ids = {a.id for a in answers}
    facts_of = {q.id: q.required_facts for q in protocol.questions}
    fact_by_id = {f.id: f for q in protocol.questions for f in q.required_facts}
    weights = dict(protocol.weights) if protocol.weights is not None else None
    claims = {c.id: c for c in audit.claims if c.answer_id in answer_ids}
    edges = [e for e in audit.edges if e.claim_id in claims]
    sources = {s.key: s for s in audit.sources}
    matcher = OfficialMatcher(protocol.official_domains)

    by_label = dict.fromkeys(LABELS, 0)
    pending = disputed = 0
    claims_supported: set[str] = set()
    claims_with_edge: set[str] = set()
    claims_pending: set[str] = set()
    sev_edges: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    per_answer_edges: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for edge in edges:
        state, label = review_outcome(edge.judgements)
        claim = claims[edge.claim_id]
        claims_with_edge.add(claim.id)
        claim_severity = claim.severity or (
            fact_by_id[claim.required_fact_id].severity if claim.required_fact_id else None
        )
        sev_name = str(claim_severity) if claim_severity else "none"
        sev_edges[sev_name][1] += 1
        per_answer_edges[claim.answer_id][1] += 1
        if label is None:
            pending += 1
            disputed += state is ReviewState.DISPUTED
            claims_pending.add(claim.id)
            continue
        by_label[label] += 1
        if label is Label.SUPPORTED:
            claims_supported.add(claim.id)
            sev_edges[sev_name][0] += 1
            per_answer_edges[claim.answer_id][0] += 1

    pairs = covered = without_claim = without_edge = pending_pairs = 0
    weighted_pairs = weighted_covered = 0.0
    sev_pairs: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    per_answer_pairs: dict[str, list[int]] = {}
    for answer in answers:
        mapped = [c for c in claims.values() if c.answer_id == answer.id]
        answer_covered = 0
        for fact in facts_of[answer.question_id]:
            pairs += 1
            fact_claims = [c for c in mapped if c.required_fact_id == fact.id]
            is_covered = any(c.id in claims_supported for c in fact_claims)
            sev_name = str(fact.severity) if fact.severity else "none"
            sev_pairs[sev_name][1] += 1
            weight = weights.get(fact.severity, 0.0) if weights is not None and fact.severity else 0.0
            weighted_pairs += weight
            if not fact_claims:
                without_claim += 1
            elif not any(c.id in claims_with_edge for c in fact_claims):
                without_edge += 1
            if not is_covered and any(c.id in claims_pending for c in fact_claims):
                pending_pairs += 1
            if is_covered:
                covered += 1
                answer_covered += 1
                sev_pairs[sev_name][0] += 1
                weighted_covered += weight
        per_answer_pairs[answer.id] = [answer_covered, len(facts_of[answer.question_id])]

    official = 0
    for answer in answers:
        keys = {c.source_key for c in answer.citations if c.kind == "cited" and c.source_key is not None}
        keys |= {e.source_key for e in edges if claims[e.claim_id].answer_id == answer.id}
        if any(matcher(sources[k].resolved_url or sources[k].url) for k in keys):
            official += 1

    def metric(counts: list[int] | None) -> Metric:
        return Metric(counts[0], counts[1]) if counts else Metric(0, 0)

    severity = {
        name: SeverityScore(precision=metric(sev_edges.get(name)), coverage=metric(sev_pairs.get(name)))
        for name in [str(s) for s in SEVERITIES] + ["none"]
        if name in sev_edges or name in sev_pairs
    }
    macro_p = macro_c = None
    if macro:
        macro_p = _reference_macro([per_answer_edges.get(a.id, [0, 0]) for a in answers])
        macro_c = _reference_macro([per_answer_pairs[a.id] for a in answers])
    unique = len(edges)
    return ScopeScore(
        by=by,
        answers=len(answers),
        provisional=pending > 0,
        precision=Metric(by_label[Label.SUPPORTED], unique),
        coverage=Metric(covered, pairs),
        official_rate=Metric(official, len(answers)),
        edges=EdgeCounts(
            unique=unique,
            locations=sum(len(e.locations) for e in edges),
            pending=pending,
            disputed=disputed,
            by_label=by_label,
        ),
        required=RequiredCounts(pairs, covered, without_claim, without_edge, pending_pairs),
        severity=severity,
        weighted_coverage=None if weights is None else WeightedMetric(weighted_covered, weighted_pairs),
        macro_precision=macro_p,
        macro_coverage=macro_c,
    )


def _reference_macro(parts: list[list[int]]) -> MacroMetric:
    defined = [n / d for n, d in parts if d > 0]
    return MacroMetric(total=sum(defined), answers=len(defined), excluded=len(parts) - len(defined))
