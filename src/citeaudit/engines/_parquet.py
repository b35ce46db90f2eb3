"""Writing the engine tables of one protocol as Parquet: streamed from the ledger, hive-partitioned.

``OUT/answers/protocol=sha256-…/run=RUN/part-0.parquet`` and so on for every table of
:data:`citeaudit.core.convention_sql.TABLES`. Rows arrive as bounded batches (``store.engine_tables``) and leave as
Arrow record batches, one open file at a time, so memory stays flat whatever the ledger holds. Everything is
written into a hidden folder beside ``OUT`` and moved into place at the end: a failed export leaves nothing.

Encoding and compressing a row group (pyarrow, which lets other threads run meanwhile) happens on a thread of its
own while the next rows are read from the ledger (SQLite and the ADBC driver let other threads run too); at most
one row group is being written while the next is gathered, so memory stays at two buffers.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import tempfile
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from citeaudit.core.convention_sql import PARTITIONS, TABLES
from citeaudit.core.errors import InputError, MissingExtra
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


def _remove_abandoned_staging(parent: Path, name: str) -> None:
    """Remove the staging folders an export to ``name`` left when it was killed (``.NAME.PID.XXXX`` of a process
    that no longer runs); those of an export still running are left alone."""
    for folder in parent.glob(f".{glob.escape(name)}.*.*"):
        pid = folder.name[len(name) + 2 :].split(".", 1)[0]
        if not folder.is_dir() or not pid.isascii() or not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except PermissionError:  # another user's process: running
            continue


def write_parquet_tables(batches: Iterator[TableBatch], out: Path) -> ParquetExport:
    """Write the batches as a hive-partitioned Parquet dataset at ``out`` (which must not hold files yet)."""
    pa, pq = _pyarrow()
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise InputError(str(out), "--out", "exists and is not an empty folder; name a new folder")
    schemas = arrow_schemas()
    parent = out.parent if str(out.parent) else Path(".")
    parent.mkdir(parents=True, exist_ok=True)
    _remove_abandoned_staging(parent, out.name)
    staging = Path(tempfile.mkdtemp(dir=parent, prefix=f".{out.name}.{os.getpid()}."))
    summary = ParquetExport(out, dict.fromkeys(TABLES, 0))
    writers: dict[tuple[tuple[str, str], ...], Any] = {}
    pending: dict[tuple[tuple[str, str], ...], list[Any]] = {}
    buffered = 0
    table: str | None = None
    protocol_part: tuple[tuple[str, str], ...] = ()
    # One writing thread: row groups are written in the order they were gathered, and ``writers`` and
    # ``summary.files`` are touched by that thread only while a write is in flight.
    writing = ThreadPoolExecutor(max_workers=1, thread_name_prefix="citeaudit-parquet")
    in_flight: Future[None] | None = None

    def write(name: str, groups: dict[tuple[tuple[str, str], ...], list[Any]]) -> None:
        # one row group per flush and partition: large enough for engines to read well
        for partition, parts in groups.items():
            if partition not in writers:
                folder = staging / name / partition_folder(partition)
                folder.mkdir(parents=True, exist_ok=True)
                writers[partition] = pq.ParquetWriter(folder / "part-0.parquet", schemas[name])
                summary.files += 1
            writers[partition].write_table(pa.Table.from_batches(parts, schema=schemas[name]))

    def wait() -> None:
        nonlocal in_flight
        if in_flight is not None:
            done, in_flight = in_flight, None
            done.result()  # a failed write is raised here

    def flush() -> None:
        nonlocal buffered, in_flight
        if not pending:
            return
        groups = dict(pending)
        pending.clear()
        buffered = 0
        wait()
        in_flight = writing.submit(write, str(table), groups)

    def close() -> None:
        try:
            wait()
        finally:
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
        with contextlib.suppress(Exception):  # the first error is the one to report
            close()
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        writing.shutdown(wait=True)
    return summary
