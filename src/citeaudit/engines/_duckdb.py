"""The DuckDB engine: the convention's SQL run embedded, over Parquet or over a database, out of core.

Over Parquet, DuckDB reads the files where they are (a local folder, or object storage when its httpfs
extension is installed) and spills to a temporary folder when the joins outgrow memory. A database is first
streamed into a temporary DuckDB file through the export's bounded batches (DuckDB cannot read the ledger
without an extension that may not be installed), then scored the same way.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from citeaudit.core.convention_sql import DIALECTS, PARTITIONS, TABLES, preamble_sql
from citeaudit.core.errors import EngineFailed, InvalidValue, MissingExtra
from citeaudit.engines._parquet import arrow_schemas, record_batch
from citeaudit.engines._tables import ProtocolRow
from citeaudit.store.engine_tables import TableBatch

__all__ = ["DuckDBRunner"]

DIALECT = DIALECTS["duckdb"]


def _duckdb() -> Any:
    try:
        import duckdb
    except ImportError:
        raise MissingExtra("duckdb", "The duckdb engine") from None
    return duckdb


class DuckDBRunner:
    """An embedded DuckDB connection that has the engine tables as views or tables."""

    def __init__(self, connection: Any) -> None:
        self._con = connection

    @classmethod
    @contextmanager
    def over_parquet(cls, root: str, *, memory_limit: str | None = None) -> Iterator[DuckDBRunner]:
        """Views over a Parquet dataset written by the export."""
        duckdb = _duckdb()
        with tempfile.TemporaryDirectory(prefix="citeaudit-duckdb-") as spill:
            con = _connect(duckdb, ":memory:", spill, memory_limit)
            try:
                runner = cls(con)
                for statement in preamble_sql(DIALECT, root).split(";\n"):
                    runner._run(statement.rstrip(";"))
                runner._check_columns(root)
                yield runner
            finally:
                con.close()

    @classmethod
    @contextmanager
    def over_batches(cls, batches: Iterator[TableBatch], *, memory_limit: str | None = None) -> Iterator[DuckDBRunner]:
        """Tables in a temporary DuckDB file, loaded batch by batch (a database's engine tables)."""
        duckdb = _duckdb()
        schemas = arrow_schemas(partition_columns=True)
        with tempfile.TemporaryDirectory(prefix="citeaudit-duckdb-") as spill:
            con = _connect(duckdb, str(Path(spill) / "tables.duckdb"), spill, memory_limit)
            try:
                for name, columns in TABLES.items():
                    spec = [f"{c.name} {c.type}" for c in columns] + [f"{p} VARCHAR" for p in PARTITIONS[name]]
                    con.execute(f"CREATE TABLE {name} ({', '.join(spec)})")
                for batch in batches:
                    if batch.rows:
                        incoming = record_batch(batch, schemas[batch.table])
                        con.register("incoming", incoming)
                        con.execute(f"INSERT INTO {batch.table} SELECT * FROM incoming")
                        con.unregister("incoming")
                yield cls(con)
            finally:
                con.close()

    def _check_columns(self, root: str) -> None:
        """Refuse a dataset whose tables lack a column the convention's SQL reads, naming the first one (an
        export written before the column was added, or files written by hand), before any query is run."""
        for name, columns in TABLES.items():
            found = {row[0] for row in self._run(f"DESCRIBE {name}").fetchall()}
            missing = [c.name for c in columns if c.name not in found]
            if missing:
                raise InvalidValue(
                    root,
                    name,
                    f"missing column {missing[0]!r} (columns: {', '.join(sorted(found))}); "
                    "export the database again with this version of citeaudit",
                )

    def protocols(self) -> list[ProtocolRow]:
        """The rows of the ``protocols`` table."""
        rows = self._run(
            "SELECT DISTINCT protocol_id, version, scoring, fingerprint, weighted, body FROM protocols ORDER BY 1, 2"
        ).fetchall()
        return [ProtocolRow(*row) for row in rows]

    def query(self, sql: str) -> dict[str, list[Any]]:
        """A (small) query result as columns."""
        cursor = self._run(sql)
        names = [d[0] for d in cursor.description]
        rows = cursor.fetchall()
        return {name: [row[i] for row in rows] for i, name in enumerate(names)}

    def _run(self, sql: str) -> Any:
        try:
            return self._con.execute(sql)
        except _duckdb().Error as exc:
            raise EngineFailed("duckdb", exc) from None


def _connect(duckdb: Any, database: str, spill: str, memory_limit: str | None) -> Any:
    con = duckdb.connect(database, config=_config(spill, memory_limit))
    # DuckDB draws a progress bar on standard output for queries past two seconds, into the JSON or CSV a
    # command prints there; it is a setting of the connection, not of the database
    con.execute("SET enable_progress_bar = false")
    return con


def _config(spill: str, memory_limit: str | None) -> dict[str, Any]:
    # Insertion order is never needed (every result is aggregated and sorted), and keeping it costs memory.
    config: dict[str, Any] = {"temp_directory": spill, "preserve_insertion_order": False}
    # On a machine shared with other work, cap DuckDB below its default (80 % of RAM); it spills past the cap.
    memory_limit = memory_limit or os.environ.get("CITEAUDIT_DUCKDB_MEMORY_LIMIT")
    if memory_limit:
        config["memory_limit"] = memory_limit
    return config
