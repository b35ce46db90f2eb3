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

from citeaudit.core.limits import MAX_DEPTH
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
        args += ["--format", fmt, "--questions", PROTOCOL, "--question-id", "q01"]
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
    from citeaudit.core.limits import load_json

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
    from citeaudit.core.limits import load_json

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


def test_yaml_merge_keys_may_be_overridden_without_counting_as_duplicates(cli: Cli, tmp_path: Path) -> None:
    # q2 takes q1's keys through a merge and gives its own id and text: an override, not a key given twice.
    text = (
        "id: p\nversion: '1'\nquestions:\n"
        "  - &q1 {id: q1, text: 'One?', locale: en-GB}\n"
        "  - <<: *q1\n    id: q2\n    text: Two?\n"
    )
    path = write(tmp_path, "merge.yaml", text)
    result = cli("protocol", "check", path)
    assert result.exit_code == 0, result.stderr
    from citeaudit.interchange import load_protocol

    protocol = load_protocol(path)
    assert [(q.id, q.text, q.locale) for q in protocol.questions] == [("q1", "One?", "en-GB"), ("q2", "Two?", "en-GB")]


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


# Engine payloads: a fixture changed in one place ---------------------------------------------------------------


def fixture(fmt: str, name: str) -> Any:
    return json.loads((FIXTURES / fmt / name).read_text(encoding="utf-8"))


def write_payload(tmp_path: Path, document: Any, name: str = "payload.json") -> Path:
    return write(tmp_path, name, json.dumps(document, ensure_ascii=False))


# 3. A URL that cannot be taken apart -----------------------------------------------------------------------------


def test_an_unclosed_ipv6_url_in_an_audit_is_refused(cli: Cli, tmp_path: Path, db_path: Path) -> None:
    document = four_claim()
    document["answers"][0]["citations"].append({"url": "http://[::1", "kind": "cited"})
    path = write(tmp_path, "v6.audit.json", json.dumps(document))
    where = f"answers[0].citations[{len(document['answers'][0]['citations']) - 1}].url"
    ingest_refused(cli, db_path, path, where, "not a usable URL: 'http://[::1'")
    refused(cli("score", path), where)


def test_an_unclosed_ipv6_url_in_an_engine_payload_is_refused(cli: Cli, tmp_path: Path, db_path: Path) -> None:
    payload = fixture("serpapi-ai-overview", "google.json")
    payload["ai_overview"]["references"][0]["link"] = "http://[::1/x"
    path = write_payload(tmp_path, payload)
    ingest_refused(cli, db_path, path, "'http://[::1/x'", fmt="serpapi-ai-overview")


def test_an_unclosed_ipv6_url_in_expertqa_evidence_is_refused(cli: Cli, tmp_path: Path, db_path: Path) -> None:
    line = {
        "question": "How big is the tank?",
        "answers": {
            "sys": {
                "answer_string": "It holds 20 L [1].",
                "attribution": ["[1] https://a.org/x"],
                "claims": [
                    {"claim_string": "It holds 20 L [1].", "support": "Complete", "evidence": ["[1] http://[::1"]}
                ],
            }
        },
    }
    path = write(tmp_path, "expertqa.jsonl", json.dumps(line) + "\n")
    ingest_refused(cli, db_path, path, "claims[0].evidence[0]", "'http://[::1'", fmt="expertqa")


# 4. A list where text is expected ----------------------------------------------------------------------------------


def _set(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    node = document
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return document


@pytest.mark.parametrize(
    ("fmt", "name", "path", "where"),
    [
        ("openai-chat", "chinese.json", ("choices", 0, "finish_reason"), "choices[0].finish_reason"),
        ("openai-responses", "search.json", ("status",), "status"),
        ("anthropic", "web-search.json", ("stop_reason",), "stop_reason"),
        ("anthropic", "web-search.json", ("content", 4, "citations", 0, "type"), "content[4].citations[0].type"),
    ],
)
def test_a_list_where_an_engine_gives_text_is_refused(
    cli: Cli, tmp_path: Path, db_path: Path, fmt: str, name: str, path: tuple[Any, ...], where: str
) -> None:
    document = fixture(fmt, name)
    _set(document, path, ["length"])
    ingest_refused(cli, db_path, write_payload(tmp_path, document), where, "expected str", "['length']", fmt=fmt)


@pytest.mark.parametrize("field", ["support", "reason_missing_support"])
def test_a_list_where_expertqa_gives_text_is_refused(cli: Cli, tmp_path: Path, db_path: Path, field: str) -> None:
    line = {
        "question": "How big is the tank?",
        "answers": {
            "sys": {
                "answer_string": "It holds 20 L [1].",
                "attribution": ["[1] https://a.org/x"],
                "claims": [
                    {"claim_string": "It holds 20 L [1].", "support": "Complete", "evidence": ["[1] https://a.org/x"]}
                ],
            }
        },
    }
    line["answers"]["sys"]["claims"][0][field] = ["Complete"]
    path = write(tmp_path, "expertqa.jsonl", json.dumps(line) + "\n")
    ingest_refused(cli, db_path, path, f"claims[0].{field}", "['Complete']", fmt="expertqa")


# 6. Counts: repeats --------------------------------------------------------------------------------------------


def test_astronomical_repeats_are_refused_by_protocol_check_and_collect(cli: Cli, tmp_path: Path) -> None:
    text = PROTOCOL.read_text(encoding="utf-8") + "engines: [openai]\nrepeats: 1000000000000000000000000000000\n"
    path = write(tmp_path, "protocol.yaml", text)
    refused(cli("protocol", "check", path), "1000000000000000000000000000000", "64-bit range")
    refused(cli("collect", "--protocol", path, "--dry-run", "--db", tmp_path / "c.db"), "64-bit range")


def test_repeats_above_the_limit_are_refused(cli: Cli, tmp_path: Path) -> None:
    path = write(tmp_path, "protocol.yaml", PROTOCOL.read_text(encoding="utf-8") + "repeats: 1001\n")
    refused(cli("protocol", "check", path), "repeats", "less than or equal to 1000", "1001")


def test_a_plan_of_too_many_requests_is_refused_before_it_is_listed(cli: Cli, tmp_path: Path) -> None:
    # 2 questions × 6 engines × 10 locales × 1000 repeats = 120 000 requests, over the 100 000 limit.
    locales = ", ".join(f"l{i}" for i in range(10))
    text = PROTOCOL.read_text(encoding="utf-8") + (
        f"engines: [openai, perplexity, perplexity-agent, gemini, anthropic, serpapi]\n"
        f"locales: [{locales}]\nrepeats: 1000\n"
    )
    path = write(tmp_path, "protocol.yaml", text)
    refused(
        cli("collect", "--protocol", path, "--dry-run", "--db", tmp_path / "c.db"),
        "2 questions × 6 engines × 10 locales × 1000 repeats = 120000 requests, more than 100000",
    )


# 7. What was taken silently --------------------------------------------------------------------------------------


@pytest.mark.parametrize("body", [{}, {"object": "response", "status": "completed", "output": None}])
def test_a_responses_body_without_output_is_refused(
    cli: Cli, tmp_path: Path, db_path: Path, body: dict[str, Any]
) -> None:
    path = write_payload(tmp_path, body)
    ingest_refused(cli, db_path, path, "output", "expected list (got None)", fmt="openai-responses")


def test_an_unknown_responses_item_type_is_counted_as_partly_understood_not_dropped(
    cli: Cli, tmp_path: Path, db_path: Path
) -> None:
    # An item type this reader does not know may hold part of the answer: the answer is stored (its known parts
    # read), and the import summary counts it as only partly understood instead of passing it as complete.
    document = fixture("openai-responses", "search.json")
    document["output"].append({"type": "answer_v2", "text": "Part of the answer."})
    path = write_payload(tmp_path, document)
    args = ["ingest", path, "--db", db_path, "--format", "openai-responses", "--questions", PROTOCOL]
    done = cli(*args, "--question-id", "q01")
    assert done.exit_code == 0, done.output
    # 1 answer, whose only unknown part is the appended item
    assert "1 answer(s) only partly understood" in " ".join(done.output.split())


def test_a_reasoning_item_is_skipped_as_it_holds_no_answer_text(cli: Cli, tmp_path: Path, db_path: Path) -> None:
    document = fixture("openai-responses", "search.json")
    document["output"].insert(0, {"type": "reasoning", "id": "rs_1", "summary": []})
    path = write_payload(tmp_path, document)
    result = cli(
        "ingest", path, "--db", db_path, "--format", "openai-responses", "--questions", PROTOCOL, "--question-id", "q01"
    )
    assert result.exit_code == 0, result.stderr


def test_an_empty_anthropic_body_is_refused(cli: Cli, tmp_path: Path, db_path: Path) -> None:
    path = write_payload(tmp_path, {})
    ingest_refused(cli, db_path, path, "type", "expected 'message' or 'error' (got None)", fmt="anthropic")


def test_an_answer_of_an_undeclared_run_is_refused(cli: Cli, tmp_path: Path, db_path: Path) -> None:
    # The four-claim fixture declares its one run as kind "fixture"; an answer naming another run would have
    # entered a new *platform* run, and the platform figures with it.
    document = four_claim()
    document["answers"][0]["run_id"] = "typo-run"
    path = write(tmp_path, "runs.audit.json", json.dumps(document))
    ingest_refused(cli, db_path, path, "answers[0].run_id", "no run 'typo-run' in runs[]", "'fixture-four-claim'")


def test_two_serpapi_references_with_one_index_are_refused(cli: Cli, tmp_path: Path, db_path: Path) -> None:
    document = fixture("serpapi-ai-overview", "google.json")
    document["ai_overview"]["references"][1]["index"] = document["ai_overview"]["references"][0]["index"]
    path = write_payload(tmp_path, document)
    ingest_refused(cli, db_path, path, "references[1].index", "index 2 is also the index of", fmt="serpapi-ai-overview")


@pytest.mark.parametrize("offset", ["26", True])
def test_text_or_true_as_an_offset_is_refused_not_coerced(
    cli: Cli, tmp_path: Path, db_path: Path, offset: object
) -> None:
    document = four_claim()
    document["claims"][0]["start"] = offset
    path = write(tmp_path, "offset.audit.json", json.dumps(document))
    ingest_refused(cli, db_path, path, "claims[0].start", f"expected a number, not {type(offset).__name__}")


def test_true_as_a_payload_index_is_refused_not_read_as_1(cli: Cli, tmp_path: Path, db_path: Path) -> None:
    document = fixture("serpapi-ai-overview", "google.json")
    document["ai_overview"]["text_blocks"][0]["reference_indexes"] = [True]
    path = write_payload(tmp_path, document)
    ingest_refused(cli, db_path, path, "reference_indexes[0]", "expected int (got True)", fmt="serpapi-ai-overview")


def test_an_error_line_stays_one_line_when_the_value_holds_a_newline(cli: Cli, tmp_path: Path) -> None:
    text = PROTOCOL.read_text(encoding="utf-8").replace("- axtorp.de", "- 'line one\n\n  line two'", 1)
    path = write(tmp_path, "protocol.yaml", text)
    # YAML folds the quoted line break into "\n"; the message shows it escaped, on the one line.
    refused(cli("protocol", "check", path), "'line one\\nline two'")


def test_a_lone_surrogate_from_the_command_line_is_refused_before_the_store(
    cli: Cli, tmp_path: Path, db_path: Path
) -> None:
    # Bytes that are not UTF-8 in argv reach Python as lone surrogates ('\xff' becomes '\udcff').
    payload = FIXTURES / "anthropic" / "web-search.json"
    result = cli(
        "ingest", payload, "--db", db_path, "--questions", PROTOCOL, "--question-id", "q01", "--platform", "\udcff"
    )
    refused(result, "web-search.json", "lone surrogate '\\udcff'")
    assert not db_path.exists()


def test_a_duplicate_key_deep_inside_too_deep_nesting_is_refused_for_the_nesting() -> None:
    from citeaudit.core.errors import MalformedInput
    from citeaudit.core.limits import load_json

    # 900 levels parse at C speed (under the interpreter's recursion limit); the duplicate key inside must not
    # send the locating scanner, which recurses in Python, down all 900 of them.
    with pytest.raises(MalformedInput, match="column 101: nested deeper than 100 levels"):
        load_json("[" * 900 + '{"a": 1, "a": 2}' + "]" * 900, "deep.json")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("18446744073709551616", "integer 18446744073709551616 is outside the 64-bit range"),  # 2**64, bare
        ("-9223372036854775809", "is outside the 64-bit range"),  # -(2**63) - 1
        ("[1e999]", "number '1e999' is too large to be finite"),
        ('{"a": [-Infinity]}', "-Infinity is not a number JSON allows"),
    ],
)
def test_numbers_past_the_limits_are_refused_wherever_they_stand(text: str, message: str) -> None:
    from citeaudit.core.errors import InvalidValue
    from citeaudit.core.limits import load_json

    with pytest.raises(InvalidValue, match=message):
        load_json(text, "numbers.json")


def test_numbers_at_the_limits_are_read() -> None:
    from citeaudit.core.limits import load_json

    assert load_json("[9223372036854775807, -9223372036854775808, 1e308]", "f.json") == [2**63 - 1, -(2**63), 1e308]


@pytest.mark.parametrize(
    ("fmt", "name", "path", "where"),
    [
        (
            "openai-chat",
            "search-preview.json",
            ("choices", 0, "message", "annotations", 0, "type"),
            "annotations[0].type",
        ),
        (
            "openai-responses",
            "search.json",
            ("output", 1, "content", 0, "annotations", 0, "type"),
            "annotations[0].type",
        ),
    ],
)
def test_a_list_as_an_annotation_type_is_refused_not_skipped(
    cli: Cli, tmp_path: Path, db_path: Path, fmt: str, name: str, path: tuple[Any, ...], where: str
) -> None:
    document = fixture(fmt, name)
    _set(document, path, ["url_citation"])
    ingest_refused(cli, db_path, write_payload(tmp_path, document), where, "['url_citation']", fmt=fmt)


def test_true_as_a_perplexity_offset_is_refused(cli: Cli, tmp_path: Path, db_path: Path) -> None:
    document = fixture("perplexity", "agent.json")
    output = next(item for item in document["output"] if item.get("type") == "message")
    part = next(p for p in output["content"] if p.get("annotations"))
    part["annotations"][0]["start_index"] = True
    ingest_refused(
        cli, db_path, write_payload(tmp_path, document), "start_index", "expected int (got True)", fmt="perplexity"
    )
