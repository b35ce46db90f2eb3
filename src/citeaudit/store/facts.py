"""Claim → required-fact mappings in SQLite: proposals, confirmations, rejections (one immutable row each).

A confirmation also sets ``claims.fact_pk``, the column coverage reads; a proposal never does, so a fact
whose only mapping is a proposal counts as "without claim". :class:`Facts` (a store's ``facts``) runs these in the
store's transactions.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from citeaudit.core.clock import utc_now
from citeaudit.core.errors import InvalidValue, UnknownReference
from citeaudit.store.connection import Access
from citeaudit.store.reading import CURRENT_CLAIM
from citeaudit.store.records import FactCandidate, Proposal
from citeaudit.store.review_rules import require_account

__all__ = [
    "FactCandidate",
    "FactWork",
    "Facts",
    "MappingRow",
    "Proposal",
    "confirm_mapping",
    "fact_work",
    "list_mappings",
    "record_proposals",
    "reject",
]


@dataclass(frozen=True, slots=True)
class FactWork:
    """One answer's current claims and the required facts still to map."""

    answer_pk: int
    """Answer row id."""
    claims: tuple[tuple[int, str], ...]
    """``(row id, text)`` of its current claims not rejected for every open fact."""
    facts: tuple[FactCandidate, ...]
    """Facts of its question with no confirmed or proposed current claim yet."""
    rejected: frozenset[tuple[int, int]]
    """``(claim pk, fact pk)`` pairs a reviewer rejected: never proposed again."""
    done: int
    """Facts of its question already mapped or proposed (skipped)."""


@dataclass(frozen=True, slots=True)
class MappingRow:
    """A mapping as listed for review."""

    pk: int
    """Row id (what ``facts confirm`` takes)."""
    state: str
    """``proposed``, ``confirmed`` or ``rejected`` (the latest decision on this claim and fact)."""
    answer_id: str
    """Answer of the claim."""
    claim_id: str
    """Claim id."""
    claim_text: str
    """Claim text."""
    fact_id: str
    """Required fact id."""
    fact_text: str
    """Required fact text."""
    score: float | None
    """Similarity the proposal was made with."""


def fact_work(db: sqlite3.Connection, answer_pk: int) -> FactWork:
    """What ``facts map`` has left to do for one answer."""
    claims = db.execute(
        f"SELECT c.pk, c.text, c.fact_pk FROM claims c WHERE c.answer_pk = ? AND {CURRENT_CLAIM} "
        "ORDER BY c.start, c.pk",
        (answer_pk,),
    ).fetchall()
    facts = db.execute(
        "SELECT f.pk, f.id, f.text FROM required_facts f JOIN answers a ON a.question_pk = f.question_pk "
        "WHERE a.pk = ? ORDER BY f.ordinal",
        (answer_pk,),
    ).fetchall()
    pks = [pk for pk, _, _ in claims]
    decided: dict[tuple[int, int], str] = {}
    if pks:
        for claim_pk, fact_pk, state in db.execute(
            "SELECT claim_pk, fact_pk, state FROM fact_mappings WHERE pk IN (SELECT max(pk) FROM fact_mappings "
            f"WHERE claim_pk IN ({','.join('?' * len(pks))}) GROUP BY claim_pk, fact_pk)",
            pks,
        ):
            decided[(claim_pk, fact_pk)] = state
    covered = {fact_pk for _, _, fact_pk in claims if fact_pk is not None}
    covered |= {fact for (_, fact), state in decided.items() if state in ("proposed", "confirmed")}
    open_facts = tuple(FactCandidate(pk, fid, text) for pk, fid, text in facts if pk not in covered)
    rejected = frozenset(pair for pair, state in decided.items() if state == "rejected")
    return FactWork(
        answer_pk,
        tuple((pk, text) for pk, text, _ in claims),
        open_facts,
        rejected,
        len(facts) - len(open_facts),
    )


def record_proposals(db: sqlite3.Connection, proposals: Sequence[Proposal], method: str, created_at: str) -> None:
    """Store proposals (state ``proposed``)."""
    db.executemany(
        "INSERT INTO fact_mappings (claim_pk, fact_pk, state, score, lexical, dense, entities, method, created_at) "
        "VALUES (?, ?, 'proposed', ?, ?, ?, ?, ?, ?)",
        [
            (p.claim_pk, p.fact_pk, p.score, p.lexical, p.dense, json.dumps(p.entities), method, created_at)
            for p in proposals
        ],
    )


def list_mappings(db: sqlite3.Connection, state: str | None) -> list[MappingRow]:
    """The latest decision on every (claim, fact) pair of current claims, optionally of one state."""
    rows = db.execute(
        "SELECT m.pk, m.state, a.id, c.id, c.text, f.id, f.text, m.score FROM fact_mappings m "
        "JOIN claims c ON c.pk = m.claim_pk JOIN answers a ON a.pk = c.answer_pk "
        "JOIN required_facts f ON f.pk = m.fact_pk "
        "WHERE m.pk IN (SELECT max(pk) FROM fact_mappings GROUP BY claim_pk, fact_pk) "
        f"AND {CURRENT_CLAIM} ORDER BY m.pk"
    ).fetchall()
    return [MappingRow(*row) for row in rows if state is None or row[1] == state]


def _mapping(db: sqlite3.Connection, mapping_pk: int) -> tuple[int, int, str]:
    row = db.execute("SELECT claim_pk, fact_pk, state FROM fact_mappings WHERE pk = ?", (mapping_pk,)).fetchone()
    if row is None:
        raise UnknownReference("mapping", "", f"no mapping {mapping_pk} in the database (see `citeaudit facts list`)")
    return int(row[0]), int(row[1]), str(row[2])


def _claim_and_fact(db: sqlite3.Connection, claim_id: str, fact_id: str) -> tuple[int, int]:
    claim = db.execute("SELECT pk, answer_pk FROM claims WHERE id = ?", (claim_id,)).fetchone()
    if claim is None:
        raise UnknownReference("--claim", "", f"no claim {claim_id!r} in the database")
    fact = db.execute(
        "SELECT f.pk FROM required_facts f JOIN answers a ON a.question_pk = f.question_pk WHERE a.pk = ? AND f.id = ?",
        (claim[1], fact_id),
    ).fetchone()
    if fact is None:
        raise UnknownReference(
            "--fact", "", f"fact {fact_id!r} is not required for the question of claim {claim_id!r}'s answer"
        )
    return int(claim[0]), int(fact[0])


def confirm_mapping(
    db: sqlite3.Connection, mapping_pk: int | None, claim_id: str | None, fact_id: str | None, actor: str, at: str
) -> tuple[str, str]:
    """Confirm a proposal (by row id) or map a claim to a fact directly; returns ``(claim id, fact id)``."""
    if mapping_pk is not None:
        claim_pk, fact_pk, _ = _mapping(db, mapping_pk)
    elif claim_id is not None and fact_id is not None:
        claim_pk, fact_pk = _claim_and_fact(db, claim_id, fact_id)
    else:
        raise InvalidValue("facts confirm", "", "name a mapping id, or --claim and --fact")
    cid, current = db.execute("SELECT id, fact_pk FROM claims WHERE pk = ?", (claim_pk,)).fetchone()
    (fid,) = db.execute("SELECT id FROM required_facts WHERE pk = ?", (fact_pk,)).fetchone()
    if current is not None and current != fact_pk:
        (other,) = db.execute("SELECT id FROM required_facts WHERE pk = ?", (current,)).fetchone()
        raise InvalidValue(
            "facts confirm", f"claim {cid!r}", f"already states fact {other!r}; a claim states one fact (not {fid!r})"
        )
    db.execute(
        "INSERT INTO fact_mappings (claim_pk, fact_pk, state, method, actor, created_at) "
        "VALUES (?, ?, 'confirmed', 'review', ?, ?)",
        (claim_pk, fact_pk, actor, at),
    )
    db.execute("UPDATE claims SET fact_pk = ? WHERE pk = ?", (fact_pk, claim_pk))
    return str(cid), str(fid)


def reject(db: sqlite3.Connection, mapping_pk: int, actor: str, at: str) -> tuple[str, str]:
    """Reject a proposal; the pair is never proposed again. A confirmed mapping cannot be rejected here."""
    claim_pk, fact_pk, _ = _mapping(db, mapping_pk)
    cid, current = db.execute("SELECT id, fact_pk FROM claims WHERE pk = ?", (claim_pk,)).fetchone()
    (fid,) = db.execute("SELECT id FROM required_facts WHERE pk = ?", (fact_pk,)).fetchone()
    if current == fact_pk:
        raise InvalidValue("facts reject", f"mapping {mapping_pk}", f"claim {cid!r} is confirmed to state {fid!r}")
    db.execute(
        "INSERT INTO fact_mappings (claim_pk, fact_pk, state, method, actor, created_at) "
        "VALUES (?, ?, 'rejected', 'review', ?, ?)",
        (claim_pk, fact_pk, actor, at),
    )
    return str(cid), str(fid)


class Facts:
    """A store's claim → required-fact mappings (``store.facts``): the work left, proposals, and the decisions
    people make on them."""

    def __init__(self, access: Access) -> None:
        self._access = access

    def work(self, answer_pk: int) -> FactWork:
        """An answer's current claims and the required facts still to map."""
        return fact_work(self._access.db, answer_pk)

    def record_proposals(self, proposals: Sequence[Proposal], method: str) -> None:
        """Store claim → fact proposals in one transaction."""
        with self._access.transaction() as db:
            record_proposals(db, proposals, method, utc_now())

    def mappings(self, state: str | None = None) -> list[MappingRow]:
        """The latest decision on each (claim, fact) pair of current claims, optionally of one state."""
        return list_mappings(self._access.db, state)

    def confirm(
        self, requests: Sequence[tuple[int | None, str | None, str | None]], actor: str
    ) -> list[tuple[str, str]]:
        """Confirm several proposals, or map claims to facts directly (``(mapping_pk, None, None)`` or
        ``(None, claim_id, fact_id)`` each), all or none: one refused request leaves every mapping as it was.
        Coverage counts a confirmed mapping from then on; ``(claim id, fact id)`` of each."""
        at = utc_now()
        with self._access.transaction() as db:
            require_account(db, actor, "facts confirm")
            return [confirm_mapping(db, pk, claim_id, fact_id, actor, at) for pk, claim_id, fact_id in requests]

    def reject(self, mapping_pks: Sequence[int], actor: str) -> list[tuple[str, str]]:
        """Reject several proposals all or none: a rejected claim is never proposed for that fact again."""
        at = utc_now()
        with self._access.transaction() as db:
            require_account(db, actor, "facts reject")
            return [reject(db, pk, actor, at) for pk in mapping_pks]
