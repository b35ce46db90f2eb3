"""What every route of the review app shares: the app's context, the database and session dependencies, the
role and CSRF checks, page rendering, and reading form fields.

Routers reach the app's configuration through ``request.app.state.review`` (a :class:`ReviewContext`), so each
router is a plain module-level ``APIRouter`` and the app factory only wires them together.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar
from urllib.parse import parse_qsl, urlencode

from fastapi import Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse
from jinja2 import Environment

from citeaudit.core.clock import Clock, iso, system_clock
from citeaudit.core.model import Label, Severity
from citeaudit.review.auth import SESSION_COOKIE, LoginLimiter, csrf_matches, token_digest
from citeaudit.store.leases import LEASE_SECONDS, LeaseStore
from citeaudit.store.review import Reviewer, ReviewStore
from citeaudit.store.review_records import EdgeView

__all__ = [
    "LABEL_DEFINITIONS",
    "CsrfRefused",
    "Current",
    "Db",
    "Denied",
    "LoginRequired",
    "ReviewConfig",
    "ReviewContext",
    "Session",
    "check_csrf",
    "claim_terms",
    "context",
    "edge_or_404",
    "highlight",
    "label_of",
    "leases_of",
    "lines_of",
    "local_path",
    "now_of",
    "one_of",
    "page",
    "queue_query",
    "queue_query_text",
    "redirect",
    "require",
    "safe_href",
    "session_of",
    "severity_of",
    "text_or_none",
]

E = TypeVar("E", bound=StrEnum)

_SAFE_URL = re.compile(r"^https?://", re.IGNORECASE)
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


@dataclass(frozen=True, slots=True)
class ReviewConfig:
    """How the review server runs."""

    db: Path
    """The citeaudit database."""
    session_lifetime: timedelta = timedelta(hours=8)
    """How long a login lasts."""
    login_attempts: int = 5
    """Failed logins allowed per address and per account within ``login_window`` seconds."""
    login_window: float = 300.0
    """Rate-limit window in seconds."""
    busy_timeout: float = 10.0
    """Seconds a submission waits while another process (an import) writes to the database; then it is refused
    with a page that keeps what the reviewer entered, to submit again."""
    clock: Clock = system_clock
    """The time sessions, leases and the login rate limit are measured by (a test moves a manual clock)."""
    leases: bool = True
    """Whether the queue's next edge is leased to the reviewer (off: every reviewer is handed the first edge of
    their own queue order, as before leases, and several may open the same edge)."""
    lease_seconds: float = LEASE_SECONDS
    """How long a lease lasts unless the open page renews it."""


@dataclass(frozen=True, slots=True)
class ReviewContext:
    """What the routes of one running app share."""

    config: ReviewConfig
    """How the server runs."""
    templates: Environment
    """The page templates."""
    limiter: LoginLimiter
    """Failed-login counts."""


class Denied(Exception):
    """A request refused with an HTTP status and a message for the page."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class CsrfRefused(Denied):
    """A form without its CSRF token: refused, and recorded in the audit log."""

    def __init__(self, message: str, actor: str) -> None:
        super().__init__(403, message)
        self.actor = actor


class LoginRequired(Exception):
    """No session, or an expired one."""


@dataclass(frozen=True, slots=True)
class Session:
    """The logged-in reviewer of a request."""

    reviewer: Reviewer
    """Who."""
    csrf: str
    """The session's CSRF token, expected on every form that changes anything."""
    token_digest: str
    """Digest of the session cookie."""


def context(request: Request) -> ReviewContext:
    """The app's shared context."""
    found: ReviewContext = request.app.state.review
    return found


def _store(request: Request) -> Iterator[ReviewStore]:
    config = context(request).config
    with ReviewStore(config.db, config.busy_timeout) as opened:
        yield opened


Db = Annotated[ReviewStore, Depends(_store)]
"""The database, opened for one request."""


def now_of(request: Request) -> str:
    """The app clock's current time, as the stores write times."""
    return iso(context(request).config.clock())


def leases_of(request: Request, db: ReviewStore) -> LeaseStore:
    """The leases, skips and recent labels of the request's database, on the app's clock."""
    config = context(request).config
    return db.leases(config.clock, config.lease_seconds)


def _session(request: Request, db: Db) -> Session:
    token = request.cookies.get(SESSION_COOKIE)
    if not token:
        raise LoginRequired
    digest = token_digest(token)
    found = db.accounts.session(digest, now_of(request))
    if found is None:
        raise LoginRequired
    return Session(found[0], found[1], digest)


def session_of(request: Request) -> Session | None:
    """The request's live session, looked up outside the dependencies (error pages keep the navigation)."""
    token = request.cookies.get(SESSION_COOKIE)
    if not token:
        return None
    digest = token_digest(token)
    with ReviewStore(context(request).config.db) as store:
        found = store.accounts.session(digest, now_of(request))
    return None if found is None else Session(found[0], found[1], digest)


Current = Annotated[Session, Depends(_session)]
"""The logged-in reviewer (a request without a valid session is sent to the login page)."""


def require(current: Session, *roles: str) -> Reviewer:
    """The reviewer, when their role is one of ``roles``; else a 403."""
    if current.reviewer.role not in roles:
        raise Denied(403, f"this page is for {' or '.join(roles)} accounts")
    return current.reviewer


def check_csrf(current: Session, given: str | None) -> None:
    """Refuse a form without the session's CSRF token."""
    if not csrf_matches(current.csrf, given):
        raise CsrfRefused(
            "the form's CSRF token is missing or wrong; reload the page and try again", current.reviewer.name
        )


def page(request: Request, name: str, status: int = 200, **values: Any) -> HTMLResponse:
    """A rendered template with the security headers every page carries."""
    body = context(request).templates.get_template(name).render(**values)
    return HTMLResponse(body, status_code=status, headers=SECURITY_HEADERS)


def redirect(url: str) -> RedirectResponse:
    """See other: where to go after a form."""
    return RedirectResponse(url, status_code=303, headers=SECURITY_HEADERS)


def local_path(back: str, default: str = "/queue") -> str:
    """``back`` when it is a path on this site, else ``default`` (a form never redirects elsewhere)."""
    return back if back.startswith("/") and not back.startswith("//") else default


def safe_href(url: str | None) -> str | None:
    """``url`` when it is an http(s) link, else ``None`` (shown as text, never as a link)."""
    return url if url and _SAFE_URL.match(url.strip()) else None


def highlight(text: str, claim: str, start: int | None, end: int | None) -> tuple[str, str, str] | None:
    """The answer split round the claim: by its span when the span holds the claim, else by the first match."""
    if start is not None and end is not None and 0 <= start < end <= len(text) and text[start:end] == claim:
        return text[:start], text[start:end], text[end:]
    at = text.find(claim) if claim else -1
    if at < 0:
        return None
    return text[:at], claim, text[at + len(claim) :]


def edge_or_404(db: ReviewStore, edge_pk: int) -> EdgeView:
    """The edge, or a 404 naming it."""
    edge = db.judgements.edge(edge_pk)
    if edge is None:
        raise Denied(404, f"no edge {edge_pk}")
    return edge


def one_of(kind: type[E], what: str, value: str) -> E:
    """The member of ``kind`` a form sent, or a 400 naming the field, the value and the choices."""
    if value not in {member.value for member in kind}:
        raise Denied(400, f"{what} {value!r} is not one of {', '.join(member.value for member in kind)}")
    return kind(value)


def label_of(value: str) -> Label:
    """The label a form sent."""
    return one_of(Label, "label", value)


def severity_of(value: str) -> Severity | None:
    """The severity a form sent (``None`` when left empty)."""
    return one_of(Severity, "severity", value) if value.strip() else None


def text_or_none(value: str) -> str | None:
    """A text field, ``None`` when left empty."""
    return value.strip() or None


def lines_of(text: str) -> list[str]:
    """The non-empty lines of a text area."""
    return [line.strip() for line in text.splitlines() if line.strip()]


QUEUE_FILTERS = ("needs", "run", "platform", "question", "state")
"""Query parameters that pick a queue: an edge opened from a queue keeps them, so the next edge comes from it."""


def queue_query(params: Mapping[str, str]) -> str:
    """The queue's filters among ``params``, as a query string (empty for the unfiltered queue)."""
    return urlencode([(key, params[key]) for key in QUEUE_FILTERS if params.get(key)])


def queue_query_text(text: str) -> str:
    """:func:`queue_query` of a query string a form sent back (anything else in it is dropped)."""
    return queue_query(dict(parse_qsl(text)))


LABEL_DEFINITIONS = (
    ("supported", "the source states the whole claim; the only label that counts as support"),
    ("partial", "the source states part of the claim; not support"),
    ("conflicting", "the source contradicts the claim"),
    ("irrelevant", "the source says nothing about the claim"),
    ("unknown", "support cannot be judged (source unreachable or unreadable); still counted"),
)
"""The five labels as the edge page defines them beside its buttons."""

_WORD = re.compile(r"\w+")
_SHORT_WORDS = frozenset(
    {
        "the",
        "and",
        "for",
        "with",
        "from",
        "that",
        "this",
        "are",
        "was",
        "were",
        "has",
        "have",
        "its",
        "into",
        "than",
        "then",
        "them",
        "they",
        "their",
        "not",
        "but",
        "also",
        "can",
        "may",
        "per",
        "all",
        "any",
        "one",
    }
)


def claim_terms(text: str, claim: str) -> list[tuple[str, bool]]:
    """``text`` cut into pieces, each marked whether it is a term of ``claim`` (a word of three or more
    characters, or a number, that is not a common short word), compared case-insensitively."""
    terms = {
        word.casefold()
        for word in _WORD.findall(claim)
        if (len(word) >= 3 or word.isdigit()) and word.casefold() not in _SHORT_WORDS
    }
    pieces: list[tuple[str, bool]] = []
    at = 0
    for found in _WORD.finditer(text):
        if found.group().casefold() in terms:
            if found.start() > at:
                pieces.append((text[at : found.start()], False))
            pieces.append((found.group(), True))
            at = found.end()
    if at < len(text):
        pieces.append((text[at:], False))
    return pieces
