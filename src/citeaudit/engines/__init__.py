"""SQL engines that run the scoring convention beyond one machine's memory: DuckDB (embedded) and Spark.

The SQL is generated once in :mod:`citeaudit.core.convention_sql`; this package only runs it. An engine reduces
the tables to cells (counts per group, question and severity) in one pass, and
:func:`citeaudit.core.cells.score_cells` turns the cells into the same result the in-memory path gives, intervals
included. Also here: the streaming Parquet export the engines read.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from citeaudit.core.cells import score_cells
from citeaudit.core.convention_sql import DIALECTS, cells_sql, unresolved_sql
from citeaudit.core.errors import InputError, ScopeError
from citeaudit.core.model import Protocol as AuditProtocol
from citeaudit.core.model import RunKind
from citeaudit.core.results import ScoreResult
from citeaudit.core.scope import Scope
from citeaudit.core.scoring import IntervalSettings
from citeaudit.engines._parquet import ParquetExport, write_parquet_tables
from citeaudit.engines._tables import ProtocolRow, choose_protocol_row, parse_protocol_row
from citeaudit.store import Store
from citeaudit.store.engine_tables import engine_table_batches

__all__ = ["ENGINES", "EngineScore", "export_parquet", "score_with_engine"]

ENGINES = ("duckdb", "spark")
"""The SQL engines ``--engine`` accepts (besides the in-memory ``numpy`` path)."""


class _Runner(Protocol):
    def protocols(self) -> list[ProtocolRow]: ...

    def query(self, sql: str) -> dict[str, list[Any]]: ...


@dataclass(frozen=True, slots=True)
class EngineScore:
    """What an engine measured, with what the reader needs about the scope."""

    result: ScoreResult
    """The numbers."""
    protocol: AuditProtocol
    """The protocol they were measured under."""
    excluded_by_kind: int
    """Answers left out because of their run kind."""
    unresolved_links: int = 0
    """Cited sources in scope whose link has not been followed yet: the official-domain rate is provisional."""


def _is_database(path: str) -> bool:
    candidate = Path(path)
    if not candidate.is_file():
        return False
    with candidate.open("rb") as handle:
        return handle.read(16) == b"SQLite format 3\x00"


@contextmanager
def _runner(path: str, engine: str, protocol: str | None) -> Iterator[_Runner]:
    if engine not in ENGINES:
        raise ScopeError(f"unknown engine {engine!r}; choose from numpy, {', '.join(ENGINES)}")
    local = "://" not in path
    if local and not Path(path).exists():
        raise InputError(path, "", "does not exist")
    if _is_database(path):
        if engine != "duckdb":
            raise InputError(
                path, "", f"the {engine} engine reads Parquet: write it with `citeaudit export --format parquet`"
            )
        from citeaudit.engines._duckdb import DuckDBRunner

        with Store(path) as store:
            protocol_pk = store.choose_protocol(protocol)
            every_answer = Scope(run_kinds=frozenset(RunKind))
            chosen = store.effective_protocol(protocol_pk, every_answer)
            batches = engine_table_batches(store.connection, chosen, protocol_pk, path=str(store.path))
            with DuckDBRunner.over_batches(batches) as runner:
                yield runner
        return
    if local and not (Path(path) / "protocols").is_dir():
        raise InputError(path, "", "is neither a citeaudit database nor a Parquet folder written by `export`")
    if engine == "duckdb":
        from citeaudit.engines._duckdb import DuckDBRunner

        with DuckDBRunner.over_parquet(path) as duck:
            yield duck
    else:
        from citeaudit.engines._spark import SparkRunner, local_session

        yield SparkRunner(local_session(), path)


def score_with_engine(
    path: str | Path,
    engine: str,
    *,
    scope: Scope = Scope(),
    by: Sequence[str] = (),
    protocol: str | None = None,
    ci: IntervalSettings | None = None,
) -> EngineScore:
    """Score a Parquet dataset (or, with DuckDB, a database) with a SQL engine: the same numbers as the
    in-memory path, groups and intervals included (per-answer figures, ``--macro`` and repeat variance, are
    only on the in-memory path)."""
    where = str(path)
    dialect = DIALECTS.get(engine)
    with _runner(where, engine, protocol) as runner:
        row = choose_protocol_row(runner.protocols(), protocol, where)
        kinds = sorted(str(k) for k in scope.run_kinds)
        assert dialect is not None  # _runner refused unknown engines
        # The protocol's body is parsed (pure Python, a tenth of a second for a large protocol) on a thread of
        # its own while the engine runs the query, which does not hold the interpreter; a body that does not
        # parse is still the error reported.
        with ThreadPoolExecutor(max_workers=1) as pool:
            parsing = pool.submit(parse_protocol_row, row, where)
            try:
                selected = {name: sorted(values) for name, values in scope.where.items()}
                cells = runner.query(
                    cells_sql(
                        dialect, by=by, protocol=row.partition, run_kinds=kinds, where=selected, scoring=row.scoring
                    )
                )
                (unresolved,) = runner.query(
                    unresolved_sql(
                        dialect, protocol=row.partition, run_kinds=kinds, where=selected, scoring=row.scoring
                    )
                )["unresolved"]
                others = sorted({str(k) for k in RunKind} - set(kinds))
                excluded = 0
                if others:
                    literal = dialect.literal
                    (count,) = runner.query(
                        f"SELECT count(*) AS n FROM answers WHERE protocol = {literal(row.partition)} "
                        f"AND run_kind IN ({', '.join(literal(k) for k in others)})"
                    )["n"]
                    excluded = int(count)
            finally:
                chosen = parsing.result()
    result = score_cells(cells, by=by, scoring=row.scoring, fingerprint=row.fingerprint, weighted=row.weighted, ci=ci)
    return EngineScore(result, chosen, excluded, int(unresolved))


def export_parquet(db: str | Path, out: Path, *, protocol: str | None = None) -> ParquetExport:
    """Stream one protocol's engine tables from a database into a hive-partitioned Parquet dataset."""
    with Store(db) as store:
        protocol_pk = store.choose_protocol(protocol)
        chosen = store.effective_protocol(protocol_pk, Scope(run_kinds=frozenset(RunKind)))
        batches = engine_table_batches(store.connection, chosen, protocol_pk, path=str(store.path))
        return write_parquet_tables(batches, out)
