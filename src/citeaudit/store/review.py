"""The review workflow's store: one connection to a citeaudit database for the web UI and the review commands,
split by concern into parts that share it.

A :class:`ReviewStore` only opens and closes the connection; what it does lives on its parts, each a small class
over the same connection (:class:`~citeaudit.store.review_base.ReviewPart`):

- ``store.accounts`` (:class:`~citeaudit.store.review_accounts.ReviewAccounts`): accounts, login sessions and the
  project's review settings;
- ``store.judgements`` (:class:`~citeaudit.store.review_judgements.ReviewJudgements`): an edge and its
  judgements, recording one by the policy's rules, importing and exporting files of them, policy outcomes;
- ``store.queue`` (:class:`~citeaudit.store.review_queue.ReviewQueue`): the reviewer queue, its filters and a
  reviewer's progress;
- ``store.evidence`` (:class:`~citeaudit.store.review_evidence.ReviewEvidence`): passages, links found for
  title-only sources and evidence groups;
- ``store.cross`` (:class:`~citeaudit.store.review_cross.ReviewCrossPairs`): the cross pairs' review pages and
  the judgements posted there;
- ``store.audit_log`` (:class:`~citeaudit.store.review_audit.AuditLog`): reading the audit log and recording what
  was refused.

The parts are attributes of one store rather than stores of their own because a web request uses several of them
(the edge page reads the settings, the edge, its judgements and passages) and should open one connection, not one
per concern. One short-lived store per request (the web server runs requests on several threads); every write is
one ``BEGIN IMMEDIATE`` transaction that also appends its audit-log row, so an action and its record never part.
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType

from citeaudit.core.clock import Clock, system_clock
from citeaudit.core.errors import ReviewRefused
from citeaudit.core.review_policy import StoredJudgement
from citeaudit.store.leases import LEASE_SECONDS, LeaseStore
from citeaudit.store.review_accounts import ReviewAccounts
from citeaudit.store.review_audit import AuditLog
from citeaudit.store.review_base import POLICIES, code_label, now, open_review
from citeaudit.store.review_cross import ReviewCrossPairs
from citeaudit.store.review_evidence import ReviewEvidence
from citeaudit.store.review_judgements import ReviewJudgements
from citeaudit.store.review_queue import KEY_SPACE, QUEUE_KEY, ReviewQueue
from citeaudit.store.review_records import (
    AuditLogEntry,
    EdgeView,
    GroupView,
    QueueFilter,
    QueueRow,
    Reviewer,
    ShownPassage,
)
from citeaudit.store.sqlite import Store
from citeaudit.store.suggestions import StoredPassage

__all__ = [
    "KEY_SPACE",
    "POLICIES",
    "QUEUE_KEY",
    "AuditLogEntry",
    "EdgeView",
    "GroupView",
    "QueueFilter",
    "QueueRow",
    "ReviewRefused",
    "ReviewStore",
    "Reviewer",
    "ShownPassage",
    "StoredJudgement",
    "StoredPassage",
    "code_label",
    "now",
]


class ReviewStore:
    """A connection to a citeaudit database for the review UI, with its parts as attributes. Use as a context
    manager."""

    def __init__(self, path: str | Path, busy_timeout: float = 30.0) -> None:
        """Open the database at ``path``; a write waits up to ``busy_timeout`` seconds for another writer (an
        import) and then raises :class:`~citeaudit.core.errors.DatabaseBusy`."""
        # Reviewers judge at once from the web server's threads: a write waits for another's lock.
        connection = open_review(Path(path), busy_timeout)
        self._connection = connection
        self.path = connection.path
        self._db = connection.db
        self.accounts = ReviewAccounts(connection)
        """Accounts, sessions and settings."""
        self.judgements = ReviewJudgements(connection)
        """Edges' judgements and their policy outcomes."""
        self.queue = ReviewQueue(connection)
        """The reviewer queue and progress."""
        self.evidence = ReviewEvidence(connection)
        """Passages, links found for sources, evidence groups."""
        self.cross = ReviewCrossPairs(connection)
        """Cross pairs as reviewers judge them."""
        self.audit_log = AuditLog(connection)
        """The audit log."""

    @staticmethod
    def prepare(path: str | Path) -> None:
        """Create or migrate the database at ``path`` to the current schema."""
        Store(path).close()

    def __enter__(self) -> ReviewStore:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection."""
        self._db.close()

    def leases(self, clock: Clock = system_clock, lease_seconds: float = LEASE_SECONDS) -> LeaseStore:
        """Leases, skips and recent labels (:mod:`citeaudit.store.leases`) over this connection."""
        return LeaseStore(self._db, self._connection.transaction, clock, lease_seconds)
