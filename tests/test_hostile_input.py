"""Hostile input through the real CLI: one line naming file, location and value, exit 2, nothing written.

Each case here once ended in a traceback (``UnicodeEncodeError``, ``RecursionError``, ``OverflowError``,
``ValueError``, ``TypeError``), ran out of memory, or was taken silently.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from citeaudit.limits import MAX_DEPTH
from conftest import EXAMPLES, REPO

FIXTURES = REPO / "tests" / "fixtures"
PROTOCOL = FIXTURES / "protocol.yaml"

Cli = Callable[..., Result]


def refused(result: Result, *fragments: str) -> str:
    """The one error line of a refused command, checked for exit 2 and each fragment."""
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    line = result.stderr.strip()
    assert line.startswith("error: "), line
    assert "\n" not in line, line
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in line, (fragment, line)
    return line


def four_claim() -> dict[str, Any]:
    document: dict[str, Any] = json.loads((EXAMPLES / "four-claim.audit.json").read_text(encoding="utf-8"))
    return document


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def ingest_refused(cli: Cli, db: Path, path: Path, *fragments: str, fmt: str | None = None) -> str:
    """``ingest`` refuses ``path`` and leaves no database behind."""
    args = ["ingest", path, "--db", db]
    if fmt is not None:
        args += ["--format", fmt, "--questions", PROTOCOL]
    line = refused(cli(*args), str(path), *fragments)
    assert not db.exists(), "a refused first import must not leave a database"
    return line


# 1. Lone surrogates -------------------------------------------------------------------------------------------


def test_a_lone_surrogate_in_an_answer_is_refused_by_ingest_and_score(cli: Cli, tmp_path: Path, db_path: Path) -> None:
    document = four_claim()
    document["answers"][0]["text"] = "x\ud800" + document["answers"][0]["text"]
    # json.dumps writes the lone surrogate as the escape \ud800 (valid JSON, no UTF-8 text can hold it).
    path = write(tmp_path, "surrogate.audit.json", json.dumps(document))
    ingest_refused(cli, db_path, path, "\\ud800", "line 1 column")
    refused(cli("score", path, "--format", "json"), "\\ud800")


def test_a_lone_surrogate_in_an_engine_payload_is_refused(cli: Cli, tmp_path: Path, db_path: Path) -> None:
    payload = json.loads((FIXTURES / "anthropic" / "web-search.json").read_text(encoding="utf-8"))
    payload["model"] = "claude\udc80"
    path = write(tmp_path, "anthropic.json", json.dumps(payload))
    ingest_refused(cli, db_path, path, "\\udc80", fmt="anthropic")


def test_a_lone_surrogate_in_a_protocol_is_refused(cli: Cli, tmp_path: Path) -> None:
    text = PROTOCOL.read_text(encoding="utf-8").replace("id: q01", 'id: "q01\\ud800"', 1)
    path = write(tmp_path, "protocol.yaml", text)
    refused(cli("protocol", "check", path), "protocol.yaml: line", "'\\ud800'")


def test_an_escaped_pair_and_an_escaped_backslash_are_not_lone_surrogates(tmp_path: Path) -> None:
    from citeaudit.limits import load_json

    # "\ud83d\ude00" is one character (U+1F600); "\\ud800" is a backslash followed by the letters "ud800".
    assert load_json(b'["\\ud83d\\ude00", "\\\\ud800"]', "f.json") == ["\U0001f600", "\\ud800"]


# 2. Deep nesting ----------------------------------------------------------------------------------------------

DEEP = "[" * 100_000


@pytest.mark.parametrize(
    "fmt",
    [
        "audit-json",
        "expertqa",
        "openai-responses",
        "openai-chat",
        "perplexity",
        "gemini",
        "anthropic",
        "serpapi-ai-overview",
        "jsonl",
    ],
)
def test_deep_nesting_is_refused_by_every_json_reader(cli: Cli, tmp_path: Path, db_path: Path, fmt: str) -> None:
    path = write(tmp_path, "deep.json", DEEP)
    # MAX_DEPTH brackets are accepted, the next one (at column MAX_DEPTH + 1) is one level too deep.
    args = ["ingest", path, "--db", db_path, "--format", fmt]
    if fmt not in ("audit-json", "expertqa"):
        args += ["--questions", PROTOCOL]
    refused(cli(*args), f"line 1 column {MAX_DEPTH + 1}", f"nested deeper than {MAX_DEPTH} levels")
    assert not db_path.exists()


def test_deep_nesting_detected_as_an_audit_is_refused_by_score(cli: Cli, tmp_path: Path) -> None:
    path = write(tmp_path, "deep.audit.json", '{"format": "citeaudit.audit/v1", "protocol": ' + DEEP)
    refused(cli("score", path), "nested deeper than")


def test_nesting_at_the_limit_is_read(tmp_path: Path) -> None:
    from citeaudit.limits import load_json

    value = load_json("[" * MAX_DEPTH + "]" * MAX_DEPTH, "f.json")
    for _ in range(MAX_DEPTH - 1):
        (value,) = value
    assert value == []


def test_deeply_nested_yaml_is_refused_by_protocol_check(cli: Cli, tmp_path: Path) -> None:
    path = write(tmp_path, "protocol.yaml", "id: p\nversion: '1'\nquestions: " + "[" * 100_000)
    refused(cli("protocol", "check", path), "protocol.yaml: line 3", f"nested deeper than {MAX_DEPTH} levels")


# 5. Integers beyond 64 bits -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("table", "field"),
    [("runs", "sample"), ("failed_answers", "ordinal")],
)
def test_integers_beyond_64_bits_are_refused(cli: Cli, tmp_path: Path, db_path: Path, table: str, field: str) -> None:
    document = four_claim()
    if table == "failed_answers":
        document["failed_answers"] = [
            {"run_id": "fixture-four-claim", "platform": "fixture", "status": "failed", "ordinal": 0}
        ]
    document[table][0][field] = 2**63  # one more than SQLite's largest integer, 2**63 - 1
    path = write(tmp_path, "big.audit.json", json.dumps(document, indent=1))
    ingest_refused(cli, db_path, path, "9223372036854775808", "64-bit range", "line ")


# 6. YAML aliases, sizes and counts -----------------------------------------------------------------------------

ALIAS_BOMB = (
    "id: p\nversion: '1'\n"
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
    "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
    "questions: [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n"
)


def test_a_yaml_alias_bomb_is_refused_before_it_expands(cli: Cli, tmp_path: Path) -> None:
    # 9 ** 9 = 387 420 489 "lol" strings once expanded, from under 800 bytes; 81 aliases, under the count limit,
    # so the expanded-size bound is what stops it.
    path = write(tmp_path, "bomb.yaml", ALIAS_BOMB)
    assert path.stat().st_size < 800
    refused(cli("protocol", "check", path), "bomb.yaml", "expand the document to more than 1000000 nodes")


def test_too_many_yaml_aliases_are_refused(cli: Cli, tmp_path: Path) -> None:
    # 101 aliases of one small question: tiny once expanded, but over the alias count limit of 100.
    text = PROTOCOL.read_text(encoding="utf-8") + "extra: &q {id: x}\nmore: [" + ", ".join(["*q"] * 101) + "]\n"
    path = write(tmp_path, "aliases.yaml", text)
    refused(cli("protocol", "check", path), "more than 100 aliases")


def test_yaml_merge_keys_still_work(cli: Cli, tmp_path: Path) -> None:
    text = "id: p\nversion: '1'\nbase: &base {locale: en-GB}\nquestions:\n  - <<: *base\n    id: q1\n    text: One?\n"
    path = write(tmp_path, "merge.yaml", text)
    result = cli("protocol", "check", path)
    # `base` is not a protocol key: refused as an unknown key, not as a duplicate or a malformed merge.
    refused(result, "base", "xtra")


# 7. Duplicate keys, NaN and infinities --------------------------------------------------------------------------


def test_a_duplicate_json_key_is_refused(cli: Cli, tmp_path: Path, db_path: Path) -> None:
    text = json.dumps(four_claim(), indent=1).replace('"text":', '"text": "first", "text":', 1)
    path = write(tmp_path, "dup.audit.json", text)
    ingest_refused(cli, db_path, path, "key 'text' is given twice", "line ")


def test_a_duplicate_key_in_a_json_lines_payload_names_its_line(cli: Cli, tmp_path: Path, db_path: Path) -> None:
    lines = (FIXTURES / "perplexity" / "sonar-batch.jsonl").read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1].replace('"model":', '"model": "x", "model":', 1)
    path = write(tmp_path, "batch.jsonl", "\n".join(lines) + "\n")
    ingest_refused(cli, db_path, path, "line 2 column", "key 'model' is given twice", fmt="perplexity")


def test_a_duplicate_yaml_key_is_refused(cli: Cli, tmp_path: Path) -> None:
    path = write(tmp_path, "protocol.yaml", PROTOCOL.read_text(encoding="utf-8") + "version: '2'\n")
    refused(cli("protocol", "check", path), "key 'version' is given twice")


@pytest.mark.parametrize("weight", [".inf", ".nan", "-.inf"])
def test_non_finite_yaml_weights_are_refused(cli: Cli, tmp_path: Path, weight: str) -> None:
    text = PROTOCOL.read_text(encoding="utf-8") + f"weights: {{high: {weight}, medium: 1, low: 1}}\n"
    path = write(tmp_path, "protocol.yaml", text)
    refused(cli("protocol", "check", path), repr(weight), "not a finite number")


@pytest.mark.parametrize("weight", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_json_weights_are_refused(cli: Cli, tmp_path: Path, weight: str) -> None:
    document = four_claim()
    document["protocol"]["weights"] = {"high": 12345.5, "medium": 1.0, "low": 1.0}
    path = write(tmp_path, "nan.audit.json", json.dumps(document).replace("12345.5", weight))
    expected = "too large to be finite" if weight == "1e999" else f"{weight.lstrip('-')} is not a number JSON allows"
    refused(cli("score", path, "--format", "json"), "nan.audit.json: line 1 column", expected)
