"""Nothing silent at ingest: the same engine response twice in one file is refused (stored twice it would double
every denominator), and what a reader only partly understood is stored with the import and shown by ``score``.

Each case was once taken without a word: two answers stored from one response, an Anthropic search result of an
unknown type dropped uncounted, "partly understood" printed but ``imports.counts.partial`` left at 0.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from conftest import REPO

Cli = Callable[..., Result]

FIXTURES = REPO / "tests" / "fixtures"
PROTOCOL = FIXTURES / "protocol.yaml"


def fixture(folder: str, name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((FIXTURES / folder / name).read_text(encoding="utf-8"))
    return loaded


def ingest(cli: Cli, path: Path, db: Path, fmt: str) -> Result:
    return cli("ingest", path, "--db", db, "--format", fmt, "--questions", PROTOCOL, "--question-id", "q01")


def import_counts(db: Path) -> list[dict[str, Any]]:
    with sqlite3.connect(db) as connection:
        return [json.loads(counts) for (counts,) in connection.execute("SELECT counts FROM imports ORDER BY pk")]


@pytest.mark.parametrize(
    ("folder", "name", "fmt"),
    [
        ("openai-responses", "search.json", "openai-responses"),
        ("anthropic", "web-search.json", "anthropic"),
        # a complete Gemini response (its finishReason given) twice: not the chunks of one streamed response
        ("gemini", "grounded.json", "gemini"),
        ("perplexity", "sonar.json", "perplexity"),
    ],
)
@pytest.mark.parametrize("layout", ["list", "lines"])
def test_one_response_twice_in_a_file_is_refused(
    cli: Cli, tmp_path: Path, db_path: Path, folder: str, name: str, fmt: str, layout: str
) -> None:
    response = fixture(folder, name)
    if layout == "list":
        text, second = json.dumps([response, response]), "[1]"
    else:
        text, second = json.dumps(response) + "\n" + json.dumps(response) + "\n", "line 2"
    path = tmp_path / f"twice.{'json' if layout == 'list' else 'jsonl'}"
    path.write_text(text, encoding="utf-8")
    result = ingest(cli, path, db_path, fmt)
    assert result.exit_code == 2, result.output
    line = result.stderr.strip()
    assert "\n" not in line
    assert f"{path}: {second}" in line
    assert "one response given twice" in line
    assert not db_path.exists()


def test_two_different_responses_in_one_file_are_both_stored(cli: Cli, tmp_path: Path, db_path: Path) -> None:
    first = fixture("openai-responses", "search.json")
    second = {**first, "id": first["id"] + "-2"}
    path = tmp_path / "two.json"
    path.write_text(json.dumps([first, second]), encoding="utf-8")
    result = ingest(cli, path, db_path, "openai-responses")
    assert result.exit_code == 0, result.stderr
    assert import_counts(db_path)[0]["answers"] == 2  # two ids, two answers


def test_an_unknown_anthropic_search_result_is_counted_stored_and_shown(
    cli: Cli, tmp_path: Path, db_path: Path
) -> None:
    response = fixture("anthropic", "web-search.json")
    response["content"][2]["content"][1]["type"] = "web_search_result_v2"
    path = tmp_path / "claude.json"
    path.write_text(json.dumps(response), encoding="utf-8")
    result = ingest(cli, path, db_path, "anthropic")
    assert result.exit_code == 0, result.stderr
    # 1 answer, whose only unknown part is the renamed result
    assert "1 answer(s) only partly understood" in " ".join(result.output.split())
    assert import_counts(db_path)[0]["partial"] == 1
    scored = cli("score", db_path, "--format", "json")
    assert scored.exit_code == 0, scored.stderr
    (warning,) = json.loads(scored.stdout)["warnings"]
    assert warning.startswith(f"1 answer(s) of {path} (anthropic) only partly understood")


def test_partly_understood_is_stored_with_the_import_and_shown_by_score_and_report(
    cli: Cli, tmp_path: Path, db_path: Path
) -> None:
    document = fixture("openai-responses", "search.json")
    document["output"].append({"type": "answer_v2", "text": "Part of the answer."})
    path = tmp_path / "responses.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    assert ingest(cli, path, db_path, "openai-responses").exit_code == 0
    assert import_counts(db_path)[0]["partial"] == 1
    table = cli("score", db_path)
    assert "only partly understood" in " ".join(table.output.split())
    report = tmp_path / "report.html"
    assert cli("report", db_path, "--out", report).exit_code == 0
    assert "only partly understood" in report.read_text(encoding="utf-8")


def test_a_fully_understood_import_warns_of_nothing(cli: Cli, tmp_path: Path, db_path: Path) -> None:
    assert ingest(cli, FIXTURES / "openai-responses" / "search.json", db_path, "openai-responses").exit_code == 0
    assert import_counts(db_path)[0]["partial"] == 0
    assert json.loads(cli("score", db_path, "--format", "json").stdout)["warnings"] == []
