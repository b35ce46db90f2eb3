"""Migrations that change a table's constraints (a CHECK, a UNIQUE), which ``ALTER TABLE`` cannot: each rebuilds the
tables it changes (:func:`rebuild_tables`) with documented statements only, never an edit of ``sqlite_master``."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Mapping

__all__ = [
    "IN_LIST",
    "UNIQUE_KEYS",
    "check_lists_as_comparisons",
    "comparisons",
    "rebuild_tables",
    "unique_keys_as_indexes",
    "window_suggestion_methods",
]

_TEXT = r"'(?:[^']|'')*'"
IN_LIST = re.compile(rf"CHECK \((\w+) IN \(((?:{_TEXT}\s*,\s*){{2,}}{_TEXT})\)\)")
"""A CHECK constraint that is exactly ``column IN ('a', 'b', 'c', ...)``: three or more text constants."""


def comparisons(sql: str) -> str:
    """``sql`` with every ``CHECK (column IN ('a', 'b', 'c', ...))`` written
    ``CHECK ((column = 'a' OR column = 'b' OR ...))``; any other CHECK is left as it is."""
    return IN_LIST.sub(
        lambda m: "CHECK ((" + " OR ".join(f"{m[1]} = {value}" for value in re.findall(_TEXT, m[2])) + "))", sql
    )


def _compiles(sql: str) -> bool:
    try:
        sqlite3.connect(":memory:").execute(sql).close()
    except sqlite3.Error:
        return False
    return True


def rebuild_tables(db: sqlite3.Connection, definitions: Mapping[str, str]) -> None:
    """Give each table named in ``definitions`` its new ``CREATE TABLE`` statement, keeping its rows (same
    columns, same order), indexes and triggers: the rebuild SQLite documents for schema changes ``ALTER TABLE``
    cannot make (https://www.sqlite.org/lang_altertable.html#otheralter). A table is created under a new name,
    filled from the old one, the old one dropped and the new one renamed; the views are made again around it, as
    a rename checks every view. Run inside the migration's transaction with foreign keys off (see
    :func:`citeaudit.store.migrations.migrate`); a foreign key broken by the rebuild fails it before anything is
    committed.

    Only documented statements: no edit of ``sqlite_master``, so it runs where SQLite refuses those
    (``SQLITE_DBCONFIG_DEFENSIVE``). Unlike an edit in place it copies each table's rows once."""
    if not definitions:
        return
    views = db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'view' ORDER BY rowid").fetchall()
    for name, _ in views:
        db.execute(f'DROP VIEW "{name}"')
    for name, sql in definitions.items():
        _rebuild(db, name, sql)
    for _, sql in views:
        db.execute(sql)
    broken = db.execute("PRAGMA foreign_key_check").fetchone()
    if broken is not None:
        raise sqlite3.IntegrityError(f"rebuilding {', '.join(definitions)} broke a foreign key: {tuple(broken)}")


def _rebuild(db: sqlite3.Connection, name: str, sql: str) -> None:
    """Rebuild one table with the definition ``sql`` (see :func:`rebuild_tables`)."""
    kept = db.execute(
        "SELECT sql FROM sqlite_master WHERE tbl_name = ? AND type IN ('index', 'trigger') AND sql IS NOT NULL "
        "ORDER BY rowid",
        (name,),
    ).fetchall()
    temporary = f"{name}_rebuilt"
    created, named = _TABLE_NAME.subn(f'CREATE TABLE "{temporary}"', sql, count=1)
    if not named:
        raise ValueError(f"not a CREATE TABLE statement for {name!r}: {sql[:60]!r}")
    db.execute(created)
    db.execute(f'INSERT INTO "{temporary}" SELECT * FROM "{name}"')
    db.execute(f'DROP TABLE "{name}"')
    db.execute(f'ALTER TABLE "{temporary}" RENAME TO "{name}"')
    for (statement,) in kept:
        db.execute(statement)


_TABLE_NAME = re.compile(r'^CREATE TABLE\s+(?:"[^"]+"|\w+)')
"""The start of a stored ``CREATE TABLE`` statement up to the table's name, quoted (after a rename) or not."""


def check_lists_as_comparisons(db: sqlite3.Connection) -> None:
    """Rewrite the CHECK constraints that test a column against a list of three or more values as a chain of
    comparisons, which accepts and rejects exactly the same values. SQLite evaluates ``IN (list)`` through a
    temporary lookup table made once per execution of a statement, and ``executemany`` executes its statement
    once per row: with the list, writing a citation row one to a statement took 1.9 times as long as with the
    chain (64 rows to a statement, 1.2 times). The tables whose definitions change are rebuilt
    (:func:`rebuild_tables`); a definition is only used when SQLite compiles it."""
    definitions = {}
    for name, sql in db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND sql LIKE '% IN (%'"):
        rewritten = comparisons(sql)
        if rewritten != sql and _compiles(rewritten):
            definitions[name] = rewritten
    rebuild_tables(db, definitions)


_SUGGESTION_METHODS = ("bm25", "dense", "hybrid", "window", "window-hybrid")
_METHOD_CHECK = re.compile(rf"CHECK \((?:method IN \((?:{_TEXT}\s*,?\s*)+\)|\((?:method = {_TEXT}(?: OR )?)+\))\)")


def window_suggestion_methods(db: sqlite3.Connection) -> None:
    """Let ``suggestions.method`` also record ``window`` and ``window-hybrid`` (passage windows ranked as one
    unit). Only the CHECK constraint changes: the table is rebuilt with it (:func:`rebuild_tables`)."""
    row = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'suggestions'").fetchone()
    if row is None:
        return
    allowed = " OR ".join(f"method = '{method}'" for method in _SUGGESTION_METHODS)
    rewritten = _METHOD_CHECK.sub(f"CHECK (({allowed}))", row[0], count=1)
    if rewritten == row[0] or not _compiles(rewritten):
        return
    rebuild_tables(db, {"suggestions": rewritten})


UNIQUE_KEYS = {
    "answers": ("answers_id", "id"),
    "claims": ("claims_id", "id"),
    "sources": ("sources_key", "key"),
    "citations": ("citations_answer_ordinal", "answer_pk, ordinal"),
    "edges": ("edges_claim_source", "claim_pk, source_pk"),
}
"""The uniqueness an import's tables keep as named unique indexes (table: index name, columns)."""

_UNIQUE_COLUMN = re.compile(r"\b(id|key)(\s+TEXT\s+NOT\s+NULL)\s+UNIQUE\b")
_UNIQUE_CLAUSE = re.compile(r",\s*UNIQUE\s*\(\s*(answer_pk,\s*ordinal|claim_pk,\s*source_pk)\s*\)")


def unique_keys_as_indexes(db: sqlite3.Connection) -> None:
    """Keep the uniqueness of answer and claim ids, source keys, an answer's citation ordinals and an edge's claim
    and source (:data:`UNIQUE_KEYS`) in named unique indexes instead of constraints in the tables' definitions.
    What is refused stays the same; what changes is that an index, unlike a constraint, can be dropped: an import
    into empty tables builds each once from all its rows (:func:`citeaudit.store.bulk.drop_secondary_indexes`)
    instead of inserting every id into it one at a time (the rows of 20 000 dense answers, foreign keys off in both,
    took 3.00 s to write so against 4.51 s). The five tables are rebuilt (:func:`rebuild_tables`) and their
    indexes made."""
    definitions = {}
    for table in UNIQUE_KEYS:
        row = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
        if row is None:
            continue
        rewritten = _UNIQUE_CLAUSE.sub("", _UNIQUE_COLUMN.sub(r"\1\2", row[0]))
        if rewritten != row[0]:
            definitions[table] = rewritten
    rebuild_tables(db, definitions)
    for table, (index, columns) in UNIQUE_KEYS.items():
        db.execute(f"CREATE UNIQUE INDEX IF NOT EXISTS {index} ON {table}({columns})")
