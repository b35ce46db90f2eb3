"""A whole collection in one command: a folder of saved responses, by manifest or by name pattern."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

Cli = Callable[..., Result]

FIXTURES = Path(__file__).resolve().parent / "fixtures"
PROTOCOL = FIXTURES / "protocol.yaml"
# One saved response per engine; the ids are the engines' own (top-level "id", Gemini's "responseId").
RESPONSES = {
    "chatgpt": (FIXTURES / "openai-responses" / "search.json", "resp_68f1c2e0a4b88190b1d3c5e7f9a1b3c50d2e4f6a8b0c1d2e"),
    "claude": (FIXTURES / "anthropic" / "web-search.json", "msg_01Hk4sVq9DwT3xPbN7mZcR2e"),
    "gemini": (FIXTURES / "gemini" / "grounded.json", "Xq1vZ8iKB7yqz7IPm5OYyQs"),
    "perplexity": (FIXTURES / "perplexity" / "sonar.json", "3f6b2c9e-5d1a-4c7e-9b0f-2a8d41e7c3b5"),
}


def _answers(cli: Cli, db: Path) -> list[dict[str, object]]:
    result = cli("answers", "list", "--db", db, "--format", "json")
    assert result.exit_code == 0, result.stderr
    return list(json.loads(result.stdout))


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """q01 asked of four engines, once each, named QUESTION__ENGINE__LOCALE__REPEAT.json, and a stray note."""
    path = tmp_path / "collection"
    path.mkdir()
    for engine, (source, _) in RESPONSES.items():
        shutil.copy(source, path / f"q01__{engine}__en-GB__1.json")
    (path / "notes.txt").write_text("asked on 3 November\n", encoding="utf-8")
    return path


def test_a_folder_by_name_pattern_is_one_collection(cli: Cli, folder: Path, tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    result = cli(
        "ingest",
        folder,
        "--pattern",
        "{question}__{engine}__{locale}__{repeat}.json",
        "--questions",
        PROTOCOL,
        "--collection",
        "2026-11",
        "--db",
        db,
    )
    assert result.exit_code == 0, result.stderr
    assert "collection '2026-11': 4 file(s), 4 answer(s)" in result.stdout
    # the stray file is reported, not silently passed over
    assert "not imported: 1 file(s)" in result.stdout
    assert "notes.txt" in result.stdout
    rows = {row["platform"]: row for row in _answers(cli, db)}
    assert sorted(rows) == sorted(RESPONSES)
    for engine, (_, response) in RESPONSES.items():
        assert rows[engine]["question"] == "q01"
        assert rows[engine]["run"] == f"2026-11-{engine}"
        assert rows[engine]["collection"] == "2026-11"
        assert rows[engine]["response_id"] == response
    shown = cli("answers", "show", str(rows["claude"]["id"]), "--db", db)
    assert "response id msg_01Hk4sVq9DwT3xPbN7mZcR2e" in shown.stdout


def test_a_folder_by_manifest_is_one_collection(cli: Cli, folder: Path, tmp_path: Path) -> None:
    manifest = tmp_path / "collection.csv"
    manifest.write_text(
        "file,question,engine,locale,repeat\n"
        "q01__chatgpt__en-GB__1.json,q01,chatgpt,en-GB,1\n"
        "q01__gemini__en-GB__1.json,q02,gemini,en-GB,1\n",
        encoding="utf-8",
    )
    db = tmp_path / "a.db"
    result = cli("ingest", folder, "--manifest", manifest, "--questions", PROTOCOL, "--db", db)
    assert result.exit_code == 0, result.stderr
    # the collection is named after the folder; only the two listed files are read
    assert "collection 'collection': 2 file(s), 2 answer(s)" in result.stdout
    rows = {row["platform"]: row for row in _answers(cli, db)}
    assert sorted(rows) == ["chatgpt", "gemini"]
    # the manifest says which question each file answers, whatever the file's name says
    assert rows["gemini"]["question"] == "q02"
    assert rows["gemini"]["collection"] == "collection"


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (
            "file,question,engine\nq01__chatgpt__en-GB__1.json,q01,chatgpt\nmissing.json,q01,claude\n",
            "line 3: no such file 'missing.json'",
        ),
        ("file,question\nq01__chatgpt__en-GB__1.json,q01\n", "line 1: the header needs a 'engine' column"),
        (
            "file,question,engine,repeat\nq01__chatgpt__en-GB__1.json,q01,chatgpt,first\n",
            "line 2: repeat must be a whole number (got 'first')",
        ),
        (
            "file,question,engine\nq01__chatgpt__en-GB__1.json,q01,chatgpt\nq01__claude__en-GB__1.json,q01,chatgpt\n",
            "one response per repeat",
        ),
        ("file,question,engine\nq01__chatgpt__en-GB__1.json,q99,chatgpt\n", "q99"),
        # one file, or a byte-identical copy, as two repeats: stored once, it would have been counted twice
        (
            "file,question,engine,repeat\nq01__chatgpt__en-GB__1.json,q01,chatgpt,1\n"
            "q01__chatgpt__en-GB__1.json,q01,chatgpt,2\n",
            "holds the same bytes as",
        ),
        (
            "file,question,engine,repeat\nq01__chatgpt__en-GB__1.json,q01,chatgpt,1\ncopy.json,q01,chatgpt,2\n",
            "copy.json: holds the same bytes as",
        ),
        # 2**64 and 5 000 digits: past any repeat (int() refuses the second outright)
        (
            "file,question,engine,repeat\nq01__chatgpt__en-GB__1.json,q01,chatgpt,18446744073709551616\n",
            "line 2: repeat counts from 1 to 1000",
        ),
        ("file,question,engine,repeat\nq01__chatgpt__en-GB__1.json,q01,chatgpt," + "9" * 5000 + "\n", "line 2: repeat"),
        # a quote left open would have shifted the cells; a field past the CSV reader's 131 072 characters
        ('file,question,engine\n"q01__chatgpt__en-GB__1.json,q01,chatgpt\n', "not CSV: unexpected end of data"),
        ('file,question,engine\nq01__chatgpt__en-GB__1.json,q01,"' + "x" * 140_000 + '"\n', "not CSV: field larger"),
    ],
)
def test_a_bad_manifest_writes_nothing(cli: Cli, folder: Path, tmp_path: Path, rows: str, message: str) -> None:
    manifest = tmp_path / "collection.csv"
    manifest.write_text(rows, encoding="utf-8")
    shutil.copy(folder / "q01__chatgpt__en-GB__1.json", folder / "copy.json")
    db = tmp_path / "a.db"
    result = cli("ingest", folder, "--manifest", manifest, "--questions", PROTOCOL, "--db", db)
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert not db.exists()


def test_a_pattern_must_name_question_and_engine(cli: Cli, folder: Path, tmp_path: Path) -> None:
    result = cli(
        "ingest", folder, "--pattern", "{question}-{repeat}.json", "--questions", PROTOCOL, "--db", tmp_path / "a.db"
    )
    assert result.exit_code == 2
    assert "the pattern must name {engine}" in result.stderr


def test_a_single_response_keeps_its_engine_id(cli: Cli, tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    source, response = RESPONSES["perplexity"]
    result = cli("ingest", source, "--questions", PROTOCOL, "--question-id", "q01", "--db", db)
    assert result.exit_code == 0, result.stderr
    (row,) = _answers(cli, db)
    assert row["response_id"] == response
    assert row["collection"] is None


def test_collections_are_dated_by_the_day_they_were_collected(cli: Cli, tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    source, _ = RESPONSES["perplexity"]
    document = json.loads(source.read_text(encoding="utf-8"))
    # imported newest first; each folder holds the answer with an id of its own (a payload of its own)
    for name, day in (("november", "2026-11-03"), ("october", "2026-10-02")):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "q01__perplexity__en-GB__1.json").write_text(json.dumps({**document, "id": name}), "utf-8")
        result = cli(
            "ingest",
            folder,
            "--pattern",
            "{question}__{engine}__{locale}__{repeat}.json",
            "--questions",
            PROTOCOL,
            "--collected-on",
            day,
            "--db",
            db,
        )
        assert result.exit_code == 0, result.stderr
    trend = json.loads(cli("trend", db, "--resamples", "200", "--format", "json").stdout)
    # a trend runs in collection order: October before November, whatever the order of import
    assert [(p["collection"], p["date"]) for p in trend["collections"]] == [
        ("october", "2026-10-02"),
        ("november", "2026-11-03"),
    ]
    grouped = json.loads(cli("score", db, "--by", "collection_date", "--format", "json").stdout)
    assert [(g["by"]["collection_date"], g["answers"]) for g in grouped["groups"]] == [
        ("2026-10-02", 1),
        ("2026-11-03", 1),
    ]


def test_a_collection_day_must_be_a_day(cli: Cli, folder: Path, tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    result = cli(
        "ingest",
        folder,
        "--pattern",
        "{question}__{engine}__{locale}__{repeat}.json",
        "--questions",
        PROTOCOL,
        "--collected-on",
        "3 Nov",
        "--db",
        db,
    )
    assert result.exit_code == 2
    assert "expected a day as YYYY-MM-DD (got '3 Nov')" in result.stderr
    assert not db.exists()
