"""Engine payloads assembled straight into rows, and read, checked and assembled in a worker process while the
rows are written: the database the import leaves is the one the model objects make (every answer, citation,
claim, edge and location built as an object first), row by row and key by key, and the one the in-process import
leaves; a bad record gives the same one-line error and leaves nothing; the worker never outlives the import,
whatever stops it."""

from __future__ import annotations

import dataclasses
import json
import pickle
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citeaudit import Store
from citeaudit.core.errors import (
    DuplicateId,
    ImportStopped,
    InputError,
    InvalidValue,
    MalformedInput,
    UnknownFormat,
    UnknownReference,
)
from citeaudit.ingest import Attachment, ingest_files, plan_imports, worker
from citeaudit.store.writers import new_database
from test_ingest_fast_path import PROTOCOL, PlainStore, contents, dense_lines, recordings, sonar_lines, write_lines

ATTACHMENT = Attachment(PROTOCOL, run_id="bench", question_id="q01")


def sonar_payload(count: int) -> bytes:
    """``count`` generated Sonar answers as the bytes of a JSON Lines payload."""
    return "".join(json.dumps(line) + "\n" for line in sonar_lines(count, 3)).encode()


class Watched(worker.ReadAhead):
    """The worker-side reader, each one kept so a test can see its process."""

    made: list[Watched] = []  # noqa: RUF012 - filled by the instances themselves

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        Watched.made.append(self)


@pytest.fixture
def watched(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Watched]]:
    Watched.made = []
    monkeypatch.setattr(worker, "ReadAhead", Watched)
    yield Watched.made
    for ahead in Watched.made:  # no test leaves a worker behind, whatever it asserted
        assert ahead.pid is None or ahead.finished


FORKS = worker.forks()
"""Whether the worker is this process forked here (Linux): then both ways it can start are tested."""


@pytest.fixture(params=["fork", "spawn"])
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each way a worker starts: this process forked, where :func:`worker.forks` allows it, and a fresh
    interpreter, where it is sent the job and the payload."""
    if request.param == "fork" and not FORKS:
        pytest.skip("no worker is forked here (not Linux, or Python 3.12 or later with other threads running)")
    monkeypatch.setattr(worker, "forks", lambda: request.param == "fork")
    return str(request.param)


def imported(
    db: Path, files: list[Path], attachment: Attachment, *, chunk: int, in_worker: bool, fmt: str | None = "perplexity"
) -> list[tuple[str, Any, Any]]:
    """The import `citeaudit ingest` makes into a new database, its payloads read in a worker or here."""
    with new_database(db) as target, Store(target, new=target != db) as store:
        return ingest_files(store, plan_imports(files, fmt), attachment=attachment, chunk=chunk, worker=in_worker)


def _through_objects(
    source: str, data: bytes, reader: Any, attachment: Any, *, size: int, partial: Any
) -> Iterator[Any]:
    """The import as it assembles model objects first, then writes their rows (as a read file is stored)."""
    import citeaudit.ingest as ingest

    return ingest._audits(source, data, reader, attachment, size=size, partial=partial)


def test_every_real_recording_is_stored_as_its_model_objects_store_it(tmp_path: Path) -> None:
    import citeaudit.ingest as ingest

    files = recordings()
    attachment = Attachment(PROTOCOL, question_id="q01")
    rows = imported(tmp_path / "rows.db", files, attachment, chunk=2, in_worker=False, fmt=None)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ingest, "_import_chunks", _through_objects)
        objects = imported(tmp_path / "objects.db", files, attachment, chunk=2, in_worker=False, fmt=None)
    assert [report for _, _, report in rows] == [report for _, _, report in objects]
    plain = contents(tmp_path / "objects.db")
    assert sum(len(table) for table in plain[0].values()) > 0
    assert contents(tmp_path / "rows.db") == plain


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seed=st.integers(0, 10_000),
    count=st.integers(0, 80),
    second=st.integers(1, 30),
    chunk=st.sampled_from([1, 3, 16, 5000]),
    answer_ids=st.booleans(),
)
def test_generated_answers_are_stored_as_their_model_objects_store_them(
    tmp_path_factory: pytest.TempPathFactory, seed: int, count: int, second: int, chunk: int, answer_ids: bool
) -> None:
    import citeaudit.ingest as ingest

    folder = tmp_path_factory.mktemp("rows")
    lines = list(sonar_lines(count, seed))
    if answer_ids:  # ids given by a collector, some of them twice (the second is refused)
        lines = [dict(line, answer_id=f"a{n % 50}") for n, line in enumerate(lines)]
    files = [write_lines(folder / "a.jsonl", lines), write_lines(folder / "b.jsonl", sonar_lines(second, seed + 1))]
    outcomes: list[Any] = []
    for name in ("rows.db", "objects.db"):
        with pytest.MonkeyPatch.context() as patch:
            if name == "objects.db":
                patch.setattr(ingest, "_import_chunks", _through_objects)
            try:
                reports = imported(folder / name, files, ATTACHMENT, chunk=chunk, in_worker=False)
            except InputError as exc:
                outcomes.append((type(exc), str(exc)))
            else:
                outcomes.append([report for _, _, report in reports])
    assert outcomes[0] == outcomes[1]
    if isinstance(outcomes[0], list):
        assert contents(folder / "rows.db") == contents(folder / "objects.db")


def test_every_real_recording_is_stored_as_the_in_process_import_stores_it(
    tmp_path: Path, watched: list[Watched], way: str
) -> None:
    files = recordings()
    attachment = Attachment(PROTOCOL, question_id="q01")
    told: dict[bool, list[tuple[str, int]]] = {True: [], False: []}
    reports = {}
    for in_worker in (True, False):
        db = tmp_path / f"{in_worker}.db"
        with new_database(db) as target, Store(target, new=target != db) as store:
            reports[in_worker] = ingest_files(
                store,
                plan_imports(files),
                attachment=attachment,
                chunk=2,
                worker=in_worker,
                progress=lambda name, n, seen=told[in_worker]: seen.append((name, n)),
            )
    # every engine payload went through a worker (the audit files among the recordings are read here)
    engine_imports = [name for name, reader, _ in reports[True] if reader.read_answers is not None]
    assert len(watched) == len(engine_imports) > 10
    assert all(ahead.pid is not None for ahead in watched)
    started = worker._Forked if way == "fork" else subprocess.Popen
    assert all(type(ahead._process) is started for ahead in watched)
    # each worker ended by itself after its last message, none had to be killed
    assert all(ahead._process is not None and ahead._process.returncode == 0 for ahead in watched)
    if Path("/proc/self/status").exists():  # each worker said how large it grew (Linux)
        assert all(ahead.worker_peak is not None and ahead.worker_peak > 2**20 for ahead in watched)
    fast, plain = contents(tmp_path / "True.db"), contents(tmp_path / "False.db")
    assert sum(len(rows) for rows in plain[0].values()) > 0
    assert fast == plain
    assert [(name, report) for name, _, report in reports[True]] == [
        (name, report) for name, _, report in reports[False]
    ]
    assert told[True] == told[False]
    assert sum(n for _, n in told[True]) == sum(r.answers + r.failures for _, _, r in reports[True])


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seed=st.integers(0, 10_000),
    count=st.integers(0, 120),
    second=st.integers(1, 40),
    chunk=st.sampled_from([1, 3, 16, 5000]),
)
def test_generated_answers_are_stored_as_the_in_process_import_stores_them(
    tmp_path_factory: pytest.TempPathFactory, seed: int, count: int, second: int, chunk: int, way: str
) -> None:
    folder = tmp_path_factory.mktemp("generated")
    first = write_lines(folder / "a.jsonl", sonar_lines(count, seed))
    later = write_lines(folder / "b.jsonl", sonar_lines(second, seed + 1))  # a second import reuses sources
    files = [first, later] if count else [later]
    fast = imported(folder / "fast.db", files, ATTACHMENT, chunk=chunk, in_worker=True)
    plain = imported(folder / "plain.db", files, ATTACHMENT, chunk=chunk, in_worker=False)
    assert [report for _, _, report in fast] == [report for _, _, report in plain]
    assert contents(folder / "fast.db") == contents(folder / "plain.db")


@pytest.mark.parametrize("chunk", [1, 16])
def test_dense_answers_are_stored_alike_read_here_through_objects_and_in_a_worker(
    tmp_path: Path, watched: list[Watched], chunk: int, way: str
) -> None:
    """Answers whose every citation is a new page: rows read here, the same through model objects and the rows
    a worker read give one database, row for row."""
    import citeaudit.ingest as ingest

    files = [
        write_lines(tmp_path / "a.jsonl", dense_lines(50, chunk)),
        write_lines(tmp_path / "b.jsonl", dense_lines(9, 7)),
    ]
    reports = {
        "rows": imported(tmp_path / "rows.db", files, ATTACHMENT, chunk=chunk, in_worker=False),
        "worker": imported(tmp_path / "worker.db", files, ATTACHMENT, chunk=chunk, in_worker=True),
    }
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ingest, "_import_chunks", _through_objects)
        reports["objects"] = imported(tmp_path / "objects.db", files, ATTACHMENT, chunk=chunk, in_worker=False)
    assert len(watched) == 2  # both payloads went through a worker
    first = [report for _, _, report in reports["objects"]]
    assert [report for _, _, report in reports["rows"]] == first == [report for _, _, report in reports["worker"]]
    assert first[0].claims == first[0].edges == 50 * 8  # 8 sentences an answer, each closed by one marker
    plain = contents(tmp_path / "objects.db")
    assert contents(tmp_path / "rows.db") == plain
    assert contents(tmp_path / "worker.db") == plain


def test_a_second_import_into_a_database_with_rows_is_stored_alike(
    tmp_path: Path, watched: list[Watched], way: str
) -> None:
    first = write_lines(tmp_path / "a.jsonl", sonar_lines(60, 5))
    second = write_lines(tmp_path / "b.jsonl", sonar_lines(60, 6))
    for name, in_worker in (("fast.db", True), ("plain.db", False)):
        for path in (first, second):
            with (PlainStore if not in_worker else Store)(tmp_path / name) as store:
                ingest_files(store, [path], "perplexity", attachment=ATTACHMENT, chunk=9, worker=in_worker)
    assert len(watched) == 2
    assert contents(tmp_path / "fast.db") == contents(tmp_path / "plain.db")


@pytest.mark.parametrize(("bad_line", "chunk"), [(1, 4), (34, 4), (40, 1), (34, 5000)])
def test_the_first_bad_record_gives_the_in_process_error_and_nothing_is_kept(
    tmp_path: Path, watched: list[Watched], bad_line: int, chunk: int, way: str
) -> None:
    rows: list[Any] = list(sonar_lines(40, 8))
    rows[-1] = {"choices": [{"message": 3}]}  # a later problem is never the one reported
    rows[bad_line - 1] = {"choices": "not a list"}
    path = write_lines(tmp_path / "bad.jsonl", rows)
    messages = []
    for in_worker in (True, False):
        db = tmp_path / f"{in_worker}.db"
        with Store(db):
            pass
        before = contents(db)
        with Store(db) as store, pytest.raises(InputError) as caught:
            ingest_files(store, [path], "perplexity", attachment=ATTACHMENT, chunk=chunk, worker=in_worker)
        assert type(caught.value) is InvalidValue
        messages.append(str(caught.value))
        assert contents(db) == before
    assert messages[0] == messages[1]
    assert messages[0] == f"{path}: line {bad_line}: choices: expected list (got 'not a list')"
    assert len(watched) == 1
    assert watched[0].finished


def test_a_file_that_is_not_json_gives_the_in_process_error(tmp_path: Path, watched: list[Watched], way: str) -> None:
    path = tmp_path / "broken.jsonl"
    lines = [json.dumps(row) for row in sonar_lines(12, 3)]
    path.write_text("\n".join(lines[:7]) + "\n{oops\n" + "\n".join(lines[7:]) + "\n", encoding="utf-8")
    messages = []
    for in_worker in (True, False):
        with Store(tmp_path / f"{in_worker}.db") as store, pytest.raises(MalformedInput) as caught:
            ingest_files(store, [path], "perplexity", attachment=ATTACHMENT, chunk=3, worker=in_worker)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
    assert messages[0].startswith(f"{path}: line 8 column 2: invalid JSON")


def test_a_clash_found_while_writing_stops_the_worker_and_nothing_is_kept(
    tmp_path: Path, watched: list[Watched], way: str
) -> None:
    rows = [dict(row, answer_id=f"a{n}") for n, row in enumerate(sonar_lines(60, 9)) if "choices" in row]
    earlier = write_lines(tmp_path / "earlier.jsonl", rows[20:22])
    later = write_lines(tmp_path / "later.jsonl", rows)
    messages = []
    for in_worker in (True, False):
        db = tmp_path / f"{in_worker}.db"
        with Store(db) as store:
            ingest_files(store, [earlier], "perplexity", attachment=ATTACHMENT, worker=False)
        before = contents(db)
        with Store(db) as store, pytest.raises(DuplicateId) as caught:
            ingest_files(store, [later], "perplexity", attachment=ATTACHMENT, chunk=4, worker=in_worker)
        messages.append(str(caught.value))
        assert contents(db) == before
    assert messages[0] == messages[1]
    assert "already in the database" in messages[0]
    assert len(watched) == 1
    assert watched[0].finished


def test_ctrl_c_while_writing_stops_the_worker_and_leaves_nothing(
    tmp_path: Path, watched: list[Watched], way: str
) -> None:
    path = write_lines(tmp_path / "a.jsonl", sonar_lines(80, 4))
    db = tmp_path / "audit.db"
    with Store(db):
        pass
    before = contents(db)

    def interrupted(name: str, n: int) -> None:
        raise KeyboardInterrupt

    with Store(db) as store, pytest.raises(KeyboardInterrupt):
        ingest_files(store, [path], "perplexity", attachment=ATTACHMENT, chunk=5, worker=True, progress=interrupted)
    assert contents(db) == before
    assert len(watched) == 1
    assert watched[0].finished


def test_a_worker_killed_from_outside_stops_the_import_and_leaves_nothing(
    tmp_path: Path, watched: list[Watched], way: str
) -> None:
    import os
    import signal

    path = write_lines(tmp_path / "a.jsonl", sonar_lines(400, 4))
    db = tmp_path / "audit.db"
    with Store(db):
        pass
    before = contents(db)
    told: list[int] = []

    def kill_the_worker(name: str, n: int) -> None:
        if not told:
            pid = watched[0].pid
            assert pid is not None
            os.kill(pid, signal.SIGKILL)
        told.append(n)

    with Store(db) as store, pytest.raises(ImportStopped, match=r"a\.jsonl: the process reading it stopped"):
        ingest_files(store, [path], "perplexity", attachment=ATTACHMENT, chunk=2, worker=True, progress=kill_the_worker)
    assert contents(db) == before
    # 400 records at 2 a chunk: far more chunks than the worker can have sent before it was killed
    assert 1 <= len(told) < 200
    assert watched[0].finished


def test_a_payload_imported_before_is_never_read_from_its_worker(
    tmp_path: Path, watched: list[Watched], way: str
) -> None:
    """The worker starts as the import begins and is sent the payload at once (it reads while the payload is
    hashed and stored); a payload imported before is not iterated: its worker is stopped, its rows never read."""
    path = write_lines(tmp_path / "a.jsonl", sonar_lines(20, 4))
    with Store(tmp_path / "audit.db") as store:
        ((_, _, first),) = ingest_files(store, [path], "perplexity", attachment=ATTACHMENT, worker=True)
        ((_, _, again),) = ingest_files(store, [path], "perplexity", attachment=ATTACHMENT, worker=True)
    assert first.answers > 0
    assert again.already_imported
    assert [ahead.asked for ahead in watched] == [True, False]
    assert all(ahead.finished for ahead in watched)
    assert watched[0]._process is not None
    assert watched[0]._process.returncode == 0


def test_the_worker_reads_before_the_chunks_are_asked_for(way: str) -> None:
    """The worker reads as the block is entered (forked, with the payload in its memory; a fresh interpreter,
    sent it at once): its first rows wait in the pipe before anything is asked for (a worker that had nothing to
    read would never write, and the wait below would end empty). It runs in a session of its own, either way."""
    import os
    import select

    from citeaudit.ingest import READERS

    data = sonar_payload(5)
    with worker.ReadAhead("a.jsonl", data, READERS["perplexity"], ATTACHMENT, 2) as ahead:
        assert ahead._process is not None
        assert ahead._process.stdout is not None
        assert ahead.pid is not None
        readable, _, _ = select.select([ahead._process.stdout], [], [], 120)
        assert readable  # rows came, unasked
        assert os.getsid(ahead.pid) == ahead.pid != os.getsid(0)  # its session, made before it sent anything
        assert not ahead.asked
        chunks = list(ahead)
    assert [len(rows.answers) + len(rows.failures) for rows in chunks] == [2, 2, 1]


@pytest.mark.skipif(not Path("/proc/sys/fs/pipe-max-size").exists(), reason="pipe sizes are Linux's")
def test_the_rows_and_the_payload_go_through_pipes_of_a_mebibyte(monkeypatch: pytest.MonkeyPatch, way: str) -> None:
    """The worker runs ahead by what its pipe holds, and a fresh interpreter takes the payload in writes of what
    the other pipe holds: 1 MiB each where the system allows it (Linux's default limit). A forked worker has the
    payload already: its rows' pipe is the only one."""
    import fcntl

    from citeaudit.ingest import READERS

    grown: list[tuple[IO[bytes], int]] = []  # (the pipe, what it holds once asked to grow)
    grow = worker._grow

    def watched_grow(pipe: IO[bytes]) -> None:
        grow(pipe)
        grown.append((pipe, fcntl.fcntl(pipe.fileno(), fcntl.F_GETPIPE_SZ)))

    monkeypatch.setattr(worker, "_grow", watched_grow)
    allowed = int(Path("/proc/sys/fs/pipe-max-size").read_text())
    data = sonar_payload(5)
    with worker.ReadAhead("a.jsonl", data, READERS["perplexity"], ATTACHMENT, 2) as ahead:
        assert ahead._process is not None
        assert ahead._process.stdout is not None
        held = fcntl.fcntl(ahead._process.stdout.fileno(), fcntl.F_GETPIPE_SZ)
        pipes = [ahead._process.stdout, ahead._process.stdin]
        list(ahead)
    assert worker.PIPE_BYTES == 2**20
    assert (pipes[1] is None) == (way == "fork")
    assert [pipe for pipe, _ in grown] == [pipe for pipe in pipes if pipe is not None]  # the rows' (and payload's)
    sizes = {size for _, size in grown}
    if allowed >= worker.PIPE_BYTES:  # any process may ask for it
        assert held == worker.PIPE_BYTES
        assert sizes == {worker.PIPE_BYTES}
    else:  # only a privileged one may: the pipe grew, or kept its size
        assert held in (worker.PIPE_BYTES, 65536)
        assert sizes <= {worker.PIPE_BYTES, 65536}


def test_a_reader_the_worker_cannot_load_is_the_import_error_not_a_stopped_worker(way: str) -> None:
    """The worker loads the reader the job names before it takes the payload; a name it does not know comes back
    as the error the lookup raised (as the import in one process would raise it), never as a worker that
    stopped."""
    from citeaudit.ingest import READERS

    unknown = dataclasses.replace(READERS["perplexity"], name="no-such-reader")
    data = sonar_payload(5)
    with worker.ReadAhead("a.jsonl", data, unknown, ATTACHMENT, 2) as ahead, pytest.raises(KeyError):
        list(ahead)
    assert ahead.finished


def test_a_pipe_that_cannot_grow_carries_the_same_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, way: str
) -> None:
    import fcntl

    files = [write_lines(tmp_path / "a.jsonl", sonar_lines(60, 5))]
    plain = imported(tmp_path / "plain.db", files, ATTACHMENT, chunk=7, in_worker=False)

    def refused(fd: int, request: int, arg: int = 0) -> int:
        raise PermissionError("pipe size refused")

    monkeypatch.setattr(fcntl, "fcntl", refused)
    small = imported(tmp_path / "small.db", files, ATTACHMENT, chunk=7, in_worker=True)
    assert [report for _, _, report in small] == [report for _, _, report in plain]
    assert contents(tmp_path / "small.db") == contents(tmp_path / "plain.db")


def test_a_worker_killed_while_it_is_sent_the_payload_is_stopped_and_waited_for(way: str) -> None:
    """A payload far larger than a pipe holds, and the worker killed at once: a fresh interpreter has not taken it
    all, and the thread sending it stops; leaving the block waits for the worker (and the thread: one still
    writing would keep the block from ending). A forked worker has the payload from the start and no thread
    sends it."""
    import os
    import signal

    from citeaudit.ingest import READERS

    data = sonar_payload(4000)
    assert len(data) > 2 * 2**20  # more than any pipe holds by default (64 KiB; at most 1 MiB on Linux)
    ahead = worker.ReadAhead("a.jsonl", data, READERS["perplexity"], ATTACHMENT, 2)
    with ahead:
        assert ahead.pid is not None
        os.kill(ahead.pid, signal.SIGKILL)
        with pytest.raises(
            ImportStopped, match=r"a\.jsonl: the process reading it stopped before the end \(exit status -9\)"
        ):
            list(ahead)
    assert ahead.finished
    if way == "fork":
        assert ahead._feeder is None
    else:
        assert ahead._feeder is not None
        assert not ahead._feeder.is_alive()


def test_the_chunks_are_read_once_and_only_inside_the_block(way: str) -> None:

    from citeaudit.ingest import READERS

    data = sonar_payload(5)
    ahead = worker.ReadAhead("a.jsonl", data, READERS["perplexity"], ATTACHMENT, 2)
    with pytest.raises(RuntimeError, match="inside its with block"):
        next(iter(ahead))
    with ahead:
        assert ahead.pid is not None
        assert not ahead.asked
        chunks = list(ahead)
        assert ahead.asked
        with pytest.raises(RuntimeError, match="read once"):
            next(iter(ahead))
    # 5 answer records, 2 to a chunk: 3 chunks
    assert [len(rows.answers) + len(rows.failures) for rows in chunks] == [2, 2, 1]
    assert ahead.finished


@pytest.mark.parametrize(
    ("platform", "version", "threads", "expected"),
    [
        ("linux", (3, 11), 1, True),
        ("linux", (3, 11), 3, True),  # Python 3.11 does not warn of a fork beside threads
        ("linux", (3, 12), 1, True),
        ("linux", (3, 12), 2, False),  # it would warn: a fresh interpreter instead
        ("linux", (3, 14), 1, True),
        ("darwin", (3, 11), 1, False),  # macOS's system libraries may not survive a fork
        ("win32", (3, 11), 1, False),
    ],
)
def test_the_worker_is_this_process_forked_only_where_that_is_safe(
    monkeypatch: pytest.MonkeyPatch, platform: str, version: tuple[int, int], threads: int, expected: bool
) -> None:
    monkeypatch.setattr(worker.sys, "platform", platform)
    monkeypatch.setattr(worker.sys, "version_info", version)
    monkeypatch.setattr(worker, "_threads", lambda: threads)
    assert worker.forks() is expected


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="threads counted from /proc (Linux)")
def test_the_threads_counted_are_the_system_s() -> None:
    import threading

    before = worker._threads()
    assert before >= 1
    release = threading.Event()
    helper = threading.Thread(target=release.wait)
    helper.start()
    try:
        assert worker._threads() == before + 1
    finally:
        release.set()
        helper.join()


@pytest.mark.skipif(not FORKS, reason="no worker is forked here")
def test_a_fork_refused_by_the_system_gives_a_fresh_interpreter_and_the_same_rows(
    tmp_path: Path, watched: list[Watched], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the system refuses a fork (too little memory to commit a copy of a large process, a cap on processes),
    the worker is a fresh interpreter, and the import is the same; nothing of the refused fork is left open."""
    import errno
    import os

    files = [write_lines(tmp_path / "a.jsonl", sonar_lines(60, 5))]
    plain = imported(tmp_path / "plain.db", files, ATTACHMENT, chunk=7, in_worker=False)
    pipes: list[tuple[int, int]] = []
    make_pipe = os.pipe

    def made() -> tuple[int, int]:
        ends = make_pipe()
        pipes.append(ends)
        return ends

    def refused() -> int:
        raise OSError(errno.ENOMEM, "Cannot allocate memory")

    monkeypatch.setattr(worker.os, "fork", refused)
    monkeypatch.setattr(worker.os, "pipe", made)
    with pytest.raises(OSError, match="Cannot allocate memory"):
        worker._Forked.start(("a.jsonl", "perplexity", ATTACHMENT, 7, 0), b"")
    ((readable, writable),) = pipes
    for end in (readable, writable):  # both ends closed as the fork was refused
        with pytest.raises(OSError, match="Bad file descriptor") as closed:
            os.fstat(end)
        assert closed.value.errno == errno.EBADF
    spawned = imported(tmp_path / "spawned.db", files, ATTACHMENT, chunk=7, in_worker=True)
    assert [report for _, _, report in spawned] == [report for _, _, report in plain]
    assert contents(tmp_path / "spawned.db") == contents(tmp_path / "plain.db")
    assert len(watched) == 1
    assert type(watched[0]._process) is subprocess.Popen


@pytest.mark.skipif(not FORKS, reason="no worker is forked here")
def test_a_forked_worker_is_waited_for_as_a_process_is() -> None:
    """What :class:`ReadAhead` asks of a forked worker's handle, as of a :class:`subprocess.Popen`: ``poll`` is
    None while it runs, ``wait`` with a timeout raises ``TimeoutExpired`` and, once it was killed, gives the
    signal as a negative status; a second ``kill`` and ``wait`` change nothing."""
    import os
    import signal
    import time

    readable, writable = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child sleeps until it is killed
        try:
            time.sleep(600)
        finally:
            os._exit(0)
    os.close(writable)
    with os.fdopen(readable, "rb") as stdout:
        child = worker._Forked(pid, stdout)
        try:
            assert child.poll() is None
            with pytest.raises(subprocess.TimeoutExpired):
                child.wait(timeout=0.01)  # it sleeps 600 s
        finally:
            child.kill()
        assert child.wait() == -signal.SIGKILL
        assert child.poll() == -signal.SIGKILL
        child.kill()
        assert child.wait(timeout=0.01) == -signal.SIGKILL
        assert stdout.read() == b""  # its end of the pipe closed with it


@pytest.mark.parametrize("forked", [True, False])
@pytest.mark.parametrize(
    ("cpus", "load", "runnable", "size", "expected"),
    [
        (2, 0.4, 1, "least", True),
        (2, 0.4, 1, "just below", False),
        (2, 1.0, 2, "ten times", False),  # no second CPU idle: another thread runs now
        (2, 1.0, 1, "ten times", True),  # the minute's average lags; nothing else runs now
        (2, 5.5, 1, "ten times", False),
        (1, 0.0, 1, "ten times", False),  # one CPU this process may run on
        (8, 6.9, 5, "ten times", True),
    ],
)
def test_the_import_reads_in_a_worker_only_when_the_payload_is_large_and_a_second_cpu_is_idle(
    monkeypatch: pytest.MonkeyPatch, cpus: int, load: float, runnable: int, size: str, expected: bool, forked: bool
) -> None:
    """Large is at least 1 MB where the worker is this process forked, 16 MB where it is a fresh interpreter."""
    from citeaudit.store import pipeline

    monkeypatch.setattr(pipeline, "runnable_now", lambda: runnable)
    monkeypatch.setattr(worker.os, "sched_getaffinity", lambda pid: set(range(cpus)))
    monkeypatch.setattr(worker.os, "cpu_count", lambda: cpus)
    monkeypatch.setattr(worker.os, "getloadavg", lambda: (load, load, load))
    monkeypatch.setattr(worker, "forks", lambda: forked)
    least = 1_000_000 if forked else 16_000_000
    assert (worker.FORKED_WORKER_BYTES, worker.WORKER_BYTES) == (1_000_000, 16_000_000)
    payload = {"least": least, "just below": least - 1, "ten times": least * 10}[size]
    assert worker.reads_in_worker(payload, None) is expected
    assert worker.reads_in_worker(payload, True) is True  # asked for: always
    assert worker.reads_in_worker(payload, False) is False


def test_without_a_load_average_the_other_cpus_count_as_busy(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> tuple[float, float, float]:
        raise OSError("no load average")

    monkeypatch.setattr(worker.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    monkeypatch.setattr(worker.os, "getloadavg", missing)
    assert not worker.second_core_idle()


def test_by_default_a_small_payload_is_read_here_and_a_large_one_in_a_worker(
    tmp_path: Path, watched: list[Watched], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker, "second_core_idle", lambda: True)
    small = write_lines(tmp_path / "small.jsonl", sonar_lines(30, 4))
    large = write_lines(tmp_path / "large.jsonl", sonar_lines(30, 5))
    for least in ("WORKER_BYTES", "FORKED_WORKER_BYTES"):  # as if it were large, whichever way the worker starts
        monkeypatch.setattr(worker, least, large.stat().st_size)
    assert small.stat().st_size < large.stat().st_size
    with Store(tmp_path / "audit.db") as store:
        ingest_files(store, [small, large], "perplexity", attachment=ATTACHMENT)
    assert len(watched) == 1
    assert watched[0].pid is not None


def _command_reads_in_a_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every payload read in a worker from here on (any size, a CPU idle); the protocol file the command is given."""
    monkeypatch.setattr(worker, "WORKER_BYTES", 0)
    monkeypatch.setattr(worker, "FORKED_WORKER_BYTES", 0)
    monkeypatch.setattr(worker, "second_core_idle", lambda: True)
    protocol = tmp_path / "protocol.yaml"
    protocol.write_text("id: p\nversion: '1'\nquestions:\n  - id: q01\n    text: Tell me about the AX220.\n")
    return protocol


def test_the_command_gives_the_one_line_error_and_exit_2_when_the_worker_finds_the_problem(
    cli: Any, tmp_path: Path, db_path: Path, watched: list[Watched], monkeypatch: pytest.MonkeyPatch
) -> None:
    protocol = _command_reads_in_a_worker(tmp_path, monkeypatch)
    rows: list[Any] = list(sonar_lines(30, 8))
    rows[22] = {"choices": [], "search_results": []}
    path = write_lines(tmp_path / "bad.jsonl", rows)
    result = cli("ingest", path, "--db", db_path, "--questions", protocol, "--format", "perplexity")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {path}: line 23: choices: expected at least one choice (got [])"
    ]
    assert not db_path.exists()
    assert len(watched) == 1
    assert watched[0].finished


def test_the_command_imports_through_a_worker(
    cli: Any, tmp_path: Path, db_path: Path, watched: list[Watched], monkeypatch: pytest.MonkeyPatch
) -> None:
    protocol = _command_reads_in_a_worker(tmp_path, monkeypatch)
    path = write_lines(tmp_path / "good.jsonl", sonar_lines(30, 8))
    result = cli("ingest", path, "--db", db_path, "--questions", protocol, "--format", "perplexity")
    assert result.exit_code == 0, result.stderr
    with sqlite3.connect(db_path) as connection:
        failures = connection.execute("SELECT count(*) FROM ingest_failures").fetchone()[0]
        answers = connection.execute("SELECT count(*) FROM answers").fetchone()[0]
    assert answers + failures == 30  # every record stored: as an answer, or as an answer the engine did not give
    assert f"{answers} answers" in result.stdout
    assert len(watched) == 1


_TEXT = st.text(max_size=40)


@given(
    kind=st.sampled_from([InputError, InvalidValue, MalformedInput, UnknownReference, DuplicateId, UnknownFormat]),
    source=_TEXT,
    location=_TEXT,
    message=_TEXT,
)
def test_an_input_error_travels_between_processes_as_itself(
    kind: type[InputError], source: str, location: str, message: str
) -> None:
    error = kind(source, location, message)
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is kind
    assert (str(again), again.source, again.location, again.message) == (str(error), source, location, message)


def test_an_error_that_cannot_travel_comes_back_as_a_stand_in_saying_the_same() -> None:
    class Local(Exception):  # defined in a function: no pickle can find it again
        pass

    stand_in = worker._travelling(Local("the reason"))
    assert type(stand_in) is RuntimeError
    assert str(stand_in) == "Local: the reason"
    error = DuplicateId("f.jsonl", "answers[3].id", "answer 'a3' is already in the database")
    assert worker._travelling(error) is error


_DRIVER = """
import sys, time
from pathlib import Path
from citeaudit import Store
from citeaudit.ingest import Attachment, ingest_files, worker
from citeaudit.interchange import load_protocol

made = []
class Told(worker.ReadAhead):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        made.append(self)
worker.ReadAhead = Told
worker.forks = lambda: sys.argv[4] == "fork"

def progress(name, n):
    print(made[0].pid, flush=True)  # the worker is up and a chunk is written: the test presses Ctrl-C now
    time.sleep(600)

attachment = Attachment(load_protocol(Path(sys.argv[3])), run_id="bench", question_id="q01")
with Store(Path(sys.argv[2])) as store:
    try:
        ingest_files(
            store, [Path(sys.argv[1])], "perplexity", attachment=attachment, chunk=2, worker=True, progress=progress
        )
    except KeyboardInterrupt:
        print("interrupted", made[0].finished, flush=True)
        raise SystemExit(130)
"""


def test_ctrl_c_at_a_terminal_stops_the_command_and_its_worker(tmp_path: Path, way: str) -> None:
    """Ctrl-C at a terminal sends SIGINT to the foreground process group: the importing process stops, and with
    it the worker, which runs in a session of its own and never sees the signal."""
    import os
    import signal
    import subprocess
    import sys

    # 400 records, 2 to a chunk: the worker is still sending (its pipe full) when Ctrl-C comes
    path = write_lines(tmp_path / "a.jsonl", sonar_lines(400, 4))
    protocol = Path(__file__).parent / "fixtures" / "protocol.yaml"
    src = str(Path(worker.__file__).resolve().parents[2])
    # the driver's last argument: the way its worker starts
    command = subprocess.Popen(
        [sys.executable, "-c", _DRIVER, str(path), str(tmp_path / "audit.db"), str(protocol), way],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([src, *sys.path])},
        start_new_session=True,  # a process group of its own, as a terminal's foreground job has
    )
    try:
        assert command.stdout is not None
        pid = int(command.stdout.readline())
        os.killpg(command.pid, signal.SIGINT)  # what the terminal does on Ctrl-C
        out, err = command.communicate(timeout=120)
    finally:
        if command.poll() is None:
            command.kill()
            command.wait()
    assert command.returncode == 130, err
    assert out.split() == ["interrupted", "True"]  # the worker was stopped and waited for before the command ended
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert "Traceback" not in err  # the worker printed nothing either


def _gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (reaped, or a zombie its new parent has not reaped yet)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="process states read from /proc (Linux)")
def test_a_worker_whose_importer_is_killed_stops_and_the_database_keeps_nothing(tmp_path: Path, way: str) -> None:
    """The importing process killed outright (nothing of it runs after): its worker, blocked on a full pipe, finds
    the pipe has no reader and ends; the transaction it was writing is rolled back when the database opens next."""
    import os
    import signal
    import subprocess
    import sys
    import time

    # 4 000 records, 2 to a chunk: their rows are more than the worker's pipe holds (at most 1 MiB), so it is blocked
    # on a full pipe when its importer is killed
    path = write_lines(tmp_path / "a.jsonl", sonar_lines(4000, 4))
    assert path.stat().st_size > 2 * worker.PIPE_BYTES
    protocol = Path(__file__).parent / "fixtures" / "protocol.yaml"
    db = tmp_path / "audit.db"
    with Store(db):
        pass
    before = contents(db)
    src = str(Path(worker.__file__).resolve().parents[2])
    pid = 0
    # the driver's last argument: the way its worker starts
    command = subprocess.Popen(
        [sys.executable, "-c", _DRIVER, str(path), str(db), str(protocol), way],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([src, *sys.path])},
        start_new_session=True,
    )
    try:
        assert command.stdout is not None
        pid = int(command.stdout.readline())  # a chunk is written, the worker runs ahead
        assert not _gone(pid)
        command.kill()
        command.wait(timeout=120)
        deadline = time.monotonic() + 120  # it ends at its next write, at once; the wait only bounds a broken run
        while not _gone(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _gone(pid)
    finally:
        if command.poll() is None:
            command.kill()
            command.wait()
        if pid and not _gone(pid):  # a broken run leaves no worker behind
            os.kill(pid, signal.SIGKILL)
        if command.stdout is not None:
            command.stdout.close()
    assert command.returncode == -signal.SIGKILL
    assert contents(db) == before  # the hot journal rolled back as the database opened


_ROW_TEXT = st.text(max_size=12)  # any code point, lone surrogates included: both formats carry them
_OPTIONAL_TEXT = st.none() | _ROW_TEXT
_POSITION = st.none() | st.integers(0, 2**63 - 1)


@settings(max_examples=150, deadline=None)
@given(
    sources=st.lists(st.tuples(_ROW_TEXT, _OPTIONAL_TEXT, st.none(), _OPTIONAL_TEXT, st.none(), st.just("pending"))),
    citations=st.lists(
        st.tuples(
            st.integers(0, 9),
            st.integers(0, 9),
            _OPTIONAL_TEXT,
            _OPTIONAL_TEXT,
            _OPTIONAL_TEXT,
            _OPTIONAL_TEXT,
            st.sampled_from(["cited", "retrieved", "dangling"]),
            _POSITION,
            _POSITION,
            _OPTIONAL_TEXT,
        ),
        max_size=5,
    ),
    edges=st.lists(st.tuples(st.integers(0, 9), _ROW_TEXT, st.integers(1, 3), st.just(())), max_size=5),
)
def test_a_chunk_of_plain_rows_arrives_as_it_was_sent_in_marshal_format(
    sources: list[tuple[Any, ...]], citations: list[tuple[Any, ...]], edges: list[tuple[Any, ...]]
) -> None:
    from io import BytesIO

    from citeaudit.core.model import Run
    from citeaudit.store.chunk_rows import ChunkRows

    answers = [("a1", "q1", "r1", "text", "perplexity", None, None, "0" * 64, None, None, None)]
    claims = [("a1-c1", 0, "claim", 0, 4, None, None, None)]
    failures = [(1, "failed", "error: x", "r1", "q1", "perplexity")]
    rows = ChunkRows(
        PROTOCOL,
        (Run("r1", platform="perplexity"),),
        sources,
        answers,
        citations,
        claims,
        edges,
        [(0, "[1]", 5, 8)],
        (),
        failures,
    )
    out = BytesIO()
    worker._send_rows(out, rows)
    data = out.getvalue()
    message = data[worker._LENGTH.size :]
    assert worker._LENGTH.unpack_from(data)[0] == len(message)
    assert message[:1] == worker._ROWS  # every value plain: the row lists went as marshal writes them
    kind, received = worker._message(message)
    assert kind == "rows"
    assert received == rows
    assert [type(part) for part in received] == [type(part) for part in rows]  # lists stay lists, tuples tuples


def test_a_chunk_holding_a_judgement_arrives_whole_as_a_pickle() -> None:
    from io import BytesIO

    from citeaudit.core.model import Judgement, Label, Run
    from citeaudit.store.chunk_rows import ChunkRows

    judged = (0, "https://brand.com/ax220", 1, (Judgement(Label.SUPPORTED, reviewer="ana"),))
    rows = ChunkRows(PROTOCOL, (Run("r1"),), [], [], [], [], [judged], [], (), [])
    out = BytesIO()
    worker._send_rows(out, rows)
    message = out.getvalue()[worker._LENGTH.size :]
    assert message[:1] == worker._PICKLED  # marshal refuses the judgement object: the whole chunk is pickled
    assert worker._message(message) == ("rows", rows)


def test_chunks_with_the_same_head_share_its_objects_and_a_new_run_is_read_afresh() -> None:
    from io import BytesIO

    from citeaudit.core.model import Run
    from citeaudit.store.chunk_rows import ChunkRows

    def sent(runs: tuple[Run, ...]) -> bytes:
        out = BytesIO()
        worker._send_rows(out, ChunkRows(PROTOCOL, runs, [], [], [], [], [], [], (), []))
        return out.getvalue()[worker._LENGTH.size :]

    last: list[Any] = []
    first = worker._rows_from(sent((Run("r1"),)), last)
    again = worker._rows_from(sent((Run("r1"),)), last)
    assert again.protocol is first.protocol  # the same bytes: the objects of the chunk before
    assert again.runs is first.runs
    other = worker._rows_from(sent((Run("r1"), Run("r2"))), last)
    assert other.runs == (Run("r1"), Run("r2"))  # a run added: the head is read again
    assert other.protocol == PROTOCOL
    assert other.protocol is not first.protocol


@pytest.mark.parametrize("in_worker", [True, False])
def test_an_import_looks_its_protocol_up_once_for_all_its_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, in_worker: bool
) -> None:
    """The protocol's fingerprint (to find its row) and the hash of its required facts (to lock them for a
    platform run) are worked out once for the import, not once a chunk."""
    import citeaudit.store.importing as importing
    import citeaudit.store.sqlite as sqlite_store
    from citeaudit.core.model import Run, RunKind

    looked_up: list[str] = []
    hashed: list[str] = []

    def counted(protocol: Any) -> str:
        looked_up.append(protocol.id)
        return fingerprint(protocol)

    def components(protocol: Any) -> dict[str, str]:
        hashed.append(protocol.id)
        return fingerprint_components(protocol)

    fingerprint, fingerprint_components = sqlite_store.fingerprint, importing.fingerprint_components
    monkeypatch.setattr(sqlite_store, "fingerprint", counted)
    monkeypatch.setattr(importing, "fingerprint_components", components)
    monkeypatch.setattr(importing, "_FACTS_HASHES", [])  # no protocol hashed before in this process
    payload = tmp_path / "answers.jsonl"
    payload.write_bytes(sonar_payload(40))
    ((_, _, report),) = imported(tmp_path / "db.sqlite", [payload], ATTACHMENT, chunk=4, in_worker=in_worker)
    assert report.answers + report.failures == 40  # 10 chunks of 4 answer records
    assert looked_up == [PROTOCOL.id]  # once, not once a chunk
    assert hashed == [PROTOCOL.id]  # the platform run "bench" locks its facts: hashed once
    with Store(tmp_path / "db.sqlite") as store, store.snapshot() as read:
        assert read.execute("SELECT count(*) FROM fact_locks").fetchone() == (1,)
    assert Run("bench").kind is RunKind.PLATFORM
