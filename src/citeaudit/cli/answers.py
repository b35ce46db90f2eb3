"""``answers list`` and ``answers show``: find an answer and see where its review stands, without SQL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Column, Table
from rich.text import Text

from citeaudit.cli.common import DbOption, OutputFormat, console, existing_database, handles_errors, shown_text
from citeaudit.core.errors import InputError

__all__ = ["answers_app"]

answers_app = typer.Typer(help="The answers in a database: ids, platform, run, question, review state.")

Filter = list[str] | None


@answers_app.command("list")
@handles_errors
def list_answers(
    db: DbOption = Path("citeaudit.db"),
    run: Annotated[Filter, typer.Option("--run", help="Keep answers of this run (repeatable).")] = None,
    platform: Annotated[Filter, typer.Option("--platform", help="Keep answers of this platform (repeatable).")] = None,
    question: Annotated[Filter, typer.Option("--question", help="Keep answers to this question (repeatable).")] = None,
    collection: Annotated[
        Filter, typer.Option("--collection", help="Keep answers of this collection (repeatable).")
    ] = None,
    state: Annotated[
        Filter,
        typer.Option("--state", help="pending (edges await a final label), reviewed or no-edges (repeatable)."),
    ] = None,
    fmt: Annotated[OutputFormat, typer.Option("--format", help="table, json or csv.")] = OutputFormat.TABLE,
) -> None:
    """List answers with their platform, run, question, collection, the engine's response id, and how many
    current claims, edges and pending edges each has."""
    from citeaudit.store import Store
    from citeaudit.store.answers import AnswerFilters, answer_rows

    filters = AnswerFilters(
        runs=run or (),
        platforms=platform or (),
        questions=question or (),
        collections=collection or (),
        states=state or (),
    )
    with Store(existing_database(db)) as store:
        rows = answer_rows(store, filters)
    if fmt is OutputFormat.JSON:
        console.out(json.dumps([row.to_dict() for row in rows], indent=2, ensure_ascii=False), highlight=False)
        return
    if fmt is OutputFormat.CSV:
        import io

        from citeaudit.report.csv_cells import SafeDictWriter

        buffer = io.StringIO()
        writer = SafeDictWriter(buffer, fieldnames=list(rows[0].to_dict()) if rows else ["id"])
        writer.writeheader()
        writer.writerows(row.to_dict() for row in rows)
        console.out(buffer.getvalue(), end="", highlight=False)
        return
    # Ids are what the reader copies from here: the answer id is never shortened; columns no answer fills are left
    # out to give it room.
    with_collection = any(row.collection for row in rows)
    with_response = any(row.response_id for row in rows)
    table = Table(
        Column("answer", no_wrap=True), "platform", Column("run", overflow="fold"), "question", header_style="bold"
    )
    if with_collection:
        table.add_column("collection", overflow="fold")
    if with_response:
        table.add_column("response id", overflow="fold")
    for name in ("claims", "edges", "pending"):
        table.add_column(name, justify="right")
    for row in rows:
        cells = [Text(shown_text(value)) for value in (row.id, row.platform, row.run, row.question)]
        if with_collection:
            cells.append(Text(shown_text(row.collection or "—")))
        if with_response:
            cells.append(Text(shown_text(row.response_id or "—")))
        table.add_row(*cells, str(row.claims), str(row.edges), str(row.pending))
    console.print(table)
    pending = sum(row.pending for row in rows)
    console.print(f"{len(rows)} answer(s), {sum(row.edges for row in rows)} edge(s), {pending} pending", soft_wrap=True)


@answers_app.command("show")
@handles_errors
def show_answer(
    answer_id: Annotated[str, typer.Argument(help="Answer id (see `citeaudit answers list`).")],
    db: DbOption = Path("citeaudit.db"),
    fmt: Annotated[OutputFormat, typer.Option("--format", help="table or json.")] = OutputFormat.TABLE,
) -> None:
    """Show one answer: its text, its current claims and each claim's edges with their review state."""
    from citeaudit.store import Store
    from citeaudit.store.answers import answer_claims, answer_rows

    with Store(existing_database(db)) as store:
        rows = answer_rows(store, answer_id=answer_id)
        if not rows:
            raise InputError(str(db), "answers", f"no answer {answer_id!r}; `citeaudit answers list` lists them")
        claims = answer_claims(store, answer_id)
    (row,) = rows
    if fmt is OutputFormat.JSON:
        body = {
            **row.to_dict(),
            "text": row.text,
            "claims": [
                {
                    "id": c.id,
                    "text": c.text,
                    "start": c.start,
                    "end": c.end,
                    "fact": c.fact,
                    "edges": [{"source": url, "review_state": st, "label": label} for url, st, label in c.edges],
                }
                for c in claims
            ],
        }
        console.out(json.dumps(body, indent=2, ensure_ascii=False), highlight=False)
        return
    console.print(
        shown_text(
            f"answer {row.id} · platform {row.platform} · run {row.run} · question {row.question}"
            f" · collection {row.collection or '—'} · response id {row.response_id or '—'}"
        ),
        soft_wrap=True,
        markup=False,
    )
    console.print(f"{row.claims} claim(s), {row.edges} edge(s), {row.pending} pending ({row.state})", soft_wrap=True)
    console.print(Text(shown_text(row.text)), soft_wrap=True)
    table = Table("claim", "span", "fact", "text", "source", "state", "label", header_style="bold", show_lines=True)
    for claim in claims:
        span = "—" if claim.start is None else f"{claim.start}–{claim.end}"
        for k, (url, state_, label) in enumerate(claim.edges or (("—", "", None),)):
            first = k == 0
            table.add_row(
                Text(shown_text(claim.id) if first else ""),
                span if first else "",
                Text(shown_text(claim.fact or "—") if first else ""),
                Text(shown_text(claim.text) if first else ""),
                Text(shown_text(url)),
                state_,
                label or "—",
            )
    console.print(table)


def register(app: typer.Typer) -> None:
    """Add this group's commands to ``app``."""
    app.add_typer(answers_app, name="answers")
