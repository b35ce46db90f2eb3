"""`citeaudit judgements import|export` on real SQLite files: labels from a spreadsheet under the review policy,
row-by-row checks with nothing written on a bad row, and an export that imports back."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from citeaudit.core.model import Judgement, Label
from citeaudit.store.review import ReviewStore
from review_support import add_account, edge_pk, make_db, set_policy

Cli = Callable[..., Result]
TITLE_KEY = "title:a1:<script>alert('title')</script> outdoor use guide"
"""The key of review_document's title-only source (no URL: it is named by its key)."""
HEADER = "claim_id,source,label,passage,period,reasoning,severity\n"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    made = make_db(tmp_path / "labels.db")
    for name in ("ann", "bob", "cat"):
        add_account(made, name, "reviewer")
    return made


def human(db: Path) -> list[tuple[int, str, str, str | None, str | None]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT edge_pk, reviewer, label, passage, severity FROM judgements WHERE origin = 'human' ORDER BY pk"
        ).fetchall()


def test_import_csv_by_url_then_again(cli: Cli, db: Path, tmp_path: Path) -> None:
    sheet = tmp_path / "ann.csv"
    sheet.write_text(
        HEADER + 'c1,https://brand.com/ax220,supported,"Tank: 20 L",2026,spec table,high\n'
        "c3,https://brand.com/ax220,partial,,,,\n"
    )
    first = cli("judgements", "import", sheet, "--reviewer", "ann", "--db", db)
    assert first.exit_code == 0, first.stderr
    assert "2 judgement(s) recorded for ann; 0 already recorded" in first.stderr
    assert human(db) == [
        (edge_pk(db, "c1", "https://brand.com/ax220"), "ann", "supported", "Tank: 20 L", "high"),
        (edge_pk(db, "c3", "https://brand.com/ax220"), "ann", "partial", None, None),
    ]
    again = cli("judgements", "import", sheet, "--reviewer", "ann", "--db", db)
    assert again.exit_code == 0
    assert "0 judgement(s) recorded for ann; 2 already recorded" in again.stderr
    assert len(human(db)) == 2


@pytest.mark.parametrize(
    ("second_row", "expected"),
    [
        ("c3,https://brand.com/ax220,supportd,,,,", "line 3: label 'supportd' is not one of"),
        ("c9,https://brand.com/ax220,supported,,,,", "line 3: no claim 'c9'"),
        ("c3,https://nowhere.example/,supported,,,,", "line 3: claim 'c3' cites no source 'https://nowhere.example/'"),
        ("c3,https://brand.com/ax220,supported,,,,urgent", "line 3: severity 'urgent' is not one of"),
    ],
)
def test_a_bad_row_names_file_line_and_value_and_writes_nothing(
    cli: Cli, db: Path, tmp_path: Path, second_row: str, expected: str
) -> None:
    sheet = tmp_path / "bad.csv"
    sheet.write_text(HEADER + "c1,https://brand.com/ax220,supported,,,,\n" + second_row + "\n")
    result = cli("judgements", "import", sheet, "--reviewer", "ann", "--db", db)
    assert result.exit_code == 2
    assert "bad.csv" in result.stderr
    assert expected in result.stderr.replace("\n", "")
    assert "Traceback" not in result.stderr
    # the good first row was not written either
    assert human(db) == []


def test_import_follows_the_double_review_policy(cli: Cli, db: Path, tmp_path: Path) -> None:
    set_policy(db, "double")
    edge = edge_pk(db, "c1", "https://brand.com/ax220")
    with ReviewStore(db) as store:
        store.judgements.record_judgement(edge, Judgement(Label.SUPPORTED, "ann", created_at="2026-12-01"), "s-ann")
        store.judgements.record_judgement(edge, Judgement(Label.PARTIAL, "bob", created_at="2026-12-01"), "s-bob")
    sheet = tmp_path / "cat.jsonl"
    rows = [
        {"claim_id": "c3", "source": "https://brand.com/ax220", "label": "supported"},
        {"claim_id": "c1", "source": "https://brand.com/ax220", "label": "supported"},
    ]
    sheet.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    result = cli("judgements", "import", sheet, "--reviewer", "cat", "--db", db)
    assert result.exit_code == 2
    assert "cat.jsonl: line 2" in result.stderr
    assert "independent review(s)" in result.stderr.replace("\n", " ")
    assert [who for _, who, *_ in human(db)] == ["ann", "bob"]


def test_export_writes_the_import_columns_and_imports_back(cli: Cli, db: Path, tmp_path: Path) -> None:
    sheet = tmp_path / "ann.jsonl"
    sheet.write_text(
        json.dumps({"claim_id": "c2", "source": TITLE_KEY, "label": "unknown"})
        + "\n"
        + json.dumps({"claim_id": "c1", "source": "https://shop.example/ax", "label": "irrelevant", "reasoning": "ads"})
        + "\n"
    )
    imported_first = cli("judgements", "import", sheet, "--reviewer", "ann", "--db", db)
    assert imported_first.exit_code == 0, imported_first.stderr
    exported = cli("judgements", "export", "--db", db, "--reviewer", "ann")
    assert exported.exit_code == 0, exported.stderr
    rows = list(csv.DictReader(io.StringIO(exported.stdout)))
    assert [(r["claim_id"], r["label"], r["reasoning"], r["reviewer"], r["stage"]) for r in rows] == [
        ("c2", "unknown", "", "ann", "review"),
        ("c1", "irrelevant", "ads", "ann", "review"),
    ]
    # the exported file imports into a fresh copy of the database as the same two judgements
    fresh = make_db(tmp_path / "fresh.db")
    add_account(fresh, "ann", "reviewer")
    back = tmp_path / "back.csv"
    back.write_text(exported.stdout)
    imported = cli("judgements", "import", back, "--reviewer", "ann", "--db", fresh)
    assert imported.exit_code == 0, imported.stderr
    assert [(who, label) for _, who, label, *_ in human(fresh)] == [("ann", "unknown"), ("ann", "irrelevant")]
    # as someone else, the reviewer column does not match: refused
    add_account(fresh, "bob", "reviewer")
    other = cli("judgements", "import", back, "--reviewer", "bob", "--db", fresh)
    assert other.exit_code == 2
    assert "line 2: reviewer 'ann' is not the importing reviewer 'bob'" in other.stderr.replace("\n", "")


def test_a_retired_claim_is_refused(cli: Cli, db: Path, tmp_path: Path) -> None:
    # segmenting keeps c1 (its text is a1's sentence as the rules make it) and retires c2 and c3
    assert cli("segment", "--db", db).exit_code == 0
    sheet = tmp_path / "old.csv"
    sheet.write_text(HEADER + "c3,https://brand.com/ax220,supported,,,,\n")
    result = cli("judgements", "import", sheet, "--reviewer", "ann", "--db", db)
    assert result.exit_code == 2
    assert "line 2: claim 'c3' is retired" in result.stderr.replace("\n", "")
