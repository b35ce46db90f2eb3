"""Reading one table with two connections at once: both see one state of the ledger, and the columns read in
two halves are the columns read in one piece."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import Result

import citeaudit.store.reading as reading
from citeaudit.store import Store
from citeaudit.store.connection import paired_snapshot

Cli = Callable[..., Result]
EDGE_COLUMNS = ["e.claim_pk", "e.source_pk", "e.final_code", "e.n_locations"]


@pytest.fixture
def exporter_db(cli: Cli, exporter_path: Path, tmp_path: Path) -> Path:
    db = tmp_path / "exporter.db"
    assert cli("ingest", exporter_path, "--db", db).exit_code == 0
    return db


def _edge_count(connection: sqlite3.Connection) -> int:
    return int(connection.execute("SELECT count(*) FROM edges").fetchone()[0])


def test_a_commit_after_the_pair_is_seen_by_neither(exporter_db: Path) -> None:
    with Store(exporter_db) as store:
        db = store.connection
        before = _edge_count(db)
        second = paired_snapshot(db, exporter_db)
        assert second is not None
        try:
            writer = sqlite3.connect(exporter_db, isolation_level=None)
            writer.execute("DELETE FROM edge_locations")
            writer.execute("DELETE FROM judgements")
            writer.execute("DELETE FROM edges")
            writer.close()
            # both read transactions keep the state they began on: every edge still there
            assert _edge_count(db) == _edge_count(second) == before > 0
        finally:
            second.close()
            db.execute("COMMIT")
        assert _edge_count(db) == 0  # the deletion did commit


def test_no_pair_while_another_process_holds_the_write_lock(exporter_db: Path) -> None:
    writer = sqlite3.connect(exporter_db, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    try:
        with Store(exporter_db) as store:
            assert paired_snapshot(store.connection, exporter_db) is None
            assert not store.connection.in_transaction  # the caller begins its own, alone
            with store.snapshot():  # and scoring reads on one connection
                assert store._paired is None
                assert _edge_count(store.connection) > 0
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_the_halves_read_by_two_connections_are_the_whole(exporter_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Store(exporter_db) as store:
        (whole,) = [reading.int_columns(store.connection, EDGE_COLUMNS, "edges e", "WHERE 1", [])]
        n = len(whole[0])
        assert n == _edge_count(store.connection) > 10

    @settings(max_examples=40, deadline=None)
    @given(split=st.integers(1, n + 2), chunk=st.integers(1, n + 2))
    def check(split: int, chunk: int) -> None:
        monkeypatch.setattr(reading, "_SPLIT_ROWS", split)
        monkeypatch.setattr(reading, "_TEXT_CHUNK_ROWS", chunk)
        with Store(exporter_db) as store:
            second = paired_snapshot(store.connection, exporter_db)
            assert second is not None
            try:
                halves = reading.int_columns(store.connection, EDGE_COLUMNS, "edges e", "WHERE 1", [], helper=second)
            finally:
                second.close()
                store.connection.execute("COMMIT")
        for read, expected in zip(halves, whole, strict=True):
            np.testing.assert_array_equal(read, expected)

    check()


def test_scoring_with_and_without_a_second_connection_agree(exporter_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole score of the exporter audit, its edges read in halves by two connections, against one."""
    import citeaudit.store.sqlite as store_module
    from citeaudit.scoring.paths import score_path

    original = reading.int_columns
    helpers: list[bool] = []

    def watched(*args: Any, **kwargs: Any) -> Any:
        helpers.append(kwargs.get("helper") is not None)
        return original(*args, **kwargs)

    monkeypatch.setattr(reading, "int_columns", watched)
    monkeypatch.setattr(reading, "_SPLIT_ROWS", 1)
    monkeypatch.setattr(store_module, "usable_cores", lambda: 2)
    paired = score_path(exporter_db, by=["platform"])
    assert True in helpers  # the edges were read by two connections
    helpers.clear()
    monkeypatch.setattr(store_module, "usable_cores", lambda: 1)
    alone = score_path(exporter_db, by=["platform"])
    assert True not in helpers
    assert paired.result == alone.result


def test_the_snapshot_ends_its_read_transactions(exporter_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After the reads, the store's connection is out of its read transaction (a later write starts its own,
    never a savepoint inside a stale snapshot), with or without a second connection."""
    import citeaudit.store.sqlite as store_module

    for cores in (2, 1):
        monkeypatch.setattr(store_module, "usable_cores", lambda cores=cores: cores)
        with Store(exporter_db) as store:
            with store.snapshot():
                assert store.connection.in_transaction
                assert (store._paired is not None) == (cores == 2)
            assert not store.connection.in_transaction
            assert store._paired is None
