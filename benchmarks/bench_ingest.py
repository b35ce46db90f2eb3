"""Ingest throughput: 100 000 Perplexity Sonar answers (about 8 citations each) into a fresh database.

Baselines in the same run: parsing the same JSON Lines with the standard library alone (``json.loads`` per
line), the floor any reader pays; and two SQLite floors: the rows citeaudit wrote (answers, citations, claims,
edges, edge locations) inserted again, nothing else, into a fresh database whose tables have no
index, key or constraint (the floor any writer of those rows pays on this machine), and into citeaudit's own
schema (keys, checks and the indexes the queue and the scores read, the queue's built after the rows as the
importer builds them in an empty database: the floor of any writer of this schema). Both are written 64 rows
to an INSERT statement (``citeaudit.store.sqlite.insert_rows``, as the importer writes them); one row to a
statement (bare ``executemany``) took about a fifth longer.
Reported: answers/s end to end (read, check, assemble, write), the ratio of ingest time to JSON parsing time,
and the share of the target's time budget that JSON parsing plus each floor already take. Target: at least
5 000 answers/s, at most 20x the time of ``json.loads``, peak RSS at most 1 GB.

Run: make bench   (or: python benchmarks/bench_ingest.py [--answers N])
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from citeaudit import Protocol, Question, Store
from citeaudit.ingest import READERS, Attachment, ingest_files
from citeaudit.store.sqlite import drop_queue_indexes, insert_rows

SITES = [f"https://www.site{n}.example.org" for n in range(400)] + ["https://www.axtorp-machines.com"]
PAGES_PER_SITE = 50
"""401 sites × 50 pages ≈ 20 000 distinct pages: engines cite the same pages again and again."""
SENTENCES = [
    "The AX220 has a 20 L tank",
    "It is rated IP54 and can run outdoors",
    "The maximum working pressure is 10 bar",
    "Axtorp gives a 3-year warranty on AX compressors",
    "Spare parts are supplied for 10 years after a model is discontinued",
    "The AX300 needs a 400 V three-phase supply",
    "Noise is rated at 68 dB(A) at 1 m",
    "Service is available in the EU, the UK and Norway",
]


def sonar_payload(rng: random.Random, n: int) -> dict[str, object]:
    """One Sonar chat.completions response with search_results and [n] markers."""
    results = [
        {
            "title": f"Result {k}",
            "url": f"{rng.choice(SITES)}/p/{rng.randrange(PAGES_PER_SITE)}?utm_source=perplexity",
            "date": "2026-10-01",
        }
        for k in range(8)
    ]
    parts = []
    for sentence in rng.sample(SENTENCES, 6):
        markers = "".join(f"[{rng.randrange(1, 9)}]" for _ in range(rng.choice((1, 1, 2))))
        parts.append(f"{sentence} {markers}.")
    return {
        "id": f"pplx-{n}",
        "model": "sonar-pro",
        "object": "chat.completion",
        "created": 1764460800,
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": " ".join(parts)}}
        ],
        "search_results": results,
        "usage": {"prompt_tokens": 12, "completion_tokens": 180, "total_tokens": 192},
    }


FLOOR_TABLES = ("answers", "citations", "claims", "edges", "edge_locations")
PREREQUISITES = ("protocols", "questions", "runs", "sources", "payloads", "imports")


def _rows(db: Path, tables: tuple[str, ...]) -> dict[str, tuple[int, list[tuple[object, ...]]]]:
    with sqlite3.connect(db) as source:
        return {
            table: (
                len(source.execute(f"SELECT * FROM {table} LIMIT 0").description),
                source.execute(f"SELECT * FROM {table}").fetchall(),
            )
            for table in tables
        }


def _insert(
    target: sqlite3.Connection, tables: dict[str, tuple[int, list[tuple[object, ...]]]], after: tuple[str, ...] = ()
) -> None:
    target.execute("BEGIN")
    for table, (width, rows) in tables.items():
        insert_rows(target, f"INSERT INTO {table} VALUES ({', '.join('?' * width)})", rows)
    for statement in after:
        target.execute(statement)
    target.execute("COMMIT")


def sqlite_floors(db: Path, folder: Path, attempt: int) -> tuple[float, float, int]:
    """Seconds to insert ``db``'s rows of FLOOR_TABLES again, nothing else: into tables without index,
    key or constraint, and into citeaudit's own schema (a fresh store, the rows they refer to already there);
    and the number of rows."""
    tables = _rows(db, FLOOR_TABLES)
    bare = sqlite3.connect(folder / f"floor-bare-{attempt}.db", isolation_level=None)
    try:
        bare.execute("PRAGMA journal_mode = WAL")
        bare.execute("PRAGMA synchronous = NORMAL")
        for table, (width, _) in tables.items():
            bare.execute(f"CREATE TABLE {table} ({', '.join(f'c{i}' for i in range(width))})")
        start = time.perf_counter()
        _insert(bare, tables)
        bare_seconds = time.perf_counter() - start
    finally:
        bare.close()
    schema_db = folder / f"floor-schema-{attempt}.db"
    with Store(schema_db):
        pass  # citeaudit's schema, migrations applied
    schema = sqlite3.connect(schema_db, isolation_level=None)
    try:
        # the store's own settings (sqlite.Store.__init__)
        for pragma in ("foreign_keys = ON", "journal_mode = WAL", "synchronous = NORMAL", "cache_size = -262144"):
            schema.execute(f"PRAGMA {pragma}")
        _insert(schema, _rows(db, PREREQUISITES))
        # as the importer does into an empty database: the queue indexes are built once, after the rows
        queue = drop_queue_indexes(schema)
        start = time.perf_counter()
        _insert(schema, tables, after=tuple(queue))
        schema_seconds = time.perf_counter() - start
    finally:
        schema.close()
    return bare_seconds, schema_seconds, sum(len(rows) for _, rows in tables.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(11)
    protocol = Protocol("bench", "1", questions=(Question("q1", "Tell me about the AX220."),))
    with tempfile.TemporaryDirectory() as folder:
        payloads = Path(folder) / "sonar.jsonl"
        with payloads.open("w", encoding="utf-8") as out:
            for n in range(args.answers):
                out.write(json.dumps(sonar_payload(rng, n)) + "\n")
        size_mb = payloads.stat().st_size / 1e6
        parse_times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            with payloads.open(encoding="utf-8") as lines:
                for line in lines:
                    json.loads(line)
            parse_times.append(time.perf_counter() - start)
        ingest_times = []
        for attempt in range(args.repeat):
            db = Path(folder) / f"bench-{attempt}.db"
            start = time.perf_counter()
            with Store(db) as store:
                ((_, _, report),) = ingest_files(
                    store, [payloads], READERS["perplexity"], Attachment(protocol, run_id="bench")
                )
            ingest_times.append(time.perf_counter() - start)
        peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # before the floors load every row
        floors = [sqlite_floors(db, Path(folder), attempt) for attempt in range(args.repeat)]
        floor, schema_floor = statistics.median(f[0] for f in floors), statistics.median(f[1] for f in floors)
        rows = floors[0][2]
        parse, ingest = statistics.median(parse_times), statistics.median(ingest_times)
        rate = args.answers / ingest
        print(f"ingest of {args.answers:,} Sonar answers ({size_mb:.0f} MB JSON Lines), median of {args.repeat}:")
        print(f"  json.loads alone     {parse:6.2f} s  ({args.answers / parse:,.0f} answers/s)")
        print(
            f"  citeaudit ingest     {ingest:6.2f} s  ({rate:,.0f} answers/s); "
            f"ratio to JSON parsing {ingest / parse:.1f}x"
        )
        print(
            f"  wrote {report.answers:,} answers, {report.claims:,} claims, {report.edges:,} edges from "
            f"{report.locations:,} locations, {report.dangling:,} dangling markers, {report.sources_new:,} sources"
        )
        print(
            f"  SQLite floor         {floor:6.2f} s  ({rows:,} rows, {rows / args.answers:.1f} per answer, into bare "
            f"tables: {floor / rows * 1e6:.2f} us a row); ratio of ingest to floor {ingest / floor:.1f}x"
        )
        print(
            f"  the same rows into citeaudit's schema (its keys, checks and indexes) {schema_floor:6.2f} s "
            f"({args.answers / schema_floor:,.0f} answers/s at most for any writer of this schema)"
        )
        print(f"  peak RSS of the benchmark process after the imports: {peak_mib:,.0f} MiB ({size_mb:.0f} MB payload)")
        budget = args.answers / 5000
        print(
            f"  the target's budget of {budget:.0f} s is {(parse + floor) / budget:.0%} spent by JSON parsing plus the "
            f"bare SQLite floor alone, {(parse + schema_floor) / budget:.0%} with citeaudit's schema"
        )
        verdicts = [
            (f">= 5 000 answers/s ({rate:,.0f})", rate >= 5000),
            (f"<= 20x json.loads ({ingest / parse:.1f}x)", ingest / parse <= 20),
            (f"peak RSS <= 1 GB ({peak_mib:,.0f} MiB)", peak_mib <= 1024),
        ]
        print("target: " + "; ".join(f"{text}: {'met' if ok else 'not met'}" for text, ok in verdicts))


if __name__ == "__main__":
    main()
