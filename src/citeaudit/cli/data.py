"""``ingest``, ``export``, ``formats`` and ``schema``: getting audits in and out."""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from importlib import resources
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from citeaudit.api import is_database
from citeaudit.cli.common import DbOption, console, err_console, handles_errors
from citeaudit.errors import InputError
from citeaudit.ingest import READERS, Attachment, ingest_files, needs_attachment
from citeaudit.interchange import audit_to_document, load_protocol
from citeaudit.report.exports import export_tables
from citeaudit.report.files import write_atomically
from citeaudit.scope import Scope, select_audit
from citeaudit.scoring import score
from citeaudit.store import ImportReport, Store

__all__ = ["register"]


class ExportFormat(StrEnum):
    """Export formats."""

    AUDIT_JSON = "audit-json"
    CSV = "csv"
    JSONL = "jsonl"
    PARQUET = "parquet"


@handles_errors
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files to import.", show_default=False)],
    db: DbOption = Path("citeaudit.db"),
    fmt: Annotated[str | None, typer.Option("--format", help="Reader name (default: detect from content).")] = None,
    run: Annotated[
        str | None, typer.Option("--run", help="Run id for engine answers (default: PLATFORM-DATE).")
    ] = None,
    platform: Annotated[
        str | None, typer.Option("--platform", help="Platform of engine answers (default: from the payload).")
    ] = None,
    question_id: Annotated[
        str | None, typer.Option("--question-id", help="Question every engine answer in these files answers.")
    ] = None,
    questions: Annotated[
        Path | None,
        typer.Option("--questions", help="Protocol file (YAML) whose questions engine answers belong to."),
    ] = None,
    protocol: Annotated[
        str | None, typer.Option("--protocol", help="Protocol already in the database to attach answers to.")
    ] = None,
) -> None:
    """Import files into the database, each as an import of its own; the same file twice is a no-op.

    All the files are imported in one transaction: a problem in any of them, wherever it is found, leaves the
    database as it was. Engine payloads (see `citeaudit formats`) are read, checked and written a few thousand
    answers at a time, so a large file needs little memory; they are attached to a protocol question: the
    protocol comes from --questions or from the database.
    """
    attachment = _attachment(db, questions, protocol, run, platform, question_id, paths, fmt)
    stored: Counter[str] = Counter()
    with err_console.status(f"importing {len(paths)} file(s)…") as status:

        def advanced(name: str, n: int) -> None:
            stored[name] += n
            status.update(f"importing {name}: {stored[name]:,} answers read, checked and written…")

        with _new_or_existing(db) as target, Store(target) as store:
            results = ingest_files(store, paths, fmt, attachment, progress=advanced)
    for name, reader, report in results:
        _print_report(report, name, reader.name)


@contextmanager
def _new_or_existing(db: Path) -> Iterator[Path]:
    """The database to write: ``db`` itself when it exists; otherwise a file beside it that becomes ``db`` only
    when everything succeeded, so a failed first import leaves no database behind (not even an empty one)."""
    if db.exists():
        yield db
        return
    partial = db.with_name(f".{db.name}.{os.getpid()}.partial")
    try:
        yield partial
    except BaseException:
        for leftover in (partial, *(partial.with_name(partial.name + end) for end in ("-wal", "-shm", "-journal"))):
            leftover.unlink(missing_ok=True)
        raise
    partial.replace(db)


def _attachment(
    db: Path,
    questions: Path | None,
    protocol: str | None,
    run: str | None,
    platform: str | None,
    question_id: str | None,
    paths: list[Path],
    fmt: str | None,
) -> Attachment | None:
    """Where engine answers go; ``None`` when every file is a whole audit."""
    if not any(needs_attachment(path, fmt) for path in paths if path.is_file()):
        return None
    if questions is not None:
        chosen = load_protocol(questions)
    elif db.exists() and is_database(db):
        with Store(db) as store:
            chosen = store.protocol(store.choose_protocol(protocol))
    else:
        raise InputError(
            str(paths[0]),
            "",
            "engine answers need a protocol: pass --questions PROTOCOL.yaml (or --db a database that holds one)",
        )
    return Attachment(protocol=chosen, run_id=run, platform=platform, question_id=question_id)


def _print_report(report: ImportReport, source: str, reader: str) -> None:
    if report.already_imported:
        console.print(f"{source}: already imported (sha256 {report.sha256[:12]}…), nothing written", soft_wrap=True)
        return
    console.print(
        f"{source} ({reader}): {report.answers} answers, {report.claims} claims, {report.edges} edges "
        f"from {report.locations} locations, {report.judgements} judgements, {report.sources_new} new sources "
        f"({report.sources_known} already known), {report.evidence_groups} evidence groups, {report.runs} new runs",
        soft_wrap=True,
    )
    extras = [
        f"{report.dangling} dangling marker(s) pointing past the source list" if report.dangling else "",
        f"{report.retrieved} retrieved-only source(s) (not cited)" if report.retrieved else "",
        f"{report.failures} failed or incomplete answer(s) recorded" if report.failures else "",
    ]
    if any(extras):
        console.print("  also: " + "; ".join(e for e in extras if e), soft_wrap=True)


@handles_errors
def export(
    db: DbOption = Path("citeaudit.db"),
    fmt: Annotated[ExportFormat, typer.Option("--format", help="Export format.")] = ExportFormat.AUDIT_JSON,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Output file for audit-json (default: standard output); a folder for the others."),
    ] = None,
    protocol: Annotated[
        str | None, typer.Option("--protocol", help="Protocol id, id@version or fingerprint prefix.")
    ] = None,
    by: Annotated[str | None, typer.Option("--by", help="Grouping of the scores table (csv, jsonl).")] = None,
) -> None:
    """Export everything measured under one protocol: losslessly as citeaudit.audit/v1, as flat tables
    (answers, claims, edges, judgements, scores) in CSV or JSON Lines, or as the engine tables in Parquet
    (streamed, hive-partitioned by protocol and run; `citeaudit score DIR --engine duckdb|spark` reads them)."""
    if not is_database(db):
        raise InputError(str(db), "", "is not a citeaudit database")
    if fmt is ExportFormat.PARQUET:
        if out is None:
            raise InputError("--out", "", "parquet export writes a dataset folder: name a new folder with --out")
        # Streamed table by table: memory stays flat however large the ledger is.
        from citeaudit.engines import export_parquet

        dataset = export_parquet(db, out, protocol=protocol)
        counts = ", ".join(f"{name} {rows}" for name, rows in dataset.rows.items())
        console.print(f"wrote {out} ({dataset.files} files, hive-partitioned by protocol and run): {counts} rows")
        return
    with Store(db) as store:
        audit = store.load_audit(store.choose_protocol(protocol))
    if fmt is not ExportFormat.AUDIT_JSON:
        if out is None:
            raise InputError("--out", "", f"{fmt} export writes one file per table: name a folder with --out")
        groups = tuple(part.strip() for part in (by or "").split(",") if part.strip())
        selected, _ = select_audit(audit, Scope())
        written = export_tables(audit, score(selected, by=groups), str(fmt), out)
        console.print(f"wrote {', '.join(str(path) for path in written)}", soft_wrap=True)
        return
    text = json.dumps(audit_to_document(audit), indent=2, ensure_ascii=False) + "\n"
    if out is None:
        console.out(text, end="", highlight=False)
        return
    write_atomically(out, text.encode("utf-8"))
    console.print(f"wrote {out} ({len(audit.answers)} answers, {len(audit.edges)} edges)")


def formats() -> None:
    """List the readers `citeaudit ingest` knows."""
    table = Table("format", "gives", "description", header_style="bold")
    for name, reader in sorted(READERS.items()):
        gives = "whole audit" if reader.read_audit is not None else "engine answers"
        table.add_row(name, gives, Text(reader.description))
    console.print(table)


def schema() -> None:
    """Print the JSON Schema of the citeaudit.audit/v1 interchange format."""
    text = resources.files("citeaudit").joinpath("schemas/audit-v1.schema.json").read_text(encoding="utf-8")
    console.out(text, end="", highlight=False)


def register(app: typer.Typer) -> None:
    """Add this group's commands to ``app``."""
    app.command()(ingest)
    app.command()(export)
    app.command()(formats)
    app.command()(schema)
