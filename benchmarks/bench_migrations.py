"""The CHECK-list migration: what rewriting ``column IN ('a', 'b', 'c')`` as comparisons buys when writing rows,
and what rebuilding the tables to do it costs a ledger that already holds rows.

A ledger is made at the schema version just before the rewrite (its CHECK constraints still lists) and filled with
generated rows: N answers, 10 citations, 3 claims and 6 edges per answer, 2 judgements per 6 edges. One copy is
migrated to the newest schema (the rewrite rebuilds nine tables: their rows are copied once), timed. Another is
migrated by the rewrite alone, so that it differs from the first only in its CHECK constraints (later migrations
add an index on citations, which every citation row then costs). Then the same 100 000 citation rows are written
into the copy with lists and the rewritten one inside a transaction that is rolled back, one row to a
statement (``executemany``) and 64 to a statement (``insert_rows``, as an import writes), alternately, timed in
CPU seconds of this process: the rows stay in the page cache until the rollback, so the work is CPU, and CPU time
moves far less than wall time on a shared machine.

Target: the migrated schema writes citations at least as fast as the lists did (ratio <= 1.0).

Run: python benchmarks/bench_migrations.py [--answers N] [--repeat R]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from citeaudit.store import migrations
from citeaudit.store.bulk import insert_rows
from citeaudit.store.connection import Transactions, connect
from citeaudit.store.migrations.rebuild import check_lists_as_comparisons

_CITATION = (
    'INSERT INTO citations (answer_pk, ordinal, source_pk, url, title, marker, kind, start, "end", quote) '
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_SERIES = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {count}) "


REWRITE = migrations.MIGRATIONS.index(check_lists_as_comparisons)
"""The schema version the CHECK-list rewrite starts from."""


@contextmanager
def _schema_up_to(version: int) -> Iterator[None]:
    """Migrations run only up to schema ``version`` while inside."""
    kept = migrations.MIGRATIONS, migrations.SCHEMA_VERSION
    migrations.MIGRATIONS, migrations.SCHEMA_VERSION = migrations.MIGRATIONS[:version], version
    try:
        yield
    finally:
        migrations.MIGRATIONS, migrations.SCHEMA_VERSION = kept


def build(path: Path, answers: int) -> None:
    """A ledger at the version before the rewrite, with generated rows."""
    db = connect(path, bulk=True)
    with _schema_up_to(REWRITE):
        migrations.migrate(db, Transactions(db, path, 30.0), path)
    db.execute("BEGIN IMMEDIATE")
    db.execute("INSERT INTO protocols VALUES (1, 'sha256:p', 'p', '1', 'citeaudit-v1', '{}')")
    db.execute("INSERT INTO questions VALUES (1, 1, 0, 'q', 'Which tank?', NULL)")
    db.execute("INSERT INTO runs (pk, protocol_pk, id, kind) VALUES (1, 1, 'r', 'platform')")
    db.execute("INSERT INTO payloads VALUES ('x', 'application/json', 1, x'00', 't')")
    db.execute("INSERT INTO imports VALUES (1, 'x', 'o', 'audit-json', 't', '{}')")
    steps = [
        (
            answers,
            "INSERT INTO answers (pk, id, run_pk, question_pk, text, import_pk, retrieval) "
            "SELECT i, 'a' || i, 1, 1, 'The tank of the AX220 holds 20 mL, its manual says.', 1, 'used' FROM n",
        ),
        (
            answers,
            "INSERT INTO sources (pk, key, url, status, host, path) "
            "SELECT i, 'k' || i, 'https://x.example/' || i, 'resolved', 'x.example', '/' || i FROM n",
        ),
        (
            answers * 10,
            'INSERT INTO citations (answer_pk, ordinal, source_pk, url, marker, kind, start, "end") '
            f"SELECT (i - 1) / 10 + 1, (i - 1) % 10, (i * 7) % {answers} + 1, 'https://x.example/' || i, "
            "'[' || i || ']', 'cited', 1, 5 FROM n",
        ),
        (
            answers * 3,
            'INSERT INTO claims (pk, id, answer_pk, text, start, "end") '
            "SELECT i, 'c' || i, (i - 1) / 3 + 1, 'The tank holds 20 mL', 0, 20 FROM n",
        ),
        (
            answers * 6,
            f"INSERT INTO edges SELECT i, (i - 1) / 2 + 1, (i * 13) % {answers} + 1, 'unreviewed', 5, 1 FROM n",
        ),
        (
            answers * 2,
            "INSERT INTO judgements (edge_pk, label, reviewer, origin, stage, created_at) "
            "SELECT i * 3, 'supported', 'li', 'human', 'review', 't' FROM n",
        ),
    ]
    for count, sql in steps:
        db.execute(_SERIES.format(count=count) + sql)
    db.execute("COMMIT")
    db.close()


def migrate_to(path: Path, version: int) -> float:
    """Seconds to migrate ``path`` to schema ``version``."""
    db = connect(path, bulk=True)
    started = time.perf_counter()
    with _schema_up_to(version):
        migrations.migrate(db, Transactions(db, path, 30.0), path)
    seconds = time.perf_counter() - started
    db.close()
    return seconds


def write_citations(path: Path, rows: int, write: Callable[..., object]) -> float:
    """CPU seconds to write ``rows`` citation rows into ``path`` (rolled back afterwards)."""
    db = connect(path, bulk=True)
    (answer,) = db.execute("SELECT max(pk) FROM answers").fetchone()
    data = [(answer, 100 + i, None, "https://y.example/", None, "[1]", "cited", 1, 5, None) for i in range(rows)]
    db.execute("BEGIN IMMEDIATE")
    started = time.process_time()
    write(db, _CITATION, data)
    seconds = time.process_time() - started
    db.execute("ROLLBACK")
    db.close()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=20_000)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        lists, rebuilt, newest = (Path(folder) / f"{name}.db" for name in ("lists", "rebuilt", "newest"))
        build(lists, args.answers)
        shutil.copy(lists, rebuilt)
        shutil.copy(lists, newest)
        size = lists.stat().st_size / 1e6
        seconds = migrate_to(newest, migrations.SCHEMA_VERSION)
        rewrite_seconds = migrate_to(rebuilt, REWRITE + 1)
        print(
            f"{args.answers:,} answers, {args.answers * 10:,} citations, {args.answers * 6:,} edges, "
            f"{args.answers * 2:,} judgements ({size:.0f} MB): migrated to the newest schema in {seconds:.2f} s "
            f"(the CHECK-list rewrite alone {rewrite_seconds:.2f} s)"
        )
        ratios = []
        for label, write in (
            ("one row to a statement", lambda db, sql, rows: db.executemany(sql, rows)),
            ("64 rows to a statement", insert_rows),
        ):
            timed: dict[Path, list[float]] = {lists: [], rebuilt: []}
            for turn in range(args.repeat):
                for path in (lists, rebuilt) if turn % 2 else (rebuilt, lists):  # each goes first half the time
                    timed[path].append(write_citations(path, args.rows, write))
            before, after = (statistics.median(timed[path]) for path in (lists, rebuilt))
            ratios.append(after / before)
            print(
                f"  {args.rows:,} citations, {label}: CHECK lists {before:.3f} s CPU, comparisons {after:.3f} s "
                f"({after / before:.2f}x; median of {args.repeat})"
            )
    worst = max(ratios)
    print(
        f"target: the migrated schema writes at most 1.0x the lists' time ({worst:.2f}x): "
        f"{'met' if worst <= 1.0 else 'not met'}"
    )


if __name__ == "__main__":
    import machine

    machine.run(main)
