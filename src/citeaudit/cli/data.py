"""``ingest``, ``export``, ``formats`` and ``schema``: getting audits in and out."""

from __future__ import annotations

import json
import os
import tempfile
from enum import StrEnum
from importlib import resources
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from citeaudit.cli.common import DbOption, console, handles_errors
from citeaudit.ingest import READERS, ingest_file, read_file
from citeaudit.interchange import audit_to_document
from citeaudit.store import Store

__all__ = ["register"]


class ExportFormat(StrEnum):
    """Export formats."""

    AUDIT_JSON = "audit-json"


@handles_errors
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files to import.", show_default=False)],
    db: DbOption = Path("citeaudit.db"),
    fmt: Annotated[str | None, typer.Option("--format", help="Reader name (default: detect from content).")] = None,
) -> None:
    """Import files into the database: each file in one transaction; the same file twice is a no-op."""
    # Check every file before writing anything, so a bad file in a batch writes nothing.
    for path in paths:
        read_file(path, fmt)
    with Store(db) as store:
        for path in paths:
            report = ingest_file(store, path, fmt)
            if report.already_imported:
                console.print(f"{path}: already imported (sha256 {report.sha256[:12]}…), nothing written")
                continue
            console.print(
                f"{path}: {report.answers} answers, {report.claims} claims, {report.edges} edges "
                f"from {report.locations} locations, {report.judgements} judgements, "
                f"{report.sources_new} new sources ({report.sources_known} already known), "
                f"{report.evidence_groups} evidence groups, {report.runs} new runs"
            )


@handles_errors
def export(
    db: DbOption = Path("citeaudit.db"),
    fmt: Annotated[ExportFormat, typer.Option("--format", help="Export format.")] = ExportFormat.AUDIT_JSON,
    out: Annotated[Path | None, typer.Option("--out", help="Output file (default: standard output).")] = None,
    protocol: Annotated[
        str | None, typer.Option("--protocol", help="Protocol id, id@version or fingerprint prefix.")
    ] = None,
) -> None:
    """Export everything measured under one protocol as a citeaudit.audit/v1 document (lossless)."""
    from citeaudit.api import is_database
    from citeaudit.errors import InputError

    if not is_database(db):
        raise InputError(str(db), "", "is not a citeaudit database")
    with Store(db) as store:
        audit = store.load_audit(store.choose_protocol(protocol))
    text = json.dumps(audit_to_document(audit), indent=2, ensure_ascii=False) + "\n"
    if out is None:
        console.out(text, end="", highlight=False)
        return
    # Write beside the target and rename, so a failed export never leaves a half-written file.
    handle, temporary = tempfile.mkstemp(dir=out.parent if str(out.parent) else ".", prefix=f".{out.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, out)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    console.print(f"wrote {out} ({len(audit.answers)} answers, {len(audit.edges)} edges)")


def formats() -> None:
    """List the readers `citeaudit ingest` knows."""
    table = Table("format", "description", header_style="bold")
    for name, reader in sorted(READERS.items()):
        table.add_row(name, reader.description)
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
