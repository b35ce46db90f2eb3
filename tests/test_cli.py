"""The command line end to end, on real files and databases."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from citeaudit.cli import app

Cli = Callable[..., Result]


def test_score_json_is_exactly_the_documented_shape(cli: Cli, four_claim_path: Path) -> None:
    result = cli("score", four_claim_path, "--format", "json", "--kind", "fixture")
    assert result.exit_code == 0, result.stderr
    body = json.loads(result.stdout)
    assert body["scoring"] == "strict-v1"
    assert body["fingerprint"].startswith("sha256:")
    assert body["provisional"] is False
    # 1 supported of 3 unique edges; 1 of 4 (answer, fact) pairs; the fixture cites no official source (0/1),
    # provisional: its three cited links (s1, s2, s3) were never resolved
    assert body["precision"] == {"value": 1 / 3, "numerator": 1, "denominator": 3}
    assert body["coverage"] == {"value": 0.25, "numerator": 1, "denominator": 4}
    assert body["official_rate"] == {
        "value": 0.0,
        "numerator": 0,
        "denominator": 1,
        "state": "provisional",
        "pending": 3,
        "shown": "0/1 · 3 links pending",
    }
    assert body["edges"] == {
        "unique": 3,
        "locations": 4,
        "collapsed": 1,
        "pending": 0,
        "disputed": 0,
        "by_label": {"supported": 1, "partial": 0, "conflicting": 1, "irrelevant": 0, "unknown": 1},
    }
    # c2 (conflicting) and c3 (unknown) have edges, none supported: 1 + 0 + 1 + 2 = 4 pairs; every edge has its
    # final label, so no pair is pending
    assert body["required"] == {
        "pairs": 4,
        "covered": 1,
        "without_claim": 0,
        "without_edge": 1,
        "not_supported": 2,
        "pending": 0,
    }
    assert body["groups"] == []


def test_fixture_runs_stay_out_of_platform_figures(cli: Cli, four_claim_path: Path) -> None:
    body = json.loads(cli("score", four_claim_path, "--format", "json", "--kind", "platform").stdout)
    # the only answer belongs to a fixture run: nothing is in the platform scope asked for → all null
    assert body["answers"] == 0
    assert body["precision"] == {"value": None, "numerator": 0, "denominator": 0}
    table = cli("score", four_claim_path, "--kind", "platform")
    assert "excluded: 1 answer(s) of other run kinds" in table.stdout


def test_score_table_shows_fractions_and_undefined(cli: Cli, four_claim_path: Path, write_json: Any) -> None:
    table = cli("score", four_claim_path, "--kind", "fixture")
    assert table.exit_code == 0
    assert "1/3" in table.stdout
    assert "0.333" in table.stdout
    assert "1/4" in table.stdout
    assert "0.250" in table.stdout
    doc = json.loads(four_claim_path.read_text())
    doc["edges"] = []
    empty = cli("score", write_json(doc, "no-edges.json"), "--kind", "fixture")
    assert "n/a (no edges)" in empty.stdout
    assert "0.000" not in empty.stdout.split("official")[0]


def test_score_csv_has_one_row_per_group(cli: Cli, exporter_path: Path) -> None:
    result = cli("score", exporter_path, "--by", "platform", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [r["platform"] for r in rows] == ["chatgpt", "gemini", "perplexity"]
    # each platform answered the 12 questions once
    assert all(r["answers"] == "12" for r in rows)
    for row in rows:
        assert float(row["precision"]) == int(row["precision_numerator"]) / int(row["precision_denominator"])


def test_score_by_two_dimensions_and_macro(cli: Cli, exporter_path: Path) -> None:
    body = json.loads(cli("score", exporter_path, "--by", "platform,question", "--macro", "--format", "json").stdout)
    # 3 platforms × 12 questions, one answer each
    assert len(body["groups"]) == 36
    assert body["group_by"] == ["platform", "question"]
    assert body["macro"]["precision"]["macro"] is True
    assert body["macro"]["precision"]["answers"] + body["macro"]["precision"]["excluded"] == 36


def test_ingest_score_export_round_trip(cli: Cli, exporter_path: Path, db_path: Path, tmp_path: Path) -> None:
    assert cli("ingest", exporter_path, "--db", db_path).exit_code == 0
    again = cli("ingest", exporter_path, "--db", db_path)
    assert "already imported" in again.stdout
    out = tmp_path / "export.json"
    assert cli("export", "--db", db_path, "--format", "audit-json", "--out", out).exit_code == 0
    from_file = json.loads(cli("score", exporter_path, "--format", "json", "--by", "platform").stdout)
    from_db = json.loads(cli("score", db_path, "--format", "json", "--by", "platform").stdout)
    from_export = json.loads(cli("score", out, "--format", "json", "--by", "platform").stdout)
    assert from_file == from_db == from_export
    fresh = tmp_path / "fresh.db"
    assert cli("ingest", out, "--db", fresh).exit_code == 0
    second = tmp_path / "export2.json"
    assert cli("export", "--db", fresh, "--out", second).exit_code == 0
    assert second.read_text() == out.read_text()


def test_db_comes_from_the_environment(cli: Cli, four_claim_path: Path, tmp_path: Path) -> None:
    db = tmp_path / "env.db"
    result = cli("ingest", four_claim_path, env={"CITEAUDIT_DB": str(db)})
    assert result.exit_code == 0
    assert db.exists()
    exported = cli("export", env={"CITEAUDIT_DB": str(db)})
    assert json.loads(exported.stdout)["format"] == "citeaudit.audit/v1"


def test_compare_paired_per_question(cli: Cli, exporter_path: Path) -> None:
    result = cli(
        "compare",
        exporter_path,
        exporter_path,
        "--where-a",
        "platform=gemini",
        "--where-b",
        "platform=chatgpt",
        "--format",
        "json",
        "--resamples",
        "500",
    )
    assert result.exit_code == 0, result.stderr
    body = json.loads(result.stdout)
    a, b = body["a"]["precision"], body["b"]["precision"]
    precision = body["metrics"]["precision"]
    # gemini 7/26, chatgpt 12/25 (the demo's figures): B − A = 12/25 − 7/26
    assert precision["delta"] == pytest.approx(b["numerator"] / b["denominator"] - a["numerator"] / a["denominator"])
    assert precision["delta"] == pytest.approx(12 / 25 - 7 / 26)
    assert precision["ci"]["clusters"] == 12
    assert 0 < precision["p_value"] <= 1
    assert precision["wording"] in ("not distinguishable from noise",) or precision["wording"].startswith("associated")
    table = cli("compare", exporter_path, exporter_path, "--by", "platform", "--resamples", "200")
    assert table.exit_code == 0
    words = " ".join(table.stdout.split())  # the note may wrap anywhere
    assert "B − A" in words
    assert "not causal" in words


def test_compare_refuses_different_questions(cli: Cli, exporter_path: Path) -> None:
    result = cli("compare", exporter_path, exporter_path, "--where-a", "question=q01", "--where-b", "question=q02")
    assert result.exit_code == 2
    assert "question ids in scope" in result.stderr


def test_compare_refuses_across_fingerprints_naming_components(cli: Cli, exporter_path: Path, write_json: Any) -> None:
    doc = json.loads(exporter_path.read_text())
    doc["protocol"]["official_domains"] = ["axtorp-machines.com"]
    doc["protocol"]["questions"][0]["required_facts"][0]["text"] = "AX220 tank is 25 L"
    changed = write_json(doc, "changed.json")
    result = cli("compare", exporter_path, changed)
    assert result.exit_code == 2
    assert "official_domains" in result.stderr
    assert "required_facts" in result.stderr
    assert "segmentation" not in result.stderr


def test_protocol_fingerprint(cli: Cli, exporter_path: Path) -> None:
    path = exporter_path.with_name("exporter.protocol.yaml")
    result = cli("protocol", "fingerprint", path, "--format", "json")
    body = json.loads(result.stdout)
    score_body = json.loads(cli("score", exporter_path, "--format", "json").stdout)
    assert body["fingerprint"] == score_body["fingerprint"]
    assert "required_facts" in body["components"]
    assert cli("protocol", "check", path).exit_code == 0


def test_demo_builds_the_database_and_prints_the_fixture(cli: Cli, tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    result = cli("demo", "--db", db)
    assert result.exit_code == 0, result.stderr
    assert "1/3" in result.stdout
    assert "1/4" in result.stdout
    for platform in ("chatgpt", "gemini", "perplexity"):
        assert platform in result.stdout
    # run again: rebuilt, not duplicated
    assert cli("demo", "--db", db).exit_code == 0
    body = json.loads(cli("score", db, "--format", "json", "--kind", "all", "--protocol", "axtorp-ax-series").stdout)
    assert body["answers"] == 36


def test_demo_refuses_to_replace_a_non_database(cli: Cli, tmp_path: Path) -> None:
    precious = tmp_path / "notes.db"
    precious.write_text("my notes")
    result = cli("demo", "--db", precious)
    assert result.exit_code == 2
    assert precious.read_text() == "my notes"


def test_formats_and_schema(cli: Cli) -> None:
    assert "audit-json" in cli("formats").stdout
    schema = json.loads(cli("schema").stdout)
    assert schema["$id"] == "citeaudit.audit/v1"


def commands() -> list[tuple[str, Any]]:
    import typer.main

    group = typer.main.get_command(app)
    found = []
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        sub = getattr(command, "commands", None)
        if sub:
            found.extend((f"{name} {child}", c) for child, c in sub.items())
        else:
            found.append((name, command))
    return found


def test_every_command_has_help_and_is_documented_in_the_readme() -> None:
    root = Path(__file__).resolve().parent.parent
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    readme = "\n".join(page.read_text(encoding="utf-8") for page in pages if page.exists())
    for name, command in commands():
        assert command.help, f"{name} has no help text"
        assert f"citeaudit {name}" in readme, f"neither README nor docs/ documents `citeaudit {name}`"


def test_console_script_runs_as_a_real_process(four_claim_path: Path, tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("citeaudit")
    env = {**os.environ, "CITEAUDIT_DB": str(tmp_path / "p.db")}
    done = subprocess.run([script, "ingest", four_claim_path], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    bad = subprocess.run([script, "score", tmp_path / "missing.json"], capture_output=True, text=True, check=False)
    assert bad.returncode == 2
    assert "missing.json" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_disclosure_and_uncovered_facts_by_severity(cli: Cli, exporter_path: Path) -> None:
    body = json.loads(cli("score", exporter_path, "--format", "json").stdout)
    disclosure = body["disclosure"]
    assert disclosure["fingerprint"] == body["fingerprint"]
    assert (disclosure["scoring"], disclosure["partial_handling"], disclosure["unknown_handling"]) == (
        "strict-v1",
        "unsupported",
        "denominator",
    )
    # the exporter protocol: 12 questions with 15 required facts, segmentation "manual" version 1
    assert (disclosure["required_facts"]["questions"], disclosure["required_facts"]["facts"]) == (12, 15)
    assert disclosure["segmentation"]["method"] == "manual"
    table = " ".join(cli("score", exporter_path).stdout.split())
    assert "disclosure: axtorp-ax-series@2026.11" in table
    assert "not covered" in table
    critical = body["severity"]["critical"]["coverage"]
    # the table's critical row shows pairs, covered and their difference
    assert f"critical │ {critical['denominator']} │ {critical['numerator']} │" in " ".join(
        cli("score", exporter_path).stdout.replace("  ", " ").split()
    )
