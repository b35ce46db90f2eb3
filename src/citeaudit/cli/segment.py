"""``segment`` and ``claim split|merge|edit|list``: answers into claims, as versioned and reviewable claim sets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table
from rich.text import Text

from citeaudit.cli.common import DbOption, OutputFormat, console, err_console, handles_errors
from citeaudit.errors import InputError
from citeaudit.segment.claimsets import SetPlan
from citeaudit.segment.resegment import SegmentReport, edit_claim, merge_claims, resegment, split_claim
from citeaudit.segment.rules import METHOD, Rules
from citeaudit.store import Store

__all__ = ["claim_app", "register"]

claim_app = typer.Typer(
    help="Look at and change an answer's claims by hand; every change is a new claim set, recorded with who "
    "and when. Unchanged claims keep their judgements; changed ones start pending.",
    no_args_is_help=True,
)

ReviewerOption = Annotated[
    str,
    typer.Option("--reviewer", envvar="CITEAUDIT_REVIEWER", help="Who makes the change (env CITEAUDIT_REVIEWER)."),
]


def _open(db: Path) -> Store:
    if not db.exists():
        raise InputError(str(db), "", "no such database; import answers first with `citeaudit ingest`")
    return Store(db)


def _print_report(report: SegmentReport, fmt: OutputFormat) -> None:
    body = report.as_dict()
    if fmt is OutputFormat.JSON:
        console.out(json.dumps(body, indent=2), highlight=False)
        return
    if fmt is OutputFormat.CSV:
        console.out("name,value", highlight=False)
        for name, value in body.items():
            if isinstance(value, dict):
                for reason, count in value.items():
                    console.out(f"skipped_{reason},{count}", highlight=False)
            else:
                console.out(f"{name},{value}", highlight=False)
        return
    console.print(
        f"{report.answers} answers: {report.sets} new claim sets, {report.already} already segmented this way",
        soft_wrap=True,
    )
    console.print(
        f"claims: {report.kept} kept (text and span unchanged, {report.judgements_kept} judgements kept), "
        f"{report.new} new with {report.edges_pending} pending edges, {report.retired} retired "
        f"({report.judgements_not_transferred} judgements stay with them, not transferred)",
        soft_wrap=True,
    )
    skipped = ", ".join(f"{n} {reason}" for reason, n in sorted(report.skipped.items())) or "none"
    console.print(f"skipped non-assertions: {skipped}", soft_wrap=True)
    if report.unattached:
        console.print(f"citation locations on no claim (e.g. in a skipped question): {report.unattached}")


@handles_errors
def segment(
    db: DbOption = Path("citeaudit.db"),
    method: Annotated[str, typer.Option("--method", help="Segmentation method.")] = METHOD,
    run: Annotated[str | None, typer.Option("--run", help="Only this run's answers.")] = None,
    split_coordination: Annotated[
        bool,
        typer.Option(
            "--split-coordination/--no-split-coordination",
            help="Split coordinated predicates sharing a subject into separate claims.",
        ),
    ] = True,
    skip_non_assertions: Annotated[
        bool,
        typer.Option(
            "--skip-non-assertions/--keep-non-assertions",
            help="Skip questions, greetings, disclaimers and headings (counted).",
        ),
    ] = True,
    reviewer: Annotated[
        str | None, typer.Option("--reviewer", envvar="CITEAUDIT_REVIEWER", help="Recorded as who segmented.")
    ] = None,
    fmt: Annotated[OutputFormat, typer.Option("--format", help="Output format of the summary.")] = OutputFormat.TABLE,
) -> None:
    """Split every answer into claims with exact spans, as a new claim set per answer.

    Engine-given spans are kept; the rules split only within them. Method, version and parameters enter the
    protocol fingerprint. A claim whose text and span are unchanged keeps its edges and judgements; the others
    go back to pending. Resumable: answers already segmented this way are left as they are.
    """
    rules = Rules(split_coordination=split_coordination, skip_non_assertions=skip_non_assertions)
    with _open(db) as store:
        total = len(store.answers_for_claims(run))
        with Progress(
            TextColumn("segmenting"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=err_console,
            transient=True,
        ) as progress:
            task = progress.add_task("segment", total=total)
            report = resegment(store, method, rules, run, reviewer, lambda n: progress.advance(task, n))
    _print_report(report, fmt)


def _print_plan(plan: SetPlan) -> None:
    report = SegmentReport(answers=1)
    report.add(plan)
    _print_report(report, OutputFormat.TABLE)


@claim_app.command("split")
@handles_errors
def split_command(
    claim_id: Annotated[str, typer.Argument(help="Claim to split.")],
    at: Annotated[int, typer.Option("--at", help="Answer offset (characters) where the second claim starts.")],
    reviewer: ReviewerOption,
    db: DbOption = Path("citeaudit.db"),
) -> None:
    """Split a claim in two at an answer offset; each citation marker goes to the part it stands in."""
    with _open(db) as store:
        _print_plan(split_claim(store, claim_id, at, reviewer))


@claim_app.command("merge")
@handles_errors
def merge_command(
    claim_ids: Annotated[list[str], typer.Argument(help="Claims of one answer to merge (two or more).")],
    reviewer: ReviewerOption,
    db: DbOption = Path("citeaudit.db"),
) -> None:
    """Merge claims of one answer into one claim spanning them; it gets every citation location, pending."""
    with _open(db) as store:
        _print_plan(merge_claims(store, claim_ids, reviewer))


@claim_app.command("edit")
@handles_errors
def edit_command(
    claim_id: Annotated[str, typer.Argument(help="Claim to change.")],
    reviewer: ReviewerOption,
    text: Annotated[str | None, typer.Option("--text", help="New claim text.")] = None,
    start: Annotated[int | None, typer.Option("--start", help="New span start (answer offset).")] = None,
    end: Annotated[int | None, typer.Option("--end", help="New span end (exclusive).")] = None,
    db: DbOption = Path("citeaudit.db"),
) -> None:
    """Change a claim's text and/or span: the changed claim is a new claim whose edges start pending."""
    with _open(db) as store:
        _print_plan(edit_claim(store, claim_id, reviewer, text, start, end))


@claim_app.command("list")
@handles_errors
def list_command(
    answer_id: Annotated[str, typer.Argument(help="Answer whose current claims to list.")],
    db: DbOption = Path("citeaudit.db"),
    fmt: Annotated[OutputFormat, typer.Option("--format", help="Output format.")] = OutputFormat.TABLE,
) -> None:
    """List an answer's current claims with their spans and edge counts."""
    with _open(db) as store:
        state = store.answer_claims(store.answer_pk(answer_id))
    edges = {c.pk: sum(1 for e in state.edges if e.claim_pk == c.pk) for c in state.claims}  # current only
    rows = [{"id": c.id, "start": c.start, "end": c.end, "edges": edges[c.pk], "text": c.text} for c in state.claims]
    if fmt is OutputFormat.JSON:
        console.out(json.dumps(rows, indent=2, ensure_ascii=False), highlight=False)
        return
    table = Table("claim", "span", "edges", "text", header_style="bold")
    for row in rows:
        table.add_row(str(row["id"]), f"{row['start']}–{row['end']}", str(row["edges"]), Text(str(row["text"])))
    console.print(table)


def register(app: typer.Typer) -> None:
    """Add this group's commands to ``app``."""
    app.command()(segment)
    app.add_typer(claim_app, name="claim")
