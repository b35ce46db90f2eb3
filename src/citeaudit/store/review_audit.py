"""The review workflow's audit log: every action of the web UI and the review commands appends one row, in the
transaction of the action itself (:func:`~citeaudit.store.review_base.append_log`); this part reads the log back
and records what was refused (a failed login, a form without its CSRF token)."""

from __future__ import annotations

import json
from collections.abc import Iterator

from citeaudit.store.review_base import ReviewPart, append_log
from citeaudit.store.review_records import AuditLogEntry

__all__ = ["AuditLog"]


class AuditLog(ReviewPart):
    """The append-only audit log (``ReviewStore.audit_log``)."""

    def log_event(self, actor: str, action: str, target: str, detail: object = None) -> None:
        """Append an audit-log row for something refused (a failed login, a form without its CSRF token)."""
        with self._transaction() as db:
            append_log(db, actor, action, target, None, detail)

    def entries(self) -> Iterator[AuditLogEntry]:
        """Every audit-log row in order."""
        for pk, at, actor, action, target, before, after in self._db.execute(
            "SELECT pk, at, actor, action, target, before, after FROM audit_log ORDER BY pk"
        ):
            yield AuditLogEntry(
                pk,
                at,
                actor,
                action,
                target,
                None if before is None else json.loads(before),
                None if after is None else json.loads(after),
            )
