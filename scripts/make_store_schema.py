"""Write src/citeaudit/store/migrations/schema.sql, the schema a new database is made from, from a database the
migrations make now (a test checks it is current). Run it after adding a migration.

Run: python scripts/make_store_schema.py
"""

from __future__ import annotations

from citeaudit.store.migrations import current

if __name__ == "__main__":
    print(f"{current.SCHEMA_FILE}: {'written' if current.write() else 'up to date'}")
