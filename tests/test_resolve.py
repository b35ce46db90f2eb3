"""The resolver against a real HTTP server on 127.0.0.1 (tests/site.py), through the library and the CLI."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.builders import add_reviewer, answer, claim, document
from tests.site import Site
from typer.testing import Result

from citeaudit.core.errors import ResolveStopped
from citeaudit.interchange import parse_audit_bytes
from citeaudit.sources import USER_AGENT, ResolveSettings, resolve_sources, source_passages, source_snapshots
from citeaudit.store import Store

HOSTS = (("site.test", "127.0.0.1"),)


def settings(**changes: Any) -> ResolveSettings:
    return ResolveSettings(**{"host_map": HOSTS, "timeout": 2.0, "backoff": 0.05, **changes})


def make_db(db_path: Path, edges: list[dict[str, Any]], claims: int = 1) -> Path:
    """A database with one answer, ``claims`` claims (c1, c2, …) and the given edge rows."""
    doc = document(
        [answer("a1")],
        [claim(f"c{n}", "a1") for n in range(1, claims + 1)],
        edges,
    )
    payload = json.dumps(doc).encode()
    with Store(db_path) as store:
        store.import_audit(parse_audit_bytes(payload, "test.json"), payload, "test.json")
    return db_path


def rows(db_path: Path, sql: str, *params: object) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db_path) as db:
        return db.execute(sql, params).fetchall()


def source(db_path: Path, url: str) -> dict[str, Any]:
    """The source row whose raw URL is ``url``."""
    with sqlite3.connect(db_path) as db:
        db.row_factory = sqlite3.Row
        row = db.execute("SELECT * FROM sources WHERE url = ?", (url,)).fetchone()
    assert row is not None, f"no source with url {url!r}"
    return dict(row)


def resolve_one(db_path: Path, url: str, **changes: Any) -> dict[str, Any]:
    make_db(db_path, [{"claim_id": "c1", "url": url}])
    resolve_sources(db_path, settings(**changes))
    return source(db_path, url)


def test_redirect_chain_with_tracking_parameters(db_path: Path, site: str) -> None:
    found = resolve_one(db_path, f"{site}/track")
    assert found["status"] == "resolved"
    assert found["reason"] is None
    assert found["resolved_url"] == f"{site}/article?id=7&utm_medium=chat&fbclid=abc"
    # The key drops utm_medium and fbclid; host and path follow the resolved URL for official matching.
    assert found["key"] == f"{site}/article?id=7"
    assert (found["host"], found["path"]) == ("site.test", "/article")
    assert found["title"] == "AX220 specification"
    (snapshot,) = source_snapshots(db_path, f"{site}/track")  # the former key still finds it
    assert [(hop.url, hop.status) for hop in snapshot.chain] == [
        (f"{site}/track", 302),
        (f"{site}/hop?utm_source=openai&id=7", 301),
        (f"{site}/article?id=7&utm_medium=chat&fbclid=abc", 200),
    ]
    assert snapshot.published == "2025-03-04"
    assert snapshot.content_hash == found["content_hash"]
    assert ("content-type", "text/html") in snapshot.headers
    assert "The AX220 has a 20 L tank." in snapshot.text


def test_passages_point_into_the_snapshot_text(db_path: Path, site: str) -> None:
    resolve_one(db_path, f"{site}/article")
    (snapshot,) = source_snapshots(db_path, f"{site}/article")
    passages = source_passages(db_path, f"{site}/article")
    assert passages, "an article has passages"
    assert all(snapshot.text[p.start : p.end] == p.text for p in passages)
    assert any("20 L tank" in p.text for p in passages)


@pytest.mark.parametrize("route", ["/canon?x=1", "/canon-header"])
def test_canonical_link_decides_the_key(db_path: Path, site: str, route: str) -> None:
    found = resolve_one(db_path, f"{site}{route}")
    assert found["status"] == "resolved"
    assert found["key"] == f"{site}/canonical-page"
    (snapshot,) = source_snapshots(db_path, found["key"])
    assert snapshot.canonical_url == f"{site}/canonical-page"


def test_cross_site_canonical_is_recorded_but_not_the_key(db_path: Path, site: str) -> None:
    # other.test and site.test are different registrable domains (both map to the test server): a page on
    # other.test declaring a site.test canonical must not take site.test's identity.
    other = f"http://other.test:{Site.port}/syndicated"
    make_db(db_path, [{"claim_id": "c1", "url": other}])
    resolve_sources(db_path, settings(host_map=(*HOSTS, ("other.test", "127.0.0.1"))))
    found = source(db_path, other)
    assert (found["status"], found["key"], found["host"]) == ("resolved", other, "other.test")
    (snapshot,) = source_snapshots(db_path, other)
    assert snapshot.canonical_url == f"{site}/canonical-page"


def test_redirect_loop(db_path: Path, site: str) -> None:
    found = resolve_one(db_path, f"{site}/loop-a")
    assert (found["status"], found["reason"]) == ("failed", "redirect_loop")
    (chain,) = rows(db_path, "SELECT chain FROM fetches")
    # loop-a -> loop-b -> loop-a again: two requests, then the repeat is refused without a third.
    assert [hop[1] for hop in json.loads(chain[0])] == [302, 302, None]
    assert Site.hits["/loop-a"] == 1
    assert Site.hits["/loop-b"] == 1


def test_slow_response_times_out(db_path: Path, site: str) -> None:
    started = time.monotonic()
    found = resolve_one(db_path, f"{site}/slow", timeout=0.3)
    assert (found["status"], found["reason"]) == ("failed", "timeout")
    assert time.monotonic() - started < Site.slow_seconds


@pytest.mark.parametrize("route", ["/big", "/big-chunked", "/bomb"])
def test_oversized_body_is_refused(db_path: Path, site: str, route: str) -> None:
    # /big declares 300 kB, /big-chunked streams 512 KiB without a length, /bomb inflates 64 KiB to 64 MiB.
    found = resolve_one(db_path, f"{site}{route}", max_bytes=100_000)
    assert (found["status"], found["reason"]) == ("failed", "too_large")
    assert rows(db_path, "SELECT count(*) FROM documents") == [(0,)]


def test_gzip_body_is_decoded(db_path: Path, site: str) -> None:
    found = resolve_one(db_path, f"{site}/gzipped")
    assert found["status"] == "resolved"
    assert source_snapshots(db_path, found["key"])[0].text == "Compressed plain words."


def test_429_then_200_honours_retry_after(db_path: Path, site: str) -> None:
    started = time.monotonic()
    found = resolve_one(db_path, f"{site}/busy")
    elapsed = time.monotonic() - started
    assert found["status"] == "resolved"
    assert Site.hits["/busy"] == 2
    assert elapsed >= 1.0, "Retry-After: 1 was honoured"
    (snapshot,) = source_snapshots(db_path, found["key"])
    assert [(hop.status, hop.note) for hop in snapshot.chain] == [(429, "retry"), (200, None)]


def test_404_fails_but_the_source_stays(db_path: Path, site: str) -> None:
    found = resolve_one(db_path, f"{site}/missing")
    assert (found["status"], found["reason"]) == ("failed", "http_404")
    assert found["resolved_url"] == f"{site}/missing"
    assert rows(db_path, "SELECT count(*) FROM edges") == [(1,)]


@pytest.mark.parametrize(
    ("route", "expected"),
    [("/latin1", "Café crème, naïve façade."), ("/meta-charset", "Price 20 € only.")],
)
def test_non_utf8_charsets(db_path: Path, site: str, route: str, expected: str) -> None:
    found = resolve_one(db_path, f"{site}{route}")
    assert found["status"] == "resolved"
    assert expected in source_snapshots(db_path, found["key"])[0].text


@pytest.mark.parametrize("workers", [0, 1])
def test_pdf_text(db_path: Path, site: str, workers: int) -> None:
    # workers=1: extracted in a separate process; the result must be the same.
    found = resolve_one(db_path, f"{site}/doc.pdf", extract_workers=workers)
    assert found["status"] == "resolved"
    (snapshot,) = source_snapshots(db_path, found["key"])
    assert snapshot.media_type == "application/pdf"
    assert "Tank capacity: 20 L" in snapshot.text


@pytest.mark.parametrize("workers", [0, 1])
def test_unsupported_type(db_path: Path, site: str, workers: int) -> None:
    # workers=1: the refusal crosses the process boundary with its reason.
    found = resolve_one(db_path, f"{site}/image", extract_workers=workers)
    assert (found["status"], found["reason"]) == ("failed", "unsupported_type")


def test_redirect_to_private_address_is_blocked(db_path: Path, site: str) -> None:
    found = resolve_one(db_path, f"{site}/to-private")
    assert (found["status"], found["reason"]) == ("failed", "blocked_private_address")
    assert Site.hits["/article"] == 0, "no request reached the private address"
    (chain,) = rows(db_path, "SELECT chain FROM fetches")
    assert json.loads(chain[0])[-1] == [f"http://127.0.0.1:{Site.port}/article?id=7", None, "blocked_private_address"]


def test_redirect_to_private_address_with_allow_private(db_path: Path, site: str) -> None:
    found = resolve_one(db_path, f"{site}/to-private", allow_private=True)
    assert found["status"] == "resolved"
    assert Site.hits["/article"] == 1


def test_name_resolving_to_loopback_is_blocked(db_path: Path, site: str) -> None:
    # "localhost" is not in the host map: the system resolver gives a loopback address, refused after DNS.
    found = resolve_one(db_path, f"http://localhost:{Site.port}/article")
    assert (found["status"], found["reason"]) == ("failed", "blocked_private_address")
    assert Site.hits["/article"] == 0


def test_no_cookies_no_credentials_and_a_clear_user_agent(db_path: Path, site: str) -> None:
    url = f"http://user:secret@site.test:{Site.port}/cookie"
    found = resolve_one(db_path, url)
    assert found["status"] == "resolved"
    assert source_snapshots(db_path, found["key"])[0].text == "cookie=None"
    for _, headers in Site.log:
        assert headers["user-agent"] == USER_AGENT
        assert "cookie" not in headers
        assert "authorization" not in headers


def test_rerun_never_refetches_unless_refresh(db_path: Path, site: str) -> None:
    make_db(db_path, [{"claim_id": "c1", "url": f"{site}/article"}, {"claim_id": "c1", "url": f"{site}/missing"}])
    first = resolve_sources(db_path, settings())
    assert (first.selected, first.resolved, first.failed) == (2, 1, {"http_404": 1})
    second = resolve_sources(db_path, settings())
    assert (second.selected, second.skipped_resolved, second.skipped_failed) == (0, 1, 1)
    assert Site.hits == {"/article": 1, "/missing": 1}
    retry = resolve_sources(db_path, settings(retry_failed=True))
    assert (retry.selected, Site.hits["/article"], Site.hits["/missing"]) == (1, 1, 2)
    refresh = resolve_sources(db_path, settings(refresh=True))
    assert (refresh.selected, Site.hits["/article"]) == (1, 2)
    # Two reads of the same bytes: two snapshots (fetches) of one content-addressed document.
    assert len(source_snapshots(db_path, f"{site}/article")) == 2
    assert rows(db_path, "SELECT count(*) FROM documents") == [(1,)]


def test_documents_and_fetches_are_immutable(db_path: Path, site: str) -> None:
    resolve_one(db_path, f"{site}/article")
    with sqlite3.connect(db_path) as db, pytest.raises(sqlite3.IntegrityError, match="immutable"):
        db.execute("UPDATE documents SET text = 'changed'")
    with sqlite3.connect(db_path) as db, pytest.raises(sqlite3.IntegrityError, match="immutable"):
        db.execute("UPDATE fetches SET http_status = 500")


def test_cli_resolve_and_title_only_card(
    db_path: Path, site: str, cli: Callable[..., Result], write_json: Callable[[Any, str], Path]
) -> None:
    make_db(db_path, [{"claim_id": "c1", "url": f"{site}/article"}, {"claim_id": "c1", "title": "AX220 sheet"}])
    result = cli("resolve", "--db", db_path, "--map-host", "site.test=127.0.0.1", "--format", "json")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    # One link read and resolved; the title-only card stays pending and is counted, not dropped.
    assert (report["selected"], report["resolved"], report["no_link"]) == (1, 1, 1)
    (card,) = rows(db_path, "SELECT key, status, reason FROM sources WHERE url IS NULL")
    assert card[1:] == ("pending", "no_link")

    add_reviewer(db_path, "li")  # who attaches a link is a review account
    result = cli(
        "source", "set-url", card[0], f"{site}/doc.pdf", "--db", db_path, "--by", "li",
        "--map-host", "site.test=127.0.0.1", "--format", "json",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert rows(db_path, "SELECT url, set_by FROM source_links") == [(f"{site}/doc.pdf", "li")]
    found = source(db_path, f"{site}/doc.pdf")
    assert (found["status"], found["key"], found["title"]) == ("resolved", f"{site}/doc.pdf", "AX220 sheet")

    result = cli("source", "passages", found["key"], "--db", db_path, "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)[0]["text"] == "Tank capacity: 20 L"


def test_cli_bad_map_host_and_missing_database(db_path: Path, cli: Callable[..., Result]) -> None:
    result = cli("resolve", "--db", db_path)
    assert result.exit_code == 2
    assert "no database" in result.stderr
    make_db(db_path, [])
    result = cli("resolve", "--db", db_path, "--map-host", "site.test")
    assert result.exit_code == 2
    assert "expected NAME=IP" in result.stderr


def test_export_lists_resolved_sources(db_path: Path, site: str, cli: Callable[..., Result]) -> None:
    make_db(db_path, [{"claim_id": "c1", "url": f"{site}/track"}, {"claim_id": "c1", "url": f"{site}/missing"}])
    resolve_sources(db_path, settings())
    result = cli("export", "--db", db_path, "--format", "audit-json")
    assert result.exit_code == 0, result.stderr
    exported = {s["url"]: s for s in json.loads(result.stdout)["sources"]}
    track = exported[f"{site}/track"]
    assert track["key"] == f"{site}/article?id=7"
    assert track["resolved_url"] == f"{site}/article?id=7&utm_medium=chat&fbclid=abc"
    assert (track["status"], track["title"]) == ("resolved", "AX220 specification")
    assert track["content_hash"].startswith("sha256:")
    assert track["fetched_at"]
    missing = exported[f"{site}/missing"]
    assert (missing["status"], missing["reason"]) == ("failed", "http_404")


def test_global_and_per_host_caps_hold(db_path: Path, site: str) -> None:
    # 12 pages on site.test and 12 on other.test, each held 0.25 s by the server; per-host 2, global 3.
    other = f"http://other.test:{Site.port}"
    urls = [f"{base}/paced/{name}{n}" for base, name in ((site, "s"), (other, "o")) for n in range(12)]
    make_db(db_path, [{"claim_id": "c1", "url": url} for url in urls])
    report = resolve_sources(
        db_path, settings(concurrency=3, per_host=2, host_map=(*HOSTS, ("other.test", "127.0.0.1")))
    )
    assert report.resolved == 24
    assert Site.peak["site.test"] == 2
    assert Site.peak["other.test"] == 2
    assert Site.peak["*"] == 3


def test_click_wrapper_is_unwrapped_without_a_request(db_path: Path, site: str) -> None:
    # google.com is not in the host map and there is no network: only unwrapping, never a request, can pass it.
    wrapped = f"https://www.google.com/url?q={site}/article&sa=D"
    found = resolve_one(db_path, wrapped)
    assert found["status"] == "resolved"
    (snapshot,) = source_snapshots(db_path, found["key"])
    assert [(hop.url, hop.status, hop.note) for hop in snapshot.chain] == [
        (wrapped, None, "unwrapped"),
        (f"{site}/article", 200, None),
    ]


@pytest.mark.parametrize("url", ["ftp://site.test/file.txt", "mailto:someone@brand.com"])
def test_links_that_are_not_http_fail_as_bad_url(db_path: Path, url: str) -> None:
    found = resolve_one(db_path, url)
    assert (found["status"], found["reason"]) == ("failed", "bad_url")


def test_extraction_workers_start_only_when_asked_or_when_extraction_backs_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from citeaudit.sources import fetch

    monkeypatch.setattr(fetch, "_cores", lambda: 2)
    assert settings().extract_workers == 0  # the library reads in the fetching process unless asked
    assert fetch.Fetcher(settings()).gate is None  # a choice given is kept: no gate
    assert fetch.Fetcher(settings(extract_workers=3)).gate is None
    chosen = fetch.Fetcher(settings(extract_workers=None), expected=10)
    assert chosen.gate is not None
    assert chosen.gate.cores == 2
    assert not chosen.gate.started
    assert chosen.extraction_workers == []  # nothing runs before the gate asks
    monkeypatch.setattr(fetch, "_cores", lambda: 1)
    assert not fetch.Fetcher(settings(extract_workers=None)).gate.due(10**6)  # no second core to run one on


def test_a_run_asked_to_choose_reads_pages_in_the_worker_once_the_gate_starts_it(
    db_path: Path, site: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import psutil

    from citeaudit.sources import fetch
    from citeaudit.sources.offload import WorkerGate

    # a gate that asks for a worker after the second page (its first window), whatever the timings
    monkeypatch.setattr(
        fetch, "WorkerGate", lambda cores: WorkerGate(2, window=0.0, min_pages=0, share=0.0, spare=0.0, min_left=0.0)
    )
    make_db(db_path, [{"claim_id": "c1", "url": f"{site}/paced/AX{n}"} for n in range(3)])
    workers: list[int] = []
    chosen = settings(extract_workers=None, concurrency=1)  # as the command line asks; one page at a time
    # only the children this run starts count (another test's helper, such as a JVM, may still be running)
    before = {child.pid for child in psutil.Process().children()}

    def running() -> int:
        return len([child for child in psutil.Process().children() if child.pid not in before])

    report = resolve_sources(db_path, chosen, progress=lambda _: workers.append(running()))
    assert report.resolved == 3
    # the gate starts one worker at most (in the background: whether it is up when a result is written
    # depends on timing; tests/test_resolve_offload.py checks which pages it reads), and it ends with the run
    assert max(workers) <= 1
    assert running() == 0
    for n in range(3):
        (snapshot,) = source_snapshots(db_path, source(db_path, f"{site}/paced/AX{n}")["key"])
        assert f"AX{n}" in snapshot.text
        assert "AX220" not in snapshot.text


def _stop_worker(*args: object) -> None:
    """Stands in for the worker's reader: the worker process dies as an out-of-memory kill would end it."""
    os._exit(9)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_worker_that_dies_stops_the_run_and_loses_nothing(
    db_path: Path, site: str, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    # Every extraction kills its worker, however the pages' fetches interleave with the deaths (several pages
    # waiting for a worker, or sent to a second one, when the first dies): the outcome cannot depend on timing.
    from citeaudit.sources import fetch

    urls = [f"{site}/paced/AX{n}" for n in range(6)]
    make_db(db_path, [{"claim_id": "c1", "url": url} for url in urls])
    monkeypatch.setattr(fetch, "read_document_text", _stop_worker)
    with pytest.raises(ResolveStopped, match=r"worker process stopped .* after 0 of 6 sources"):
        resolve_sources(db_path, settings(extract_workers=workers))
    # no page was marked unreadable for it: every source is still pending, and a new run reads them all
    assert [source(db_path, url)["status"] for url in urls] == ["pending"] * 6
    monkeypatch.undo()
    assert resolve_sources(db_path, settings(extract_workers=workers)).resolved == 6


def test_the_command_chooses_the_extraction_workers_unless_told(
    db_path: Path, site: str, cli: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    from citeaudit.sources import fetch

    asked: list[int | None] = []
    made = fetch.Fetcher.__init__

    def recording(self: fetch.Fetcher, settings: ResolveSettings, expected: int | None = None) -> None:
        asked.append(settings.extract_workers)
        made(self, settings, expected)

    monkeypatch.setattr(fetch.Fetcher, "__init__", recording)
    make_db(db_path, [{"claim_id": "c1", "url": f"{site}/article"}])
    for given in ([], ["--extract-workers", "0", "--refresh"], ["--extract-workers", "1", "--refresh"]):
        result = cli("resolve", "--db", db_path, "--map-host", "site.test=127.0.0.1", *given)
        assert result.exit_code == 0, result.stderr
    assert asked == [None, 0, 1]  # None: the resolver starts a worker when extraction backs up


def test_resolving_links_without_a_database_stops_cleanly_when_the_worker_dies(
    site: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from citeaudit.sources import fetch, resolve_urls

    monkeypatch.setattr(fetch, "read_document_text", _stop_worker)
    with pytest.raises(ResolveStopped, match="while 2 links were being resolved"):
        resolve_urls([f"{site}/paced/AX1", f"{site}/paced/AX2"], settings(extract_workers=1))
