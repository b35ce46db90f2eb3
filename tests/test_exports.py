"""Flat exports: every table in CSV and JSON Lines, joinable by ids, with counts matching the audit (the Parquet
export writes the engine tables instead: tests/test_engines.py)."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from citeaudit import load_audit, score

Cli = Callable[..., Result]


@pytest.fixture
def exporter_db(cli: Cli, exporter_path: Path, tmp_path: Path) -> Path:
    db = tmp_path / "exporter.db"
    assert cli("ingest", exporter_path, "--db", db).exit_code == 0
    return db


def read_table(path: Path) -> list[dict[str, object]]:
    if path.suffix == ".csv":
        with path.open(encoding="utf-8") as handle:
            return list(csv.DictReader(handle))
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_tables_match_the_audit(cli: Cli, exporter_db: Path, exporter_path: Path, tmp_path: Path, fmt: str) -> None:
    out = tmp_path / f"export-{fmt}"
    result = cli("export", "--db", exporter_db, "--format", fmt, "--out", out, "--by", "platform")
    assert result.exit_code == 0, result.stderr
    audit = load_audit(exporter_path)
    tables = {
        name: read_table(out / f"{name}.{fmt}") for name in ("answers", "claims", "edges", "judgements", "scores")
    }
    # one row per answer (36), claim (52), unique edge (68), and judgement (63) of the example
    assert len(tables["answers"]) == len(audit.answers) == 36
    assert len(tables["claims"]) == len(audit.claims)
    assert len(tables["edges"]) == len(audit.edges)
    assert len(tables["judgements"]) == sum(len(e.judgements) for e in audit.edges)
    # every edge joins to a claim and every claim to an answer
    claim_ids = {row["id"] for row in tables["claims"]}
    answer_ids = {row["id"] for row in tables["answers"]}
    assert {row["claim_id"] for row in tables["edges"]} <= claim_ids
    assert {row["answer_id"] for row in tables["claims"]} <= answer_ids
    # scores: one row per platform plus the whole scope, with the same counts as `score`
    expected = score(audit, by=["platform"])
    rows = {str(row["platform"]): row for row in tables["scores"]}
    assert set(rows) == {"chatgpt", "gemini", "perplexity", "all"}
    assert int(str(rows["all"]["precision_numerator"])) == expected.precision.numerator
    assert int(str(rows["all"]["precision_denominator"])) == expected.precision.denominator


def test_flat_export_needs_a_folder(cli: Cli, exporter_db: Path) -> None:
    result = cli("export", "--db", exporter_db, "--format", "csv")
    assert result.exit_code == 2
    assert "--out" in result.stderr
