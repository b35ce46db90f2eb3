"""The convention as SQL on DuckDB: the streaming Parquet export, `score --engine duckdb`, `citeaudit sql`, and the
same numbers as the in-memory path over generated audits."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.test_properties import audit_documents, parse
from typer.testing import Result

from citeaudit import Store
from citeaudit.core.convention_sql import DIALECTS, TABLES, cells_sql, preamble_sql, scoring_sql
from citeaudit.core.errors import InvalidValue
from citeaudit.core.model import RunKind
from citeaudit.core.scope import Scope
from citeaudit.core.scoring import IntervalSettings
from citeaudit.engines import export_parquet, score_with_engine
from citeaudit.interchange.reader import load_protocol
from citeaudit.scoring.columnar import score_parquet
from citeaudit.scoring.paths import score_path
from citeaudit.store.engine_tables import engine_table_batches

Cli = Callable[..., Result]
EVERY_KIND = Scope(run_kinds=frozenset(RunKind))


@pytest.fixture
def four_claim_db(cli: Cli, four_claim_path: Path, tmp_path: Path) -> Path:
    db = tmp_path / "four.db"
    assert cli("ingest", four_claim_path, "--db", db).exit_code == 0
    return db


@pytest.fixture
def four_claim_parquet(cli: Cli, four_claim_db: Path, tmp_path: Path) -> Path:
    out = tmp_path / "four-parquet"
    result = cli("export", "--db", four_claim_db, "--format", "parquet", "--out", out)
    assert result.exit_code == 0, result.stderr
    return out


def score_json(cli: Cli, *args: object) -> dict[str, Any]:
    result = cli("score", *args, "--format", "json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


@pytest.mark.parametrize("source", ["parquet", "database"])
def test_four_claim_fixture_on_duckdb(cli: Cli, four_claim_db: Path, four_claim_parquet: Path, source: str) -> None:
    path = four_claim_parquet if source == "parquet" else four_claim_db
    body = score_json(cli, path, "--engine", "duckdb", "--kind", "all")
    # c1 cited twice collapses into one supported edge; c2 conflicting, c3 unknown: 1 supported of 3 edges
    assert body["precision"] == {"value": 1 / 3, "numerator": 1, "denominator": 3}
    # c1 covers its fact; c2 and c3 do not (not supported), c4 has no edge: 1 of 4 pairs
    assert body["coverage"] == {"value": 0.25, "numerator": 1, "denominator": 4}
    # 4 locations behind 3 edges: one collapsed
    assert body["edges"]["locations"] == 4
    assert body["edges"]["collapsed"] == 1
    assert body["required"]["without_edge"] == 1
    # platform runs only: the fixture run is out of scope, every value null, every count 0
    empty = score_json(cli, path, "--engine", "duckdb", "--kind", "platform")
    assert empty["precision"] == {"value": None, "numerator": 0, "denominator": 0}
    assert empty["official_rate"] == {"value": None, "numerator": 0, "denominator": 0}


@pytest.mark.parametrize("source", ["parquet", "database"])
def test_duckdb_keeps_the_official_rate_provisional(
    cli: Cli, four_claim_db: Path, four_claim_parquet: Path, source: str
) -> None:
    path = four_claim_parquet if source == "parquet" else four_claim_db
    body = score_json(cli, path, "--engine", "duckdb", "--kind", "fixture")
    # cited: s1 (twice), s2, s3 → 3 distinct sources, none followed yet: as the numpy path says
    numpy = score_json(cli, four_claim_db, "--kind", "fixture")
    assert (body["unresolved_links"], body["official_rate_provisional"]) == (3, True)
    assert (numpy["unresolved_links"], numpy["official_rate_provisional"]) == (3, True)
    assert body["official_rate"] == numpy["official_rate"]
    table = cli("score", path, "--engine", "duckdb", "--kind", "fixture")
    assert "official rate*" in table.stdout
    assert "official rate PROVISIONAL: 3 cited link(s)" in " ".join(table.stdout.split())


def test_printed_sql_gives_the_totals(cli: Cli, four_claim_parquet: Path) -> None:
    printed = cli("sql", "--engine", "duckdb", "--kind", "all", "--by", "platform", "--parquet", four_claim_parquet)
    assert printed.exit_code == 0, printed.stderr
    con = duckdb.connect()
    statements = [s for s in printed.stdout.split(";\n") if s.strip()]
    for statement in statements[:-1]:
        con.execute(statement)
    cursor = con.execute(statements[-1].rstrip().rstrip(";"))
    names = [d[0] for d in cursor.description]
    rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    # one group (the fixture's one platform) and the whole scope, with the same counts
    assert [r["scope"] for r in rows] == ["group", "overall"]
    overall = rows[1]
    assert (overall["precision_numerator"], overall["precision_denominator"]) == (1, 3)
    assert overall["precision_value"] == pytest.approx(1 / 3)
    assert (overall["coverage_numerator"], overall["coverage_denominator"]) == (1, 4)
    assert overall["collapsed"] == 1
    assert overall["provisional"] is False
    # an empty scope: counts 0, values NULL (never 0, never NaN)
    empty = cli(
        "sql", "--engine", "duckdb", "--kind", "all", "--where", "platform=none", "--parquet", four_claim_parquet
    )
    statements = [s for s in empty.stdout.split(";\n") if s.strip()]
    for statement in statements[:-1]:
        con.execute(statement)
    cursor = con.execute(statements[-1].rstrip().rstrip(";"))
    names = [d[0] for d in cursor.description]
    (row,) = [dict(zip(names, r, strict=True)) for r in cursor.fetchall()]
    assert row["edges"] == 0
    assert row["answers"] == 0
    assert row["precision_value"] is None
    assert row["coverage_value"] is None
    assert row["official_rate_value"] is None


def test_one_generator_two_dialects() -> None:
    duck = scoring_sql(DIALECTS["duckdb"], by=["platform"], where={"platform": ["it's"]})
    spark = scoring_sql(DIALECTS["spark"], by=["platform"], where={"platform": ["it's"]})
    # the same query but for the small dialect parameters: quoting, text type, grouping function, materialization
    assert "'it''s'" in duck
    assert "'it\\'s'" in spark
    assert "GROUPING(platform)" in duck
    assert "grouping_id(platform)" in spark
    normalized = (
        spark.replace("'it\\'s'", "'it''s'").replace("grouping_id(", "GROUPING(").replace("AS STRING", "AS VARCHAR")
    )
    assert normalized == duck.replace("AS MATERIALIZED (", "AS (")


def test_export_layout_is_hive_partitioned(cli: Cli, four_claim_parquet: Path, four_claim_db: Path) -> None:
    with Store(four_claim_db) as store:
        (fingerprint,) = [p.fingerprint for p in store.protocols()]
    partition = "protocol=" + fingerprint.replace(":", "-")[:23]
    files = sorted(str(p.relative_to(four_claim_parquet)) for p in four_claim_parquet.rglob("*.parquet"))
    assert f"answers/{partition}/run=fixture-four-claim/part-0.parquet" in files
    assert f"required_facts/{partition}/part-0.parquet" in files
    assert {f.split("/")[0] for f in files} == set(TABLES)
    # one row per location (4), per unique edge (3), per claim (4)
    rows = {name: pq.read_table(four_claim_parquet / name).num_rows for name in TABLES}
    assert (rows["edge_locations"], rows["edges"], rows["claims"], rows["answers"]) == (4, 3, 4, 1)


def _table_rows(folder: Path) -> dict[str, list[tuple[Any, ...]]]:
    found = {}
    for name in TABLES:
        table = pq.read_table(folder / name)
        found[name] = sorted(zip(*(table.column(c).to_pylist() for c in table.column_names), strict=True), key=repr)
    return found


def test_export_in_many_row_groups_writes_the_same_rows(
    cli: Cli, exporter_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Row groups are written on a thread of their own while the next are gathered; with one row to a row group
    # and three rows to a batch, every table is many writes in flight one after another, and the rows must be
    # those of one write per table.
    db = tmp_path / "exporter.db"
    assert cli("ingest", exporter_path, "--db", db).exit_code == 0
    export_parquet(db, tmp_path / "whole")
    monkeypatch.setattr("citeaudit.engines._parquet._BUFFERED_ROWS", 1)
    monkeypatch.setattr("citeaudit.engines.engine_table_batches", functools.partial(engine_table_batches, batch_rows=3))
    export_parquet(db, tmp_path / "grouped")
    whole, grouped = _table_rows(tmp_path / "whole"), _table_rows(tmp_path / "grouped")
    assert grouped == whole
    assert sum(len(rows) for rows in whole.values()) > 100  # enough rows for many row groups
    row_groups = pq.ParquetFile(next((tmp_path / "grouped" / "edge_locations").rglob("*.parquet"))).num_row_groups
    assert row_groups > 1


def test_a_failed_row_group_write_leaves_nothing(
    four_claim_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(*_: object, **__: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pq.ParquetWriter, "write_table", full)
    with pytest.raises(OSError, match="No space left"):
        export_parquet(four_claim_db, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out")]  # no staging left behind


def test_export_refuses_a_folder_with_files(cli: Cli, four_claim_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "taken"
    out.mkdir()
    (out / "keep.txt").write_text("mine", encoding="utf-8")
    result = cli("export", "--db", four_claim_db, "--format", "parquet", "--out", out)
    assert result.exit_code == 2
    assert "not an empty folder" in result.stderr
    assert [p.name for p in out.iterdir()] == ["keep.txt"]  # nothing written beside it
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".taken")]  # no staging left behind


def test_batches_are_bounded(four_claim_db: Path) -> None:
    with Store(four_claim_db) as store:
        pk = store.choose_protocol(None)
        batches = list(engine_table_batches(store.connection, store.protocol(pk), pk, batch_rows=2))
    assert max(b.rows for b in batches) == 2
    # 4 locations in batches of at most 2: two batches of 2
    assert [b.rows for b in batches if b.table == "edge_locations"] == [2, 2]


def test_engine_errors_are_one_line(cli: Cli, four_claim_path: Path, four_claim_db: Path, tmp_path: Path) -> None:
    missing = cli("score", tmp_path / "nowhere", "--engine", "duckdb")
    assert missing.exit_code == 2
    assert "does not exist" in missing.stderr
    not_tables = cli("score", four_claim_path, "--engine", "duckdb")
    assert not_tables.exit_code == 2
    assert "neither a citeaudit database nor a Parquet folder" in not_tables.stderr
    spark_db = cli("score", four_claim_db, "--engine", "spark")
    assert spark_db.exit_code == 2
    assert "export --format parquet" in spark_db.stderr
    macro = cli("score", four_claim_db, "--engine", "duckdb", "--macro")
    assert macro.exit_code == 2
    assert "numpy engine only" in macro.stderr
    broken = tmp_path / "broken"
    assert cli("export", "--db", four_claim_db, "--format", "parquet", "--out", broken).exit_code == 0
    shutil.rmtree(broken / "claims")
    no_claims = cli("score", broken, "--engine", "duckdb", "--kind", "all")
    assert no_claims.exit_code == 2
    assert "duckdb cannot score these tables" in no_claims.stderr
    assert "claims" in no_claims.stderr
    for result in (missing, not_tables, spark_db, macro, no_claims):
        assert "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_run_ids_survive_the_partition_folder(cli: Cli, write_json: Callable[..., Path], tmp_path: Path) -> None:
    doc = json.loads((Path(__file__).parent.parent / "src/citeaudit/examples/four-claim.audit.json").read_text())
    for answer in doc["answers"]:
        answer["run_id"] = "2026/11 pplx=1"
    doc.pop("runs", None)
    db = tmp_path / "odd.db"
    assert cli("ingest", write_json(doc), "--db", db).exit_code == 0
    out = tmp_path / "odd"
    assert cli("export", "--db", db, "--format", "parquet", "--out", out).exit_code == 0
    body = score_json(cli, out, "--engine", "duckdb", "--kind", "all", "--by", "run")
    assert [g["by"] for g in body["groups"]] == [{"run": "2026/11 pplx=1"}]
    assert body["groups"][0]["precision"]["denominator"] == 3


def without_repeats(result: dict[str, Any]) -> dict[str, Any]:
    """The result without repeat variance (per-answer figures, computed on the in-memory path only)."""
    return {k: v for k, v in result.items() if k != "repeats"}


def exported(doc: dict[str, Any], folder: Path) -> tuple[Path, Path]:
    """The document imported into a database and exported as Parquet: (database, dataset)."""
    db = folder / "audit.db"
    with Store(db) as store:
        store.import_audit(parse(doc), json.dumps(doc).encode(), "generated.json")
    export_parquet(db, folder / "tables")
    return db, folder / "tables"


BY = st.sampled_from([(), ("platform",), ("run", "question"), ("locale", "model"), ("sample",)])


SCOPES = st.sampled_from(
    [EVERY_KIND, Scope(), Scope(where={"platform": frozenset({"p1"})}), Scope(where={"run": frozenset({"r1"})})]
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(audit_documents(), BY, SCOPES)
def test_duckdb_equals_the_numpy_path(doc: dict[str, Any], by: tuple[str, ...], scope: Scope) -> None:
    with tempfile.TemporaryDirectory() as folder:
        db, tables = exported(doc, Path(folder))
        numpy = score_path(db, scope=scope, by=by)
        expected = without_repeats(numpy.result.to_dict())
        for source in (tables, db):
            scored = score_with_engine(source, "duckdb", scope=scope, by=by)
            assert scored.result.to_dict() == expected
            # the official rate is provisional on the same unresolved links
            assert scored.unresolved_links == numpy.unresolved_links


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(audit_documents(), BY)
def test_score_parquet_reads_what_the_export_writes(doc: dict[str, Any], by: tuple[str, ...]) -> None:
    # one Parquet layout: the dataset `export --format parquet` writes is what score_parquet scores, with the
    # numbers of the database it came from (platform runs, as `score` scores them)
    with tempfile.TemporaryDirectory() as folder:
        db, tables = exported(doc, Path(folder))
        scored = score_path(db, by=by)
        assert score_parquet(tables, scored.protocol, by=by).to_dict() == scored.result.to_dict()


def test_score_parquet_refuses_an_export_of_another_protocol(four_claim_parquet: Path, tmp_path: Path) -> None:
    path = tmp_path / "other.yaml"
    path.write_text(
        "id: other\nversion: '1'\nofficial_domains: [brand.com]\nquestions:\n  - {id: q1, text: 'Q', locale: en}\n",
        encoding="utf-8",
    )
    other = load_protocol(path)
    with pytest.raises(InvalidValue, match="no protocol with fingerprint"):
        score_parquet(four_claim_parquet, other)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(audit_documents(), st.sampled_from([(), ("platform",)]))
def test_intervals_from_cells_equal_the_numpy_path(doc: dict[str, Any], by: tuple[str, ...]) -> None:
    ci = IntervalSettings(resamples=200, seed=3)
    with tempfile.TemporaryDirectory() as folder:
        db, tables = exported(doc, Path(folder))
        expected = without_repeats(score_path(db, by=by, ci=ci).result.to_dict())
        assert score_with_engine(tables, "duckdb", by=by, ci=ci).result.to_dict() == expected


def test_weighted_coverage_on_duckdb(write_json: Callable[..., Path], cli: Cli, tmp_path: Path) -> None:
    doc = json.loads((Path(__file__).parent.parent / "src/citeaudit/examples/four-claim.audit.json").read_text())
    doc["protocol"]["weights"] = {"critical": 4, "high": 2, "medium": 1, "low": 0.5}
    db = tmp_path / "weighted.db"
    assert cli("ingest", write_json(doc), "--db", db).exit_code == 0
    out = tmp_path / "weighted"
    assert cli("export", "--db", db, "--format", "parquet", "--out", out).exit_code == 0
    body = score_json(cli, out, "--engine", "duckdb", "--kind", "all")
    assert body["weighted_coverage"] == score_json(cli, db, "--kind", "all")["weighted_coverage"]


def test_cells_query_is_one_result_per_question() -> None:
    con = duckdb.connect()
    for name, columns in TABLES.items():
        spec = [f"{c.name} {c.type}" for c in columns] + ["protocol VARCHAR", "run VARCHAR"]
        con.execute(f"CREATE TABLE {name} ({', '.join(spec)})")
    con.execute("INSERT INTO answers VALUES (1, 'a1', 'q1', 'p', 'm', 'en', NULL, 'platform', 'x', 'r')")
    con.execute("INSERT INTO answers VALUES (2, 'a2', 'q2', 'p', 'm', 'en', NULL, 'platform', 'x', 'r')")
    rows = con.execute(cells_sql(DIALECTS["duckdb"], by=["platform"])).fetchall()
    # two questions, no facts and no edges: one answer cell each (severity NULL)
    assert [(r[0], r[1], r[2]) for r in rows] == [("p", "q1", None), ("p", "q2", None)]
    assert "read_parquet" in preamble_sql(DIALECTS["duckdb"], "s3://bucket/audit")


def test_edges_meet_their_locations_in_the_cells() -> None:
    """The edge cases of joining locations to edges: an edge row without a location is no edge, locations without
    an edge row are a pending edge, a disputed edge without a label is pending and disputed, and a run filter
    reads only that run's partitions."""
    con = duckdb.connect()
    for name, columns in TABLES.items():
        spec = [f"{c.name} {c.type}" for c in columns] + ["protocol VARCHAR", "run VARCHAR"]
        con.execute(f"CREATE TABLE {name} ({', '.join(spec)})")
    con.execute("INSERT INTO answers VALUES (1, 'a1', 'q1', 'p', 'm', 'en', NULL, 'platform', 'x', 'r1')")
    con.execute("INSERT INTO answers VALUES (2, 'a2', 'q1', 'p', 'm', 'en', NULL, 'platform', 'x', 'r2')")
    con.execute("INSERT INTO claims VALUES (10, 'c10', 1, NULL, 'high', 'x', 'r1')")
    con.execute("INSERT INTO claims VALUES (20, 'c20', 2, NULL, 'high', 'x', 'r2')")
    con.execute(
        "INSERT INTO sources VALUES (5, 's5', TRUE, 'resolved', 'x', 'r'), (6, 's6', FALSE, 'resolved', 'x', 'r')"
    )
    con.execute(
        "INSERT INTO sources VALUES (7, 's7', FALSE, 'resolved', 'x', 'r'), (8, 's8', FALSE, 'pending', 'x', 'r')"
    )
    # c10: s5 supported and cited twice; s6 disputed; s7 located but without an edge row; s8 an edge never located
    con.execute(
        "INSERT INTO edges VALUES (10, 5, 'supported', 'labelled', 'x', 'r1'), (10, 6, NULL, 'disputed', 'x', 'r1'),"
        " (10, 8, 'conflicting', 'labelled', 'x', 'r1'), (20, 6, 'partial', 'labelled', 'x', 'r2')"
    )
    con.execute(
        "INSERT INTO edge_locations VALUES (10, 5, 'x', 'r1'), (10, 5, 'x', 'r1'), (10, 6, 'x', 'r1'),"
        " (10, 7, 'x', 'r1'), (20, 6, 'x', 'r2')"
    )
    counts = ["edges", "locations", "supported", "partial", "conflicting", "pending", "disputed"]

    def cells(**where: list[str]) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        cursor = con.execute(cells_sql(DIALECTS["duckdb"], by=["run"], where=where))
        rows = [dict(zip([d[0] for d in cursor.description], row, strict=True)) for row in cursor.fetchall()]
        edge_rows = [(r["run"], *(r[n] for n in counts)) for r in rows if r["severity"] is not None]
        answer_rows = [(r["run"], r["answers"], r["official"]) for r in rows if r["severity"] is None]
        return edge_rows, answer_rows

    # r1: three edges (s5 cited twice, s6, s7) and four locations; s5 supported, s7 pending, s6 disputed (the
    # roll-up counts it as pending too); s8 is never cited. a1 cites the official s5. r2: one partial edge.
    r1_edges, r2_edges = ("r1", 3, 4, 1, 0, 0, 1, 1), ("r2", 1, 1, 0, 1, 0, 0, 0)
    assert cells() == ([r1_edges, r2_edges], [("r1", 1, 1), ("r2", 1, 0)])
    assert cells(run=["r2"]) == ([r2_edges], [("r2", 1, 0)])


def test_groups_with_the_same_questions_share_resamples_and_keep_their_intervals() -> None:
    from tests import builders as b

    # two platforms, each answering q1 and q2: both groups and the whole scope have the clusters {q1, q2}
    answers = [b.answer(f"a{p}{q}", question=f"q{q}", platform=f"p{p}") for p in (1, 2) for q in (1, 2)]
    claims = [b.claim(f"c{a['id']}", a["id"], fact=f"{a['question_id']}f1") for a in answers]
    labels = ["supported", "partial", "unknown", "unknown"]
    edges = [
        b.edge(c["id"], f"https://site{k}.org/x", label)
        for c, label in zip(claims, labels, strict=True)
        for k in (1, 2)
    ]
    doc = b.document(answers, claims, edges, b.protocol(questions=2))
    ci = IntervalSettings(resamples=300, seed=5)
    with tempfile.TemporaryDirectory() as folder:
        db, tables = exported(doc, Path(folder))
        expected = without_repeats(score_path(db, by=["platform"], ci=ci).result.to_dict())
        found = score_with_engine(tables, "duckdb", by=["platform"], ci=ci).result.to_dict()
    assert found == expected
    # p1: a11 supported on 2 edges, a12 partial on 2 → 2/4; p2: unknown on all 4 → 0/4
    p1, p2 = found["groups"]
    assert p1["precision"]["value"] == 2 / 4
    assert p2["precision"]["value"] == 0
    # each group keeps its own interval over its two questions: p2's is [0, 0], p1's is not
    assert p1["precision"]["ci"]["clusters"] == p2["precision"]["ci"]["clusters"] == 2
    assert (p2["precision"]["ci"]["low"], p2["precision"]["ci"]["high"]) == (0.0, 0.0)
    assert p1["precision"]["ci"]["high"] > 0


def test_both_ledger_readers_give_the_same_tables(four_claim_db: Path) -> None:
    import pyarrow as pa

    from citeaudit.engines._parquet import arrow_schemas, record_batch

    schemas = arrow_schemas()

    def tables(path: str | None) -> dict[str, list[dict[str, Any]]]:
        with Store(four_claim_db) as store:
            pk = store.choose_protocol(None)
            batches = list(engine_table_batches(store.connection, store.protocol(pk), pk, path=path))
        found: dict[str, list[dict[str, Any]]] = {}
        for batch in batches:
            rows = pa.Table.from_batches([record_batch(batch, schemas[batch.table])]).to_pylist()
            found.setdefault(batch.table, []).extend(rows)
        return {name: sorted(rows, key=repr) for name, rows in found.items()}

    # the ADBC driver (Arrow straight from SQLite) and the sqlite3 fallback read the same rows and values
    through_adbc, through_sqlite3 = tables(str(four_claim_db)), tables(None)
    assert through_adbc == through_sqlite3
    # c1 supported (cited twice), c2 conflicting, c3 unknown: three edges with their final labels
    assert sorted(r["label"] for r in through_adbc["edges"]) == ["conflicting", "supported", "unknown"]
    assert len(through_adbc["edge_locations"]) == 4


def test_duckdb_draws_no_progress_bar(four_claim_parquet: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """DuckDB's progress bar goes to standard output, where `score --format json` prints: the engine's
    connections turn it off (it shows only for queries past two seconds, so the setting is what is checked)."""
    from citeaudit.engines._duckdb import DuckDBRunner

    connect = duckdb.connect

    def drawing(*args: Any, **kwargs: Any) -> Any:
        # a connection as a script gets one (DuckDB leaves the bar off under pytest by itself)
        con = connect(*args, **kwargs)
        con.execute("SET enable_progress_bar = true")
        return con

    monkeypatch.setattr(duckdb, "connect", drawing)
    setting = "SELECT current_setting('enable_progress_bar') AS shown"
    with DuckDBRunner.over_parquet(str(four_claim_parquet)) as runner:
        assert runner.query(setting) == {"shown": [False]}
    with DuckDBRunner.over_batches(iter([])) as runner:
        assert runner.query(setting) == {"shown": [False]}


def test_a_rerun_removes_the_staging_folders_a_killed_export_left(four_claim_db: Path, tmp_path: Path) -> None:
    # A killed export leaves its staging folder (.out.PID.XXXX); the next export to the same place removes those
    # of processes that no longer run, and leaves an export still running alone.
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, check=True)
    abandoned = tmp_path / f".out.{int(ended.stdout)}.k1ll3d"
    (abandoned / "answers").mkdir(parents=True)
    (abandoned / "answers" / "part-0.parquet").write_bytes(b"PAR1 half")
    running = tmp_path / f".out.{os.getpid()}.runnin"
    running.mkdir()
    export_parquet(four_claim_db, tmp_path / "out")
    assert not abandoned.exists()
    assert running.exists()
    assert (tmp_path / "out" / "answers").is_dir()


def test_an_export_without_a_column_the_sql_reads_is_refused_by_name(cli: Cli, four_claim_parquet: Path) -> None:
    # An export written before sources carried their resolution state: the same files without `status`.
    import pyarrow.parquet as pq

    files = sorted((four_claim_parquet / "sources").rglob("*.parquet"))
    assert files
    for file in files:
        table = pq.read_table(file, partitioning=None)
        pq.write_table(table.drop_columns(["status"]), file)
    result = cli("score", four_claim_parquet, "--engine", "duckdb", "--kind", "all")
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert str(four_claim_parquet) in lines[0]
    assert "sources" in lines[0]
    assert "missing column 'status'" in lines[0]
    assert "Traceback" not in result.stderr
