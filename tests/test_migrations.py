"""Schema migrations: documented statements only, so they run where SQLite refuses schema edits, and a ledger of
the first schema reaches the newest with its rows and its integrity."""

from __future__ import annotations

import ctypes
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from citeaudit import Store
from citeaudit.core.errors import SchemaVersionMismatch
from citeaudit.ingest import ingest_file
from citeaudit.store import migrations
from citeaudit.store.connection import Transactions, connect
from citeaudit.store.migrations import current, rebuild

SCHEMA_WRITE = re.compile(
    r"writable_schema|(?:UPDATE|INSERT\s+INTO|DELETE\s+FROM|REPLACE\s+INTO)\s+\"?sqlite_(?:master|schema)", re.I
)
"""What a statement that edits the schema table itself looks like."""

DBCONFIG_DEFENSIVE = 1010
"""``SQLITE_DBCONFIG_DEFENSIVE`` (sqlite3.h; ``sqlite3.SQLITE_DBCONFIG_DEFENSIVE`` from Python 3.12)."""


def defend(db: sqlite3.Connection) -> None:
    """Put ``db`` in SQLite's defensive mode, which refuses any edit of ``sqlite_master``.

    Python 3.12 sets it with ``Connection.setconfig``. Python 3.11's sqlite3 has no such call: the connection's
    ``sqlite3 *`` handle is read where CPython 3.11 keeps it (right after the object header) and handed to
    ``sqlite3_db_config`` of the library the module is linked with. The caller proves the mode took hold."""
    if hasattr(db, "setconfig"):
        db.setconfig(DBCONFIG_DEFENSIVE, True)
        return
    if sys.implementation.name != "cpython" or sys.version_info[:2] != (3, 11) or hasattr(sys, "gettotalrefcount"):
        pytest.skip("this Python's sqlite3 gives no way to set SQLITE_DBCONFIG_DEFENSIVE")
    import _sqlite3

    header = 2 * ctypes.sizeof(ctypes.c_void_p)  # reference count and type of a release build's object header
    handle = ctypes.c_void_p.from_address(id(db) + header).value
    enabled = ctypes.c_int(-1)
    library = ctypes.CDLL(_sqlite3.__file__)
    library.sqlite3_db_config.restype = ctypes.c_int
    status = library.sqlite3_db_config(
        ctypes.c_void_p(handle), ctypes.c_int(DBCONFIG_DEFENSIVE), ctypes.c_int(1), ctypes.byref(enabled)
    )
    assert (status, enabled.value) == (0, 1)


def test_the_migrations_run_on_an_sqlite_that_refuses_schema_edits(tmp_path: Path, four_claim_path: Path) -> None:
    path = tmp_path / "defensive.db"
    db = connect(path)
    defend(db)
    # the mode holds: an edit of the schema table, as the migrations once made, is refused
    db.execute("CREATE TABLE probe (kind TEXT)")
    db.execute("PRAGMA writable_schema = ON")
    with pytest.raises(sqlite3.DatabaseError, match="may not be modified"):
        db.execute("UPDATE sqlite_master SET sql = sql WHERE name = 'probe'")
    db.execute("PRAGMA writable_schema = OFF")
    db.execute("DROP TABLE probe")
    migrations.migrate(db, Transactions(db, path, 5.0), path, stepwise=True)
    assert db.execute("PRAGMA user_version").fetchone()[0] == migrations.SCHEMA_VERSION
    tables = dict(db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'"))
    # both rewrites took effect: no CHECK list of three or more values is left, and the window methods are allowed
    assert [name for name, sql in tables.items() if rebuild.IN_LIST.search(sql)] == []
    assert "method = 'window-hybrid'" in tables["suggestions"]
    assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert db.execute("PRAGMA foreign_keys").fetchone() == (1,)  # back on once the migrations are done
    db.close()
    with Store(path) as store:
        report = ingest_file(store, four_claim_path)
    assert report.edges == 3  # the four-claim fixture's three unique edges, written into the migrated schema


def test_no_migration_statement_edits_the_schema_table(tmp_path: Path) -> None:
    path = tmp_path / "traced.db"
    db = connect(path)
    executed: list[str] = []
    db.set_trace_callback(executed.append)
    migrations.migrate(db, Transactions(db, path, 5.0), path, stepwise=True)
    db.close()
    assert any("ALTER TABLE" in statement and "RENAME TO" in statement for statement in executed)  # rebuilds ran
    assert [statement for statement in executed if SCHEMA_WRITE.search(statement)] == []


def test_the_pattern_finds_an_edit_of_the_schema_table() -> None:
    # the two statements the CHECK rewrites ran before they rebuilt their tables instead
    assert SCHEMA_WRITE.search("PRAGMA writable_schema = ON")
    assert SCHEMA_WRITE.search("UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = ?")
    assert not SCHEMA_WRITE.search("SELECT name, sql FROM sqlite_master WHERE type = 'table'")


FIRST_SCHEMA_ROWS = {
    "protocols": [(1, "sha256:p", "p", "1", "citeaudit-v1", "{}")],
    "questions": [(1, 1, 0, "q1", "Which tank?", None)],
    "required_facts": [(1, 1, 1, 0, "f1", "The tank holds 20 mL.", None)],
    "runs": [(1, 1, "r1", "platform", "pp", None, None, None, None)],
    "payloads": [("ab", "application/json", 2, b"{}", "2025-01-01")],
    "imports": [(1, "ab", "a.json", "audit-json", "2025-01-01", "{}")],
    "answers": [(1, "a1", 1, 1, "It holds 20 mL [1].", "pp", None, None, "ab", 1, "used", None)],
    "sources": [
        (1, "x.example/a", "https://x.example/a", None, None, None, "resolved", None, None, None, "x.example", "/a")
    ],
    "protocol_sources": [(1, 1)],
    "citations": [(1, 1, 0, 1, "https://x.example/a", None, "[1]", "cited", 16, 19, None)],
    "claims": [(1, "c1", 1, "It holds 20 mL", 0, 14, 1, None, None)],
    "edges": [(1, 1, 1, "reviewed", 0, 1)],
    "edge_locations": [(1, 1, "[1]", 16, 19)],
    "judgements": [(1, 1, "supported", "li", "human", "review", None, None, None, "2025-01-02")],
    "ingest_failures": [(1, 1, 1, "failed", "timeout", "r1", "q1", "pp")],
}
"""One row in each table of the first schema that holds a ledger's measurements, every foreign key satisfied."""


def test_a_ledger_of_the_first_schema_reaches_the_newest_with_its_rows(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:1])
    monkeypatch.setattr(migrations, "SCHEMA_VERSION", 1)
    Store(db_path).close()
    with sqlite3.connect(db_path) as db:
        db.execute("PRAGMA foreign_keys = ON")
        for table, rows in FIRST_SCHEMA_ROWS.items():
            db.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(rows[0]))})", rows)
    monkeypatch.undo()
    with Store(db_path) as store:
        assert store.schema_version == migrations.SCHEMA_VERSION
        db = store.connection
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []
        for table, rows in FIRST_SCHEMA_ROWS.items():  # the first schema's columns come first, in their order
            kept = [row[: len(rows[0])] for row in db.execute(f"SELECT * FROM {table}")]
            assert kept == rows, table
        # columns added on the way take their defaults: the claim is current, the judgement has no judge
        assert db.execute("SELECT current FROM claims").fetchone() == (1,)
        assert db.execute("SELECT judge, suggestions_shown FROM judgements").fetchone() == (None, None)
        # the rebuilt tables keep their indexes, triggers and constraints
        with pytest.raises(sqlite3.IntegrityError, match="immutable"):
            db.execute("UPDATE judgements SET label = 'partial'")
        with pytest.raises(sqlite3.IntegrityError, match="kind = 'cited'"):
            db.execute("UPDATE citations SET kind = 'quoted'")
        with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
            db.execute("INSERT INTO citations (answer_pk, ordinal, kind) VALUES (99, 0, 'dangling')")
        indexes = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert {
            "answers_run_platform",
            "judgements_edge_reviewer",
            "judgements_assisted",
            "citations_source",
        } <= indexes
        assert db.execute("SELECT set_pk FROM current_claim_sets").fetchall() == []  # the view is there again
        # the ids, keys and pairs that were unique in the tables' definitions are unique in named indexes now
        unique = {
            table: columns
            for table, (index, columns) in rebuild.UNIQUE_KEYS.items()
            if db.execute(
                f"SELECT 1 FROM pragma_index_list('{table}') WHERE name = ? AND [unique]", (index,)
            ).fetchone()
        }
        assert unique == {
            "answers": "id",
            "claims": "id",
            "sources": "key",
            "citations": "answer_pk, ordinal",
            "edges": "claim_pk, source_pk",
        }
        tables = ", ".join(f"'{table}'" for table in rebuild.UNIQUE_KEYS)
        automatic = f"SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NULL AND tbl_name IN ({tables})"
        assert db.execute(automatic).fetchall() == []  # no constraint's own index is left beside them
        for statement, clash in (
            ("INSERT INTO answers (id, run_pk, question_pk, text, import_pk) VALUES ('a1', 1, 1, '', 1)", "answers.id"),
            ("INSERT INTO claims (id, answer_pk, text) VALUES ('c1', 1, '')", "claims.id"),
            ("INSERT INTO sources (key, status) VALUES ('x.example/a', 'pending')", "sources.key"),
            ("INSERT INTO citations (answer_pk, ordinal, kind) VALUES (1, 0, 'dangling')", "citations.answer_pk"),
            ("INSERT INTO edges VALUES (2, 1, 1, 'pending', 5, 1)", "edges.claim_pk"),
        ):
            with pytest.raises(sqlite3.IntegrityError, match=f"UNIQUE constraint failed: {clash}"):
                db.execute(statement)


SCHEMA_OBJECTS = "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"
"""Every schema object as SQLite keeps it, the indexes it makes for a table's own UNIQUE constraints too."""


def _traced_store(path: Path) -> list[str]:
    """The statements opening a store on ``path`` executes on its connection (traced from its connect)."""
    executed: list[str] = []
    db = connect(path)
    db.set_trace_callback(executed.append)
    migrations.migrate(db, Transactions(db, path, 5.0), path)
    db.close()
    return executed


def _stepwise(path: Path) -> sqlite3.Connection:
    db = connect(path)
    migrations.migrate(db, Transactions(db, path, 5.0), path, stepwise=True)
    return db


def test_the_schema_file_is_what_the_migrations_make_now(tmp_path: Path) -> None:
    # made again from a database the migrations make: a migration added without scripts/make_store_schema.py fails
    written = tmp_path / "schema.sql"
    assert current.write(written)
    assert written.read_text(encoding="utf-8") == current.SCHEMA_FILE.read_text(encoding="utf-8")
    version, statements = current.read(written.read_text(encoding="utf-8"))
    assert version == migrations.SCHEMA_VERSION
    db = _stepwise(tmp_path / "migrated.db")
    # one statement per schema object SQLite was given (not its automatic indexes)
    given = db.execute("SELECT count(*) FROM sqlite_master WHERE sql IS NOT NULL").fetchone()[0]
    assert len(statements) == given
    db.close()


def test_a_new_database_is_made_in_one_step_with_the_schema_the_migrations_make(tmp_path: Path) -> None:
    executed = _traced_store(tmp_path / "new.db")
    _, statements = current.read(current.SCHEMA_FILE.read_text(encoding="utf-8"))
    # made from the file: its statements ran, no migration did (the rebuilds rename tables; the file never does)
    assert [s for s in executed if s in statements] == statements
    assert not any("RENAME TO" in statement for statement in executed)
    assert [statement for statement in executed if SCHEMA_WRITE.search(statement)] == []
    made = sqlite3.connect(tmp_path / "new.db")
    migrated = _stepwise(tmp_path / "migrated.db")
    try:
        assert made.execute(SCHEMA_OBJECTS).fetchall() == migrated.execute(SCHEMA_OBJECTS).fetchall()
        for pragma in ("user_version", "foreign_key_check", "integrity_check", "page_size", "encoding"):
            assert made.execute(f"PRAGMA {pragma}").fetchall() == migrated.execute(f"PRAGMA {pragma}").fetchall()
        assert made.execute("PRAGMA user_version").fetchone() == (migrations.SCHEMA_VERSION,)
    finally:
        made.close()
        migrated.close()
    with Store(tmp_path / "new.db") as store:  # opened again: nothing left to do
        assert store.schema_version == migrations.SCHEMA_VERSION


def test_a_schema_file_of_another_version_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a schema.sql left behind by a newer migration: the migrations run one by one, to the same schema
    text = current.SCHEMA_FILE.read_text(encoding="utf-8")
    stale = tmp_path / "schema.sql"
    stale.write_text(
        text.replace(
            f"-- schema version {migrations.SCHEMA_VERSION}\n", f"-- schema version {migrations.SCHEMA_VERSION - 1}\n"
        ),
        encoding="utf-8",
    )
    monkeypatch.setattr(current, "SCHEMA_FILE", stale)
    executed = _traced_store(tmp_path / "new.db")
    assert any("RENAME TO" in statement for statement in executed)  # the rebuilds ran
    made = sqlite3.connect(tmp_path / "new.db")
    migrated = _stepwise(tmp_path / "migrated.db")
    try:
        assert made.execute(SCHEMA_OBJECTS).fetchall() == migrated.execute(SCHEMA_OBJECTS).fetchall()
    finally:
        made.close()
        migrated.close()


def test_an_install_without_the_schema_file_makes_the_same_schema_step_by_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(current, "SCHEMA_FILE", tmp_path / "missing.sql")
    executed = _traced_store(tmp_path / "new.db")
    assert any("RENAME TO" in statement for statement in executed)
    with sqlite3.connect(tmp_path / "new.db") as db:
        assert db.execute("PRAGMA user_version").fetchone() == (migrations.SCHEMA_VERSION,)


def test_a_database_made_newer_meanwhile_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # another process, of a newer citeaudit, made the file between this one's first look and its write lock
    path = tmp_path / "raced.db"

    def newer(db: sqlite3.Connection, transaction: object) -> bool:
        db.execute(f"PRAGMA user_version = {migrations.SCHEMA_VERSION + 1}")
        return False

    monkeypatch.setattr(migrations, "_made_new", newer)
    db = connect(path)
    with pytest.raises(SchemaVersionMismatch, match="newer than this citeaudit's"):
        migrations.migrate(db, Transactions(db, path, 5.0), path)
    db.close()


def test_a_database_that_holds_something_is_migrated_step_by_step(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE notes (text TEXT)")
        db.execute("INSERT INTO notes VALUES ('kept')")
    executed = _traced_store(path)
    assert any("RENAME TO" in statement for statement in executed)
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT text FROM notes").fetchall() == [("kept",)]
        assert db.execute("PRAGMA user_version").fetchone() == (migrations.SCHEMA_VERSION,)


def test_the_schema_file_is_read_statement_by_statement() -> None:
    text = (
        "-- schema version 3\n-- a comment between statements\n\nCREATE TABLE t (a TEXT  -- kept\n);\n\n"
        "CREATE TRIGGER t_guard BEFORE UPDATE ON t\nBEGIN SELECT RAISE(ABORT, 'no; never'); END;\n"
    )
    assert current.read(text) == (
        3,
        [
            "CREATE TABLE t (a TEXT  -- kept\n)",
            "CREATE TRIGGER t_guard BEFORE UPDATE ON t\nBEGIN SELECT RAISE(ABORT, 'no; never'); END",
        ],
    )
    with pytest.raises(ValueError, match="no schema version"):
        current.read("CREATE TABLE t (a);\n")
    with pytest.raises(ValueError, match="inside a statement"):
        current.read("-- schema version 1\nCREATE TABLE t (a\n")


def test_processes_that_open_one_new_database_at_once_all_find_the_newest_schema(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    code = "import sys; from citeaudit import Store\nwith Store(sys.argv[1]) as store: print(store.schema_version)\n"
    started = [
        subprocess.Popen(
            [sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(4)
    ]
    results = [(process.communicate(), process.returncode) for process in started]
    # whichever made it, the others waited for its transaction and found the schema made
    assert [(out.strip(), code) for (out, _), code in results] == [(str(migrations.SCHEMA_VERSION), 0)] * 4, results
    migrated = _stepwise(tmp_path / "migrated.db")
    try:
        assert sqlite3.connect(path).execute(SCHEMA_OBJECTS).fetchall() == migrated.execute(SCHEMA_OBJECTS).fetchall()
    finally:
        migrated.close()
