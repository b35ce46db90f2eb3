"""A local HTTP server on 127.0.0.1 that answers like the engines' APIs, scripted per route.

Each route (method and path) has a queue of scripted replies; when the queue is empty the route's default
reply is used. Replies built from the hand-written fixtures get a fresh response id per request, as real
engines do, so two tasks never receive byte-identical bodies by accident.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

FIXTURES = Path(__file__).parent / "fixtures"

ROUTES = {
    "openai": ("POST", "/v1/responses"),
    "perplexity": ("POST", "/chat/completions"),
    "perplexity-agent": ("POST", "/v1/agent"),
    "gemini": ("POST", "/v1beta/models/gemini-2.5-flash:generateContent"),
    "anthropic": ("POST", "/v1/messages"),
    "serpapi": ("GET", "/search.json"),
}
"""Where each engine's request lands (default models)."""


@dataclass(frozen=True)
class Reply:
    """One scripted HTTP reply."""

    status: int = 200
    body: bytes | Callable[[], bytes] = b"{}"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0

    def payload(self) -> bytes:
        return self.body() if callable(self.body) else self.body


@dataclass(frozen=True)
class Seen:
    """One request the server received."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    at: float


_ids = itertools.count(1)


def fixture_reply(name: str, status: int = 200, **headers: str) -> Reply:
    """A reply whose body is the fixture at ``name`` with a fresh response id on every request."""
    document = json.loads((FIXTURES / name).read_text(encoding="utf-8"))

    def body() -> bytes:
        fresh = json.loads(json.dumps(document))
        n = next(_ids)
        if "responseId" in fresh:
            fresh["responseId"] = f"{fresh['responseId']}-{n}"
        elif isinstance(fresh.get("search_metadata"), dict):
            fresh["search_metadata"]["id"] = f"{fresh['search_metadata'].get('id', 'search')}-{n}"
        else:
            fresh["id"] = f"{fresh.get('id', 'response')}-{n}"
        return json.dumps(fresh, ensure_ascii=False).encode()

    return Reply(status, body, {"Content-Type": "application/json", **headers})


class EngineServer:
    """The running server: script replies with :meth:`script`, read what arrived in :attr:`seen`."""

    def __init__(self) -> None:
        self.queues: dict[tuple[str, str], deque[Reply]] = {}
        self.defaults: dict[tuple[str, str], Reply] = {}
        self.pages: dict[str, Reply] = {}
        """Replies by path for any method (web pages and redirects behind cited links)."""
        self.seen: list[Seen] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                with server.lock:
                    server.seen.append(
                        Seen(
                            self.command,
                            parts.path,
                            parse_qs(parts.query),
                            {k.lower(): v for k, v in self.headers.items()},
                            body,
                            time.monotonic(),
                        )
                    )
                    route = (self.command, parts.path)
                    queue = server.queues.get(route)
                    reply = queue.popleft() if queue else server.defaults.get(route) or server.pages.get(parts.path)
                if reply is None:
                    reply = Reply(404, b'{"error": "no such route"}', {"Content-Type": "application/json"})
                if reply.delay:
                    time.sleep(reply.delay)
                data = reply.payload()
                self.send_response(reply.status)
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = _handle  # noqa: N815 (the http.server handler API)
            do_POST = _handle  # noqa: N815

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def default(self, engine: str, reply: Reply) -> None:
        """The reply ``engine``'s route gives whenever nothing is scripted."""
        self.defaults[ROUTES[engine]] = reply

    def script(self, engine: str, *replies: Reply) -> None:
        """Replies ``engine``'s route gives next, in order."""
        self.queues.setdefault(ROUTES[engine], deque()).extend(replies)

    def requests_to(self, engine: str) -> list[Seen]:
        """Requests received on ``engine``'s route."""
        method, path = ROUTES[engine]
        with self.lock:
            return [s for s in self.seen if s.method == method and s.path == path]


@contextmanager
def engine_server() -> Iterator[EngineServer]:
    """A running :class:`EngineServer`, shut down afterwards."""
    server = EngineServer()
    thread = threading.Thread(target=server.httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()
        thread.join()


GOOD = {
    "openai": "openai-responses/search.json",
    "perplexity": "perplexity/sonar.json",
    "perplexity-agent": "perplexity/agent.json",
    "gemini": "gemini/grounded.json",
    "anthropic": "anthropic/web-search.json",
    "serpapi": "serpapi-ai-overview/google.json",
}
"""A successful answer fixture per engine."""
