"""``collect``: ask a protocol's questions of the engines and keep every complete answer."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from citeaudit.cli.common import DbOption, console, err_console, handles_errors
from citeaudit.core.errors import InvalidValue
from citeaudit.core.limits import MAX_REPEATS

if TYPE_CHECKING:
    from citeaudit.collect import CollectReport, CollectSettings
    from citeaudit.collect.plan import CollectionPlan

__all__ = ["register"]

OUTCOMES = (
    "answered",
    "no_retrieval",
    "retrieval_failed",
    "refused",
    "engine_failed",
    "incomplete",
    "malformed",
    "duplicate_payload",
)


def _base_urls(values: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for i, value in enumerate(values):
        engine, sep, url = value.partition("=")
        if not sep or not engine or not url.startswith(("http://", "https://")):
            raise InvalidValue("--base-url", f"value {i + 1}", f"expected ENGINE=http(s)://… (got {value!r})")
        found[engine] = url
    return found


@handles_errors
def collect_command(
    protocol: Annotated[Path, typer.Option("--protocol", help="Protocol file (YAML) with engines, locales, repeats.")],
    db: DbOption = Path("citeaudit.db"),
    engine: Annotated[
        list[str] | None, typer.Option("--engine", help="Engine id to ask (repeatable; default: all).")
    ] = None,
    repeats: Annotated[
        int | None, typer.Option("--repeats", min=1, max=MAX_REPEATS, help="Override the protocol's repeats.")
    ] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", min=1, help="Requests in flight at once.")] = 4,
    collection: Annotated[
        str, typer.Option("--collection", help="Collection name; a rerun with the same name resumes it.")
    ] = "default",
    base_url: Annotated[
        list[str] | None,
        typer.Option("--base-url", help="ENGINE=URL: another base URL for an engine (gateways; repeatable)."),
    ] = None,
    max_attempts: Annotated[int, typer.Option("--max-attempts", min=1, help="Attempts per request.")] = 5,
    max_wait: Annotated[
        float, typer.Option("--max-wait", min=0, help="Longest wait (s) before a retry, Retry-After included.")
    ] = 120.0,
    timeout: Annotated[float, typer.Option("--timeout", min=1, help="Seconds per request.")] = 180.0,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="List the tasks and exit; nothing is sent.")] = False,
    resolve_redirects: Annotated[
        bool,
        typer.Option(
            "--resolve-redirects/--no-resolve-redirects",
            help="Resolve Gemini's expiring grounding links as answers arrive (needs citeaudit[resolve]).",
        ),
    ] = True,
) -> None:
    """Ask each question of each engine (per locale and repeat) once, archiving every raw response.

    API keys come from OPENAI_API_KEY, PERPLEXITY_API_KEY, GEMINI_API_KEY, ANTHROPIC_API_KEY and
    SERPAPI_API_KEY. A rerun with the same --collection resumes: finished tasks are skipped, archived
    responses are imported without asking again. Exit code 1 when tasks are left in error (rerun to retry).
    """
    from citeaudit.collect import CollectSettings, collect, load_plan
    from citeaudit.collect.plan import check_task_count

    plan = load_plan(protocol)
    if repeats is not None:
        check_task_count(len(plan.protocol.questions), len(plan.engines), len(plan.locales), repeats, "--repeats")
    if "/" in collection or not collection.strip():
        raise InvalidValue("--collection", "", f"not a collection name: {collection!r} (no '/')")
    settings = CollectSettings(
        collection=collection,
        engines=tuple(engine) if engine else None,
        repeats=repeats,
        concurrency=concurrency,
        base_urls=_base_urls(base_url or []),
        max_attempts=max_attempts,
        max_wait=max_wait,
        timeout=timeout,
        resolve_redirects=resolve_redirects,
    )
    if dry_run:
        _print_plan(plan, settings)
        return
    with Progress(
        TextColumn("collecting"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
    ) as bar:

        def progress(total: int) -> Callable[[], None]:
            task = bar.add_task("collect", total=total)
            return lambda: bar.advance(task)

        report = collect(db, plan, settings, progress=progress)
    _print_report(report)
    if not report.complete:
        raise typer.Exit(1)


def _print_plan(plan: CollectionPlan, settings: CollectSettings) -> None:
    tasks = list(plan.tasks(settings.engines, settings.repeats))
    table = Table(title=f"collection {settings.collection!r}: {len(tasks)} tasks (nothing sent)")
    for column in ("run", "question"):
        table.add_column(column)
    for task in tasks:
        table.add_row(task.run_id(settings.collection), task.question_id)
    console.print(table)


def _print_report(report: CollectReport) -> None:
    console.print(
        f"collection {report.collection!r}: {report.planned} tasks planned, {report.already_done} already done, "
        f"{report.asked} asked now, {report.imported_from_archive} imported from the archive"
    )
    engines = sorted({e for e, _ in report.outcomes} | {e for e, _ in report.errors} | set(report.not_attempted))
    if engines:
        table = Table(title="finished in this call, by engine")
        table.add_column("engine")
        for outcome in OUTCOMES:
            table.add_column(outcome.replace("_", " "), justify="right")
        table.add_column("errors", justify="right")
        table.add_column("not attempted", justify="right")
        for engine in engines:
            errors = sum(n for (e, _), n in report.errors.items() if e == engine)
            table.add_row(
                engine,
                *(str(report.outcomes[(engine, outcome)]) for outcome in OUTCOMES),
                str(errors),
                str(report.not_attempted[engine]),
            )
        console.print(table)
    for (engine, reason), n in sorted(report.errors.items()):
        err_console.print(f"{engine}: {n} task(s) left in error: {reason} (rerun the same command to retry)")
    for engine, n in sorted(report.not_attempted.items()):
        err_console.print(f"{engine}: {n} task(s) not attempted: the engine refused the API key")
    if report.redirects_resolved or report.redirects_failed:
        failed = ", ".join(f"{reason} {n}" for reason, n in sorted(report.redirects_failed.items()))
        console.print(
            f"grounding redirect links resolved now: {report.redirects_resolved}"
            + (f"; not resolved: {failed} (kept pending or failed, never dropped)" if failed else "")
        )
    if report.cost_usd:
        console.print(f"reported cost: {report.cost_usd:.4f} USD")


def register(app: typer.Typer) -> None:
    """Add ``collect`` to the application."""
    app.command("collect")(collect_command)
