"""The evidence behind every number of the HTML report, and the problems a client acts on.

Each number of the report (a card, a table cell) names a *set*: the edges, (answer, required fact) pairs or
answers behind its numerator and its denominator. The sets and the rows they point at travel in the report as one
JSON blob that a small inline script renders on demand, so a report of many thousand edges still opens at once.

The sets are derived here from the audit the way the scorer counts (``score_reference``): an edge counts for
precision when its final label is ``supported``; a pair is covered when one of the answer's claims mapped to the
fact has a supported edge; an answer counts for the official rate when it cites (or has an edge to) an official
source. A cell whose set does not add up to its figure is shown without a link rather than with a wrong list.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from pydantic_core import PydanticSerializationError, to_json

from citeaudit.core.identity import OfficialMatcher
from citeaudit.core.model import Audit, Claim, Protocol, Severity, review_outcome
from citeaudit.core.results import Metric
from citeaudit.store.report_input import SHOWN, STATES, EdgeRow, ReportRows, edge_text, json_text, shown_label

__all__ = [
    "EvidenceIndex",
    "FactMatrix",
    "build_index",
    "edge_rows",
    "fact_matrix",
    "mark_official",
    "pack_rows",
    "problems",
    "unpack_rows",
]

_SUPPORTED = SHOWN.index("supported")
_SEVERITY_RANK = {Severity.CRITICAL: 0, Severity.HIGH: 1, Severity.MEDIUM: 2, Severity.LOW: 3}
_BEST = ("partial", "unknown", "pending", "disputed", "irrelevant", "conflicting")
"""Labels of an unsupported claim's edges, closest to support first (the one a fact matrix cell names)."""


@dataclass(slots=True)
class EvidenceIndex:
    """Rows (answers, claims, sources, edges, pairs) and named sets of them, as the report's JSON blob."""

    answers: list[list[Any]] = field(default_factory=list)
    claims: list[list[Any]] = field(default_factory=list)
    sources: list[list[Any]] = field(default_factory=list)
    edge_texts: list[str] = field(default_factory=list)
    """Per edge row, the passage, period and reasoning it shows as JSON values joined by commas (as
    :attr:`ReportRows.texts <citeaudit.store.report_input.ReportRows.texts>` holds them; ``"<"`` escaped only when
    the blob is written)."""
    edge_reviewers: list[str] = field(default_factory=list)
    """Per edge row, its review's reviewer after the state as a JSON string (``ReportRows.reviewers``)."""
    edge_states: npt.NDArray[np.int64] | None = None
    """Per edge row, the code of the review state it shows (a position in ``STATES``)."""
    edge_link_texts: list[str] = field(default_factory=list)
    """Per edge row, :attr:`edge_link` as a JSON string."""
    edge_claim: list[int] = field(default_factory=list)
    """Per edge row, its claim's row."""
    edge_source: list[int] = field(default_factory=list)
    """Per edge row, its source's row."""
    edge_label: list[str] = field(default_factory=list)
    """Per edge row, its final label, or its review state while it has none (``pending``, ``disputed``)."""
    edge_link: list[str] = field(default_factory=list)
    """Per edge row, the link as its answer cited the source (empty when the answer gave none)."""
    edge_answers: npt.NDArray[np.int64] | None = None
    """Per edge row, its answer's row (``None``: an index not made by :func:`build_index`, whose sets are found by
    walking each answer's edges)."""
    edge_codes: npt.NDArray[np.int64] | None = None
    """Per edge row, the code of its label (a position in ``SHOWN``), beside :attr:`edge_answers`."""
    pairs: list[list[Any]] = field(default_factory=list)
    sets: dict[str, dict[str, Any]] = field(default_factory=dict)
    answer_of: dict[str, int] = field(default_factory=dict)
    claim_of: dict[str, int] = field(default_factory=dict)
    pairs_of_answer: dict[int, list[int]] = field(default_factory=dict)
    dims: dict[str, dict[str, str | None]] = field(default_factory=dict)
    """Per answer id, its value of each dimension (platform, question, collection, ...)."""
    official_answers: dict[int, list[int]] = field(default_factory=dict)
    """Per answer row, the official sources it cites (rows)."""
    source_row: dict[str, int] = field(default_factory=dict)
    """Per source key, its row."""
    supported_edges: set[int] = field(default_factory=set)
    covered_pairs: set[int] = field(default_factory=set)
    edges_of_answer: dict[int, list[int]] = field(default_factory=dict)
    edges_of_claim: dict[int, list[int]] = field(default_factory=dict)
    """Per claim row, its edge rows in order."""
    where: dict[tuple[tuple[str, str | None], ...], list[int]] = field(default_factory=dict)
    """The answer rows found for each selection so far (the tables ask for each scope several times)."""

    def add(
        self,
        key: str,
        title: str,
        kind: str,
        numerator: Iterable[int] | npt.NDArray[np.int64],
        denominator: Iterable[int] | npt.NDArray[np.int64],
        *,
        ordered: bool = False,
    ) -> str:
        """Name a set (``kind``: ``e`` edges, ``p`` pairs, ``a`` answers) and return its key. ``ordered``: both
        sides are lists or arrays already in ascending order without repeats (kept as they are)."""
        if ordered:
            self.sets[key] = {"t": title, "k": kind, "n": numerator, "d": denominator}
            return key
        rows = sorted(set(numerator))
        # a set listing the same rows on both sides (every edge, a label's edges) is ordered once
        self.sets[key] = {
            "t": title,
            "k": kind,
            "n": rows,
            "d": rows if denominator is numerator else sorted(set(denominator)),
        }
        return key

    def answers_where(self, by: Sequence[tuple[str, str | None]]) -> list[int]:
        """Answer rows whose dimensions have the values ``by`` (the list is shared: not to be changed)."""
        key = tuple(by)
        found = self.where.get(key)
        if found is None:
            if len(key) == 1:
                self._split_by(key[0][0])
                found = self.where.setdefault(key, [])
            else:
                found = [
                    row
                    for answer_id, row in self.answer_of.items()
                    if all(self.dims[answer_id].get(name) == value for name, value in by)
                ]
                self.where[key] = found
        return found

    def _split_by(self, name: str) -> None:
        """The answer rows of every value of dimension ``name``, found in one pass (each list in row order)."""
        groups: dict[str | None, list[int]] = defaultdict(list)
        for answer_id, row in self.answer_of.items():
            groups[self.dims[answer_id].get(name)].append(row)
        for value, rows in groups.items():
            self.where.setdefault(((name, value),), rows)

    def metric_set(self, key: str, title: str, name: str, answers: Sequence[int], metric: Metric) -> str | None:
        """The set behind one metric over ``answers``: its key, or ``None`` when it does not add up to ``metric``."""
        if name == "precision":
            over = self._edges_over(answers)
            if over is not None:  # the edges of the answers at once, and the supported ones among them
                rows, codes = over
                supported = rows[codes == _SUPPORTED]
                if len(supported) != metric.numerator or len(rows) != metric.denominator:
                    return None
                return self.add(key, title, "e", supported, rows, ordered=True)  # kept as arrays: packed as they are
            den = [e for a in answers for e in self.edges_of_answer.get(a, [])]
            num = [i for i in den if i in self.supported_edges]
            kind = "e"
        elif name == "coverage":
            den = [p for a in answers for p in self.pairs_of_answer.get(a, [])]
            num = [p for p in den if p in self.covered_pairs]
            kind = "p"
        else:
            den = list(answers)
            num = [a for a in den if self.official_answers.get(a)]
            kind = "a"
        if len(num) != metric.numerator or len(den) != metric.denominator:
            return None
        return self.add(key, title, kind, num, den)

    def label_set(self, key: str, title: str, label: str, answers: Sequence[int]) -> str:
        """The edges over ``answers`` whose final label (or review state while pending) is ``label``."""
        labels = self.edge_label
        rows = [e for a in answers for e in self.edges_of_answer.get(a, []) if labels[e] == label]
        return self.add(key, title, "e", rows, rows)

    def edges_over(self, answers: Sequence[int]) -> Sequence[int] | npt.NDArray[np.int64]:
        """The edges over ``answers``, in row order (an array, from the columns)."""
        over = self._edges_over(answers)
        if over is not None:
            return over[0]
        return sorted(e for a in answers for e in self.edges_of_answer.get(a, []))

    def _edges_over(self, answers: Sequence[int]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None:
        """The rows of the edges over ``answers`` (ascending) and their label codes, found from the columns at once;
        ``None`` for an index without them."""
        if self.edge_answers is None or self.edge_codes is None:
            return None
        chosen = np.zeros(len(self.answers), dtype=np.bool_)
        chosen[list(answers)] = True
        rows = np.flatnonzero(chosen[self.edge_answers])
        return rows, self.edge_codes[rows]

    def edges_by_label(self, answers: Sequence[int]) -> dict[str, list[int]]:
        """The edges over ``answers`` per final label (or review state while pending), each in row order."""
        over = self._edges_over(answers)
        if over is not None:
            rows, codes = over
            return {name: rows[codes == code].tolist() for code, name in enumerate(SHOWN) if (codes == code).any()}
        found: dict[str, list[int]] = defaultdict(list)
        labels = self.edge_label
        for a in answers:
            for e in self.edges_of_answer.get(a, ()):
                found[labels[e]].append(e)
        return {label: sorted(rows) for label, rows in found.items()}

    def to_json(self) -> str:
        """The blob, safe inside a ``<script type="application/json">`` element."""
        return b"".join(self.json_parts("surrogatepass")).decode("utf-8", "surrogatepass")

    def packed_sets(self) -> dict[str, dict[str, Any]]:
        """:attr:`sets` as the blob carries them: each side's rows packed (:func:`pack_rows`)."""
        return {
            key: {"t": found["t"], "k": found["k"], "n": pack_rows(found["n"]), "d": pack_rows(found["d"])}
            for key, found in self.sets.items()
        }

    def json_parts(self, errors: str = "strict") -> list[bytes]:
        """The blob as :meth:`to_json` gives it, in UTF-8 and in parts to be written one after the other: the
        whole is never made, nor the text of any member. ``errors``: what encoding does with a lone surrogate,
        which no UTF-8 holds (by default it is an error; the readers refuse one in their input)."""
        # the text of json.dumps(body, ensure_ascii=False, separators=(",", ":")) for the body {"answers": ...,
        # "claims": ..., "sources": ..., "edges": ..., "pairs": ..., "official": ..., "sets": ...}, each member
        # written apart. The edges are columns (no text made per edge): "c" each one's claim row, "s" its source
        # row, "k" its shown label's code (a name of "K"), "r" its review state's code (a name of "R"), "t" three
        # values each (passage, period, reasoning) and "v" the reviewer after the state, as they were written
        # when read, "l" the link as its answer cited the source.
        official = {str(a): rows for a, rows in self.official_answers.items()}
        parts = [
            b'{"answers":',
            _json_bytes(self.answers, errors),
            b',"claims":',
            _json_bytes(self.claims, errors),
            b',"sources":',
            _json_bytes(self.sources, errors),
            b',"edges":{"K":',
            _json_bytes(SHOWN, errors),
            b',"R":',
            _json_bytes(STATES, errors),
            b',"c":',
            _json_bytes(self.edge_claim, errors),
            b',"s":',
            _json_bytes(self.edge_source, errors),
            b',"k":',
            _json_bytes(_listed(self.edge_codes), errors),
            b',"r":',
            _json_bytes(_listed(self.edge_states), errors),
            b',"t":[',
            ",".join(self.edge_texts).encode("utf-8", errors),
            b'],"v":[',
            ",".join(self.edge_reviewers).encode("utf-8", errors),
            b'],"l":[',
            ",".join(self.edge_link_texts).encode("utf-8", errors),
            b']},"pairs":',
            _json_bytes(self.pairs, errors),
            b',"official":',
            _json_bytes(official, errors),
            b',"sets":',
            _json_bytes(self.packed_sets(), errors),
            b"}",
        ]
        # no "<" at all inside the script element: "</script" would end it early, "<!--" open a comment in it
        return [part.replace(b"<", b"\\u003c") if b"<" in part else part for part in parts]


_PACKED_BY_NUMPY = 200
"""Rows from which :func:`pack_rows` packs with numpy (below, a loop costs less than numpy's calls: 200 rows took
about 17 µs either way, 2 000 rows 28 µs by numpy and 129 µs by the loop)."""


def pack_rows(rows: Sequence[int] | npt.NDArray[np.int64]) -> list[int]:
    """Ascending rows without repeats, packed as the blob carries a set's side: each row is written as its distance
    from the one before less one (the first from -1, so as itself), and a run of k ≥ 2 rows each one after the one
    before as the single number -k. ``[0, 1, …, 99 999]`` is ``[-100000]``; ``[3, 5, 6, 7, 10]`` is
    ``[3, 1, -2, 2]``. A set of every edge, or of the edges of a few answers (whose rows follow one another), takes
    a few numbers; scattered rows take one or two digits each. :func:`unpack_rows` (and the page's script) undo it."""
    if len(rows) < _PACKED_BY_NUMPY or not len(rows):
        if isinstance(rows, np.ndarray):
            rows = rows.tolist()
        packed: list[int] = []
        previous, run = -1, 0
        for row in rows:
            if row == previous + 1:
                run += 1
            else:
                if run:
                    packed.append(0 if run == 1 else -run)
                    run = 0
                packed.append(row - previous - 1)
            previous = row
        if run:
            packed.append(0 if run == 1 else -run)
        return packed
    values = np.asarray(rows, dtype=np.int64)
    gaps = np.empty_like(values)
    gaps[0] = values[0]  # from -1
    np.subtract(values[1:], values[:-1] + 1, out=gaps[1:])
    step = gaps == 0  # one after the one before: part of a run
    before, after = np.zeros_like(step), np.zeros_like(step)
    before[1:], after[:-1] = step[:-1], step[1:]
    starts = np.flatnonzero(step & ~before)
    lengths = np.flatnonzero(step & ~after) + 1 - starts
    tokens = gaps
    tokens[starts] = np.where(lengths == 1, 0, -lengths)
    keep = ~step
    keep[starts] = True
    found: list[int] = tokens[keep].tolist()
    return found


def unpack_rows(packed: Sequence[int]) -> list[int]:
    """The rows :func:`pack_rows` packed."""
    rows: list[int] = []
    previous = -1
    for token in packed:
        if token < 0:
            rows.extend(range(previous + 1, previous + 1 - token))
            previous -= token
        else:
            previous += token + 1
            rows.append(previous)
    return rows


def _json_string(text: str) -> str:
    """``text`` as a JSON string (as :func:`_json` writes it): quoted as it is when no character in it is escaped."""
    if text.isprintable() and '"' not in text and "\\" not in text:
        return f'"{text}"'
    return _json(text)


def _json(value: Any) -> str:
    """``value`` as ``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` writes it."""
    return _json_bytes(value, "surrogatepass").decode("utf-8", "surrogatepass")


def _listed(codes: npt.NDArray[np.int64] | None) -> list[int]:
    found: list[int] = [] if codes is None else codes.tolist()
    return found


def _json_bytes(value: Any, errors: str) -> bytes:
    """:func:`_json` of ``value`` in UTF-8 (``errors``: for a lone surrogate, which has none)."""
    try:
        # the same text, written in Rust: the blob holds only strings, integers, booleans and nulls, escaped alike
        return to_json(value)
    except PydanticSerializationError:  # a lone surrogate (no UTF-8), which json writes as it is
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", errors)


def _fact_severity(claim: Claim, facts: Mapping[str, Any]) -> Severity | None:
    if claim.severity is not None:
        return claim.severity
    fact = facts.get(claim.required_fact_id or "")
    return None if fact is None else fact.severity


def edge_rows(audit: Audit) -> list[EdgeRow]:
    """Each edge of the audit as the report shows it: its outcome under a single review and its latest human
    judgement (the latest of any origin when no person judged it)."""
    return [(*row[:6], row[6] + row[7]) for row in _edge_parts(audit)]


def _edge_parts(audit: Audit) -> list[tuple[str, str, str, str, str, str, str, str]]:
    """:func:`edge_rows` with the review in its two parts: the state, and the reviewer after it."""
    rows: list[tuple[str, str, str, str, str, str, str, str]] = []
    for edge in audit.edges:
        state, label = review_outcome(edge.judgements)
        latest = next((j for j in reversed(edge.judgements) if j.origin == "human"), None)
        latest = latest or (edge.judgements[-1] if edge.judgements else None)
        rows.append(
            (
                edge.claim_id,
                edge.source_key,
                shown_label(state, label),
                (latest.passage or "") if latest else "",
                (latest.period or "") if latest else "",
                (latest.reasoning or "") if latest else "",
                str(state),
                f" · {latest.reviewer}" if latest and latest.reviewer else "",
            )
        )
    return rows


def _source_rows(audit: Audit, index: EvidenceIndex) -> dict[str, int]:
    """Each source's row, appended to ``index.sources`` (none marked official yet: :func:`mark_official`)."""
    source_row: dict[str, int] = {}
    for source in audit.sources:
        source_row[source.key] = len(index.sources)
        status = str(source.status) + (f": {source.reason}" if source.reason else "")
        index.sources.append([source.title or "", source.url or source.key, source.resolved_url or "", status, False])
    return source_row


def mark_official(index: EvidenceIndex, audit: Audit, official_keys: AbstractSet[str] | None) -> None:
    """Mark the official sources of an index :func:`build_index` made from ``audit``, and list the official sources
    each answer cites (or has an edge to): those of ``official_keys`` when given, else decided as the scorer decides
    an audit's sources (the matcher, by URL)."""
    matcher = OfficialMatcher(audit.protocol.official_domains)
    source_row = index.source_row
    official_sources: set[int] = set()
    for source in audit.sources:
        row = source_row[source.key]
        if official_keys is not None:
            official = source.key in official_keys
        else:
            official = matcher(source.resolved_url or source.url)
        index.sources[row][4] = official
        if official:
            official_sources.add(row)
    index.official_answers.clear()
    if not official_sources:
        return
    found: dict[int, set[int]] = {}
    for answer in audit.answers:
        for citation in answer.citations:
            if citation.kind == "cited" and citation.source_key is not None:
                row = source_row[citation.source_key]
                if row in official_sources:
                    found.setdefault(index.answer_of[answer.id], set()).add(row)
    # the edges to an official source: found among the edge columns at once (no walk of every edge)
    assert index.edge_answers is not None  # build_index sets it with the edge columns
    sources = np.asarray(index.edge_source, dtype=np.int64)
    hit = np.isin(sources, np.fromiter(official_sources, dtype=np.int64, count=len(official_sources)))
    for answer_row, row in zip(index.edge_answers[hit].tolist(), sources[hit].tolist(), strict=True):
        found.setdefault(answer_row, set()).add(row)
    for answer_row in sorted(found):  # in the answers' order, as they are listed
        index.official_answers[answer_row] = sorted(found[answer_row])


def build_index(
    audit: Audit,
    engine_name: Callable[[str | None], str],
    question_name: Mapping[str, str],
    collections: Mapping[str, str | None] | None = None,
    rows: ReportRows | None = None,
) -> EvidenceIndex:
    """Every row of the audit the report may list, with each answer's dimensions. ``rows``: the audit's edges
    and official sources as a database gives them (without judgement histories); by default the edges are made
    from ``audit.edges`` (:func:`edge_rows`) and each source's URL is matched here. Rows whose official sources are
    not decided yet (``rows.official`` ``None``) leave them unmarked, for :func:`mark_official` once they are."""
    index = EvidenceIndex()
    runs = {r.id: r for r in audit.runs}
    source_row = index.source_row = _source_rows(audit, index)
    for answer in audit.answers:
        run = runs.get(answer.run_id)
        platform = answer.platform or (run.platform if run else None)
        collection = (collections or {}).get(answer.id)
        index.answer_of[answer.id] = len(index.answers)
        index.dims[answer.id] = {
            "platform": platform,
            "question": answer.question_id,
            "run": answer.run_id,
            "model": answer.model or (run.model if run else None),
            "collection": collection,
        }
        index.answers.append(
            [answer.id, engine_name(platform), question_name.get(answer.question_id, answer.question_id), collection]
        )
    for claim in audit.claims:
        index.claim_of[claim.id] = len(index.claims)
        index.claims.append([claim.text, index.answer_of[claim.answer_id], claim.required_fact_id])
    if rows is None:
        _add_edge_rows(index, audit, source_row)
    else:
        _add_read_edges(index, audit, source_row, rows)
    if rows is None or rows.official is not None:
        mark_official(index, audit, None if rows is None else rows.official)
    _pairs(audit, index)
    return index


def _add_edge_rows(index: EvidenceIndex, audit: Audit, source_row: Mapping[str, int]) -> None:
    """The rows of the edges of the audit's claims, worked out from their judgements (an edge of a claim outside
    the audit is left out)."""
    code_of = {name: code for code, name in enumerate(SHOWN)}
    state_of = {name: code for code, name in enumerate(STATES)}
    claims, sources, codes, states, texts, reviewers = [], [], [], [], [], []
    for claim_id, source_key, shown, passage, period, reasoning, state, reviewer in _edge_parts(audit):
        claim_row = index.claim_of.get(claim_id)
        if claim_row is None:
            continue
        claims.append(claim_row)
        sources.append(source_row[source_key])
        codes.append(code_of[shown])
        states.append(state_of[state])
        texts.append(edge_text((passage, period, reasoning)))
        reviewers.append(json_text(reviewer))
    found = _ints(claims), _ints(sources), _ints(codes), _ints(states)
    _add_edge_columns(index, audit, source_row, *found, texts, reviewers)


def _add_read_edges(index: EvidenceIndex, audit: Audit, source_row: Mapping[str, int], read: ReportRows) -> None:
    """The rows of the edges of the audit's claims as a database gives them (an edge of a claim outside the audit
    is left out): positions found for the whole columns at once, the texts kept as SQLite wrote them."""
    claims = _lookup(read.claim_ids, index.claim_of)[read.claim_pks]
    keep = claims >= 0
    texts, reviewers = read.texts, read.reviewers
    if not keep.all():
        kept = keep.tolist()
        texts = [text for text, k in zip(texts, kept, strict=True) if k]
        reviewers = [text for text, k in zip(reviewers, kept, strict=True) if k]
    sources = _lookup(read.source_keys, source_row)[read.source_pks[keep]]
    _add_edge_columns(
        index, audit, source_row, claims[keep], sources, read.codes[keep], read.states[keep], texts, reviewers
    )


def _ints(values: list[int]) -> npt.NDArray[np.int64]:
    return np.array(values, dtype=np.int64)


def _lookup(names: Mapping[int, str], rows: Mapping[str, int]) -> npt.NDArray[np.int64]:
    """A table from each store key of ``names`` to the row of its name in ``rows`` (-1: none)."""
    table = np.full(max(names, default=-1) + 1, -1, dtype=np.int64)
    if names:
        get = rows.get
        table[np.fromiter(names, dtype=np.int64, count=len(names))] = [get(name, -1) for name in names.values()]
    return table


def _add_edge_columns(
    index: EvidenceIndex,
    audit: Audit,
    source_row: Mapping[str, int],
    claims: npt.NDArray[np.int64],
    sources: npt.NDArray[np.int64],
    codes: npt.NDArray[np.int64],
    states: npt.NDArray[np.int64],
    texts: list[str],
    reviewers: list[str],
) -> None:
    """The edges' columns of the blob, each with the link as its answer cited the source, and the edges of each
    answer and claim (``texts``: each edge's passage, period and reasoning as JSON; ``reviewers``: its reviewer
    after the state, a JSON string)."""
    claim_answer = _ints([claim[1] for claim in index.claims])
    answers = claim_answer[claims]
    links, link_texts = _links(index, audit, source_row, answers, sources)
    index.edge_claim = claims.tolist()
    index.edge_source = sources.tolist()
    index.edge_label = np.array(SHOWN, dtype=object)[codes].tolist()
    index.edge_link = links
    index.edge_answers, index.edge_codes = answers, codes
    index.edge_states, index.edge_texts, index.edge_reviewers, index.edge_link_texts = (
        states,
        texts,
        reviewers,
        link_texts,
    )
    index.supported_edges.update(np.flatnonzero(codes == _SUPPORTED).tolist())
    index.edges_of_answer.update(_grouped(answers))
    index.edges_of_claim.update(_grouped(claims))


def _links(
    index: EvidenceIndex,
    audit: Audit,
    source_row: Mapping[str, int],
    answers: npt.NDArray[np.int64],
    sources: npt.NDArray[np.int64],
) -> tuple[list[str], list[str]]:
    """Per edge, the link as its answer cited the source (empty when it gave none), and that link as JSON."""
    width = len(index.sources) + 1
    own: dict[int, str] = {}
    for answer in audit.answers:
        row = index.answer_of[answer.id]
        for citation in answer.citations:
            source = source_row.get(citation.source_key or "")
            if source is not None and citation.url:
                own[row * width + source] = citation.url  # a later citation of the same source wins
    if not own:
        return [""] * len(answers), ['""'] * len(answers)
    keys = np.array(sorted(own), dtype=np.int64)
    wanted = answers * width + sources
    at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    chosen = np.where(keys[at] == wanted, at, len(keys))
    urls = [own[key] for key in keys.tolist()]
    return (
        np.array([*urls, ""], dtype=object)[chosen].tolist(),
        np.array([*map(_json_string, urls), '""'], dtype=object)[chosen].tolist(),
    )


def _grouped(keys: npt.NDArray[np.int64]) -> dict[int, list[int]]:
    """Per value of ``keys``, the positions holding it, in order."""
    if not len(keys):
        return {}
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    rows: list[int] = order.tolist()  # sliced as a list: one array per group costs more than the group
    bounds = [*starts.tolist(), len(rows)]
    return {key: rows[bounds[i] : bounds[i + 1]] for i, key in enumerate(ordered[starts].tolist())}


def _pairs(audit: Audit, index: EvidenceIndex) -> None:
    """One row per (answer, required fact): covered or the cause of the miss, and the claims stating it."""
    facts_of = {q.id: q.required_facts for q in audit.protocol.questions}
    claims_of: dict[tuple[str, str], list[Claim]] = defaultdict(list)
    for claim in audit.claims:
        if claim.required_fact_id:
            claims_of[(claim.answer_id, claim.required_fact_id)].append(claim)
    edges_of, claim_of = index.edges_of_claim, index.claim_of
    for answer in audit.answers:
        answer_row = index.answer_of[answer.id]
        for fact in facts_of.get(answer.question_id, ()):
            claims = claims_of.get((answer.id, fact.id), [])
            rows = sorted(e for c in claims for e in edges_of.get(claim_of[c.id], ()))
            cause = _cause([index.edge_label[e] for e in rows], bool(claims))
            pair = len(index.pairs)
            index.pairs.append(
                [answer_row, fact.id, fact.text, cause, [index.claim_of[c.id] for c in claims], rows, fact.severity]
            )
            index.pairs_of_answer.setdefault(answer_row, []).append(pair)
            if cause == "covered":
                index.covered_pairs.add(pair)


def _cause(labels: Sequence[str], has_claim: bool) -> str:
    """Why a pair is covered or not, in words: ``covered``, ``no claim states it``, ``claim without a supported
    edge (best: partial)``, ``only conflicting sources``."""
    if "supported" in labels:
        return "covered"
    if not has_claim:
        return "no claim states it"
    if not labels:
        return "claim without a supported edge (no source cited for it)"
    if all(label == "conflicting" for label in labels):
        return "only conflicting sources"
    best = next(label for label in _BEST if label in labels)
    return f"claim without a supported edge (best: {best})"


@dataclass(frozen=True, slots=True)
class FactMatrix:
    """Required fact × engine (× collection): each cell's text, kind and evidence set."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, str, tuple[tuple[str, str, str | None], ...]], ...]
    """(question, fact, cells); a cell is (text, css class, set key)."""


def fact_matrix(audit: Audit, index: EvidenceIndex, question_name: Mapping[str, str]) -> FactMatrix:
    """Which engine's answers cover which required fact, and for each miss why."""
    answer_rows = {row: answer_id for answer_id, row in index.answer_of.items()}
    several = len({d.get("collection") for d in index.dims.values()}) > 1
    columns: dict[tuple[str, str | None], str] = {}
    for row in sorted(answer_rows):
        engine, collection = index.answers[row][1], index.answers[row][3]
        key = (engine, collection if several else None)
        columns.setdefault(key, f"{engine} · {collection}" if several and collection else engine)
    order = sorted(columns, key=lambda k: (str(k[1]), k[0]))
    grouped: dict[tuple[str, tuple[str, str | None]], list[int]] = defaultdict(list)
    for pair, (answer_row, fact_id, *_rest) in enumerate(index.pairs):
        engine, collection = index.answers[answer_row][1], index.answers[answer_row][3]
        grouped[(fact_id, (engine, collection if several else None))].append(pair)
    rows = []
    for question in audit.protocol.questions:
        for fact in question.required_facts:
            cells: list[tuple[str, str, str | None]] = []
            for n, column in enumerate(order):
                pairs = grouped.get((fact.id, column), [])
                if not pairs:
                    cells.append(("not asked", "na", None))
                    continue
                covered = [p for p in pairs if index.pairs[p][3] == "covered"]
                set_key = index.add(f"fact:{fact.id}:{n}", f"{fact.text} · {columns[column]}", "p", covered, pairs)
                cells.append(_matrix_cell(index, pairs, covered, set_key))
            rows.append((question_name.get(question.id, question.id), f"{fact.id} · {fact.text}", tuple(cells)))
    return FactMatrix(tuple(columns[c] for c in order), tuple(rows))


def _matrix_cell(index: EvidenceIndex, pairs: list[int], covered: list[int], key: str) -> tuple[str, str, str | None]:
    if len(covered) == len(pairs):
        return ("covered" if len(pairs) == 1 else f"covered {len(pairs)} of {len(pairs)}", "covered", key)
    causes = sorted({index.pairs[p][3] for p in pairs if p not in covered})
    # one answer: the cause says it all (the cell is marked ✗); several: how many are covered, then the causes
    text = "; ".join(causes) if len(pairs) == 1 else f"covered {len(covered)} of {len(pairs)}: {'; '.join(causes)}"
    return (text, "missed" if not covered else "mixed", key)


def problems(
    audit: Audit,
    index: EvidenceIndex,
    protocol: Protocol,
    stale: Sequence[Any] = (),
    limit: int = 300,
) -> dict[str, Any]:
    """What a client acts on, ranked: unsupported and conflicting claims by severity, dead or redirected official
    pages, a competitor cited for the brand's own facts, stale official pages; each with answer and engine."""
    facts = {f.id: f for q in protocol.questions for f in q.required_facts}
    edges_of = index.edges_of_claim
    if index.edge_claim and not edges_of:  # an index not made by build_index
        edges_of = defaultdict(list)
        for row, claim_row in enumerate(index.edge_claim):
            edges_of[claim_row].append(row)
    claims: list[dict[str, Any]] = []
    awaiting = 0
    for claim in audit.claims:
        row = index.claim_of[claim.id]
        labels = [index.edge_label[e] for e in edges_of.get(row, [])]
        if not labels or "supported" in labels:
            continue
        if all(label in ("pending", "disputed") for label in labels):
            awaiting += 1
            continue
        severity = _fact_severity(claim, facts)
        conflicting = "conflicting" in labels
        claims.append(
            {
                "rank": (0 if conflicting else 1, _SEVERITY_RANK.get(severity, 4) if severity else 4),
                "severity": str(severity) if severity else "—",
                "kind": "conflicting" if conflicting else "unsupported",
                "claim": claim.text,
                "row": row,
            }
        )
    claims.sort(key=lambda c: (c["rank"][1], c["rank"][0]))
    for shown in claims[:limit]:  # rows and evidence only for the claims listed
        row = shown["row"]
        shown["answer"] = index.answers[index.claims[row][1]]
        shown["sources"] = [_source_cell(index, e) for e in edges_of[row]]
        shown["set"] = index.add(f"claim:{row}", shown["claim"], "e", [], edges_of[row])
    return {
        "claims": claims[:limit],
        "claims_omitted": max(0, len(claims) - limit),
        "awaiting": awaiting,
        "official_pages": _official_pages(audit, index),
        "competitor_cited": _competitor_cited(audit, index, protocol, limit),
        "stale": [_stale_row(audit, index, case) for case in stale],
    }


def _source_cell(index: EvidenceIndex, edge_row: int) -> tuple[str, str, str]:
    """(title, the link as this answer cited it, label) of one edge."""
    title, url, *_ = index.sources[index.edge_source[edge_row]]
    return (title, index.edge_link[edge_row] or url, index.edge_label[edge_row])


def _official_pages(audit: Audit, index: EvidenceIndex) -> list[dict[str, Any]]:
    """Official pages cited that are dead (the link failed) or redirect elsewhere, with the answers citing them."""
    citing: dict[int, list[int]] = defaultdict(list)
    for answer_row, sources in index.official_answers.items():
        for source in sources:
            citing[source].append(answer_row)
    found = []
    for source_row, answers in sorted(citing.items()):
        title, url, resolved, status, _ = index.sources[source_row]
        if status.startswith("failed"):
            problem = f"dead ({status.removeprefix('failed: ')})"
        elif resolved and resolved.rstrip("/") != url.rstrip("/"):
            problem = f"redirected to {resolved}"
        else:
            continue
        key = index.add(f"page:{source_row}", f"{title or url}: {problem}", "a", answers, answers)
        found.append({"url": url, "title": title, "problem": problem, "answers": len(answers), "set": key})
    return found


def _competitor_cited(audit: Audit, index: EvidenceIndex, protocol: Protocol, limit: int) -> list[dict[str, Any]]:
    """Claims stating one of the brand's required facts whose cited source is on a competitor's domain."""
    matchers = [(c.name, OfficialMatcher(c.domains)) for c in protocol.competitors if c.domains]
    if not matchers:
        return []
    found: list[dict[str, Any]] = []
    for row, (claim_row, source_row) in enumerate(zip(index.edge_claim, index.edge_source, strict=True)):
        claim = index.claims[claim_row]
        if not claim[2]:
            continue
        source = index.sources[source_row]
        url = source[2] or source[1]
        name = next((n for n, match in matchers if url and match(url)), None)
        if name is None:
            continue
        if len(found) == limit:
            break
        key = index.add(f"competitor:{row}", claim[0], "e", [], [row])
        found.append({"competitor": name, "claim": claim[0], "answer": index.answers[claim[1]], "url": url, "set": key})
    return found


def _stale_row(audit: Audit, index: EvidenceIndex, case: Any) -> dict[str, Any]:
    """A stale official page with the answers citing it."""
    keys = {s.key: i for i, s in enumerate(audit.sources)}
    source_row = keys.get(case.source_key)
    answers = [a for a, sources in index.official_answers.items() if source_row in sources]
    key = index.add(f"stale:{case.source_key}", f"stale page {case.source_key}", "a", answers, answers)
    return {
        "url": case.source_key if source_row is None else index.sources[source_row][1],
        "judged": case.judged_fetched_at,
        "newest": case.newest_fetched_at,
        "answers": len(answers),
        "set": key,
    }
