"""A real HTTP server on 127.0.0.1 for resolver tests: a thread running ``http.server`` with the pages the
resolver must cope with. Every request is logged (path and headers) so tests can check what was sent."""

from __future__ import annotations

import gzip
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

ARTICLE = (
    "<html><head><title>AX220 specification</title><meta name='date' content='2025-03-04'></head><body>"
    "<nav>Home | Products</nav><article><h1>AX220 specification</h1>"
    "<p>The AX220 has a 20 L tank. It is rated for outdoor use in temperatures between minus ten and forty "
    "degrees Celsius, according to the maker's own technical sheet.</p>"
    "<p>Its pump delivers 12 bar of pressure and the hose is ten metres long, which is enough for most "
    "gardens and small yards without an extension.</p></article><footer>© Brand</footer></body></html>"
)

MANUAL = (
    "AX220 user manual. This manual covers installation, safe use and care of the AX220 pressure washer at home.\n\n"
    "Tank. The AX220 has a 20 L tank made of impact-resistant plastic, filled through the cap on top of the unit.\n\n"
    "Pump. Its pump delivers 12 bar of pressure at the nozzle, measured with the standard lance and the hose.\n\n"
    "Outdoor use. The AX220 is rated for outdoor use between minus ten and forty degrees Celsius out of the rain.\n"
)
"""A plain-text page of four paragraphs: the resolver stores it as four passages."""


def pdf_with_text(text: str) -> bytes:
    """A one-page PDF whose content stream shows ``text`` (Helvetica), with a correct cross-reference table."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    for offset in offsets:
        out += f"{offset:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


class Site(BaseHTTPRequestHandler):
    """Routes of the test site. ``port`` is set once the server is bound."""

    port: ClassVar[int] = 0
    log: ClassVar[list[tuple[str, dict[str, str]]]] = []
    hits: ClassVar[Counter[str]] = Counter()
    lock: ClassVar[threading.Lock] = threading.Lock()
    slow_seconds: ClassVar[float] = 2.0
    active: ClassVar[Counter[str]] = Counter()
    peak: ClassVar[Counter[str]] = Counter()

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: tests read ``log`` instead."""

    def _send(self, status: int, body: bytes = b"", content_type: str = "text/html", **headers: str) -> None:
        self.send_response(status)
        if status >= 200 and status not in (204, 304):
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        if body:
            self.wfile.write(body)

    def _redirect(self, location: str, status: int = 302) -> None:
        self._send(status, b"", Location=location, Content_Length="0")

    def do_GET(self) -> None:
        path = self.path
        with self.lock:
            self.log.append((path, {k.lower(): v for k, v in self.headers.items()}))
            self.hits[path.split("?")[0]] += 1
            hits = self.hits[path.split("?")[0]]
        route = path.split("?")[0]
        if route == "/track":
            self._redirect("/hop?utm_source=openai&id=7")
        elif route == "/hop":
            self._redirect(f"http://site.test:{self.port}/article?id=7&utm_medium=chat&fbclid=abc", 301)
        elif route == "/article":
            self._send(200, ARTICLE.encode())
        elif route == "/manual.txt":
            self._send(200, MANUAL.encode(), "text/plain; charset=utf-8")
        elif route == "/canon":
            page = ARTICLE.replace("<head>", "<head><link rel='canonical' href='/canonical-page'>")
            self._send(200, page.encode())
        elif route == "/syndicated":
            canonical = f"http://site.test:{self.port}/canonical-page"
            self._send(200, ARTICLE.replace("<head>", f"<head><link rel='canonical' href='{canonical}'>").encode())
        elif route == "/canonical-page":
            self._send(200, ARTICLE.encode())
        elif route == "/canon-header":
            self._send(200, b"Plain words.", "text/plain", Link='</canonical-page>; rel="canonical"')
        elif route == "/loop-a":
            self._redirect("/loop-b")
        elif route == "/loop-b":
            self._redirect("/loop-a")
        elif route == "/slow":
            time.sleep(self.slow_seconds)
            self._send(200, ARTICLE.encode())
        elif route.startswith("/paced/"):
            host = self.headers.get("Host", "").split(":")[0]
            with self.lock:
                self.active[host] += 1
                self.active["*"] += 1
                self.peak[host] = max(self.peak[host], self.active[host])
                self.peak["*"] = max(self.peak["*"], self.active["*"])
            time.sleep(0.25)
            with self.lock:
                self.active[host] -= 1
                self.active["*"] -= 1
            self._send(200, ARTICLE.replace("AX220", route.rsplit("/", 1)[1]).encode())
        elif route == "/big":
            self._send(200, b"<html><body><p>" + b"a" * 300_000 + b"</p></body></html>")
        elif route == "/big-chunked":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = b"b" * 65536
            for _ in range(8):
                self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            self.wfile.write(b"0\r\n\r\n")
        elif route == "/bomb":
            # 64 MiB of zeros gzip to about 64 KiB.
            body = gzip.compress(b"\0" * (64 * 1024 * 1024), compresslevel=9)
            self._send(200, body, "text/plain", Content_Encoding="gzip")
        elif route == "/gzipped":
            self._send(200, gzip.compress(b"Compressed plain words."), "text/plain", Content_Encoding="gzip")
        elif route == "/busy":
            if hits == 1:
                self._send(429, b"slow down", "text/plain", Retry_After="1")
            else:
                self._send(200, ARTICLE.encode())
        elif route == "/missing":
            self._send(404, b"not here", "text/plain")
        elif route == "/latin1":
            page = "<html><head><title>Caf\u00e9</title></head><body>"
            page += "<p>Caf\u00e9 cr\u00e8me, na\u00efve fa\u00e7ade.</p>"
            self._send(200, (page + "</body></html>").encode("latin-1"), "text/html; charset=iso-8859-1")
        elif route == "/meta-charset":
            page = "<html><head><meta charset='windows-1252'><title>Euro</title></head><body><p>Price 20 \u20ac only."
            self._send(200, (page + "</p></body></html>").encode("cp1252"), "text/html")
        elif route == "/doc.pdf":
            self._send(200, pdf_with_text("Tank capacity: 20 L"), "application/pdf")
        elif route == "/to-private":
            self._redirect(f"http://127.0.0.1:{self.port}/article?id=7")
        elif route == "/cookie":
            self._send(302, b"", Location="/echo", Set_Cookie="session=secret; Path=/", Content_Length="0")
        elif route == "/echo":
            self._send(200, f"cookie={self.headers.get('Cookie')}".encode(), "text/plain")
        elif route == "/to-bad-port":
            self._redirect(f"http://site.test:{self.port + 70000}/article")
        elif route == "/to-bad-ipv6":
            self._redirect("http://[::1/article")
        elif route == "/bad-canonical-header":
            self._send(200, ARTICLE.encode(), Link="<http://[::1/x>; rel=canonical")
        elif route == "/bad-canonical-html":
            page = ARTICLE.replace("<head>", "<head><link rel='canonical' href='http://site.test:99999/x'>")
            self._send(200, page.encode())
        elif route == "/endless.pdf":
            from tests.hostile import shared_stream_pdf

            self._send(200, shared_stream_pdf(100, 400), "application/pdf")
        elif route == "/image":
            self._send(200, b"\x89PNG\r\n\x1a\n", "image/png")
        else:
            self._send(404, b"no route", "text/plain")


def start_site() -> tuple[ThreadingHTTPServer, threading.Thread]:
    """Bind the site on an ephemeral 127.0.0.1 port and serve it from a daemon thread."""
    Site.log = []
    Site.hits = Counter()
    Site.active = Counter()
    Site.peak = Counter()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Site)
    server.daemon_threads = True
    Site.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    return server, thread
