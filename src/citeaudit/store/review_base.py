"""What every part of the review store shares: the one connection with its transactions, the clock judgements
are ordered by, the project's review settings and the audit log's append.

Each part of :class:`~citeaudit.store.review.ReviewStore` (accounts, judgements, queue, evidence, cross pairs,
audit log) is a :class:`ReviewPart` over the same :class:`ReviewConnection`, so a write of one part and the
audit-log row it appends are one ``BEGIN IMMEDIATE`` transaction.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from citeaudit.core.clock import utc_now
from citeaudit.core.errors import StoreError
from citeaudit.core.model import Label
from citeaudit.core.review_policy import REVIEW_POLICIES
from citeaudit.core.scoring import LABELS
from citeaudit.store.connection import Transactions, connect
from citeaudit.store.migrations import SCHEMA_VERSION

__all__ = [
    "DEFAULT_SETTINGS",
    "POLICIES",
    "ReviewConnection",
    "ReviewPart",
    "append_log",
    "code_label",
    "now",
    "open_review",
    "read_settings",
    "settings_reviews_required",
]

POLICIES: Mapping[str, int] = REVIEW_POLICIES
"""Review policies and how many independent human reviews each needs before an edge has a final label."""

DEFAULT_SETTINGS: Mapping[str, str] = {"policy": "single", "show_model_suggestions": "false"}
"""Project settings with the value each has until an admin sets it."""


@dataclass(frozen=True, slots=True)
class ReviewConnection:
    """An open connection to a citeaudit database and its transactions, shared by the review store's parts."""

    path: Path
    """The database file."""
    db: sqlite3.Connection
    """The connection (usable from the web server's threads, one at a time)."""
    transaction: Transactions
    """``with transaction() as db:`` writes all or nothing."""


def open_review(path: Path, busy_timeout: float) -> ReviewConnection:
    """Open the database at ``path`` for the review workflow; a write waits up to ``busy_timeout`` seconds for
    another writer. A database at another schema version than this citeaudit's is a
    :class:`~citeaudit.core.errors.StoreError` (``ReviewStore.prepare`` migrates it)."""
    db = connect(path, busy_timeout=busy_timeout, shared=True)
    try:
        version = int(db.execute("PRAGMA user_version").fetchone()[0])
    except sqlite3.Error as exc:
        db.close()
        raise StoreError(f"cannot open database {str(path)!r}: {exc}") from None
    if version != SCHEMA_VERSION:
        db.close()
        raise StoreError(
            f"{str(path)!r} has schema version {version}, not {SCHEMA_VERSION}; open it once with "
            "`ReviewStore.prepare` (done by `citeaudit review serve`)"
        )
    return ReviewConnection(path, db, Transactions(db, path, busy_timeout))


class ReviewPart:
    """One concern of the review store, over the connection every part shares."""

    def __init__(self, connection: ReviewConnection) -> None:
        """Use ``connection`` (opened and closed by :class:`~citeaudit.store.review.ReviewStore`)."""
        self.path = connection.path
        self._db = connection.db
        self._transaction = connection.transaction


def now() -> str:
    """The current UTC time, ISO-8601 with microseconds (judgements are ordered by it)."""
    return utc_now("microseconds")


def code_label(code: int) -> Label | None:
    """The final label a stored ``final_code`` stands for (``None`` for pending or disputed)."""
    return LABELS[code] if 0 <= code < len(LABELS) else None


def read_settings(db: sqlite3.Connection) -> dict[str, str]:
    """Project settings (``policy``, ``show_model_suggestions``) with their defaults."""
    stored = dict(db.execute("SELECT key, value FROM review_settings").fetchall())
    return {**DEFAULT_SETTINGS, **stored}


def settings_reviews_required(db: sqlite3.Connection) -> int:
    """Independent human reviews the current policy needs."""
    return POLICIES[read_settings(db)["policy"]]


def append_log(
    db: sqlite3.Connection,
    actor: str,
    action: str,
    target: str,
    before: object,
    after: object,
    at: str | None = None,
) -> None:
    """Append one audit-log row (inside the transaction of the action it records), at ``at`` (default now)."""
    db.execute(
        "INSERT INTO audit_log (at, actor, action, target, before, after) VALUES (?, ?, ?, ?, ?, ?)",
        (
            at or now(),
            actor,
            action,
            target,
            None if before is None else json.dumps(before, sort_keys=True, ensure_ascii=False),
            None if after is None else json.dumps(after, sort_keys=True, ensure_ascii=False),
        ),
    )
