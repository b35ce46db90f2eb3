"""``protocol fingerprint`` and ``protocol show``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from citeaudit.cli.common import OutputFormat, console, handles_errors
from citeaudit.interchange import load_protocol
from citeaudit.protocol import fingerprint, fingerprint_components

__all__ = ["app"]

app = typer.Typer(
    help="Protocol files: the fixed question set and everything that changes a score.", no_args_is_help=True
)


@app.command("fingerprint")
@handles_errors
def fingerprint_command(
    path: Annotated[Path, typer.Argument(help="Protocol file (YAML).")],
    fmt: Annotated[OutputFormat, typer.Option("--format", help="table: the fingerprint and its components.")] = (
        OutputFormat.TABLE
    ),
) -> None:
    """Print the protocol's fingerprint (and each component's hash)."""
    protocol = load_protocol(path)
    components = fingerprint_components(protocol)
    if fmt is OutputFormat.JSON:
        body = {
            "id": protocol.id,
            "version": protocol.version,
            "fingerprint": fingerprint(protocol),
            "components": components,
        }
        console.out(json.dumps(body, indent=2), highlight=False)
        return
    console.out(fingerprint(protocol), highlight=False)
    if fmt is OutputFormat.TABLE:
        table = Table("component", "sha256", header_style="bold")
        for name, digest in components.items():
            table.add_row(name, digest)
        console.print(table)


@app.command("check")
@handles_errors
def check_command(path: Annotated[Path, typer.Argument(help="Protocol file (YAML).")]) -> None:
    """Validate a protocol file and summarise it."""
    protocol = load_protocol(path)
    facts = sum(len(q.required_facts) for q in protocol.questions)
    console.print(
        f"{path}: protocol {protocol.id}@{protocol.version}, {len(protocol.questions)} questions, {facts} required "
        f"facts, {len(protocol.official_domains)} official entries, scoring {protocol.scoring}"
    )
