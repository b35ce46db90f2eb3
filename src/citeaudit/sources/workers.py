"""Extraction worker processes: each document read under a wall-clock limit, every worker dying with its parent.

Text extraction is CPU work in third-party parsers that cannot be interrupted from inside (a 20 KB PDF that shares
one content stream over a hundred pages, a huge HTML page): the only sure way to stop one is to kill the process
doing it. So a document is handed to a worker process (a fresh interpreter running this module, talking over its
stdin and stdout), and when the limit passes the worker is killed, the document is recorded as
``extract_timeout``, and the next document gets a fresh worker.

A worker never outlives the program that started it: on Linux the kernel kills it when its parent dies
(``PR_SET_PDEATHSIG``), elsewhere a watcher thread sees the parent go; an idle worker also stops when its stdin
closes. No ``multiprocessing`` machinery is involved, so there is no resource tracker to leave behind and no main
module imported again.

Messages are pickles behind a 4-byte length: ``(function, arguments)`` in, ``(ok, value or exception)`` out. The
function travels by reference (module and name), as with any process pool.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import pickle
import signal
import struct
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, TypeVar

__all__ = ["ExtractionHelper", "ExtractionPool", "ExtractionTimedOut", "WorkerDied", "serve"]

T = TypeVar("T")

_LENGTH = struct.Struct(">I")
_READY = b"ready"
_PR_SET_PDEATHSIG = 1


class WorkerDied(Exception):
    """A worker process stopped on its own (killed from outside, out of memory): no later document could be read
    either, so the run stops."""


class ExtractionTimedOut(Exception):
    """A document was still being read when its time ran out; its worker was killed."""

    def __init__(self, limit: float) -> None:
        self.limit = limit
        super().__init__(f"text extraction still running after {limit:g} s; its worker process was killed")


class _Worker:
    """One worker process and its two pipes."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def start(cls) -> _Worker:
        package_root = str(Path(__file__).resolve().parents[2])
        # The parent's import path, so a function it names (its own module included) can be found by the worker.
        path = [package_root, *(entry for entry in sys.path if entry and entry != package_root)]
        environment = {**os.environ, "PYTHONPATH": os.pathsep.join(path), "CITEAUDIT_WORKER_PARENT": str(os.getpid())}
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "citeaudit.sources.workers",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=environment,
        )
        worker = cls(process)
        try:
            if await worker._receive() != _READY:
                raise WorkerDied("the extraction worker process did not start as expected")
        except BaseException:
            await worker.kill()
            raise
        return worker

    async def _receive(self) -> Any:
        assert self.process.stdout is not None
        try:
            (size,) = _LENGTH.unpack(await self.process.stdout.readexactly(_LENGTH.size))
            return pickle.loads(await self.process.stdout.readexactly(size))
        except asyncio.IncompleteReadError:
            code = await self.process.wait()
            raise WorkerDied(f"the extraction worker process stopped (exit status {code})") from None

    async def send(self, function: Callable[..., Any], args: tuple[Any, ...]) -> None:
        """Hand over one call (its outcome comes back, in order, through :meth:`_receive`)."""
        assert self.process.stdin is not None
        message = pickle.dumps((function, args), protocol=pickle.HIGHEST_PROTOCOL)
        try:
            self.process.stdin.write(_LENGTH.pack(len(message)) + message)
            await self.process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            code = await self.process.wait()
            raise WorkerDied(f"the extraction worker process stopped (exit status {code})") from None

    async def call(self, function: Callable[..., Any], args: tuple[Any, ...], limit: float | None) -> tuple[bool, Any]:
        """``(True, result)`` or ``(False, the exception the function raised)``."""
        await self.send(function, args)
        # The clock starts once the document is in the worker's hands: its start-up is not the document's time.
        async with asyncio.timeout(limit):
            ok, value = await self._receive()
        return bool(ok), value

    async def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        await self.process.wait()

    async def stop(self) -> None:
        """Close its stdin (an idle worker then ends by itself) and make sure it is gone."""
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            async with asyncio.timeout(5):
                await self.process.wait()
        except TimeoutError:
            await self.kill()


class ExtractionPool:
    """Up to ``size`` worker processes, started on first need; each call runs under ``limit`` seconds (``None``: no
    limit). Use as an async context manager: leaving it stops every worker."""

    def __init__(self, size: int, limit: float | None) -> None:
        if size < 1:
            raise ValueError(f"an extraction pool needs at least one worker, not {size!r}")
        self.limit = limit
        self._slots = asyncio.Semaphore(size)
        self._idle: list[_Worker] = []
        self._busy: set[_Worker] = set()
        self._died: str | None = None

    async def __aenter__(self) -> ExtractionPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def run(self, function: Callable[..., T], *args: Any, limit: float | None = None) -> T:
        """``function(*args)`` in a worker, under ``limit`` (default: the pool's).

        Raises :class:`ExtractionTimedOut` when the time runs out (that worker is killed; the pool goes on), and
        :class:`WorkerDied` when a worker stopped on its own (now and for every later call: the pool is broken).
        """
        limit = self.limit if limit is None else limit
        async with self._slots:
            if self._died is not None:
                raise WorkerDied(self._died)
            worker = self._idle.pop() if self._idle else await _Worker.start()
            self._busy.add(worker)
            try:
                ok, value = await worker.call(function, args, limit)
            except TimeoutError:
                await worker.kill()
                raise ExtractionTimedOut(limit or 0.0) from None
            except WorkerDied as exc:
                self._died = str(exc)
                raise
            except BaseException:
                # Cancelled (or anything else) mid-call: the worker's state is unknown, so it goes.
                await worker.kill()
                raise
            finally:
                self._busy.discard(worker)
            self._idle.append(worker)
        if ok:
            return value  # type: ignore[no-any-return]
        raise value

    async def close(self) -> None:
        """Stop every worker: idle ones end when their stdin closes, busy ones are killed."""
        idle, busy = self._idle, list(self._busy)
        self._idle, self._busy = [], set()
        for worker in busy:
            await worker.kill()
        for worker in idle:
            await worker.stop()

    def pids(self) -> list[int]:
        """Process ids of the workers running now."""
        return [worker.process.pid for worker in (*self._idle, *self._busy)]


class ExtractionHelper:
    """One worker process, started in the background, that takes calls only while fewer than ``depth`` are
    waiting on it, with no time limit: the calls a loop hands over beside doing the same work itself.

    Several calls travel to it at once, and their outcomes come back in order, read by one task: a loop that is
    busy for tens of milliseconds at a time would otherwise give it one call per turn. Use as an async context
    manager: leaving it stops the worker.
    """

    def __init__(self, depth: int) -> None:
        if depth < 1:
            raise ValueError(f"an extraction helper takes at least one call at a time, not {depth!r}")
        self.depth = depth
        self.calls = 0
        """Calls handed to it so far."""
        self._worker: _Worker | None = None
        self._starting: asyncio.Task[None] | None = None
        self._reading: asyncio.Task[None] | None = None
        self._waiting: collections.deque[asyncio.Future[tuple[bool, Any]]] = collections.deque()
        self._died: str | None = None

    async def __aenter__(self) -> ExtractionHelper:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def started(self) -> bool:
        """Whether its start was asked for."""
        return self._starting is not None

    def start_soon(self) -> None:
        """Start the worker in the background (once); :meth:`ready` says when it is up. A worker that fails to
        start is never offered, and nothing is raised."""
        if self._starting is None:
            self._starting = asyncio.get_running_loop().create_task(self._start())

    async def _start(self) -> None:
        try:
            worker = await _Worker.start()
        except (WorkerDied, OSError):
            return
        self._worker = worker
        self._reading = asyncio.get_running_loop().create_task(self._read(worker))

    async def _read(self, worker: _Worker) -> None:
        try:
            while True:
                reply = await worker._receive()
                waiting = self._waiting.popleft()
                if not waiting.done():
                    waiting.set_result(reply)
        except WorkerDied as exc:
            self._died = str(exc)
            while self._waiting:
                waiting = self._waiting.popleft()
                if not waiting.done():
                    waiting.set_exception(WorkerDied(str(exc)))

    def ready(self) -> bool:
        """Whether the worker is up, alive, and has fewer than ``depth`` calls waiting on it."""
        return self._worker is not None and self._died is None and len(self._waiting) < self.depth

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        """``function(*args)`` in the worker (ask :meth:`ready` first). Raises what the function raised, and
        :class:`WorkerDied` when the worker stopped on its own."""
        if self._worker is None or self._died is not None:
            raise WorkerDied(self._died or "the extraction worker process is not running")
        reply: asyncio.Future[tuple[bool, Any]] = asyncio.get_running_loop().create_future()
        self._waiting.append(reply)
        self.calls += 1
        try:
            await self._worker.send(function, args)
        except WorkerDied:
            reply.cancel()  # the reader task fails every waiting call; this one is raised here
            raise
        ok, value = await reply
        if ok:
            return value  # type: ignore[no-any-return]
        raise value

    async def close(self) -> None:
        """Stop the worker (killed when calls are still waiting on it, else its stdin is closed)."""
        for task in (self._starting, self._reading):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        worker, self._worker = self._worker, None
        if worker is not None:
            if self._waiting:
                await worker.kill()
            else:
                await worker.stop()
        for waiting in self._waiting:
            waiting.cancel()
        self._waiting.clear()

    def pids(self) -> list[int]:
        """Process id of the worker, when it runs."""
        return [] if self._worker is None else [self._worker.process.pid]


# -- the worker side -----------------------------------------------------------------------------------------


def _die_with_parent(parent: int) -> None:
    """Have this process killed when ``parent`` dies: the kernel's parent-death signal on Linux, else a thread that
    watches the parent id (a process whose parent died is re-parented)."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if os.getppid() != parent:  # the parent died before the signal was asked for
                os._exit(1)
            return

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _send(out: IO[bytes], value: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    out.write(_LENGTH.pack(len(data)) + data)
    out.flush()


def _read_exactly(stream: IO[bytes], size: int) -> bytes | None:
    chunks, remaining = [], size
    while remaining:
        chunk = stream.read(remaining)
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def serve() -> None:
    """The worker's loop: read a call from stdin, run it, write the outcome to stdout; stop when stdin closes."""
    parent = int(os.environ.get("CITEAUDIT_WORKER_PARENT", os.getppid()))
    _die_with_parent(parent)
    # stdout carries the replies: anything a library prints goes to stderr instead.
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    incoming = sys.stdin.buffer
    # Import the parsers before saying ready, so a document's time is spent on the document.
    with contextlib.suppress(ImportError):
        import htmldate  # noqa: F401
        import pypdf  # noqa: F401
        import trafilatura  # noqa: F401

        import citeaudit.sources.extract  # noqa: F401
    _send(out, _READY)
    while True:
        header = _read_exactly(incoming, _LENGTH.size)
        if header is None:
            return
        (size,) = _LENGTH.unpack(header)
        message = _read_exactly(incoming, size)
        if message is None:
            return
        try:
            function, args = pickle.loads(message)
            reply: tuple[bool, Any] = (True, function(*args))
        except Exception as exc:  # the function's own failure, sent back to be raised in the caller
            reply = (False, exc)
        try:
            _send(out, reply)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            _send(out, (False, RuntimeError(f"the worker's result could not be sent back: {exc}")))


if __name__ == "__main__":
    serve()
