"""The SQLite store: pragmas, schema version and migrations, immutability, idempotent imports."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from citeaudit import SchemaVersionMismatch, Store, StoreError, load_audit, score
from citeaudit.core.scope import Scope
from citeaudit.ingest import ingest_file
from citeaudit.scoring.paths import score_path
from citeaudit.store.migrations import SCHEMA_VERSION


def test_new_database_has_wal_foreign_keys_and_schema_version(db_path: Path) -> None:
    with Store(db_path) as store:
        assert store.schema_version == SCHEMA_VERSION
        assert store._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store._db.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_foreign_keys_are_enforced(db_path: Path) -> None:
    with Store(db_path) as store, pytest.raises(sqlite3.IntegrityError):
        store._db.execute("INSERT INTO claims (id, answer_pk, text) VALUES ('c', 999, 't')")


def test_a_newer_database_is_refused(db_path: Path) -> None:
    Store(db_path).close()
    with sqlite3.connect(db_path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(SchemaVersionMismatch, match="newer"):
        Store(db_path)


def test_a_non_database_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "notes.db"
    path.write_text("not sqlite" * 200)
    with pytest.raises(StoreError, match="not a citeaudit database"):
        Store(path)


def test_reimporting_the_same_payload_is_a_no_op(db_path: Path, exporter_path: Path) -> None:
    with Store(db_path) as store:
        first = ingest_file(store, exporter_path)
        second = ingest_file(store, exporter_path)
        (answers,) = store._db.execute("SELECT count(*) FROM answers").fetchone()
        (payloads,) = store._db.execute("SELECT count(*) FROM payloads").fetchone()
    assert not first.already_imported
    assert second.already_imported
    # the exporter example has 3 engines × 12 questions = 36 answers, stored once
    assert answers == 36 == first.answers
    assert payloads == 1


def test_payloads_and_judgements_are_immutable(db_path: Path, four_claim_path: Path) -> None:
    with Store(db_path) as store:
        ingest_file(store, four_claim_path)
        stored = store._db.execute("SELECT sha256, body FROM payloads").fetchone()
        assert stored[1] == four_claim_path.read_bytes()
        with pytest.raises(sqlite3.IntegrityError, match="immutable"):
            store._db.execute("UPDATE payloads SET size = 0")
        with pytest.raises(sqlite3.IntegrityError, match="immutable"):
            store._db.execute("UPDATE judgements SET label = 'supported'")


def test_database_scores_equal_file_scores(db_path: Path, exporter_path: Path, four_claim_path: Path) -> None:
    with Store(db_path) as store:
        ingest_file(store, four_claim_path)
        ingest_file(store, exporter_path)
    for by in ((), ("platform",), ("question", "model"), ("locale", "run")):
        from_db = score_path(db_path, by=by).result.to_dict()
        from_file = score(load_audit(exporter_path), by=by).to_dict()
        assert from_db == from_file
    fixture = score_path(db_path, scope=Scope(run_kinds=frozenset({"fixture"})))  # type: ignore[arg-type]
    # the fixture alone: 1 supported of 3 edges, 1 of 4 pairs covered
    assert (fixture.result.precision.numerator, fixture.result.precision.denominator) == (1, 3)
    assert (fixture.result.coverage.numerator, fixture.result.coverage.denominator) == (1, 4)


def test_where_filters_match_between_file_and_database(db_path: Path, exporter_path: Path) -> None:
    with Store(db_path) as store:
        ingest_file(store, exporter_path)
    scope = Scope(where={"platform": frozenset({"gemini", "chatgpt"}), "question": frozenset({"q04"})})
    from_db = score_path(db_path, scope=scope, by=("platform",))
    from_file = score_path(exporter_path, scope=scope, by=("platform",))
    assert from_db.result.to_dict() == from_file.result.to_dict()
    # two platforms answered q04 once each
    assert from_db.result.overall.answers == 2


def test_export_of_a_database_is_the_imported_audit(db_path: Path, exporter_path: Path) -> None:
    from citeaudit import audit_to_document

    audit = load_audit(exporter_path)
    with Store(db_path) as store:
        ingest_file(store, exporter_path)
        loaded = store.load_audit(store.choose_protocol("axtorp-ax-series"))
    assert loaded == audit
    assert json.dumps(audit_to_document(loaded)) == json.dumps(audit_to_document(audit))


def test_several_protocols_need_a_choice(db_path: Path, exporter_path: Path, four_claim_path: Path) -> None:
    from citeaudit import ScopeError

    with Store(db_path) as store:
        ingest_file(store, four_claim_path)
        ingest_file(store, exporter_path)
        with pytest.raises(ScopeError, match="--protocol"):
            store.choose_protocol(None, Scope(run_kinds=frozenset({"platform", "fixture"})))  # type: ignore[arg-type]
        # platform answers exist under one protocol only, so the default scope is unambiguous
        exporter = store.choose_protocol(None, Scope())
        assert store.protocol(exporter).id == "axtorp-ax-series"
        assert store.choose_protocol("four-claim-fixture@1") != exporter


def test_migrations_run_forward_and_keep_data(
    db_path: Path, four_claim_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from citeaudit.store import migrations

    with Store(db_path) as store:
        ingest_file(store, four_claim_path)
    # a later release adds migration 2: opening the old file must apply it once and keep every row
    extra = "ALTER TABLE sources ADD COLUMN language TEXT;\nCREATE INDEX sources_language ON sources(language);"
    newest = SCHEMA_VERSION + 1
    monkeypatch.setattr(migrations, "MIGRATIONS", (*migrations.MIGRATIONS, extra))
    monkeypatch.setattr(migrations, "SCHEMA_VERSION", newest)
    with Store(db_path) as store:
        assert store.schema_version == newest
        columns = [row[1] for row in store._db.execute("PRAGMA table_info(sources)")]
        assert "language" in columns
        (edges,) = store._db.execute("SELECT count(*) FROM edges").fetchone()
    assert edges == 3
    with Store(db_path) as store:  # reopening applies nothing twice
        assert store.schema_version == newest


def test_a_moved_judgement_keeps_every_column(db_path: Path, four_claim_path: Path) -> None:
    with Store(db_path) as store:
        ingest_file(store, four_claim_path)
    with sqlite3.connect(db_path) as db:
        (pk, edge) = db.execute("SELECT pk, edge_pk FROM judgements ORDER BY pk LIMIT 1").fetchone()
        (other,) = db.execute("SELECT pk FROM edges WHERE pk != ? LIMIT 1", (edge,)).fetchone()
        db.execute("UPDATE judgements SET edge_pk = ? WHERE pk = ?", (other, pk))  # a merge's move is allowed
        for column, value in (("confidence", 0.5), ("judge", "x"), ("severity", "high")):
            with pytest.raises(sqlite3.IntegrityError, match="immutable"):
                db.execute(f"UPDATE judgements SET edge_pk = ?, {column} = ? WHERE pk = ?", (edge, value, pk))


def test_check_lists_become_comparisons_and_an_older_database_keeps_its_rows(
    db_path: Path, four_claim_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from citeaudit.store import migrations
    from citeaudit.store.migrations import rebuild

    rewrite = migrations.MIGRATIONS.index(rebuild.check_lists_as_comparisons)
    # a database written by the release before the rewrite, with rows in it
    monkeypatch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:rewrite])
    monkeypatch.setattr(migrations, "SCHEMA_VERSION", rewrite)
    with Store(db_path) as store:
        ingest_file(store, four_claim_path)
        before = {t: store._db.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in ("citations", "edges")}
        assert (
            "kind IN ('cited', 'retrieved', 'dangling')"
            in store._db.execute("SELECT sql FROM sqlite_master WHERE name = 'citations'").fetchone()[0]
        )
    monkeypatch.undo()
    with Store(db_path) as store:
        assert store.schema_version == SCHEMA_VERSION
        tables = dict(store._db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'"))
        assert store._db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert {t: store._db.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in before} == before
    assert "(kind = 'cited' OR kind = 'retrieved' OR kind = 'dangling')" in tables["citations"]
    assert not [name for name, sql in tables.items() if rebuild.IN_LIST.search(sql)]
    # a second connection reads the rebuilt table: the constraint still rejects what it always rejected
    with sqlite3.connect(db_path) as db, pytest.raises(sqlite3.IntegrityError, match="kind = 'cited'"):
        db.execute("UPDATE citations SET kind = 'quoted' WHERE pk = (SELECT min(pk) FROM citations)")


@given(
    values=st.lists(st.text(alphabet="ab', )", max_size=4), min_size=3, max_size=6, unique=True),
    probes=st.lists(st.one_of(st.none(), st.text(alphabet="ab', )", max_size=4)), max_size=20),
)
def test_a_rewritten_check_accepts_exactly_what_the_list_accepted(values: list[str], probes: list[str | None]) -> None:
    from citeaudit.store.migrations.rebuild import comparisons

    listed = ", ".join("'" + v.replace("'", "''") + "'" for v in values)
    original = f"CREATE TABLE t (kind TEXT CHECK (kind IN ({listed})))"
    rewritten = comparisons(original)
    assert " IN (" not in rewritten
    db = sqlite3.connect(":memory:")
    db.execute(original)
    db.execute(rewritten.replace("TABLE t", "TABLE u"))

    def accepts(table: str, value: str | None) -> bool:
        try:
            db.execute(f"INSERT INTO {table} VALUES (?)", (value,))
        except sqlite3.IntegrityError:
            return False
        return True

    for value in [*values, *probes]:
        assert accepts("t", value) == accepts("u", value)


@given(
    rows=st.lists(
        st.tuples(
            st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1), st.text(max_size=3)),
            st.one_of(st.none(), st.floats(allow_nan=False)),
        ),
        max_size=200,
    )
)
def test_batched_inserts_store_what_executemany_stores(rows: list[tuple[object, object]]) -> None:
    from citeaudit.store.bulk import ROWS_PER_STATEMENT, insert_rows

    assert ROWS_PER_STATEMENT < 200  # the lists cover full batches, a remainder, and no rows at all
    db = sqlite3.connect(":memory:")
    for table in ("batched", "one_by_one"):
        db.execute(f"CREATE TABLE {table} (pk INTEGER PRIMARY KEY, a, b)")
    insert_rows(db, "INSERT INTO batched (a, b) VALUES (?, ?)", iter(rows))
    db.executemany("INSERT INTO one_by_one (a, b) VALUES (?, ?)", rows)
    # the same rows with the same keys, in the same order
    assert db.execute("SELECT * FROM batched").fetchall() == db.execute("SELECT * FROM one_by_one").fetchall()


def test_none_is_bound_as_null_by_the_adapter_the_store_registers() -> None:
    from citeaudit.store.connection import bind_none_directly

    key = (type(None), sqlite3.PrepareProtocol)
    adapter = sqlite3.adapters[key]  # registered when the store's connection module was imported
    assert adapter(None) is None
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (a, b)")
    db.executemany("INSERT INTO t VALUES (?, ?)", [(None, 1), (None, None)])
    db.execute("INSERT INTO t VALUES (:a, :b)", {"a": None, "b": "x"})
    assert db.execute("SELECT typeof(a), typeof(b) FROM t ORDER BY rowid").fetchall() == [
        ("null", "integer"),
        ("null", "null"),
        ("null", "text"),
    ]
    # an adapter for None registered by someone else first is left as it is
    del sqlite3.adapters[key]
    try:
        sqlite3.register_adapter(type(None), lambda _: "none")
        bind_none_directly()
        assert sqlite3.adapters[key](None) == "none"
    finally:
        sqlite3.adapters[key] = adapter


def test_batched_inserts_need_a_one_row_insert() -> None:
    from citeaudit.store.bulk import insert_rows

    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE t (a)")
    with pytest.raises(ValueError, match="one-row INSERT"):
        insert_rows(db, "INSERT INTO t SELECT 1", [(1,)])


@pytest.mark.parametrize(
    "check",
    [
        "CHECK (kind NOT IN ('a', 'b', 'c'))",  # a negated list
        "CHECK (t.kind IN ('a', 'b', 'c'))",  # a qualified column
        "CHECK (CASE WHEN kind = 'x' THEN 'a' END IN ('a', 'b', 'c'))",  # an expression, not a column
        "CHECK (kind IN ('a', 'b', 'c') OR kind IS NULL)",  # the list is not the whole constraint
        "CHECK (kind IN ('a', 'b'))",  # two values: SQLite compares them directly already
    ],
)
def test_only_a_whole_check_on_one_column_and_three_values_is_rewritten(check: str) -> None:
    from citeaudit.store.migrations.rebuild import comparisons

    assert comparisons(f"CREATE TABLE u (kind TEXT {check})") == f"CREATE TABLE u (kind TEXT {check})"
