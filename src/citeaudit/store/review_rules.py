"""What the review policy's rules read from the ledger, inside the writer's transaction: the database's policy, the
role and the account called by a name, whether a claim is retired and an edge's judgements with their row ids.

:func:`stored_item_refusal` (and :func:`edge_judgement_refusal` for an edge; the cross pairs' twin is in
:mod:`citeaudit.store.cross_pairs`) hands what it read to the pure rules of :mod:`citeaudit.core.review_policy`,
so every door of a person's judgement is checked the same way in the transaction that writes it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from citeaudit.core.errors import UnknownReference
from citeaudit.core.model import Judgement
from citeaudit.core.review_policy import REVIEW_POLICIES, StoredJudgement, judgement_refusal
from citeaudit.store.judgements import JUDGEMENT_COLUMNS, judgement_from_row
from citeaudit.store.review_records import Reviewer

__all__ = [
    "account_role",
    "claim_retirement",
    "edge_judgement_refusal",
    "edge_judgements",
    "policy_reviews_required",
    "require_account",
    "reviewer_account",
    "stored_item_refusal",
]


def policy_reviews_required(db: sqlite3.Connection) -> int:
    """Independent human reviews the database's review policy needs (``single`` unless set)."""
    row = db.execute("SELECT value FROM review_settings WHERE key = 'policy'").fetchone()
    return REVIEW_POLICIES[str(row[0])] if row is not None and str(row[0]) in REVIEW_POLICIES else 1


def account_role(db: sqlite3.Connection, name: str | None) -> str | None:
    """The role of the review account called ``name`` (``None`` when there is none)."""
    if not name:
        return None
    row = db.execute("SELECT role FROM reviewers WHERE name = ?", (name,)).fetchone()
    return None if row is None else str(row[0])


def reviewer_account(db: sqlite3.Connection, name: str) -> Reviewer | None:
    """The review account called ``name`` (``None`` when there is none)."""
    row = db.execute("SELECT pk, name, role, password_hash FROM reviewers WHERE name = ?", (name,)).fetchone()
    return None if row is None else Reviewer(*row)


def claim_retirement(db: sqlite3.Connection, claim_pk: int) -> str | None:
    """Why the claim takes no judgement: it was retired, and by which claim set of its answer (``None`` when it
    is current)."""
    claim_id, current, answer_pk = db.execute(
        "SELECT id, current, answer_pk FROM claims WHERE pk = ?", (claim_pk,)
    ).fetchone()
    if current:
        return None
    found = db.execute(
        "SELECT ordinal, action, method, version, actor, created_at FROM claim_sets WHERE answer_pk = ? "
        "ORDER BY pk DESC LIMIT 1",
        (answer_pk,),
    ).fetchone()
    if found is None:
        return f"claim {claim_id!r} was retired; it takes no judgement"
    ordinal, action, method, version, actor, created_at = found
    how = " ".join(str(part) for part in (action, method, version) if part)
    by = f" by {actor}" if actor else ""
    return (
        f"claim {claim_id!r} was retired by claim set {ordinal} of its answer ({how}{by}, {created_at}); "
        "it takes no judgement"
    )


def edge_judgements(db: sqlite3.Connection, edge_pk: int) -> list[StoredJudgement]:
    """Every judgement on the edge with its row id, oldest first."""
    return [
        StoredJudgement(int(row[0]), judgement_from_row(row))
        for row in db.execute(
            f"SELECT {JUDGEMENT_COLUMNS} FROM judgements j WHERE j.edge_pk = ? ORDER BY j.pk", (edge_pk,)
        )
    ]


def stored_item_refusal(
    db: sqlite3.Connection,
    claim_pk: int,
    existing: Sequence[StoredJudgement],
    judgement: Judgement,
    *,
    item: str = "edge",
) -> str | None:
    """Why ``judgement`` may not be recorded now on an item (an edge or a cross pair) of claim ``claim_pk``
    holding ``existing`` (``None`` when it may), read inside the writer's transaction: a retired claim, then
    :func:`judgement_refusal` with the reviewer's account and the database's policy."""
    retired = claim_retirement(db, claim_pk)
    if retired is not None:
        return retired
    return judgement_refusal(
        existing, judgement, account_role(db, judgement.reviewer), policy_reviews_required(db), item=item
    )


def edge_judgement_refusal(db: sqlite3.Connection, edge_pk: int, judgement: Judgement) -> str | None:
    """Why ``judgement`` may not be recorded on edge ``edge_pk`` now (:func:`stored_item_refusal`)."""
    (claim_pk,) = db.execute("SELECT claim_pk FROM edges WHERE pk = ?", (edge_pk,)).fetchone()
    return stored_item_refusal(db, int(claim_pk), edge_judgements(db, edge_pk), judgement)


def require_account(db: sqlite3.Connection, name: str, what: str, option: str = "--reviewer") -> str:
    """The role of the account called ``name``, who decides ``what`` (a fact mapping, a claim change, a source's
    link, an evidence group), named by ``option``: a name with no account is an
    :class:`~citeaudit.core.errors.UnknownReference`, since the record would name no one."""
    role = account_role(db, name)
    if role is None:
        raise UnknownReference(
            what, option, f"{name!r} is no review account; add it with `citeaudit reviewer add` first"
        )
    return role
