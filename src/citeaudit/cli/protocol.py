"""``protocol fingerprint``, ``check``, ``revise`` and ``history``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from citeaudit.cli.common import DbOption, OutputFormat, console, err_console, existing_database, handles_errors

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
    from citeaudit.core.protocol import fingerprint, fingerprint_components
    from citeaudit.interchange import load_protocol

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
    from citeaudit.interchange import load_protocol

    protocol = load_protocol(path)
    facts = sum(len(q.required_facts) for q in protocol.questions)
    declared = ""
    if protocol.brand is not None:
        declared += f", brand {protocol.brand.name!r} ({len(protocol.brand.names)} name(s))"
    if protocol.competitors:
        declared += f", {len(protocol.competitors)} competitor(s)"
    console.print(
        f"{path}: protocol {protocol.id}@{protocol.version}, {len(protocol.questions)} questions, {facts} required "
        f"facts, {len(protocol.official_domains)} official entries{declared}, scoring {protocol.scoring}"
    )


@app.command("revise")
@handles_errors
def revise_command(
    path: Annotated[Path, typer.Argument(help="The revised protocol file (YAML): same id, new version.")],
    by: Annotated[str, typer.Option("--by", help="Who makes the change (recorded).")],
    db: DbOption = Path("citeaudit.db"),
    source: Annotated[
        str | None, typer.Option("--from", help="Protocol to revise (default: the one with runs and this id).")
    ] = None,
    reason: Annotated[str | None, typer.Option("--reason", help="Why (recorded).")] = None,
) -> None:
    """Move every run of a protocol to a revised version (e.g. a changed required-fact list), recorded.

    Runs whose facts were locked (answers already ingested) keep a visible warning in score, compare and
    report: their results were not measured against a list fixed in advance.
    """
    from citeaudit.interchange import load_protocol
    from citeaudit.store import Store
    from citeaudit.store.revisions import protocol_to_revise, revise_protocol

    new = load_protocol(path)
    with Store(existing_database(db)) as store:
        revision = revise_protocol(store, protocol_to_revise(store, new.id, source), new, by=by, reason=reason)
    console.print(
        f"revised {revision.from_protocol} -> {revision.to_protocol}: {len(revision.runs)} run(s) moved "
        f"({revision.locked_runs} already locked), facts +{len(revision.added)} -{len(revision.removed)} "
        f"~{len(revision.changed)}, {revision.claims_unmapped} claim(s) lost their fact mapping; "
        f"components changed: {', '.join(revision.components)}",
        soft_wrap=True,
    )
    if revision.locked_runs:
        err_console.print(
            f"WARNING: {revision.locked_runs} run(s) had answers before this change; their scores now carry a "
            "warning that the required facts were changed after answers were ingested",
            soft_wrap=True,
        )


@app.command("history")
@handles_errors
def history_command(
    db: DbOption = Path("citeaudit.db"),
    fmt: Annotated[OutputFormat, typer.Option("--format", help="table or json.")] = OutputFormat.TABLE,
) -> None:
    """List when each run's required facts were locked and every revision since (who, when, what)."""
    from citeaudit.store import Store
    from citeaudit.store.revisions import history

    with Store(existing_database(db)) as store:
        events = history(store)
    if fmt is OutputFormat.JSON:
        console.out(json.dumps(events, indent=2, ensure_ascii=False), highlight=False)
        return
    table = Table("at", "event", "run", "protocol", "by", "detail", header_style="bold")
    for event in events:
        detail = ""
        if event["event"] == "revised":
            changes = event["changes"]
            assert isinstance(changes, dict)
            detail = (
                f"+{len(changes['facts_added'])} -{len(changes['facts_removed'])} ~{len(changes['facts_changed'])}"
                + (f"; {event['reason']}" if event.get("reason") else "")
            )
        else:
            detail = str(event["facts"])[:19] + "…"
        table.add_row(
            str(event["at"]),
            str(event["event"]),
            str(event["run"]),
            str(event["protocol"]),
            str(event.get("by") or ""),
            detail,
        )
    console.print(table)
