"""Collections in SQLite: each collection's tasks, where each stands, and every response received.

:class:`citeaudit.collect.ledger.Ledger` speaks in tasks; here a task is its key
``(question id, engine, locale, repeat)``. Every write is its own short transaction, so an interrupted
collection keeps everything recorded before the interruption.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from citeaudit.core.clock import utc_now
from citeaudit.store.sqlite import Store

__all__ = [
    "CollectionRow",
    "TaskKey",
    "TaskState",
    "add_tasks",
    "archive_payload",
    "collection_summary",
    "import_origin",
    "log_response",
    "open_collection",
    "payload",
    "protocol_label",
    "task_states",
    "update_task",
]

TaskKey = tuple[str, str, str, int]
"""``(question id, engine, locale, repeat)`` of one task (a task without a locale has the plan's placeholder)."""


@dataclass(frozen=True, slots=True)
class CollectionRow:
    """A collection as stored."""

    pk: int
    """Row id."""
    protocol_pk: int
    """The protocol it was first collected under."""
    created_at: str
    """When it was first opened (ISO-8601)."""


@dataclass(frozen=True, slots=True)
class TaskState:
    """Where one task stands."""

    pk: int
    """Row id."""
    key: TaskKey
    """Which task."""
    state: str
    """``pending``, ``fetched``, ``error`` or ``done``."""
    attempts: int
    """Requests made for it so far."""
    payload_sha256: str | None
    """The archived response to parse, once fetched."""


def open_collection(store: Store, name: str, protocol_pk: int) -> CollectionRow:
    """The collection called ``name``, created under ``protocol_pk`` if new (an existing one keeps its own)."""
    with store.transaction() as db:
        row = db.execute("SELECT pk, protocol_pk, created_at FROM collections WHERE name = ?", (name,)).fetchone()
        if row is None:
            created = utc_now()
            pk = db.execute(
                "INSERT INTO collections (name, protocol_pk, created_at) VALUES (?, ?, ?)",
                (name, protocol_pk, created),
            ).lastrowid
            assert pk is not None
            row = (pk, protocol_pk, created)
    return CollectionRow(int(row[0]), int(row[1]), str(row[2]))


def protocol_label(store: Store, protocol_pk: int) -> tuple[str, str, str]:
    """``(id, version, fingerprint)`` of a stored protocol."""
    row = store.connection.execute(
        "SELECT id, version, fingerprint FROM protocols WHERE pk = ?", (protocol_pk,)
    ).fetchone()
    return str(row[0]), str(row[1]), str(row[2])


def add_tasks(store: Store, collection_pk: int, keys: Iterable[TaskKey]) -> int:
    """Record tasks not yet in the collection as pending; returns how many were new."""
    now = utc_now()
    with store.transaction() as db:
        before = db.total_changes
        db.executemany(
            "INSERT OR IGNORE INTO collection_tasks "
            "(collection_pk, question_id, engine, locale, repeat, state, updated_at) "
            "VALUES (?, ?, ?, ?, ?, 'pending', ?)",
            [(collection_pk, *key, now) for key in keys],
        )
        return db.total_changes - before


def task_states(store: Store, collection_pk: int) -> list[TaskState]:
    """Every task of the collection, where it stands."""
    return [
        TaskState(int(pk), (str(question), str(engine), str(locale), int(repeat)), str(state), int(attempts), sha)
        for pk, question, engine, locale, repeat, state, attempts, sha in store.connection.execute(
            "SELECT pk, question_id, engine, locale, repeat, state, attempts, payload_sha256 "
            "FROM collection_tasks WHERE collection_pk = ?",
            (collection_pk,),
        )
    ]


def archive_payload(store: Store, body: bytes, media_type: str) -> str:
    """Store a response body (content-addressed, immutable); returns its SHA-256."""
    sha = hashlib.sha256(body).hexdigest()
    with store.transaction() as db:
        db.execute(
            "INSERT OR IGNORE INTO payloads VALUES (?, ?, ?, ?, ?)", (sha, media_type, len(body), body, utc_now())
        )
    return sha


def log_response(
    store: Store, task_pk: int, attempt: int, url: str, status: int | None, error: str | None, sha: str | None
) -> None:
    """Append one exchange to the request log and count the attempt."""
    with store.transaction() as db:
        db.execute(
            "INSERT INTO collection_responses (task_pk, attempt, url, http_status, error, payload_sha256, "
            "received_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (task_pk, attempt, url, status, error, sha, utc_now()),
        )
        db.execute(
            "UPDATE collection_tasks SET attempts = attempts + 1, http_status = ?, updated_at = ? WHERE pk = ?",
            (status, utc_now(), task_pk),
        )


# The task columns a state change may set; anything else is a programming error, never SQL text.
_TASK_COLUMNS = frozenset({"state", "payload_sha256", "reason", "outcome", "answer_id", "usage", "cost_usd"})


def update_task(store: Store, task_pk: int, values: Mapping[str, object]) -> None:
    """Set some of a task's columns (``state``, ``outcome``, ``reason`` …) and its update time."""
    unknown = set(values) - _TASK_COLUMNS
    if unknown:
        raise ValueError(f"not a task column: {sorted(unknown)}")
    columns = ", ".join(f"{name} = ?" for name in values)
    with store.transaction() as db:
        db.execute(
            f"UPDATE collection_tasks SET {columns}, updated_at = ? WHERE pk = ?",
            (*values.values(), utc_now(), task_pk),
        )


def payload(store: Store, sha: str) -> bytes:
    """An archived body."""
    (body,) = store.connection.execute("SELECT body FROM payloads WHERE sha256 = ?", (sha,)).fetchone()
    return bytes(body)


def import_origin(store: Store, sha: str) -> str | None:
    """Where the import of this payload came from, if it was imported."""
    row = store.connection.execute("SELECT origin FROM imports WHERE payload_sha256 = ?", (sha,)).fetchone()
    return None if row is None else str(row[0])


def collection_summary(store: Store, collection_pk: int) -> list[tuple[str, str, str | None, int, float | None]]:
    """``(engine, state, outcome, tasks, cost)`` for the whole collection."""
    return [
        (str(engine), str(state), outcome, int(n), cost)
        for engine, state, outcome, n, cost in store.connection.execute(
            "SELECT engine, state, outcome, count(*), sum(cost_usd) FROM collection_tasks "
            "WHERE collection_pk = ? GROUP BY engine, state, outcome ORDER BY engine, state, outcome",
            (collection_pk,),
        )
    ]
