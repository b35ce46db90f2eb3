"""``judgements import`` and ``judgements export``: labels from and to spreadsheets (CSV) or JSON Lines, for teams
that label outside the review UI, under the same blind-review and policy rules.

A file's columns: ``claim_id``, ``source`` (the source's key, URL or resolved URL), ``label``, and optionally
``passage``, ``period``, ``reasoning``, ``severity``. An export adds ``reviewer``, ``stage`` and ``created_at``;
an import accepts them back (``reviewer`` must then be the importing reviewer, ``stage`` must be ``review``).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import sys
from collections.abc import Iterator, Mapping
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from citeaudit.cli.common import DbOption, console, err_console, existing_database, handles_errors, os_user
from citeaudit.core.errors import InvalidValue, MalformedInput, UnknownFormat
from citeaudit.core.limits import load_json
from citeaudit.core.model import Label, Severity

if TYPE_CHECKING:
    from citeaudit.store.review_records import FileJudgement

__all__ = ["COLUMNS", "app", "read_rows", "register"]

app = typer.Typer(help="Labels from and to CSV or JSON Lines files.", no_args_is_help=True)

COLUMNS = ("claim_id", "source", "label", "passage", "period", "reasoning", "severity")
"""The columns of a judgements file, in the order an export writes them."""

_EXPORT_ONLY = ("reviewer", "stage", "created_at")
"""Columns an export adds; an import checks them."""


class FileFormat(StrEnum):
    """Judgements file formats."""

    CSV = "csv"
    """A header row, one judgement per row."""
    JSONL = "jsonl"
    """One JSON object per line."""


def register(root: typer.Typer) -> None:
    """Add the ``judgements`` group to the root command."""
    root.add_typer(app, name="judgements")


def _format_of(path: Path) -> FileFormat:
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return FileFormat.CSV
    if suffix in (".jsonl", ".ndjson"):
        return FileFormat.JSONL
    raise UnknownFormat(str(path), "", f"unknown judgements file type {suffix!r}: use .csv or .jsonl")


def _records(path: Path, text: str) -> Iterator[tuple[int, Mapping[str, object]]]:
    """``(line, fields)`` of each row of the file."""
    if _format_of(path) is FileFormat.CSV:
        yield from _csv_records(path, text)
        return
    # Lines end at "\n" only: U+2028 and the other characters splitlines() breaks at may stand inside a string.
    for number, raw in enumerate(text.split("\n"), start=1):
        if not raw.strip():
            continue
        value = load_json(raw.removesuffix("\r"), str(path), f"line {number}")
        if not isinstance(value, dict):
            raise InvalidValue(str(path), f"line {number}", f"a row is a JSON object, not {value!r}")
        yield number, value


def _csv_records(path: Path, text: str) -> Iterator[tuple[int, Mapping[str, object]]]:
    """The rows of a CSV file, read strictly: a quote left open or text after a closing quote is refused (a lenient
    reader would shift every later value into the wrong column), as is a field over the reader's limit."""
    from citeaudit.report.csv_cells import spreadsheet_text

    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    line = 0
    try:
        missing = [c for c in ("claim_id", "source", "label") if c not in (reader.fieldnames or [])]
        if missing:
            raise InvalidValue(str(path), "line 1", f"header {reader.fieldnames!r} lacks column(s) {missing!r}")
        line = reader.line_num
        for row in reader:
            # A cell an export made spreadsheet-safe (a leading apostrophe) reads back as the text it was.
            yield line + 1, {key: spreadsheet_text(v) if isinstance(v, str) else v for key, v in row.items()}
            line = reader.line_num
    except csv.Error as exc:
        raise MalformedInput(str(path), f"line {line + 1}", f"not CSV: {exc}") from None


def _text(path: Path, line: int, fields: Mapping[str, object], column: str) -> str | None:
    value = fields.get(column)
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidValue(str(path), f"line {line}", f"{column} {value!r} is not text")
    return value.strip() or None


def read_rows(path: Path, reviewer: str) -> list[FileJudgement]:
    """Every row of a judgements file, each checked: a bad one is an error naming the file, line and value."""
    from citeaudit.store.review_records import FileJudgement

    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InvalidValue(str(path), "", "no such file") from None
    except IsADirectoryError:
        raise InvalidValue(str(path), "", "a directory, not a judgements file") from None
    except UnicodeDecodeError as exc:
        raise MalformedInput(str(path), f"byte {exc.start}", "not UTF-8 text") from None
    rows: list[FileJudgement] = []
    labels: dict[tuple[str, str], tuple[int, str]] = {}
    for line, fields in _records(path, text):
        where = f"line {line}"
        if None in fields:
            raise InvalidValue(str(path), where, f"more values than columns: {fields[None]!r}")  # type: ignore[index]
        stray = sorted(str(c) for c in set(fields) - set(COLUMNS) - set(_EXPORT_ONLY))
        if stray:
            raise InvalidValue(str(path), where, f"unknown column {stray[0]!r}; columns: {', '.join(COLUMNS)}")
        claim_id, source, label = (_text(path, line, fields, c) for c in ("claim_id", "source", "label"))
        if claim_id is None or source is None:
            raise InvalidValue(str(path), where, f"claim_id {claim_id!r} and source {source!r} are both needed")
        if label not in {member.value for member in Label}:
            raise InvalidValue(str(path), where, f"label {label!r} is not one of {', '.join(Label)}")
        # One reviewer gives one edge one label per file: two would both be recorded, the later one final.
        first_line, first_label = labels.setdefault((claim_id, source), (line, label))
        if first_label != label:
            raise InvalidValue(
                str(path),
                where,
                f"label {label!r} for claim {claim_id!r} and source {source!r}, which line "
                f"{first_line} labels {first_label!r}: one label per edge",
            )
        severity = _text(path, line, fields, "severity")
        if severity is not None and severity not in {member.value for member in Severity}:
            raise InvalidValue(str(path), where, f"severity {severity!r} is not one of {', '.join(Severity)}")
        who = _text(path, line, fields, "reviewer")
        if who is not None and who != reviewer:
            raise InvalidValue(str(path), where, f"reviewer {who!r} is not the importing reviewer {reviewer!r}")
        stage = _text(path, line, fields, "stage")
        if stage not in (None, "review"):
            raise InvalidValue(str(path), where, f"stage {stage!r}: only reviews are imported (adjudicate in the UI)")
        rows.append(
            FileJudgement(
                line,
                claim_id,
                source,
                Label(label),
                _text(path, line, fields, "passage"),
                _text(path, line, fields, "period"),
                _text(path, line, fields, "reasoning"),
                None if severity is None else Severity(severity),
            )
        )
    return rows


@app.command("import")
@handles_errors
def import_file(
    file: Annotated[Path, typer.Argument(help="A .csv or .jsonl file of labels.")],
    reviewer: Annotated[str, typer.Option("--reviewer", help="The review account whose labels these are.")],
    db: DbOption = Path("citeaudit.db"),
) -> None:
    """Record a reviewer's labels from a file, checked row by row under the project's review policy; one bad row
    (its file, line and value are named) and nothing is written. --reviewer names a review account (not an
    admin); a file imported under one account is refused under another. A row that differs from the reviewer's
    latest label of its edge is recorded (the latest wins); an identical one is already recorded."""
    from citeaudit.store.review import ReviewStore  # loaded when the command runs, not for --help
    from citeaudit.store.writers import busy_timeout

    existing_database(db)
    rows = read_rows(file, reviewer)
    sha256 = hashlib.sha256(file.read_bytes()).hexdigest()
    ReviewStore.prepare(db)
    with ReviewStore(db, busy_timeout()) as store:
        recorded, repeated = store.judgements.import_judgements(str(file), reviewer, rows, sha256, os_user() or None)
    err_console.print(f"{recorded} judgement(s) recorded for {reviewer}; {repeated} already recorded")


@app.command("export")
@handles_errors
def export_file(
    db: DbOption = Path("citeaudit.db"),
    file_format: Annotated[FileFormat, typer.Option("--format", help="csv or jsonl.")] = FileFormat.CSV,
    reviewer: Annotated[str | None, typer.Option("--reviewer", help="Only this reviewer's judgements.")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")] = None,
) -> None:
    """Write the human judgements on current claims with the import's columns (plus reviewer, stage, when)."""
    from citeaudit.store.review import ReviewStore  # loaded when the command runs, not for --help
    from citeaudit.store.writers import busy_timeout

    existing_database(db)
    ReviewStore.prepare(db)
    with ReviewStore(db, busy_timeout()) as store:
        records = [
            {
                "claim_id": row.claim_id,
                "source": row.source,
                "label": str(row.label),
                "passage": row.passage,
                "period": row.period,
                "reasoning": row.reasoning,
                "severity": None if row.severity is None else str(row.severity),
                "reviewer": who,
                "stage": stage,
                "created_at": at,
            }
            for row, who, stage, at in store.judgements.export_judgements(reviewer)
        ]
    buffer = io.StringIO(newline="")
    if file_format is FileFormat.CSV:
        from citeaudit.report.csv_cells import SafeDictWriter

        writer = SafeDictWriter(buffer, fieldnames=[*COLUMNS, *_EXPORT_ONLY], lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: "" if v is None else v for k, v in r.items()} for r in records)
    else:
        for record in records:
            buffer.write(json.dumps(record, ensure_ascii=False) + "\n")
    if output is None:
        sys.stdout.write(buffer.getvalue())
    else:
        output.write_text(buffer.getvalue(), encoding="utf-8")
        console.print(f"{len(records)} judgement(s) written to {output}")
