"""A real review server for tests: a uvicorn server on 127.0.0.1 in a thread, and an httpx client that logs in
through the HTML forms like a person (CSRF tokens read from the pages it gets)."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from builders import answer, claim, document
from citeaudit.interchange import parse_audit_bytes
from citeaudit.review.app import ReviewConfig, create_app
from citeaudit.review.auth import SESSION_COOKIE, hash_password
from citeaudit.store import Store
from citeaudit.store.review import ReviewStore

PASSWORD = "correct horse battery"
_CSRF = re.compile(r'name="csrf" value="([^"]+)"')
_SUBMISSION = re.compile(r'name="submission" value="([^"]+)"')
_HASH_CACHE: dict[str, str] = {}

MALICIOUS_ANSWER = (
    "Intro. <script>alert('answer')</script> The AX220 has a 20 L tank. "
    "<img src=x onerror=\"alert('img')\"> It runs outdoors."
)


def review_document() -> dict[str, Any]:
    """Two answers, three claims, five edges; one edge has a model suggestion; one source is title-only.

    Claim c1 ("The AX220 has a 20 L tank.") sits at characters 45..71 of a1's text.
    """
    a1 = answer("a1", citations=["https://brand.com/ax220", "https://shop.example/ax"], text=MALICIOUS_ANSWER)
    a2 = answer("a2", question="q1", platform="p2", run="r2", citations=["https://brand.com/ax220"])
    start = MALICIOUS_ANSWER.index("The AX220")
    c1 = claim("c1", "a1", "q1f1", start=start, end=start + len("The AX220 has a 20 L tank."))
    c1["text"] = "The AX220 has a 20 L tank."
    c2 = claim("c2", "a1")
    c2["text"] = "It runs outdoors."
    c3 = claim("c3", "a2", "q1f1")
    edges = [
        {
            "claim_id": "c1",
            "url": "https://brand.com/ax220",
            "judgements": [
                {"label": "supported", "origin": "model", "reviewer": "nli-judge-v1", "reasoning": "MODEL-REASON"}
            ],
        },
        {"claim_id": "c1", "url": "https://shop.example/ax"},
        {"claim_id": "c2", "title": "<script>alert('title')</script> Outdoor use guide"},
        {"claim_id": "c2", "url": "javascript:alert('link')"},
        {"claim_id": "c3", "url": "https://brand.com/ax220"},
    ]
    return document([a1, a2], [c1, c2, c3], edges)


def make_db(path: Path, doc: dict[str, Any] | None = None) -> Path:
    """A database holding ``doc`` (default :func:`review_document`)."""
    payload = json.dumps(doc or review_document()).encode()
    with Store(path) as store:
        store.import_audit(parse_audit_bytes(payload, "review.audit.json"), payload, "review.audit.json")
    return path


def add_account(path: Path, name: str, role: str) -> None:
    """An account with :data:`PASSWORD` (the Argon2 hash is computed once per test session)."""
    if "hash" not in _HASH_CACHE:
        _HASH_CACHE["hash"] = hash_password(PASSWORD)
    ReviewStore.prepare(path)
    with ReviewStore(path) as store:
        store.accounts.add_reviewer(name, role, _HASH_CACHE["hash"])


def set_policy(path: Path, policy: str) -> None:
    """Set the review policy as an admin would."""
    with ReviewStore(path) as store:
        store.accounts.set_setting("test", "policy", policy)


@contextmanager
def serve(config: ReviewConfig) -> Iterator[str]:
    """Run the review app on a free 127.0.0.1 port; yields its base URL and stops it afterwards."""
    ReviewStore.prepare(config.db)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(create_app(config), log_level="warning", lifespan="off", ws="none", access_log=False)
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("review server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


class ReviewClient:
    """One person's browser session over plain HTTP (the Secure session cookie is kept by hand, as a browser
    does for 127.0.0.1)."""

    def __init__(self, base: str) -> None:
        self.http = httpx.Client(base_url=base, follow_redirects=False, timeout=30)
        self.session: str | None = None
        self.csrf: str | None = None

    def close(self) -> None:
        """Close the connection pool."""
        self.http.close()

    def _headers(self) -> dict[str, str]:
        return {"Cookie": f"{SESSION_COOKIE}={self.session}"} if self.session else {}

    def login(self, name: str, password: str = PASSWORD) -> httpx.Response:
        """Log in through the form; keeps the session on success."""
        form = self.http.get("/login")
        login_csrf = form.cookies["citeaudit_login_csrf"]
        token = _CSRF.search(form.text)
        assert token is not None
        done = self.http.post(
            "/login",
            data={"name": name, "password": password, "csrf": token.group(1)},
            headers={"Cookie": f"citeaudit_login_csrf={login_csrf}"},
        )
        if done.status_code == 303:
            self.session = done.cookies[SESSION_COOKIE]
            self.get("/queue")
        return done

    def get(self, url: str) -> httpx.Response:
        """GET as this person; remembers the page's CSRF token."""
        response = self.http.get(url, headers=self._headers())
        found = _CSRF.search(response.text)
        if found:
            self.csrf = found.group(1)
        return response

    def post(self, url: str, data: dict[str, Any], csrf: bool = True) -> httpx.Response:
        """POST a form as this person (with the CSRF token unless ``csrf`` is false)."""
        body = {**data, **({"csrf": self.csrf} if csrf and self.csrf else {})}
        return self.http.post(url, data=body, headers=self._headers())

    def judge(self, edge_pk: int, label: str, **fields: str) -> httpx.Response:
        """Open the edge page and submit a label from its form."""
        page = self.get(f"/edges/{edge_pk}")
        assert page.status_code == 200, page.text
        submission = _SUBMISSION.search(page.text)
        assert submission is not None, "no label form on the edge page"
        action = "adjudication" if 'action="/edges/' + str(edge_pk) + '/adjudication"' in page.text else "judgements"
        return self.post(f"/edges/{edge_pk}/{action}", {"label": label, "submission": submission.group(1), **fields})


def edge_pk(path: Path, claim_id: str, url_or_title: str) -> int:
    """Row id of the edge of ``claim_id`` whose source has this URL or title."""
    import sqlite3

    with sqlite3.connect(path) as db:
        row = db.execute(
            "SELECT e.pk FROM edges e JOIN claims c ON c.pk = e.claim_pk JOIN sources s ON s.pk = e.source_pk "
            "WHERE c.id = ? AND (s.url = ? OR s.title = ?)",
            (claim_id, url_or_title, url_or_title),
        ).fetchone()
    assert row is not None, (claim_id, url_or_title)
    return int(row[0])


def sign_in(page: Any, base: str, name: str) -> Any:
    """Log ``name`` in through the login form on ``page`` (a Playwright page) and wait for their queue."""
    page.goto(f"{base}/login")
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/queue")
    return page
