"""The convention's SQL on Spark SQL in local mode: the four-claim fixture, the printed SQL, and the same numbers as
the in-memory path and DuckDB. One Spark session for the module (it takes seconds to start)."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.test_engines import exported, without_repeats
from tests.test_properties import audit_documents
from typer.testing import Result

from citeaudit.core.model import RunKind
from citeaudit.core.scope import Scope
from citeaudit.core.scoring import IntervalSettings
from citeaudit.engines import score_with_engine
from citeaudit.engines._spark import java_missing, local_session
from citeaudit.scoring.paths import score_path

Cli = Callable[..., Result]


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    """A local Spark session; outside CI the module is skipped when no Java runtime is installed."""
    missing = java_missing()
    if missing is not None:
        if os.environ.get("CI"):
            pytest.fail(f"{missing}: .ci/run installs Debian's openjdk-17-jre-headless; Spark tests never skip in CI")
        pytest.skip(f"{missing} (CI installs it)")
    session = local_session()
    yield session
    session.stop()
    _stop_the_jvm()


def _stop_the_jvm() -> None:
    # session.stop() leaves the JVM that PySpark started running as a child of this process until it exits; later
    # tests count this process's children (the resolver's extraction workers), so the JVM is ended here: it exits
    # when its standard input closes.
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    if gateway is None:
        return
    gateway.shutdown()
    process = getattr(gateway, "proc", None)
    if process is not None:
        if process.stdin is not None:
            process.stdin.close()
        process.wait(timeout=120)
    SparkContext._gateway = None
    SparkContext._jvm = None


@pytest.fixture
def four_claim_parquet(cli: Cli, four_claim_path: Path, tmp_path: Path) -> Path:
    db = tmp_path / "four.db"
    assert cli("ingest", four_claim_path, "--db", db).exit_code == 0
    out = tmp_path / "four-parquet"
    assert cli("export", "--db", db, "--format", "parquet", "--out", out).exit_code == 0
    return out


def test_four_claim_fixture_and_printed_sql_on_spark(spark: Any, cli: Cli, four_claim_parquet: Path) -> None:
    result = cli("score", four_claim_parquet, "--engine", "spark", "--kind", "all", "--format", "json")
    assert result.exit_code == 0, result.stderr
    body = json.loads(result.stdout)
    # c1 cited twice is one supported edge; c2 conflicting, c3 unknown: 1 of 3 edges; c4 has no edge: 1 of 4 facts
    assert body["precision"] == {"value": 1 / 3, "numerator": 1, "denominator": 3}
    assert body["coverage"] == {"value": 0.25, "numerator": 1, "denominator": 4}
    assert body["edges"]["collapsed"] == 1
    # s1, s2, s3 cited and never followed: the official rate stays provisional on Spark too
    assert (body["unresolved_links"], body["official_rate_provisional"]) == (3, True)
    printed = cli("sql", "--engine", "spark", "--kind", "all", "--by", "platform", "--parquet", four_claim_parquet)
    assert printed.exit_code == 0, printed.stderr
    statements = [s.strip().rstrip(";") for s in printed.stdout.split(";\n") if s.strip()]
    for statement in statements[:-1]:
        spark.sql(statement)
    rows = [row.asDict() for row in spark.sql(statements[-1]).collect()]
    assert [r["scope"] for r in rows] == ["group", "overall"]
    overall = rows[1]
    assert (overall["precision_numerator"], overall["precision_denominator"]) == (1, 3)
    assert (overall["coverage_numerator"], overall["coverage_denominator"]) == (1, 4)
    assert overall["precision_value"] == pytest.approx(1 / 3)
    # the fixture has no official citation: 0 of 1 answers, a defined 0 (not null)
    assert overall["official_rate_value"] == 0.0


EVERY_KIND = Scope(run_kinds=frozenset(RunKind))


ONE_RUN = Scope(run_kinds=frozenset(RunKind), where={"run": frozenset({"r1"})})


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    audit_documents(),
    st.sampled_from([(), ("platform",), ("run", "question"), ("locale", "model")]),
    st.sampled_from([EVERY_KIND, ONE_RUN]),
)
def test_numpy_duckdb_and_spark_agree(spark: Any, doc: dict[str, Any], by: tuple[str, ...], scope: Scope) -> None:
    ci = IntervalSettings(resamples=200, seed=1)
    with tempfile.TemporaryDirectory() as folder:
        db, tables = exported(doc, Path(folder))
        numpy = score_path(db, scope=scope, by=by, ci=ci)
        expected = without_repeats(numpy.result.to_dict())
        duck = score_with_engine(tables, "duckdb", scope=scope, by=by, ci=ci)
        on_spark = score_with_engine(tables, "spark", scope=scope, by=by, ci=ci)
    assert duck.result.to_dict() == expected
    assert on_spark.result.to_dict() == expected
    assert duck.unresolved_links == on_spark.unresolved_links == numpy.unresolved_links


def test_spark_submit_entry_point(spark: Any, four_claim_parquet: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from citeaudit.engines import spark_job

    # the job uses the session it finds (under spark-submit, the cluster's) and prints score's JSON
    assert spark_job.main([str(four_claim_parquet), "--kind", "all"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert (body["precision"]["numerator"], body["precision"]["denominator"]) == (1, 3)  # 1 supported of 3 edges
    assert (body["coverage"]["numerator"], body["coverage"]["denominator"]) == (1, 4)  # c1 of c1..c4
    assert spark_job.main([str(four_claim_parquet), "--where", "nonsense"]) == 2
    assert "DIMENSION=VALUE" in capsys.readouterr().err
