"""Ingest throughput: Perplexity Sonar answers into a new database, as `citeaudit ingest` imports them (the file
built beside its path and published when complete, secondary indexes built after the rows), both ways the command
can read a large payload: in its own process, and in a worker process that reads, checks and assembles the next
chunk while the command's process writes one (``citeaudit.ingest.worker``; the command takes it from 1 MB, 16 MB
where the worker cannot be its process forked, when a second CPU is idle).

Two kinds of answers, each measured on its own (``--answers N`` and ``--dense N``, 20 000 each by default): the
benchmark's answers (about 8 citations each, drawn from about 20 000 pages cited again and again, six sentences
with one or two markers) and dense ones (8 sentences, each a claim closed by one marker naming one of 8 search
results whose URLs no answer before cited: 8 claims, 8 new sources and 8 edges an answer).

Baselines in the same run, per kind: parsing the same JSON Lines with the standard library alone (``json.loads`` per
line), the floor any reader pays; and two SQLite floors: the rows citeaudit wrote (sources and their tie to the
protocol, answers, citations, claims, edges, edge locations) inserted again, nothing else, into a new database whose
tables have no index, key or constraint (the bare-table floor: what any writer of those rows pays on this machine), and
into citeaudit's own schema (keys, checks and the indexes the queue and the scores read, all of them, the unique ones
too, built after the rows as the importer builds them into empty tables, with the connection settings the importer uses
for a new database: the floor of any writer of this schema). Both are written 64 rows to an INSERT statement
(``citeaudit.store.bulk.insert_rows``, as the importer writes them), NULLs bound through the adapter the store
registers (``citeaudit.store.connection.bind_none_directly``; without it each NULL costs a failed adaptation, which
made the bare floor of dense answers about half as long again). Every import runs both ways, in turn, in the same
run; the figure held against the targets is the way the command took at most of them (it decides by the payload's size
and the load average as each import starts). Also timed: reading, checking and assembling alone into the rows the import
writes (no database), which with the schema's floor bounds what one core can reach, and what any overlap on two can
(``--objects``: the same through the model objects, as imports assembled answers before). Each import and each floor
runs in a fresh interpreter of its own, as the command runs each import in a fresh process, once the disk has taken
what the run's earlier steps wrote (``os.sync``), with citeaudit's modules compiled to bytecode first, as an installed
citeaudit has them; the databases no step reads again are removed. The URL keys worked out
by an earlier reading in this process are forgotten before each timed one.

Target (the one the project holds): the import within 3x of the bare-table floor, for both kinds: the median of the
imports the way the command takes against the floor at its best, the fastest of those measured right after the
imports read in a worker. The floor moves from run to run and within one run: measured apart with the disk settled,
0.51-0.58 s for the benchmark's answers in four runs, and for dense ones about 0.75 s or about 1.03 s (0.74-0.79 s in
one run, 0.75-1.03 s in another, 1.03-1.08 s in a third); measured in the benchmark's own process, 0.63-1.13 s in one
run. So the baseline is held at its best; the import against the median floor is printed beside it. Also printed:
at least 5 000 answers/s, at most 20x the time of ``json.loads``, peak RSS at most 1 GB (the two processes
together when a worker reads; a forked worker's peak counts the pages it shares with the writing process, so the sum
is an upper bound).

Also (``--streamed N``, alone with ``--streamed-only``): N of the same answers saved as Sonar streams them (Server-Sent
Events, a chunk every few words, each repeating the search results) against the same answers not streamed: events
read per second, and the ratio of the two times. Target: at most 2x.

Run: make bench   (or: python benchmarks/bench_ingest.py [--answers N] [--dense N] [--objects] [--streamed N]
[--streamed-only])
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import json
import multiprocessing
import os
import random
import resource
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import machine
from citeaudit import Protocol, Question, Store
from citeaudit.core import identity
from citeaudit.ingest import READERS, Attachment, ingest_files, plan_imports
from citeaudit.ingest import worker as worker_module
from citeaudit.ingest.assemble import assemble_chunks, assemble_rows
from citeaudit.ingest.worker import forks, reads_in_worker
from citeaudit.store import ImportReport
from citeaudit.store.bulk import IN_ORDER_INDEXES, drop_secondary_indexes, insert_rows
from citeaudit.store.chunk_rows import rows_of
from citeaudit.store.connection import bind_none_directly, connect
from citeaudit.store.pipeline import usable_cores
from citeaudit.store.writers import new_database, remove_database

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


def sonar_stream(payload: dict[str, Any], words: int = 4) -> str:
    """The Server-Sent Events body Sonar streams for ``payload``: a chunk every few words of the answer, each
    repeating the search results, then a chunk with the finish reason and ``[DONE]``."""
    choice = payload["choices"][0]  # type: ignore[index]
    content = choice["message"]["content"]
    tokens = content.split(" ")
    pieces = [" ".join(tokens[i : i + words]) + " " for i in range(0, len(tokens), words)]
    pieces[-1] = pieces[-1][:-1]
    envelope = {k: v for k, v in payload.items() if k not in ("choices", "object")}
    events = [
        {**envelope, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": piece}}]}
        for piece in pieces
    ]
    events.append(
        {**envelope, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    )
    return "".join(f"data: {json.dumps(event)}\r\n\r\n" for event in events) + "data: [DONE]\r\n\r\n"


def streamed_row(documents: list[dict[str, Any]], folder: Path, attachment: Attachment, repeat: int) -> None:
    """Reading the same answers streamed (one Sonar event stream after another in one file) against reading them
    not streamed (JSON Lines): events/s, and the ratio of the two times; each beside ``json.loads`` of its bytes."""
    streamed, whole = folder / "sonar-streams.sse", folder / "sonar-whole.jsonl"
    streamed.write_text("".join(sonar_stream(document) for document in documents), encoding="utf-8")
    whole.write_text("".join(json.dumps(document) + "\n" for document in documents), encoding="utf-8")
    events = streamed.read_bytes().count(b"\ndata: ") + 1

    def loads(path: Path) -> float:
        start = time.perf_counter()
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("data: {"):
                json.loads(line[6:])
            elif line.startswith("{"):
                json.loads(line)
        return time.perf_counter() - start

    stream_s = statistics.median(read_and_assemble(streamed, attachment) for _ in range(repeat))
    whole_s = statistics.median(read_and_assemble(whole, attachment) for _ in range(repeat))
    stream_json = statistics.median(loads(streamed) for _ in range(repeat))
    whole_json = statistics.median(loads(whole) for _ in range(repeat))
    ratio = stream_s / whole_s
    answers = len(documents)
    print(
        f"  streamed: {answers:,} Sonar answers as event streams ({streamed.stat().st_size / 1e6:.1f} MB, "
        f"{events:,} events, {events / answers:.0f} an answer, the search results in every one) read and assembled "
        f"in {stream_s:.2f} s ({events / stream_s:,.0f} events/s, {answers / stream_s:,.0f} answers/s); the same "
        f"answers not streamed ({whole.stat().st_size / 1e6:.1f} MB) {whole_s:.2f} s: {ratio:.2f}x their time "
        f"(target <= 2x: {'met' if ratio <= 2 else 'not met'}); json.loads of the events alone {stream_json:.2f} s, "
        f"{stream_json / whole_json:.1f}x that of the documents ({whole_json:.2f} s)"
    )


FLOOR_TABLES = ("sources", "protocol_sources", "answers", "citations", "claims", "edges", "edge_locations")
"""Every table an import of engine answers writes rows to (a row each for its runs and the import aside): the
floors are these rows written again."""
PREREQUISITES = ("protocols", "questions", "runs", "payloads", "imports")


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
    target: sqlite3.Connection,
    tables: dict[str, tuple[int, list[tuple[object, ...]]]],
    after: tuple[str, ...] = (),
    verb: str = "INSERT",
) -> None:
    target.execute("BEGIN")
    for table, (width, rows) in tables.items():
        insert_rows(target, f"{verb} INTO {table} VALUES ({', '.join('?' * width)})", rows)
    for statement in after:
        target.execute(statement)
    target.execute("COMMIT")


def sqlite_floors(db: Path, folder: Path, attempt: int | str) -> tuple[float, float, int, int]:
    """Seconds to insert ``db``'s rows of FLOOR_TABLES again, nothing else: into tables without index,
    key or constraint, and into citeaudit's own schema (a new store, the rows they refer to already there, written
    as an import writes them); the number of rows; and the page faults of the insert into bare tables."""
    tables = _rows(db, FLOOR_TABLES)
    bind_none_directly()  # the floors at their best: NULLs bound as the importer binds them (registered already)
    bare = sqlite3.connect(folder / f"floor-bare-{attempt}.db", isolation_level=None)
    try:
        # a new file, written as the importer writes one (store/connection.py, new=True)
        bare.execute("PRAGMA journal_mode = DELETE")
        bare.execute("PRAGMA synchronous = FULL")
        for table, (width, _) in tables.items():
            bare.execute(f"CREATE TABLE {table} ({', '.join(f'c{i}' for i in range(width))})")
        settle_disk()
        faults, start = _faults(), time.perf_counter()
        _insert(bare, tables)
        bare_seconds, bare_faults = time.perf_counter() - start, _faults() - faults
    finally:
        bare.close()
        remove_database(folder / f"floor-bare-{attempt}.db")
    schema_db = folder / f"floor-schema-{attempt}.db"
    with Store(schema_db, new=True):
        pass  # citeaudit's schema, migrations applied
    schema = connect(schema_db, bulk=True, new=True)  # the store's own settings for a new database
    try:
        _insert(schema, _rows(db, PREREQUISITES))
        # as an import writes: SQLite does not check each reference as its row is written (Store.import_transaction)
        schema.execute("PRAGMA foreign_keys = OFF")
        # as the importer does into empty tables: their indexes, the unique ones too, are built once, after the rows,
        # but for those the rows fill in order
        deferred = drop_secondary_indexes(schema, unique=True, keep=IN_ORDER_INDEXES)
        settle_disk()
        start = time.perf_counter()
        # as the importer writes them, INSERT OR FAIL: SQLite keeps no statement journal (store/importing.py)
        _insert(schema, tables, after=tuple(deferred), verb="INSERT OR FAIL")
        schema_seconds = time.perf_counter() - start
    finally:
        schema.close()
        remove_database(schema_db)
    return bare_seconds, schema_seconds, sum(len(rows) for _, rows in tables.values()), bare_faults


def settle_disk() -> None:
    """Write what earlier steps of the run left to the disk (the databases they made and removed), before a step is
    timed: the kernel would otherwise write it back meanwhile, on the same two cores, and a commit's sync could wait
    for it. Every import and every floor is timed after it."""
    if hasattr(os, "sync"):
        os.sync()


def floors_apart(db: Path, folder: Path, attempt: int | str) -> tuple[float, float, int, int]:
    """:func:`sqlite_floors` in a fresh interpreter of its own (:func:`_apart`), as each import is measured."""
    return _apart(sqlite_floors, db, folder, attempt)


_T = TypeVar("_T")


def _apart(function: Callable[..., _T], *args: object) -> _T:
    """``function(*args)`` in a fresh interpreter, started for it (not forked from this one). Each import and each
    floor is measured so, as the command runs each import in a fresh process: one measured in this process, or in
    a process forked from it, finds the heap that the earlier imports, floors and reading here freed (hundreds of MB
    in scattered pieces). A dense import made right after one read in the importing process, as the runs alternate,
    took 2.25-2.32 s against 2.14-2.16 s after none (medians of 4, its worker forked from that heap the slower)."""
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(function, args)


def _peak_mib() -> float:
    """Peak RSS of this process since the last :func:`_reset_peak` (Linux), else since it started."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _reset_peak() -> None:
    """Start this process's peak RSS afresh (Linux: ``/proc/self/clear_refs``), so each import has its own."""
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _faults() -> int:
    """Page faults of this process and of its children waited for, so far (fresh pages and copies on write; those
    the system served without reading a file)."""
    return sum(resource.getrusage(who).ru_minflt for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))


class Timing:
    """One import: wall seconds, CPU seconds of this process and of the worker, peak RSS of each, the CPU seconds
    the host took from the machine meanwhile (steal time; 0 where it is not known) and the page faults of both."""

    def __init__(
        self,
        wall: float,
        cpu: float,
        worker_cpu: float,
        peak_mib: float,
        worker_peak_mib: float,
        steal: float = 0.0,
        faults: int = 0,
    ) -> None:
        self.wall, self.cpu, self.worker_cpu = wall, cpu, worker_cpu
        self.peak_mib, self.worker_peak_mib = peak_mib, worker_peak_mib
        self.steal, self.faults = steal, faults


class _Watched(worker_module.ReadAhead):
    """The worker-side reader, kept so its worker's peak RSS can be read."""

    made: ClassVar[list[_Watched]] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _Watched.made.append(self)


def ingest(payloads: Path, db: Path, attachment: Attachment, *, worker: bool) -> tuple[Timing, ImportReport]:
    """The import `citeaudit ingest` makes into the new database ``db``, its payload read in a worker process
    or in this one; how long it took and its report."""
    _reset_peak()
    _Watched.made.clear()
    original, worker_module.ReadAhead = worker_module.ReadAhead, _Watched
    try:
        steal, faults = machine.stolen(), _faults()
        start, cpu, children = time.perf_counter(), time.process_time(), _children_cpu()
        with new_database(db) as target, Store(target, new=target != db) as store:
            ((_, _, report),) = ingest_files(store, plan_imports([payloads]), attachment=attachment, worker=worker)
        wall, cpu, children = time.perf_counter() - start, time.process_time() - cpu, _children_cpu() - children
        faults = _faults() - faults
        steal_after = machine.stolen()
    finally:
        worker_module.ReadAhead = original
    worker_peak = sum((ahead.worker_peak or 0) for ahead in _Watched.made) / 2**20
    taken = steal_after - steal if steal is not None and steal_after is not None else 0.0
    return Timing(wall, cpu, children, _peak_mib(), worker_peak, taken, faults), report


def ingest_apart(payloads: Path, db: Path, attachment: Attachment, *, worker: bool) -> tuple[Timing, ImportReport]:
    """:func:`ingest` in a fresh interpreter of its own (:func:`_apart`), as the command runs it."""
    return _apart(_ingest_settled, payloads, db, attachment, worker)


def _ingest_settled(payloads: Path, db: Path, attachment: Attachment, worker: bool) -> tuple[Timing, ImportReport]:
    settle_disk()
    return ingest(payloads, db, attachment, worker=worker)


def read_and_assemble(payloads: Path, attachment: Attachment, *, objects: bool = False) -> float:
    """Seconds to read, check and assemble every answer into the rows of its chunk as the import does, writing
    nothing (``objects``: as imports did before, into model objects first, then their rows)."""
    data = payloads.read_bytes()
    _fresh_caches()
    start = time.perf_counter()
    enabled = gc.isenabled()
    gc.disable()  # as the import runs
    try:
        parsed = READERS["perplexity"].read_answers(data, str(payloads))
        if objects:
            sent: set[str] = set()
            for audit in assemble_chunks(parsed, attachment, str(payloads), "0" * 64, "perplexity"):
                rows_of(audit, sent)
        else:
            for _ in assemble_rows(parsed, attachment, str(payloads), "0" * 64, "perplexity"):
                pass
    finally:
        if enabled:
            gc.enable()
    return time.perf_counter() - start


def dense_payload(rng: random.Random, n: int) -> dict[str, object]:
    """A dense Sonar answer: 8 search results whose URLs no answer before cited, and 8 sentences, each closed
    by one marker naming one of them, so 8 claims, 8 new sources and 8 edges an answer."""
    payload = sonar_payload(rng, n)
    payload["search_results"] = [
        {"title": f"Result {k}", "url": f"{rng.choice(SITES)}/d/{n}/{k}?utm_source=perplexity", "date": "2026-10-01"}
        for k in range(8)
    ]
    text = " ".join(f"{sentence} [{k}]." for k, sentence in enumerate(rng.sample(SENTENCES, 8), start=1))
    payload["choices"][0]["message"]["content"] = text  # type: ignore[index]
    return payload


def _fresh_caches() -> None:
    """Forget the URL keys an earlier import in this process worked out, so each timed import pays for its own
    (the command runs in a fresh process)."""
    for cached in (identity.identity_url, identity.normalize_url, identity.effective_url):
        cached.cache_clear()


class Figures:
    """What one kind of answers measured: medians of the imports both ways, reading alone and the floors."""

    def __init__(self, label: str, answers: int, size_mb: float, parse: float) -> None:
        self.label, self.answers, self.size_mb, self.parse = label, answers, size_mb, parse
        self.runs: dict[bool, list[Timing]] = {True: [], False: []}
        self.chosen: list[bool] = []
        self.report: ImportReport | None = None
        self.assembling = self.floor = self.schema_floor = 0.0
        self.rows = 0
        self.floors: list[float] = []
        """The bare floor measured after each import read in a worker, in order."""
        self.floor_faults: list[int] = []
        """The page faults of each of those floors."""

    def median(self, in_worker: bool, field: str) -> float:
        """The median of ``field`` over the imports read in a worker (or not)."""
        return statistics.median(getattr(timing, field) for timing in self.runs[in_worker])

    @property
    def best_floor(self) -> float:
        """The bare floor at its best in the run: the fastest of those measured after the imports read in a worker
        (the floor has a slow mode, a fifth to a third slower); the import's target is held against it."""
        return min(self.floors)

    @property
    def command_worker(self) -> bool:
        """The way the command takes: the way it decided at most of these imports."""
        return sum(self.chosen) * 2 > len(self.chosen)

    @property
    def seconds(self) -> float:
        """The import's time the way the command takes."""
        return self.median(self.command_worker, "wall")


def _parse_seconds(payloads: Path) -> float:
    start = time.perf_counter()
    with payloads.open(encoding="utf-8") as lines:
        for line in lines:
            json.loads(line)
    return time.perf_counter() - start


def measure(label: str, payloads: Path, answers: int, attachment: Attachment, repeat: int, folder: Path) -> Figures:
    """Import ``payloads`` ``repeat`` times each way, in turn; read and assemble them alone; and the two SQLite
    floors, of the rows the first import read in a worker wrote, each time right after an import read in a worker
    (so that a change in the machine's speed moves an import and its floor alike)."""
    parse = statistics.median(_parse_seconds(payloads) for _ in range(repeat))
    figures = Figures(label, answers, payloads.stat().st_size / 1e6, parse)
    floors: list[tuple[float, float, int, int]] = []
    for attempt in range(repeat):  # in turn, so a change in the machine's load moves both
        figures.chosen.append(reads_in_worker(payloads.stat().st_size, None))  # what the command would decide now
        for in_worker in (True, False):
            db = folder / f"{label}-{attempt}-{in_worker}.db"
            timing, figures.report = ingest_apart(payloads, db, attachment, worker=in_worker)
            figures.runs[in_worker].append(timing)
            if in_worker:
                floors.append(floors_apart(folder / f"{label}-0-True.db", folder, f"{label}-{attempt}"))
            if attempt or not in_worker:  # the floors read the rows of the first import read in a worker
                remove_database(db)
    figures.floors = [floor for floor, _, _, _ in floors]
    figures.floor_faults = [faults for _, _, _, faults in floors]
    figures.assembling = statistics.median(read_and_assemble(payloads, attachment) for _ in range(repeat))
    figures.floor, figures.schema_floor = (
        statistics.median(f[0] for f in floors),
        statistics.median(f[1] for f in floors),
    )
    figures.rows = floors[0][2]
    return figures


def report_kind(figures: Figures) -> None:
    """The lines of one kind of answers."""
    n, parse, floor, schema_floor = figures.answers, figures.parse, figures.floor, figures.schema_floor
    in_seconds, worker_seconds = figures.median(False, "wall"), figures.median(True, "wall")
    report = figures.report
    assert report is not None
    print(
        f"{figures.label}: {n:,} Sonar answers ({figures.size_mb:.0f} MB JSON Lines), median of "
        f"{len(figures.chosen)}, load average {os.getloadavg()[0]:.1f}:"
    )
    print(f"  json.loads alone     {parse:6.2f} s  ({n / parse:,.0f} answers/s)")
    print(
        f"  read in the importing process {in_seconds:6.2f} s  ({n / in_seconds:,.0f} answers/s; "
        f"CPU {figures.median(False, 'cpu'):.2f} s); {in_seconds / floor:.1f}x the bare-table floor, "
        f"{in_seconds / parse:.1f}x json.loads"
    )
    print(
        f"  read in a worker process      {worker_seconds:6.2f} s  ({n / worker_seconds:,.0f} answers/s; CPU "
        f"{figures.median(True, 'cpu'):.2f} s writing, {figures.median(True, 'worker_cpu'):.2f} s in the worker); "
        f"{worker_seconds / floor:.1f}x the bare-table floor, {worker_seconds / parse:.1f}x json.loads; "
        f"{worker_seconds / in_seconds:.2f}x the time of reading in the importing process"
    )
    ways = {True: "read in a worker process", False: "read in the importing process"}
    seconds = figures.seconds
    print(
        f"  the command takes: {ways[figures.command_worker]} (a second CPU idle and the payload large enough at "
        f"{sum(figures.chosen)} of {len(figures.chosen)} imports): {seconds:.2f} s, {n / seconds:,.0f} answers/s, "
        f"{seconds / floor:.2f}x the bare-table floor, {seconds / schema_floor:.2f}x the schema's, "
        f"{seconds / parse:.1f}x json.loads"
    )
    print(
        f"  wrote {report.answers:,} answers, {report.claims:,} claims, {report.edges:,} edges from "
        f"{report.locations:,} locations, {report.dangling:,} dangling markers, {report.sources_new:,} sources"
    )
    print(
        f"  SQLite floor         {floor:6.2f} s  ({figures.rows:,} rows, {figures.rows / n:.1f} per answer, into bare "
        f"tables: {floor / figures.rows * 1e6:.2f} us a row)"
    )
    print(
        f"  the same rows into citeaudit's schema (its keys, checks and indexes, as an import writes them) "
        f"{schema_floor:6.2f} s "
        f"({schema_floor / floor:.2f}x the bare floor; {n / schema_floor:,.0f} answers/s at most for any writer of "
        "this schema)"
    )
    assembling = figures.assembling
    print(
        f"  reading, checking and assembling alone (nothing written) {assembling:6.2f} s "
        f"({n / assembling:,.0f} answers/s, {assembling / floor:.2f}x the bare floor, {assembling / parse:.1f}x "
        f"json.loads); on one core, with the schema's floor, at most {(assembling + schema_floor) / floor:.2f}x the "
        f"bare floor; with the two wholly overlapped on two cores, {max(assembling, schema_floor) / floor:.2f}x"
    )
    print(
        "  each import read in a worker against the bare floor measured right after it: "
        + ", ".join(
            f"{timing.wall:.2f} s / {floor:.2f} s = {timing.wall / floor:.2f}x"
            for timing, floor in zip(figures.runs[True], figures.floors, strict=True)
        )
    )
    cores = usable_cores()  # the cores both processes may run on
    spreads = [(timing.cpu + timing.worker_cpu) / cores for timing in figures.runs[True]]
    print(
        f"  the CPU time each import read in a worker used (writing + in the worker) spread evenly over {cores} "
        "cores, against the bare floor measured right after it (no schedule of that work beats it): "
        + ", ".join(
            f"({timing.cpu:.2f} + {timing.worker_cpu:.2f}) s / {cores} = {spread:.2f} s, {spread / floor:.2f}x"
            for timing, floor, spread in zip(figures.runs[True], figures.floors, spreads, strict=True)
        )
    )
    best = figures.best_floor
    spread = statistics.median(spreads)
    print(
        f"  against the bare floor at its best in this run ({best:.2f} s, the fastest of {len(figures.floors)}; the "
        f"median is {floor:.2f} s): the import the command takes {figures.seconds / best:.2f}x, its CPU time spread "
        f"evenly over {cores} cores (median {spread:.2f} s) {spread / best:.2f}x"
    )
    print(
        "  CPU time the host took during each import (steal): read in a worker "
        + ", ".join(f"{timing.steal:.2f}" for timing in figures.runs[True])
        + " s; read in the importing process "
        + ", ".join(f"{timing.steal:.2f}" for timing in figures.runs[False])
        + " s"
    )
    print(
        "  page faults (fresh pages and copies on write) during each import read in a worker, the writing process and "
        "the worker together: "
        + ", ".join(f"{timing.faults:,}" for timing in figures.runs[True])
        + "; during each bare floor: "
        + ", ".join(f"{faults:,}" for faults in figures.floor_faults)
        + " (a host slow to fault pages in moves the import more than its floor)"
    )
    in_peak = max(timing.peak_mib for timing in figures.runs[False])
    writer_peak = max(timing.peak_mib for timing in figures.runs[True])
    worker_peak = max(timing.worker_peak_mib for timing in figures.runs[True])
    print(
        f"  peak RSS ({figures.size_mb:.0f} MB payload): read in the importing process {in_peak:,.0f} MiB; read in a "
        f"worker {writer_peak:,.0f} MiB writing + {worker_peak:,.0f} MiB in the worker = "
        f"{writer_peak + worker_peak:,.0f} MiB"
        + (" (a forked worker's figure counts the pages it shares with the writer: an upper bound)" if forks() else "")
    )


def peak_of(figures: Figures) -> float:
    """Peak RSS (MiB) the way the command takes, the two processes together with a worker."""
    if figures.command_worker:
        return max(t.peak_mib for t in figures.runs[True]) + max(t.worker_peak_mib for t in figures.runs[True])
    return max(t.peak_mib for t in figures.runs[False])


def build() -> str:
    """Whether the modules setup.py compiles were compiled in this install, or run as their Python source."""
    names = machine.compiled_modules()
    files = [str(importlib.import_module(name).__file__) for name in names]
    kind = "Python source" if all(file.endswith(".py") for file in files) else "compiled (mypyc)"
    if len({file.endswith(".py") for file in files}) > 1:
        kind = "partly compiled"
    return f"citeaudit.{{{','.join(name.removeprefix('citeaudit.') for name in names)}}} {kind}"


def bytecode() -> str:
    """Compile citeaudit's modules to bytecode where they are not yet, as pip compiles a wheel's modules when it
    installs them: the import's fresh interpreter then reads the modules it loads as it reads (format detection,
    the readers, the store's) instead of compiling them each time, as an installed citeaudit runs. This machine sets
    ``PYTHONDONTWRITEBYTECODE``, so a source checkout would otherwise compile them in every import measured."""
    import compileall

    import citeaudit

    folder = Path(str(citeaudit.__file__)).parent
    compileall.compile_dir(folder, quiet=1)
    return f"citeaudit's modules compiled to bytecode in {folder}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=20_000, help="Sonar answers as the benchmark makes them")
    parser.add_argument(
        "--dense", type=int, default=20_000, help="dense answers: 8 claims, 8 new sources each (0: none)"
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=5,
        help="imports each way and floors per kind (medians); the floor moves by up to two fifths from one to the next",
    )
    parser.add_argument("--objects", action="store_true", help="also read the Sonar answers through model objects")
    parser.add_argument("--streamed", type=int, default=2_000, help="answers of the streamed row (0: none)")
    parser.add_argument("--streamed-only", action="store_true", help="run the streamed row alone")
    args = parser.parse_args()
    print(f"build: {build()}; {bytecode()}")
    rng = random.Random(11)
    protocol = Protocol("bench", "1", questions=(Question("q1", "Tell me about the AX220."),))
    attachment = Attachment(protocol, run_id="bench")
    if args.streamed_only:
        with tempfile.TemporaryDirectory() as folder:
            documents = [sonar_payload(rng, n) for n in range(args.streamed)]
            print(f"load average {os.getloadavg()[0]:.1f}, median of {args.repeat}:")
            streamed_row(documents, Path(folder), attachment, args.repeat)
        return
    kinds: list[Figures] = []
    with tempfile.TemporaryDirectory() as folder:
        for label, count, make in (("sonar", args.answers, sonar_payload), ("dense", args.dense, dense_payload)):
            if count <= 0:
                continue
            payloads = Path(folder) / f"{label}.jsonl"
            kind_rng = random.Random(11)
            with payloads.open("w", encoding="utf-8") as out:
                for n in range(count):
                    out.write(json.dumps(make(kind_rng, n)) + "\n")
            kinds.append(measure(label, payloads, count, attachment, args.repeat, Path(folder)))
            report_kind(kinds[-1])
            if label == "sonar" and args.objects:
                through_objects = statistics.median(
                    read_and_assemble(payloads, attachment, objects=True) for _ in range(args.repeat)
                )
                print(
                    f"    reading through model objects first (answers, citations, claims, edges, locations), as "
                    f"imports read before: {through_objects:6.2f} s ({count / through_objects:,.0f} answers/s, "
                    f"{through_objects / kinds[-1].parse:.1f}x json.loads)"
                )
            payloads.unlink()
        if args.streamed:
            documents = [sonar_payload(rng, n) for n in range(args.streamed)]
            streamed_row(documents, Path(folder), attachment, args.repeat)
    verdicts: list[tuple[str, bool]] = []
    for figures in kinds:
        rate, ratio = figures.answers / figures.seconds, figures.seconds / figures.parse
        best = figures.best_floor
        verdicts += [
            (
                f"{figures.label} within 3x of the bare-table floor at its best ({figures.seconds / best:.2f}x; "
                f"{figures.seconds / figures.floor:.2f}x its median)",
                figures.seconds <= 3 * best,
            ),
            (f"{figures.label} >= 5 000 answers/s ({rate:,.0f})", rate >= 5000),
            (f"{figures.label} <= 20x json.loads ({ratio:.1f}x)", ratio <= 20),
            (f"{figures.label} peak RSS <= 1 GB ({peak_of(figures):,.0f} MiB)", peak_of(figures) <= 1024),
        ]
    print("  " + "; ".join(f"{text}: {'met' if ok else 'not met'}" for text, ok in verdicts))
    held = [ok for text, ok in verdicts if "3x of the bare-table floor" in text]
    print(
        f"target (the import within 3x of the bare-table floor at its best, {' and '.join(f.label for f in kinds)} "
        "answers): "
        f"{'met' if held and all(held) else 'not met'}"
    )


if __name__ == "__main__":
    machine.run(main)
