"""Opening the ledger and running its transactions: the one place a connection is set up, for both
:class:`~citeaudit.store.sqlite.Store` and :class:`~citeaudit.store.review.ReviewStore`.

Connections run in autocommit mode (``isolation_level=None``) so that every transaction is explicit: a write
is ``BEGIN IMMEDIATE`` … ``COMMIT``, rolled back on any error, and a transaction opened inside another is a
savepoint that fails alone while the outer one decides.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from citeaudit.core.errors import StoreError
from citeaudit.store.writers import begin_immediate, busy_error, is_busy

__all__ = [
    "Access",
    "Transactions",
    "bind_none_directly",
    "connect",
    "paired_snapshot",
    "read_snapshot",
    "storage_failure",
    "unwritable",
    "use_wal",
]


MAPPED_BYTES = 1 << 30
"""How much of a database file a ``mapped`` connection maps into memory at most (SQLite maps no more than the
file holds)."""


def bind_none_directly() -> None:
    """Have :mod:`sqlite3` bind ``None`` as NULL straight from its registry of adapters. Without one, the module
    binds a str, an int or a float as it is but looks every other value up, ``None`` included, through the
    adaptation protocol, whose last steps (two attribute lookups that fail) cost more than the binding: an import
    of dense answers binds about 1.5 million NULLs, and inserting its rows into bare tables took 1.3 s with the
    adapter against 1.9–2.5 s without. The adapter is a C function that gives ``None`` back (``get`` of an empty
    dict), which is bound as NULL, as before. Registered for the whole process when this module is imported; an
    adapter for ``None`` registered earlier is left as it is."""
    if (type(None), sqlite3.PrepareProtocol) not in sqlite3.adapters:
        sqlite3.register_adapter(type(None), _NOTHING.get)


_NOTHING: dict[object, None] = {}


bind_none_directly()


def connect(
    path: Path,
    *,
    busy_timeout: float = 5.0,
    shared: bool = False,
    bulk: bool = False,
    new: bool = False,
    mapped: bool = False,
) -> sqlite3.Connection:
    """An open connection to the database at ``path`` with foreign keys enforced.

    ``busy_timeout``: seconds a statement waits for another connection's write lock before failing. ``shared``: the
    connection may be used from other threads than the one that opened it (one at a time; the web server's worker
    threads). ``bulk``: the settings for large imports — write-ahead log, ``NORMAL`` synchronisation and a 256 MiB page
    cache. ``new`` (with ``bulk``): the file is a new database that no other connection opens until it is complete (see
    :func:`~citeaudit.store.writers.new_database`): a rollback journal instead of the write-ahead log, with ``FULL``
    synchronisation, and SQLite's default page cache (2 MiB: an import of 20 000 answers into a new file took 0.15-0.42
    s longer with 256 MiB, faulting in twice the pages; see docs/performance.md); the caller switches the log on when
    done (see :func:`use_wal`). ``mapped``: SQLite reads the file through a memory map (``mmap_size``) instead of a
    system call a page: a statement that scans whole tables (the report's texts, the reviewers' counts at 100 000 edges)
    took 0.5 to 0.9 of the time. For reads of a file nothing truncates (citeaudit never vacuums), as a mapped page past
    the end of a truncated file is an error of the process, not of the statement.

    Raises :class:`~citeaudit.core.errors.StoreError` when the file cannot be opened or is no SQLite database.
    """
    try:
        db = sqlite3.connect(path, isolation_level=None, timeout=busy_timeout, check_same_thread=not shared)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open database {str(path)!r}: {exc}") from None
    try:
        db.execute("PRAGMA foreign_keys = ON")
        db.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        if mapped:
            db.execute(f"PRAGMA mmap_size = {MAPPED_BYTES}")
        if bulk and new:
            # Rows written into a new file go straight to it: a rollback journal keeps only the pages that held
            # something before (none), where the write-ahead log would take every page and copy it into the file
            # again at the checkpoint. All or nothing holds as in any transaction; FULL syncs at the commit.
            db.execute("PRAGMA journal_mode = DELETE")
            db.execute("PRAGMA synchronous = FULL")
        elif bulk:
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            # Imports write hundreds of thousands of index entries; a larger page cache keeps them in memory.
            db.execute("PRAGMA cache_size = -262144")
    except sqlite3.DatabaseError as exc:
        db.close()
        if is_busy(exc):
            raise busy_error(path, busy_timeout) from None
        if storage_failure(exc):
            raise unwritable(path, exc) from None
        raise StoreError(f"{str(path)!r} is not a citeaudit database: {exc}") from None
    return db


def use_wal(db: sqlite3.Connection) -> None:
    """Switch a connection opened with ``new=True`` to the write-ahead log, the mode every other connection
    uses (readers then never wait for a writer); the file keeps it."""
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")


@contextmanager
def read_snapshot(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """Several reads that see one state of the ledger: a read transaction (``BEGIN`` … ``COMMIT``), so a writer
    that commits between two of them changes neither. Inside another transaction the reads already share one.

    In autocommit mode each statement is a transaction of its own: without this, an answer imported between the
    read of the answers in scope and the read of their citations would bring citations of an answer the first
    read never saw."""
    if db.in_transaction:
        yield db
        return
    db.execute("BEGIN")
    try:
        yield db
    finally:
        if db.in_transaction:
            db.execute("COMMIT")


def paired_snapshot(db: sqlite3.Connection, path: Path) -> sqlite3.Connection | None:
    """Begin a read transaction on ``db`` and one on a second connection to ``path`` that see the very same
    state of the ledger, so one table can be read by two threads at once; returns the second connection (its
    transaction open), or ``None`` with ``db``'s transaction not begun when that cannot be had at once.

    A third connection holds the write lock (``BEGIN IMMEDIATE``, without waiting) while both transactions take
    their snapshot, so no writer can commit between the two; it lets go straight after. When another writer
    holds the lock, or the file cannot be written (read-only, immutable), there is no pair: one connection
    reads, as it always can."""
    try:
        gate = sqlite3.connect(path, isolation_level=None, timeout=0)
    except sqlite3.Error:
        return None
    try:
        try:
            gate.execute("BEGIN IMMEDIATE")
        except sqlite3.Error:
            return None
        try:
            second = connect(path, shared=True)
        except StoreError:
            return None
        try:
            # A read transaction takes its snapshot at its first read.
            for connection in (db, second):
                connection.execute("BEGIN")
                connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.Error:
            if db.in_transaction:
                db.execute("ROLLBACK")
            second.close()
            return None
        return second
    finally:
        if gate.in_transaction:
            gate.execute("ROLLBACK")  # nothing was written: the lock only kept writers out
        gate.close()


class Transactions:
    """Transactions on one connection: ``with transactions() as db:`` writes all or nothing.

    A transaction waits up to ``busy_timeout`` seconds for another process's write lock (``on_wait`` is told
    once when it has to wait) and then raises :class:`~citeaudit.core.errors.DatabaseBusy`."""

    def __init__(
        self,
        db: sqlite3.Connection,
        path: Path,
        busy_timeout: float,
        on_wait: Callable[[], None] | None = None,
    ) -> None:
        self._db = db
        self._path = path
        self._busy_timeout = busy_timeout
        self._on_wait = on_wait
        self._savepoints = 0

    @contextmanager
    def __call__(self, *, foreign_keys: bool = True) -> Iterator[sqlite3.Connection]:
        """``foreign_keys=False``: SQLite does not check each row's references as it is written (``PRAGMA
        foreign_keys`` is off until the transaction ends); for writers whose every reference is a row id they made
        or looked up inside the same transaction (an import's; see :meth:`~citeaudit.store.sqlite.Store.
        import_transaction`). Inside another transaction the outer one's setting holds, as SQLite cannot change it
        there."""
        if self._db.in_transaction:
            # Inside another transaction: a savepoint, so this part can fail alone while the outer one decides.
            self._savepoints += 1
            name = f"part_{self._savepoints}"
            self._db.execute(f"SAVEPOINT {name}")
            try:
                yield self._db
            except BaseException:
                if self._db.in_transaction:  # SQLite ends the whole transaction itself on a full disk
                    self._db.execute(f"ROLLBACK TO {name}")
                    self._db.execute(f"RELEASE {name}")
                raise
            self._db.execute(f"RELEASE {name}")
            return
        if not foreign_keys:
            self._db.execute("PRAGMA foreign_keys = OFF")
        try:
            begin_immediate(self._db, self._path, self._busy_timeout, self._on_wait)
            try:
                yield self._db
            except BaseException as exc:
                # On a full disk SQLite has rolled back already: a second ROLLBACK would hide why.
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error) and storage_failure(exc):
                    raise unwritable(self._path, exc) from None
                raise
            try:
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                if storage_failure(exc):
                    raise unwritable(self._path, exc) from None
                raise
        finally:
            if not foreign_keys:
                self._db.execute("PRAGMA foreign_keys = ON")


@dataclass(frozen=True, slots=True)
class Access:
    """What a part of the :class:`~citeaudit.store.sqlite.Store` works through: the store's open connection (for
    reads), its transactions (for writes) and the file's path (for messages)."""

    db: sqlite3.Connection
    """The open connection."""
    transaction: Transactions
    """Its write transactions (a savepoint inside another)."""
    path: Path
    """The database file."""


_STORAGE_FAILURES = (
    "database or disk is full",
    "readonly database",
    "disk i/o error",
    "unable to open database file",
)


def storage_failure(exc: sqlite3.Error) -> bool:
    """True when ``exc`` is SQLite failing to write the file (a full disk, a read-only or immutable file, an I/O
    error), not a fault of the data or of citeaudit."""
    message = str(exc).lower()
    return any(failure in message for failure in _STORAGE_FAILURES)


def unwritable(path: Path, exc: sqlite3.Error) -> StoreError:
    """The one-line error for a database that cannot be written; the transaction has been rolled back."""
    return StoreError(f"cannot write to the database {str(path)!r} ({exc}): nothing was written")
