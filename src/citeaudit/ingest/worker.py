"""Reading an engine payload in a second process while this one writes it.

An import of engine answers spends about as long reading, checking and assembling the answers as SQLite spends
writing them, and Python runs both on one core. :class:`ReadAhead` hands the payload to a worker process that
reads it exactly as the import would (:func:`citeaudit.ingest._import_chunks`: the same readers, checks, ids and
chunks) and sends each chunk back as plain rows (:class:`~citeaudit.store.chunk_rows.ChunkRows`), while this
process writes the chunk before. The rows are the ones an in-process import writes, in the same order, into the
same transaction.

On Linux the worker is this process forked (see :func:`forks`): its modules are loaded and the payload is in its
memory from the start, and it sends its rows through a pipe. Elsewhere it is a fresh interpreter running this
module, sent the job and the payload through its stdin, sending its rows through its stdout.

What the worker finds wrong in the payload (the first bad record in file order) comes back as the very error the
in-process import raises, after the chunks before it: the caller's transaction is rolled back as it would be. A
worker that stops before the end (killed from outside, out of memory) is :class:`~citeaudit.core.errors.ImportStopped`,
never a shorter import. The worker runs in a session of its own, so Ctrl-C at a terminal interrupts this process
only, which stops the worker as it leaves the ``with`` block (as it does on any error); a worker whose parent is
gone stops at its next chunk, when its pipe has no reader. No ``multiprocessing`` machinery is involved: no
main module is imported again and no resource tracker is left behind.

Messages go behind an 8-byte length: in (to a fresh interpreter only), a pickle of ``(source, reader name,
attachment, chunk, size)`` followed by the payload's SHA-256 (64 hexadecimal digits) and its ``size`` bytes as they
are, sent as the worker starts; out, a tag byte and a body: for each chunk ``R`` and its rows (the protocol, runs and
evidence groups as a pickle behind a 4-byte length, then the row lists in :mod:`marshal`'s format, which writes and
reads plain tuples of text and numbers in about three quarters of pickle's time), or ``P`` and a pickle of
``("rows", ChunkRows)`` for a chunk whose rows are not all plain (judgements in an edge); then ``P`` and a pickle of
``("done", (number of partly understood answers, citations markers placed, the worker's peak RSS))`` or
``("error", exception)``. Both ends are the same installed citeaudit on the same interpreter, so :mod:`marshal`'s
version-bound format is read by the code that wrote it. A forked worker's peak RSS counts the pages it still shares
with this process too (all of this process's memory as it forked): it is an upper bound.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import marshal
import os
import pickle
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import IO, TYPE_CHECKING, Any, NoReturn

from citeaudit.core.errors import ImportStopped
from citeaudit.store.chunk_rows import ChunkRows
from citeaudit.store.pipeline import second_core_idle

if TYPE_CHECKING:
    from citeaudit.ingest.assemble import Attachment
    from citeaudit.ingest.base import Reader

__all__ = [
    "FORKED_WORKER_BYTES",
    "PIPE_BYTES",
    "WORKER_BYTES",
    "WORKER_CHUNK",
    "ReadAhead",
    "forks",
    "reads_in_worker",
    "serve",
]

WORKER_BYTES = 16_000_000
"""Smallest payload (bytes) read in a worker process when the import decides by itself and the worker is a fresh
interpreter (about 10 000 Sonar answers). Its start (about 0.3 s), the first chunk, which this process waits for,
and the last, which the worker does not overlap, cost about 0.45 s; the overlap saves about a quarter of the
in-process import's 0.16 s a megabyte. Below about 10 MB it does not pay (a 9 MB payload took 1.1-1.4x the time
in a worker at a load average of 4; see ``benchmarks/bench_ingest.py``)."""

FORKED_WORKER_BYTES = 1_000_000
"""Smallest payload (bytes) read in a worker process when the import decides by itself and the worker is this
process forked (see :func:`forks`; about 700 Sonar answers). Forked, the worker reads at once, and an import in a
worker took, against the same import read in the importing process (medians of 7 and 9 imports each, in turn, a
second CPU idle): 1.31x the time at 0.15 MB (100 Sonar answers: one chunk, nothing overlapped), 1.12x at 0.3 MB,
0.95x at 0.4 MB, 0.79x at 1.0 MB, 0.71x at 3 MB and 0.68x at 12 MB; dense answers 0.95x at 0.5 MB, 0.82x at 1.0 MB
and 0.71x at 3.2 MB."""

WORKER_CHUNK = 100
"""Answer records a chunk read in a worker holds at most: the first chunk is the only one this process waits
for, and the last the only one the worker does not overlap, so they are kept short; and the worker runs ahead of
this process by what its pipe holds (:data:`PIPE_BYTES`), several short chunks but not two of 250 answers, so a
chunk that takes longer to read or to write than the one before holds neither process up. 20 000 answers, three
imports of each, nine in all, in turn (medians): the benchmark's answers 2.00-2.03 s in chunks of 100 through a pipe
of 1 MiB, against 2.18 s in chunks of 250 through the same pipe, 2.25 s through the default pipe (64 KiB; chunks of
100 there: 2.11 s); chunks of 50 and 25 gained nothing more (2.05 s, 2.01 s). Dense answers (six imports each):
2.74 s in chunks of 100 through 1 MiB, against 2.96 s in chunks of 250 through the default pipe (chunks of 50:
2.65 s). What is written does not depend on the size of the chunks."""

PIPE_BYTES = 1 << 20
"""What the pipe carrying the worker's rows is asked to hold (Linux lets any process ask for up to
``/proc/sys/fs/pipe-max-size``, 1 MiB by default; the default pipe holds 64 KiB). Elsewhere, or where it is refused,
the pipe keeps its size: the import is the same, only slower."""

_LENGTH = struct.Struct(">Q")
_HEAD = struct.Struct(">I")
_PICKLED, _ROWS = b"P", b"R"
_SHA_HEX = 64
"""Characters of a SHA-256 in hexadecimal."""


def reads_in_worker(size: int, worker: bool | None) -> bool:
    """Whether a payload of ``size`` bytes is read in a worker process: ``worker`` when given, else when it is at
    least :data:`FORKED_WORKER_BYTES` where the worker is this process forked (:func:`forks`), else
    :data:`WORKER_BYTES`, and a second CPU is idle to run the worker on
    (:func:`~citeaudit.store.pipeline.second_core_idle`). Read in a worker, an import of 100 000 answers took 0.73x
    the time at a load average of 1 on 2 CPUs, but 1.06x at 3 and 1.01-1.07x at 5 to 7: on a busy machine the
    worker gains nothing and its cost stays (the two processes use 1.15-1.23x the CPU time of one: the rows
    sent and taken in, the worker started)."""
    if worker is not None:
        return worker
    return size >= (FORKED_WORKER_BYTES if forks() else WORKER_BYTES) and second_core_idle()


class ReadAhead:
    """The chunks of one engine payload as rows, read in a worker process: iterate once, inside a ``with`` block,
    which stops the worker when left. The worker starts as the block is entered and reads its first chunk while
    this process hashes and stores the payload. Forked (see :func:`forks`), it has the payload from the start;
    20 000 Sonar answers were imported in 1.99 s against 2.10 s when it was a fresh interpreter (medians of 7, in
    turn), which loads its modules and is sent the payload at once by a thread of this process (sent at once, its
    first chunk came 0.04-0.05 s sooner than when the payload was sent as the chunks were asked for; see
    docs/performance.md). A payload imported before is
    never iterated: its worker is stopped and its rows are never read. After the last chunk, :attr:`partial` is
    the number of answers the reader only partly understood."""

    def __init__(self, source: str, data: bytes, reader: Reader, attachment: Attachment, chunk: int) -> None:
        self._source = source
        self._data = data
        self._job = (source, reader.name, attachment, chunk, len(data))
        self._process: subprocess.Popen[bytes] | _Forked | None = None
        self._feeder: threading.Thread | None = None
        self._asked = False
        self._head: list[_Head] = []
        self.partial = 0
        """Answers the reader only partly understood (known once every chunk came)."""
        self.placed = 0
        """Citations without a position that markers placed (known once every chunk came)."""
        self.worker_peak: int | None = None
        """The worker's peak RSS in bytes, as its last message said (Linux; ``None`` elsewhere): the figure
        ``getrusage`` gives for a child is at least its parent's size when it was started. A forked worker's counts
        the pages it shares with this process as well: an upper bound of what it added."""

    def __enter__(self) -> ReadAhead:
        if forks():
            try:
                self._process = _Forked.start(self._job, self._data)
                return self
            except OSError:  # no fork now (out of memory or processes under a strict limit): a fresh interpreter
                pass
        package_root = str(Path(__file__).resolve().parents[2])
        path = [package_root, *(entry for entry in sys.path if entry and entry != package_root)]
        process = subprocess.Popen(
            [sys.executable, "-m", "citeaudit.ingest.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(path)},
            start_new_session=True,  # Ctrl-C reaches this process, which stops the worker
        )
        self._process = process
        assert process.stdout is not None
        assert process.stdin is not None
        _grow(process.stdout)
        _grow(process.stdin)  # the payload crosses in a sixteenth of the pipe's fills
        # sent at once, by a thread of this process: the worker reads its first chunk while this process stores
        # the payload (a pipe holds at most 1 MiB, so the payload is written as the worker takes it)
        header = pickle.dumps(self._job, protocol=pickle.HIGHEST_PROTOCOL)
        self._feeder = threading.Thread(target=self._feed, args=(header,), name="citeaudit-import-feed", daemon=True)
        self._feeder.start()
        return self

    def _feed(self, header: bytes) -> None:
        """Send the job to the worker: its header, the payload's SHA-256 (the answer ids are made from it; hashed
        here, so the worker need not), then the payload as it is (no second copy of a large payload). A worker gone
        before it took everything (killed, or stopped by :meth:`close`) ends the feed; the worker's input is closed
        in any case, so a worker still running never waits for more."""
        process = self._process
        assert process is not None
        assert process.stdin is not None
        try:
            process.stdin.write(_LENGTH.pack(len(header)) + header)
            process.stdin.write(hashlib.sha256(self._data).hexdigest().encode("ascii"))
            process.stdin.write(self._data)
        except (OSError, ValueError):  # the pipe broke (the worker is gone) or was closed by close()
            pass
        finally:
            with contextlib.suppress(OSError, ValueError):
                process.stdin.close()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @property
    def pid(self) -> int | None:
        """Process id of the worker, once started."""
        return None if self._process is None else self._process.pid

    @property
    def asked(self) -> bool:
        """Whether the chunks were asked for (the block iterated)."""
        return self._asked

    @property
    def finished(self) -> bool:
        """Whether its worker has stopped and been waited for (or never started)."""
        return self._process is None or self._process.returncode is not None

    def __iter__(self) -> Iterator[ChunkRows]:
        process = self._process
        if process is None:
            raise RuntimeError("the chunks of a payload are read inside its with block")
        if self._asked:
            raise RuntimeError("the chunks of a payload are read once")
        self._asked = True
        assert process.stdout is not None
        while True:
            kind, value = self._receive(process.stdout)
            if kind == "rows":
                yield value
            elif kind == "done":
                self.partial, self.placed, self.worker_peak = value
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=10)  # it exits right after its last message
                return
            else:
                raise value

    def _receive(self, stream: IO[bytes]) -> tuple[str, Any]:
        header = stream.read(_LENGTH.size)
        if len(header) == _LENGTH.size:
            (size,) = _LENGTH.unpack(header)
            message = stream.read(size)
            if len(message) == size:
                return _message(message, self._head)
        raise self._stopped()

    def _stopped(self) -> ImportStopped:
        assert self._process is not None
        code = self._process.wait()
        return ImportStopped(
            f"{self._source}: the process reading it stopped before the end (exit status {code}); nothing of the "
            "import was written"
        )

    def close(self) -> None:
        """Stop the worker (if it still runs) and wait for it."""
        process = self._process
        if process is None:
            return
        if process.poll() is None:
            process.kill()
        process.wait()
        if self._feeder is not None:
            self._feeder.join()
        for stream in (process.stdin, process.stdout):
            if stream is not None and not stream.closed:
                with contextlib.suppress(BrokenPipeError):
                    stream.close()


def _grow(pipe: IO[bytes]) -> None:
    """Ask for the pipe to hold :data:`PIPE_BYTES` (Linux), where it can."""
    try:
        import fcntl

        fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (ImportError, AttributeError, OSError):  # no fcntl (Windows), no such request (not Linux), or refused
        pass


def forks() -> bool:
    """Whether the worker is this process forked (Linux) rather than a fresh interpreter: forked, it reads at once,
    its modules loaded and the payload in its memory already, where a fresh interpreter spends 0.08-0.10 s loading
    its modules and taking the payload through a pipe before its first chunk. Not where a fork without a new
    program is unsafe (macOS, whose system libraries may not survive one; Windows has no fork); nor, from Python
    3.12 on, from a process running other threads, as Python then warns of such a fork. The forked worker touches
    only what the fork leaves usable: the interpreter (Python sets it up again in the child), memory, the payload
    and its pipe; never the database."""
    if sys.platform != "linux" or not hasattr(os, "fork"):
        return False
    return sys.version_info < (3, 12) or _threads() == 1


def _threads() -> int:
    """Threads of this process (Linux: every thread the system runs for it, not only Python's)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


class _Forked:
    """A worker forked from this process (see :func:`forks`), with what :class:`ReadAhead` asks of a
    :class:`subprocess.Popen`: its pid, the pipe its rows come through, and ``poll``, ``wait`` and ``kill``."""

    stdin: IO[bytes] | None = None
    """The job and its payload are in the worker's memory from the start: nothing is sent."""

    def __init__(self, pid: int, stdout: IO[bytes]) -> None:
        self.pid = pid
        self.stdout: IO[bytes] | None = stdout
        self.returncode: int | None = None

    @classmethod
    def start(cls, job: tuple[str, str, Attachment, int, int], data: bytes) -> _Forked:
        """Fork the worker of ``job`` (as :func:`serve` reads it) for the payload ``data``."""
        readable, writable = os.pipe()
        try:
            stdout = os.fdopen(readable, "rb")
        except BaseException:
            os.close(readable)
            os.close(writable)
            raise
        try:
            _grow(stdout)
            pid = os.fork()
        except BaseException:
            stdout.close()
            os.close(writable)
            raise
        if pid == 0:  # the worker: it never returns from here
            _forked_worker(readable, writable, job, data)
        os.close(writable)  # this process only reads: the pipe ends when the worker does
        return cls(pid, stdout)

    def _reap(self, options: int) -> int | None:
        """Its exit status if it has stopped (waited for with ``options``: ``os.WNOHANG`` or 0, until it stops)."""
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, options)
            except ChildProcessError:  # waited for elsewhere (SIGCHLD ignored): gone, its status unknown
                self.returncode = 0
            else:
                if pid == self.pid:
                    self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def poll(self) -> int | None:
        return self._reap(os.WNOHANG)

    def wait(self, timeout: float | None = None) -> int:
        """Its exit status once it stopped: as :meth:`subprocess.Popen.wait`, ``TimeoutExpired`` after ``timeout``
        seconds."""
        if timeout is None:
            while (code := self._reap(0)) is None:
                pass
            return code
        deadline = time.monotonic() + timeout
        pause = 0.0005
        while (code := self.poll()) is None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired([f"worker {self.pid}"], timeout)
            time.sleep(min(pause, left))
            pause = min(pause * 2, 0.05)
        return code

    def kill(self) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)


def _forked_worker(readable: int, writable: int, job: tuple[str, str, Attachment, int, int], data: bytes) -> NoReturn:
    """The forked worker: send the rows of ``job``'s payload ``data`` through ``writable``, then end this process
    at once, whatever happens: nothing the importing process left open (its database above all) is closed, flushed
    or rolled back here."""
    code = 1  # the exit status of anything raised below: the importer finds the rows' pipe ended early
    try:
        os.setsid()  # a session of its own, as the fresh interpreter's: Ctrl-C at a terminal reaches the importer only
        os.close(readable)  # the only reader is the importer: a worker whose importer is gone finds a broken pipe
        source, name, attachment, chunk, _ = job
        with os.fdopen(writable, "wb") as out:
            _serve_job(out, source, name, attachment, chunk, lambda: (hashlib.sha256(data).hexdigest(), data))
        code = 0
    finally:
        os._exit(code)  # nothing raised may go on into the code the fork left running


# -- the worker side -----------------------------------------------------------------------------------------


def _send(out: IO[bytes], message: tuple[str, Any]) -> None:
    data = _PICKLED + pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    out.write(_LENGTH.pack(len(data)) + data)
    out.flush()


def _send_rows(out: IO[bytes], rows: ChunkRows) -> None:
    """One chunk's rows: the row lists in :mod:`marshal`'s format when they hold only plain values (every engine
    payload's do), else the whole chunk as a pickle."""
    try:
        lists = marshal.dumps(
            (rows.sources, rows.answers, rows.citations, rows.claims, rows.edges, rows.locations, rows.failures)
        )
    except ValueError:  # a value marshal does not write (a judgement object in an edge)
        _send(out, ("rows", rows))
        return
    head = pickle.dumps((rows.protocol, rows.runs, rows.evidence_groups), protocol=pickle.HIGHEST_PROTOCOL)
    size = 1 + _HEAD.size + len(head) + len(lists)
    out.write(b"".join((_LENGTH.pack(size), _ROWS, _HEAD.pack(len(head)), head, lists)))
    out.flush()


_Head = tuple[bytes, tuple[Any, ...]]
"""A chunk's pickled protocol, runs and evidence groups, and the objects they are."""


def _message(message: bytes, last: list[_Head] | None = None) -> tuple[str, Any]:
    """What :func:`_send` or :func:`_send_rows` sent, from the message behind its length. ``last``: where the
    head of the previous chunk of the same payload is kept (see :func:`_rows_from`)."""
    if message[:1] == _ROWS:
        return "rows", _rows_from(message, last)
    kind, value = pickle.loads(memoryview(message)[1:])
    return str(kind), value


def _rows_from(message: bytes, last: list[_Head] | None = None) -> ChunkRows:
    """The rows :func:`_send_rows` sent (the message with its tag). ``last`` holds the previous chunk's head: the
    same bytes again (every chunk of a payload has the same protocol and, but for a new run, the same runs) give
    the same objects, so the protocol is the one the writer found in the database for the chunk before."""
    (length,) = _HEAD.unpack_from(message, 1)
    start = 1 + _HEAD.size
    head = message[start : start + length]
    if last and last[0][0] == head:
        protocol, runs, groups = last[0][1]
    else:
        protocol, runs, groups = objects = pickle.loads(head)
        if last is not None:
            last[:] = [(head, objects)]
    sources, answers, citations, claims, edges, locations, failures = marshal.loads(
        memoryview(message)[start + length :]
    )
    return ChunkRows(protocol, runs, sources, answers, citations, claims, edges, locations, groups, failures)


def _read(stream: IO[bytes]) -> bytes:
    header = stream.read(_LENGTH.size)
    if len(header) != _LENGTH.size:
        raise EOFError
    (size,) = _LENGTH.unpack(header)
    data = stream.read(size)
    if len(data) != size:
        raise EOFError
    return data


def _travelling(exc: Exception) -> Exception:
    """``exc`` if it comes out of a pickle as itself (every citeaudit input error does), else a stand-in that
    says the same."""
    try:
        again = pickle.loads(pickle.dumps(exc, protocol=pickle.HIGHEST_PROTOCOL))
    except Exception:  # any failure to travel is answered by the stand-in
        again = None
    if type(again) is type(exc) and str(again) == str(exc):
        return exc
    return RuntimeError(f"{type(exc).__name__}: {exc}")


def _peak_rss() -> int | None:
    """This program's peak RSS in bytes (Linux: ``VmHWM``), else ``None``."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def serve() -> None:
    """The worker started as a fresh interpreter: read one job from stdin, send its chunks as rows to stdout, then
    stop."""
    # stdout carries the rows: anything a library prints goes to stderr instead.
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    incoming = sys.stdin.buffer
    try:
        source, name, attachment, chunk, size = pickle.loads(_read(incoming))
    except EOFError:
        return  # the importer is gone

    def payload() -> tuple[str, bytes] | None:
        try:
            sha = incoming.read(_SHA_HEX).decode("ascii")
            data = incoming.read(size)
        except EOFError:
            return None
        return (sha, data) if len(sha) == _SHA_HEX and len(data) == size else None  # else the importer is gone

    _serve_job(out, source, name, attachment, chunk, payload)


def _serve_job(
    out: IO[bytes],
    source: str,
    name: str,
    attachment: Attachment,
    chunk: int,
    payload: Callable[[], tuple[str, bytes] | None],
) -> None:
    """Read one job's payload (``payload()``: its SHA-256 and bytes, ``None`` when the importer is gone) with the
    reader named ``name``, and send its chunks as rows to ``out``, then ``done`` or the payload's first problem."""
    from citeaudit.ingest import READERS, _import_chunks, _Partial

    try:
        # the reader's modules load (and compile their patterns) while the payload is hashed and sent
        reader = READERS[name]
    except Exception as exc:  # a reader this interpreter cannot load: the import's error, as in its process
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            _send(out, ("error", _travelling(exc)))
        return
    given = payload()
    if given is None:
        return
    sha, data = given
    gc.disable()  # as the import runs: hundreds of thousands of small acyclic records
    partial = _Partial()
    try:
        try:
            for rows in _import_chunks(source, data, reader, attachment, size=chunk, partial=partial, sha256=sha):
                if isinstance(rows, ChunkRows):
                    _send_rows(out, rows)
                else:  # an audit's model objects (not made for engine payloads): as a pickle
                    _send(out, ("rows", rows))
        except (BrokenPipeError, ConnectionResetError):
            raise
        except Exception as exc:  # the payload's first problem: raised again by the importer
            _send(out, ("error", _travelling(exc)))
            return
        _send(out, ("done", (partial.answers, partial.placed, _peak_rss())))
    except (BrokenPipeError, ConnectionResetError):
        return  # the importer stopped reading (it failed or was interrupted): nothing more to do


if __name__ == "__main__":
    serve()
    os._exit(0)  # every message is flushed; nothing at exit may write to a pipe whose reader is gone
