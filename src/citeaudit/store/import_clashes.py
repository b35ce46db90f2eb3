"""Naming the row an import writes twice: a unique index kept while the rows are written refuses it as its row is
written (:func:`written_twice`), one made again after the rows refuses it then (:func:`make_indexes`); either way the
one-line :class:`~citeaudit.core.errors.DuplicateId` names the table and the value, and the caller's transaction is
rolled back."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from citeaudit.core.errors import DuplicateId
from citeaudit.store.chunk_rows import ChunkRows
from citeaudit.store.importing import _existing

__all__ = ["make_indexes", "written_twice"]


def written_twice(
    error: sqlite3.IntegrityError,
    rows: ChunkRows,
    origin: str,
    db: sqlite3.Connection | None = None,
    starts: dict[str, int] | None = None,
    keys: Sequence[str] = (),
) -> Exception:
    """What to raise for ``error``, raised as a chunk's ``rows`` were written: when a unique index written with the
    rows (:data:`~citeaudit.store.bulk.IN_ORDER_INDEXES`) refused a citation or an edge the chunk holds twice
    (which the readers collapse first), the one-line :class:`DuplicateId` naming it; likewise an answer or claim id
    refused by its index kept while writing (:data:`~citeaudit.store.bulk.OVERLAPPED_INDEXES`; ``starts``: the row
    id of the chunk's first answer and claim, to tell the rows earlier chunks wrote in ``db``); any other error as
    it is. ``keys``: the import's source keys by number (:attr:`ImportSources.keys`), to name an edge's source."""
    table = str(error).removeprefix("UNIQUE constraint failed: ").partition(".")[0]
    if table in ("answers", "claims") and db is not None and starts and table in starts:
        ids = [row[0] for row in (rows.answers if table == "answers" else rows.claims)]
        return _id_twice(db, table, ids, starts[table], origin)
    if table == "citations":
        twice = _first_twice((answer, ordinal) for answer, ordinal, *_ in rows.citations)
    elif table == "edges":
        twice = _first_twice((claim, source) for claim, source, *_ in rows.edges)
    else:
        return error
    if twice is None:
        return error
    row, other = twice
    if table == "citations":
        what = f"citation {other} of answer {rows.answers[row][0]!r}"
    else:
        source = keys[other] if 0 <= other < len(keys) else other
        what = f"edge from claim {rows.claims[row][0]!r} to source {source!r}"
    return DuplicateId(origin, table, f"{what} is written twice by this import")


def _id_twice(db: sqlite3.Connection, table: str, ids: list[str], start: int, origin: str) -> Exception:
    """The :class:`DuplicateId` of the first of a chunk's ``ids`` that the chunk holds twice or an earlier chunk of
    the import wrote (a row id before ``start``, the chunk's first), as :func:`make_indexes` says it."""
    earlier = {key for key, pk in _existing(db, table, "id", ids).items() if pk < start}
    seen: set[str] = set()
    for value in ids:
        if value in earlier or value in seen:
            return DuplicateId(origin, table, f"{_ROW_NAMES[table]} {value!r} is written twice by this import")
        seen.add(value)
    return DuplicateId(origin, table, f"an {_ROW_NAMES[table]} is written twice by this import")


def _first_twice(pairs: Iterable[tuple[int, Any]]) -> tuple[int, Any] | None:
    """The first pair seen a second time, if any."""
    seen: set[tuple[int, Any]] = set()
    for pair in pairs:
        if pair in seen:
            return pair
        seen.add(pair)
    return None


_UNIQUE_INDEX = re.compile(r"CREATE UNIQUE INDEX (\w+) ON (\w+)\s*\(([^)]*)\)")
_ROW_NAMES = {"answers": "answer id", "claims": "claim id", "sources": "source key"}


def make_indexes(db: sqlite3.Connection, statements: Sequence[str], origin: str) -> None:
    """Make the indexes an import dropped while it wrote into empty tables (the statements of
    :func:`~citeaudit.store.bulk.drop_secondary_indexes`), inside its transaction. A unique index the rows break
    (the same id twice in one import, which the readers refuse first) is a :class:`DuplicateId` naming the table
    and the value, and the caller's transaction is rolled back."""
    for statement in statements:
        try:
            db.execute(statement)
        except sqlite3.IntegrityError:
            match = _UNIQUE_INDEX.match(statement)
            if match is None:
                raise
            _, table, columns = match.groups()
            row = db.execute(f"SELECT {columns} FROM {table} GROUP BY {columns} HAVING count(*) > 1 LIMIT 1").fetchone()
            shown = _ROW_NAMES.get(table, f"{table} ({columns})")
            value = "?" if row is None else (repr(row[0]) if len(row) == 1 else repr(tuple(row)))
            raise DuplicateId(origin, table, f"{shown} {value} is written twice by this import") from None
