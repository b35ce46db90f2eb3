"""A new database's pages are handed to the disk while its first import writes (``flushed_ahead``), so that the
commit's own sync finds little left; what is durable, and when, stays the commit's business."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from tests.test_ingest_fast_path import PROTOCOL, contents, sonar_lines, write_lines

from citeaudit import Store
from citeaudit.ingest import Attachment, ingest_files
from citeaudit.store import sqlite as store_sqlite
from citeaudit.store.writers import flushed_ahead, new_database

WAIT = 120.0
"""Seconds a test waits for the flushing thread before it fails (it never waits that long when it works)."""


def _flushers() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == "citeaudit-flush"]


def test_the_file_is_synced_while_the_block_runs_and_no_more_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "new.db"
    path.write_bytes(b"pages")
    synced: list[int] = []
    twice = threading.Event()

    def sync(descriptor: int) -> None:
        assert os.fstat(descriptor).st_ino == path.stat().st_ino  # the database's own file
        synced.append(descriptor)
        if len(synced) >= 2:
            twice.set()

    monkeypatch.setattr(os, "fdatasync", sync, raising=False)
    with flushed_ahead(path, every=0.0):
        assert twice.wait(WAIT)
    after = len(synced)
    assert not _flushers()  # stopped and joined when the block ended
    assert len(synced) == after
    try:  # and its descriptor closed (or its number given out again, to another file)
        still_open = os.fstat(synced[0]).st_ino == path.stat().st_ino
    except OSError:
        still_open = False
    assert not still_open


def test_a_failing_sync_stops_the_thread_and_leaves_the_block_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "new.db"
    path.write_bytes(b"pages")
    tried = threading.Event()

    def broken(descriptor: int) -> None:
        tried.set()
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fdatasync", broken, raising=False)
    with flushed_ahead(path, every=0.0):
        assert tried.wait(WAIT)
        for thread in _flushers():
            thread.join(WAIT)
        assert not _flushers()  # gave up at once, without a word: the commit's sync reports a failure
    assert not _flushers()


def test_a_file_that_cannot_be_opened_is_not_flushed(tmp_path: Path) -> None:
    with flushed_ahead(tmp_path / "missing.db", every=0.0):
        pass
    assert not _flushers()


def test_a_first_import_flushes_its_new_file_and_a_later_one_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flushed: list[Path] = []
    original = store_sqlite.flushed_ahead

    @contextmanager
    def spy(path: Path, every: float = 0.25) -> Iterator[None]:
        flushed.append(path)
        with original(path, every):
            yield

    monkeypatch.setattr(store_sqlite, "flushed_ahead", spy)
    attachment = Attachment(PROTOCOL, run_id="bench", question_id="q01")
    db = tmp_path / "ledger.db"
    for seed in (1, 2):
        path = write_lines(tmp_path / f"{seed}.jsonl", sonar_lines(20, seed))
        with new_database(db) as target, Store(target, new=target != db) as store:
            ingest_files(store, [path], attachment=attachment, chunk=6)
    # the first import wrote a new file beside the database (published when complete); the second wrote into it
    (first,) = flushed
    assert first != db
    assert first.name.startswith(f".{db.name}.")
    assert not _flushers()
    with sqlite3.connect(db) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert contents(db)[0]["imports"]
