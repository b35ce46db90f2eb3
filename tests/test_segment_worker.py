"""``citeaudit segment`` with its worker process: the same database as without it and as the plain path, on
generated answers; errors and interruptions stop the worker, which never outlives the call."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import Result

from builders import answer, document, protocol
from citeaudit.ingest import read_files, store_prepared
from citeaudit.segment import resegment as resegment_module
from citeaudit.segment import worker
from citeaudit.segment.resegment import resegment
from citeaudit.segment.rules_v2 import RulesV2
from citeaudit.segment.rules_v2 import segment as segment_v2
from citeaudit.segment.worker import SegmentedAhead, worker_possible
from citeaudit.store import Store
from test_segment_write_reference import TABLES, _reference_resegment, _rows, _same_reading, compare_with_plain_path

SENTENCES = [
    "The AX220 has a 20 L tank and can operate outdoors.",
    "It is CE certified.",
    "Is it loud?",
    "Born in Lyon, Diallo became a chef, and his wife died in 2001.",
    "The pump supports Wi-Fi, Bluetooth and Zigbee.",
    "Sources:",
    "Die Pumpe wiegt 38 kg und kostet 400 Euro.",
    "AX220的水箱容量为20升，可以在户外使用。",
    "Kafka (1883 – 1924) was a writer who is known for The Trial.",
    "Thanks for asking!",
]
URLS = ["https://brand.com/a", "https://example.org/b", "https://example.net/c"]


FRESH = "CITEAUDIT_TEST_FRESH_PROCESS"
"""Set in the fresh interpreter :func:`elsewhere` runs this module in."""


@pytest.fixture(scope="module")
def elsewhere(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str] | None:
    """``None`` when a worker can start in this process. When only other threads of the test run prevent it
    (the Spark session earlier tests leave, say), this module runs in a fresh interpreter, where none runs, as
    ``citeaudit segment`` does: each test's outcome there, by name."""
    if worker_possible():
        return None
    running = ", ".join(t.name for t in threading.enumerate())
    if os.environ.get(FRESH):
        pytest.fail(f"a worker process must be possible in a fresh interpreter; threads: {running}")
    if sys.platform != "linux" or (os.cpu_count() or 1) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no worker process on this system")
    report = tmp_path_factory.mktemp("fresh") / "report.xml"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", __file__]
    subprocess.run(command, env={**os.environ, FRESH: "1"}, cwd=Path(__file__).parent.parent, capture_output=True)
    outcomes = {}
    for case in ElementTree.parse(report).iter("testcase"):
        problems = [
            f"{child.tag}: {child.get('message')}" for child in case if child.tag in ("failure", "error", "skipped")
        ]
        outcomes[str(case.get("name"))] = "; ".join(problems) or "passed"
    return outcomes


def _here(elsewhere: dict[str, str] | None, request: pytest.FixtureRequest) -> bool:
    """Whether to run the test in this process; when not, its run in the fresh interpreter must have passed."""
    if elsewhere is None:
        return True
    outcome = elsewhere.get(request.node.name, "not run")
    assert outcome == "passed", f"{request.node.name} in a fresh interpreter: {outcome}"
    return False


# An answer: sentences (index into SENTENCES, the URL its marker cites or None, whether the engine gave it as a
# claim, whether a reviewer labelled that citation).
_SENTENCE = st.tuples(
    st.integers(0, len(SENTENCES) - 1), st.one_of(st.none(), st.sampled_from(URLS)), st.booleans(), st.booleans()
)
_ANSWERS = st.lists(st.lists(_SENTENCE, min_size=1, max_size=6), min_size=1, max_size=4)
_METHODS = st.lists(st.sampled_from(["rules-v2", "rules-v1"]), min_size=1, max_size=3)


def _generated(answers: list[list[tuple[int, str | None, bool, bool]]]) -> dict[str, Any]:
    """An audit whose answers are made of ``answers``' sentences, each followed by its marker, if any."""
    built, claims, edges = [], [], []
    for a, sentences in enumerate(answers):
        aid = f"a{a}"
        text = ""
        cited = [url for _, url, _, _ in sentences if url is not None]
        numbers = {url: n for n, url in enumerate(dict.fromkeys(cited), start=1)}
        for s, (index, url, engine_claim, labelled) in enumerate(sentences):
            start = len(text)
            text += SENTENCES[index]
            end = len(text)
            marker = None
            if url is not None:
                marker = f"[{numbers[url]}]"
                text += marker
            if engine_claim:
                cid = f"{aid}-c{s}"
                claims.append({"id": cid, "answer_id": aid, "text": SENTENCES[index], "start": start, "end": end})
                if url is not None and marker is not None:
                    edge: dict[str, Any] = {"claim_id": cid, "url": url, "marker": marker, "start": end}
                    edge["end"] = end + len(marker)
                    if labelled:
                        edge |= {"label": "supported", "reviewer": "li"}
                    edges.append(edge)
            text += "\n" if index == 5 else " "
        built.append(answer(aid, run=f"r{a % 2}", text=text.rstrip(), citations=list(numbers)))
    return document(built, claims, edges, proto=protocol(facts=[]))


def _ingest(path: Path, audit: dict[str, Any]) -> None:
    source = path.with_suffix(".json")
    source.write_text(json.dumps(audit), encoding="utf-8")
    with Store(path) as store:
        for item in read_files([source], None, None):
            store_prepared(store, item)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(answers=_ANSWERS, methods=_METHODS)
def test_the_worker_writes_what_the_caller_alone_and_the_plain_path_write(
    answers: list[list[tuple[int, str | None, bool, bool]]],
    methods: list[str],
    tmp_path_factory: pytest.TempPathFactory,
    elsewhere: dict[str, str] | None,
    request: pytest.FixtureRequest,
) -> None:
    if not _here(elsewhere, request):
        return
    folder = tmp_path_factory.mktemp("worker")
    built = folder / "built.db"
    _ingest(built, _generated(answers))
    paths = {name: folder / f"{name}.db" for name in ("worker", "alone", "plain")}
    for path in paths.values():
        shutil.copy(built, path)
    for method in methods:
        for name, use in (("worker", True), ("alone", False)):
            with Store(paths[name]) as store:
                resegment(store, method, worker=use)
        _reference_resegment(paths["plain"], method)
        rows = {name: _rows(path) for name, path in paths.items()}
        for table in TABLES:
            assert rows["worker"][table] == rows["alone"][table] == rows["plain"][table], f"{table} after {method}"
        _same_reading(paths["worker"])


def test_the_worker_runs_in_another_process_and_gives_the_rules_results(
    elsewhere: dict[str, str] | None, request: pytest.FixtureRequest
) -> None:
    if not _here(elsewhere, request):
        return
    texts = [" ".join(SENTENCES[i:] + SENTENCES[:i]) for i in range(len(SENTENCES))]
    items = [(pk, text, ((0, len(SENTENCES[0])),)) for pk, text in enumerate(texts)]
    seen: list[int] = []
    with SegmentedAhead(RulesV2(), items) as ahead:
        assert len(multiprocessing.active_children()) == 1  # the worker
        for pk, text, regions in items:
            if pk % 3 == 1:
                continue  # answers the caller leaves alone are passed over
            assert ahead.take(pk, text, regions) == segment_v2(text, regions)
            seen.append(pk)
        # an answer whose text changed since it was handed out is segmented here
        changed = "It is CE certified. " + texts[-1]
        assert ahead.take(len(texts) - 1, changed, ()) == segment_v2(changed, ())
    assert len(seen) == len(texts) - len([pk for pk in range(len(texts)) if pk % 3 == 1])  # 10 - 3 (1, 4, 7) = 7
    assert multiprocessing.active_children() == []


def test_an_error_of_the_rules_in_the_worker_is_raised_for_its_answer_and_stops_the_worker(
    monkeypatch: pytest.MonkeyPatch, elsewhere: dict[str, str] | None, request: pytest.FixtureRequest
) -> None:
    if not _here(elsewhere, request):
        return
    original = worker.segment_with

    def failing(text: str, regions: Sequence[tuple[int, int]], rules: Any) -> Any:
        if text.startswith("Is it loud?"):
            raise ValueError(f"cannot segment {text[:11]!r}")
        return original(text, regions, rules)

    monkeypatch.setattr(worker, "segment_with", failing)  # the forked worker inherits it
    items = [(0, SENTENCES[0], ()), (1, "Is it loud? " + SENTENCES[1], ()), (2, SENTENCES[3], ())]
    with SegmentedAhead(RulesV2(), items) as ahead:
        assert ahead.take(0, SENTENCES[0], ()) == segment_v2(SENTENCES[0])
        with pytest.raises(ValueError, match="cannot segment 'Is it loud\\?'"):
            ahead.take(1, "Is it loud? " + SENTENCES[1], ())
        assert len(multiprocessing.active_children()) == 1
    assert multiprocessing.active_children() == []


def test_an_interrupted_run_stops_the_worker_and_resumes_to_the_database_of_an_uninterrupted_one(
    tmp_path: Path, elsewhere: dict[str, str] | None, request: pytest.FixtureRequest
) -> None:
    if not _here(elsewhere, request):
        return
    path, straight = tmp_path / "interrupted.db", tmp_path / "straight.db"
    _ingest(path, _generated([[(i % len(SENTENCES), URLS[0], True, False)] for i in range(12)]))
    shutil.copy(path, straight)
    told: list[int] = []

    def advance(n: int) -> None:
        told.append(n)
        if len(told) == 5:
            raise KeyboardInterrupt

    with Store(path) as store, pytest.raises(KeyboardInterrupt):
        resegment(store, worker=True, advance=advance)
    assert multiprocessing.active_children() == []
    with Store(path) as store:
        done = [pk for pk, _, _ in store.claims.answers() if store.claims.of_answer(pk).current_set is not None]
        assert len(done) >= 5  # at least the answers told finished are kept
        assert resegment(store, worker=True).answers == 12
    with Store(straight) as store:
        resegment(store, worker=False)
    assert _rows(path) == _rows(straight)


@pytest.mark.parametrize(
    ("idle", "least", "used"),
    [(True, 0, True), (False, 0, False), (True, 10**9, False)],
    ids=["idle core, enough text", "no idle core", "too little text"],
)
def test_the_command_uses_the_worker_only_with_an_idle_core_and_enough_text(
    cli: Callable[..., Result],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    idle: bool,
    least: int,
    used: bool,
    elsewhere: dict[str, str] | None,
    request: pytest.FixtureRequest,
) -> None:
    if not _here(elsewhere, request):
        return
    path, straight = tmp_path / "command.db", tmp_path / "straight.db"
    _ingest(path, _generated([[(i % len(SENTENCES), URLS[i % 3], True, i % 2 == 0)] for i in range(8)]))
    shutil.copy(path, straight)
    with Store(straight) as store:
        resegment(store, worker=False)
    started: list[int] = []
    enter = SegmentedAhead.__enter__

    def recorded(self: SegmentedAhead) -> SegmentedAhead:
        started.append(len(multiprocessing.active_children()))
        return enter(self)

    monkeypatch.setattr(resegment_module, "second_core_idle", lambda: idle)
    monkeypatch.setattr(resegment_module, "WORKER_MIN_CHARS", least)
    monkeypatch.setattr(SegmentedAhead, "__enter__", recorded)
    result = cli("segment", "--db", path)
    assert result.exit_code == 0, result.stderr
    assert started == ([0] if used else [])
    assert multiprocessing.active_children() == []
    assert _rows(path) == _rows(straight)


def test_on_real_answers_the_worker_writes_the_plain_paths_rows(
    tmp_path: Path, elsewhere: dict[str, str] | None, request: pytest.FixtureRequest
) -> None:
    if not _here(elsewhere, request):
        return
    compare_with_plain_path(tmp_path, worker=True)
