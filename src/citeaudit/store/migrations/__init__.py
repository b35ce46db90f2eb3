"""Forward-only schema migrations. Migration ``n`` takes a database from version ``n`` to ``n + 1``; the
schema version lives in ``PRAGMA user_version``. Never edit a released migration: append a new one.

The migrations are kept by era: :mod:`~citeaudit.store.migrations.ledger` (versions 1 to 8),
:mod:`~citeaudit.store.migrations.assistance` (the later scripts) and :mod:`~citeaudit.store.migrations.rebuild`
(the migrations that change constraints by rebuilding tables). Every one is made of documented SQLite statements
(``CREATE``, ``ALTER TABLE … ADD COLUMN``, ``ALTER TABLE … RENAME``, ``DROP``, ``INSERT … SELECT``): none edits
``sqlite_master``, so they run on an SQLite that refuses that (``SQLITE_DBCONFIG_DEFENSIVE``)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

from citeaudit.core.errors import SchemaVersionMismatch
from citeaudit.store.migrations.assistance import (
    CROSS_PAIRS,
    JUDGEMENT_MOVE_GUARD,
    RESPONSE_IDS,
    RETRIEVAL_REASON,
    REVIEW_ASSISTANCE,
    REVIEW_ASSISTANCE_INDEX,
    REVIEW_LEASES,
    REVIEWER_PROGRESS,
    SHARED_INDEXES,
    SUGGESTED_PASSAGES,
)
from citeaudit.store.migrations.ledger import LEDGER
from citeaudit.store.migrations.rebuild import (
    check_lists_as_comparisons,
    unique_keys_as_indexes,
    window_suggestion_methods,
)

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "Migration", "migrate", "statements"]

Migration = str | Callable[[sqlite3.Connection], None]
"""An SQL script, or a function given the connection inside the migration's transaction."""

MIGRATIONS: tuple[Migration, ...] = (
    *LEDGER,
    RETRIEVAL_REASON,
    JUDGEMENT_MOVE_GUARD,
    SUGGESTED_PASSAGES,
    check_lists_as_comparisons,
    window_suggestion_methods,
    CROSS_PAIRS,
    RESPONSE_IDS,
    REVIEWER_PROGRESS,
    REVIEW_ASSISTANCE,
    REVIEW_ASSISTANCE_INDEX,
    REVIEW_LEASES,
    unique_keys_as_indexes,
    SHARED_INDEXES,
)
"""``MIGRATIONS[n]`` upgrades schema version ``n`` to ``n + 1``."""

SCHEMA_VERSION = len(MIGRATIONS)
"""The schema version this citeaudit writes."""


def migrate(
    db: sqlite3.Connection,
    transaction: Callable[[], AbstractContextManager[sqlite3.Connection]],
    path: Path,
    *,
    stepwise: bool = False,
) -> None:
    """Bring the database at ``path`` (open on ``db``, outside any transaction) to :data:`SCHEMA_VERSION`, one
    migration to a transaction made by ``transaction``; a database newer than this citeaudit is refused
    (:class:`~citeaudit.core.errors.SchemaVersionMismatch`).

    A new database (version 0, no schema object) is made in one transaction from the schema the migrations leave
    (:mod:`~citeaudit.store.migrations.current`), unless ``stepwise``: then, as for any older database, the
    migrations run one by one.

    Foreign keys are off while migrations run, as SQLite's procedure for schema changes asks: a table rebuild
    drops a table that others refer to (:func:`rebuild_tables` checks the keys itself before its commit). The
    setting can only change outside a transaction, so it is set here, around them all."""
    version = _version(db, path)
    if version == SCHEMA_VERSION:
        return
    if version == 0 and not stepwise and _made_new(db, transaction):
        return
    version = _version(db, path)  # another process may have made or migrated it meanwhile
    db.execute("PRAGMA foreign_keys = OFF")
    try:
        for target in range(version, SCHEMA_VERSION):
            with transaction():
                migration = MIGRATIONS[target]
                if callable(migration):
                    migration(db)
                else:
                    for statement in statements(migration):
                        db.execute(statement)
                db.execute(f"PRAGMA user_version = {target + 1}")
    finally:
        db.execute("PRAGMA foreign_keys = ON")


def _version(db: sqlite3.Connection, path: Path) -> int:
    """The database's schema version; one newer than this citeaudit's is refused."""
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    if version > SCHEMA_VERSION:
        raise SchemaVersionMismatch(
            f"{str(path)!r} has schema version {version}, newer than this citeaudit's "
            f"{SCHEMA_VERSION}; upgrade citeaudit to use it"
        )
    return version


def _made_new(db: sqlite3.Connection, transaction: Callable[[], AbstractContextManager[sqlite3.Connection]]) -> bool:
    """Make the newest schema in one step if the database is still empty (checked under the write lock, as another
    process may be making it too) and ``schema.sql`` holds that version; whether it was made."""
    from citeaudit.store.migrations import current

    with transaction():
        empty = db.execute("SELECT NOT EXISTS (SELECT 1 FROM sqlite_master)").fetchone()[0]
        if not empty or int(db.execute("PRAGMA user_version").fetchone()[0]) != 0:
            return False
        return current.apply(db, SCHEMA_VERSION)


def statements(script: str, *, verbatim: bool = False) -> list[str]:
    """Split a migration script into statements (triggers keep their inner semicolons), leaving out blank and
    comment lines. ``verbatim``: only those between statements, each statement as written but for its closing
    semicolon, and a script that ends inside a statement is a ``ValueError`` (``schema.sql``, whose statements are
    what SQLite stored)."""
    found: list[str] = []
    buffer: list[str] = []
    for line in script.splitlines():
        if (not buffer or not verbatim) and (not line.strip() or line.strip().startswith("--")):
            continue
        buffer.append(line)
        joined = "\n".join(buffer)
        if sqlite3.complete_statement(joined):
            found.append(joined.rstrip().removesuffix(";") if verbatim else joined)
            buffer = []
    if buffer and verbatim:
        raise ValueError("the script ends inside a statement")
    return found
