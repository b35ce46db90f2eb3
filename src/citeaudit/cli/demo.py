"""``demo``: build a demo database from the bundled examples and show its figures."""

from __future__ import annotations

import shutil
import sys
from importlib import resources
from pathlib import Path
from typing import Annotated

import typer
from rich.rule import Rule

from citeaudit.cli.common import console, handles_errors
from citeaudit.core.errors import StoreError
from citeaudit.core.model import RunKind

__all__ = ["EXAMPLES", "next_commands", "register"]

EXAMPLES = ("four-claim.audit.json", "exporter.audit.json")
"""Bundled example audits, in the order the demo imports them."""


@handles_errors
def demo(
    db: Annotated[Path, typer.Option("--db", help="Demo database to (re)build.")] = Path("citeaudit-demo.db"),
) -> None:
    """Build a demo database from the bundled examples and print their scores."""
    from citeaudit.core.scope import Scope
    from citeaudit.ingest import ingest_file
    from citeaudit.report import score_tables
    from citeaudit.scoring.paths import is_database, score_path
    from citeaudit.store import Store

    if db.exists():
        if not is_database(db):
            raise StoreError(f"{str(db)!r} exists and is not a database; refusing to replace it")
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
    examples = resources.files("citeaudit").joinpath("examples")
    with Store(db) as store:
        for name in EXAMPLES:
            with resources.as_file(examples.joinpath(name)) as path:
                report = ingest_file(store, path)
            console.print(
                f"imported {name}: {report.answers} answers, {report.claims} claims, {report.edges} edges "
                f"from {report.locations} citation locations, {report.judgements} judgements"
            )
    console.print(Rule("The four-claim fixture (run kind: fixture)"))
    fixture = score_path(db, scope=Scope(run_kinds=frozenset({RunKind.FIXTURE})))
    console.print(
        score_tables(
            fixture.result,
            "four-claim fixture: c1 cited twice (supported), c2 conflicting, c3 unknown, c4 without an edge",
            unresolved_links=fixture.unresolved_links,
        )
    )
    console.print(Rule("Axtorp AX-series audit (synthetic) by platform"))
    platforms = score_path(db, by=("platform",))
    notes = ["fixture runs are kept apart: platform figures never include them (score them with --kind fixture)"]
    console.print(
        score_tables(
            platforms.result,
            f"{platforms.protocol.id}@{platforms.protocol.version}",
            notes,
            unresolved_links=platforms.unresolved_links,
        )
    )
    program = _program()
    console.print(f"\nDemo database: {db}\nNext, each command as it can be typed here:")
    for line in next_commands(program, db):
        console.out(f"  {line}", highlight=False)


def _program() -> str:
    """How to call citeaudit again from here: ``citeaudit`` when that name finds this very program, otherwise the
    path it was started by (``.venv/bin/citeaudit`` after ``make demo``)."""
    started = Path(sys.argv[0])
    if started.name != "citeaudit":
        return "citeaudit"
    found = shutil.which("citeaudit")
    if found is not None and Path(found).resolve() == started.resolve():
        return "citeaudit"
    return str(started)


def next_commands(program: str, db: Path) -> list[str]:
    """The commands that review and report on the demo database, in order, each runnable as printed."""
    return [
        f"{program} score {db} --by platform,question",
        f"{program} reviewer add ann --role adjudicator --db {db}    # asks for a password (8+ characters)",
        f"{program} review serve --db {db}    # then open http://127.0.0.1:8000 and log in as ann",
        f"{program} report {db} --out demo-report.html",
    ]


def register(app: typer.Typer) -> None:
    """Add this group's commands to ``app``."""
    app.command()(demo)
