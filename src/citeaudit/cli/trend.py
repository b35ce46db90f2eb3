"""``trend``: the three numbers per collection, with comparability breaks marked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from citeaudit.cli.common import OutputFormat, console, handles_errors
from citeaudit.cli.score import ByOption, KindChoice, KindOption, WhereOption
from citeaudit.core.errors import ScopeError

__all__ = ["register"]


@handles_errors
def trend(
    path: Annotated[Path, typer.Argument(help="A citeaudit database with collections.")],
    by: ByOption = None,
    kind: KindOption = KindChoice.PLATFORM,
    where: WhereOption = None,
    fmt: Annotated[OutputFormat, typer.Option("--format", help="table or json.")] = OutputFormat.TABLE,
    level: Annotated[float, typer.Option("--level", help="Confidence level.", min=0.5, max=0.999)] = 0.95,
    resamples: Annotated[int, typer.Option("--resamples", help="Bootstrap resamples.", min=100)] = 9999,
    seed: Annotated[int, typer.Option("--seed", help="Random seed (same seed, same intervals).")] = 0,
) -> None:
    """The three numbers per collection (oldest first) with cluster-bootstrap intervals. Where the protocol
    fingerprint changes between two collections the trend is broken: the break is marked with the changed
    components, and the two sides are not to be read as one series."""
    from citeaudit.cli.score import _by, _scope
    from citeaudit.core.scoring import IntervalSettings
    from citeaudit.report.tables import scope_fraction
    from citeaudit.report.trend import trend_path

    if fmt is OutputFormat.CSV:
        raise ScopeError("trend prints table or json")
    groups = _by(by)
    if "collection" in groups:
        raise ScopeError("--by collection: a trend is already one row per collection")
    found = trend_path(
        path, by=groups, ci=IntervalSettings(level=level, resamples=resamples, seed=seed), scope=_scope(kind, where)
    )
    if fmt is OutputFormat.JSON:
        console.out(json.dumps(found.to_dict(), indent=2, ensure_ascii=False), highlight=False)
        return
    table = Table(
        "collection",
        "date",
        *groups,
        "answers",
        "official rate",
        "precision",
        "coverage",
        header_style="bold",
        show_lines=True,
        title=f"trend — {path}",
    )
    previous = None
    notes: list[str] = []
    cautions: set[str] = set()
    warnings: list[str] = []
    for point in found.points:
        name = Text(point.collection)
        if point.break_before:
            # Not joined to the collection before: the measurement changed between them.
            name.append("\n⚠ break", style="bold red")
            notes.append(
                f"⚠ break before {point.collection}: not comparable with {previous} "
                f"({', '.join(point.break_before)} changed); the two are not one series"
            )
        if point.revised_from:
            name.append(f"\nrevised from {point.revised_from}", style="yellow")
        warnings.extend(w for w in point.warnings if w not in warnings)
        previous = point.collection
        rows = [*point.result.groups, point.result.overall] if groups else [point.result.overall]
        for scope in rows:
            labels = (
                [str(v) if v is not None else "—" for _, v in scope.by]
                if scope.by
                else (["all"] + [""] * (len(groups) - 1) if groups else [])
            )
            table.add_row(
                name if scope is rows[0] else Text(point.collection),
                point.date,
                *labels,
                str(scope.answers),
                scope_fraction(scope, "official_rate"),
                scope_fraction(scope, "precision"),
                scope_fraction(scope, "coverage"),
            )
            cautions.update(
                shown.caution
                for shown in (scope.shown(n) for n in ("official_rate", "precision", "coverage"))
                if shown.caution
            )
    console.print(table)
    for note in notes:
        console.print(note, soft_wrap=True, style="bold red", markup=False)
    for warning in warnings:
        console.print(f"WARNING: {warning}", soft_wrap=True, style="bold yellow", markup=False)
    for caution in sorted(cautions):
        console.print(f"caution: {caution}", soft_wrap=True, markup=False)
    console.print(
        f"{len(found.points)} collection(s), {found.breaks} comparability break(s); intervals: "
        f"{level:.0%} cluster bootstrap over questions",
        soft_wrap=True,
    )


def register(app: typer.Typer) -> None:
    """Add this group's commands to ``app``."""
    app.command()(trend)
