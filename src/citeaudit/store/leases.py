"""A reviewer's working set: reservations (leases) of the edges they have open, the edges they skipped, and their
recent labels.

A lease reserves an edge for one reviewer for :data:`LEASE_SECONDS`: the queue's next edge takes one, the open
page renews it, a submission, a skip or a logout drops it, and past its expiry it is void. An edge is leased to at
most as many reviewers as still owe it a review (one under single review; under double, two less those who
reviewed it; one adjudicator for a dispute), so reviewers working at once are handed different edges instead of
racing for the same one and being refused. Leases decide what the queue hands out, never what is recorded: the
policy's rules (:mod:`citeaudit.store.review_policy`) stay the one gate of a judgement.

Every write is one ``BEGIN IMMEDIATE`` transaction, so two reviewers asking at once cannot both take the last
room on an edge. Times come from an injected clock (:data:`citeaudit.core.clock.Clock`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta

from citeaudit.core.clock import Clock, iso, system_clock
from citeaudit.core.model import Label, Stage
from citeaudit.core.scoring import DISPUTED_CODE, PENDING_CODE
from citeaudit.store.connection import Transactions
from citeaudit.store.reading import CURRENT_CLAIM
from citeaudit.store.review_base import append_log
from citeaudit.store.review_records import Reviewer

__all__ = ["LEASE_SECONDS", "LEASE_WAIT", "LeaseStore", "RecentLabel", "SkippedEdge"]

LEASE_SECONDS = 300.0
"""How long a lease lasts unless renewed (the open page renews it every minute)."""

LEASE_WAIT = 2.0
"""Seconds a write of this store waits for another writer before it raises
:class:`~citeaudit.core.errors.DatabaseBusy`: long enough for other reviewers' submissions (milliseconds each),
short enough that a page is not held up behind an import; the web app then serves the page without a lease."""

_OPEN_CODES = f"({PENDING_CODE}, {DISPUTED_CODE})"


@dataclass(frozen=True, slots=True)
class SkippedEdge:
    """An edge a reviewer put off and has not judged since."""

    edge_pk: int
    """Edge row id."""
    claim: str
    """Claim text."""
    source: str
    """Source title, URL or key."""
    note: str | None
    """Why, in the reviewer's words."""
    skipped_at: str
    """When (ISO 8601 UTC); the oldest skip comes back first."""


@dataclass(frozen=True, slots=True)
class RecentLabel:
    """A reviewer's latest review of one edge (their own label only)."""

    edge_pk: int
    """Edge row id."""
    claim: str
    """Claim text."""
    source: str
    """Source title, URL or key."""
    label: Label
    """Their latest label of the edge."""
    at: str
    """When they gave it."""
    revisions: int
    """How many reviews of the edge they recorded (1 for a first label)."""
    decides: bool
    """Whether a revision now would decide the edge's state; under double review a change made after the second
    reviewer's review is recorded but never decides it (an adjudication settles a dispute)."""


class LeaseStore:
    """Leases, skips and recent labels over one open connection (see the module docstring)."""

    def __init__(
        self,
        db: sqlite3.Connection,
        transaction: Transactions,
        clock: Clock = system_clock,
        lease_seconds: float = LEASE_SECONDS,
        wait: float = LEASE_WAIT,
    ) -> None:
        """Work on ``db`` with its write transactions ``transaction``; ``clock`` stamps and expires leases; a
        write waits up to ``wait`` seconds for another writer."""
        if lease_seconds <= 0:
            raise ValueError(f"a lease must last more than 0 s, not {lease_seconds!r}")
        self._db = db
        self._transaction = transaction
        self._clock = clock
        self._lease = timedelta(seconds=lease_seconds)
        self._wait_ms = max(0, int(wait * 1000))

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction that waits at most ``wait`` seconds to begin (the connection's own wait is put
        back as soon as it has begun, or failed to)."""
        (before,) = self._db.execute("PRAGMA busy_timeout").fetchone()
        self._db.execute(f"PRAGMA busy_timeout = {self._wait_ms}")
        restored = False
        try:
            with self._transaction() as db:
                db.execute(f"PRAGMA busy_timeout = {int(before)}")
                restored = True
                yield db
        finally:
            if not restored:
                self._db.execute(f"PRAGMA busy_timeout = {int(before)}")

    # -- leases ------------------------------------------------------------------------------------

    def take(self, reviewer: Reviewer, candidates: Sequence[int], stage: Stage, reviews_required: int) -> int | None:
        """Lease to ``reviewer`` the first of ``candidates`` with room left for them, in one transaction, and drop
        any other lease they hold (a reviewer has one edge open at a time); ``None`` when every candidate is full.

        Room on an edge for a review: ``reviews_required`` less the people who reviewed it less the other
        reviewers holding a live lease; for an adjudication: one less the other live leases. An edge the reviewer
        already leases has room for them."""
        if not candidates:
            return None
        moment = self._clock()
        with self._write() as db:
            db.execute("DELETE FROM review_leases WHERE expires_at <= ?", (iso(moment),))
            for edge_pk in candidates:
                if self._room(db, edge_pk, reviewer.pk, stage, reviews_required) > 0:
                    db.execute(
                        "DELETE FROM review_leases WHERE reviewer_pk = ? AND edge_pk != ?", (reviewer.pk, edge_pk)
                    )
                    db.execute(
                        "INSERT OR REPLACE INTO review_leases VALUES (?, ?, ?, ?)",
                        (edge_pk, reviewer.pk, iso(moment), iso(moment + self._lease)),
                    )
                    return edge_pk
        return None

    @staticmethod
    def _room(db: sqlite3.Connection, edge_pk: int, reviewer_pk: int, stage: Stage, reviews_required: int) -> int:
        """How many more reviewers besides ``reviewer_pk`` may lease the edge (live leases only: expired ones are
        deleted first). For a review, the lease of someone who has reviewed the edge holds no place: their review
        counts instead (a submission gives the lease up, but one left behind is not counted twice)."""
        if stage is Stage.ADJUDICATION:
            (others,) = db.execute(
                "SELECT count(*) FROM review_leases WHERE edge_pk = ? AND reviewer_pk != ?", (edge_pk, reviewer_pk)
            ).fetchone()
            return 1 - int(others)
        (others,) = db.execute(
            "SELECT count(*) FROM review_leases l JOIN reviewers r ON r.pk = l.reviewer_pk WHERE l.edge_pk = ? "
            "AND l.reviewer_pk != ? AND NOT EXISTS (SELECT 1 FROM judgements j WHERE j.edge_pk = l.edge_pk "
            "AND j.reviewer = r.name AND j.origin = 'human' AND j.stage = 'review')",
            (edge_pk, reviewer_pk),
        ).fetchone()
        (reviewed,) = db.execute(
            "SELECT count(DISTINCT reviewer) FROM judgements WHERE edge_pk = ? AND origin = 'human' "
            "AND stage = 'review'",
            (edge_pk,),
        ).fetchone()
        return reviews_required - int(reviewed) - int(others)

    def renew(self, reviewer: Reviewer, edge_pk: int) -> str | None:
        """Extend ``reviewer``'s live lease on the edge by a full term; its new expiry, or ``None`` when they hold
        none (it lapsed, or they never had it)."""
        moment = self._clock()
        until = iso(moment + self._lease)
        with self._write() as db:
            renewed = db.execute(
                "UPDATE review_leases SET expires_at = ? WHERE edge_pk = ? AND reviewer_pk = ? AND expires_at > ?",
                (until, edge_pk, reviewer.pk, iso(moment)),
            ).rowcount
        return until if renewed else None

    def release(self, reviewer: Reviewer, edge_pk: int | None = None) -> None:
        """Drop ``reviewer``'s lease on the edge (every lease of theirs when ``edge_pk`` is ``None``)."""
        with self._write() as db:
            if edge_pk is None:
                db.execute("DELETE FROM review_leases WHERE reviewer_pk = ?", (reviewer.pk,))
            else:
                db.execute("DELETE FROM review_leases WHERE reviewer_pk = ? AND edge_pk = ?", (reviewer.pk, edge_pk))

    def holds(self, reviewer: Reviewer, edge_pk: int) -> str | None:
        """The expiry of ``reviewer``'s live lease on the edge, or ``None``."""
        row = self._db.execute(
            "SELECT expires_at FROM review_leases WHERE edge_pk = ? AND reviewer_pk = ? AND expires_at > ?",
            (edge_pk, reviewer.pk, iso(self._clock())),
        ).fetchone()
        return None if row is None else str(row[0])

    def holders(self, edge_pk: int) -> int:
        """How many reviewers hold a live lease on the edge."""
        (n,) = self._db.execute(
            "SELECT count(*) FROM review_leases WHERE edge_pk = ? AND expires_at > ?", (edge_pk, iso(self._clock()))
        ).fetchone()
        return int(n)

    # -- skips -------------------------------------------------------------------------------------

    def skip(self, reviewer: Reviewer, edge_pk: int, note: str | None) -> None:
        """Put the edge at the back of ``reviewer``'s queue with their note (a second skip moves it to the back
        again), drop their lease on it and log it."""
        at = iso(self._clock())
        with self._transaction() as db:
            db.execute(
                "INSERT OR REPLACE INTO review_skips (edge_pk, reviewer_pk, note, skipped_at) VALUES (?, ?, ?, ?)",
                (edge_pk, reviewer.pk, note, at),
            )
            db.execute("DELETE FROM review_leases WHERE reviewer_pk = ? AND edge_pk = ?", (reviewer.pk, edge_pk))
            append_log(db, reviewer.name, "edge.skip", f"edge:{edge_pk}", None, {"note": note}, at)

    def _skipped_sql(self) -> str:
        return (
            "FROM review_skips k JOIN edges e ON e.pk = k.edge_pk JOIN claims c ON c.pk = e.claim_pk "
            f"WHERE k.reviewer_pk = ? AND {CURRENT_CLAIM} AND e.final_code IN {_OPEN_CODES} AND NOT EXISTS "
            "(SELECT 1 FROM judgements j WHERE j.edge_pk = k.edge_pk AND j.reviewer = ? AND j.origin = 'human')"
        )

    def skipped(self, reviewer: Reviewer, limit: int = 200) -> list[SkippedEdge]:
        """The edges ``reviewer`` skipped and has not judged since (and that still need a review or an
        adjudication), oldest skip first."""
        return [
            SkippedEdge(*row)
            for row in self._db.execute(
                "SELECT k.edge_pk, c.text, (SELECT coalesce(s.title, s.url, s.key) FROM sources s "
                f"WHERE s.pk = e.source_pk), k.note, k.skipped_at {self._skipped_sql()} "
                "ORDER BY k.skipped_at, k.edge_pk LIMIT ?",
                (reviewer.pk, reviewer.name, limit),
            )
        ]

    def skipped_count(self, reviewer: Reviewer) -> int:
        """How many edges :meth:`skipped` holds in all."""
        (n,) = self._db.execute(f"SELECT count(*) {self._skipped_sql()}", (reviewer.pk, reviewer.name)).fetchone()
        return int(n)

    def skip_times(self, reviewer: Reviewer, edge_pks: Sequence[int]) -> dict[int, str]:
        """When ``reviewer`` last skipped each of ``edge_pks`` (those never skipped are left out)."""
        if not edge_pks:
            return {}
        marks = ", ".join("?" * len(edge_pks))
        return {
            int(pk): str(at)
            for pk, at in self._db.execute(
                f"SELECT edge_pk, skipped_at FROM review_skips WHERE reviewer_pk = ? AND edge_pk IN ({marks})",
                (reviewer.pk, *edge_pks),
            )
        }

    # -- recent labels -----------------------------------------------------------------------------

    def recent_labels(self, reviewer: Reviewer, reviews_required: int, limit: int = 50) -> list[RecentLabel]:
        """``reviewer``'s latest review of each edge they reviewed, newest first: their own labels only, never
        anyone else's."""
        rows = self._db.execute(
            "SELECT j.edge_pk, c.text, (SELECT coalesce(s.title, s.url, s.key) FROM sources s "
            "WHERE s.pk = e.source_pk), j.label, j.created_at, n.reviews, "
            "(SELECT count(DISTINCT o.reviewer) FROM judgements o WHERE o.edge_pk = j.edge_pk "
            "AND o.origin = 'human' AND o.stage = 'review') "
            "FROM (SELECT edge_pk, max(pk) AS last, count(*) AS reviews FROM judgements WHERE reviewer = ? "
            "AND origin = 'human' AND stage = 'review' GROUP BY edge_pk) n "
            "JOIN judgements j ON j.pk = n.last JOIN edges e ON e.pk = j.edge_pk JOIN claims c ON c.pk = e.claim_pk "
            f"WHERE {CURRENT_CLAIM} ORDER BY j.pk DESC LIMIT ?",
            (reviewer.name, limit),
        ).fetchall()
        return [
            RecentLabel(
                int(pk),
                claim,
                source,
                Label(label),
                at or "",
                int(reviews),
                # single review: the reviewer's latest label always counts; double: only until the set is complete
                reviews_required <= 1 or int(reviewers) < reviews_required,
            )
            for pk, claim, source, label, at, reviews, reviewers in rows
        ]

    def last_label(self, reviewer: Reviewer) -> int | None:
        """The edge of ``reviewer``'s most recent review, or ``None``."""
        row = self._db.execute(
            "SELECT edge_pk FROM judgements WHERE reviewer = ? AND origin = 'human' AND stage = 'review' "
            "ORDER BY pk DESC LIMIT 1",
            (reviewer.name,),
        ).fetchone()
        return None if row is None else int(row[0])
