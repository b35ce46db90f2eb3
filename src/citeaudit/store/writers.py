"""Other writers: how long a write waits for another process, and creating a new database exclusively.

SQLite lets one process write at a time. A writer that finds the database locked waits up to the busy timeout
(sized to real imports, which hold the lock for their whole single transaction) and then fails with
:class:`~citeaudit.core.errors.DatabaseBusy`, one line that says what to do. A new database is built beside its path and
published only when complete, without ever replacing a file that appeared meanwhile; imports that create the same
new database take turns (a lock file), and the files a killed first import left behind are removed by the next.
"""

from __future__ import annotations

import contextlib
import glob
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from citeaudit.core.errors import DatabaseBusy, StoreError

__all__ = [
    "BUSY_TIMEOUT",
    "BUSY_TIMEOUT_ENV",
    "FLUSH_SECONDS",
    "begin_immediate",
    "busy_error",
    "busy_timeout",
    "flushed_ahead",
    "is_busy",
    "new_database",
    "remove_database",
]

BUSY_TIMEOUT = 600.0
"""Seconds a writer waits for another by default: an import holds the write lock for its whole transaction; at
about 2 000 answers a second, this waits out an import of about a million answers."""
BUSY_TIMEOUT_ENV = "CITEAUDIT_BUSY_TIMEOUT"
"""Environment variable that sets the busy timeout in seconds."""

FLUSH_SECONDS = 0.25
"""How often :func:`flushed_ahead` asks the system to write a new database's pages to the disk."""

_SQLITE_BUSY, _SQLITE_LOCKED = 5, 6
_POLL = 0.1
"""Seconds between two tries of the creation lock."""


def busy_timeout() -> float:
    """The busy timeout in seconds: ``CITEAUDIT_BUSY_TIMEOUT`` when set, else :data:`BUSY_TIMEOUT`."""
    given = os.environ.get(BUSY_TIMEOUT_ENV, "").strip()
    if not given:
        return BUSY_TIMEOUT
    try:
        seconds = float(given)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < float("inf"):
        raise StoreError(f"{BUSY_TIMEOUT_ENV}={given!r} is not a number of seconds (0 or more)")
    return seconds


def is_busy(exc: BaseException) -> bool:
    """True when ``exc`` is SQLite saying another connection holds the lock."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (_SQLITE_BUSY, _SQLITE_LOCKED)
    return "locked" in str(exc) or "busy" in str(exc)


def busy_error(path: str | Path, timeout: float) -> DatabaseBusy:
    """The one-line error for a database that stayed locked for ``timeout`` seconds."""
    return DatabaseBusy(
        f"{str(path)!r} is busy: another process has been writing to it for more than {timeout:g} s (the busy "
        f"timeout); nothing was written. Run the command again when that process is done, or wait longer with "
        f"{BUSY_TIMEOUT_ENV}=SECONDS"
    )


def begin_immediate(
    db: sqlite3.Connection, path: str | Path, timeout: float, on_wait: Callable[[], None] | None = None
) -> None:
    """``BEGIN IMMEDIATE`` on ``db``, waiting up to ``timeout`` seconds for another writer; ``on_wait`` is told
    once when this has to wait. Raises :class:`~citeaudit.core.errors.DatabaseBusy` when the time runs out."""
    try:
        if on_wait is not None:
            db.execute("PRAGMA busy_timeout = 0")
            try:
                db.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if not is_busy(exc):
                    raise
                on_wait()
            finally:
                db.execute(f"PRAGMA busy_timeout = {int(timeout * 1000)}")
        db.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        if is_busy(exc):
            raise busy_error(path, timeout) from None
        raise


def _partials(db: Path) -> list[Path]:
    """Files of unfinished first imports of ``db``: the databases being built and their journal files."""
    return sorted(db.parent.glob(f".{glob.escape(db.name)}.*.partial*"))


@contextmanager
def _creation_lock(db: Path, timeout: float, on_wait: Callable[[], None] | None) -> Iterator[None]:
    """Hold the lock that first imports of ``db`` take turns with (a lock file beside it, removed after use)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - no flock here: publishing without replacing still protects the data
        yield
        return
    lock = db.with_name(f".{db.name}.create-lock")
    deadline = time.monotonic() + timeout
    told = False
    while True:
        try:
            descriptor = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreError(f"cannot create database {str(db)!r}: {exc.strerror}") from None
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            if time.monotonic() >= deadline:
                raise busy_error(db, timeout) from None
            if not told and on_wait is not None:
                on_wait()
                told = True
            time.sleep(_POLL)
            continue
        # The holder we waited for removes the file when done: a lock on a removed file would lock nothing.
        try:
            current = os.stat(lock).st_ino == os.fstat(descriptor).st_ino
        except FileNotFoundError:
            current = False
        if current:
            break
        os.close(descriptor)
    try:
        yield
    finally:
        lock.unlink(missing_ok=True)  # still holding the lock: nobody can have taken it on this file
        os.close(descriptor)


@contextmanager
def new_database(db: Path, timeout: float | None = None, on_wait: Callable[[], None] | None = None) -> Iterator[Path]:
    """The file a command that may create ``db`` writes to.

    When ``db`` exists, that file itself. Otherwise a file beside it that becomes ``db`` only when the block ends
    without an error (a failed first import leaves no database behind, not even an empty one). Commands creating
    the same new database take turns (waiting up to ``timeout``, ``on_wait`` told once): the next one finds
    the database and writes into it. Publishing never replaces a file: if ``db`` appeared from elsewhere meanwhile,
    this fails cleanly and nothing is written. Files a killed first import left behind are removed.
    """
    timeout = busy_timeout() if timeout is None else timeout
    with contextlib.ExitStack() as held:
        held.enter_context(_creation_lock(db, timeout, on_wait))
        # Nobody else builds this database while the lock is held: every partial file is a killed run's.
        for leftover in _partials(db):
            leftover.unlink(missing_ok=True)
        if db.exists():
            held.close()  # writing into an existing database: SQLite's own lock and busy timeout take over
            yield db
            return
        partial = db.with_name(f".{db.name}.{os.getpid()}.partial")
        try:
            yield partial
        except BaseException:
            remove_database(partial)
            raise
        _publish(partial, db)


def remove_database(db: Path) -> None:
    """Remove the database file ``db`` with the files SQLite keeps beside it (its journal, log and shared memory),
    those that are there."""
    for leftover in (db, *(db.with_name(db.name + end) for end in ("-wal", "-shm", "-journal"))):
        leftover.unlink(missing_ok=True)


def _publish(partial: Path, db: Path) -> None:
    """Make the finished ``partial`` the database ``db``, never replacing a file already there."""
    try:
        os.link(partial, db)
    except FileExistsError:
        remove_database(partial)
        raise StoreError(
            f"{str(db)!r} was created by another program while this import ran; nothing of this import was "
            "written: run it again to import into that database"
        ) from None
    except OSError:
        # No hard links on this file system: move it, unless the database appeared meanwhile.
        if db.exists():
            remove_database(partial)
            raise StoreError(
                f"{str(db)!r} was created by another program while this import ran; nothing of this import was "
                "written: run it again to import into that database"
            ) from None
        os.replace(partial, db)
        return
    with contextlib.suppress(FileNotFoundError):
        partial.unlink()


@contextmanager
def flushed_ahead(path: Path, every: float = FLUSH_SECONDS) -> Iterator[None]:
    """While the block runs, a thread asks the system every ``every`` seconds to write to the disk what SQLite
    has written into the file ``path`` so far (``fdatasync``; ``fsync`` where there is none), and stops when the
    block ends, before the caller commits.

    For a new database written with a rollback journal and ``FULL`` synchronisation (see
    :func:`~citeaudit.store.connection.connect`): its commit waits until every page of the file is on the disk,
    and an import of 20 000 answers leaves over 100 MB in the system's cache, which took 0.10-0.16 s to write after
    the last row. Written while the import still runs, the commit's own sync finds little left (0.02-0.03 s).
    What is durable, and when, is unchanged: only the commit's sync says the import is stored. A failed sync here
    is left to that one to report."""
    stop = threading.Event()
    sync = getattr(os, "fdatasync", os.fsync)

    def flush() -> None:
        try:
            descriptor = os.open(path, os.O_RDONLY)
        except OSError:
            return
        try:
            while not stop.wait(every):
                sync(descriptor)
        except OSError:
            return  # the commit syncs the file itself and reports a failure
        finally:
            os.close(descriptor)

    thread = threading.Thread(target=flush, name="citeaudit-flush", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
