"""Copy groups and conflicts in the database: reading snapshot texts, keeping groups, listing conflicts.

Copy groups are derived from the latest snapshot of each resolved source; ``recompute_copy_groups`` replaces
the whole set in one transaction. Conflicts are read from final labels: a claim with both supported and
conflicting edges, or a required fact supported in one answer and contradicted in another.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field

from citeaudit.clock import utc_now
from citeaudit.identity import OfficialMatcher
from citeaudit.model import Label
from citeaudit.scoring import LABEL_CODE
from citeaudit.sources.copies import CopyResult, CopySettings, Page, copy_groups, independent_support
from citeaudit.sources.documents import ConflictSide, DocumentFacts, describe, suggest_reason
from citeaudit.store.reading import CURRENT_CLAIM
from citeaudit.store.resolution import latest_document
from citeaudit.store.sqlite import Store

__all__ = [
    "Conflict",
    "ConflictSource",
    "CopyGroupRow",
    "claim_support",
    "conflicts",
    "read_copy_groups",
    "recompute_copy_groups",
]

SUPPORTED = LABEL_CODE[Label.SUPPORTED]
CONFLICTING = LABEL_CODE[Label.CONFLICTING]


def _is_official(store: Store, source_pks: list[int] | None = None) -> dict[int, bool]:
    """``{source pk: official under any protocol that uses it}`` for every source, or for ``source_pks``."""
    db = store.connection
    official: dict[int, bool] = {}
    only = "" if source_pks is None else f"AND ps.source_pk IN ({', '.join('?' * len(source_pks))})"
    for (protocol_pk,) in db.execute("SELECT pk FROM protocols").fetchall():
        matcher = OfficialMatcher(store.protocol(int(protocol_pk)).official_domains)
        for pk, host, path in db.execute(
            "SELECT s.pk, s.host, s.path FROM protocol_sources ps JOIN sources s ON s.pk = ps.source_pk "
            f"WHERE ps.protocol_pk = ? {only}",
            (protocol_pk, *(source_pks or ())),
        ):
            official[int(pk)] = official.get(int(pk), False) or matcher.match_location(host, path)
    return official


def _latest_documents(db: sqlite3.Connection) -> Iterator[tuple[int, str, str, str | None]]:
    """``(source pk, key, text, date)`` of each source's latest snapshot with text."""
    yield from db.execute(
        "SELECT s.pk, s.key, d.text, coalesce(d.updated, d.published) FROM sources s "
        "JOIN fetches f ON f.pk = (SELECT max(f2.pk) FROM fetches f2 WHERE f2.source_pk = s.pk "
        "AND f2.document_sha256 IS NOT NULL) JOIN documents d ON d.sha256 = f.document_sha256 ORDER BY s.pk"
    )


@dataclass(frozen=True, slots=True)
class CopyGroupRow:
    """A stored copy group."""

    origin: str
    """Source key of the origin."""
    reason: str
    members: tuple[str, ...]
    """Source keys, origin first."""
    official_origin: bool


def recompute_copy_groups(store: Store, settings: CopySettings = CopySettings()) -> tuple[CopyResult, int]:
    """Group the sources by their latest snapshot text and store the groups (replacing the previous set).

    Returns the grouping and how many sources had no snapshot text to compare.
    """
    db = store.connection
    official = _is_official(store)
    rows = list(_latest_documents(db))
    (total,) = db.execute("SELECT count(*) FROM sources").fetchone()
    pages = [Page(key, text, date, official.get(int(pk), False)) for pk, key, text, date in rows]
    result = copy_groups(pages, settings)
    pk_of = {key: int(pk) for pk, key, _, _ in rows}
    now = utc_now()
    with store.transaction() as tx:
        tx.execute("DELETE FROM copy_group_members")
        tx.execute("DELETE FROM copy_groups")
        for group in result.groups:
            group_pk = tx.execute(
                "INSERT INTO copy_groups (origin_source_pk, reason, settings, computed_at) VALUES (?, ?, ?, ?)",
                (pk_of[group.origin], group.reason, json.dumps(asdict(settings), sort_keys=True), now),
            ).lastrowid
            tx.executemany(
                "INSERT INTO copy_group_members (source_pk, group_pk) VALUES (?, ?)",
                [(pk_of[key], group_pk) for key in group.members],
            )
        tx.execute(
            "INSERT INTO copy_group_computations (computed_at, settings, pages, groups) VALUES (?, ?, ?, ?)",
            (now, json.dumps(asdict(settings), sort_keys=True), result.pages, len(result.groups)),
        )
    return result, int(total) - len(rows)


def read_copy_groups(store: Store) -> list[CopyGroupRow]:
    """The stored copy groups, largest first."""
    db = store.connection
    official = _is_official(store)
    groups: dict[int, list[str]] = {}
    origins: dict[int, tuple[int, str, str]] = {}
    for group_pk, origin_pk, origin_key, reason in db.execute(
        "SELECT g.pk, g.origin_source_pk, s.key, g.reason FROM copy_groups g "
        "JOIN sources s ON s.pk = g.origin_source_pk"
    ):
        origins[int(group_pk)] = (int(origin_pk), str(origin_key), str(reason))
    for group_pk, key in db.execute(
        "SELECT m.group_pk, s.key FROM copy_group_members m JOIN sources s ON s.pk = m.source_pk ORDER BY s.pk"
    ):
        groups.setdefault(int(group_pk), []).append(str(key))
    found = []
    for group_pk, (origin_pk, origin_key, reason) in origins.items():
        members = groups.get(group_pk, [])
        ordered = (origin_key, *(k for k in members if k != origin_key))
        found.append(CopyGroupRow(origin_key, reason, ordered, official.get(origin_pk, False)))
    return sorted(found, key=lambda g: (-len(g.members), g.origin))


def _group_of(db: sqlite3.Connection, keys: list[str] | None = None) -> dict[str, int]:
    """``{source key: copy group}`` for every grouped source, or for ``keys`` only."""
    sql = "SELECT s.key, m.group_pk FROM copy_group_members m JOIN sources s ON s.pk = m.source_pk"
    if keys is None:
        return {str(key): int(group) for key, group in db.execute(sql)}
    found: dict[str, int] = {}
    for start in range(0, len(keys), 500):
        batch = keys[start : start + 500]
        found.update(
            (str(key), int(group))
            for key, group in db.execute(f"{sql} WHERE s.key IN ({', '.join('?' * len(batch))})", batch)
        )
    return found


@dataclass(frozen=True, slots=True)
class ClaimSupport:
    """Independent support of one claim."""

    claim_id: str
    supporting: int
    """Sources whose edge is finally supported."""
    independent: int
    """Distinct copy groups among them (a source in no group counts alone)."""
    copies_only: bool
    """Several supporting sources, all copies of one origin."""


def claim_support(store: Store, claim_ids: list[str] | None = None) -> dict[str, ClaimSupport]:
    """Per claim with supported edges: supporting sources, independent ones, and the copies-only flag."""
    db = store.connection
    supporting: dict[str, list[str]] = {}
    # With claim ids (the edge page: one claim), the search starts from those claims, never from every edge.
    only = "" if claim_ids is None else f"AND c.id IN ({', '.join('?' * len(claim_ids))})"
    for claim_id, key in db.execute(
        "SELECT c.id, s.key FROM edges e JOIN claims c ON c.pk = e.claim_pk JOIN sources s ON s.pk = e.source_pk "
        f"WHERE e.final_code = ? AND {CURRENT_CLAIM} {only} ORDER BY c.pk, s.pk",
        (SUPPORTED, *(claim_ids or ())),
    ):
        supporting.setdefault(str(claim_id), []).append(str(key))
    group_of = _group_of(db, [key for keys in supporting.values() for key in keys] if claim_ids else None)
    found = {}
    for claim_id, keys in supporting.items():
        independent, copies_only = independent_support(keys, group_of)
        found[claim_id] = ClaimSupport(claim_id, len(keys), independent, copies_only)
    return found


@dataclass(frozen=True, slots=True)
class SupportRow:
    """Independent support of a claim or of a required fact (over the claims mapped to it)."""

    subject: str
    text: str
    supporting: int
    independent: int
    copies_only: bool


def fact_support(store: Store, claim_id: str) -> SupportRow | None:
    """Independent support of the required fact ``claim_id`` is mapped to, over every current claim mapped to it
    (``None`` when the claim is mapped to no fact)."""
    db = store.connection
    row = db.execute(
        "SELECT f.pk, f.id, f.text FROM claims c JOIN required_facts f ON f.pk = c.fact_pk WHERE c.id = ?",
        (claim_id,),
    ).fetchone()
    if row is None:
        return None
    fact_pk, fact_id, fact_text = row
    keys = [
        str(key)
        for (key,) in db.execute(
            "SELECT DISTINCT s.key FROM edges e JOIN claims c ON c.pk = e.claim_pk "
            "JOIN sources s ON s.pk = e.source_pk WHERE c.fact_pk = ? AND e.final_code = ? "
            f"AND {CURRENT_CLAIM} ORDER BY s.key",
            (fact_pk, SUPPORTED),
        )
    ]
    independent, copies_only = independent_support(keys, _group_of(db, keys))
    return SupportRow(str(fact_id), str(fact_text), len(keys), independent, copies_only)


def copies_computed(store: Store) -> str | None:
    """When copy groups were last computed (``None``: never)."""
    row = store.connection.execute("SELECT max(computed_at) FROM copy_group_computations").fetchone()
    return None if row is None or row[0] is None else str(row[0])


def support_rows(store: Store, answer_ids: set[str]) -> tuple[list[SupportRow], list[SupportRow]]:
    """Per claim and per required fact of these answers with supported edges: supporting sources, independent
    ones (distinct copy groups) and whether the support rests on copies of one origin only."""
    db = store.connection
    group_of = _group_of(db)
    claims: dict[str, tuple[str, list[str]]] = {}
    facts: dict[str, tuple[str, list[str]]] = {}
    for answer_id, claim_id, claim_text, fact_id, fact_text, key in db.execute(
        "SELECT a.id, c.id, c.text, f.id, f.text, s.key FROM edges e JOIN claims c ON c.pk = e.claim_pk "
        "JOIN answers a ON a.pk = c.answer_pk JOIN sources s ON s.pk = e.source_pk "
        f"LEFT JOIN required_facts f ON f.pk = c.fact_pk WHERE e.final_code = ? AND {CURRENT_CLAIM} "
        "ORDER BY c.pk, s.pk",
        (SUPPORTED,),
    ):
        if answer_id not in answer_ids:
            continue
        claims.setdefault(str(claim_id), (str(claim_text), []))[1].append(str(key))
        if fact_id is not None:
            facts.setdefault(str(fact_id), (str(fact_text), []))[1].append(str(key))

    def rows(found: dict[str, tuple[str, list[str]]]) -> list[SupportRow]:
        out = []
        for subject, (text, keys) in found.items():
            unique = list(dict.fromkeys(keys))
            independent, copies_only = independent_support(unique, group_of)
            out.append(SupportRow(subject, text, len(unique), independent, copies_only))
        return out

    return rows(claims), rows(facts)


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


def conflicts(store: Store, claim_id: str | None = None) -> list[Conflict]:
    """Every claim with supported and conflicting edges, and every required fact supported in one answer and
    contradicted in another, with each source's date, version, models, scope, official flag and copy group,
    and a suggested reason. ``claim_id`` narrows the search to that claim's own conflict."""
    db = store.connection
    edges = db.execute(
        "SELECT c.id, c.text, c.fact_pk, e.final_code, s.pk, s.key, coalesce(s.resolved_url, s.url), s.title "
        "FROM edges e JOIN claims c ON c.pk = e.claim_pk JOIN sources s ON s.pk = e.source_pk "
        f"WHERE e.final_code IN (?, ?) AND {CURRENT_CLAIM} {'' if claim_id is None else 'AND c.id = ?'} "
        "ORDER BY c.pk, s.pk",
        (SUPPORTED, CONFLICTING) if claim_id is None else (SUPPORTED, CONFLICTING, claim_id),
    ).fetchall()
    # One claim (the edge page) reads only its own sources' groups and official flags.
    group_of = _group_of(db, None if claim_id is None else [str(r[5]) for r in edges])
    origins = db.execute(
        "SELECT g.pk, s.key, s.pk FROM copy_groups g JOIN sources s ON s.pk = g.origin_source_pk"
        + ("" if claim_id is None else f" WHERE g.pk IN ({', '.join(str(g) for g in set(group_of.values()))})")
    ).fetchall()
    wanted = None if claim_id is None else sorted({int(r[4]) for r in edges} | {int(r[2]) for r in origins})
    official = _is_official(store, wanted)
    origin_of = {int(group): (str(key), official.get(int(pk), False)) for group, key, pk in origins}
    documents: dict[int, tuple[str, str | None]] = {}

    def side(pk: int, key: str, url: str | None, title: str | None, code: int) -> ConflictSource:
        if pk not in documents:
            latest = latest_document(db, pk)
            documents[pk] = ("", None) if latest is None else (latest[1], latest[2])
        text, date = documents[pk]
        group = group_of.get(key)
        origin, origin_official = origin_of.get(group, (None, False)) if group is not None else (None, False)
        return ConflictSource(
            key,
            url,
            title,
            "supported" if code == SUPPORTED else "conflicting",
            official.get(pk, False),
            group,
            origin,
            origin_official,
            describe(text, metadata_date=date) if text else DocumentFacts(date=date),
        )

    found: list[Conflict] = []
    by_claim: dict[str, list[tuple[object, ...]]] = {}
    by_fact: dict[int, list[tuple[object, ...]]] = {}
    for row in edges:
        by_claim.setdefault(str(row[0]), []).append(row)
        if row[2] is not None:
            by_fact.setdefault(int(row[2]), []).append(row)
    for claim_id, rows in by_claim.items():
        codes = {int(r[3]) for r in rows}  # type: ignore[call-overload]
        if codes == {SUPPORTED, CONFLICTING}:
            sides = tuple(side(int(r[4]), str(r[5]), r[6], r[7], int(r[3])) for r in rows)  # type: ignore
            found.append(_conflict("claim", claim_id, str(rows[0][1]), sides))
    facts = {int(pk): (str(fid), str(text)) for pk, fid, text in db.execute("SELECT pk, id, text FROM required_facts")}
    for fact_pk, rows in by_fact.items() if claim_id is None else ():
        claims_codes: dict[str, set[int]] = {}
        for r in rows:
            claims_codes.setdefault(str(r[0]), set()).add(int(r[3]))  # type: ignore[call-overload]
        supported_claims = {c for c, codes in claims_codes.items() if SUPPORTED in codes}
        conflicting_claims = {c for c, codes in claims_codes.items() if CONFLICTING in codes}
        if supported_claims and conflicting_claims and supported_claims != conflicting_claims:
            sides = tuple(side(int(r[4]), str(r[5]), r[6], r[7], int(r[3])) for r in rows)  # type: ignore
            fact_id, fact_text = facts[fact_pk]
            found.append(_conflict("fact", fact_id, fact_text, sides))
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
