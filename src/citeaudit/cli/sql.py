"""``sql``: print the scoring convention as SQL for DuckDB or Spark SQL, to run on your own engine."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from citeaudit.cli.common import console, handles_errors
from citeaudit.cli.score import ByOption, KindChoice, KindOption, WhereOption, _by, _scope
from citeaudit.core.convention_sql import DIALECTS, cells_sql, partition_value, preamble_sql, scoring_sql

__all__ = ["register"]


class Dialect(StrEnum):
    """SQL dialects the convention is generated for."""

    DUCKDB = "duckdb"
    SPARK = "spark"


@handles_errors
def sql(
    engine: Annotated[Dialect, typer.Option("--engine", help="SQL dialect.")] = Dialect.DUCKDB,
    by: ByOption = None,
    kind: KindOption = KindChoice.PLATFORM,
    where: WhereOption = None,
    parquet: Annotated[
        str | None,
        typer.Option("--parquet", help="Also print views over this Parquet folder (from export --format parquet)."),
    ] = None,
    fingerprint: Annotated[
        str | None,
        typer.Option("--fingerprint", help="Only this protocol (sha256:… fingerprint) of a multi-protocol folder."),
    ] = None,
    cells: Annotated[
        bool, typer.Option("--cells", help="Print the one-pass query to per-question cells instead of the totals.")
    ] = False,
) -> None:
    """Print the strict-v1 convention as SQL over the engine tables (answers, claims, edges, edge_locations,
    citations, required_facts, sources, protocols): one row per --by group and one for the whole scope, with
    numerators, denominators, counts per label and values (NULL when the denominator is 0)."""
    dialect = DIALECTS[str(engine)]
    scope = _scope(kind, where)
    generate = cells_sql if cells else scoring_sql
    query = generate(
        dialect,
        by=_by(by),
        protocol=partition_value(fingerprint) if fingerprint else None,
        run_kinds=sorted(str(k) for k in scope.run_kinds),
        where={name: sorted(values) for name, values in scope.where.items()},
    )
    if parquet:
        console.out(preamble_sql(dialect, parquet), highlight=False)
    console.out(query + ";", highlight=False)


def register(app: typer.Typer) -> None:
    """Add this group's commands to ``app``."""
    app.command()(sql)
