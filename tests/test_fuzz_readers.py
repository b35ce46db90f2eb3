"""Every reader under random damage to its real fixtures: a clean refusal or a success, never a traceback.

Each example takes one real fixture (tests/fixtures, the bundled audits, an ExpertQA-shaped line, the test
protocol), damages it once (a value replaced by one of another type, nested, huge or hostile; a key removed or
given twice; the bytes re-encoded or cut) and runs the real CLI on it in-process with exceptions let through.
The command must either succeed or exit 2 with one line naming the file; a refused import leaves no database.
"""

from __future__ import annotations

import csv
import json
import sqlite3
import tempfile
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner, Result

from citeaudit.cli import app
from citeaudit.core.limits import MAX_DEPTH
from conftest import EXAMPLES, REPO, SHARED
from small_disk import contents, fill, mounted_disk

FIXTURES = REPO / "tests" / "fixtures"
PROTOCOL = FIXTURES / "protocol.yaml"
ONE_QUESTION = """\
id: fuzz
version: "1"
official_domains: [axtorp-machines.com]
questions:
  - {id: q01, text: "What tank size does the AX220 have?", required_facts: [{id: f01, text: 20 L}]}
"""
"""Engine payloads attach to this protocol's one question, so an undamaged payload is imported."""

EXPERTQA_LINE: dict[str, Any] = {
    "question": "How big is the AX220 tank?",
    "field": "Engineering",
    "answers": {
        "sys-a": {
            "answer_string": "It holds 20 L [1]. It runs outdoors [2][3].",
            "attribution": ["[1] https://a.org/x", "[2] https://b.org/y", "[3] https://c.org/z"],
            "claims": [
                {
                    "claim_string": "It holds 20 L [1].",
                    "support": "Complete",
                    "reason_missing_support": None,
                    "evidence": ["[1] https://a.org/x#:~:text=tank\n\nTank: 20 L"],
                },
                {
                    "claim_string": "It runs outdoors [2][3].",
                    "support": "Incomplete",
                    "reason_missing_support": "the page says indoors",
                    "evidence": ["[2] https://b.org/y", "[3] https://c.org/z"],
                },
            ],
        }
    },
}


def _one_question(node: Any) -> Any:
    """``node`` with every ``question_id`` naming the one question of :data:`ONE_QUESTION`."""
    if isinstance(node, dict):
        return {k: "q01" if k == "question_id" else _one_question(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_one_question(v) for v in node]
    return node


def _seeds() -> list[tuple[str, str, list[Any]]]:
    """``(format, file name, documents)`` of every seed; a JSON Lines seed has one document per line."""
    seeds: list[tuple[str, str, list[Any]]] = []
    for folder in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
        for path in sorted(folder.iterdir()):
            if path.suffix not in (".json", ".jsonl"):
                continue
            text = path.read_text(encoding="utf-8")
            try:
                documents = [json.loads(text)] if path.suffix == ".json" else [json.loads(x) for x in text.splitlines()]
            except json.JSONDecodeError:
                continue  # the malformed-JSON fixtures have their own tests
            seeds.append((folder.name, path.name, [_one_question(d) for d in documents]))
    for name in ("four-claim.audit.json", "exporter.audit.json"):
        seeds.append(("audit-json", name, [json.loads((EXAMPLES / name).read_text(encoding="utf-8"))]))
    expertqa = [EXPERTQA_LINE]
    real = SHARED / "data" / "expertqa" / "rand_val.jsonl"
    if real.exists():
        with real.open(encoding="utf-8") as handle:
            expertqa.append(json.loads(handle.readline()))
    seeds.append(("expertqa", "expertqa.jsonl", expertqa))
    return seeds


SEEDS = _seeds()

HOSTILE_TEXT = [
    "",
    " ",
    "26",
    "true",
    "http://[::1",
    "http://[::1/x",
    "http://host:99999/",
    "javascript:alert(1)",
    "line one\nline two",
    "\ud800",
    "a\udfffb",
    "\x00",
    "‮right-to-left",
    "x" * 100_000,
]


def _nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


def replacements(original: Any) -> st.SearchStrategy[Any]:
    """Values to put where ``original`` was: other types, wrappers, extremes, hostile text, deep nesting.

    The kinds that broke readers before (a list for text, a lone surrogate, an integer past 64 bits, nesting
    past the limit) are drawn more often than the rest.
    """
    return st.one_of(
        st.just([original]),
        st.just([original]),
        st.sampled_from(["\ud800", "a\udfffb"]),
        st.sampled_from(["\ud800", "a\udfffb"]),
        st.sampled_from([2**63, -(2**63) - 1, 10**30]),
        st.just(_HUGE),  # written as 5 000 digits, past int()'s own limit
        st.integers(min_value=MAX_DEPTH - 5, max_value=MAX_DEPTH + 10).map(_nested),
        st.just({"value": original}),
        st.sampled_from([[], {}, None, True, False, -1, 0, 2**31, 2**63 - 1]),
        st.integers(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.sampled_from(HOSTILE_TEXT),
        st.text(st.characters(codec=None, categories=None), max_size=12),
    )


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node[:20]):  # long lists repeat one shape; their first items stand for all
            found += _paths(value, (*prefix, i))
    return found


def _get(node: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        node = node[part]
    return node


_DUPLICATE = "\x00duplicate\x00"
_HUGE = "\x00huge\x00"
"""Stands for an integer of 5 000 digits, which json.dumps cannot write: :func:`render` puts the digits in."""


@st.composite
def damaged(draw: st.DrawFn, documents: list[Any], most: int = 1) -> tuple[list[Any], bool]:
    """The documents damaged in 1 to ``most`` places, and whether a key must be given twice in the written
    text (a duplicate cannot be a Python value: :func:`render` writes it)."""
    documents = json.loads(json.dumps(documents))
    for _ in range(draw(st.integers(1, most))):
        which = draw(st.integers(0, len(documents) - 1))
        path = draw(st.sampled_from(_paths(documents[which])))
        action = draw(st.sampled_from(["replace", "replace", "replace", "delete", "duplicate"]))
        if not path:
            documents[which] = draw(replacements(documents[which]))
            continue
        parent = _get(documents[which], path[:-1])
        last = path[-1]
        if action == "delete":
            del parent[last]
        elif action == "duplicate" and isinstance(parent, dict):
            parent[_DUPLICATE] = draw(replacements(parent[last]))
            parent[_DUPLICATE + str(last)] = None
            return documents, True  # the last damage: later ones could remove the marked keys
        else:
            parent[last] = draw(replacements(parent[last]))
    return documents, False


def _dump(document: Any, ascii_only: bool) -> str:
    return json.dumps(document, ensure_ascii=ascii_only)


def render(documents: list[Any], jsonl: bool, duplicate: bool, ascii_only: bool) -> str:
    text = "\n".join(_dump(d, ascii_only) for d in documents) + "\n" if jsonl else _dump(documents[0], ascii_only)
    text = text.replace(json.dumps(_HUGE), "9" * 5000)
    if duplicate:
        # `"<dup>": value, ..., "<dup>key": null` becomes `"key": value, ..., "key": null`: one key twice.
        marker = json.dumps(_DUPLICATE)[1:-1]
        start = text.index(marker + '"')
        key_start = text.index(marker, start + 1)
        key_end = text.index('"', key_start)
        key = text[key_start + len(marker) : key_end]
        text = text.replace(f'"{marker}{key}"', f'"{key}"').replace(f'"{marker}"', f'"{key}"')
    return text


ENCODINGS = st.sampled_from(["utf-8", "utf-8", "utf-8", "utf-8-sig", "utf-16", "latin-1-cut"])


def encode(text: str, encoding: str, cut: int) -> bytes:
    if encoding == "latin-1-cut":  # bytes that are not UTF-8, or a file cut short
        raw = text.encode("utf-8", "surrogatepass")
        return raw[: max(1, len(raw) * cut // 100)] + b"\xff\xfe"
    return text.encode(encoding, "surrogatepass")


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args], catch_exceptions=False)


def refused_cleanly(result: Result, name: str) -> None:
    """Exit 0, or exit 2 with one line on stderr naming the file: never a traceback."""
    assert result.exit_code in (0, 2), (result.exit_code, result.stdout, result.stderr)
    if result.exit_code == 2:
        line = result.stderr.strip("\n")  # a progress bar ends with a line feed when stderr is no terminal
        assert line.startswith("error: "), line
        assert "\n" not in line, line
        assert name in line, line


FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)


@FUZZ
@given(data=st.data())
def test_every_reader_refuses_damaged_input_cleanly(data: st.DataObject) -> None:
    fmt, name, documents = data.draw(st.sampled_from(SEEDS), label="seed")
    broken, duplicate = data.draw(damaged(documents, most=3), label="damage")
    ascii_only = data.draw(st.booleans(), label="ascii")
    text = render(broken, name.endswith(".jsonl"), duplicate, ascii_only)
    raw = encode(text, data.draw(ENCODINGS, label="encoding"), data.draw(st.integers(1, 99), label="cut"))
    existing = data.draw(st.booleans(), label="into a database with an import already")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        db = Path(folder) / "audit.db"
        args: list[str | Path] = ["ingest", path, "--db", db, "--format", fmt]
        if fmt not in ("audit-json", "expertqa"):
            protocol = Path(folder) / "protocol.yaml"
            protocol.write_text(ONE_QUESTION, encoding="utf-8")
            args += ["--questions", protocol, "--platform", "fuzz"]
        before = None
        if existing:  # the undamaged file first (a seed that is refused as it is leaves no database)
            path.write_text(render(documents, name.endswith(".jsonl"), False, False), encoding="utf-8")
            if run(*args).exit_code == 0:
                before = _contents(db)
        path.write_bytes(raw)
        result = run(*args)
        refused_cleanly(result, name)
        if result.exit_code == 2:
            if before is None:
                assert not db.exists(), "a refused first import left a database"
            else:
                assert _contents(db) == before, "a refused import changed the database"
        if fmt == "audit-json":
            refused_cleanly(run("score", path, "--format", "json"), name)


def _contents(db: Path) -> list[str]:
    """Every row of every table, as SQL text."""
    with closing(sqlite3.connect(db)) as connection:
        return list(connection.iterdump())


def _yaml_seed() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(PROTOCOL.read_text(encoding="utf-8"))
    loaded.update({"engines": ["openai", {"name": "gemini", "model": "m"}], "locales": ["en-GB"], "repeats": 2})
    return loaded


@FUZZ
@given(data=st.data())
def test_protocol_files_refuse_damage_cleanly(data: st.DataObject) -> None:
    broken, duplicate = data.draw(damaged([_yaml_seed()], most=3), label="damage")
    # JSON is YAML: written as JSON, the damage (a duplicate key included) reaches the YAML reader unchanged.
    text = render(broken, False, duplicate, data.draw(st.booleans(), label="ascii"))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "protocol.yaml"
        path.write_bytes(encode(text, data.draw(ENCODINGS, label="encoding"), data.draw(st.integers(1, 99))))
        refused_cleanly(run("protocol", "check", path), "protocol.yaml")
        db = Path(folder) / "plan.db"
        refused_cleanly(run("collect", "--protocol", path, "--dry-run", "--db", db), "protocol.yaml")


MARKDOWN = (FIXTURES / "markdown" / "ax220-answer.md").read_text(encoding="utf-8")
MARKDOWN_DAMAGE = st.sampled_from(
    [
        "[1]: http://[::1\n",
        "[2]: https://host:99999/x\n",
        "[9999]: https://a.org/\n",
        "[1]: https://dup.example/\n",
        "[1] [2] [3] [99]",
        "\ud800",
        "\x00",
        "\r\n\r\n",
        "x" * 100_000,
        "[" * 100_000,
    ]
)


@settings(FUZZ, max_examples=20)
@given(
    damage=st.lists(st.tuples(st.integers(0, len(MARKDOWN)), MARKDOWN_DAMAGE), min_size=1, max_size=3),
    encoding=ENCODINGS,
    cut=st.integers(1, 99),
)
def test_markdown_answers_refuse_damage_cleanly(damage: list[tuple[int, str]], encoding: str, cut: int) -> None:
    text = MARKDOWN
    for position, piece in sorted(damage, reverse=True):
        text = text[:position] + piece + text[position:]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "answer.md"
        path.write_bytes(encode(text, encoding, cut))
        protocol = Path(folder) / "protocol.yaml"
        protocol.write_text(ONE_QUESTION, encoding="utf-8")
        db = Path(folder) / "audit.db"
        result = run("ingest", path, "--db", db, "--format", "markdown", "--questions", protocol, "--platform", "fuzz")
        refused_cleanly(result, "answer.md")
        if result.exit_code == 2:
            assert not db.exists(), "a refused first import left a database"


# -- the families of the second round: YAML text, duplicate responses, special files, structured side inputs,
# a full disk, formula cells ------------------------------------------------------------------------------------

YAML_DAMAGE = st.sampled_from(
    [
        "\x00",
        "\x01",
        "\x1b[2J",
        "\x7f",
        "\nloop: &loop [*loop]\n",  # a recursive alias
        "\nloop: &loop {a: *loop}\n",
        "\nbig: " + "9" * 5000 + "\n",
        "\nbig: 0x" + "f" * 5000 + "\n",
        "\nid: twice\n",  # a key given twice
        "\nweights: {high: .inf}\n",
        "[" * 200,
    ]
)


@settings(FUZZ, max_examples=30)
@given(position=st.integers(0, 2000), damage=YAML_DAMAGE)
def test_protocol_text_damage_is_refused_cleanly(position: int, damage: str) -> None:
    text = yaml.safe_dump(_yaml_seed(), sort_keys=False)
    position = min(position, len(text))
    text = text[:position] + damage + text[position:]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "protocol.yaml"
        path.write_text(text, encoding="utf-8", newline="")
        refused_cleanly(run("protocol", "check", path), "protocol.yaml")
        refused_cleanly(run("protocol", "fingerprint", path), "protocol.yaml")
        db = Path(folder) / "plan.db"
        refused_cleanly(run("collect", "--protocol", path, "--dry-run", "--db", db), "protocol.yaml")


ENGINE_SEEDS = [
    (f, n, d)
    for f, n, d in SEEDS
    if f not in ("audit-json", "expertqa", "jsonl", "gemini") and len(d) == 1 and isinstance(d[0], dict)
]
"""Engine payloads that are one response (one JSON object). Not Gemini's: consecutive payloads sharing a
responseId are read as the chunks of one streamed response and put together."""


@settings(FUZZ, max_examples=20)
@given(seed=st.sampled_from(ENGINE_SEEDS), layout=st.sampled_from(["list", "lines"]), copies=st.integers(2, 4))
def test_a_response_given_more_than_once_in_a_file_is_never_stored_twice(
    seed: tuple[str, str, list[Any]], layout: str, copies: int
) -> None:
    fmt, name, (document,) = seed
    if layout == "list":
        text = json.dumps([document] * copies)
    else:
        text = "\n".join(json.dumps(document) for _ in range(copies)) + "\n"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_text(text, encoding="utf-8")
        db = Path(folder) / "audit.db"
        protocol = Path(folder) / "protocol.yaml"
        protocol.write_text(ONE_QUESTION, encoding="utf-8")
        args: list[str | Path] = ["--db", db, "--format", fmt, "--questions", protocol, "--platform", "fuzz"]
        result = run("ingest", path, *args)
        refused_cleanly(result, name)
        if result.exit_code == 0:
            # no id to tell the copies apart: each copy is its own answer, as the file says (never fewer)
            with closing(sqlite3.connect(db)) as connection:
                ((answers,),) = connection.execute("SELECT count(*) FROM answers").fetchall()
            assert answers >= copies
            return
        assert not db.exists()
        alone = Path(folder) / ("alone-" + name)
        alone.write_text(json.dumps(document), encoding="utf-8")
        if run("ingest", alone, *args).exit_code == 0:  # the response is good: the copies are what is refused
            assert "given twice" in result.stderr


@settings(FUZZ, max_examples=12)
@given(
    kind=st.sampled_from(["device", "folder", "huge", "empty"]),
    fmt=st.sampled_from([None, *sorted({s[0] for s in SEEDS})]),
)
def test_special_files_are_refused_cleanly_in_every_format(kind: str, fmt: str | None) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "input.json"
        if kind == "device":
            path.symlink_to("/dev/zero")
        elif kind == "folder":
            path.mkdir()
        elif kind == "huge":
            with open(path, "wb") as handle:
                handle.truncate(1_000_000_001)  # sparse: one byte past the limit, no disk used
        else:
            path.write_bytes(b"")
        protocol = Path(folder) / "protocol.yaml"
        protocol.write_text(ONE_QUESTION, encoding="utf-8")
        db = Path(folder) / "audit.db"
        args: list[str | Path] = ["ingest", path, "--db", db, "--questions", protocol, "--platform", "fuzz"]
        result = run(*args, *(["--format", fmt] if fmt else []))
        refused_cleanly(result, "input.json")
        assert result.exit_code == 2
        assert not db.exists()


SIDE_INPUTS = st.sampled_from(
    [
        ("labels.jsonl", '{"claim_id": "c1", "source": "s", "label": "irrelevant", "label": "supported"}\n'),
        ("labels.jsonl", "[" * 3000 + "]" * 3000 + "\n"),
        ("labels.jsonl", '{"claim_id": "c1", "source": "\\udc00", "label": "partial"}\n'),
        ("labels.jsonl", '{"claim_id": "c1", "source": "s", "label": "partial", "n": ' + "9" * 5000 + "}\n"),
        ("labels.csv", 'claim_id,source,label\nc1,"s1,partial\n'),
        ("labels.csv", "claim_id,source,label\nc1,s1,partial\nc1,s1,supported\n"),
        ("labels.csv", 'claim_id,source,label\nc1,s1,"' + "x" * 140_000 + '"\n'),
        ("citeaudit.toml", "x = " + "[" * 2000 + "]" * 2000 + "\n"),
        ("citeaudit.toml", "[resolve]\ntimeout = inf\n"),
        ("citeaudit.toml", "[resolve]\nconcurrency = " + "9" * 5000 + "\n"),
        ("citeaudit.toml", "db = 'a'\ndb = 'b'\n"),
    ]
)


@settings(FUZZ, max_examples=15)
@given(side=SIDE_INPUTS)
def test_judgements_files_and_the_project_file_refuse_damage_cleanly(side: tuple[str, str]) -> None:
    from review_support import add_account, make_db

    name, text = side
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        if name == "citeaudit.toml":
            result = run("--config", path, "config", "show")
            refused_cleanly(result, name)
            assert result.exit_code == 2
            return
        db = make_db(Path(folder) / "labels.db")
        add_account(db, "ann", "reviewer")
        before = _contents(db)
        result = run("judgements", "import", path, "--reviewer", "ann", "--db", db)
        refused_cleanly(result, name)
        assert result.exit_code == 2
        assert _contents(db) == before


@settings(FUZZ, max_examples=25)
@given(
    start=st.sampled_from(["=", "+", "-", "@", "\t", "\r", "'=", "-1", "+2.5"]),
    rest=st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=20),
)
def test_no_exported_cell_starts_a_formula(start: str, rest: str) -> None:
    from tests.builders import answer, claim, document, edge

    from citeaudit.report.csv_cells import spreadsheet_text

    value = start + rest
    doc = document(
        [{**answer("a1"), "text": value + " " + "x" * 40}],
        [{**claim("c1", "a1"), "text": value}],
        [edge("c1", "https://brand.com/x", "supported", passage=value, reviewer="r")],
    )
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "a.audit.json"
        source.write_text(json.dumps(doc), encoding="utf-8")
        db = Path(folder) / "audit.db"
        result = run("ingest", source, "--db", db)
        refused_cleanly(result, "a.audit.json")
        if result.exit_code != 0:
            return
        out = Path(folder) / "tables"
        assert run("export", "--db", db, "--format", "csv", "--out", out).exit_code == 0
        for table in out.glob("*.csv"):
            with table.open(encoding="utf-8", newline="") as handle:
                for row in csv.reader(handle):
                    for cell in row:
                        first = cell[:1]
                        numeric = cell.lstrip("+-").replace(".", "", 1).isdigit()
                        assert first not in ("=", "+", "-", "@", "\t", "\r") or numeric or not first, cell
                        if cell[:1] == "'" and value in spreadsheet_text(cell):
                            assert cell[1:].startswith(value[:1])


@pytest.mark.parametrize("leave", [0, 40_000, 400_000])
@pytest.mark.parametrize("seed", ["four-claim.audit.json", "openai-responses", "expertqa"])
def test_every_writer_on_a_nearly_full_disk_succeeds_or_refuses_cleanly(tmp_path: Path, leave: int, seed: str) -> None:
    with mounted_disk(tmp_path / "disk") as disk:
        _writers_on_a_full_disk(tmp_path, disk, leave, seed)


def _writers_on_a_full_disk(tmp_path: Path, disk: Path, leave: int, seed: str) -> None:
    db = disk / "audit.db"
    assert run("ingest", EXAMPLES / "exporter.audit.json", "--db", db).exit_code == 0
    fill(disk, leave)
    if seed == "four-claim.audit.json":
        args: list[str | Path] = ["ingest", EXAMPLES / seed, "--db", db]
    elif seed == "expertqa":
        path = tmp_path / "expertqa.jsonl"
        path.write_text(json.dumps(EXPERTQA_LINE) + "\n", encoding="utf-8")
        args = ["ingest", path, "--db", db]
    else:
        protocol = tmp_path / "protocol.yaml"
        protocol.write_text(ONE_QUESTION, encoding="utf-8")
        path = FIXTURES / "openai-responses" / "search.json"
        args = ["ingest", path, "--db", db, "--questions", protocol, "--platform", "fuzz"]
    commands = [
        args,
        ["reviewer", "add", "li", "--role", "reviewer", "--password", "long-enough-1", "--db", db],
        ["segment", "--db", db, "--force"],
        ["export", "--db", db, "--format", "csv", "--out", disk / "tables"],
        ["report", db, "--out", disk / "report.html"],
    ]
    for command in commands:
        before = contents(db)
        result = run(*command)
        refused_cleanly(result, str(disk))
        if result.exit_code == 2:
            assert contents(db) == before, command
