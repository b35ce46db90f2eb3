"""Writing the engine tables of one protocol as Parquet: streamed from the ledger, hive-partitioned.

``OUT/answers/protocol=sha256-…/run=RUN/part-0.parquet`` and so on for every table of
:data:`citeaudit.convention_sql.TABLES`. Rows arrive as bounded batches (``store.engine_tables``) and leave as
Arrow record batches, one open file at a time, so memory stays flat whatever the ledger holds. Everything is
written into a hidden folder beside ``OUT`` and moved into place at the end: a failed export leaves nothing.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from citeaudit.convention_sql import PARTITIONS, TABLES
from citeaudit.errors import InputError, MissingExtra
from citeaudit.store.engine_tables import Coded, TableBatch

__all__ = ["ParquetExport", "arrow_schemas", "partition_folder", "record_batch", "write_parquet_tables"]

_BUFFERED_ROWS = 1 << 20
"""Rows held across all partitions of a table before they are written: the export's memory bound."""

_ARROW_TYPES = {"BIGINT": "int64", "VARCHAR": "string", "DOUBLE": "float64", "BOOLEAN": "bool_"}


def _pyarrow() -> Any:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingExtra("parquet", "Parquet export") from None
    return pa, pq


def arrow_schemas(partition_columns: bool = False) -> dict[str, Any]:
    """The Arrow schema of every engine table, optionally with its partition columns (as text) at the end."""
    pa, _ = _pyarrow()
    return {
        name: pa.schema(
            [pa.field(c.name, getattr(pa, _ARROW_TYPES[c.type])(), nullable=c.nullable) for c in columns]
            + ([pa.field(p, pa.string(), nullable=False) for p in PARTITIONS[name]] if partition_columns else [])
        )
        for name, columns in TABLES.items()
    }


def record_batch(batch: TableBatch, schema: Any) -> Any:
    """The columns of ``batch`` as an Arrow record batch of ``schema`` (partition values added when it has
    them). Integer arrays pass without a copy."""
    pa, _ = _pyarrow()
    width = len(TABLES[batch.table])
    arrays = [_arrow(pa, values, f.type) for values, f in zip(batch.columns, list(schema)[:width], strict=True)]
    for (_, value), f in zip(batch.partition, list(schema)[width:], strict=False):
        arrays.append(pa.array([value] * batch.rows, type=f.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _arrow(pa: Any, values: Any, kind: Any) -> Any:
    if isinstance(values, Coded):
        # codes past the dictionary are NULL (pending edges have no label)
        indices = pa.array(values.codes, mask=values.codes >= len(values.names))
        return pa.DictionaryArray.from_arrays(indices, pa.array(values.names, type=kind)).cast(kind)
    return pa.array(values, type=kind)


def partition_folder(partition: tuple[tuple[str, str], ...]) -> str:
    """``protocol=…/run=…`` with each value percent-encoded (both engines decode it on reading)."""
    return "/".join(f"{name}={quote(value, safe='')}" for name, value in partition)


@dataclass
class ParquetExport:
    """What an export wrote."""

    folder: Path
    """The dataset root."""
    rows: dict[str, int] = field(default_factory=dict)
    """Rows written per table."""
    files: int = 0
    """Parquet files written."""


def write_parquet_tables(batches: Iterator[TableBatch], out: Path) -> ParquetExport:
    """Write the batches as a hive-partitioned Parquet dataset at ``out`` (which must not hold files yet)."""
    pa, pq = _pyarrow()
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InputError(str(out), "--out", "exists and is not an empty folder; name a new folder")
    schemas = arrow_schemas()
    parent = out.parent if str(out.parent) else Path(".")
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=parent, prefix=f".{out.name}."))
    summary = ParquetExport(out, dict.fromkeys(TABLES, 0))
    writers: dict[tuple[tuple[str, str], ...], Any] = {}
    pending: dict[tuple[tuple[str, str], ...], list[Any]] = {}
    buffered = 0
    table: str | None = None
    protocol_part: tuple[tuple[str, str], ...] = ()

    def flush() -> None:
        # one row group per flush and partition: large enough for engines to read well
        nonlocal buffered
        for partition, parts in pending.items():
            if partition not in writers:
                folder = staging / str(table) / partition_folder(partition)
                folder.mkdir(parents=True, exist_ok=True)
                writers[partition] = pq.ParquetWriter(folder / "part-0.parquet", schemas[str(table)])
                summary.files += 1
            writers[partition].write_table(pa.Table.from_batches(parts, schema=schemas[str(table)]))
        pending.clear()
        buffered = 0

    def close() -> None:
        for writer in writers.values():
            writer.close()
        writers.clear()

    try:
        for batch in batches:
            if batch.table != table:
                flush()
                close()
                table = batch.table
            protocol_part = batch.partition[:1]
            pending.setdefault(batch.partition, []).append(record_batch(batch, schemas[batch.table]))
            buffered += batch.rows
            summary.rows[batch.table] += batch.rows
            if buffered >= _BUFFERED_ROWS:
                flush()
        flush()
        close()
        # A table with no partition at all (a protocol without answers) still gets an empty file, so every
        # engine finds every table.
        for name, schema in schemas.items():
            if not (staging / name).exists():
                parts = (*protocol_part, ("run", "none"))[: len(PARTITIONS[name])]
                folder = staging / name / partition_folder(parts)
                folder.mkdir(parents=True)
                pq.write_table(schema.empty_table(), folder / "part-0.parquet")
                summary.files += 1
        if out.exists():
            out.rmdir()
        os.replace(staging, out)
    except BaseException:
        close()
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return summary
