"""Copy groups and conflicts over the sources in a database: the groups recomputed from the latest snapshots,
and the conflicts read from final labels — a claim with both supported and conflicting edges, or a required
fact supported in one answer and contradicted in another — each side described and a reason suggested.

The store reads and writes the rows (:mod:`citeaudit.store.copies`); the grouping is
:func:`citeaudit.sources.copies.copy_groups`, the descriptions :mod:`citeaudit.sources.documents`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from citeaudit.core.model import Label
from citeaudit.core.scoring import LABEL_CODE
from citeaudit.sources.copies import CopyResult, CopySettings, Page, copy_groups
from citeaudit.sources.documents import ConflictSide, DocumentFacts, describe, suggest_reason
from citeaudit.store import copies as copies_store
from citeaudit.store.sqlite import Store

__all__ = ["Conflict", "ConflictSource", "conflicts", "recompute_copy_groups"]


def recompute_copy_groups(store: Store, settings: CopySettings = CopySettings()) -> tuple[CopyResult, int]:
    """Group the sources by their latest snapshot text and store the groups (replacing the previous set).

    Returns the grouping and how many sources had no snapshot text to compare.
    """
    rows, total = copies_store.page_rows(store)
    result = copy_groups([Page(row.key, row.text, row.date, row.official) for row in rows], settings)
    pk_of = {row.key: row.pk for row in rows}
    copies_store.replace_copy_groups(
        store,
        [(pk_of[group.origin], group.reason, [pk_of[key] for key in group.members]) for group in result.groups],
        asdict(settings),
        result.pages,
    )
    return result, total - len(rows)


@dataclass(frozen=True, slots=True)
class ConflictSource:
    """One source of a conflict with what it says about itself."""

    key: str
    url: str | None
    title: str | None
    label: str
    official: bool
    copy_group: int | None
    copy_origin: str | None
    copy_origin_official: bool = False
    facts: DocumentFacts = field(default_factory=DocumentFacts)


@dataclass(frozen=True, slots=True)
class Conflict:
    """Supported and conflicting evidence about one claim or one required fact."""

    kind: str
    """``claim`` (one claim, both labels) or ``fact`` (supported in one answer, contradicted in another)."""
    subject: str
    """Claim id, or required-fact id."""
    text: str
    """Claim text, or required-fact text."""
    sources: tuple[ConflictSource, ...]
    reason: str
    detail: str

    def to_dict(self) -> dict[str, object]:
        """JSON form."""
        return asdict(self)


_SUPPORTED = LABEL_CODE[Label.SUPPORTED]
_CONFLICTING = LABEL_CODE[Label.CONFLICTING]


def conflicts(store: Store, claim_id: str | None = None) -> list[Conflict]:
    """Every claim with supported and conflicting edges, and every required fact supported in one answer and
    contradicted in another, with each source's date, version, models, scope, official flag and copy group,
    and a suggested reason. ``claim_id`` narrows the search to that claim's own conflict."""
    edges = copies_store.conflict_edges(store, claim_id)
    # One claim (the edge page) reads only its own sources' groups and official flags.
    group_of = copies_store.copy_group_of(store, None if claim_id is None else [e[5] for e in edges])
    origins = copies_store.copy_origins(store, None if claim_id is None else set(group_of.values()))
    wanted = None if claim_id is None else sorted({e[4] for e in edges} | {pk for _, _, pk in origins})
    official = copies_store.official_by_source(store, wanted)
    origin_of = {group: (key, official.get(pk, False)) for group, key, pk in origins}
    documents: dict[int, tuple[str, str | None]] = {}

    def side(edge: copies_store.ConflictEdge) -> ConflictSource:
        _, _, _, code, pk, key, url, title = edge
        if pk not in documents:
            documents[pk] = copies_store.snapshot_text(store, pk) or ("", None)
        text, date = documents[pk]
        group = group_of.get(key)
        origin, origin_official = origin_of.get(group, (None, False)) if group is not None else (None, False)
        return ConflictSource(
            key,
            url,
            title,
            "supported" if code == _SUPPORTED else "conflicting",
            official.get(pk, False),
            group,
            origin,
            origin_official,
            describe(text, metadata_date=date) if text else DocumentFacts(date=date),
        )

    found: list[Conflict] = []
    by_claim: dict[str, list[copies_store.ConflictEdge]] = {}
    by_fact: dict[int, list[copies_store.ConflictEdge]] = {}
    for edge in edges:
        by_claim.setdefault(edge[0], []).append(edge)
        if edge[2] is not None:
            by_fact.setdefault(edge[2], []).append(edge)
    for subject, rows in by_claim.items():
        if {r[3] for r in rows} == {_SUPPORTED, _CONFLICTING}:
            found.append(_conflict("claim", subject, rows[0][1], tuple(side(r) for r in rows)))
    if claim_id is not None:
        return found
    facts = copies_store.required_fact_texts(store)
    for fact_pk, rows in by_fact.items():
        claims_codes: dict[str, set[int]] = {}
        for r in rows:
            claims_codes.setdefault(r[0], set()).add(r[3])
        supported_claims = {c for c, codes in claims_codes.items() if _SUPPORTED in codes}
        conflicting_claims = {c for c, codes in claims_codes.items() if _CONFLICTING in codes}
        if supported_claims and conflicting_claims and supported_claims != conflicting_claims:
            fact_id, fact_text = facts[fact_pk]
            found.append(_conflict("fact", fact_id, fact_text, tuple(side(r) for r in rows)))
    return found


def _conflict(kind: str, subject: str, text: str, sides: tuple[ConflictSource, ...]) -> Conflict:
    unique: dict[tuple[str, str], ConflictSource] = {}
    for s in sides:
        unique.setdefault((s.key, s.label), s)
    listed = tuple(unique.values())
    reason, detail = suggest_reason(
        text,
        [
            ConflictSide(
                s.key,
                s.label,
                s.facts,
                s.official,
                copy_origin=s.copy_origin,
                copy_origin_official=s.copy_origin_official,
            )
            for s in listed
        ],
    )
    return Conflict(kind, subject, text, listed, reason, detail)
