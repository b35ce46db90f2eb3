"""The resolver against hostile links and documents: malformed ports and IPv6 literals, pages that never finish
extracting, a killed resolver. Real server on 127.0.0.1 (tests/site.py), real processes."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from tests.hostile import never_finishes
from tests.site import ARTICLE, Site
from tests.test_resolve import make_db, settings, source

from citeaudit.sources import resolve_sources, source_snapshots
from citeaudit.sources.extract import read_document_text
from citeaudit.sources.workers import ExtractionPool, ExtractionTimedOut
from citeaudit.store.records import Document

REPO = Path(__file__).resolve().parent.parent


def test_malformed_ports_and_ipv6_literals_fail_their_source_and_the_run_goes_on(db_path: Path, site: str) -> None:
    bad_port = f"http://site.test:{Site.port + 70000}/article"  # any test port + 70000 is past 65535
    urls = {
        bad_port: ("failed", "bad_url"),
        "http://site.test:99999999999999999999/": ("failed", "bad_url"),
        f"{site}/to-bad-port": ("failed", "bad_url"),  # the redirect leads past 65535
        f"{site}/to-bad-ipv6": ("failed", "bad_url"),  # Location: http://[::1/article
        # a canonical link that cannot be requested is ignored: the page keeps its own URL
        f"{site}/bad-canonical-header": ("resolved", None),
        f"{site}/bad-canonical-html": ("resolved", None),
        f"{site}/article": ("resolved", None),
        f"{site}/manual.txt": ("resolved", None),
    }
    make_db(db_path, [{"claim_id": "c1", "url": url} for url in urls])
    report = resolve_sources(db_path, settings())
    # 8 selected: 4 resolved, 4 failed as bad_url; nothing left pending
    assert (report.selected, report.resolved, report.failed) == (8, 4, {"bad_url": 4})
    for url, (status, reason) in urls.items():
        found = source(db_path, url)
        assert (found["status"], found["reason"]) == (status, reason), url
    for route in ("/bad-canonical-header", "/bad-canonical-html"):
        found = source(db_path, f"{site}{route}")
        assert found["key"] == f"{site}{route}"
        (snapshot,) = source_snapshots(db_path, found["key"])
        assert snapshot.canonical_url is None
        assert "20 L tank" in snapshot.text


def _children() -> set[int]:
    """This process's child processes (other tests' helpers, such as a JVM, may already be among them)."""
    return {child.pid for child in psutil.Process().children()}


def _gone(pid: int, within: float) -> bool:
    """True once process ``pid`` no longer runs (a zombie waiting to be reaped counts as gone), within ``within``
    seconds; a condition waited for, not a pause."""
    deadline = time.monotonic() + within
    while True:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def _wait_for_file(path: Path, process: subprocess.Popen[bytes], within: float) -> str:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if path.exists() and path.read_text(encoding="ascii"):
            return path.read_text(encoding="ascii")
        if process.poll() is not None:
            raise AssertionError(f"the process ended ({process.returncode}) before {path.name} appeared")
        time.sleep(0.05)
    raise AssertionError(f"{path.name} did not appear within {within} s")


def test_a_document_still_read_at_its_limit_is_killed_and_the_next_one_gets_a_fresh_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    marker = tmp_path / "started"
    monkeypatch.setenv("CITEAUDIT_TEST_STARTED", str(marker))
    before = _children()

    async def scenario() -> tuple[int, list[int], Document]:
        async with ExtractionPool(1, None) as pool:
            # A reader that never returns: whatever the machine's load, the limit is what ends it.
            with pytest.raises(ExtractionTimedOut):
                await pool.run(never_finishes, limit=0.05)
            stuck = int(marker.read_text(encoding="ascii"))
            document = await pool.run(read_document_text, ARTICLE.encode(), "text/html", "http://site.test/a")
            return stuck, pool.pids(), document

    stuck, running, document = asyncio.run(scenario())
    assert _gone(stuck, 0)  # killed and reaped before the call returned
    assert len(running) == 1  # a fresh worker read the next document
    assert running != [stuck]
    assert document.title == "AX220 specification"
    assert _children() == before  # leaving the pool stopped it


def test_extraction_that_never_ends_fails_its_source_and_the_run_goes_on(
    db_path: Path, site: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from citeaudit.sources import fetch

    before = _children()
    urls = {f"{site}/article": "extract_timeout", f"{site}/missing": "http_404", f"{site}/to-bad-port": "bad_url"}
    make_db(db_path, [{"claim_id": "c1", "url": url} for url in urls])
    monkeypatch.setattr(fetch, "read_document_text", never_finishes)
    report = resolve_sources(db_path, settings(extract_workers=1, extract_timeout=0.05))
    # 3 selected, none resolved: one of each reason; nothing left pending
    assert (report.selected, report.resolved, report.failed) == (3, 0, dict.fromkeys(urls.values(), 1))
    for url, reason in urls.items():
        assert (source(db_path, url)["status"], source(db_path, url)["reason"]) == ("failed", reason)
    assert _children() == before


def test_a_pathological_pdf_is_killed_at_the_limit_even_without_extraction_workers(db_path: Path, site: str) -> None:
    # 100 pages sharing one content stream of 400 text operations: seconds of work (about 1.3 s for 40 pages on
    # an idle machine), against a limit of 1 ms, which nothing that parses a PDF can meet.
    make_db(db_path, [{"claim_id": "c1", "url": f"{site}/endless.pdf"}, {"claim_id": "c1", "url": f"{site}/article"}])
    report = resolve_sources(db_path, settings(extract_timeout=0.001))  # extract_workers=0: the library default
    assert (report.resolved, report.failed) == (1, {"extract_timeout": 1})  # the small page is read in-process
    assert source(db_path, f"{site}/endless.pdf")["reason"] == "extract_timeout"
    assert source(db_path, f"{site}/article")["status"] == "resolved"


def test_html_over_the_size_bound_is_not_handed_to_the_extractor(db_path: Path, site: str) -> None:
    # /big is 300 000 bytes of text in 35 bytes of markup; /article is well under 100 000 bytes
    make_db(db_path, [{"claim_id": "c1", "url": f"{site}/big"}, {"claim_id": "c1", "url": f"{site}/article"}])
    report = resolve_sources(db_path, settings(max_html_bytes=100_000))
    assert (report.resolved, report.failed) == (1, {"extract_too_large": 1})
    assert source(db_path, f"{site}/big")["reason"] == "extract_too_large"


KILLED_RESOLVER = """
import sys
from citeaudit.sources import ResolveSettings, fetch, resolve_sources
from tests.hostile import never_finishes

fetch.read_document_text = never_finishes
resolve_sources(sys.argv[1], ResolveSettings(host_map=(("site.test", "127.0.0.1"),), extract_workers=1))
"""


def test_kill_9_of_the_resolver_takes_its_extraction_worker_with_it(db_path: Path, site: str, tmp_path: Path) -> None:
    make_db(db_path, [{"claim_id": "c1", "url": f"{site}/article"}])
    marker = tmp_path / "started"
    environment = {**os.environ, "PYTHONPATH": str(REPO / "src"), "CITEAUDIT_TEST_STARTED": str(marker)}
    resolver = subprocess.Popen([sys.executable, "-c", KILLED_RESOLVER, str(db_path)], cwd=REPO, env=environment)
    try:
        worker = int(_wait_for_file(marker, resolver, 120))  # the worker is busy with the page
        assert psutil.Process(worker).ppid() == resolver.pid
        everything = [process.pid for process in psutil.Process(resolver.pid).children(recursive=True)]
    finally:
        resolver.send_signal(signal.SIGKILL)
        resolver.wait()
    survivors = [pid for pid in everything if not _gone(pid, 60)]
    for pid in survivors:  # leave nothing behind, then fail
        psutil.Process(pid).kill()
    assert survivors == []


def test_a_write_lock_held_by_another_process_neither_stalls_nor_fails_the_pages(db_path: Path, site: str) -> None:
    # 60 pages of one host, 4 at a time, 0.25 s each: about 4 s of fetching, all of it while another connection
    # holds the database's write lock. Waiting for the database is not a page's time: every page is read while
    # the lock is held, and none is recorded as a time-out once it is released.
    urls = [f"{site}/paced/p{n}" for n in range(60)]
    make_db(db_path, [{"claim_id": "c1", "url": url} for url in urls])
    reports: list[Any] = []
    lock = sqlite3.connect(db_path, isolation_level=None)
    lock.execute("BEGIN IMMEDIATE")
    resolving = threading.Thread(target=lambda: reports.append(resolve_sources(db_path, settings())), daemon=True)
    try:
        resolving.start()
        deadline = time.monotonic() + 60
        while len([path for path in Site.hits if path.startswith("/paced/")]) < len(urls) or Site.active["*"]:
            assert time.monotonic() < deadline, "the pages were not all read while the write lock was held"
            assert resolving.is_alive(), "the resolver ended while the write lock was held"
            time.sleep(0.05)
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    resolving.join(timeout=120)
    (report,) = reports
    assert (report.selected, report.resolved, report.failed) == (60, 60, {})
