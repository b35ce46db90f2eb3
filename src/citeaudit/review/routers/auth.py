"""Logging in and out: the login form with its own CSRF cookie, failed logins rate-limited per address and
account, and sessions held in the database."""

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import Response

from citeaudit.review.auth import (
    SESSION_COOKIE,
    csrf_matches,
    expiry,
    new_token,
    token_digest,
    verify_password,
)
from citeaudit.review.pages import Current, Db, Denied, check_csrf, context, page, redirect

__all__ = ["LOGIN_CSRF_COOKIE", "router"]

LOGIN_CSRF_COOKIE = "citeaudit_login_csrf"

router = APIRouter()


@router.get("/login")
def login_form(request: Request) -> Response:
    """The login form, with a fresh CSRF token in a cookie of its own (there is no session yet)."""
    token = new_token()
    response = page(request, "login.html.j2", csrf=token, error=None, user=None)
    response.set_cookie(LOGIN_CSRF_COOKIE, token, httponly=True, secure=True, samesite="strict")
    return response


@router.post("/login")
def login(
    request: Request,
    db: Db,
    name: Annotated[str, Form()],
    password: Annotated[str, Form()],
    csrf: Annotated[str, Form()] = "",
) -> Response:
    """Open a session for a reviewer whose password matches; count the failures."""
    expected = request.cookies.get(LOGIN_CSRF_COOKIE)
    if not expected or not csrf_matches(expected, csrf):
        raise Denied(403, "the login form's CSRF token is missing or wrong; reload the page")
    shared = context(request)
    address = f"address:{request.client.host if request.client else '?'}"
    account = f"account:{name}"
    if shared.limiter.blocked(address, account):
        error = "too many failed logins; wait and retry"
        return page(request, "login.html.j2", 429, csrf=expected, error=error, user=None)
    reviewer = db.reviewer(name)
    if reviewer is None or not verify_password(reviewer.password_hash, password):
        shared.limiter.failed(address, account)
        return page(request, "login.html.j2", 401, csrf=expected, error="wrong name or password", user=None)
    shared.limiter.succeeded(account)
    token = new_token()
    lifetime = shared.config.session_lifetime
    db.open_session(reviewer, token_digest(token), new_token(), expiry(lifetime))
    response = redirect("/queue")
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
def logout(db: Db, current: Current, csrf: Annotated[str, Form()] = "") -> Response:
    """Close the session."""
    check_csrf(current, csrf)
    db.close_session(current.token_digest, current.reviewer.name)
    response = redirect("/login")
    response.delete_cookie(SESSION_COOKIE)
    return response
