"""Work done in a forked child process while the caller does other work, on a machine with an idle core.

Python runs one thread's Python at a time, so two pieces of Python work overlap only in two processes. The child
is made by ``fork`` (the modules are loaded already: it starts in milliseconds, with the caller's state as it was),
and only when no other thread runs in the caller's process, so nothing another thread holds is copied half-done,
and before the caller opens a database the child would share. The child pickles what the work returned into a
pipe and ends without running the caller's exit handlers; it ignores ``Ctrl-C`` (the caller stops it).

A child that failed, or whose result cannot be read, reports no value: the caller then does the work itself, so
an error is raised as the work raises it, in the caller's process, with its own message.
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable
from types import TracebackType
from typing import Generic, TypeVar

__all__ = ["InChild", "in_child"]

Value = TypeVar("Value")


def _forkable() -> bool:
    """Whether a child can be forked here: Linux, and no other thread in this process."""
    return sys.platform == "linux" and hasattr(os, "fork") and threading.active_count() == 1


class InChild(Generic[Value]):
    """``work()`` run in a forked child from the moment this is made (:func:`in_child`); :meth:`result` waits for
    it. Use it in a ``with`` block: leaving it stops a child whose result was not taken and waits for it."""

    def __init__(self, work: Callable[[], Value]) -> None:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child's side; it ends with os._exit, so no coverage is written
            os.close(read)
            _run_child(work, write)
        os.close(write)
        self._pid: int | None = pid
        self._pipe = os.fdopen(read, "rb")

    def result(self) -> tuple[bool, Value | None]:
        """``(True, value)``: what ``work()`` returned in the child; ``(False, None)``: the child failed (the
        caller does the work itself to raise its error)."""
        with self._pipe:
            data = self._pipe.read()
        self._reap()
        try:
            done, value = pickle.loads(data)
        except Exception:  # the child was killed, or wrote half its result
            return False, None
        return (True, value) if done else (False, None)

    def _reap(self) -> None:
        pid, self._pid = self._pid, None
        if pid is not None:
            os.waitpid(pid, 0)

    def __enter__(self) -> InChild[Value]:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._pid is not None:  # the result was not taken: the caller stopped early
            os.kill(self._pid, signal.SIGKILL)
            self._reap()
        self._pipe.close()


def _run_child(work: Callable[[], Value], write: int) -> None:  # pragma: no cover - runs in the child only
    """The child's whole life: the work, its pickled outcome into ``write``, and the end."""
    status = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            data = pickle.dumps((True, work()), protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException:  # the caller does the work again and raises it there
            data = pickle.dumps((False, None))
        with os.fdopen(write, "wb") as pipe:
            pipe.write(data)
    except BaseException:
        status = 1
    finally:
        os._exit(status)


def in_child(work: Callable[[], Value]) -> InChild[Value] | None:
    """``work()`` started in a forked child when a child can be forked here (the caller has found a core free to
    run it); ``None`` otherwise (the caller then does the work itself)."""
    if not _forkable():
        return None
    return InChild(work)
