"""The SQLite store: the :class:`Store` a caller opens on a database file.

WAL journal, foreign keys on, schema version in ``PRAGMA user_version`` with forward migrations. Every
import is one ``BEGIN IMMEDIATE`` transaction, so a failed import leaves the database exactly as it was.
Raw payloads are stored by sha256 and never updated (a trigger refuses it).

A store is one object to open and close, with its work split by concern. The store itself opens the file
(migrating it), runs transactions and read snapshots, imports audits, and reads protocols, audits and the
columns scoring needs. The rest is reached through one attribute per concern, each an object over the same
connection and transactions (:class:`~citeaudit.store.connection.Access`) with its SQL in the module beside it:

- ``store.sources`` (:class:`~citeaudit.store.resolution.Sources`): which sources to resolve, their fetches,
  links set by hand, snapshots and passages;
- ``store.claims`` (:class:`~citeaudit.store.claims.Claims`): answers and their claims, claim sets planned and
  recorded;
- ``store.facts`` (:class:`~citeaudit.store.facts.Facts`): claim → required-fact proposals and decisions;
- ``store.ratings`` (:class:`~citeaudit.store.judgements.Ratings`): raters and their labels, for agreement.

So ``store.sources.record_fetch(pk, outcome)`` reads as what it does, and a caller still holds one store.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from citeaudit.core.clock import utc_now
from citeaudit.core.errors import InvalidValue, ScopeError, StoreError
from citeaudit.core.model import Audit, Protocol, RunKind
from citeaudit.core.protocol import fingerprint, protocol_from_mapping_trusted, protocol_to_mapping
from citeaudit.core.review_policy import REVIEW_POLICIES
from citeaudit.core.scope import Scope
from citeaudit.core.scoring import ScoringColumns
from citeaudit.store.bulk import IMPORT_TABLES, IN_ORDER_INDEXES, OVERLAPPED_INDEXES, drop_secondary_indexes
from citeaudit.store.chunk_rows import ChunkRows, rows_of
from citeaudit.store.claims import Claims
from citeaudit.store.connection import (
    Access,
    Transactions,
    connect,
    paired_snapshot,
    read_snapshot,
    storage_failure,
    unwritable,
    use_wal,
)
from citeaudit.store.facts import Facts
from citeaudit.store.importing import SUMMED, ImportReport, _next_pk, make_indexes, write_rows, written_twice
from citeaudit.store.judgements import Ratings
from citeaudit.store.migrations import migrate
from citeaudit.store.pipeline import ChunkWriter, second_core_idle, usable_cores
from citeaudit.store.reading import read_audit, read_scoring_columns, read_segmentations, suggestions_shown_in_scope
from citeaudit.store.reimport import describe, metadata_changes, move_answers
from citeaudit.store.resolution import Sources
from citeaudit.store.writers import busy_error, busy_timeout, flushed_ahead, is_busy

# REVIEW_POLICIES (store/review_policy.py) and ImportReport (store/importing.py) are named here too, where callers
# have found them.
__all__ = ["REVIEW_POLICIES", "ImportReport", "ProtocolInfo", "Store"]


@dataclass(frozen=True, slots=True)
class ProtocolInfo:
    """A protocol in the database with how many answers were measured under it, by run kind."""

    pk: int
    """Row id."""
    fingerprint: str
    """Protocol fingerprint."""
    id: str
    """Protocol id."""
    version: str
    """Protocol version."""
    answers: dict[str, int]
    """Answers per run kind."""


class Store:
    """A citeaudit database file. Use as a context manager or call :meth:`close`."""

    write_thread: bool | None = False
    """Whether an import's chunks are written by a thread of their own while the next chunk is read (see
    ``store/pipeline.py``); ``None``: when a second core is idle as the import starts
    (:func:`~citeaudit.store.pipeline.second_core_idle`). The rows are the same either way. Off by default: in
    no measurement of ``benchmarks/bench_ingest.py`` did the thread make an import faster (1.02-1.33x the time of
    writing on the reading thread, at load averages from 1.7 to 8 on 2 cores)."""
    defer_indexes: bool = True
    """Whether an import into empty tables builds their indexes (the unique ones too) once, after its rows (see
    :meth:`import_chunks`); the rows and indexes are the same either way."""
    checked_references: bool = False
    """Whether SQLite checks every reference an import writes against its parent row as the row is written (its
    foreign-key enforcement). Off by default (see :meth:`import_transaction`): an import's every reference is a
    row id it made or looked up inside its own transaction, so the checks cannot fail, and they took a fifth of
    the writer's time (its CPU for the 20 000 answers of ``benchmarks/bench_ingest.py``: 6.2 s with them, 4.8 s
    without, medians of four alternations)."""

    def __init__(self, path: str | Path, *, on_wait: Callable[[], None] | None = None, new: bool = False) -> None:
        """Open (creating and migrating as needed) the database at ``path``. A write waits for another process
        up to the busy timeout (:func:`~citeaudit.store.writers.busy_timeout`); ``on_wait`` is told each time
        one has to wait. ``new``: ``path`` is a database being built that no other connection opens until this
        store is closed (the file :func:`~citeaudit.store.writers.new_database` gives a first import); it is
        written with a rollback journal, which writes each new page once, and switched to the write-ahead log
        when the store is closed."""
        self.path = Path(path)
        self._busy_timeout = busy_timeout()
        self._on_wait = on_wait
        self._new = new
        # shared: an import's chunks are written by a thread of their own (see store/pipeline.py)
        self._db = connect(self.path, busy_timeout=self._busy_timeout, bulk=True, shared=True, new=new)
        self._transaction = Transactions(self._db, self.path, self._busy_timeout, on_wait)
        self._protocols: dict[int, Protocol] = {}
        self._paired: sqlite3.Connection | None = None
        """A second connection on the state :meth:`snapshot` reads, while it has one."""
        access = Access(self._db, self._transaction, self.path)
        self.sources = Sources(access)
        """The sources: which to resolve, their fetches, links set by hand, snapshots and passages."""
        self.claims = Claims(access, self.protocol)
        """The answers and their claims: segmentation inputs, claim sets planned and recorded."""
        self.facts = Facts(access)
        """Claim → required-fact mappings: the work left, proposals, confirmations and rejections."""
        self.ratings = Ratings(access)
        """Raters and their review-stage labels, read for agreement."""
        try:
            migrate(self._db, self._transaction, self.path)
        except sqlite3.DatabaseError as exc:
            self._db.close()
            if is_busy(exc):
                raise busy_error(self.path, self._busy_timeout) from None
            if storage_failure(exc):
                raise unwritable(self.path, exc) from None
            raise StoreError(f"{str(self.path)!r} is not a citeaudit database: {exc}") from None

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection."""
        try:
            if self._new and not self._db.in_transaction:
                # a file left with its rollback journal is still a sound database: the next store switches it
                with contextlib.suppress(sqlite3.Error):
                    use_wal(self._db)
        finally:
            self._db.close()

    @property
    def schema_version(self) -> int:
        """Schema version of the open database."""
        return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        """One write transaction (``BEGIN IMMEDIATE`` … ``COMMIT``, rolled back on any error). Inside another,
        a savepoint: its writes are kept or rolled back with the outer transaction."""
        return self._transaction()

    def import_transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        """The write transaction of an import (:meth:`transaction`), in which SQLite does not check each reference
        against its parent row as it is written (unless :attr:`checked_references`): every reference an import
        writes is a row id it made itself (an answer's, a claim's, an edge's, counted from the table's next key)
        or looked up inside this transaction (a run's, a question's, a source's), which no other writer can
        remove before it ends. :func:`~citeaudit.store.importing.write_rows` checks that every position a chunk's
        rows refer to is a row of the chunk; what moves stored answers checks their references itself. The
        constraints on values (unique ids, not null, the checks) hold as in every write. Inside another
        transaction, that one's setting holds."""
        return self._transaction(foreign_keys=self.checked_references)

    @contextlib.contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """Reads that see one state of the database, whatever other processes commit meanwhile (a read
        transaction; see :func:`~citeaudit.store.connection.read_snapshot`).

        On a machine with two usable cores a second connection opens on the same state
        (:func:`~citeaudit.store.connection.paired_snapshot`), so the scoring columns of a large table are read
        by two threads at once; SQLite's scan is most of the time of scoring a large database."""
        if self._db.in_transaction or usable_cores() < 2:
            with read_snapshot(self._db) as db:
                yield db
            return
        self._paired = paired_snapshot(self._db, self.path)
        if self._paired is None:  # a writer holds the lock (or the file is read-only): one connection reads
            with read_snapshot(self._db) as db:
                yield db
            return
        try:
            yield self._db  # its read transaction was begun with the pair's
        finally:
            self._paired.close()
            self._paired = None
            if self._db.in_transaction:
                self._db.execute("COMMIT")

    @property
    def connection(self) -> sqlite3.Connection:
        """The open connection, for reads (write through :meth:`transaction`)."""
        return self._db

    def ensure_protocol(self, protocol: Protocol) -> int:
        """The database key of ``protocol``, stored first if new."""
        with self._transaction() as db:
            return self._protocol_pk(db, protocol)

    # -- writing -----------------------------------------------------------------------------------

    def import_audit(
        self,
        audit: Audit,
        payload: bytes,
        origin: str,
        fmt: str = "audit-json",
        media_type: str = "application/json",
    ) -> ImportReport:
        """Store an audit, its raw payload and the answers that failed, in one transaction; the same payload
        twice is a no-op."""
        return self.import_chunks((audit,), payload, origin, fmt, media_type)

    def import_chunks(
        self,
        chunks: Iterable[Audit | ChunkRows],
        payload: bytes,
        origin: str,
        fmt: str = "audit-json",
        media_type: str = "application/json",
        *,
        progress: Callable[[int], None] | None = None,
        metadata: Mapping[str, str] | None = None,
        replace: bool = False,
        actor: str = "",
        overlapped: bool = False,
    ) -> ImportReport:
        """:meth:`import_audit` for a payload read a chunk at a time (see ``ingest.assemble_chunks``; a chunk may
        also come as its rows, :class:`~citeaudit.store.chunk_rows.ChunkRows`, made in another process): every
        chunk is written as it comes, all in one transaction, so an error in any chunk leaves nothing. The
        chunks are not read at all when the payload is already imported. ``progress`` is told how many answer
        records each chunk held.

        ``metadata``: what the command says of an engine payload's answers that its bytes do not (``question``,
        ``platform``, ``run``: :data:`~citeaudit.store.reimport.FIELDS`). The same payload again with the same
        metadata is a no-op; with other metadata it is an :class:`~citeaudit.core.errors.InvalidValue` naming what
        differs, unless ``replace``: then the import's answers move (their claims, edges and judgements with
        them) and the audit log records it with ``actor``; the report says how many moved.

        ``overlapped``: the chunks come from a worker process that reads the payload meanwhile (this process waits
        for them part of the time), so the indexes of :data:`~citeaudit.store.bulk.OVERLAPPED_INDEXES` are kept up
        to date as the rows are written rather than made after the last row."""
        sha = hashlib.sha256(payload).hexdigest()
        with self.import_transaction() as db:
            found = db.execute("SELECT pk FROM imports WHERE payload_sha256 = ?", (sha,)).fetchone()
            if found is not None:
                changes = metadata_changes(db, int(found[0]), metadata or {})
                if not changes:
                    return ImportReport(origin=origin, sha256=sha, already_imported=True)
                if not replace:
                    raise InvalidValue(
                        origin,
                        "",
                        f"already imported (sha256 {sha[:12]}…) with other metadata: {describe(changes)}; nothing "
                        "written. To move its answers (their claims, edges and judgements stay with them), run the "
                        "same command with --replace",
                    )
                moved = move_answers(db, changes, origin, sha, actor)
                if not db.execute("PRAGMA foreign_keys").fetchone()[0]:
                    _check_references(db, "answers", origin)
                return ImportReport(origin=origin, sha256=sha, already_imported=True, moved=moved)
            db.execute(
                "INSERT OR IGNORE INTO payloads VALUES (?, ?, ?, ?, ?)",
                (sha, media_type, len(payload), payload, utc_now()),
            )
            import_pk = db.execute(
                "INSERT INTO imports (payload_sha256, origin, format, imported_at, counts) VALUES (?, ?, ?, ?, '{}')",
                (sha, origin, fmt, utc_now()),
            ).lastrowid
            assert import_pk is not None
            report = ImportReport(origin=origin, sha256=sha, already_imported=False)
            new_keys: set[str] = set()
            known_keys: set[str] = set()
            # the import's tables that hold no row yet: their indexes are made once, after the rows, but for those
            # the rows fill in order, kept as they are written
            fresh = _empty_import_tables(db) if self.defer_indexes else frozenset()
            kept = IN_ORDER_INDEXES | OVERLAPPED_INDEXES if overlapped else IN_ORDER_INDEXES
            deferred = drop_secondary_indexes(db, sorted(fresh), unique=True, keep=kept) if fresh else []
            earlier_sources: dict[int, dict[str, int]] = {}  # by protocol: source row ids by key, chunk to chunk
            imported_sources: dict[str, int] = {}  # every source the import added, by key
            # no key retired yet (a new database): the sources' keys are not looked up among them
            retired = db.execute("SELECT 1 FROM source_keys LIMIT 1").fetchone() is not None

            protocols: list[tuple[Protocol, int]] = []  # the last chunk's protocol and its row id

            def write(chunk: Audit | ChunkRows) -> tuple[ImportReport, int]:
                rows = chunk if isinstance(chunk, ChunkRows) else rows_of(chunk)
                # a payload's chunks share one protocol object: it is looked up (by its fingerprint) once
                if not protocols or protocols[0][0] is not rows.protocol:
                    protocols[:] = [(rows.protocol, self._protocol_pk(db, rows.protocol))]
                protocol_pk = protocols[0][1]
                earlier = earlier_sources.setdefault(protocol_pk, {})
                # where the chunk's answers and claims start: a unique index kept while writing (overlapped) refuses
                # an id twice as its row is written, and written_twice tells it from the chunk's rows written before
                starts = {table: _next_pk(db, table) for table in ("answers", "claims")} if overlapped else {}
                try:
                    part = write_rows(
                        db,
                        rows,
                        protocol_pk,
                        import_pk,
                        origin,
                        sha,
                        new_keys,
                        known_keys,
                        earlier,
                        fresh=fresh,
                        imported=imported_sources,
                        retired=retired,
                    )
                except sqlite3.IntegrityError as exc:
                    raise written_twice(exc, rows, origin, db, starts) from None
                db.executemany(
                    "INSERT INTO ingest_failures (import_pk, ordinal, status, reason, run_id, question_id, platform) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(import_pk, *failure) for failure in rows.failures],
                )
                return (
                    dataclasses.replace(part, failures=len(rows.failures)),
                    len(rows.answers) + len(rows.failures),
                )

            threaded = second_core_idle() if self.write_thread is None else self.write_thread
            # a new file's commit syncs every page it has: they are handed to the disk while the rows are written
            with flushed_ahead(self.path) if self._new else contextlib.nullcontext():
                with ChunkWriter(write, threaded=threaded) as writer:
                    for audit in chunks:
                        for part, records in writer.put(audit):
                            report = _added(report, part)
                            if progress is not None:
                                progress(records)
                    for part, records in writer.finish():
                        report = _added(report, part)
                        if progress is not None:
                            progress(records)
                make_indexes(db, deferred, origin)
            report = dataclasses.replace(report, sources_new=len(new_keys), sources_known=len(known_keys))
            counts = {k: v for k, v in dataclasses.asdict(report).items() if k not in ("origin", "sha256")}
            db.execute("UPDATE imports SET counts = ? WHERE pk = ?", (json.dumps(counts), import_pk))
            return report

    def _protocol_pk(self, db: sqlite3.Connection, protocol: Protocol) -> int:
        fp = fingerprint(protocol)
        row = db.execute("SELECT pk FROM protocols WHERE fingerprint = ?", (fp,)).fetchone()
        if row:
            return int(row[0])
        body = json.dumps(protocol_to_mapping(protocol), sort_keys=True, ensure_ascii=False)
        pk = db.execute(
            "INSERT INTO protocols (fingerprint, id, version, scoring, body) VALUES (?, ?, ?, ?, ?)",
            (fp, protocol.id, protocol.version, protocol.scoring, body),
        ).lastrowid
        assert pk is not None
        for qi, question in enumerate(protocol.questions):
            question_pk = db.execute(
                "INSERT INTO questions (protocol_pk, ordinal, id, text, locale) VALUES (?, ?, ?, ?, ?)",
                (pk, qi, question.id, question.text, question.locale),
            ).lastrowid
            db.executemany(
                "INSERT INTO required_facts (protocol_pk, question_pk, ordinal, id, text, severity) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(pk, question_pk, fi, f.id, f.text, f.severity) for fi, f in enumerate(question.required_facts)],
            )
        return pk

    # -- reading -----------------------------------------------------------------------------------

    def protocols(self) -> list[ProtocolInfo]:
        """Every protocol in the database, oldest first."""
        infos = []
        for pk, fp, pid, version in self._db.execute("SELECT pk, fingerprint, id, version FROM protocols ORDER BY pk"):
            counts = dict(
                self._db.execute(
                    "SELECT r.kind, count(a.pk) FROM runs r JOIN answers a ON a.run_pk = r.pk "
                    "WHERE r.protocol_pk = ? GROUP BY r.kind",
                    (pk,),
                ).fetchall()
            )
            infos.append(ProtocolInfo(pk, fp, pid, version, counts))
        return infos

    def protocol(self, pk: int) -> Protocol:
        """The protocol stored under ``pk`` (a protocol row never changes, so it is parsed once)."""
        cached = self._protocols.get(pk)
        if cached is None:
            (body,) = self._db.execute("SELECT body FROM protocols WHERE pk = ?", (pk,)).fetchone()
            # The body was written from a checked protocol: decoded by the core's codec, not re-validated.
            cached = protocol_from_mapping_trusted(json.loads(body))
            self._protocols[pk] = cached
        return cached

    def choose_protocol(self, selector: str | None, scope: Scope | None = None) -> int:
        """The protocol a command works on: the one named by ``selector`` (id, ``id@version`` or fingerprint
        prefix), else the only one with answers in scope, else the only one there is."""
        infos = self.protocols()
        if selector:
            matches = [
                p
                for p in infos
                if selector in (p.id, f"{p.id}@{p.version}")
                or p.fingerprint.startswith(selector)
                or p.fingerprint.removeprefix("sha256:").startswith(selector)
            ]
            if len(matches) == 1:
                return matches[0].pk
            reason = "no protocol" if not matches else f"{len(matches)} protocols"
            raise ScopeError(f"{reason} matches {selector!r} in {str(self.path)!r}; {_list_protocols(infos)}")
        if not infos:
            raise ScopeError(f"{str(self.path)!r} holds no audit yet; import one with `citeaudit ingest FILE`")
        if len(infos) == 1:
            return infos[0].pk
        kinds = {str(k) for k in scope.run_kinds} if scope else {"platform", "fixture"}
        in_scope = [p for p in infos if any(p.answers.get(k, 0) for k in kinds)]
        if len(in_scope) == 1:
            return in_scope[0].pk
        raise ScopeError(
            f"{str(self.path)!r} holds {len(infos)} protocols and the scope spans {len(in_scope)}; "
            f"choose one with --protocol. {_list_protocols(infos)}"
        )

    def load_audit(self, protocol_pk: int) -> Audit:
        """Everything measured under one protocol, as the canonical audit (for export); claims are each
        answer's current claims and the protocol's segmentation is the one they were made with."""
        every_answer = Scope(run_kinds=frozenset(RunKind))
        return read_audit(self._db, self.effective_protocol(protocol_pk, every_answer), protocol_pk)

    def effective_protocol(self, protocol_pk: int, scope: Scope) -> Protocol:
        """The protocol as the answers in ``scope`` were measured: its segmentation is the one their current
        claim sets were made with, and when a person judged one of their edges with model suggestions shown, its
        review assistance says so (a fingerprint component only then). Answers segmented differently cannot be
        scored together (ScopeError)."""
        protocol = self.protocol(protocol_pk)
        if suggestions_shown_in_scope(self._db, protocol_pk, scope):
            protocol = dataclasses.replace(protocol, review_assistance="suggestions shown")
        found, unsegmented = read_segmentations(self._db, protocol_pk, scope)
        if not found:
            return protocol
        if len(found) == 1 and not unsegmented:
            return dataclasses.replace(protocol, segmentation=found.pop())
        described = sorted(
            f"{s.method}@{s.version}" + (f" {dict(s.parameters)}" if s.parameters else "") for s in found
        )
        if unsegmented:
            described.append(f"{unsegmented} answer(s) as ingested ({protocol.segmentation.method})")
        raise ScopeError(
            f"the answers in scope were segmented in {len(described)} different ways: {'; '.join(described)}. "
            "Segment them alike with `citeaudit segment` or narrow the scope (e.g. --run)"
        )

    def failed_answers(self, protocol_pk: int, scope: Scope) -> int:
        """How many answers the engines did not give in this protocol's runs of the scope's run kinds."""
        kinds = sorted(str(k) for k in scope.run_kinds)
        (count,) = self._db.execute(
            "SELECT count(*) FROM ingest_failures f JOIN runs r ON r.id = f.run_id "
            f"WHERE r.protocol_pk = ? AND r.kind IN ({', '.join('?' * len(kinds))})",
            (protocol_pk, *kinds),
        ).fetchone()
        return int(count)

    def scoring_input(self, protocol_pk: int, scope: Scope) -> tuple[Protocol, ScoringColumns, int]:
        """Columns for scoring one protocol's answers in ``scope``, and how many answers the run-kind
        filter left out."""
        protocol = self.effective_protocol(protocol_pk, scope)
        columns, excluded = read_scoring_columns(self._db, protocol, protocol_pk, scope, helper=self._paired)
        return protocol, columns, excluded


def _added(report: ImportReport, part: ImportReport) -> ImportReport:
    """``report`` with the counts of one more chunk added."""
    return dataclasses.replace(report, **{name: getattr(report, name) + getattr(part, name) for name in SUMMED})


def _list_protocols(infos: Sequence[ProtocolInfo]) -> str:
    def counts(info: ProtocolInfo) -> str:
        return ", ".join(f"{n} {kind}" for kind, n in sorted(info.answers.items())) or "no"

    listed = "; ".join(f"{p.id}@{p.version} {p.fingerprint[:19]}… ({counts(p)} answers)" for p in infos)
    return f"protocols: {listed}" if listed else "no protocols"


def _check_references(db: sqlite3.Connection, table: str, origin: str) -> None:
    """Raise :class:`~citeaudit.core.errors.StoreError` (the caller's transaction is rolled back) when a row of
    ``table`` refers to a row that does not exist: the check of a write done without SQLite's own, row by row
    (see :meth:`Store.import_transaction`)."""
    broken = db.execute(f"PRAGMA foreign_key_check({table})").fetchone()
    if broken is not None:
        _, rowid, parent, _ = broken
        raise StoreError(
            f"{origin}: row {rowid} of {table} would refer to a row of {parent} that does not exist; nothing written"
        )


def _empty_import_tables(db: sqlite3.Connection) -> frozenset[str]:
    """The tables receiving an import's rows in bulk (:data:`~citeaudit.store.bulk.IMPORT_TABLES`) that hold no
    row yet. Their indexes, the unique ones too, are dropped while the import writes and made again once from all
    its rows, inside the same transaction (:func:`~citeaudit.store.importing.make_indexes`, which turns a clash
    into the error naming it). Building an index once from all the rows sorts them; keeping it up to date row by
    row inserts each key at its place, a random one for the queue indexes (they order edges by a hash of their
    key), the citations' source index and the ids. Into an empty database SQLite's part of an import of 100 000
    answers took a quarter less time without the secondary indexes; the rows of 20 000 dense answers took 0.67 of
    the time without the unique ones as well (3.00 s against 4.51 s, foreign keys off in both; docs/performance.md,
    *Ingest*)."""
    return frozenset(table for table in IMPORT_TABLES if not db.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone())
