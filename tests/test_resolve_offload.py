"""When the resolver starts an extraction worker beside its loop (the gate, decided from given measurements), and
that where each page is read changes nothing stored (a real HTTP server on 127.0.0.1, tests/site.py)."""

from __future__ import annotations

import asyncio
import dataclasses
import os
from pathlib import Path
from typing import Any

import pytest
from tests.test_resolve import make_db, settings, source

from citeaudit.sources import source_passages, source_snapshots
from citeaudit.sources.offload import WorkerGate

PAGE = (
    "<html><head><title>Page {n}</title></head><body><article><h1>Page {n}</h1>"
    "<p>Paragraph one of page {n}: the AX220 has a 20 L tank and a 12 bar pump, per the data sheet.</p>"
    "<p>Paragraph two of page {n}: it is rated for outdoor use between minus ten and forty degrees.</p>"
    "</article></body></html>"
)
"""The page the resolver benchmark serves."""

# (idle, total) CPU seconds of a 2-core machine: one core idle over a window of `total` seconds of both
IDLE_HALF = ((0.0, 0.0), (1.0, 2.0))
IDLE_NONE = ((0.0, 0.0), (0.0, 2.0))


def gate_after(
    pages: int, each: float, elapsed: float, cpu: tuple[tuple[float, float], tuple[float, float]], left: int | None
) -> tuple[WorkerGate, bool]:
    """A gate that saw one window of ``elapsed`` seconds in which ``pages`` pages took ``each`` seconds each."""
    gate = WorkerGate(cores=2)
    assert gate.due(10.0)
    assert gate.check(10.0, cpu[0], left) is False  # the first call opens the window
    for _ in range(pages):
        gate.extracted(each)
    assert gate.due(10.0 + elapsed) == (elapsed >= gate.window)
    return gate, gate.check(10.0 + elapsed, cpu[1], left)


def test_the_gate_starts_a_worker_when_extraction_takes_a_share_of_the_loop() -> None:
    # 64 pages of 2 ms in 0.5 s: extraction took 0.256 of the loop's time, above the 0.2 share
    gate, start = gate_after(64, 0.002, 0.5, IDLE_HALF, left=1000)
    assert (start, gate.started, gate.reasons) == (True, True, ["start"])
    # asked once: no later window asks again
    gate.extracted(0.4)
    assert not gate.due(100.0)
    assert gate.check(100.0, IDLE_HALF[1], 1000) is False


@pytest.mark.parametrize(
    ("pages", "each", "cpu", "left", "reason"),
    [
        (8, 0.03, IDLE_HALF, 1000, "8 pages in the window"),  # too few pages to judge
        (64, 0.001, IDLE_HALF, 1000, "extraction took 0.13 of the time"),  # 0.064 s of 0.5 s
        (64, 0.002, IDLE_NONE, 1000, "0.00 idle cores"),  # every core busy: a worker would take the loop's share
        # 0.5 s of extraction left at least: 200 pages x 2 ms (the mean so far) is 0.4 s
        (64, 0.002, IDLE_HALF, 200, "200 pages left"),
    ],
)
def test_the_gate_keeps_the_work_in_the_loop_when_a_worker_would_not_pay(
    pages: int, each: float, cpu: tuple[tuple[float, float], tuple[float, float]], left: int, reason: str
) -> None:
    gate, start = gate_after(pages, each, 0.5, cpu, left)
    assert (start, gate.started, gate.reasons) == (False, False, [reason])


def test_the_gate_judges_whole_windows_and_unknowns_do_not_block() -> None:
    gate = WorkerGate(cores=2)
    gate.check(0.0, None, None)
    for _ in range(64):
        gate.extracted(0.002)
    assert not gate.due(0.49)  # the window is not over: nothing decided
    assert gate.check(0.49, None, None) is False
    assert gate.reasons == []
    # no CPU counters and no count of pages left: the measured share decides
    assert gate.check(0.5, None, None) is True
    assert gate.reasons == ["start"]


def test_the_gate_takes_each_window_on_its_own_and_the_mean_over_all() -> None:
    gate = WorkerGate(cores=2)
    gate.check(0.0, (0.0, 0.0), 10_000)
    for _ in range(64):
        gate.extracted(0.001)
    assert gate.check(0.5, (1.0, 2.0), 10_000) is False  # 0.128 of the time
    for _ in range(64):
        gate.extracted(0.002)
    # this window alone: 0.256 of the time; pages left x mean of all 128 pages (1.5 ms) = 0.75 s to go
    assert gate.check(1.0, (2.0, 4.0), 500) is True
    assert gate.reasons == ["extraction took 0.13 of the time", "start"]


def test_the_gate_never_starts_a_worker_on_one_core() -> None:
    gate = WorkerGate(cores=1)
    for _ in range(1000):
        gate.extracted(0.01)
    assert not gate.due(0.0)
    assert not gate.due(100.0)
    assert gate.check(100.0, IDLE_HALF[1], 10**6) is False
    assert not gate.started


# -- the same rows, wherever each page was read ----------------------------------------------------------

PATHS = [
    "/article",
    "/track",
    "/latin1",
    "/meta-charset",
    *(f"/paced/AX{n}" for n in range(6)),
    "/doc.pdf",
    "/big",
    "/missing",
    "/manual.txt",
    "/image",
]
"""Read one at a time, in this order: the gate measures the first two (HTML) pages."""
HANDED_OVER = 10 - 2
"""The small HTML pages but the first two: the PDF and the large page are read under the time limit, the 404 is
not read, plain text and an image cost less to read than to hand over."""


def stored(db_path: Path, urls: list[str]) -> list[dict[str, Any]]:
    """Each source's row and its snapshots and passages, without the times of reading (and the server's Date)."""
    found = []
    for url in urls:
        row = {name: value for name, value in source(db_path, url).items() if not name.endswith("_at")}
        snapshots = []
        for snapshot in source_snapshots(db_path, row["key"]):
            fields = dataclasses.asdict(snapshot)
            del fields["fetched_at"]
            fields["headers"] = [header for header in fields["headers"] if header[0] != "date"]
            snapshots.append(fields)
        passages = (
            [dataclasses.asdict(passage) for passage in source_passages(db_path, row["key"])] if snapshots else []
        )
        found.append({"source": row, "snapshots": snapshots, "passages": passages})
    return found


@pytest.fixture
def eager(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The resolver's gate asks for a worker at the second page it sees (the first opens its window, the second
    closes it), and the worker then takes every HTML page, the first ones waiting for it to come up: which pages it
    reads does not depend on timing. Gives the list of the workers made."""
    from citeaudit.sources import fetch, workers

    helpers: list[workers.ExtractionHelper] = []

    class Eager(workers.ExtractionHelper):
        def __init__(self, depth: int) -> None:
            super().__init__(depth)
            helpers.append(self)

        def ready(self) -> bool:
            return self.started

        async def run(self, function: Any, *args: Any) -> Any:
            assert self._starting is not None
            await asyncio.shield(self._starting)
            return await super().run(function, *args)

    def gate(cores: int) -> WorkerGate:
        return WorkerGate(2, window=0.0, min_pages=0, share=0.0, spare=0.0, min_left=0.0)

    monkeypatch.setattr(fetch, "WorkerGate", gate)
    monkeypatch.setattr(fetch, "ExtractionHelper", Eager)
    return helpers


def test_the_rows_stored_are_the_same_with_and_without_the_worker(tmp_path: Path, site: str, eager: list[Any]) -> None:
    from citeaudit.sources import resolve_sources

    urls = [f"{site}{path}" for path in PATHS]
    found = {}
    for workers_asked in (0, None, 1):
        db_path = tmp_path / f"{workers_asked}.db"
        make_db(db_path, [{"claim_id": "c1", "url": url} for url in urls])
        resolve_sources(db_path, settings(extract_workers=workers_asked, concurrency=1))
        found[workers_asked] = stored(db_path, urls)
    (helper,) = eager  # only extract_workers=None has one
    assert helper.calls == HANDED_OVER
    assert found[None] == found[0]
    assert found[1] == found[0]
    statuses = [entry["source"]["status"] for entry in found[0]]
    assert statuses.count("resolved") == len(PATHS) - 2  # the 404 and the image fail, the same way in all three


def _stop_worker(*args: object) -> None:
    """Stands in for the worker's reader: the worker process dies as an out-of-memory kill would end it."""
    os._exit(9)


def test_a_worker_started_by_the_gate_that_dies_stops_the_run_and_loses_nothing(
    db_path: Path, site: str, eager: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from citeaudit.core.errors import ResolveStopped
    from citeaudit.sources import fetch, resolve_sources

    urls = [f"{site}/paced/AX{n}" for n in range(5)]
    make_db(db_path, [{"claim_id": "c1", "url": url} for url in urls])
    monkeypatch.setattr(fetch, "read_document_text", _stop_worker)
    # the two pages read in the loop are kept; the third, handed to the worker, kills it
    with pytest.raises(ResolveStopped, match=r"worker process stopped .* after 2 of 5 sources"):
        resolve_sources(db_path, settings(extract_workers=None, concurrency=1))
    assert [source(db_path, url)["status"] for url in urls] == ["resolved"] * 2 + ["pending"] * 3
    monkeypatch.undo()
    assert resolve_sources(db_path, settings(extract_workers=None)).resolved == 3


# -- trafilatura's options made once ---------------------------------------------------------------------

WICE = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "wice" / "claim" / "dev.jsonl"


def wice_pages(count: int) -> list[tuple[str, str]]:
    """``(url, html)`` pages built from the first ``count`` WiCE evidence documents (web pages kept as lines: a
    title line, ``#`` headings, paragraphs, navigation), in the forms the resolver meets: a plain page, and pages
    with ``og:title`` and ``og:url``, a canonical link, a date in the URL, a ``date`` meta and a JSON-LD date."""
    import html
    import json

    pages = []
    with WICE.open(encoding="utf-8") as lines:
        for n, line in zip(range(count), lines, strict=False):
            evidence = json.loads(line)["evidence"]
            title = next((e.split("TITLE:", 1)[1].strip() for e in evidence if e.startswith("(meta data)")), "")
            body = "".join(
                f"<h2>{html.escape(e.lstrip('# '))}</h2>"
                if e.startswith("#")
                else (f"<p>{html.escape(e)}</p>" if len(e) > 60 else f"<div class='nav'>{html.escape(e)}</div>")
                for e in evidence
                if not e.startswith("(meta data)")
            )
            variant = n % 4
            head = f"<title>{html.escape(title)}</title>" if title and variant != 3 else ""
            url = f"http://site.test/{n}/page"
            if variant == 1:
                head += f"<meta property='og:title' content='{html.escape(title[:30])}'><meta property='og:url' "
                head += f"content='http://site.test/og/{n}'><link rel='canonical' href='/canonical/{n}'>"
            elif variant == 2:
                url = f"http://site.test/2021/03/{n + 1:02d}/story"
                head += "<meta name='date' content='2024-05-06'>"
            elif variant == 3:
                head += '<script type="application/ld+json">{"@type": "NewsArticle", "datePublished": '
                head += f'"2022-0{n % 9 + 1}-11", "headline": "{html.escape(title)}"}}</script>'
            pages.append((url, f"<html><head>{head}</head><body><article>{body}</article></body></html>"))
    return pages


def read_as_before(body: bytes, url: str) -> tuple[str, str | None, str | None, str | None, str | None]:
    """``(text, title, published, updated, canonical)`` of an HTML page read as the resolver read it before it
    made trafilatura's options once and looked for the title and date alone: one ``bare_extraction`` call with
    the metadata step whole."""
    import lxml.html
    import trafilatura
    from htmldate import find_date

    from citeaudit.sources.extract import _clean, _declared_title, _decode, _iso_date
    from citeaudit.sources.links import canonical_link

    markup = _decode(body, None, html=True)
    tree = lxml.html.fromstring(markup)
    canonical = next(
        (
            canonical_link(url, (link.get("href") or "").strip())
            for link in tree.iter("link")
            if "canonical" in (link.get("rel") or "").lower().split() and (link.get("href") or "").strip()
        ),
        None,
    )
    declared_title = _declared_title(tree)
    updated = _iso_date(find_date(tree, original_date=False, extensive_search=False))
    extracted = trafilatura.bare_extraction(
        tree,
        url=url,
        fast=True,
        with_metadata=True,
        include_comments=False,
        date_extraction_params={"original_date": True, "extensive_search": False},
    )
    text = getattr(extracted, "text", None) if extracted is not None else None
    if not text:
        text = trafilatura.html2txt(markup) or ""
    title = declared_title or _clean((getattr(extracted, "title", None) if extracted is not None else None) or "")
    published = _iso_date(getattr(extracted, "date", None) if extracted is not None else None)
    return text, title, published, updated, canonical


def test_reading_a_page_gives_what_the_whole_trafilatura_call_gave() -> None:
    import json

    from tests.site import ARTICLE

    from citeaudit.sources.extract import read_document

    long_text = " ".join(["The AX220 keeps a 20 L tank and a 12 bar pump for outdoor use."] * 12)
    pages = [
        *wice_pages(120),
        ("http://site.test/article", ARTICLE),
        ("http://h.bench.test/page/7", PAGE.format(n=7)),
        # no <title>: the title is trafilatura's (an og:title, a JSON-LD headline, an <h1>)
        ("http://site.test/a", f"<html><head></head><body><h1>AX220 data</h1><p>{long_text}</p></body></html>"),
        (
            "http://site.test/b",
            "<html><head><meta property='og:title' content='AX220 &amp; friends'></head><body><article>"
            f"<p>{long_text}</p></article></body></html>",
        ),
        (
            "http://site.test/c",
            '<html><head><script type="application/ld+json">'
            + json.dumps({"@type": "Article", "headline": "AX220 review", "datePublished": "2023-02-01"})
            + f"</script></head><body><p>{long_text}</p></body></html>",
        ),
        ("http://site.test/2020/05/06/d", f"<html><body><p>{long_text}</p></body></html>"),  # date in the URL
        ("http://site.test/e", "<html><head><script>{ not json</script></head><body><p>x</p></body></html>"),
        ("http://site.test/f", "<html><body></body></html>"),
    ]
    published = 0
    for url, markup in pages:
        document = read_document(markup.encode(), "text/html; charset=utf-8", url)
        found = (document.text, document.title, document.published, document.updated, document.canonical_url)
        assert found == read_as_before(markup.encode(), url), url
        published += document.published is not None
    assert published > 20  # the dates do come from URLs, metas and JSON-LD


def test_a_worker_that_fails_to_start_is_never_offered(monkeypatch: pytest.MonkeyPatch) -> None:
    from citeaudit.sources import workers

    async def fail(cls: type) -> None:
        raise workers.WorkerDied("the extraction worker process did not start as expected")

    monkeypatch.setattr(workers._Worker, "start", classmethod(fail))

    async def run() -> tuple[bool, bool, list[int]]:
        async with workers.ExtractionHelper(4) as helper:
            helper.start_soon()
            helper.start_soon()  # once only
            assert helper._starting is not None
            await helper._starting
            return helper.started, helper.ready(), helper.pids()

    # the loop goes on reading every page itself
    assert asyncio.run(run()) == (True, False, [])
