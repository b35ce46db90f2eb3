"""The collection ledger: which tasks exist, where each stands, every response received.

The rows live in the database (:mod:`citeaudit.store.collections`); the ledger speaks in tasks.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from citeaudit.collect.plan import NO_LOCALE, Task
from citeaudit.core.errors import InvalidValue
from citeaudit.core.model import Protocol
from citeaudit.core.protocol import fingerprint
from citeaudit.store import Store
from citeaudit.store import collections as ledger_rows

__all__ = ["Ledger", "TaskRow"]


@dataclass(frozen=True, slots=True)
class TaskRow:
    """A task as the ledger holds it."""

    pk: int
    task: Task
    state: str
    attempts: int
    payload_sha256: str | None


def _key(task: Task) -> ledger_rows.TaskKey:
    return (task.question_id, task.engine, task.locale or NO_LOCALE, task.repeat)


class Ledger:
    """Reads and writes one collection's tasks; every write is its own short transaction."""

    def __init__(self, store: Store, name: str, protocol: Protocol) -> None:
        self.store = store
        self.name = name
        self.protocol = protocol
        protocol_pk = store.ensure_protocol(protocol)
        row = ledger_rows.open_collection(store, name, protocol_pk)
        if row.protocol_pk != protocol_pk:
            other_id, other_version, other_fingerprint = ledger_rows.protocol_label(store, row.protocol_pk)
            raise InvalidValue(
                "--collection",
                "",
                f"collection {name!r} was collected under protocol {other_id}@{other_version} "
                f"({other_fingerprint[:12]}), not {protocol.id}@{protocol.version} ({fingerprint(protocol)[:12]}); "
                "choose another --collection",
            )
        self.pk = row.pk
        self.created_at = row.created_at

    def add(self, tasks: Iterable[Task]) -> int:
        """Record tasks not yet in the ledger as pending; returns how many were new."""
        return ledger_rows.add_tasks(self.store, self.pk, [_key(t) for t in tasks])

    def rows(self, tasks: Iterable[Task]) -> list[TaskRow]:
        """The ledger rows of ``tasks`` (in the given order)."""
        wanted = {_key(t): t for t in tasks}
        found = {
            row.key: TaskRow(row.pk, wanted[row.key], row.state, row.attempts, row.payload_sha256)
            for row in ledger_rows.task_states(self.store, self.pk)
            if row.key in wanted
        }
        return [found[key] for key in wanted if key in found]

    def archive(self, body: bytes, media_type: str) -> str:
        """Store a response body (content-addressed, immutable); returns its SHA-256."""
        return ledger_rows.archive_payload(self.store, body, media_type)

    def log_response(
        self, task_pk: int, attempt: int, url: str, status: int | None, error: str | None, sha: str | None
    ) -> None:
        """Append one exchange to the request log and count the attempt."""
        ledger_rows.log_response(self.store, task_pk, attempt, url, status, error, sha)

    def fetched(self, task_pk: int, sha: str) -> None:
        """The response to parse is archived."""
        ledger_rows.update_task(self.store, task_pk, {"state": "fetched", "payload_sha256": sha, "reason": None})

    def error(self, task_pk: int, reason: str) -> None:
        """No usable response (a rerun asks again)."""
        ledger_rows.update_task(self.store, task_pk, {"state": "error", "reason": reason})

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
        ledger_rows.update_task(
            self.store,
            task_pk,
            {
                "state": "done",
                "outcome": outcome,
                "answer_id": answer_id,
                "reason": reason,
                "usage": None if usage is None else json.dumps(usage, sort_keys=True),
                "cost_usd": cost,
            },
        )

    def payload(self, sha: str) -> bytes:
        """An archived body."""
        return ledger_rows.payload(self.store, sha)

    def import_origin(self, sha: str) -> str | None:
        """Where the import of this payload came from, if it was imported."""
        return ledger_rows.import_origin(self.store, sha)

    def summary(self) -> list[tuple[str, str, str | None, int, float | None]]:
        """``(engine, state, outcome, tasks, cost)`` for the whole collection."""
        return ledger_rows.collection_summary(self.store, self.pk)
