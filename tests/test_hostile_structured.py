"""Structured input past the bounded loaders' first limits: a recursive YAML alias, integers over 4 300 digits, YAML
control characters, nesting and duplicate keys in the inputs read outside the main readers (judgements JSON Lines,
the xAI ``arguments`` string, ``citeaudit.toml``), and a check that nothing in ``src/`` parses JSON, YAML or TOML
any other way.

Each case once ended in a hang with memory growing, or a traceback (``ValueError: Exceeds the limit (4300
digits)``, ``yaml.reader.ReaderError``, ``RecursionError``, ``UnicodeEncodeError``), or was taken silently.
"""

from __future__ import annotations

import ast
import json
import signal
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

import pytest
from tests.test_hostile_input import FIXTURES, PROTOCOL, four_claim, ingest_refused, refused, write
from typer.testing import Result

from citeaudit.core.errors import InvalidValue, MalformedInput
from citeaudit.core.limits import load_json, load_yaml
from conftest import REPO
from review_support import add_account, make_db

Cli = Callable[..., Result]

RECURSIVE = 'id: x\nversion: "1"\nquestions: &a [*a]\n'
"""50 bytes that stand for an endless document: the list is its own only item."""


@contextmanager
def within(seconds: float) -> Iterator[None]:
    """Fail (not hang) when the block runs past ``seconds``: a generous bound for what should end at once."""

    def expire(signum: int, frame: FrameType | None) -> None:
        raise AssertionError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# -- a recursive YAML alias ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        RECURSIVE,
        "a: &a {b: *a}\n",  # a mapping holding itself
        "a: &a [1, [2, [3, *a]]]\n",  # three levels down
        "a: &a {? *a : 1}\n",  # as its own key
    ],
)
def test_a_recursive_alias_is_refused_at_once_naming_it(text: str) -> None:
    with within(20), pytest.raises(MalformedInput, match=r"alias \*a refers to a node that contains it"):
        load_yaml(text, "p.yaml")


def test_an_alias_to_a_finished_node_is_still_read() -> None:
    # *a after &a's node is complete is an ordinary (finite) alias; [1] twice
    assert load_yaml("a: &a [1]\nb: [*a, *a]\n", "p.yaml") == {"a": [1], "b": [[1], [1]]}


@pytest.mark.parametrize(
    "command",
    [
        ("protocol", "check"),
        ("protocol", "fingerprint"),
        ("collect", "--dry-run", "--protocol"),
        ("ingest", "FIXTURE", "--format", "openai-responses", "--platform", "p", "--questions"),
    ],
)
def test_every_command_reading_a_protocol_refuses_a_recursive_alias(
    cli: Cli, tmp_path: Path, command: tuple[str, ...]
) -> None:
    path = write(tmp_path, "loop.yaml", RECURSIVE)
    fixture = FIXTURES / "openai-responses" / "search.json"
    args = [fixture if part == "FIXTURE" else part for part in command]
    with within(20):
        result = cli(*args, path, "--db", tmp_path / "audit.db") if command[0] != "protocol" else cli(*args, path)
    # "questions: &a [" is 15 characters: the alias *a starts at column 16 of line 3
    refused(result, "loop.yaml: line 3 column 16", "alias *a refers to a node that contains it")
    assert not (tmp_path / "audit.db").exists()


# -- integers over 4 300 digits ------------------------------------------------------------------------------

HUGE = "9" * 5000
"""Past Python's 4 300-digit limit on converting text to int, where ``int()`` itself raises ``ValueError``."""


def test_a_huge_integer_is_refused_like_any_out_of_range_number(cli: Cli, tmp_path: Path, db_path: Path) -> None:
    document = four_claim()
    document["runs"][0]["sample"] = 123456789
    text = json.dumps(document, indent=1).replace("123456789", HUGE)
    path = write(tmp_path, "huge.audit.json", text)
    ingest_refused(cli, db_path, path, "(5000 digits) is outside the 64-bit range", "line ")
    refused(cli("score", path), "huge.audit.json", "(5000 digits) is outside the 64-bit range")
    refused(cli("report", path, "--out", tmp_path / "r.html"), "huge.audit.json", "64-bit range")
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("text", [HUGE, f"-{HUGE}", f"[{HUGE}]", f'{{"a": [1, {{"b": {HUGE}}}]}}'])
def test_a_huge_integer_anywhere_in_json_is_refused(text: str) -> None:
    with pytest.raises(InvalidValue, match=r"\(5000 digits\) is outside the 64-bit range"):
        load_json(text, "n.json")


@pytest.mark.parametrize("value", [HUGE, "0x" + "f" * 5000, "-0b" + "1" * 5000])
def test_a_huge_integer_in_a_protocol_is_refused(cli: Cli, tmp_path: Path, value: str) -> None:
    text = PROTOCOL.read_text(encoding="utf-8") + f"repeats: {value}\n"
    path = write(tmp_path, "protocol.yaml", text)
    refused(cli("protocol", "check", path), "protocol.yaml: line", "outside the 64-bit range")


# -- YAML control characters ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("character", "column"), [("\x00", 7), ("\x01", 7), ("\x1b", 7), ("\x7f", 7)])
def test_a_control_character_in_yaml_is_refused_at_its_place(
    cli: Cli, tmp_path: Path, character: str, column: int
) -> None:
    path = write(tmp_path, "protocol.yaml", f"id: p\nnote: {character}x\n")
    # "note: " is 6 characters: the control character is the 7th of line 2
    refused(cli("protocol", "check", path), f"protocol.yaml: line 2 column {column}", repr(character))


# -- judgements JSON Lines -------------------------------------------------------------------------------------


def _labelled_db(cli: Cli, tmp_path: Path) -> Path:
    db = make_db(tmp_path / "labels.db")
    add_account(db, "li", "reviewer")
    return db


@pytest.mark.parametrize(
    ("line", "fragments"),
    [
        ("[" * 5000 + "]" * 5000, ("line 2 column 101", "nested deeper than 100 levels")),
        ('{"claim_id": "c1", "source": "\\ud800", "label": "supported"}', ("line 2 column", "lone surrogate")),
        (
            '{"claim_id": "c1", "source": "s", "label": "irrelevant", "label": "supported"}',
            ("line 2 column", "key 'label' is given twice"),
        ),
        ('{"claim_id": "c1", "source": "s", "label": "supported", "n": ' + HUGE + "}", ("line 2", "64-bit")),
    ],
)
def test_judgements_json_lines_go_through_the_bounded_loader(
    cli: Cli, tmp_path: Path, line: str, fragments: tuple[str, ...]
) -> None:
    db = _labelled_db(cli, tmp_path)
    before = db.read_bytes()
    good = '{"claim_id": "c1", "source": "https://brand.com/ax220", "label": "supported"}'
    path = write(tmp_path, "labels.jsonl", good + "\n" + line + "\n")
    refused(cli("judgements", "import", path, "--reviewer", "li", "--db", db), "labels.jsonl", *fragments)
    assert db.read_bytes() == before


def test_a_line_separator_inside_a_judgements_string_is_not_a_line_break(cli: Cli, tmp_path: Path) -> None:
    from citeaudit.cli.judgements import read_rows

    # U+2028 is a line break to str.splitlines() but text inside a JSON string; the row is one row
    path = write(
        tmp_path, "labels.jsonl", '{"claim_id": "c1", "source": "s1", "label": "partial", "reasoning": "a\u2028b"}\n'
    )
    (row,) = read_rows(path, "li")
    assert row.reasoning == "a\u2028b"


def test_judgements_import_of_a_folder_is_refused(cli: Cli, tmp_path: Path) -> None:
    db = _labelled_db(cli, tmp_path)
    folder = tmp_path / "labels.jsonl"
    folder.mkdir()
    refused(cli("judgements", "import", folder, "--reviewer", "li", "--db", db), "labels.jsonl", "a directory")


# -- the xAI ``arguments`` string ------------------------------------------------------------------------------


def _xai_body(arguments: str) -> str:
    return json.dumps(
        {
            "id": "resp_x",
            "object": "response",
            "status": "completed",
            "model": "grok-4",
            "output": [
                {"type": "web_search_call", "status": "completed", "arguments": arguments, "id": "ws"},
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "The AX220 has a 20 L tank.", "annotations": []}],
                },
            ],
        }
    )


def test_nested_arguments_are_refused_with_their_path(cli: Cli, tmp_path: Path, db_path: Path) -> None:
    path = write(tmp_path, "xai.json", _xai_body("[" * 5000 + "]" * 5000))
    ingest_refused(cli, db_path, path, "output[0].arguments", "nested deeper than 100 levels", fmt="openai-responses")


def test_arguments_that_are_not_json_are_still_skipped(cli: Cli, tmp_path: Path, db_path: Path) -> None:
    path = write(tmp_path, "xai.json", _xai_body("query: AX220 tank"))
    result = cli(
        "ingest", path, "--db", db_path, "--format", "openai-responses", "--questions", PROTOCOL, "--question-id", "q01"
    )
    assert result.exit_code == 0, result.stderr


# -- citeaudit.toml --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("x = " + "[" * 2000 + "]" * 2000, ("nested deeper than 100 levels",)),
        ("[resolve]\nconcurrency = " + HUGE, ("64-bit range",)),
        ("[resolve]\nconcurrency = 99999999999999999999", ("resolve.concurrency", "64-bit range")),
        ("[resolve]\ntimeout = inf", ("resolve.timeout", "inf is not a finite number")),
        ("[resolve]\ntimeout = nan", ("resolve.timeout", "nan is not a finite number")),
        # out of the option's range: the file and the key are named, not an option the user did not type
        ("[resolve]\nconcurrency = 0", ("resolve.concurrency", "0 is below the smallest allowed, 1")),
        ("[resolve]\nmap_host = ['a=999.1.1.1']", ("resolve.map_host", "'999.1.1.1' in 'a=999.1.1.1' is not an IP")),
    ],
)
def test_the_project_file_goes_through_the_bounded_loader(
    cli: Cli, tmp_path: Path, text: str, fragments: tuple[str, ...]
) -> None:
    config = write(tmp_path, "citeaudit.toml", text)
    refused(cli("--config", config, "config", "show"), "citeaudit.toml", *fragments)
    refused(cli("--config", config, "resolve", "--db", tmp_path / "a.db"), "citeaudit.toml", *fragments)


@pytest.mark.parametrize(
    ("option", "fragment"),
    [(("--map-host", "a=999.1.1.1"), "'999.1.1.1' is not an IP address"), (("--timeout", "inf"), "finite")],
)
def test_resolve_options_out_of_range_are_refused(
    cli: Cli, tmp_path: Path, option: tuple[str, str], fragment: str
) -> None:
    db = tmp_path / "a.db"
    assert cli("ingest", REPO / "src" / "citeaudit" / "examples" / "four-claim.audit.json", "--db", db).exit_code == 0
    refused(cli("resolve", "--db", db, *option), fragment)


# -- no parser outside the bounded loaders --------------------------------------------------------------------

PARSERS = {("json", "loads"), ("json", "load"), ("tomllib", "loads"), ("tomllib", "load")}
PARSERS |= {("jiter", "from_json"), ("pydantic_core", "from_json")}
PARSERS |= {("yaml", name) for name in ("load", "safe_load", "full_load", "unsafe_load", "load_all", "safe_load_all")}

OWN_WRITING = {
    # Columns the store wrote itself with json.dumps: read back as written, never text from outside.
    "store/revisions.py",
    "store/brand_input.py",
    "store/review_audit.py",  # the audit log's before and after
    "store/review_evidence.py",
    "store/resolution.py",
    "store/reading.py",
    "store/claimsets.py",
    "store/sqlite.py",
    "cli/score.py",  # its own result JSON, given one more key
    # The canonical parameters of a protocol, which protocol.py wrote with json.dumps.
    "core/protocol.py",
}
"""Modules allowed to call ``json.loads`` on what citeaudit itself wrote."""

ALLOWED = {
    "core/limits.py",  # the bounded JSON and TOML loaders
    "core/bounded_yaml.py",  # the bounded YAML loader
    "ingest/shape.py",  # one JSON string literal's escapes, already scanned (no nesting, no numbers)
}


def test_json_yaml_and_toml_are_parsed_only_by_the_bounded_loaders() -> None:
    package = REPO / "src" / "citeaudit"
    outside: list[str] = []
    for path in sorted(package.rglob("*.py")):
        name = path.relative_to(package).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            owner = node.func.value
            if not isinstance(owner, ast.Name) or (owner.id, node.func.attr) not in PARSERS:
                continue
            if name not in ALLOWED and not (owner.id == "json" and name in OWN_WRITING):
                outside.append(f"{name}:{node.lineno} {owner.id}.{node.func.attr}")
    assert outside == []


# -- special files ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", [None, "gemini"])
@pytest.mark.parametrize("kind", ["device", "huge", "folder"])
def test_special_and_oversized_files_are_refused_before_reading(
    cli: Cli, tmp_path: Path, db_path: Path, fmt: str | None, kind: str
) -> None:
    path = tmp_path / "answer.json"
    if kind == "device":
        path.symlink_to("/dev/zero")  # reads forever
    elif kind == "huge":
        with open(path, "wb") as handle:  # sparse: 1.5 GB announced, no disk used
            handle.truncate(1_500_000_000)
    else:
        path.mkdir()
    expected = {
        "device": "not a regular file",
        "huge": "1500000000 bytes, more than the 1000000000 a payload may have",
        "folder": "a folder, not a file",
    }[kind]
    with within(20):
        if fmt is None:
            result = cli("ingest", path, "--db", db_path)
        else:
            result = cli("ingest", path, "--db", db_path, "--format", fmt, "--questions", PROTOCOL, "--platform", "p")
    refused(result, f"{path}: {expected}")
    assert not db_path.exists()


# -- judgements CSV and the busy timeout -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rows", "fragments"),
    [
        # a quote left open: read leniently, every later value would have moved into the source column
        ('c1,"s1,supported\nc2,s2,irrelevant\n', ("line 2", "not CSV: unexpected end of data")),
        ('c1,"s1"x,supported\n', ("line 2", "not CSV")),
        ('c1,s1,"' + "x" * 140_000 + '"\n', ("line 2", "not CSV: field larger than field limit")),
        # one edge given two labels in one file: both would have been recorded
        ("c1,s1,irrelevant\nc2,s2,partial\nc1,s1,supported\n", ("line 4", "which line 2 labels 'irrelevant'")),
    ],
)
def test_judgements_csv_is_read_strictly(cli: Cli, tmp_path: Path, rows: str, fragments: tuple[str, ...]) -> None:
    db = _labelled_db(cli, tmp_path)
    before = db.read_bytes()
    path = write(tmp_path, "labels.csv", "claim_id,source,label\n" + rows)
    refused(cli("judgements", "import", path, "--reviewer", "li", "--db", db), "labels.csv", *fragments)
    assert db.read_bytes() == before


@pytest.mark.parametrize("command", ["reviewer add", "judgements import"])
def test_review_writers_wait_only_as_long_as_citeaudit_busy_timeout(cli: Cli, tmp_path: Path, command: str) -> None:
    db = _labelled_db(cli, tmp_path)
    labels = write(tmp_path, "labels.csv", "claim_id,source,label\nc1,https://shop.example/ax,irrelevant\n")
    args = {
        "reviewer add": ("reviewer", "add", "bo", "--role", "reviewer", "--password", "long-enough-1"),
        "judgements import": ("judgements", "import", labels, "--reviewer", "li"),
    }[command]
    lock = sqlite3.connect(db, isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")  # held until the command has given up
    try:
        with within(20):  # the default wait is 30 s
            result = cli(*args, "--db", db, env={"CITEAUDIT_BUSY_TIMEOUT": "0.2"})
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    refused(result, "0.2 s", "nothing was written")


# -- terminal escapes in answer text ---------------------------------------------------------------------------


def test_terminal_escapes_in_answers_are_shown_escaped(cli: Cli, tmp_path: Path, db_path: Path) -> None:
    from tests.builders import answer, claim, document, edge

    text = "Tank \x1b[2J cleared \x1b]0;pwned\x07 title \x9b31m C1" + " " * 40
    doc = document(
        [{**answer("a1"), "text": text}],
        [{**claim("c1", "a1"), "text": "claim \x1b[31mred", "start": 0, "end": 4}],
        [edge("c1", "https://brand.com/x")],
    )
    path = write(tmp_path, "escapes.audit.json", json.dumps(doc))
    assert cli("ingest", path, "--db", db_path).exit_code == 0
    shown = cli("answers", "show", "a1", "--db", db_path)
    listed = cli("claim", "list", "a1", "--db", db_path)
    for result in (shown, listed):
        assert result.exit_code == 0, result.stderr
        # no control character reaches the terminal: ESC, BEL and the C1 CSI are written as their escapes
        assert not {"\x1b", "\x07", "\x9b"} & set(result.stdout)
    assert "\\x1b[2J" in shown.stdout
    assert "\\x1b]0;pwned\\x07" in shown.stdout
    assert "\\x9b31m" in shown.stdout
    assert "\\x1b[31mred" in "".join(listed.stdout.split())


# -- protocol values and links that are not what they look like ------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "fragments"),
    [
        ("{id: !!binary aGVsbG8=, text: 'Q'}", ("line 5 column 10", "!!binary is not a value citeaudit reads")),
    ],
)
def test_binary_yaml_values_are_refused(cli: Cli, tmp_path: Path, entry: str, fragments: tuple[str, ...]) -> None:
    text = f'id: p\nversion: "1"\nofficial_domains: [brand.com]\nquestions:\n  - {entry}\n'
    refused(cli("protocol", "check", write(tmp_path, "protocol.yaml", text)), "protocol.yaml", *fragments)


@pytest.mark.parametrize(
    ("domain", "where"),
    [
        ('"brand.com\u200b"', "official_domains[0]"),  # a zero-width space: invisible, and dropped when encoded
        ('{host: "javascript:alert(1)"}', "official_domains[0].host"),
        ('"https://brand.com/"', "official_domains[0]"),
        ('{host: "shop.example.net\u2060", path_prefix: /brand/}', "official_domains[0].host"),
    ],
)
def test_official_domains_that_are_no_host_names_are_refused(cli: Cli, tmp_path: Path, domain: str, where: str) -> None:
    text = f'id: p\nversion: "1"\nofficial_domains: [{domain}]\nquestions:\n  - {{id: q1, text: "Q"}}\n'
    path = write(tmp_path, "protocol.yaml", text)
    refused(cli("protocol", "check", path), f"protocol.yaml: {where}:", "is not a host name")


def test_an_international_domain_is_still_a_host_name(cli: Cli, tmp_path: Path) -> None:
    text = 'id: p\nversion: "1"\nofficial_domains: [bücher.de]\nquestions:\n  - {id: q1, text: "Q"}\n'
    result = cli("protocol", "check", write(tmp_path, "protocol.yaml", text))
    assert result.exit_code == 0, result.stderr


@pytest.mark.parametrize(
    "url",
    ["http://[::1", "http://brand.com:99999/x", "http://brand.com/a\nb", "http://brand.com/a\x00b"],
)
def test_set_url_refuses_a_link_that_cannot_be_requested_even_unread(cli: Cli, tmp_path: Path, url: str) -> None:
    from tests.builders import answer as answer_row
    from tests.builders import claim, document

    doc = document([answer_row("a1")], [claim("c1", "a1")], [{"claim_id": "c1", "title": "AX220 sheet"}])
    db = tmp_path / "a.db"
    assert cli("ingest", write(tmp_path, "a.audit.json", json.dumps(doc)), "--db", db).exit_code == 0
    with sqlite3.connect(db) as connection:
        ((key,),) = connection.execute("SELECT key FROM sources").fetchall()
    before = db.read_bytes()
    result = cli("source", "set-url", key, url, "--no-resolve", "--by", "li", "--db", db)
    refused(result, "is not an http(s) URL")
    assert db.read_bytes() == before


@pytest.mark.parametrize("command", ["confirm", "reject"])
@pytest.mark.parametrize("mapping_id", [str(2**64), str(2**63), "0"])
def test_facts_ids_past_64_bits_are_refused(cli: Cli, tmp_path: Path, command: str, mapping_id: str) -> None:
    db = tmp_path / "a.db"
    assert cli("ingest", REPO / "src" / "citeaudit" / "examples" / "four-claim.audit.json", "--db", db).exit_code == 0
    before = db.read_bytes()
    refused(cli("facts", command, mapping_id, "--reviewer", "li", "--db", db), "is not a proposal id")
    assert db.read_bytes() == before
