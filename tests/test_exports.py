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


def _truth(value: object) -> bool:
    # CSV writes booleans as True/False text; JSON Lines keeps them
    return value is True or value == "True"


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_every_headline_number_is_rebuilt_from_the_files(
    cli: Cli, exporter_db: Path, exporter_path: Path, tmp_path: Path, fmt: str
) -> None:
    out = tmp_path / f"rebuild-{fmt}"
    assert cli("export", "--db", exporter_db, "--format", fmt, "--out", out).exit_code == 0
    t = {name: read_table(out / f"{name}.{fmt}") for name in ("answers", "citations", "required_facts", "claims",
                                                              "edges", "scores")}  # fmt: skip
    # the scope `score` uses: platform runs
    answers = {str(a["id"]): a for a in t["answers"] if a["run_kind"] == "platform"}
    claim_answer = {str(c["id"]): str(c["answer_id"]) for c in t["claims"]}
    edges = [e for e in t["edges"] if claim_answer[str(e["claim_id"])] in answers]
    # official rate: answers citing an official source through a cited citation or an edge of their claims
    official = {str(c["answer_id"]) for c in t["citations"] if c["kind"] == "cited" and _truth(c["is_official"])}
    official |= {claim_answer[str(e["claim_id"])] for e in edges if _truth(e["is_official"])}
    official_rate = (len(official & set(answers)), len(answers))
    # precision: supported unique edges / unique edges
    precision = (sum(1 for e in edges if e["final_label"] == "supported"), len(edges))
    # coverage: (answer, required fact) pairs with a mapped claim that has a supported edge
    facts: dict[str, list[str]] = {}
    for f in t["required_facts"]:
        facts.setdefault(str(f["question_id"]), []).append(str(f["fact_id"]))
    supported_claims = {str(e["claim_id"]) for e in edges if e["final_label"] == "supported"}
    covered_pairs = {
        (str(c["answer_id"]), str(c["required_fact_id"])) for c in t["claims"] if str(c["id"]) in supported_claims
    }
    pairs = [(a, f) for a, row in answers.items() for f in facts.get(str(row["question_id"]), [])]
    coverage = (sum(1 for p in pairs if p in covered_pairs), len(pairs))
    (scores,) = t["scores"]
    for name, rebuilt in (("official_rate", official_rate), ("precision", precision), ("coverage", coverage)):
        assert rebuilt == (int(str(scores[f"{name}_numerator"])), int(str(scores[f"{name}_denominator"]))), name
    expected = score(load_audit(exporter_path))
    assert official_rate == (expected.official_rate.numerator, expected.official_rate.denominator)
    assert precision == (expected.precision.numerator, expected.precision.denominator)
    assert coverage == (expected.coverage.numerator, expected.coverage.denominator)
