"""An import writes its rows without SQLite's check of each reference (``PRAGMA foreign_keys`` off for its
transaction only): every reference it writes is a row id it made or looked up inside that transaction. What makes
that safe is tested here: the checks are back on after every import, however it ended; an import inside another
transaction keeps that one's checks; a chunk whose rows refer past its own rows is refused before anything is
written; answers moved by a re-import have their references checked. That the imports of every recorded payload
leave no dangling reference is checked where they are compared with the plain construction
(tests/test_ingest_fast_path.py)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.test_ingest_fast_path import PROTOCOL, contents, sonar_lines, write_lines

from citeaudit import Store
from citeaudit.core.errors import InputError, StoreError
from citeaudit.ingest import Attachment, ingest_files, read_file
from citeaudit.store import importing
from citeaudit.store import sqlite as store_sqlite
from citeaudit.store.chunk_rows import ChunkRows, rows_of

ATTACHMENT = Attachment(PROTOCOL, run_id="bench", question_id="q01")


def _checks_seen(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record ``PRAGMA foreign_keys`` as each chunk's rows are written."""
    seen: list[int] = []
    original = importing.write_rows

    def spy(db: sqlite3.Connection, *args: Any, **kwargs: Any) -> Any:
        seen.append(db.execute("PRAGMA foreign_keys").fetchone()[0])
        return original(db, *args, **kwargs)

    monkeypatch.setattr(store_sqlite, "write_rows", spy)
    return seen


def _bad_reference_refused(store: Store) -> None:
    with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"), store.transaction() as db:
        db.execute("INSERT INTO claims (id, answer_pk, text) VALUES ('c-x', 999999, 't')")


def test_an_import_writes_without_row_checks_and_turns_them_back_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _checks_seen(monkeypatch)
    path = write_lines(tmp_path / "a.jsonl", sonar_lines(30, 1))
    with Store(tmp_path / "ledger.db") as store:
        ingest_files(store, [path], attachment=ATTACHMENT, chunk=7)
        assert store.connection.execute("PRAGMA foreign_keys").fetchone() == (1,)
        _bad_reference_refused(store)
    # 30 lines in chunks of 7 are at least 5 chunks (some lines are failed answers, which still count as records)
    assert len(seen) >= 5
    assert set(seen) == {0}


def test_after_a_failed_import_the_checks_are_back_on(tmp_path: Path) -> None:
    rows: list[Any] = list(sonar_lines(20, 2))
    rows[15] = {"choices": "not a list"}
    path = write_lines(tmp_path / "bad.jsonl", rows)
    with Store(tmp_path / "ledger.db") as store:
        with pytest.raises(InputError):
            ingest_files(store, [path], attachment=ATTACHMENT, chunk=4)
        assert store.connection.execute("PRAGMA foreign_keys").fetchone() == (1,)
        _bad_reference_refused(store)


def test_an_import_inside_another_transaction_keeps_its_checks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _checks_seen(monkeypatch)
    path = write_lines(tmp_path / "a.jsonl", sonar_lines(12, 3))
    with Store(tmp_path / "ledger.db") as store:
        with store.transaction():
            ingest_files(store, [path], attachment=ATTACHMENT, chunk=5)
        assert store.connection.execute("PRAGMA foreign_keys").fetchone() == (1,)
    assert seen
    assert set(seen) == {1}


def test_a_store_that_checks_references_checks_them_in_its_imports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Checked(Store):
        checked_references = True

    seen = _checks_seen(monkeypatch)
    path = write_lines(tmp_path / "a.jsonl", sonar_lines(12, 4))
    with Checked(tmp_path / "ledger.db") as store:
        ingest_files(store, [path], attachment=ATTACHMENT, chunk=5)
    assert seen
    assert set(seen) == {1}


def _one_chunk(tmp_path: Path) -> ChunkRows:
    """The rows of a small sonar file's audit, as one chunk."""
    path = write_lines(tmp_path / "one.jsonl", sonar_lines(12, 5))
    rows = rows_of(read_file(path, attachment=ATTACHMENT).audit)
    # every kind of reference is present, so that each can be broken below
    assert rows.citations
    assert rows.claims
    assert rows.edges
    assert rows.locations
    return rows


def _past(rows: ChunkRows, table: str, position: Callable[[int], int]) -> ChunkRows:
    """``rows`` with the first row of ``table`` referring to ``position(number of parents)``."""
    if table == "citations":
        first = rows.citations[0]
        return rows._replace(citations=[(position(len(rows.answers)), *first[1:]), *rows.citations[1:]])
    if table == "claims":
        first = rows.claims[0]
        return rows._replace(claims=[(first[0], position(len(rows.answers)), *first[2:]), *rows.claims[1:]])
    if table == "edges":
        first = rows.edges[0]
        return rows._replace(edges=[(position(len(rows.claims)), *first[1:]), *rows.edges[1:]])
    first = rows.locations[0]
    return rows._replace(locations=[(position(len(rows.edges)), *first[1:]), *rows.locations[1:]])


@pytest.mark.parametrize("table", ["citations", "claims", "edges", "edge_locations"])
@pytest.mark.parametrize(
    "position",
    [lambda count: count, lambda count: count + 40, lambda count: -1],
    ids=["one-past-the-last", "far-past", "negative"],
)
def test_a_chunk_referring_past_its_own_rows_is_refused_and_nothing_is_written(
    tmp_path: Path, table: str, position: Callable[[int], int]
) -> None:
    rows = _one_chunk(tmp_path)
    db = tmp_path / "ledger.db"
    with Store(db) as store:
        ingest_files(store, [write_lines(tmp_path / "earlier.jsonl", sonar_lines(6, 6))], attachment=ATTACHMENT)
    before = contents(db)
    with Store(db) as store, pytest.raises(StoreError, match=f"a row of {table} refers to"):
        store.import_chunks([_past(rows, table, position)], b"broken rows", origin="broken")
    assert contents(db) == before


def test_answers_moved_by_a_reimport_have_their_references_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_lines(tmp_path / "a.jsonl", sonar_lines(8, 7))
    db = tmp_path / "ledger.db"
    with Store(db) as store:
        ingest_files(store, [path], attachment=ATTACHMENT)
    before = contents(db)

    def astray(connection: sqlite3.Connection, *args: Any, **kwargs: Any) -> int:
        # a move gone wrong: every answer sent to a run that does not exist
        connection.execute("UPDATE answers SET run_pk = 999999")
        return 1

    monkeypatch.setattr(store_sqlite, "move_answers", astray)
    moved = Attachment(PROTOCOL, run_id="bench", question_id="q02")
    with Store(db) as store, pytest.raises(StoreError, match="of answers would refer to a row of runs"):
        ingest_files(store, [path], attachment=moved, replace=True)
    assert contents(db) == before
