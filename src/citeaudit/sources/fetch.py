"""Fetching one cited URL: wrappers unwrapped, redirects followed and recorded, the body read under a byte cap.

Politeness and safety live here: a global and a per-host cap on requests in flight, retries with exponential
backoff on 429/503 that honour ``Retry-After``, a deadline per hop, no cookies, no credentials, no proxies from
the environment, a clear User-Agent, and every connection checked by :mod:`citeaudit.sources.security`.
Bodies are streamed and decompressed here (gzip/deflate only, never more than the cap at a time), so memory
stays bounded whatever the server sends.
"""

from __future__ import annotations

import asyncio
import dataclasses
import http.cookiejar
import math
import os
import ssl
import time
import zlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx

from citeaudit.core.clock import utc_now
from citeaudit.core.errors import InvalidValue
from citeaudit.core.identity import unwrap
from citeaudit.core.model import SourceStatus
from citeaudit.sources.extract import (
    HTML_TYPES,
    MAX_HTML_BYTES,
    UnreadableDocument,
    read_document,
    read_document_text,
    split_type,
)
from citeaudit.sources.headers import MalformedHeader, content_length, retry_after
from citeaudit.sources.links import canonical_link, valid_http_url
from citeaudit.sources.offload import WorkerGate, machine_cpu
from citeaudit.sources.security import AddressBlocked, NameNotResolved, PerOriginTransport
from citeaudit.sources.workers import ExtractionHelper, ExtractionPool, ExtractionTimedOut, WorkerDied
from citeaudit.store.records import Document, FetchOutcome, Hop

__all__ = ["USER_AGENT", "Fetcher", "ResolveSettings"]

USER_AGENT = "citeaudit/0.1 (citation audit; reads each cited page once; no cookies)"
"""User-Agent sent with every request."""

_KEPT_HEADERS = (
    "content-type",
    "content-length",
    "content-encoding",
    "content-language",
    "last-modified",
    "etag",
    "date",
    "link",
)
_INLINE_BYTES = 64 * 1024
_HELPER_DEPTH = 16
"""Small pages waiting on the gate's worker at most (a busy loop reads its replies once a turn)."""
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_RETRY_STATUSES = frozenset({429, 503})


@dataclass(frozen=True, slots=True)
class ResolveSettings:
    """How the resolver behaves. Checked when made: a bad value names itself and the allowed range."""

    concurrency: int = 16
    """Requests in flight at most, over all hosts."""
    per_host: int = 4
    """Requests in flight at most to one host."""
    timeout: float = 10.0
    """Seconds without progress before a request times out; one hop gets at most 3× this in all."""
    max_bytes: int = 10 * 1024 * 1024
    """Largest body read (after decompression); a larger one fails as ``too_large``."""
    allow_private: bool = False
    """Allow loopback, private, link-local, multicast and reserved addresses (off: refused at every hop)."""
    retry_failed: bool = False
    """Try sources that failed before again."""
    refresh: bool = False
    """Read already resolved sources again (a new snapshot; the old one is kept)."""
    max_redirects: int = 10
    """Hops followed at most (redirects and unwrapped wrappers)."""
    retries: int = 3
    """Retries of one request answered 429 or 503."""
    backoff: float = 0.5
    """First wait before a retry without ``Retry-After``, in seconds; doubled on each retry."""
    max_retry_wait: float = 60.0
    """Longest wait accepted; a ``Retry-After`` beyond it fails the source with the status as reason."""
    host_map: tuple[tuple[str, str], ...] = ()
    """Name-resolution overrides ``(host name, IP address)``, used before DNS and trusted as declared."""
    user_agent: str = USER_AGENT
    """User-Agent header."""
    extract_workers: int | None = 0
    """Processes that extract text (HTML, PDF) beside the one that fetches. 0: small pages (up to 64 KiB, not PDF)
    are read in this process, the others in one worker process started when first needed (so that the time limit
    can be kept); with ``extract_timeout=None`` everything is read in this process. ``None`` (the command line's
    default) reads small pages in this process too, and starts one worker process beside it only once extraction
    takes a measurable share of this process's time while a core has idle time and enough pages are left
    (:class:`~citeaudit.sources.offload.WorkerGate`); that worker is then handed a small HTML page only while few
    are waiting on it, so the fetching loop never waits on it. N ≥ 1: N worker processes read every page.
    Extraction is CPU work: a worker process takes it off the fetching loop, and costs about 0.2 s of CPU to
    start."""
    extract_timeout: float | None = 60.0
    """Wall-clock seconds one document may take to be read in a worker process; past it the worker is killed and
    the source fails as ``extract_timeout``. ``None``: no limit."""
    max_html_bytes: int = MAX_HTML_BYTES
    """Largest HTML page handed to the text extractor (whose time grows with the square of the size); a larger one
    fails as ``extract_too_large``."""

    def __post_init__(self) -> None:
        def bad(name: str, rule: str) -> InvalidValue:
            return InvalidValue("resolve settings", name, f"{getattr(self, name)!r} is not allowed: {rule}")

        for name in ("concurrency", "per_host", "max_bytes", "max_redirects", "max_html_bytes"):
            if getattr(self, name) < 1:
                raise bad(name, "must be at least 1")
        if self.retries < 0:
            raise bad("retries", "must be 0 or more")
        if self.extract_workers is not None and self.extract_workers < 0:
            raise bad("extract_workers", "must be 0 or more (or None to choose)")
        for name in ("timeout", "backoff", "max_retry_wait"):
            if not 0 < getattr(self, name) < math.inf:  # an infinite timeout would be no deadline at all
                raise bad(name, "must be a positive, finite number of seconds")
        if self.extract_timeout is not None and not 0 < self.extract_timeout < math.inf:
            raise bad("extract_timeout", "must be a positive number of seconds (or None for no limit)")


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - platforms without CPU affinity
        return os.cpu_count() or 1


class _NoCookies(http.cookiejar.DefaultCookiePolicy):
    """Accept no cookie and send none: one page's cookies never reach another request."""

    def set_ok(self, cookie: http.cookiejar.Cookie, request: object) -> bool:
        return False

    def return_ok(self, cookie: http.cookiejar.Cookie, request: object) -> bool:
        return False


class _Failure(Exception):
    def __init__(self, reason: str, status: int | None = None) -> None:
        self.reason, self.status = reason, status
        super().__init__(reason)


def _without_credentials(url: str) -> str:
    """``url`` checked to be a valid http(s) URL (:func:`valid_http_url`), user info removed (credentials are
    never sent)."""
    if not valid_http_url(url):
        raise _Failure("bad_url")
    parts = urlsplit(url)
    if "@" in parts.netloc:
        netloc = parts.netloc.rpartition("@")[2]
        parts = parts._replace(netloc=netloc)
    return urlunsplit(parts._replace(fragment=""))


class _Body:
    """Decompressing, size-capped reader for one response."""

    def __init__(self, encoding: str, max_bytes: int) -> None:
        encoding = encoding.strip().lower()
        if encoding in ("", "identity"):
            self._inflater = None
        elif encoding in ("gzip", "x-gzip", "deflate"):
            # 32 + MAX_WBITS: gzip or zlib header, detected from the data.
            self._inflater = zlib.decompressobj(32 + zlib.MAX_WBITS)
        else:
            raise _Failure("unsupported_encoding")
        self._max = max_bytes
        self._parts: list[bytes] = []
        self._size = 0

    def _keep(self, chunk: bytes) -> None:
        self._size += len(chunk)
        if self._size > self._max:
            raise _Failure("too_large")
        self._parts.append(chunk)

    def feed(self, raw: bytes) -> None:
        if self._inflater is None:
            self._keep(raw)
            return
        data = raw
        try:
            while data:
                # Never inflate more than one byte past the cap: a decompression bomb stops here.
                chunk = self._inflater.decompress(data, self._max - self._size + 1)
                self._keep(chunk)
                data = self._inflater.unconsumed_tail
        except zlib.error:
            raise _Failure("unreadable") from None

    def bytes(self) -> bytes:
        if self._inflater is not None:
            try:
                self._keep(self._inflater.flush())
            except zlib.error:
                raise _Failure("unreadable") from None
        return b"".join(self._parts)


@dataclass(frozen=True, slots=True)
class _Response:
    url: str
    status: int
    headers: dict[str, str]
    """Lower-case names; a repeated header's values joined with ", " (as ``httpx.Headers`` gives them)."""
    body: bytes | None


class Fetcher:
    """Resolves URLs with one shared client. Use as an async context manager.

    ``expected``: the URLs this fetcher will be asked for, if known (with ``extract_workers=None``, a worker is
    started only while enough of them are left to pay for it)."""

    def __init__(self, settings: ResolveSettings, expected: int | None = None) -> None:
        self.settings = settings
        self._global = asyncio.Semaphore(settings.concurrency)
        self._hosts: dict[str, asyncio.Semaphore] = {}
        self._client: httpx.AsyncClient | None = None
        self._extractors: ExtractionPool | None = None
        self._expected = expected
        self._asked = 0
        self.gate = WorkerGate(_cores()) if settings.extract_workers is None else None
        """Decides when a worker starts beside the loop (``extract_workers=None`` only)."""
        self.helper = ExtractionHelper(_HELPER_DEPTH) if self.gate is not None else None
        """The worker the gate starts, handed small pages while it keeps up."""

    async def __aenter__(self) -> Fetcher:
        self._client = httpx.AsyncClient(
            transport=PerOriginTransport(
                self.settings.per_host, dict(self.settings.host_map), self.settings.allow_private
            ),
            headers={
                "User-Agent": self.settings.user_agent,
                "Accept": "text/html,application/xhtml+xml,application/pdf;q=0.9,text/plain;q=0.8,*/*;q=0.5",
                "Accept-Encoding": "gzip, deflate",
            },
            cookies=http.cookiejar.CookieJar(policy=_NoCookies()),
            follow_redirects=False,
            timeout=httpx.Timeout(self.settings.timeout),
            trust_env=False,
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._client is not None:
            await self._client.aclose()
        if self._extractors is not None:
            await self._extractors.close()
        if self.helper is not None:
            await self.helper.close()

    @property
    def extraction_workers(self) -> list[int]:
        """Process ids of the extraction workers running now."""
        pool = [] if self._extractors is None else self._extractors.pids()
        return pool + ([] if self.helper is None else self.helper.pids())

    def _pool(self) -> ExtractionPool:
        if self._extractors is None:
            self._extractors = ExtractionPool(max(1, self.settings.extract_workers or 0), self.settings.extract_timeout)
        return self._extractors

    def _read_here(self, body: bytes, content_type: str | None, url: str) -> Document:
        """A small page read in this process (a few milliseconds: handing it to a thread costs more than that),
        timed for the gate while it decides."""
        gate = self.gate
        if gate is None or gate.started:
            return read_document(body, content_type, url, max_html_bytes=self.settings.max_html_bytes)
        start = time.perf_counter()
        try:
            return read_document(body, content_type, url, max_html_bytes=self.settings.max_html_bytes)
        finally:
            now = time.perf_counter()
            gate.extracted(now - start)
            if gate.due(now):
                left = None if self._expected is None else max(0, self._expected - self._asked)
                if gate.check(now, machine_cpu(), left) and self.helper is not None:
                    self.helper.start_soon()

    async def _extract(self, body: bytes, content_type: str | None, url: str) -> Document:
        settings = self.settings
        small = len(body) <= _INLINE_BYTES and not body.lstrip()[:5].startswith(b"%PDF-")
        if not settings.extract_workers and (small or settings.extract_timeout is None):
            if not small:
                return await asyncio.to_thread(
                    read_document, body, content_type, url, max_html_bytes=settings.max_html_bytes
                )
            # The gate's worker takes an HTML page (the others cost less to read than to hand over) only while
            # it keeps up: the loop never waits for it.
            if self.helper is None or not self.helper.ready() or split_type(content_type)[0] not in HTML_TYPES:
                return self._read_here(body, content_type, url)
            document = await self.helper.run(read_document_text, body, content_type, url, settings.max_html_bytes)
            return dataclasses.replace(document, body=body)
        try:
            document = await self._pool().run(read_document_text, body, content_type, url, settings.max_html_bytes)
        except ExtractionTimedOut as exc:
            raise UnreadableDocument("extract_timeout", str(exc)) from None
        # The worker sends back everything but the bytes, which this process already holds.
        return dataclasses.replace(document, body=body)

    @asynccontextmanager
    async def _slot(self, host: str) -> AsyncIterator[None]:
        per_host = self._hosts.get(host)
        if per_host is None:
            per_host = self._hosts[host] = asyncio.Semaphore(self.settings.per_host)
        # Host slot first: a task waiting for a busy host must not hold one of the global slots meanwhile.
        async with per_host, self._global:
            yield

    async def _get(self, url: str) -> _Response:
        assert self._client is not None
        host = (urlsplit(url).hostname or "").lower()
        async with (
            self._slot(host),
            asyncio.timeout(3 * self.settings.timeout),
            self._client.stream("GET", url) as response,
        ):
            status = response.status_code
            headers = _header_map(response.headers)
            if status in _REDIRECTS or status >= 400 or status < 200:
                return _Response(url, status, headers, None)
            try:
                length = content_length(headers.get("content-length"))
            except MalformedHeader as exc:
                raise _Failure(exc.reason, status) from None
            if length is not None and length > self.settings.max_bytes:
                raise _Failure("too_large", status)
            body = _Body(headers.get("content-encoding", ""), self.settings.max_bytes)
            async for raw in response.aiter_raw():
                body.feed(raw)
            return _Response(url, status, headers, body.bytes())

    async def _get_with_retries(self, url: str, chain: list[Hop]) -> _Response:
        for attempt in range(self.settings.retries + 1):
            response = await self._get(url)
            if response.status not in _RETRY_STATUSES or attempt == self.settings.retries:
                return response
            try:
                wait = retry_after(response.headers.get("retry-after"))
            except MalformedHeader as exc:
                raise _Failure(exc.reason, response.status) from None
            if wait is None:
                wait = self.settings.backoff * 2**attempt
            if wait > self.settings.max_retry_wait:
                return response
            chain.append(Hop(url, response.status, "retry"))
            await asyncio.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    async def fetch(self, url: str) -> FetchOutcome:
        """Follow ``url`` to its page and read it; every failure becomes a ``failed`` outcome with its reason."""
        chain: list[Hop] = []
        current = url.strip()
        self._asked += 1
        try:
            return await self._follow(url, current, chain)
        except _Failure as failure:
            return FetchOutcome(
                url, SourceStatus.FAILED, failure.reason, tuple(chain), utc_now(), http_status=failure.status
            )

    async def _follow(self, url: str, current: str, chain: list[Hop]) -> FetchOutcome:
        seen: set[str] = set()
        for _ in range(self.settings.max_redirects + 1):
            target = unwrap(current)
            if target is not None:
                chain.append(Hop(current, None, "unwrapped"))
                current = target
                continue
            current = _without_credentials(current)
            if current in seen:
                chain.append(Hop(current, None, "redirect_loop"))
                raise _Failure("redirect_loop")
            seen.add(current)
            try:
                response = await self._get_with_retries(current, chain)
            except _Failure as failure:
                chain.append(Hop(current, failure.status, failure.reason))
                raise
            except Exception as exc:
                reason = _reason(exc)
                chain.append(Hop(current, None, reason))
                raise _Failure(reason) from None
            location = response.headers.get("location")
            if response.status in _REDIRECTS and location:
                chain.append(Hop(current, response.status))
                try:
                    current = urljoin(current, location.strip())
                except ValueError:  # e.g. an unclosed IPv6 literal: the redirect leads nowhere
                    chain.append(Hop(location.strip(), None, "bad_url"))
                    raise _Failure("bad_url", response.status) from None
                continue
            chain.append(Hop(current, response.status))
            return await self._final(url, response, chain)
        raise _Failure("too_many_redirects")

    async def _final(self, url: str, response: _Response, chain: list[Hop]) -> FetchOutcome:
        kept = tuple((name, response.headers[name]) for name in _KEPT_HEADERS if name in response.headers)
        canonical = _canonical_header(response)
        base = FetchOutcome(
            url,
            SourceStatus.FAILED,
            f"http_{response.status}",
            tuple(chain),
            utc_now(),
            final_url=response.url,
            canonical_url=canonical,
            http_status=response.status,
            headers=kept,
        )
        if response.body is None or not 200 <= response.status < 300:
            return base
        try:
            document = await self._extract(response.body, response.headers.get("content-type"), response.url)
        except UnreadableDocument as exc:
            return _replace(base, reason=exc.reason)
        except WorkerDied:
            # The worker process died (killed, out of memory): no later page could be read either, so the run
            # stops here; what it recorded so far stays, and the next run reads the rest.
            raise
        except Exception:
            # A body that breaks a parser (or its worker) is an unreadable page, not the end of the run.
            return _replace(base, reason="unreadable")
        return FetchOutcome(
            url,
            SourceStatus.RESOLVED,
            None,
            tuple(chain),
            base.fetched_at,
            final_url=response.url,
            canonical_url=canonical or document.canonical_url,
            http_status=response.status,
            headers=kept,
            document=document,
        )


def _header_map(headers: httpx.Headers) -> dict[str, str]:
    """``headers`` read once into a dict: what ``headers[name]`` gives for every name (each lookup in
    ``httpx.Headers`` scans and decodes the whole list again)."""
    found: dict[str, str] = {}
    for name, value in headers.multi_items():
        found[name] = f"{found[name]}, {value}" if name in found else value
    return found


def _replace(outcome: FetchOutcome, reason: str) -> FetchOutcome:
    return FetchOutcome(
        outcome.requested_url,
        outcome.status,
        reason,
        outcome.chain,
        outcome.fetched_at,
        outcome.final_url,
        outcome.canonical_url,
        outcome.http_status,
        outcome.headers,
    )


def _canonical_header(response: _Response) -> str | None:
    link = response.headers.get("link")
    if not link:
        return None
    for value in httpx.Response(200, headers={"link": link}).links.values():
        if "canonical" in str(value.get("rel", "")).lower().split() and value.get("url"):
            return canonical_link(response.url, value["url"])
    return None


def _reason(exc: Exception) -> str:
    """The failure reason for an exception raised while requesting one URL."""
    if isinstance(exc, AddressBlocked):
        return "blocked_private_address"
    if isinstance(exc, NameNotResolved):
        return "dns"
    if isinstance(exc, (httpx.TimeoutException, TimeoutError)):
        return "timeout"
    if isinstance(exc, (httpx.InvalidURL, httpx.UnsupportedProtocol)):
        return "bad_url"
    if isinstance(exc, httpx.RemoteProtocolError) and "location header" in str(exc).lower():
        # httpx reads a redirect's Location even when it does not follow it: a malformed one is a bad link.
        return "bad_url"
    if isinstance(exc, httpx.ConnectError):
        return "tls" if isinstance(exc.__context__, ssl.SSLError) or "ssl" in str(exc).lower() else "connect"
    if isinstance(exc, httpx.TransportError):
        return "network"
    if isinstance(exc, UnreadableDocument):
        return exc.reason
    raise exc
