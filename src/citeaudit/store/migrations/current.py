"""A new database made in one step: the schema the migrations leave, kept in ``schema.sql`` beside this module.

Replaying every migration on an empty file runs about 300 statements, three of them rebuilding tables, and took
0.20-0.27 s; the statements of the finished schema take 0.02-0.04 s. A new database (no schema object at all,
version 0) is made from ``schema.sql`` when the file says it is the schema of
:data:`~citeaudit.store.migrations.SCHEMA_VERSION`; otherwise (an older file, or a database that already holds
something) the migrations run one by one as before.

``schema.sql`` is written by :func:`write` (``scripts/make_store_schema.py``) from a database the migrations
made, its objects in the order SQLite keeps them, each statement as SQLite stored it. ``tests/test_migrations.py``
fails when it differs from what the migrations make now, and checks that a database made from it and one made by
the migrations have the same schema, object for object.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

__all__ = ["SCHEMA_FILE", "apply", "read", "snapshot", "write"]

SCHEMA_FILE = Path(__file__).with_name("schema.sql")
"""The schema a new database is made from."""

_VERSION = re.compile(r"^-- schema version (\d+)$", re.M)
_HEADER = """\
-- The schema citeaudit's migrations leave a new database with, written by scripts/make_store_schema.py.
-- Not edited by hand: add a migration, then run the script.
-- schema version {version}
"""


def snapshot(db: sqlite3.Connection) -> tuple[int, list[str]]:
    """The schema version of ``db`` and the statements that make its schema objects, in the order SQLite keeps
    them (the indexes SQLite makes for a table's own UNIQUE constraints come with their table)."""
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    rows = db.execute(
        "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid"
    ).fetchall()
    return version, [str(sql) for (sql,) in rows]


def render(version: int, statements: list[str]) -> str:
    """The text of ``schema.sql`` for these statements."""
    return _HEADER.format(version=version) + "".join(f"\n{statement};\n" for statement in statements)


def read(text: str) -> tuple[int, list[str]]:
    """The schema version and the statements of a ``schema.sql`` text, each as SQLite stored it (see
    :func:`~citeaudit.store.migrations.statements`)."""
    from citeaudit.store.migrations import statements

    found = _VERSION.search(text)
    if found is None:
        raise ValueError("schema.sql names no schema version")
    try:
        return int(found.group(1)), statements(text, verbatim=True)
    except ValueError:
        raise ValueError("schema.sql ends inside a statement") from None


def apply(db: sqlite3.Connection, version: int) -> bool:
    """Make the schema of ``version`` in the empty database ``db`` from ``schema.sql``, inside the caller's
    transaction, and set its version; ``False`` (nothing done) when the file holds another version or cannot be
    opened (an install without it: the migrations make the same schema, one by one). A file that is there but
    names no version or ends inside a statement is a ``ValueError`` (:func:`read`): a broken install, said so."""
    try:
        text = SCHEMA_FILE.read_text(encoding="utf-8")
    except OSError:
        return False
    stored, statements = read(text)
    if stored != version:
        return False
    for statement in statements:
        db.execute(statement)
    db.execute(f"PRAGMA user_version = {version}")
    return True


def write(path: Path = SCHEMA_FILE) -> bool:
    """Write ``schema.sql`` from a database the migrations make now; whether it changed."""
    from citeaudit.store.connection import Transactions
    from citeaudit.store.migrations import migrate

    db = sqlite3.connect(":memory:", isolation_level=None)
    try:
        migrate(db, Transactions(db, Path(":memory:"), 5.0), Path(":memory:"), stepwise=True)
        text = render(*snapshot(db))
    finally:
        db.close()
    if path.exists() and path.read_text(encoding="utf-8") == text:
        return False
    path.write_text(text, encoding="utf-8")
    return True
