"""Hostile response headers: ``Retry-After`` and ``Content-Length`` in every malformed form, oversized and repeated,
served from 127.0.0.1 to ``resolve`` and to ``collect``. Each fails its own source or request with a reason; the run
goes on and finishes."""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.site import ARTICLE
from tests.test_collect import KEYS, fast, rows, write_protocol
from tests.test_resolve import make_db, settings, source

from citeaudit.collect import collect, load_plan
from citeaudit.sources import resolve_sources
from citeaudit.sources.headers import MAX_HEADER_CHARS, MalformedHeader, content_length, retry_after
from engine_server import Reply, engine_server

MALFORMED_RETRY_AFTER = [
    "²",  # str.isdigit() takes it, float() refuses it
    "١٢",  # Arabic-Indic digits: int() would read 12
    "-5",
    "+5",
    "1.5",
    "1e3",
    "0x10",
    "nan",
    "inf",
    "5, 7",  # a repeated header, as the values are joined
    "",
    "tomorrow",
    "Wed, 99 Foo 2015 07:28:00 GMT",
    "9" * (MAX_HEADER_CHARS + 1),  # oversized (and past int()'s 4 300 digits)
]


# -- the parsing functions ---------------------------------------------------------------------------------


@pytest.mark.parametrize("value", MALFORMED_RETRY_AFTER)
def test_malformed_retry_after_is_refused_by_name(value: str) -> None:
    with pytest.raises(MalformedHeader, match="malformed Retry-After") as refused:
        retry_after(value)
    assert refused.value.reason == "bad_header"


def test_well_formed_retry_after_values() -> None:
    assert retry_after(None) is None
    assert retry_after("7") == 7.0
    assert retry_after(" 7 ") == 7.0  # surrounding whitespace is not part of the value
    assert retry_after("0") == 0.0
    assert retry_after("9" * 13) == math.inf  # 13 digits: longer than any wait, never converted
    assert retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past: no wait
    later = datetime.now(UTC) + timedelta(hours=1)
    wait = retry_after(format_datetime(later, usegmt=True))
    assert wait is not None
    assert 3500 < wait <= 3600


@pytest.mark.parametrize("value", ["²", "-1", "1.0", "12, 13", "", "0x10", "9" * (MAX_HEADER_CHARS + 1)])
def test_malformed_content_length_is_refused(value: str) -> None:
    with pytest.raises(MalformedHeader, match="malformed Content-Length"):
        content_length(value)


def test_well_formed_content_length_values() -> None:
    assert content_length(None) is None
    assert content_length("12") == 12
    assert content_length("12, 12") == 12  # a repeated header with one value
    assert content_length("9" * 30) == 2**63  # more bytes than any body: not converted digit by digit


@given(st.text(max_size=60))
def test_any_header_text_gives_a_wait_or_a_refusal(value: str) -> None:
    for parse in (retry_after, content_length):
        try:
            parsed = parse(value)
        except MalformedHeader:
            continue
        assert parsed is not None
        assert parsed >= 0


# -- resolve against a server sending them -------------------------------------------------------------------


class HeaderSite(BaseHTTPRequestHandler):
    """``/retry/<n>``: 429 with the n-th raw header lines of :attr:`headers`; ``/length/<n>``: 200 with the n-th
    Content-Length lines; anything else: the article."""

    retry_headers: ClassVar[list[list[bytes]]] = []
    length_headers: ClassVar[list[list[bytes]]] = []
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""

    def do_GET(self) -> None:
        kind, _, number = self.path.strip("/").partition("/")
        body = ARTICLE.encode()
        if kind == "retry":
            lines, status, body = self.retry_headers[int(number)], b"429 Too Many Requests", b"slow down"
        elif kind == "length":
            lines, status = self.length_headers[int(number)], b"200 OK"
        else:
            lines, status = [b"Content-Length: " + str(len(body)).encode()], b"200 OK"
        if not any(line.lower().startswith(b"content-length") for line in lines):
            lines = [*lines, b"Content-Length: " + str(len(body)).encode()]
        head = b"HTTP/1.1 " + status + b"\r\nContent-Type: text/html\r\n" + b"".join(line + b"\r\n" for line in lines)
        self.wfile.write(head + b"\r\n" + body)


@pytest.fixture
def header_site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), HeaderSite)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://site.test:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def test_resolve_records_each_hostile_header_as_its_own_sources_failure(db_path: Path, header_site: str) -> None:
    # Malformed values reach the client as text (UTF-8 bytes decode as such, others as Latin-1); a repeated header
    # is one value joined by ", ".
    retry = [[b"Retry-After: " + value.encode()] for value in MALFORMED_RETRY_AFTER if value]
    retry += [[b"Retry-After:"], [b"Retry-After: 5", b"Retry-After: 7"], [b"Retry-After: \xb2"]]
    retry += [[b"Retry-After: " + b"9" * 70_000]]  # oversized
    huge = len(retry)
    retry += [[b"Retry-After: 99999999"]]  # well formed, far past the longest wait: the source fails as http_429
    lengths = [[b"Content-Length: \xc2\xb2"], [b"Content-Length: 1, 2"], [b"Content-Length: " + b"9" * 5000]]
    HeaderSite.retry_headers, HeaderSite.length_headers = retry, lengths
    urls = [f"{header_site}/retry/{n}" for n in range(len(retry))]
    urls += [f"{header_site}/length/{n}" for n in range(len(lengths))]
    urls += [f"{header_site}/article"]
    make_db(db_path, [{"claim_id": "c1", "url": url} for url in urls])
    report = resolve_sources(db_path, settings())
    # every source is decided: 1 resolved, the others failed, none pending
    assert report.selected == len(urls) == len(retry) + 3 + 1
    assert report.resolved == 1
    assert sum(report.failed.values()) == len(urls) - 1
    for n, lines in enumerate(retry):
        found = source(db_path, f"{header_site}/retry/{n}")
        assert found["status"] == "failed", lines
        if n == huge:
            assert found["reason"] == "http_429"
        else:
            assert found["reason"] == "bad_header", lines
    for n in range(len(lengths)):
        found = source(db_path, f"{header_site}/length/{n}")
        # the HTTP parser (h11) refuses a Content-Length that is not one run of digits before citeaudit reads it
        assert (found["status"], found["reason"]) == ("failed", "network"), n
    assert source(db_path, f"{header_site}/article")["status"] == "resolved"


# -- collect against a fake engine sending them --------------------------------------------------------------


@pytest.mark.parametrize("value", ["²", "5, 7", "1.5", "nan", "-1", "9" * (MAX_HEADER_CHARS + 1)])
def test_collect_records_a_malformed_retry_after_as_the_requests_failure(
    tmp_path: Path, db_path: Path, value: str
) -> None:
    with engine_server() as server:
        server.default("anthropic", Reply(429, b'{"type": "error"}', {"Retry-After": value}))
        plan = load_plan(write_protocol(tmp_path, [{"name": "anthropic", "base_url": server.url}]))
        report = collect(db_path, plan, fast(engines=("anthropic",), concurrency=1), env=KEYS)
        requests = len(server.requests_to("anthropic"))
    assert not report.complete
    # 2 questions, each one request: a malformed Retry-After is not waited on nor retried
    assert requests == 2
    (reason,) = {reason for _, reason in report.errors}
    assert reason.startswith("http_429 (malformed Retry-After")
    assert rows(db_path, "SELECT state, count(*) FROM collection_tasks GROUP BY state") == [("error", 2)]
