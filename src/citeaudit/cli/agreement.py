"""``agreement``: how far two raters agree on the same edges."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from citeaudit.cli.common import OutputFormat, console, err_console, handles_errors
from citeaudit.core.errors import InvalidValue
from citeaudit.core.model import Label

if TYPE_CHECKING:
    from citeaudit.core.raters import Rater

__all__ = ["register"]


def _categories(path: Path, text: str) -> tuple[Label, ...] | None:
    """``used`` → ``None`` (decided from the labels), ``all`` → the five labels, else the labels listed."""
    from citeaudit.core.agreement import LABELS

    if text == "used":
        return None
    if text == "all":
        return LABELS
    labels = []
    for part in (p.strip() for p in text.split(",")):
        if part not in {str(label) for label in LABELS}:
            allowed = ", ".join(str(label) for label in LABELS)
            raise InvalidValue(str(path), "--ac1-categories", f"{part!r} is not a label; use used, all or of {allowed}")
        labels.append(Label(part))
    return tuple(labels)


@handles_errors
def agreement(
    path: Annotated[Path, typer.Argument(help="A citeaudit database or an audit file (edges[].judgements[]).")],
    between: Annotated[
        tuple[str, str],
        typer.Option(
            "--between",
            help="Raters A and B: a reviewer NAME (or human:NAME), a model judge as model:NAME, or final (each "
            "edge's final label). A is the gold for supported-vs-rest.",
            metavar="A B",
        ),
    ],
    fmt: Annotated[OutputFormat, typer.Option("--format", help="Output format (table or json).")] = OutputFormat.TABLE,
    level: Annotated[float, typer.Option("--level", help="Confidence level.", min=0.5, max=0.999)] = 0.95,
    resamples: Annotated[
        int, typer.Option("--resamples", help="Bootstrap resamples over answers (0 = no intervals).", min=0)
    ] = 9999,
    seed: Annotated[int, typer.Option("--seed", help="Random seed (same seed, same intervals).")] = 0,
    protocol: Annotated[
        str | None, typer.Option("--protocol", help="Only this protocol's edges (databases; default: all).")
    ] = None,
    ac1_categories: Annotated[
        str,
        typer.Option(
            "--ac1-categories",
            help="Categories Gwet's AC1 counts: 'used' (labels either rater used), 'all' (the five labels) or a "
            "comma-separated list of labels the study declares.",
        ),
    ] = "used",
) -> None:
    """Agreement of two raters on the same edges (each rater's latest review judgement per edge): observed
    agreement, Cohen's kappa, Krippendorff's alpha and Gwet's AC1 with cluster-bootstrap intervals over answers,
    the confusion matrix, per-class agreement, prevalence, a kappa-paradox warning, and supported-vs-rest
    precision, recall, F1 and accuracy taking A as gold."""
    from citeaudit.core.raters import Rater
    from citeaudit.report.agreement import agreement_tables
    from citeaudit.scoring.paths import agreement_path

    if fmt is OutputFormat.CSV:
        raise InvalidValue(str(path), "--format", "agreement prints table or json, not 'csv'")
    if 0 < resamples < 100:
        raise InvalidValue(str(path), "--resamples", f"use 0 (no intervals) or at least 100 (got {resamples})")
    categories = _categories(path, ac1_categories)
    raters = []
    for position, text in zip("AB", between, strict=True):
        try:
            raters.append(Rater.parse(text))
        except ValueError as exc:
            raise InvalidValue(str(path), f"--between {position}", str(exc)) from None
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=err_console, transient=True) as bar:
        task = bar.add_task("pairing judgements", total=None)

        def advance(done: int) -> None:
            bar.update(task, description="bootstrap over answers", total=resamples, advance=done)

        try:
            result = agreement_path(
                path,
                raters[0],
                raters[1],
                protocol=protocol,
                level=level,
                resamples=resamples,
                seed=seed,
                progress=advance,
                ac1_categories=categories,
            )
        except ValueError as exc:  # declared AC1 categories that leave out a label in use
            raise InvalidValue(str(path), "--ac1-categories", str(exc)) from None
    if fmt is OutputFormat.JSON:
        console.out(json.dumps(result.to_dict(), indent=2), highlight=False)
    else:
        console.print(agreement_tables(result, str(path)))
    _say_retired(path, raters, protocol)


def _say_retired(path: Path, raters: list[Rater], protocol: str | None) -> None:
    """Say how many edges of retired claims (replaced by a later segmentation) the comparison left out."""
    from citeaudit.scoring.paths import is_database

    if not is_database(path):
        return
    from citeaudit.store import Store

    with Store(path) as store:
        protocol_pk = None if protocol is None else store.choose_protocol(protocol)
        retired = store.ratings.retired_rated(raters, protocol_pk)
    if retired:
        err_console.print(f"{retired} edge(s) of retired claims left out (only current claims are compared)")


def register(app: typer.Typer) -> None:
    """Add this group's commands to ``app``."""
    app.command()(agreement)
