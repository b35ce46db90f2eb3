"""Raters and their paired labels (docs/statistics.md, "Agreement"): who gives the labels
:mod:`citeaudit.core.agreement` compares, and how two raters' judgements are paired per edge.

A rater is a human reviewer by name, a model judge as ``model:NAME``, or ``final``: each edge's final label under
single review (adjudicated, agreed or labelled), the gold a judge is compared with. Pairing takes each rater's
latest review-stage judgement per edge (by ``created_at``); adjudications are not reviews and are never paired
(they enter only through ``final``). Nothing is dropped silently: edges labelled by one rater only, by neither, or
whose latest judgements by one rater tie on time with different labels (``ambiguous``) are counted in
:class:`LabelPairs`.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum

from citeaudit.core.model import Audit, Label, Origin, Stage

__all__ = [
    "FINAL",
    "LabelPairs",
    "RatedJudgement",
    "Rater",
    "RaterKind",
    "SidedLabel",
    "pair_latest",
    "pair_sided",
    "pairs_from_audit",
    "rank_raters",
    "rater_of",
    "raters_of_audit",
]


class RaterKind(StrEnum):
    """What a rater is: whose labels are compared."""

    HUMAN = "human"
    """A human reviewer's review-stage judgements."""
    MODEL = "model"
    """A model judge's judgements (origin ``model``)."""
    FINAL = "final"
    """The edge's final label under single review (adjudicated, agreed or labelled by one human): the gold to
    compare a judge with."""


_PREFIXES = tuple(f"{kind}:" for kind in RaterKind)


@dataclass(frozen=True, slots=True)
class Rater:
    """Whose labels are compared: a human reviewer or a model judge as named in the judgements, or the final
    label."""

    name: str
    """Reviewer id (``judgements.reviewer``); for a model, the judge's name; ``final`` for the final label."""
    kind: RaterKind = RaterKind.HUMAN
    """Human reviewer, model judge or the final label."""

    @classmethod
    def parse(cls, text: str) -> Rater:
        """``NAME`` or ``human:NAME`` is a human reviewer, ``model:NAME`` a model judge, ``final`` the edges'
        final labels (a reviewer called ``final`` is ``human:final``).

        Raises ``ValueError`` (naming the value) for an empty name.
        """
        if text == RaterKind.FINAL:
            return FINAL
        kind, name = RaterKind.HUMAN, text
        prefix, sep, rest = text.partition(":")
        if sep and prefix in (RaterKind.HUMAN, RaterKind.MODEL):
            kind, name = RaterKind(prefix), rest
        if not name.strip():
            raise ValueError(f"a rater needs a name: {text!r} (use NAME, human:NAME, model:NAME or final)")
        return cls(name, kind)

    @property
    def origin(self) -> Origin | None:
        """The judgement origin this rater's labels have (``None`` for the final label)."""
        return None if self.kind is RaterKind.FINAL else Origin(self.kind)

    def __str__(self) -> str:
        if self.kind is RaterKind.FINAL:
            return str(RaterKind.FINAL)
        if self.kind is RaterKind.MODEL or self.name == RaterKind.FINAL or self.name.startswith(_PREFIXES):
            return f"{self.kind}:{self.name}"
        return self.name


FINAL = Rater(str(RaterKind.FINAL), RaterKind.FINAL)
"""The final label of each edge, as a rater (``--between final model:NAME`` compares a judge with the gold)."""


def rater_of(reviewer: str, origin: Origin | str) -> Rater:
    """The rater of a judgement by ``reviewer`` with ``origin``."""
    return Rater(reviewer, RaterKind(str(origin)))


def rank_raters(counts: dict[Rater, int]) -> list[tuple[Rater, int]]:
    """Raters with their edge counts, most edges first, then by kind and name."""
    return sorted(counts.items(), key=lambda item: (-item[1], item[0].kind, item[0].name))


@dataclass(frozen=True, slots=True)
class RatedJudgement:
    """One review-stage judgement as pairing needs it (from an audit file or the database)."""

    edge: Hashable
    """Identity of the edge (any hashable: a database key, a (claim, source_key) pair)."""
    answer: str
    """Answer id of the edge's claim: the bootstrap cluster."""
    rater: Rater
    """Who gave it."""
    label: Label
    """The label."""
    created_at: str | None = None
    """When it was given (ISO-8601); unset sorts first."""


@dataclass(frozen=True, slots=True)
class LabelPairs:
    """Paired labels of two raters on the same edges, with what could not be paired counted.

    Notes: ``a``, ``b`` and ``answers`` are equally long, one entry per paired edge.
    """

    a: tuple[Label, ...]
    """Rater A's label per paired edge (A is taken as gold for supported-vs-rest)."""
    b: tuple[Label, ...]
    """Rater B's label per paired edge."""
    answers: tuple[str, ...]
    """Answer id per paired edge (the cluster resampled by the bootstrap)."""
    rater_a: str = "A"
    """Name of rater A as given."""
    rater_b: str = "B"
    """Name of rater B as given."""
    edges_total: int | None = None
    """Edges in scope, when known (paired + A only + B only + neither + ambiguous)."""
    a_only: int = 0
    """Edges only A labelled."""
    b_only: int = 0
    """Edges only B labelled."""
    ambiguous: int = 0
    """Edges left out because one rater's latest judgements tie on time and disagree."""

    def __post_init__(self) -> None:
        if not len(self.a) == len(self.b) == len(self.answers):
            raise ValueError(
                f"a, b and answers must be equally long (got {len(self.a)}, {len(self.b)} and {len(self.answers)})"
            )

    @property
    def neither(self) -> int | None:
        """Edges in scope that neither rater labelled, when the total is known."""
        if self.edges_total is None:
            return None
        return self.edges_total - len(self.a) - self.a_only - self.b_only - self.ambiguous

    def to_dict(self) -> dict[str, object]:
        """The ``edges`` object of the JSON output: used / total counts."""
        return {
            "paired": len(self.a),
            "a_only": self.a_only,
            "b_only": self.b_only,
            "neither": self.neither,
            "ambiguous": self.ambiguous,
            "total": self.edges_total,
        }


SidedLabel = tuple[Hashable, str, int, str, str | None]
"""One judgement of A or B as pairing reads it: ``(edge, answer id, side 0 = A / 1 = B, label, created_at)``."""

_LABEL_OF = {str(label): label for label in Label}


def _latest(rows: list[tuple[str, str | None]]) -> Label | None:
    """The label of the latest ``(label, created_at)``; ``None`` when the latest ones tie on time and disagree."""
    latest = max(at or "" for _, at in rows)
    labels = {label for label, at in rows if (at or "") == latest}
    return _LABEL_OF[labels.pop()] if len(labels) == 1 else None


def pair_sided(rows: Iterable[SidedLabel], a: Rater, b: Rater, *, edges_total: int | None = None) -> LabelPairs:
    """Pair A's and B's latest judgement per edge from rows already marked with their side (the database's fast
    path; :func:`pair_latest` for judgement records). Edges are kept in first-seen order."""
    by_edge: dict[Hashable, tuple[str, list[tuple[str, str | None]], list[tuple[str, str | None]]]] = {}
    for edge, answer, side, label, created_at in rows:
        entry = by_edge.get(edge)
        if entry is None:
            entry = by_edge[edge] = (answer, [], [])
        (entry[2] if side else entry[1]).append((label, created_at))
    labels_a: list[Label] = []
    labels_b: list[Label] = []
    answers: list[str] = []
    a_only = b_only = ambiguous = 0
    for answer, of_a, of_b in by_edge.values():
        if not of_b:
            a_only += 1
            continue
        if not of_a:
            b_only += 1
            continue
        label_a, label_b = _latest(of_a), _latest(of_b)
        if label_a is None or label_b is None:
            ambiguous += 1
            continue
        labels_a.append(label_a)
        labels_b.append(label_b)
        answers.append(answer)
    return LabelPairs(
        tuple(labels_a), tuple(labels_b), tuple(answers), str(a), str(b), edges_total, a_only, b_only, ambiguous
    )


def pair_latest(
    judgements: Iterable[RatedJudgement], a: Rater, b: Rater, *, edges_total: int | None = None
) -> LabelPairs:
    """Pair A's and B's latest judgement per edge; judgements of other raters are ignored.

    Edges are kept in first-seen order. Raises ``ValueError`` when ``a == b``.
    """
    if a == b:
        raise ValueError(f"the two raters must differ (both are {str(a)!r})")
    sides = {a: 0, b: 1}
    rows = ((j.edge, j.answer, sides[j.rater], str(j.label), j.created_at) for j in judgements if j.rater in sides)
    return pair_sided(rows, a, b, edges_total=edges_total)


def raters_of_audit(audit: Audit) -> list[tuple[Rater, int]]:
    """Every rater with review-stage judgements in an audit, and ``final`` when some edge has a final label,
    with how many edges each labelled, most first."""
    edges: dict[Rater, set[tuple[str, str]]] = {}
    finals = 0
    for edge in audit.edges:
        finals += edge.final_label is not None
        for j in edge.judgements:
            if j.stage is Stage.REVIEW and j.reviewer is not None:
                edges.setdefault(rater_of(j.reviewer, j.origin), set()).add((edge.claim_id, edge.source_key))
    counts = {rater: len(keys) for rater, keys in edges.items()}
    if finals:
        counts[FINAL] = finals
    return rank_raters(counts)


def pairs_from_audit(audit: Audit, a: Rater, b: Rater) -> LabelPairs:
    """Pair two raters' review-stage judgements (or final labels) on the edges of an audit (``edges[].judgements[]``
    of a file)."""
    answer_of = {claim.id: claim.answer_id for claim in audit.claims}

    def rated() -> Iterator[RatedJudgement]:
        for edge in audit.edges:
            key, answer = (edge.claim_id, edge.source_key), answer_of[edge.claim_id]
            for j in edge.judgements:
                if j.stage is Stage.REVIEW and j.reviewer is not None:
                    yield RatedJudgement(key, answer, rater_of(j.reviewer, j.origin), j.label, j.created_at)
            if FINAL in (a, b):
                final = edge.final_label
                if final is not None:
                    yield RatedJudgement(key, answer, FINAL, final)

    return pair_latest(rated(), a, b, edges_total=len(audit.edges))
