"""The review workflow's SQL: accounts, sessions, settings, the reviewer queue, judgements recorded from the web
UI, evidence groups, URLs attached to title-only sources and the append-only audit log.

One short-lived connection per request (the web server runs requests on several threads); every write is one
``BEGIN IMMEDIATE`` transaction that also appends its audit-log row, so an action and its record never part.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType

from citeaudit.core.clock import Clock, system_clock, utc_now
from citeaudit.core.errors import DuplicateId, InvalidValue, StoreError, UnknownReference
from citeaudit.core.identity import url_location
from citeaudit.core.model import Judgement, Label, Origin, ReviewState, Stage
from citeaudit.core.scoring import DISPUTED_CODE, LABEL_CODE, LABELS, PENDING_CODE, edge_code
from citeaudit.store.connection import Transactions, connect
from citeaudit.store.judgements import (
    INSERT_SHOWN_JUDGEMENT,
    JUDGEMENT_COLUMNS,
    judgement_from_row,
    judgement_row,
)
from citeaudit.store.leases import LEASE_SECONDS, LeaseStore
from citeaudit.store.migrations import SCHEMA_VERSION
from citeaudit.store.reading import CURRENT_CLAIM
from citeaudit.store.resolution import document_passages, latest_document
from citeaudit.store.review_policy import (
    DOORS,
    ReviewRefused,
    counted_judgements,
    edge_judgement_refusal,
    require_account,
)
from citeaudit.store.review_records import (
    AuditLogEntry,
    EdgeView,
    FileJudgement,
    GroupView,
    Passage,
    QueueFilter,
    QueueRow,
    Reviewer,
    StoredJudgement,
)
from citeaudit.store.sqlite import REVIEW_POLICIES, Store
from citeaudit.store.suggestions import StoredPassage, latest_passages

__all__ = [
    "POLICIES",
    "QUEUE_KEY",
    "AuditLogEntry",
    "EdgeView",
    "GroupView",
    "Passage",
    "QueueFilter",
    "QueueRow",
    "ReviewRefused",
    "ReviewStore",
    "Reviewer",
    "StoredJudgement",
    "StoredPassage",
]

POLICIES: Mapping[str, int] = REVIEW_POLICIES
"""Review policies and how many independent human reviews each needs before an edge has a final label."""

QUEUE_KEY = "((e.pk * 2654435761) % 4294967296)"
"""The queue's order key: the exact expression of the ``edges_queue`` index (a multiplicative hash of pk)."""

KEY_SPACE = 4294967296
"""Queue keys lie in ``[0, KEY_SPACE)``."""

ROLES = ("reviewer", "adjudicator", "admin")
"""Account roles, least to most rights."""

_DEFAULT_SETTINGS = {"policy": "single", "show_model_suggestions": "false"}

_NEEDED_CODES: Mapping[str, frozenset[int]] = {
    "review": frozenset({PENDING_CODE}),
    "adjudicate": frozenset({DISPUTED_CODE}),
}
"""Final codes of the edges each queue lists (``browse`` lists every edge)."""

COUNT_SECONDS = 10.0
"""How long a count over every edge (progress, retired edges) is reused before it is counted again."""

_COUNTS: dict[tuple[str, str], tuple[tuple[int, int], float, int]] = {}
_COUNTS_LOCK = threading.Lock()
_RECOUNTING: dict[tuple[str, str], threading.Lock] = {}

_NARROW_FILTER = 0.02
"""Below this share of answers a filter is walked from its answers, not in edge key order."""


def _state_codes(state: ReviewState, reviews_required: int) -> frozenset[int]:
    """Final codes an edge in ``state`` can hold under a policy."""
    labels = frozenset(LABEL_CODE.values())
    if state is ReviewState.PENDING:
        return frozenset({PENDING_CODE})
    if state is ReviewState.DISPUTED:
        return frozenset({DISPUTED_CODE})
    if state is ReviewState.LABELLED and reviews_required > 1:
        return frozenset({PENDING_CODE})
    return labels


def now() -> str:
    """The current UTC time, ISO-8601 with microseconds (judgements are ordered by it)."""
    return utc_now("microseconds")


def code_label(code: int) -> Label | None:
    """The final label a stored ``final_code`` stands for (``None`` for pending or disputed)."""
    return LABELS[code] if 0 <= code < len(LABELS) else None


class ReviewStore:
    """A connection to a citeaudit database for the review UI. Use as a context manager."""

    def __init__(self, path: str | Path, busy_timeout: float = 30.0) -> None:
        """Open the database at ``path``; a write waits up to ``busy_timeout`` seconds for another writer (an
        import) and then raises :class:`~citeaudit.core.errors.DatabaseBusy`."""
        self.path = Path(path)
        # Reviewers judge at once from the web server's threads: a write waits for another's lock.
        self._busy_timeout = busy_timeout
        self._db = connect(self.path, busy_timeout=busy_timeout, shared=True)
        self._transaction = Transactions(self._db, self.path, busy_timeout)
        try:
            version = int(self._db.execute("PRAGMA user_version").fetchone()[0])
        except sqlite3.Error as exc:
            self._db.close()
            raise StoreError(f"cannot open database {str(self.path)!r}: {exc}") from None
        if version != SCHEMA_VERSION:
            self._db.close()
            raise StoreError(
                f"{str(self.path)!r} has schema version {version}, not {SCHEMA_VERSION}; open it once with "
                "`ReviewStore.prepare` (done by `citeaudit review serve`)"
            )

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
        return LeaseStore(self._db, self._transaction, clock, lease_seconds)

    @staticmethod
    def _log(db: sqlite3.Connection, actor: str, action: str, target: str, before: object, after: object) -> None:
        db.execute(
            "INSERT INTO audit_log (at, actor, action, target, before, after) VALUES (?, ?, ?, ?, ?, ?)",
            (
                now(),
                actor,
                action,
                target,
                None if before is None else json.dumps(before, sort_keys=True, ensure_ascii=False),
                None if after is None else json.dumps(after, sort_keys=True, ensure_ascii=False),
            ),
        )

    # -- settings and accounts ---------------------------------------------------------------------

    def settings(self) -> dict[str, str]:
        """Project settings (``policy``, ``show_model_suggestions``) with their defaults."""
        stored = dict(self._db.execute("SELECT key, value FROM review_settings").fetchall())
        return {**_DEFAULT_SETTINGS, **stored}

    def reviews_required(self) -> int:
        """Independent human reviews the current policy needs."""
        return POLICIES[self.settings()["policy"]]

    def set_setting(self, actor: str, key: str, value: str) -> int:
        """Change a setting (logged). Changing the policy recomputes every judged edge's state; returns how many
        edges changed."""
        if key not in _DEFAULT_SETTINGS:
            raise InvalidValue("settings", key, f"unknown setting {key!r}; settings: {', '.join(_DEFAULT_SETTINGS)}")
        if key == "policy" and value not in POLICIES:
            raise InvalidValue("settings", key, f"policy {value!r} is not one of {', '.join(POLICIES)}")
        if key == "show_model_suggestions" and value not in ("true", "false"):
            raise InvalidValue("settings", key, f"{value!r} is not true or false")
        with self._transaction() as db:
            before = self.settings()[key]
            if before == value:
                return 0
            db.execute("INSERT OR REPLACE INTO review_settings VALUES (?, ?)", (key, value))
            self._log(db, actor, "setting", key, before, value)
            return self._recompute_all(db, POLICIES[value]) if key == "policy" else 0

    def _recompute_all(self, db: sqlite3.Connection, reviews_required: int) -> int:
        changed = 0
        judged = [pk for (pk,) in db.execute("SELECT DISTINCT edge_pk FROM judgements WHERE origin = 'human'")]
        for edge_pk in judged:
            changed += self._recompute(db, edge_pk, reviews_required)[2]
        return changed

    def _recompute(self, db: sqlite3.Connection, edge_pk: int, reviews_required: int) -> tuple[object, object, bool]:
        """Bring one edge's stored state in step with its judgements: ``(before, after, changed)``."""
        state, code = db.execute("SELECT review_state, final_code FROM edges WHERE pk = ?", (edge_pk,)).fetchone()
        judgements = counted_judgements(self._judgements(db, edge_pk), reviews_required)
        new_state, new_code = edge_code(judgements, reviews_required)
        before = {"review_state": state, "final_label": code_label(code)}
        after = {"review_state": str(new_state), "final_label": code_label(new_code)}
        if (state, code) != (str(new_state), new_code):
            db.execute(
                "UPDATE edges SET review_state = ?, final_code = ? WHERE pk = ?", (str(new_state), new_code, edge_pk)
            )
            return before, after, True
        return before, after, False

    def add_reviewer(self, name: str, role: str, password_hash: str, actor: str = "cli") -> Reviewer:
        """Create an account; a name already taken is a :class:`DuplicateId`."""
        if role not in ROLES:
            raise InvalidValue("reviewer", "role", f"role {role!r} is not one of {', '.join(ROLES)}")
        with self._transaction() as db:
            if db.execute("SELECT 1 FROM reviewers WHERE name = ?", (name,)).fetchone():
                raise DuplicateId(str(self.path), "reviewers", f"reviewer {name!r} already exists")
            pk = db.execute(
                "INSERT INTO reviewers (name, role, password_hash, created_at) VALUES (?, ?, ?, ?)",
                (name, role, password_hash, now()),
            ).lastrowid
            assert pk is not None
            self._log(db, actor, "reviewer.add", f"reviewer:{name}", None, {"role": role})
        return Reviewer(pk, name, role, password_hash)

    def reviewer(self, name: str) -> Reviewer | None:
        """The account called ``name``."""
        row = self._db.execute("SELECT pk, name, role, password_hash FROM reviewers WHERE name = ?", (name,)).fetchone()
        return None if row is None else Reviewer(*row)

    def open_session(
        self, reviewer: Reviewer, token_sha256: str, csrf: str, expires_at: str, at: str | None = None
    ) -> None:
        """Record a login (logged); sessions expired at ``at`` (default now) are dropped on the way."""
        with self._transaction() as db:
            db.execute("DELETE FROM review_sessions WHERE expires_at <= ?", (at or now(),))
            db.execute(
                "INSERT INTO review_sessions VALUES (?, ?, ?, ?, ?)",
                (token_sha256, reviewer.pk, csrf, now(), expires_at),
            )
            self._log(db, reviewer.name, "login", f"reviewer:{reviewer.name}", None, None)

    def session(self, token_sha256: str, at: str) -> tuple[Reviewer, str] | None:
        """The account and CSRF token of a live session (``None`` when unknown or expired)."""
        row = self._db.execute(
            "SELECT r.pk, r.name, r.role, r.password_hash, s.csrf FROM review_sessions s "
            "JOIN reviewers r ON r.pk = s.reviewer_pk WHERE s.token_sha256 = ? AND s.expires_at > ?",
            (token_sha256, at),
        ).fetchone()
        return None if row is None else (Reviewer(*row[:4]), row[4])

    def close_session(self, token_sha256: str, actor: str) -> None:
        """Log out (logged)."""
        with self._transaction() as db:
            db.execute("DELETE FROM review_sessions WHERE token_sha256 = ?", (token_sha256,))
            self._log(db, actor, "logout", f"reviewer:{actor}", None, None)

    # -- queue -------------------------------------------------------------------------------------

    def queue(
        self,
        reviewer: Reviewer,
        needs: str,
        filters: QueueFilter,
        start: int,
        after: tuple[int, int] | None,
        limit: int,
    ) -> list[QueueRow]:
        """Edges in queue order from key ``start`` (wrapping once round the key space), after the keyset cursor
        ``after`` = ``(lap, key)``, at most ``limit``.

        ``needs`` picks what the account has to do: ``review`` (no final label yet, not judged by this reviewer),
        ``adjudicate`` (disputed) or ``browse`` (any edge; admins only, labels are never listed).
        """
        rows: list[QueueRow] = []
        laps = [(0, start, KEY_SPACE), (1, 0, start)]
        for lap, low, high in laps:
            if after is not None and lap < after[0]:
                continue
            lower = max(low, after[1] + 1) if after is not None and lap == after[0] else low
            if lower >= high:
                continue
            rows.extend(self._queue_lap(reviewer, needs, filters, lower, high, limit - len(rows)))
            if len(rows) >= limit:
                break
        return rows

    def _queue_lap(
        self, reviewer: Reviewer, needs: str, filters: QueueFilter, low: int, high: int, limit: int
    ) -> list[QueueRow]:
        codes = _NEEDED_CODES.get(needs)
        if needs != "browse" and codes is None:
            raise ValueError(f"needs must be review, adjudicate or browse, not {needs!r}")
        where = [f"{QUEUE_KEY} >= ?", f"{QUEUE_KEY} < ?", CURRENT_CLAIM]
        params: list[object] = [low, high]
        if needs == "review" and filters.state is not None:
            # Blind: every edge a reviewer may review is pending from where they stand; another reviewer's label
            # must not move it between their lists.
            if filters.state is not ReviewState.PENDING:
                return []
        elif filters.state is not None:
            # a state whose edges can never need this action lists nothing (and scans nothing)
            if codes is not None and not codes & _state_codes(filters.state, self.reviews_required()):
                return []
            where.append("e.review_state = ?")
            params.append(str(filters.state))
        if codes is not None:
            (code,) = codes
            where.append("e.final_code = ?" if filters.state is None else "+e.final_code = ?")
            params.append(code)
        if needs == "review":
            where.append("NOT EXISTS (SELECT 1 FROM judgements j WHERE j.edge_pk = e.pk AND j.reviewer = ?)")
            params.append(reviewer.name)
        answer_where, answer_params = self._answer_conditions(filters)
        if answer_where is None:
            return []
        edges_first = True
        if answer_where:
            # Walking edges in key order finds a page quickly when the filter keeps a fair share of answers; for
            # a narrow filter, start from its answers and sort their (few) edges instead.
            (matching,) = self._db.execute(
                f"SELECT count(*) FROM answers a WHERE {' AND '.join(answer_where)}", answer_params
            ).fetchone()
            if matching == 0:
                return []
            (total,) = self._db.execute("SELECT coalesce(max(pk), 0) FROM answers").fetchone()
            edges_first = matching >= _NARROW_FILTER * total
        joins = (
            "edges e CROSS JOIN claims c ON c.pk = e.claim_pk CROSS JOIN answers a ON a.pk = c.answer_pk"
            if edges_first
            else "answers a CROSS JOIN claims c ON c.answer_pk = a.pk CROSS JOIN edges e ON e.claim_pk = c.pk"
        )
        sql = (
            f"SELECT e.pk, {QUEUE_KEY}, c.text, coalesce(s.title, s.url, s.key), r.id, "
            "coalesce(a.platform, r.platform), q.id "
            f"FROM {joins} JOIN runs r ON r.pk = a.run_pk JOIN questions q ON q.pk = a.question_pk "
            "JOIN sources s ON s.pk = e.source_pk "
            f"WHERE {' AND '.join(where + answer_where)} ORDER BY {QUEUE_KEY} LIMIT ?"
        )
        return [QueueRow(*row) for row in self._db.execute(sql, (*params, *answer_params, limit))]

    def _answer_conditions(self, filters: QueueFilter) -> tuple[list[str] | None, list[object]]:
        """Conditions on ``answers a`` for the run, platform and question filters (ids turned into row ids);
        ``None`` when a named run or question does not exist."""
        where: list[str] = []
        params: list[object] = []
        for column, table, value in (("run_pk", "runs", filters.run), ("question_pk", "questions", filters.question)):
            if value is None:
                continue
            pks = [pk for (pk,) in self._db.execute(f"SELECT pk FROM {table} WHERE id = ?", (value,))]
            if not pks:
                return None, []
            where.append(f"a.{column} IN ({', '.join('?' * len(pks))})")
            params.extend(pks)
        if filters.platform is not None:
            # An imported answer carries its platform on its run; an answer of its own platform overrides it.
            where.append(
                "(a.platform = ? OR (a.platform IS NULL AND a.run_pk IN (SELECT pk FROM runs WHERE platform = ?)))"
            )
            params.extend((filters.platform, filters.platform))
        return where, params

    def filter_values(self) -> dict[str, list[str]]:
        """Values the queue filters offer (runs, platforms, questions)."""
        return {
            "run": [r for (r,) in self._db.execute("SELECT id FROM runs ORDER BY id")],
            "platform": sorted(
                p
                for (p,) in self._db.execute(
                    "SELECT platform FROM runs WHERE platform IS NOT NULL "
                    "UNION SELECT DISTINCT platform FROM answers WHERE platform IS NOT NULL"
                )
            ),
            "question": [q for (q,) in self._db.execute("SELECT DISTINCT id FROM questions ORDER BY id")],
        }

    # -- one edge ----------------------------------------------------------------------------------

    def edge(self, edge_pk: int) -> EdgeView | None:
        """The edge, its claim, answer and source."""
        row = self._db.execute(
            'SELECT e.pk, e.review_state, e.final_code, c.pk, c.id, c.text, c.start, c."end", c.severity, a.id, '
            "a.text, coalesce(a.platform, r.platform), r.id, q.id, q.text, s.pk, s.key, s.url, s.resolved_url, "
            "s.title, s.status, "
            "s.reason, e.n_locations FROM edges e JOIN claims c ON c.pk = e.claim_pk "
            "JOIN answers a ON a.pk = c.answer_pk JOIN runs r ON r.pk = a.run_pk "
            "JOIN questions q ON q.pk = a.question_pk JOIN sources s ON s.pk = e.source_pk WHERE e.pk = ?",
            (edge_pk,),
        ).fetchone()
        if row is None:
            return None
        return EdgeView(row[0], ReviewState(row[1]), *row[2:])

    @staticmethod
    def _judgements(db: sqlite3.Connection, edge_pk: int) -> list[StoredJudgement]:
        return [
            StoredJudgement(row[0], judgement_from_row(row))
            for row in db.execute(
                f"SELECT {JUDGEMENT_COLUMNS} FROM judgements j WHERE j.edge_pk = ? ORDER BY j.pk", (edge_pk,)
            )
        ]

    def judgements(self, edge_pk: int) -> list[StoredJudgement]:
        """Every judgement on the edge, oldest first. The web layer decides which of them a viewer may see."""
        return self._judgements(self._db, edge_pk)

    def has_judged(self, edge_pk: int, reviewer: str) -> bool:
        """Whether ``reviewer`` has a judgement of their own on the edge."""
        return (
            self._db.execute(
                "SELECT 1 FROM judgements WHERE edge_pk = ? AND reviewer = ? AND origin = 'human'", (edge_pk, reviewer)
            ).fetchone()
            is not None
        )

    def record_judgement(
        self,
        edge_pk: int,
        judgement: Judgement,
        submission: str,
        *,
        door: str = "api",
        detail: Mapping[str, object] | None = None,
        suggestions_shown: bool | None = None,
    ) -> tuple[bool, ReviewState]:
        """Append a person's judgement and bring the edge's state in step, in one transaction with its audit-log
        row.

        The rules every door follows are checked inside that transaction
        (:func:`citeaudit.store.review_policy.edge_judgement_refusal`), so two reviewers submitting at once
        cannot both pass them: the reviewer must be a review account, and its role (read from the account, never
        from the caller), the edge's state, its reviewers and its claim (a retired claim takes no judgement)
        must allow the review or adjudication; else :class:`ReviewRefused` and nothing is written.

        ``door`` (one of :data:`~citeaudit.store.review_policy.DOORS`) and ``detail`` (where a quoted passage was
        selected, the file and row it came from) go into the audit-log row. A submission id seen before records
        nothing (a retried form post). ``suggestions_shown`` is whether the page the person judged on showed
        model suggestions (``None`` for a door without a page); stored with the judgement, it makes the effective
        protocol of a scope holding it record the assistance. Returns ``(recorded, new state)``.
        """
        if door not in DOORS:
            raise InvalidValue("review", "door", f"door {door!r} is not one of {', '.join(DOORS)}")
        with self._transaction() as db:
            if db.execute("SELECT 1 FROM judgements WHERE submission = ?", (submission,)).fetchone():
                (state,) = db.execute("SELECT review_state FROM edges WHERE pk = ?", (edge_pk,)).fetchone()
                return False, ReviewState(state)
            if db.execute("SELECT 1 FROM edges WHERE pk = ?", (edge_pk,)).fetchone() is None:
                raise UnknownReference("review", f"edge {edge_pk}", f"no edge {edge_pk!r}")
            why = edge_judgement_refusal(db, edge_pk, judgement)
            if why is not None:
                raise ReviewRefused(f"edge {edge_pk}: {why}")
            shown = None if suggestions_shown is None else int(suggestions_shown)
            pk = db.execute(INSERT_SHOWN_JUDGEMENT, (*judgement_row(edge_pk, judgement, submission), shown)).lastrowid
            (code_before,) = db.execute("SELECT final_code FROM edges WHERE pk = ?", (edge_pk,)).fetchone()
            before, after, _ = self._recompute(db, edge_pk, self.reviews_required())
            (code_after,) = db.execute("SELECT final_code FROM edges WHERE pk = ?", (edge_pk,)).fetchone()
            assert isinstance(after, dict)
            self._log(
                db,
                judgement.reviewer or "",
                "judgement" if judgement.stage is Stage.REVIEW else "adjudication",
                f"edge:{edge_pk}",
                before,
                {
                    **after,
                    "judgement": pk,
                    "label": str(judgement.label),
                    "rationale": judgement.reasoning,
                    "door": door,
                    **({} if suggestions_shown is None else {"suggestions_shown": suggestions_shown}),
                    **(detail or {}),
                },
            )
        # the edges waiting for a review, as counted a few seconds ago, follow this write at once: a reviewer's
        # progress keeps its total while they work instead of growing with each edge they finish
        self._adjust_count("waiting", (code_after == PENDING_CODE) - (code_before == PENDING_CODE))
        return True, ReviewState(after["review_state"])

    def refusal(self, edge_pk: int, reviewer: Reviewer, stage: Stage) -> str | None:
        """Why ``reviewer`` may not record a judgement of ``stage`` on the edge now (``None`` when they may):
        what the edge page asks before it offers a form, by the same rules as :meth:`record_judgement`."""
        probe = Judgement(Label.UNKNOWN, reviewer.name, Origin.HUMAN, stage)
        return edge_judgement_refusal(self._db, edge_pk, probe)

    def log_event(self, actor: str, action: str, target: str, detail: object = None) -> None:
        """Append an audit-log row for something refused (a failed login, a form without its CSRF token)."""
        with self._transaction() as db:
            self._log(db, actor, action, target, None, detail)

    def progress(self, reviewer: Reviewer) -> tuple[int, int]:
        """``(done, assigned)`` for a reviewer: edges of current claims they reviewed, and those plus the edges
        still waiting for a review.

        The reviewer's own part is read live (from their judgements alone); how many edges wait in all is counted
        at most every :data:`COUNT_SECONDS` (and again after a segmentation or an import), since counting a
        million edges on every page would cost more than the page."""
        (done, done_pending) = self._db.execute(
            "SELECT count(DISTINCT j.edge_pk), count(DISTINCT CASE WHEN e.final_code = ? THEN j.edge_pk END) "
            "FROM judgements j JOIN edges e ON e.pk = j.edge_pk JOIN claims c ON c.pk = e.claim_pk "
            f"WHERE j.reviewer = ? AND j.origin = 'human' AND {CURRENT_CLAIM}",
            (PENDING_CODE, reviewer.name),
        ).fetchone()
        waiting = self._counted("waiting", lambda: self._count_current(PENDING_CODE)) - int(done_pending)
        return int(done), int(done) + max(0, waiting)

    def _count_current(self, code: int) -> int:
        (total,) = self._db.execute("SELECT count(*) FROM edges WHERE final_code = ?", (code,)).fetchone()
        return int(total) - self._count_retired(code)

    def _count_retired(self, code: int | None) -> int:
        sql = "SELECT count(*) FROM claims c JOIN edges e ON e.claim_pk = c.pk WHERE c.current = 0"
        if code is None:
            return int(self._db.execute(sql).fetchone()[0])
        return int(self._db.execute(sql + " AND e.final_code = ?", (code,)).fetchone()[0])

    def _adjust_count(self, what: str, delta: int) -> None:
        """Move a kept count by ``delta`` after a write of this process changed it (left alone when none is kept)."""
        if not delta:
            return
        key = (str(self.path.resolve()), what)
        with _COUNTS_LOCK:
            found = _COUNTS.get(key)
            if found is not None:
                _COUNTS[key] = (found[0], found[1], found[2] + delta)

    def _counted(self, what: str, count: Callable[[], int]) -> int:
        """A count over every edge, kept per database for :data:`COUNT_SECONDS` and recounted at once when a
        segmentation or an import changed which claims are current. While one request recounts, the others
        use the previous figure rather than all counting at once."""
        (claim_sets, imports) = self._db.execute(
            "SELECT (SELECT coalesce(max(pk), 0) FROM claim_sets), (SELECT coalesce(max(pk), 0) FROM imports)"
        ).fetchone()
        key = (str(self.path.resolve()), what)
        at = time.monotonic()
        with _COUNTS_LOCK:
            found = _COUNTS.get(key)
            recounter = _RECOUNTING.setdefault(key, threading.Lock())
        fresh = found is not None and found[0] == (claim_sets, imports)
        if found is not None and fresh and at - found[1] < COUNT_SECONDS:
            return found[2]
        if found is not None and fresh:
            if not recounter.acquire(blocking=False):
                return found[2]  # another request is recounting: the figure of a few seconds ago will do
        else:
            recounter.acquire()  # nothing to show yet: wait for the one count rather than start another
            with _COUNTS_LOCK:
                found = _COUNTS.get(key)
            if found is not None and found[0] == (claim_sets, imports) and at - found[1] < COUNT_SECONDS:
                recounter.release()
                return found[2]
        try:
            value = count()
            with _COUNTS_LOCK:
                _COUNTS[key] = ((claim_sets, imports), at, value)
        finally:
            recounter.release()
        return value

    def retired_edges(self, needs: str) -> int:
        """Edges of retired claims (replaced by a later segmentation) that the queue leaves out for ``needs``."""
        codes = _NEEDED_CODES.get(needs)
        code = None if codes is None else next(iter(codes))
        return self._counted(f"retired:{needs}", lambda: self._count_retired(code))

    def policy_change(self, policy: str) -> dict[tuple[str, str], int]:
        """What switching to ``policy`` would do, without doing it: ``(state before, state after)`` → number of
        judged edges whose state would change that way."""
        if policy not in POLICIES:
            raise InvalidValue("settings", "policy", f"policy {policy!r} is not one of {', '.join(POLICIES)}")
        moves: dict[tuple[str, str], int] = {}
        for edge_pk, state, code in self._db.execute(
            "SELECT pk, review_state, final_code FROM edges WHERE pk IN "
            "(SELECT edge_pk FROM judgements WHERE origin = 'human')"
        ).fetchall():
            counted = counted_judgements(self._judgements(self._db, edge_pk), POLICIES[policy])
            new_state, new_code = edge_code(counted, POLICIES[policy])
            if (state, code) != (str(new_state), new_code):
                before = code_label(code)
                after = code_label(new_code)
                key = (f"{state}: {before}" if before else state, f"{new_state}: {after}" if after else str(new_state))
                moves[key] = moves.get(key, 0) + 1
        return moves

    def has_human_judgements(self) -> bool:
        """Whether any person has judged an edge (a policy change then needs confirming)."""
        return self._db.execute("SELECT 1 FROM judgements WHERE origin = 'human' LIMIT 1").fetchone() is not None

    # -- judgements from and to files ----------------------------------------------------------------

    def import_judgements(
        self, file: str, reviewer: str, rows: Sequence[FileJudgement], sha256: str, os_user: str | None = None
    ) -> tuple[int, int]:
        """Record ``reviewer``'s labels from a file as reviews, by the rules every door follows, all or nothing: a
        row naming no current edge, or one the rules refuse, is an :class:`InvalidValue` naming the file, its line
        and value, and nothing is written.

        ``reviewer`` must be an account that reviews (not an admin). A file's labels are one person's: the same
        file (by its ``sha256``) imported before under another account is refused. A row is recorded when it
        differs from the reviewer's latest judgement of its edge (a judgement's history is append-only and the
        latest wins, so importing an earlier file again brings its labels back); a row equal to it is already
        recorded. The import (file, hash, account, operating-system user, counts) is an audit-log row of its own,
        and every judgement's row names the door, file, hash and line. Returns ``(recorded, already recorded)``."""
        account = self.reviewer(reviewer)
        if account is None:
            raise UnknownReference(file, "--reviewer", f"no review account {reviewer!r}; add it with `reviewer add`")
        if account.role == "admin":
            raise InvalidValue(file, "--reviewer", f"{reviewer!r} is an admin account: admins do not review")
        edges = [self._file_edge(file, row) for row in rows]
        recorded = 0
        with self._transaction() as db:
            earlier = [
                str(actor)
                for (actor,) in db.execute(
                    "SELECT DISTINCT actor FROM audit_log WHERE action = 'judgements.import' "
                    "AND json_extract(after, '$.sha256') = ? ORDER BY actor",
                    (sha256,),
                )
                if actor != reviewer
            ]
            if earlier:
                raise InvalidValue(
                    file,
                    "--reviewer",
                    f"this file (sha256 {sha256}) was imported as {earlier[0]!r}: its labels are {earlier[0]}'s, "
                    f"and the same labels under {reviewer!r} would count as a second, independent review",
                )
            for row, edge_pk in zip(rows, edges, strict=True):
                judgement = Judgement(
                    row.label,
                    reviewer,
                    Origin.HUMAN,
                    Stage.REVIEW,
                    row.passage,
                    row.period,
                    row.reasoning,
                    now(),
                    severity=row.severity,
                )
                if self._is_latest(db, edge_pk, judgement):
                    continue
                try:
                    done, _ = self.record_judgement(
                        edge_pk,
                        judgement,
                        f"import:{sha256}:{row.line}:{secrets.token_hex(8)}",
                        door="judgements import",
                        detail={"file": file, "sha256": sha256, "line": row.line},
                    )
                except ReviewRefused as refused:
                    raise InvalidValue(file, f"line {row.line}", f"{str(refused)!s}") from None
                recorded += done
            self._log(
                db,
                reviewer,
                "judgements.import",
                f"file:{file}",
                None,
                {
                    "file": file,
                    "sha256": sha256,
                    "os_user": os_user,
                    "rows": len(rows),
                    "recorded": recorded,
                    "door": "judgements import",
                },
            )
        return recorded, len(rows) - recorded

    @staticmethod
    def _is_latest(db: sqlite3.Connection, edge_pk: int, judgement: Judgement) -> bool:
        """Whether ``judgement`` says what its reviewer's latest review of the edge says (label, passage, period,
        reasoning, severity)."""
        row = db.execute(
            "SELECT label, passage, period, reasoning, severity FROM judgements WHERE edge_pk = ? AND reviewer = ? "
            "AND origin = 'human' AND stage = 'review' ORDER BY pk DESC LIMIT 1",
            (edge_pk, judgement.reviewer),
        ).fetchone()
        severity = None if judgement.severity is None else str(judgement.severity)
        wanted = (str(judgement.label), judgement.passage, judgement.period, judgement.reasoning, severity)
        return row is not None and tuple(row) == wanted

    def _file_edge(self, file: str, row: FileJudgement) -> int:
        where = f"line {row.line}"
        claims = self._db.execute("SELECT pk, current FROM claims WHERE id = ?", (row.claim_id,)).fetchall()
        if not claims:
            raise UnknownReference(file, where, f"no claim {row.claim_id!r}")
        current = [pk for pk, flag in claims if flag == 1]
        if not current:
            raise InvalidValue(file, where, f"claim {row.claim_id!r} is retired (replaced by a later segmentation)")
        found = self._db.execute(
            "SELECT e.pk FROM edges e JOIN sources s ON s.pk = e.source_pk WHERE e.claim_pk = ? "
            "AND (s.key = ? OR s.url = ? OR s.resolved_url = ?) ORDER BY e.pk LIMIT 1",
            (current[0], row.source, row.source, row.source),
        ).fetchone()
        if found is None:
            raise UnknownReference(file, where, f"claim {row.claim_id!r} cites no source {row.source!r}")
        return int(found[0])

    def export_judgements(self, reviewer: str | None = None) -> Iterator[tuple[FileJudgement, str, str, str]]:
        """Every human judgement on a current claim's edge (or only ``reviewer``'s), oldest first, as file rows
        with who gave it, the stage and when."""
        sql = (
            f"SELECT c.id, s.key, {JUDGEMENT_COLUMNS} FROM judgements j JOIN edges e ON e.pk = j.edge_pk "
            "JOIN claims c ON c.pk = e.claim_pk JOIN sources s ON s.pk = e.source_pk "
            f"WHERE j.origin = 'human' AND {CURRENT_CLAIM}"
        )
        params: tuple[object, ...] = ()
        if reviewer is not None:
            sql += " AND j.reviewer = ?"
            params = (reviewer,)
        for claim_id, key, *row in self._db.execute(sql + " ORDER BY j.pk", params):
            j = judgement_from_row(row)
            yield (
                FileJudgement(0, claim_id, key, j.label, j.passage, j.period, j.reasoning, j.severity),
                j.reviewer or "",
                str(j.stage),
                j.created_at or "",
            )

    # -- sources -----------------------------------------------------------------------------------

    def passages(self, source_pk: int) -> list[Passage]:
        """The text of a source to read on the edge page.

        The passages of the source's latest snapshot (``citeaudit resolve``); before it has one, the text the
        database holds: the engine's quotes of the source, its title and publisher.
        """
        snapshot = latest_document(self._db, source_pk)
        if snapshot is not None:
            sha, text, _ = snapshot
            return [Passage("snapshot", passage.text) for passage in document_passages(self._db, sha, text)]
        found = [
            Passage("engine quote", quote)
            for (quote,) in self._db.execute(
                "SELECT DISTINCT quote FROM citations WHERE source_pk = ? AND quote IS NOT NULL LIMIT 50", (source_pk,)
            )
        ]
        title, publisher = self._db.execute(
            "SELECT title, publisher FROM sources WHERE pk = ?", (source_pk,)
        ).fetchone()
        found += [Passage(origin, text) for origin, text in (("title", title), ("publisher", publisher)) if text]
        return found

    def suggested_passages(self, edge_pk: int) -> list[StoredPassage]:
        """The passages of the edge's latest model suggestion, ranked best first with their scores (evidence, not
        labels: shown to every viewer)."""
        return latest_passages(self._db, edge_pk)

    def attach_url(self, source_pk: int, url: str, reviewer: str) -> None:
        """Give a title-only source the link a reviewer found (logged with who and when). The source stays
        ``pending`` and keeps its key until it is resolved. ``reviewer`` is a review account."""
        with self._transaction() as db:
            require_account(db, reviewer, "review", "reviewer")
            row = db.execute("SELECT url, status FROM sources WHERE pk = ?", (source_pk,)).fetchone()
            if row is None:
                raise UnknownReference("review", f"source {source_pk}", f"no source {source_pk!r}")
            if row[0] is not None or row[1] != "pending":
                raise InvalidValue(
                    "review",
                    f"source {source_pk}",
                    f"only a pending title-only source takes a URL; this one has {row[0]!r}",
                )
            host, path = url_location(url)
            at = now()
            db.execute("UPDATE sources SET url = ?, host = ?, path = ? WHERE pk = ?", (url, host, path, source_pk))
            db.execute(
                "INSERT INTO source_url_attachments (source_pk, url, reviewer, attached_at) VALUES (?, ?, ?, ?)",
                (source_pk, url, reviewer, at),
            )
            self._log(db, reviewer, "source.attach_url", f"source:{source_pk}", {"url": None}, {"url": url})

    def url_attachments(self, source_pk: int) -> list[tuple[str, str, str]]:
        """``(url, reviewer, when)`` of every URL attached to the source."""
        return list(
            self._db.execute(
                "SELECT url, reviewer, attached_at FROM source_url_attachments WHERE source_pk = ? ORDER BY pk",
                (source_pk,),
            )
        )

    # -- evidence groups ---------------------------------------------------------------------------

    def claim_sources(self, claim_pk: int) -> list[tuple[int, str, str]]:
        """``(source pk, key, title or URL)`` of the sources a claim is linked to or its answer cites."""
        return list(
            self._db.execute(
                "SELECT DISTINCT s.pk, s.key, coalesce(s.title, s.url, s.key) FROM sources s WHERE s.pk IN ("
                "SELECT source_pk FROM edges WHERE claim_pk = ? UNION SELECT ci.source_pk FROM citations ci "
                "JOIN claims c ON c.answer_pk = ci.answer_pk WHERE c.pk = ? AND ci.kind = 'cited') ORDER BY s.pk",
                (claim_pk, claim_pk),
            )
        )

    def groups(self, claim_pk: int) -> list[GroupView]:
        """Evidence groups of a claim."""
        groups = []
        for pk, gid, label, documents, steps, reviewer in self._db.execute(
            "SELECT pk, id, label, required_documents, reasoning_steps, reviewer FROM evidence_groups "
            "WHERE claim_pk = ? ORDER BY pk",
            (claim_pk,),
        ).fetchall():
            keys = tuple(
                key
                for (key,) in self._db.execute(
                    "SELECT s.key FROM evidence_group_sources g JOIN sources s ON s.pk = g.source_pk "
                    "WHERE g.group_pk = ? ORDER BY g.ordinal",
                    (pk,),
                )
            )
            groups.append(GroupView(gid, label, keys, tuple(json.loads(documents)), tuple(json.loads(steps)), reviewer))
        return groups

    def group_counts(self) -> dict[str, int]:
        """Evidence groups by decision (``undecided`` for none), for the score page."""
        return {
            label or "undecided": n
            for label, n in self._db.execute("SELECT label, count(*) FROM evidence_groups GROUP BY label")
        }

    def create_group(
        self,
        claim_pk: int,
        source_pks: Sequence[int],
        required_documents: Sequence[str],
        reasoning_steps: Sequence[str],
        label: Label | None,
        reviewer: str,
    ) -> str:
        """Create an evidence group for a claim from two or more of its sources (logged); returns its id. The
        ``reviewer`` is a review account that reviews or adjudicates (an admin does neither)."""
        allowed = {pk for pk, _, _ in self.claim_sources(claim_pk)}
        chosen = list(dict.fromkeys(source_pks))
        if len(chosen) < 2:
            raise InvalidValue("review", "sources", f"an evidence group needs two or more sources, not {len(chosen)}")
        stray = [pk for pk in chosen if pk not in allowed]
        if stray:
            raise InvalidValue("review", "sources", f"source {stray[0]!r} is not cited for this claim")
        with self._transaction() as db:
            if require_account(db, reviewer, "review", "reviewer") == "admin":
                raise ReviewRefused(f"{reviewer!r} is an admin: admins manage the project; they do not review")
            (claim_id,) = db.execute("SELECT id FROM claims WHERE pk = ?", (claim_pk,)).fetchone()
            (n,) = db.execute("SELECT count(*) FROM evidence_groups WHERE claim_pk = ?", (claim_pk,)).fetchone()
            group_id = f"{claim_id}/g{n + 1}"
            while db.execute("SELECT 1 FROM evidence_groups WHERE id = ?", (group_id,)).fetchone():
                n += 1
                group_id = f"{claim_id}/g{n + 1}"
            pk = db.execute(
                "INSERT INTO evidence_groups (id, claim_pk, label, required_documents, reasoning_steps, reviewer) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    group_id,
                    claim_pk,
                    None if label is None else str(label),
                    json.dumps(list(required_documents)),
                    json.dumps(list(reasoning_steps)),
                    reviewer,
                ),
            ).lastrowid
            db.executemany(
                "INSERT INTO evidence_group_sources VALUES (?, ?, ?)", [(pk, i, s) for i, s in enumerate(chosen)]
            )
            self._log(
                db,
                reviewer,
                "evidence_group.create",
                f"evidence_group:{group_id}",
                None,
                {
                    "claim": claim_id,
                    "sources": chosen,
                    "label": None if label is None else str(label),
                    "required_documents": list(required_documents),
                    "reasoning_steps": list(reasoning_steps),
                },
            )
        return group_id

    # -- audit log ---------------------------------------------------------------------------------

    def audit_log(self) -> Iterator[AuditLogEntry]:
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
