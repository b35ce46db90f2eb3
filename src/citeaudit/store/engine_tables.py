"""Reading one protocol's engine tables out of the ledger in bounded batches (for the Parquet export).

Each table is read by one sequential scan (an index walk per run was several times slower: a B-tree descent
per row), ``batch_rows`` rows at a time, and every batch is split by run in memory, so a batch carries the
columns of one (table, run) partition in the order of :data:`citeaudit.core.convention_sql.TABLES`. Memory is one
batch plus a map from answer to run (it grows with answers, not with citation locations). Only current
claims (their answer's newest claim set) and their edges are read, as scoring reads them.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import numpy as np
import numpy.typing as npt

from citeaudit.core.convention_sql import partition_value
from citeaudit.core.model import Label, Protocol, Severity
from citeaudit.core.protocol import fingerprint, protocol_to_mapping
from citeaudit.store.reading import CURRENT_CLAIM, STATE_CODE, STATES, official_mask

__all__ = ["Coded", "TableBatch", "engine_table_batches"]

Partition = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class TableBatch:
    """Some rows of one table in one partition, as columns."""

    table: str
    """Engine table name."""
    partition: Partition
    """Hive partition columns and values, outermost first."""
    columns: tuple[Any, ...]
    """One sequence (or integer array) per column of the table, all of one length."""

    @property
    def rows(self) -> int:
        """How many rows the batch holds."""
        return len(self.columns[0]) if self.columns else 0


@dataclass(frozen=True, slots=True)
class Coded:
    """A text column as small integer codes into ``names`` (a code past the end is ``NULL``): millions of
    labels leave as one integer array instead of millions of strings."""

    codes: npt.NDArray[np.int64]
    """Per row, the index of its value in ``names``."""
    names: tuple[str, ...]
    """The distinct values."""

    def __len__(self) -> int:
        return len(self.codes)

    def __getitem__(self, rows: npt.NDArray[np.int64]) -> Coded:
        return Coded(self.codes[rows], self.names)


_LABELS = tuple(str(label) for label in Label)
"""Final label by the ledger's edge code (5 pending and 6 disputed have none)."""

_IN_PROTOCOL = "SELECT a.pk FROM answers a JOIN runs r ON r.pk = a.run_pk WHERE r.protocol_pk = ?"

# One scan per table; the last column is the answer that decides the row's run partition.
_QUERIES: Mapping[str, str] = {
    "answers": (
        "SELECT a.pk, a.id, q.id, coalesce(a.platform, r.platform), coalesce(a.model, r.model), "
        "coalesce(a.locale, q.locale), CAST(r.sample AS TEXT), r.kind, a.pk "
        "FROM answers a JOIN runs r ON r.pk = a.run_pk JOIN questions q ON q.pk = a.question_pk "
        "WHERE r.protocol_pk = ? ORDER BY a.pk"
    ),
    "claims": (
        "SELECT c.pk, c.id, c.answer_pk, c.fact_pk, c.severity, c.answer_pk FROM claims c "
        f"WHERE c.answer_pk IN ({_IN_PROTOCOL}) AND {CURRENT_CLAIM} ORDER BY c.pk"
    ),
    "edges": (
        f"SELECT e.claim_pk, e.source_pk, e.final_code, {STATE_CODE}, c.answer_pk "
        f"FROM edges e JOIN claims c ON c.pk = e.claim_pk WHERE {CURRENT_CLAIM}"
    ),
    "edge_locations": (
        "SELECT e.claim_pk, e.source_pk, c.answer_pk FROM edge_locations l JOIN edges e ON e.pk = l.edge_pk "
        f"JOIN claims c ON c.pk = e.claim_pk WHERE {CURRENT_CLAIM}"
    ),
    "citations": (
        "SELECT ci.answer_pk, ci.source_pk, ci.answer_pk FROM citations ci "
        "WHERE ci.kind = 'cited' AND ci.source_pk IS NOT NULL"
    ),
}
_INTEGER_TABLES = {"edges", "edge_locations", "citations"}
"""Tables whose rows are all integers: read into arrays at C speed instead of Python tuples."""


def _edge_columns(rows: npt.NDArray[np.int64]) -> tuple[Any, ...]:
    return rows[:, 0], rows[:, 1], Coded(rows[:, 2], _LABELS), Coded(rows[:, 3], STATES)


_SHAPE: Mapping[str, Callable[[npt.NDArray[np.int64]], tuple[Any, ...]]] = {
    "edges": _edge_columns,
    "edge_locations": lambda rows: (rows[:, 0], rows[:, 1]),
    "citations": lambda rows: (rows[:, 0], rows[:, 1]),
}


def _protocol_rows(
    db: sqlite3.Connection, protocol: Protocol, protocol_pk: int, batch_rows: int
) -> Iterator[TableBatch]:
    part = (("protocol", partition_value(fingerprint(protocol))),)
    weights = dict(protocol.weights) if protocol.weights is not None else None
    body = json.dumps(protocol_to_mapping(protocol), sort_keys=True, ensure_ascii=False)
    row = (protocol.id, protocol.version, protocol.scoring, fingerprint(protocol), weights is not None, body)
    yield TableBatch("protocols", part, tuple((value,) for value in row))
    facts = db.execute(
        "SELECT f.pk, f.id, q.id, f.severity FROM required_facts f JOIN questions q ON q.pk = f.question_pk "
        "WHERE f.protocol_pk = ? ORDER BY q.ordinal, f.ordinal",
        (protocol_pk,),
    )
    first = True
    while (rows := facts.fetchmany(batch_rows)) or first:
        first = False
        weighted = [
            (pk, fid, qid, severity, float(weights.get(Severity(severity), 0.0)) if weights and severity else 0.0)
            for pk, fid, qid, severity in rows
        ]
        yield TableBatch("required_facts", part, _transpose(weighted, 5))
    official = official_mask(db, protocol)  # decided once per host, as scoring decides it
    sources = db.execute(
        "SELECT s.pk, s.key, s.status FROM protocol_sources ps JOIN sources s ON s.pk = ps.source_pk "
        "WHERE ps.protocol_pk = ? ORDER BY s.pk",
        (protocol_pk,),
    )
    first = True
    while (rows := sources.fetchmany(batch_rows)) or first:
        first = False
        flagged = [(pk, key, bool(official[pk]), status) for pk, key, status in rows]
        yield TableBatch("sources", part, _transpose(flagged, 4))


def _transpose(rows: Sequence[tuple[Any, ...]], width: int) -> tuple[Any, ...]:
    if not rows:
        return tuple(() for _ in range(width))
    table = np.empty((len(rows), width), dtype=object)
    table[:] = rows  # one C loop, where zip(*rows) builds a tuple per column in Python
    return tuple(table[:, i] for i in range(width))


def _integer_rows(
    db: sqlite3.Connection, path: str | None, sql: str, batch_rows: int
) -> Iterator[npt.NDArray[np.int64]]:
    """An all-integer query's rows as (n, width) arrays: through the ADBC SQLite driver when it is installed
    (SQLite rows straight into Arrow columns, no Python object per value), else through ``sqlite3``."""
    reader = _adbc_reader(path, sql, batch_rows) if path is not None else None
    if reader is not None:
        for batch in reader:
            if batch.num_rows:
                yield np.column_stack([column.to_numpy(zero_copy_only=False) for column in batch.columns]).astype(
                    np.int64, copy=False
                )
        return
    cursor = db.execute(sql)
    while rows := cursor.fetchmany(batch_rows):
        yield np.array(rows, dtype=np.int64)


def _adbc_reader(path: str, sql: str, batch_rows: int) -> Any:
    try:
        import adbc_driver_sqlite.dbapi as adbc
    except ImportError:
        return None
    connection = adbc.connect(f"file:{quote(path)}?mode=ro")
    cursor = connection.cursor()
    cursor.adbc_statement.set_options(**{"adbc.sqlite.query.batch_rows": str(batch_rows)})
    cursor.execute(sql)
    return _closing(cursor.fetch_record_batch(), cursor, connection)


def _closing(reader: Any, cursor: Any, connection: Any) -> Iterator[Any]:
    try:
        yield from reader
    finally:
        cursor.close()
        connection.close()


def engine_table_batches(
    db: sqlite3.Connection,
    protocol: Protocol,
    protocol_pk: int,
    *,
    batch_rows: int = 262144,
    path: str | None = None,
) -> Iterator[TableBatch]:
    """Every engine table of one protocol, in batches of at most ``batch_rows`` rows, each of one partition.
    Every (table, run) partition gets at least one batch, an empty one when it has no rows. With the database's
    ``path``, the all-integer tables are read through the ADBC SQLite driver when it is installed."""
    yield from _protocol_rows(db, protocol, protocol_pk, batch_rows)
    protocol_part = partition_value(fingerprint(protocol))
    runs = db.execute(
        "SELECT a.pk, r.id FROM answers a JOIN runs r ON r.pk = a.run_pk WHERE r.protocol_pk = ? ORDER BY a.pk",
        (protocol_pk,),
    ).fetchall()
    run_ids = sorted({run for _, run in runs})
    run_index = {run: i for i, run in enumerate(run_ids)}
    answer_pks = np.array([pk for pk, _ in runs], dtype=np.int64)
    answer_run = np.array([run_index[run] for _, run in runs], dtype=np.int64)
    partitions = [(("protocol", protocol_part), ("run", run)) for run in run_ids]
    for table, sql in _QUERIES.items():
        seen = np.zeros(len(run_ids), dtype=np.bool_)
        for values, columns in _table_rows(db, path, table, sql, protocol_pk, batch_rows):
            answers = values
            # the row's run through its answer; rows of answers under other protocols are not this protocol's
            position = np.searchsorted(answer_pks, answers)
            position[position >= len(answer_pks)] = 0
            known = answer_pks[position] == answers if len(answer_pks) else np.zeros(len(answers), dtype=np.bool_)
            run_of_row = np.where(known, answer_run[position] if len(answer_pks) else 0, -1)
            for run in np.unique(run_of_row[run_of_row >= 0]).tolist():
                chosen = np.flatnonzero(run_of_row == run)
                seen[run] = True
                yield TableBatch(table, partitions[run], tuple(_take(column, chosen) for column in columns))
        for run in np.flatnonzero(~seen).tolist():
            yield TableBatch(table, partitions[run], tuple(() for _ in range(_WIDTH[table])))


_WIDTH = {"answers": 8, "claims": 5, "edges": 4, "edge_locations": 2, "citations": 2}


def _table_rows(
    db: sqlite3.Connection, path: str | None, table: str, sql: str, protocol_pk: int, batch_rows: int
) -> Iterator[tuple[npt.NDArray[np.int64], tuple[Any, ...]]]:
    """(answer of each row, the table's columns) per batch of one table's scan."""
    if table in _INTEGER_TABLES:
        for values in _integer_rows(db, path, sql, batch_rows):
            yield values[:, -1], _SHAPE[table](values)
        return
    cursor = db.execute(sql, (protocol_pk,))
    while rows := cursor.fetchmany(batch_rows):
        columns = _transpose(rows, len(rows[0]))
        yield np.asarray(columns[-1], dtype=np.int64), columns[:-1]


def _take(column: Any, rows: npt.NDArray[np.int64]) -> Any:
    return column[rows]
