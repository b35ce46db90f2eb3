"""Copy groups and conflicts in the database: the snapshot texts to compare, the groups kept, the evidence of
conflicts.

The grouping itself and the reading of conflicts are computed by :mod:`citeaudit.sources.copies`; this module
reads the rows they need and writes the groups back (the whole set replaced in one transaction).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from citeaudit.core.clock import utc_now
from citeaudit.core.identity import OfficialMatcher, host_codes
from citeaudit.core.model import Label
from citeaudit.core.scoring import LABEL_CODE
from citeaudit.core.support import independent_support
from citeaudit.store.reading import CURRENT_CLAIM
from citeaudit.store.resolution import latest_document
from citeaudit.store.sqlite import Store

__all__ = [
    "ClaimSupport",
    "ConflictEdge",
    "CopyGroupRow",
    "PageRow",
    "SupportRow",
    "claim_support",
    "conflict_edges",
    "copies_computed",
    "copy_group_of",
    "copy_origins",
    "fact_support",
    "official_by_source",
    "page_rows",
    "read_copy_groups",
    "replace_copy_groups",
    "required_fact_texts",
    "snapshot_text",
    "support_rows",
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
        rows = db.execute(
            "SELECT s.pk, s.host, s.path FROM protocol_sources ps JOIN sources s ON s.pk = ps.source_pk "
            f"WHERE ps.protocol_pk = ? {only}",
            (protocol_pk, *(source_pks or ())),
        ).fetchall()
        for (pk, _, _), is_official in zip(rows, _official_rows(matcher, rows), strict=True):
            official[int(pk)] = official.get(int(pk), False) or is_official
    return official


def _official_rows(matcher: OfficialMatcher, rows: list[tuple[int, str | None, str | None]]) -> list[bool]:
    """Per ``(pk, host, path)`` row, whether ``matcher`` finds it official."""
    hosts, rows_on = host_codes(host for _, host, _ in rows)
    decided = matcher.official_each(hosts, rows_on, lambda at: [rows[i][2] for i in at.tolist()], len(rows))
    return [bool(flag) for flag in decided.tolist()]


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


@dataclass(frozen=True, slots=True)
class PageRow:
    """A source's latest snapshot text, as copy detection compares it."""

    pk: int
    """Source row id."""
    key: str
    """Source key."""
    text: str
    """Snapshot main text."""
    date: str | None
    """Update or publication date of the snapshot (ISO), if known."""
    official: bool
    """Whether the source is an official presence under any protocol that uses it."""


def page_rows(store: Store) -> tuple[list[PageRow], int]:
    """The latest snapshot text of every source that has one, and how many sources there are in all."""
    db = store.connection
    official = _is_official(store)
    rows = [
        PageRow(int(pk), key, text, date, official.get(int(pk), False)) for pk, key, text, date in _latest_documents(db)
    ]
    (total,) = db.execute("SELECT count(*) FROM sources").fetchone()
    return rows, int(total)


def replace_copy_groups(
    store: Store, groups: Sequence[tuple[int, str, Sequence[int]]], settings: Mapping[str, object], pages: int
) -> None:
    """Replace the stored copy groups with ``groups`` — ``(origin source pk, reason, member source pks)`` each —
    found over ``pages`` snapshot texts with ``settings``, in one transaction."""
    now = utc_now()
    settings_json = json.dumps(dict(settings), sort_keys=True)
    with store.transaction() as tx:
        tx.execute("DELETE FROM copy_group_members")
        tx.execute("DELETE FROM copy_groups")
        for origin_pk, reason, member_pks in groups:
            group_pk = tx.execute(
                "INSERT INTO copy_groups (origin_source_pk, reason, settings, computed_at) VALUES (?, ?, ?, ?)",
                (origin_pk, reason, settings_json, now),
            ).lastrowid
            tx.executemany(
                "INSERT INTO copy_group_members (source_pk, group_pk) VALUES (?, ?)",
                [(pk, group_pk) for pk in member_pks],
            )
        tx.execute(
            "INSERT INTO copy_group_computations (computed_at, settings, pages, groups) VALUES (?, ?, ?, ?)",
            (now, settings_json, pages, len(groups)),
        )


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


def copy_group_of(store: Store, keys: list[str] | None = None) -> dict[str, int]:
    """``{source key: copy group}`` for every grouped source, or for ``keys`` only."""
    return _group_of(store.connection, keys)


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


ConflictEdge = tuple[str, str, int | None, int, int, str, str | None, str | None]
"""``(claim id, claim text, fact pk, final code, source pk, source key, url, title)`` of an edge finally
labelled supported or conflicting."""


def conflict_edges(store: Store, claim_id: str | None = None) -> list[ConflictEdge]:
    """Current edges finally labelled supported or conflicting, of every claim or of ``claim_id`` only."""
    return [
        (str(c), str(text), None if fact is None else int(fact), int(code), int(pk), str(key), url, title)
        for c, text, fact, code, pk, key, url, title in store.connection.execute(
            "SELECT c.id, c.text, c.fact_pk, e.final_code, s.pk, s.key, coalesce(s.resolved_url, s.url), s.title "
            "FROM edges e JOIN claims c ON c.pk = e.claim_pk JOIN sources s ON s.pk = e.source_pk "
            f"WHERE e.final_code IN (?, ?) AND {CURRENT_CLAIM} {'' if claim_id is None else 'AND c.id = ?'} "
            "ORDER BY c.pk, s.pk",
            (SUPPORTED, CONFLICTING) if claim_id is None else (SUPPORTED, CONFLICTING, claim_id),
        )
    ]


def copy_origins(store: Store, group_pks: Iterable[int] | None = None) -> list[tuple[int, str, int]]:
    """``(group, origin source key, origin source pk)`` of every copy group, or of ``group_pks`` only."""
    only = "" if group_pks is None else f" WHERE g.pk IN ({', '.join(str(int(g)) for g in group_pks)})"
    return [
        (int(group), str(key), int(pk))
        for group, key, pk in store.connection.execute(
            "SELECT g.pk, s.key, s.pk FROM copy_groups g JOIN sources s ON s.pk = g.origin_source_pk" + only
        )
    ]


def official_by_source(store: Store, source_pks: list[int] | None = None) -> dict[int, bool]:
    """``{source pk: official under any protocol that uses it}`` for every source, or for ``source_pks``."""
    return _is_official(store, source_pks)


def snapshot_text(store: Store, source_pk: int) -> tuple[str, str | None] | None:
    """``(main text, date)`` of a source's latest snapshot (``None`` when it has none)."""
    latest = latest_document(store.connection, source_pk)
    return None if latest is None else (latest[1], latest[2])


def required_fact_texts(store: Store) -> dict[int, tuple[str, str]]:
    """``{fact pk: (fact id, text)}`` of every required fact."""
    rows = store.connection.execute("SELECT pk, id, text FROM required_facts")
    return {int(pk): (str(fid), str(text)) for pk, fid, text in rows}
