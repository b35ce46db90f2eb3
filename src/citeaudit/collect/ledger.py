"""The collection ledger in the database: which tasks exist, where each stands, every response received."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from citeaudit.clock import utc_now
from citeaudit.collect.plan import NO_LOCALE, Task
from citeaudit.errors import InvalidValue
from citeaudit.model import Protocol
from citeaudit.protocol import fingerprint
from citeaudit.store import Store

__all__ = ["Ledger", "TaskRow"]


@dataclass(frozen=True, slots=True)
class TaskRow:
    """A task as the ledger holds it."""

    pk: int
    task: Task
    state: str
    attempts: int
    payload_sha256: str | None


class Ledger:
    """Reads and writes one collection's tasks; every write is its own short transaction."""

    def __init__(self, store: Store, name: str, protocol: Protocol) -> None:
        self.store = store
        self.name = name
        self.protocol = protocol
        protocol_pk = store.ensure_protocol(protocol)
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
        if row[1] != protocol_pk:
            other = store.connection.execute(
                "SELECT id, version, fingerprint FROM protocols WHERE pk = ?", (row[1],)
            ).fetchone()
            raise InvalidValue(
                "--collection",
                "",
                f"collection {name!r} was collected under protocol {other[0]}@{other[1]} ({other[2][:12]}), "
                f"not {protocol.id}@{protocol.version} ({fingerprint(protocol)[:12]}); choose another --collection",
            )
        self.pk = int(row[0])
        self.created_at = str(row[2])

    def add(self, tasks: Iterable[Task]) -> int:
        """Record tasks not yet in the ledger as pending; returns how many were new."""
        now = utc_now()
        with self.store.transaction() as db:
            before = db.total_changes
            db.executemany(
                "INSERT OR IGNORE INTO collection_tasks "
                "(collection_pk, question_id, engine, locale, repeat, state, updated_at) "
                "VALUES (?, ?, ?, ?, ?, 'pending', ?)",
                [(self.pk, t.question_id, t.engine, t.locale or NO_LOCALE, t.repeat, now) for t in tasks],
            )
            return db.total_changes - before

    def rows(self, tasks: Iterable[Task]) -> list[TaskRow]:
        """The ledger rows of ``tasks`` (in the given order)."""
        wanted = {(t.question_id, t.engine, t.locale or NO_LOCALE, t.repeat): t for t in tasks}
        found: dict[tuple[str, str, str, int], TaskRow] = {}
        for pk, question, engine, locale, repeat, state, attempts, sha in self.store.connection.execute(
            "SELECT pk, question_id, engine, locale, repeat, state, attempts, payload_sha256 "
            "FROM collection_tasks WHERE collection_pk = ?",
            (self.pk,),
        ):
            key = (question, engine, locale, repeat)
            if key in wanted:
                found[key] = TaskRow(pk, wanted[key], state, attempts, sha)
        return [found[key] for key in wanted if key in found]

    def archive(self, body: bytes, media_type: str) -> str:
        """Store a response body (content-addressed, immutable); returns its SHA-256."""
        sha = hashlib.sha256(body).hexdigest()
        with self.store.transaction() as db:
            db.execute(
                "INSERT OR IGNORE INTO payloads VALUES (?, ?, ?, ?, ?)", (sha, media_type, len(body), body, utc_now())
            )
        return sha

    def log_response(
        self, task_pk: int, attempt: int, url: str, status: int | None, error: str | None, sha: str | None
    ) -> None:
        """Append one exchange to the request log and count the attempt."""
        with self.store.transaction() as db:
            db.execute(
                "INSERT INTO collection_responses (task_pk, attempt, url, http_status, error, payload_sha256, "
                "received_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (task_pk, attempt, url, status, error, sha, utc_now()),
            )
            db.execute(
                "UPDATE collection_tasks SET attempts = attempts + 1, http_status = ?, updated_at = ? WHERE pk = ?",
                (status, utc_now(), task_pk),
            )

    def fetched(self, task_pk: int, sha: str) -> None:
        """The response to parse is archived."""
        self._set(task_pk, state="fetched", payload_sha256=sha, reason=None)

    def error(self, task_pk: int, reason: str) -> None:
        """No usable response (a rerun asks again)."""
        self._set(task_pk, state="error", reason=reason)

    def done(
        self,
        task_pk: int,
        outcome: str,
        answer_id: str | None,
        reason: str | None,
        usage: dict[str, Any] | None,
        cost: float | None,
    ) -> None:
        """The task's answer (or recorded failure) is stored."""
        self._set(
            task_pk,
            state="done",
            outcome=outcome,
            answer_id=answer_id,
            reason=reason,
            usage=None if usage is None else json.dumps(usage, sort_keys=True),
            cost_usd=cost,
        )

    def payload(self, sha: str) -> bytes:
        """An archived body."""
        (body,) = self.store.connection.execute("SELECT body FROM payloads WHERE sha256 = ?", (sha,)).fetchone()
        return bytes(body)

    def import_origin(self, sha: str) -> str | None:
        """Where the import of this payload came from, if it was imported."""
        row = self.store.connection.execute("SELECT origin FROM imports WHERE payload_sha256 = ?", (sha,)).fetchone()
        return None if row is None else str(row[0])

    def summary(self) -> list[tuple[str, str, str | None, int, float | None]]:
        """``(engine, state, outcome, tasks, cost)`` for the whole collection."""
        return [
            (str(engine), str(state), outcome, int(n), cost)
            for engine, state, outcome, n, cost in self.store.connection.execute(
                "SELECT engine, state, outcome, count(*), sum(cost_usd) FROM collection_tasks "
                "WHERE collection_pk = ? GROUP BY engine, state, outcome ORDER BY engine, state, outcome",
                (self.pk,),
            )
        ]

    def _set(self, task_pk: int, **values: object) -> None:
        columns = ", ".join(f"{name} = ?" for name in values)
        with self.store.transaction() as db:
            db.execute(
                f"UPDATE collection_tasks SET {columns}, updated_at = ? WHERE pk = ?",
                (*values.values(), utc_now(), task_pk),
            )
