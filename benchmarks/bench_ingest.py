"""Ingest throughput: 100 000 Perplexity Sonar answers (about 8 citations each) into a new database, as
`citeaudit ingest` imports them (the file built beside its path and published when complete, secondary indexes
built after the rows, chunks written by a second thread while the next is read when a second core is idle).

Baselines in the same run: parsing the same JSON Lines with the standard library alone (``json.loads`` per
line), the floor any reader pays; and two SQLite floors: the rows citeaudit wrote (answers, citations, claims,
edges, edge locations) inserted again, nothing else, into a new database whose tables have no
index, key or constraint (the floor any writer of those rows pays on this machine), and into citeaudit's own
schema (keys, checks and the indexes the queue and the scores read, the secondary ones built after the rows,
with the connection settings the importer uses for a new database: the floor of any writer of this schema).
Both are written 64 rows to an INSERT statement (``citeaudit.store.sqlite.insert_rows``, as the importer
writes them). Every import runs both ways, with the writer thread and with every chunk written on the reading
thread (no overlap), alternately; the figure is the way the command took at most of them. Also timed: reading,
checking and assembling alone (no database), which with the schema's floor bounds what any overlap can reach.
Reported: answers/s end to end (read, check, assemble, write), the ratio of ingest time to JSON parsing time,
and the share of the target's time budget that JSON parsing plus each floor already take. Target: at least
5 000 answers/s, at most 20x the time of ``json.loads``, peak RSS at most 1 GB.

Run: make bench   (or: python benchmarks/bench_ingest.py [--answers N])
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import resource
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from citeaudit import Protocol, Question, Store
from citeaudit.ingest import READERS, Attachment, ingest_files, plan_imports
from citeaudit.ingest.assemble import assemble_chunks
from citeaudit.store import ImportReport
from citeaudit.store.connection import connect
from citeaudit.store.pipeline import second_core_idle
from citeaudit.store.sqlite import drop_secondary_indexes, insert_rows
from citeaudit.store.writers import new_database

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
    key or constraint, and into citeaudit's own schema (a new store, the rows they refer to already there);
    and the number of rows."""
    tables = _rows(db, FLOOR_TABLES)
    bare = sqlite3.connect(folder / f"floor-bare-{attempt}.db", isolation_level=None)
    try:
        # a new file, written as the importer writes one (store/connection.py, new=True)
        bare.execute("PRAGMA journal_mode = DELETE")
        bare.execute("PRAGMA synchronous = FULL")
        for table, (width, _) in tables.items():
            bare.execute(f"CREATE TABLE {table} ({', '.join(f'c{i}' for i in range(width))})")
        start = time.perf_counter()
        _insert(bare, tables)
        bare_seconds = time.perf_counter() - start
    finally:
        bare.close()
    schema_db = folder / f"floor-schema-{attempt}.db"
    with Store(schema_db, new=True):
        pass  # citeaudit's schema, migrations applied
    schema = connect(schema_db, bulk=True, new=True)  # the store's own settings for a new database
    try:
        _insert(schema, _rows(db, PREREQUISITES))
        # as the importer does into empty tables: their secondary indexes are built once, after the rows
        deferred = drop_secondary_indexes(schema)
        start = time.perf_counter()
        _insert(schema, tables, after=tuple(deferred))
        schema_seconds = time.perf_counter() - start
    finally:
        schema.close()
    return bare_seconds, schema_seconds, sum(len(rows) for _, rows in tables.values())


def ingest(
    payloads: Path, db: Path, attachment: Attachment, *, thread: bool | None = None
) -> tuple[float, float, ImportReport]:
    """Wall and CPU seconds of the import `citeaudit ingest` makes into the new database ``db`` (``thread``:
    chunks written by a second thread or not; ``None``: as the command decides, by whether a second core is
    idle), and its report."""
    default = Store.write_thread
    Store.write_thread = thread
    try:
        start, cpu = time.perf_counter(), time.process_time()
        with new_database(db) as target, Store(target, new=target != db) as store:
            ((_, _, report),) = ingest_files(store, plan_imports([payloads]), attachment=attachment)
        return time.perf_counter() - start, time.process_time() - cpu, report
    finally:
        Store.write_thread = default


def read_and_assemble(payloads: Path, attachment: Attachment) -> float:
    """Seconds to read, check and assemble every answer into chunks as the import does, writing nothing."""
    data = payloads.read_bytes()
    start = time.perf_counter()
    enabled = gc.isenabled()
    gc.disable()  # as the import runs
    try:
        parsed = READERS["perplexity"].read_answers(data, str(payloads))
        for _ in assemble_chunks(parsed, attachment, str(payloads), "0" * 64, "perplexity"):
            pass
    finally:
        if enabled:
            gc.enable()
    return time.perf_counter() - start


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
        attachment = Attachment(protocol, run_id="bench")
        load_before = os.getloadavg()[0]
        runs: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
        report = None
        chosen: list[bool] = []
        for attempt in range(args.repeat):  # alternately, so a change in the machine's load moves both
            chosen.append(second_core_idle())  # what the command would decide now
            for thread in (True, False):
                db = Path(folder) / f"bench-{attempt}-{thread}.db"
                wall, cpu, report = ingest(payloads, db, attachment, thread=thread)
                runs[thread].append((wall, cpu))
        peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # before the floors load every row
        assembling = statistics.median(read_and_assemble(payloads, attachment) for _ in range(args.repeat))
        db = Path(folder) / "bench-0-True.db"
        floors = [sqlite_floors(db, Path(folder), attempt) for attempt in range(args.repeat)]
        load_after = os.getloadavg()[0]
        floor, schema_floor = statistics.median(f[0] for f in floors), statistics.median(f[1] for f in floors)
        rows = floors[0][2]
        parse = statistics.median(parse_times)
        # The figure is the way the command takes: its default, or (when the default is to decide by the machine)
        # the way it took at most of these imports (a writer thread if a core was idle)
        default = Store.write_thread
        command_thread = sum(chosen) * 2 > len(chosen) if default is None else default
        ingest_seconds = statistics.median(wall for wall, _ in runs[command_thread])
        ingest_cpu = statistics.median(cpu for _, cpu in runs[command_thread])
        other_seconds = statistics.median(wall for wall, _ in runs[not command_thread])
        rate = args.answers / ingest_seconds
        assert report is not None
        print(
            f"ingest of {args.answers:,} Sonar answers ({size_mb:.0f} MB JSON Lines), median of {args.repeat}, "
            f"load average {load_before:.1f} before, {load_after:.1f} after:"
        )
        print(f"  json.loads alone     {parse:6.2f} s  ({args.answers / parse:,.0f} answers/s)")
        print(
            f"  citeaudit ingest     {ingest_seconds:6.2f} s  ({rate:,.0f} answers/s; CPU {ingest_cpu:.2f} s, "
            f"{ingest_cpu / ingest_seconds:.2f} cores busy); ratio to JSON parsing {ingest_seconds / parse:.1f}x"
        )
        ways = {True: "chunks written by a second thread", False: "every chunk written on the reading thread"}
        threaded_seconds = ingest_seconds if command_thread else other_seconds
        inline_seconds = other_seconds if command_thread else ingest_seconds
        print(
            f"    the command takes: {ways[command_thread]} (a second core idle at {sum(chosen)} of {len(chosen)} "
            f"imports); {ways[not command_thread]} instead: {other_seconds:6.2f} s "
            f"({args.answers / other_seconds:,.0f} answers/s); the writer thread takes "
            f"{threaded_seconds / inline_seconds:.2f}x the time of writing on the reading thread"
        )
        print(
            f"  wrote {report.answers:,} answers, {report.claims:,} claims, {report.edges:,} edges from "
            f"{report.locations:,} locations, {report.dangling:,} dangling markers, {report.sources_new:,} sources"
        )
        print(
            f"  SQLite floor         {floor:6.2f} s  ({rows:,} rows, {rows / args.answers:.1f} per answer, into bare "
            f"tables: {floor / rows * 1e6:.2f} us a row); ratio of ingest to floor {ingest_seconds / floor:.1f}x"
        )
        print(
            f"  the same rows into citeaudit's schema (its keys, checks and indexes) {schema_floor:6.2f} s "
            f"({args.answers / schema_floor:,.0f} answers/s at most for any writer of this schema)"
        )
        bound = args.answers / max(assembling, schema_floor)
        print(
            f"  reading, checking and assembling alone (nothing written) {assembling:6.2f} s "
            f"({args.answers / assembling:,.0f} answers/s); with the schema's floor wholly overlapped on a second "
            f"core, at most {bound:,.0f} answers/s and {max(assembling, schema_floor) / parse:.1f}x json.loads; "
            f"on one core, at most {args.answers / (assembling + schema_floor):,.0f} answers/s"
        )
        print(f"  peak RSS of the benchmark process after the imports: {peak_mib:,.0f} MiB ({size_mb:.0f} MB payload)")
        budget = args.answers / 5000
        print(
            f"  the target's budget of {budget:.0f} s is {(parse + floor) / budget:.0%} spent by JSON parsing plus the "
            f"bare SQLite floor alone, {(parse + schema_floor) / budget:.0%} with citeaudit's schema"
        )
        verdicts = [
            (f">= 5 000 answers/s ({rate:,.0f})", rate >= 5000),
            (f"<= 20x json.loads ({ingest_seconds / parse:.1f}x)", ingest_seconds / parse <= 20),
            (f"peak RSS <= 1 GB ({peak_mib:,.0f} MiB)", peak_mib <= 1024),
        ]
        print("target: " + "; ".join(f"{text}: {'met' if ok else 'not met'}" for text, ok in verdicts))


if __name__ == "__main__":
    main()
