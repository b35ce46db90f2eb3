"""Writing rows in bulk: several rows to an ``INSERT`` statement (:func:`insert_rows`), and the indexes dropped
while a table is filled and made again once from all its rows (:func:`drop_secondary_indexes`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from itertools import chain, islice

__all__ = [
    "IMPORT_TABLES",
    "IN_ORDER_INDEXES",
    "OVERLAPPED_INDEXES",
    "ROWS_PER_STATEMENT",
    "drop_secondary_indexes",
    "insert_rows",
]


ROWS_PER_STATEMENT = 64
"""Rows one multi-row INSERT carries in :func:`insert_rows` at most."""

_MAX_PARAMETERS = 999
"""Parameters one statement may bind in every SQLite this runs on (older than 3.32 allows no more)."""


def insert_rows(db: sqlite3.Connection, sql: str, rows: Iterable[Sequence[object]]) -> None:
    """``executemany(sql, rows)`` for a one-row ``INSERT … VALUES (?, …)``, written up to ``ROWS_PER_STATEMENT``
    rows to a statement (fewer when the row is wide, so a statement binds at most 999 values). SQLite's cost of
    executing a statement is then paid once a batch instead of once a row: an import's rows took about a fifth
    less time to write (20 000 answers: median 3.2 s against 3.9 s). ``rows`` is read a batch at a time."""
    head, values, one = sql.rpartition(" VALUES ")
    if not values or not one.startswith("(") or not one.endswith(")"):
        raise ValueError(f"not a one-row INSERT … VALUES (…): {sql!r}")
    per = max(1, min(ROWS_PER_STATEMENT, _MAX_PARAMETERS // max(1, one.count("?"))))
    full = f"{head} VALUES {', '.join([one] * per)}"
    remaining = iter(rows)
    while len(batch := list(islice(remaining, per))) == per:
        db.execute(full, list(chain.from_iterable(batch)))
    if batch:
        db.executemany(sql, batch)


IMPORT_TABLES = ("answers", "citations", "claims", "edges", "edge_locations", "sources")
"""The tables that receive an import's rows in bulk (several rows for every answer, a source for a few)."""


IN_ORDER_INDEXES = frozenset(
    {"citations_answer_ordinal", "claims_current", "edges_claim_source", "edge_locations_edge"}
)
"""The import tables' indexes whose entries an import adds in order: each leads with the row id of the row's parent
(an answer, a claim, an edge), which the import gives out upward and writes its children in that order, so every
entry goes at the end of its index, as a row goes at the end of its table. Kept while an import writes, such an index
costs about what making it afterwards costs, but not after the last row, where nothing overlaps it (with a worker
reading, the writing process waits for rows; the indexes made after the last row are waited for). The other indexes
take their keys in no order (ids, URL keys, sources, the review queue's scattered keys) and are made afterwards.
Measured in docs/performance.md."""


OVERLAPPED_INDEXES = frozenset(
    {"answers_id", "answers_platform", "answers_question_platform", "answers_run_platform", "claims_id"}
)
"""Indexes of the import tables also kept while an import writes when a worker process reads its payload: the
writing process then waits for rows part of the time, and keeping these up to date as the rows come fits into those
waits (the answers' few, the claims' ids), where making them after the last row is waited for. 20 000 Sonar answers,
five rounds of three imports each way in turn: 1.60 s against 1.68 s (medians). Read in the importing process, no
wait is there to fill. Measured in docs/performance.md."""


def drop_secondary_indexes(
    db: sqlite3.Connection, tables: Iterable[str] = IMPORT_TABLES, *, unique: bool = False, keep: Iterable[str] = ()
) -> list[str]:
    """Drop the indexes of ``tables`` other than their primary keys and those named in ``keep``: those that only
    speed up reads, and with ``unique`` the unique ones too (without it they stay and refuse a clash row by row; a
    caller that drops them sees to it that a clash is found when they are made again). The statements that make
    them again, the unique ones first, in a stable order."""
    wanted = list(tables)
    indexes = db.execute(
        "SELECT m.name, m.sql, EXISTS (SELECT 1 FROM pragma_index_list(m.tbl_name) AS i "
        "WHERE i.name = m.name AND i.[unique]) AS is_unique FROM sqlite_master AS m "
        f"WHERE m.type = 'index' AND m.sql IS NOT NULL AND m.tbl_name IN ({', '.join('?' * len(wanted))}) "
        "ORDER BY is_unique DESC, m.tbl_name, m.name",
        wanted,
    ).fetchall()
    kept = frozenset(keep)
    dropped = [(name, sql) for name, sql, is_unique in indexes if (unique or not is_unique) and name not in kept]
    for name, _ in dropped:
        db.execute(f'DROP INDEX "{name}"')
    return [sql for _, sql in dropped]
