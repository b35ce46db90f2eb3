"""Work on a second thread: writing an import's chunks while the next chunk is read, and reads ahead.

Python's ``sqlite3`` lets other threads run while SQLite executes a statement, so SQLite's own work on one chunk
(inserting rows, updating indexes) can go on while the caller's thread reads, checks and assembles the next one.
:class:`ChunkWriter` runs ``write`` on one chunk at a time, in order, on a thread of its own; the connection it
writes through is used by that thread alone until :meth:`ChunkWriter.finish` (or the end of the ``with`` block)
has waited for it. The caller's transaction is untouched: an error on either side stops the writer, and the
caller, who holds the transaction, rolls it back.

:class:`BackgroundRead` runs one read on a connection and thread of its own (the report's edges and reviewers
while its scores are made), and :func:`second_core_idle` says whether a second core is free for any of these.
"""

from __future__ import annotations

import os
import queue
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, Generic, TypeVar

__all__ = ["LOOKS", "LOOK_SECONDS", "BackgroundRead", "ChunkWriter", "runnable_now", "second_core_idle", "usable_cores"]

Chunk = TypeVar("Chunk")
Written = TypeVar("Written")
Read = TypeVar("Read")

_DONE = object()
"""Put after the last chunk: the writer stops."""

SWITCH_INTERVAL = 0.0005
"""Seconds a thread runs Python before another that waits gets its turn, while a writer runs (Python's default
is 0.005). The writer gives up the interpreter for every statement SQLite executes and needs it back as soon as
the statement is done; at the default, it would wait for the reading thread up to 5 ms each time."""


def usable_cores() -> int:
    """How many cores this process may run on (its affinity mask, where the system has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - no affinity masks on this system
        return os.cpu_count() or 1


LOOKS = 5
"""How many times :func:`second_core_idle` counts the runnable threads when the last minute was busy but the first
count finds a core idle (:data:`LOOK_SECONDS` apart)."""

LOOK_SECONDS = 0.002
"""Seconds between those counts: the five take about 8 ms, paid only after a busy minute."""


def second_core_idle() -> bool:
    """Whether a core besides this one is idle now: this process may run on more than one core
    (:func:`usable_cores`) and fewer threads are runnable right now than the machine has cores (this one among them;
    the kernel's count in ``/proc/loadavg``). Only then can a second thread or process overlap this one's work; on a
    busy machine it only adds its own cost (an import of 100 000 answers took 1.15x the time with the writer thread
    at a load average of 8 on 2 cores).

    The count of the moment decides, because the load average lags: a command run just after another (a script of
    imports one after the other, each with its worker) finds the last minute's average near the number of cores on a
    machine that is idle now. When that average is below the number of cores, one count decides. When it is at
    least that but below twice that, one count is not enough of a guide: the threads are counted :data:`LOOKS` times,
    :data:`LOOK_SECONDS` apart, and every count must find a core idle (a program that keeps a core busy is runnable at
    nearly every count). From twice the number of cores on, the machine counts as busy. Without the count of the
    moment (no ``/proc``), the average alone decides, and must be below the cores less one."""
    if usable_cores() < 2:
        return False
    cores = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average on this system: assume the other cores are busy
        return False
    runnable = runnable_now()
    if runnable is None:
        return load < cores - 1
    if runnable >= cores or load >= 2 * cores:
        return False
    if load < cores:
        return True
    for _ in range(LOOKS - 1):  # a busy minute: look again, a few milliseconds apart
        time.sleep(LOOK_SECONDS)
        runnable = runnable_now()
        if runnable is None or runnable >= cores:
            return False
    return True


def runnable_now() -> int | None:
    """How many threads the kernel counts as runnable at this moment (the fourth field of ``/proc/loadavg``,
    before its slash), or ``None`` where there is no such count."""
    try:
        with open("/proc/loadavg", "rb") as handle:
            return int(handle.read().split()[3].split(b"/")[0])
    except (OSError, IndexError, ValueError):
        return None


class BackgroundRead(Generic[Read]):
    """``read(connection)`` on a connection and a thread of their own, started when this is made; :meth:`result`
    waits for it and gives what it returned, or raises its exception in the caller's thread.

    Python's ``sqlite3`` lets other threads run while SQLite executes a statement, so a read whose time is SQLite's
    (a join aggregated to a few rows, texts built by SQL) takes a core of its own while the caller works. A read
    that fetches many rows does not gain: each row takes the interpreter back, and waits for the caller's thread to
    give it up. The connection reads the file through a memory map (``connect(mapped=True)``)."""

    def __init__(
        self,
        path: Path,
        read: Callable[[sqlite3.Connection], Read],
        *,
        name: str,
        after: BackgroundRead[Any] | None = None,
    ) -> None:
        """``after``: a read this one waits for before it starts (two reads in turn on one core besides the
        caller's, each given as soon as it is done)."""
        self._path = path
        self._read = read
        self._after = after
        self._found: list[Read] = []  # what read returned, once it has
        self._failed: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        from citeaudit.store.connection import connect

        if self._after is not None:
            self._after._thread.join()
        try:
            db = connect(self._path, mapped=True)
            try:
                self._found.append(self._read(db))
            finally:
                db.close()
        except BaseException as exc:  # raised again in the caller's thread
            self._failed = exc

    def result(self) -> Read:
        """What ``read`` returned, once it has."""
        self._thread.join()
        if self._failed is not None:
            raise self._failed
        return self._found[0]


class ChunkWriter(Generic[Chunk, Written]):
    """``write(chunk)`` for every chunk :meth:`put`, in order, on a writer thread; at most one chunk waits.

    :meth:`put` and :meth:`finish` return what ``write`` returned for the chunks written since the last call
    (so progress is told by the caller's thread). An exception raised by ``write`` is raised again by the next
    :meth:`put` or by :meth:`finish`; no chunk after it is written. Leaving the ``with`` block, by an error or
    not, stops the writer and waits for it, so the caller may roll back its transaction then.
    """

    def __init__(self, write: Callable[[Chunk], Written], *, threaded: bool = True) -> None:
        """``threaded=False``: every chunk is written by :meth:`put` itself, on the caller's thread."""
        self._write = write
        self._threaded = threaded
        self._chunks: queue.Queue[object] = queue.Queue(maxsize=1)
        self._written: queue.SimpleQueue[Written] = queue.SimpleQueue()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="citeaudit-import-writer", daemon=True)
        self._interval = sys.getswitchinterval()
        self._stopped = False
        self._abandoned = False

    def __enter__(self) -> ChunkWriter[Chunk, Written]:
        if self._threaded:
            sys.setswitchinterval(min(self._interval, SWITCH_INTERVAL))
            self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is not None:
            self._abandoned = True  # the caller rolls back: a chunk still waiting need not be written first
        self._stop()

    def _run(self) -> None:
        while (chunk := self._chunks.get()) is not _DONE:
            if self._error is not None or self._abandoned:
                continue  # after an error: take what comes (so put never blocks) and write nothing
            try:
                self._written.put(self._write(chunk))  # type: ignore[arg-type]
            except BaseException as exc:
                self._error = exc

    def _stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        if not self._threaded:
            return
        try:
            self._chunks.put(_DONE)
            self._thread.join()
        finally:
            sys.setswitchinterval(self._interval)

    def _done(self) -> Iterator[Written]:
        if self._error is not None:
            raise self._error
        while not self._written.empty():
            yield self._written.get()

    def put(self, chunk: Chunk) -> list[Written]:
        """Hand ``chunk`` to the writer (waiting while another chunk waits); what the chunks written since the
        last call returned. Raises what ``write`` raised, if it did."""
        if not self._threaded:
            return [self._write(chunk)]
        if self._error is None:
            self._chunks.put(chunk)
        return list(self._done())

    def finish(self) -> list[Written]:
        """Wait until every chunk is written; what the chunks written since the last call returned. Raises what
        ``write`` raised, if it did."""
        self._stop()
        return list(self._done())
