"""Logging in and out: the login form with its own CSRF cookie, failed logins rate-limited per account and address
together (and recorded in the audit log), and sessions held in the database.

A name that is not an account costs the same password check as a wrong password, so the time a refusal takes
does not tell which names exist."""

from contextlib import suppress
from functools import cache
from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import Response

from citeaudit.core.errors import DatabaseBusy
from citeaudit.review.auth import (
    SESSION_COOKIE,
    csrf_matches,
    expiry,
    hash_password,
    new_token,
    token_digest,
    verify_password,
)
from citeaudit.review.pages import (
    CsrfRefused,
    Current,
    Db,
    check_csrf,
    context,
    leases_of,
    local_path,
    now_of,
    page,
    redirect,
)

__all__ = ["LOGIN_CSRF_COOKIE", "router"]

LOGIN_CSRF_COOKIE = "citeaudit_login_csrf"

router = APIRouter()


@cache
def _no_account_hash() -> str:
    """Checked against for a name that is not an account, so it costs what a wrong password costs."""
    return hash_password(new_token())


@router.get("/login")
def login_form(request: Request) -> Response:
    """The login form, with a fresh CSRF token in a cookie of its own (there is no session yet)."""
    token = new_token()
    back = local_path(request.query_params.get("next", ""), "/queue")
    response = page(request, "login.html.j2", csrf=token, error=None, user=None, next=back)
    response.set_cookie(LOGIN_CSRF_COOKIE, token, httponly=True, secure=True, samesite="strict")
    return response


@router.post("/login")
def login(
    request: Request,
    db: Db,
    name: Annotated[str, Form()],
    password: Annotated[str, Form()],
    csrf: Annotated[str, Form()] = "",
    next: Annotated[str, Form()] = "/queue",
) -> Response:
    """Open a session for a reviewer whose password matches; count and record the failures."""
    expected = request.cookies.get(LOGIN_CSRF_COOKIE)
    if not expected or not csrf_matches(expected, csrf):
        raise CsrfRefused("the login form's CSRF token is missing or wrong; reload the page", name or "?")
    shared = context(request)
    address = request.client.host if request.client else "?"
    # One person's typos lock out that account from that address, not everyone behind the address.
    attempt = f"account:{name}|address:{address}"
    back = local_path(next, "/queue")
    if shared.limiter.blocked(attempt):
        db.audit_log.log_event(name, "login.throttled", f"reviewer:{name}", {"address": address})
        error = "too many failed logins; wait and retry"
        return page(request, "login.html.j2", 429, csrf=expected, error=error, user=None, next=back)
    reviewer = db.accounts.reviewer(name)
    matches = verify_password(_no_account_hash() if reviewer is None else reviewer.password_hash, password)
    if reviewer is None or not matches:
        shared.limiter.failed(attempt)
        db.audit_log.log_event(name, "login.failed", f"reviewer:{name}", {"address": address})
        return page(request, "login.html.j2", 401, csrf=expected, error="wrong name or password", user=None, next=back)
    shared.limiter.succeeded(attempt)
    token = new_token()
    lifetime = shared.config.session_lifetime
    db.accounts.open_session(
        reviewer, token_digest(token), new_token(), expiry(lifetime, shared.config.clock), now_of(request)
    )
    response = redirect(back)
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=int(lifetime.total_seconds()),
        httponly=True,
        secure=True,
        samesite="strict",
    )
    response.delete_cookie(LOGIN_CSRF_COOKIE)
    return response


@router.post("/logout")
def logout(request: Request, db: Db, current: Current, csrf: Annotated[str, Form()] = "") -> Response:
    """Close the session and give up the reviewer's leases."""
    check_csrf(current, csrf)
    with suppress(DatabaseBusy):  # while an import holds the database the leases lapse on their own
        leases_of(request, db).release(current.reviewer)
    db.accounts.close_session(current.token_digest, current.reviewer.name)
    response = redirect("/login")
    response.delete_cookie(SESSION_COOKIE)
    return response
