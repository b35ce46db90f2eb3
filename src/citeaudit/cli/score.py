"""``score`` and ``compare``."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from citeaudit.cli.common import OutputFormat, console, err_console, handles_errors, out_text
from citeaudit.core.errors import ScopeError
from citeaudit.core.model import RunKind
from citeaudit.core.scope import FILTER_DIMENSIONS as DIMENSIONS

if TYPE_CHECKING:
    from citeaudit.core.scope import Scope
    from citeaudit.scoring.paths import ScoredPath

__all__ = ["register"]


class KindChoice(StrEnum):
    """Which run kinds a score covers."""

    PLATFORM = "platform"
    FIXTURE = "fixture"
    ALL = "all"


ByOption = Annotated[
    str | None, typer.Option("--by", help=f"Group by a comma-separated list of: {', '.join(DIMENSIONS)}.")
]
KindOption = Annotated[
    KindChoice, typer.Option("--kind", help="Run kinds in scope; fixture runs are left out unless asked for.")
]
WhereOption = Annotated[
    list[str] | None,
    typer.Option("--where", help="Keep answers with DIMENSION=VALUE (repeatable; same dimension = any of)."),
]
ProtocolOption = Annotated[
    str | None, typer.Option("--protocol", help="Protocol id, id@version or fingerprint prefix (databases).")
]


def _scope(kind: KindChoice, where: list[str] | None) -> Scope:
    from citeaudit.core.scope import Scope, parse_where

    kinds = frozenset(RunKind) if kind is KindChoice.ALL else frozenset({RunKind(kind.value)})
    return Scope(run_kinds=kinds, where=parse_where(where or []))


def _by(by: str | None) -> tuple[str, ...]:
    if not by:
        return ()
    names = tuple(part.strip() for part in by.split(",") if part.strip())
    unknown = [n for n in names if n not in DIMENSIONS]
    if unknown:
        raise ScopeError(f"--by {unknown[0]!r} is not a dimension; choose from {', '.join(DIMENSIONS)}")
    return names


def _notes(scored: ScoredPath, kind: KindChoice) -> list[str]:
    notes = [f"WARNING: {warning}" for warning in scored.warnings]
    if scored.excluded_by_kind and kind is not KindChoice.ALL:
        notes.append(f"excluded: {scored.excluded_by_kind} answer(s) of other run kinds (use --kind all to include)")
    if scored.failed_answers:
        notes.append(
            f"not scored: {scored.failed_answers} answer(s) the engines did not give (failed or incomplete), "
            "recorded at import"
        )
    return notes


class EngineChoice(StrEnum):
    """Which engine computes the scores."""

    NUMPY = "numpy"
    DUCKDB = "duckdb"
    SPARK = "spark"


@handles_errors
def score(
    path: Annotated[
        str,
        typer.Argument(
            help="An audit file (citeaudit.audit/v1) or a citeaudit database; with --engine duckdb|spark, a "
            "Parquet folder written by `export --format parquet` (or any path the engine reads)."
        ),
    ],
    by: ByOption = None,
    fmt: Annotated[OutputFormat, typer.Option("--format", help="Output format.")] = OutputFormat.TABLE,
    macro: Annotated[
        bool, typer.Option("--macro", help="Also report the mean of per-answer values (labelled macro).")
    ] = False,
    kind: Annotated[
        KindChoice | None,
        typer.Option(
            "--kind",
            help="Run kinds in scope; fixture runs are left out unless asked for, or unless they are all there is.",
            show_default="platform",
        ),
    ] = None,
    where: WhereOption = None,
    protocol: ProtocolOption = None,
    ci: Annotated[
        bool, typer.Option("--ci", help="Add confidence intervals (cluster bootstrap over questions).")
    ] = False,
    level: Annotated[float, typer.Option("--level", help="Confidence level for --ci.", min=0.5, max=0.999)] = 0.95,
    resamples: Annotated[int, typer.Option("--resamples", help="Bootstrap resamples for --ci.", min=100)] = 9999,
    seed: Annotated[int, typer.Option("--seed", help="Random seed for --ci (same seed, same interval).")] = 0,
    engine: Annotated[
        EngineChoice,
        typer.Option(
            "--engine",
            help="numpy: in memory (the default); duckdb: embedded SQL, out of core, over Parquet or a database; "
            "spark: Spark SQL over Parquet (needs Java).",
        ),
    ] = EngineChoice.NUMPY,
) -> None:
    """Score precision, coverage and official-domain rate under strict-v1 (micro: pooled counts)."""
    from citeaudit.core.protocol import disclosure
    from citeaudit.core.scoring import IntervalSettings
    from citeaudit.report import result_csv, score_tables
    from citeaudit.scoring.paths import score_path

    settings = IntervalSettings(level=level, resamples=resamples, seed=seed) if ci else None
    # The figures beside the scores are printed in JSON only (by the numpy engine); tables and CSV keep their columns.
    figures = fmt is OutputFormat.JSON
    chosen = kind or KindChoice.PLATFORM
    scored = score_path(
        path,
        scope=_scope(chosen, where),
        by=_by(by),
        macro=macro,
        protocol=protocol,
        ci=settings,
        figures=figures,
        engine=str(engine),
    )
    fixture_only = kind is None and scored.result.overall.answers == 0 and scored.excluded_by_kind > 0
    if fixture_only:
        # Nothing but fixture runs in scope: scoring them is what was meant, said out loud rather than n/a.
        chosen = KindChoice.FIXTURE
        scored = score_path(
            path,
            scope=_scope(chosen, where),
            by=_by(by),
            macro=macro,
            protocol=protocol,
            ci=settings,
            figures=figures,
            engine=str(engine),
        )
        err_console.print(
            f"note: {path} holds only fixture runs (reference cases, not engine answers): scored as a fixture "
            "(--kind fixture)",
            soft_wrap=True,
        )
    if fmt is OutputFormat.JSON:
        text = scored.to_json()
        if fixture_only:
            body = json.loads(text)
            body["run_kinds"] = [str(RunKind.FIXTURE)]
            text = json.dumps(body, indent=2, ensure_ascii=False)
        out_text(text)
    elif fmt is OutputFormat.CSV:
        console.out(result_csv(scored.result, scored.unresolved_links), end="", highlight=False)
        for warning in scored.warnings:
            err_console.print(f"WARNING: {warning}", soft_wrap=True)
    else:
        title = f"{scored.protocol.id}@{scored.protocol.version} — {path}"
        if fixture_only:
            title += " (fixture runs)"
        console.print(
            score_tables(
                scored.result,
                title,
                _notes(scored, chosen),
                disclosure(scored.protocol),
                unresolved_links=scored.unresolved_links,
            )
        )


@handles_errors
def compare(
    a: Annotated[Path, typer.Argument(help="Audit file or database A.")],
    b: Annotated[Path, typer.Argument(help="Audit file or database B.")],
    by: ByOption = None,
    kind: KindOption = KindChoice.PLATFORM,
    where_a: Annotated[list[str] | None, typer.Option("--where-a", help="Filter for A (DIMENSION=VALUE).")] = None,
    where_b: Annotated[list[str] | None, typer.Option("--where-b", help="Filter for B (DIMENSION=VALUE).")] = None,
    protocol_a: Annotated[str | None, typer.Option("--protocol-a", help="Protocol of A (databases).")] = None,
    protocol_b: Annotated[str | None, typer.Option("--protocol-b", help="Protocol of B (databases).")] = None,
    fmt: Annotated[OutputFormat, typer.Option("--format", help="Output format (table or json).")] = OutputFormat.TABLE,
    level: Annotated[float, typer.Option("--level", help="Confidence level.", min=0.5, max=0.999)] = 0.95,
    resamples: Annotated[
        int, typer.Option("--resamples", help="Bootstrap resamples and permutations.", min=100)
    ] = 9999,
    seed: Annotated[int, typer.Option("--seed", help="Random seed (same seed, same figures).")] = 0,
) -> None:
    """Compare two scopes paired per question: B − A with a cluster-bootstrap interval, a permutation p-value
    (Holm-adjusted across groups) and the minimum detectable effect. Refused unless both were measured the same
    way on the same questions. Differences are associations, never effects."""
    from citeaudit.report import comparison_table
    from citeaudit.scoring.comparison import compare_paths

    if fmt is OutputFormat.CSV:
        raise ScopeError("compare prints table or json")
    comparison = compare_paths(
        a,
        b,
        scope_a=_scope(kind, where_a),
        scope_b=_scope(kind, where_b),
        by=_by(by),
        protocol_a=protocol_a,
        protocol_b=protocol_b,
        level=level,
        resamples=resamples,
        seed=seed,
    )
    if fmt is OutputFormat.JSON:
        console.out(json.dumps(comparison.to_dict(), indent=2), highlight=False)
        return
    for line in comparison.diagnosis:  # before the table and every other note
        console.print(line, soft_wrap=True, style="bold yellow", highlight=False)
    console.print(comparison_table(comparison, (str(a), str(b))))
    for side, scored in (("A", comparison.a), ("B", comparison.b)):
        for warning in scored.warnings:
            console.print(f"WARNING ({side}): {warning}", soft_wrap=True, style="bold yellow")


def register(app: typer.Typer) -> None:
    """Add this group's commands to ``app``."""
    app.command()(score)
    app.command()(compare)
