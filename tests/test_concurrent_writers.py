"""Several processes writing one database: real ``citeaudit ingest`` processes, a real SQLite file.

Imports are held open at a known point without any timing: a file given to ``ingest`` can be a named pipe, which
``ingest`` opens twice (once to recognise its format, once inside its write transaction), and opening a pipe for
writing returns only when the reader has opened it. So when the test's second open returns, that import holds the
write lock and waits for the test to write the pipe's bytes.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import queue
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import pytest
from tests.builders import answer, document

REPO = Path(__file__).resolve().parent.parent
WAITING = "waiting for another process"

pytestmark = pytest.mark.skipif(
    not hasattr(os, "mkfifo") or not Path("/proc/self/fd").is_dir(), reason="named pipes and /proc are Linux's"
)


def audit_file(folder: Path, name: str, answers: int = 1) -> Path:
    """An audit file of ``answers`` answers ``{name}1``, ``{name}2``, … in a run of its own."""
    path = folder / f"{name}.json"
    path.write_text(
        json.dumps(document([answer(f"{name}{n}", run=f"run-{name}") for n in range(1, answers + 1)], [], []))
    )
    return path


def audit_bytes(name: str) -> bytes:
    return json.dumps(document([answer(f"{name}1", run=f"run-{name}")], [], [])).encode()


class Command:
    """``citeaudit ARGS`` in a process of its own; its stderr is read line by line as it comes."""

    def __init__(self, *args: object, env: dict[str, str] | None = None) -> None:
        environment = {**os.environ, "PYTHONPATH": str(REPO / "src"), **(env or {})}
        self.process = subprocess.Popen(
            [sys.executable, "-c", "from citeaudit.cli import main; main()", *map(str, args)],
            cwd=REPO,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.stderr: list[str] = []
        assert self.process.stderr is not None
        threading.Thread(target=self._read, args=(self.process.stderr,), daemon=True).start()

    def _read(self, stream: IO[str]) -> None:
        with stream:
            for line in stream:
                self.lines.put(line)
        self.lines.put(None)

    def says(self, text: str, within: float = 120) -> bool:
        """True once a line of stderr holds ``text``; False when the process ended without saying it."""
        while True:
            line = self.lines.get(timeout=within)
            if line is None:
                return False
            self.stderr.append(line)
            if text in line:
                return True

    def finish(self, within: float = 120) -> tuple[int, str, str]:
        """Exit status, stdout and the whole stderr."""
        assert self.process.stdout is not None
        with self.process.stdout:
            out = self.process.stdout.read()  # stderr is the reading thread's
        self.process.wait(timeout=within)
        while (line := self.lines.get(timeout=within)) is not None:
            self.stderr.append(line)
        return self.process.returncode, out, "".join(self.stderr)


def open_for_writing(pipe: Path, reader: Command, within: float = 120) -> IO[bytes]:
    """``pipe`` opened for writing once ``reader`` opens it for reading (a condition waited for: a pipe cannot be
    opened for writing without blocking before it has a reader); fails if ``reader`` ends first."""
    deadline = time.monotonic() + within
    while True:
        try:
            return os.fdopen(os.open(pipe, os.O_WRONLY | os.O_NONBLOCK), "wb")
        except OSError as exc:
            if exc.errno != errno.ENXIO:
                raise
        if reader.process.poll() is not None:
            raise AssertionError(f"the import ended ({reader.finish()}) before it opened {pipe.name}")
        if time.monotonic() >= deadline:
            raise AssertionError(f"{pipe.name} was not opened within {within} s")
        time.sleep(0.02)


def locked(database: Path) -> bool:
    """True when another connection holds ``database``'s write lock (probed without waiting, never created)."""
    if not database.exists():
        return False
    probe = sqlite3.connect(f"file:{database}?mode=rw", uri=True, timeout=0, isolation_level=None)
    try:
        probe.execute("BEGIN IMMEDIATE")
        probe.execute("ROLLBACK")
        return False
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            return True
        raise
    finally:
        probe.close()


def in_transaction(database: Path, reader: Command, within: float = 120) -> None:
    """Return once ``reader`` holds ``database``'s write lock (a condition waited for)."""
    deadline = time.monotonic() + within
    while not locked(database):
        if reader.process.poll() is not None:
            raise AssertionError(f"the import ended ({reader.finish()}) before it took the write lock")
        if time.monotonic() >= deadline:
            raise AssertionError(f"{database.name} was not locked within {within} s")
        time.sleep(0.02)


@contextmanager
def held_in_transaction(pipe: Path, content: bytes, reader: Command, database: Path) -> Iterator[IO[bytes]]:
    """Feed ``pipe``'s first reading (format detection), then hold its second one open: inside the block the
    reading import is in its write transaction on ``database``, waiting for ``content``, which is written when
    the block ends."""
    with open_for_writing(pipe, reader) as first:
        first.write(content)
    # Only once the reader is in its transaction has it closed its first reading: opening the pipe again before
    # that could join the first reading instead of starting the second.
    in_transaction(database, reader)
    second = open_for_writing(pipe, reader)
    try:
        yield second
    finally:
        os.set_blocking(second.fileno(), True)
        with contextlib.suppress(BrokenPipeError):
            second.write(content)
            second.close()


def partial_of(db: Path, creator: Command) -> Path:
    """The file a first import builds ``db`` in (named after its process)."""
    return db.with_name(f".{db.name}.{creator.process.pid}.partial")


def answer_ids(db: Path) -> list[str]:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return sorted(row[0] for row in conn.execute("SELECT id FROM answers"))


def test_a_second_ingest_waits_for_the_first_and_then_both_are_stored(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    first = Command("ingest", audit_file(tmp_path, "a"), "--db", db)
    assert first.finish()[0] == 0
    pipe = tmp_path / "held.json"
    os.mkfifo(pipe)
    holding = Command("ingest", audit_file(tmp_path, "b"), pipe, "--db", db)
    with held_in_transaction(pipe, audit_bytes("c"), holding, db):
        second = Command("ingest", audit_file(tmp_path, "d"), "--db", db)
        # it cannot write while the other import holds the lock: it says so and waits
        assert second.says(WAITING), second.finish()
    assert holding.finish()[0] == 0
    status, out, err = second.finish()
    assert status == 0, err
    assert "d.json" in out
    assert answer_ids(db) == ["a1", "b1", "c1", "d1"]


def test_a_writer_that_waits_past_the_busy_timeout_fails_with_one_line_and_writes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    assert Command("ingest", audit_file(tmp_path, "a"), "--db", db).finish()[0] == 0
    lock = sqlite3.connect(db, isolation_level=None)
    try:
        lock.execute("BEGIN IMMEDIATE")  # held until the command has given up
        status, _, err = Command(
            "ingest", audit_file(tmp_path, "b"), "--db", db, env={"CITEAUDIT_BUSY_TIMEOUT": "0.2"}
        ).finish()
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    assert status == 2
    assert "Traceback" not in err
    (error,) = [line for line in err.splitlines() if line.startswith("error:")]
    assert "is busy" in error
    assert "0.2 s" in error
    assert "nothing was written" in error
    assert answer_ids(db) == ["a1"]


def test_two_first_imports_into_a_new_path_both_end_in_one_database(tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    pipe = tmp_path / "held.json"
    os.mkfifo(pipe)
    creating = Command("ingest", audit_file(tmp_path, "a"), pipe, "--db", db)
    with held_in_transaction(pipe, audit_bytes("b"), creating, partial_of(db, creating)):
        # the first is building the new database and holds it open; the second must not build its own
        other = Command("ingest", audit_file(tmp_path, "c"), "--db", db)
        assert other.says(WAITING), other.finish()
    assert creating.finish()[0] == 0
    status, _, err = other.finish()
    assert status == 0, err
    assert answer_ids(db) == ["a1", "b1", "c1"]  # 2 + 1 answers: nothing overwritten
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a.json", "c.json", "held.json", "new.db"]


def test_the_files_of_a_killed_first_import_are_removed_by_the_next(tmp_path: Path) -> None:
    db = tmp_path / "new.db"
    pipe = tmp_path / "held.json"
    os.mkfifo(pipe)
    killed = Command("ingest", audit_file(tmp_path, "a", answers=50), pipe, "--db", db)
    with open_for_writing(pipe, killed) as first:
        first.write(audit_bytes("b"))
    in_transaction(partial_of(db, killed), killed)
    with open_for_writing(pipe, killed):  # the import is inside its transaction now
        left = sorted(path.name for path in tmp_path.iterdir() if path.name.startswith(".new.db"))
        killed.process.send_signal(signal.SIGKILL)
        killed.finish()
    assert any(name.endswith(".partial") for name in left), left
    assert not db.exists()
    status, _, err = Command("ingest", audit_file(tmp_path, "c"), "--db", db).finish()
    assert status == 0, err
    assert answer_ids(db) == ["c1"]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a.json", "c.json", "held.json", "new.db"]


def test_a_database_in_a_folder_that_does_not_exist_is_one_line(tmp_path: Path) -> None:
    status, _, err = Command("ingest", audit_file(tmp_path, "a"), "--db", tmp_path / "missing" / "new.db").finish()
    assert status == 2
    assert err.strip().splitlines() == [
        f"error: cannot create database '{tmp_path / 'missing' / 'new.db'}': No such file or directory"
    ]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a.json"]
