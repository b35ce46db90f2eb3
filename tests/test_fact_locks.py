"""Required facts are locked when a run's first platform answers arrive; later changes are recorded and
disclosed beside every score."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import Result

from citeaudit import Store
from citeaudit.ingest import ingest_file
from conftest import EXAMPLES

Cli = Callable[..., Result]


def example_document() -> dict[str, Any]:
    return json.loads((EXAMPLES / "exporter.audit.json").read_text(encoding="utf-8"))


def revised_protocol(tmp_path: Path, version: str = "2026.12") -> Path:
    """The exporter protocol with f02 reworded, f15 removed and f16 added."""
    protocol = yaml.safe_load((EXAMPLES / "exporter.protocol.yaml").read_text(encoding="utf-8"))
    protocol["version"] = version
    for question in protocol["questions"]:
        facts = question["required_facts"]
        for fact in facts:
            if fact["id"] == "f02":
                fact["text"] = "AX300 maximum working pressure is 11 bar"
        question["required_facts"] = [f for f in facts if f["id"] != "f15"]
        if question["id"] == "q12":
            question["required_facts"].append({"id": "f16", "text": "AX series spare parts for 10 years"})
    path = tmp_path / "revised.yaml"
    path.write_text(yaml.safe_dump(protocol), encoding="utf-8")
    return path


def rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as connection:
        return connection.execute(sql).fetchall()


def test_platform_runs_are_locked_at_first_ingest_fixture_runs_are_not(db_path: Path, four_claim_path: Path) -> None:
    with Store(db_path) as store:
        ingest_file(store, EXAMPLES / "exporter.audit.json")
        ingest_file(store, four_claim_path)
    platform_runs = [r["id"] for r in example_document()["runs"] if r.get("kind", "platform") == "platform"]
    locked = rows(db_path, "SELECT r.id, r.kind FROM fact_locks l JOIN runs r ON r.pk = l.run_pk ORDER BY r.id")
    assert locked == [(run, "platform") for run in sorted(platform_runs)]  # 3 platform runs, the fixture run none


def test_revision_after_answers_moves_every_run_and_warns_everywhere(db_path: Path, tmp_path: Path, cli: Cli) -> None:
    with Store(db_path) as store:
        ingest_file(store, EXAMPLES / "exporter.audit.json")
    document = example_document()
    # claims mapped to the removed fact f15 lose their mapping; counted from the example file itself
    unmapped = sum(1 for c in document["claims"] if c.get("required_fact_id") == "f15")
    assert unmapped == 1

    result = cli(
        "protocol",
        "revise",
        revised_protocol(tmp_path),
        "--db",
        db_path,
        "--by",
        "marta",
        "--reason",
        "pressure corrected from the 2026 datasheet",
    )
    assert result.exit_code == 0, result.stderr
    assert "3 run(s) moved (3 already locked)" in result.stdout
    assert "facts +1 -1 ~1" in result.stdout
    assert f"{unmapped} claim(s) lost their fact mapping" in result.stdout
    assert "WARNING" in result.stderr

    # the runs now belong to the revised protocol; every answer's question was re-attached
    assert rows(db_path, "SELECT DISTINCT p.version FROM runs r JOIN protocols p ON p.pk = r.protocol_pk") == [
        ("2026.12",)
    ]
    assert rows(
        db_path,
        "SELECT count(*) FROM answers a JOIN questions q ON q.pk = a.question_pk "
        "JOIN protocols p ON p.pk = q.protocol_pk WHERE p.version = '2026.12'",
    ) == [(len(document["answers"]),)]

    score = cli("score", db_path, "--protocol", "axtorp-ax-series@2026.12", "--format", "json")
    warnings = json.loads(score.stdout)["warnings"]
    assert len(warnings) == 3  # one per locked run
    assert all("required facts changed after answers were ingested" in w and "by marta" in w for w in warnings)
    table = cli("score", db_path, "--protocol", "axtorp-ax-series@2026.12")
    assert "WARNING: required facts changed after answers were ingested" in table.stdout

    out = tmp_path / "report.html"
    report = cli("report", db_path, "--protocol", "axtorp-ax-series@2026.12", "--out", out, "--resamples", "200")
    assert report.exit_code == 0, report.stderr
    assert out.read_text(encoding="utf-8").count('class="warning"') == 3

    (logged,) = rows(db_path, "SELECT actor, action, before, after FROM audit_log WHERE action = 'protocol.revise'")
    assert logged[:2] == ("marta", "protocol.revise")
    assert json.loads(logged[3])["changes"]["facts_changed"][0]["id"] == "f02"
    history = json.loads(cli("protocol", "history", "--db", db_path, "--format", "json").stdout)
    assert [e["event"] for e in history] == ["locked"] * 3 + ["revised"] * 3
    revised = history[-1]
    assert revised["by"] == "marta"
    assert [f["id"] for f in revised["changes"]["facts_removed"]] == ["f15"]
    assert [f["id"] for f in revised["changes"]["facts_added"]] == ["f16"]
    assert [f["id"] for f in revised["changes"]["facts_changed"]] == ["f02"]


def test_compare_shows_the_warning_of_each_side(db_path: Path, tmp_path: Path, cli: Cli) -> None:
    with Store(db_path) as store:
        ingest_file(store, EXAMPLES / "exporter.audit.json")
    cli("protocol", "revise", revised_protocol(tmp_path), "--db", db_path, "--by", "li")
    result = cli(
        "compare",
        db_path,
        db_path,
        "--where-a",
        "platform=perplexity",
        "--where-b",
        "platform=gemini",
        "--format",
        "json",
        "--resamples",
        "200",
    )
    assert result.exit_code == 0, result.stderr
    body = json.loads(result.stdout)
    # A is the perplexity run only, B the gemini run only: one warning each
    assert len(body["warnings"]["a"]) == 1
    assert len(body["warnings"]["b"]) == 1


def test_no_warning_without_a_lock(db_path: Path, four_claim_path: Path, tmp_path: Path, cli: Cli) -> None:
    with Store(db_path) as store:
        ingest_file(store, four_claim_path)
    protocol = json.loads(four_claim_path.read_text(encoding="utf-8"))["protocol"]
    protocol["version"] = "2"
    protocol["questions"][0]["required_facts"].append({"id": "extra", "text": "An extra fact"})
    path = tmp_path / "p2.yaml"
    path.write_text(yaml.safe_dump(protocol), encoding="utf-8")
    assert cli("protocol", "revise", path, "--db", db_path, "--by", "li").exit_code == 0
    score = json.loads(
        cli("score", db_path, "--kind", "all", "--protocol", "four-claim-fixture@2", "--format", "json").stdout
    )
    assert score["warnings"] == []  # fixture runs are never locked: changing their facts is not after the fact


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"version": "2026.11"}, "new version"),
        ({"id": "other"}, "0 protocols with id 'other' have runs"),
        ({"version": "x", "questions": []}, "answered questions missing"),
    ],
)
def test_bad_revisions_are_refused_and_change_nothing(
    db_path: Path, tmp_path: Path, cli: Cli, change: dict[str, Any], message: str
) -> None:
    with Store(db_path) as store:
        ingest_file(store, EXAMPLES / "exporter.audit.json")
    protocol = yaml.safe_load((EXAMPLES / "exporter.protocol.yaml").read_text(encoding="utf-8"))
    protocol.update(change)
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(protocol), encoding="utf-8")
    before = rows(db_path, "SELECT pk, protocol_pk FROM runs ORDER BY pk")
    result = cli("protocol", "revise", path, "--db", db_path, "--by", "li")
    assert result.exit_code == 2
    assert message in result.stderr
    assert rows(db_path, "SELECT pk, protocol_pk FROM runs ORDER BY pk") == before
    assert rows(db_path, "SELECT count(*) FROM protocol_revisions") == [(0,)]


def test_revisions_are_append_only(db_path: Path, tmp_path: Path, cli: Cli) -> None:
    with Store(db_path) as store:
        ingest_file(store, EXAMPLES / "exporter.audit.json")
    cli("protocol", "revise", revised_protocol(tmp_path), "--db", db_path, "--by", "li")
    with sqlite3.connect(db_path) as connection, pytest.raises(sqlite3.IntegrityError, match="append"):
        connection.execute("UPDATE protocol_revisions SET changed_by = 'someone else'")


def test_ingesting_a_locked_run_under_changed_facts_points_to_revise(db_path: Path, tmp_path: Path, cli: Cli) -> None:
    with Store(db_path) as store:
        ingest_file(store, EXAMPLES / "exporter.audit.json")
    document = example_document()
    document["protocol"]["questions"][0]["required_facts"][0]["text"] = "AX220 tank is 24 L"
    document["answers"] = document["answers"][:1]
    kept = {document["answers"][0]["id"]}
    document["claims"] = [c for c in document["claims"] if c["answer_id"] in kept]
    claims = {c["id"] for c in document["claims"]}
    document["edges"] = [e for e in document["edges"] if e["claim_id"] in claims]
    document["answers"][0]["id"] = "late-answer"
    for claim in document["claims"]:
        claim["answer_id"] = "late-answer"
    document.pop("evidence_groups", None)
    path = tmp_path / "changed.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    result = cli("ingest", path, "--db", db_path)
    assert result.exit_code == 2
    assert "citeaudit protocol revise" in result.stderr
