"""The review web UI: a FastAPI application, rendered on the server with Jinja2, fully offline (its only script
and style sheet are served by the app itself).

One router per concern (:mod:`citeaudit.review.routers`: auth, queue, edges, groups, settings, results) over
what they share (:mod:`citeaudit.review.pages`). Every route checks the session and the role; every
state-changing form carries the session's CSRF token; what a viewer sees of an edge's judgements is decided
by :mod:`citeaudit.review.blind` alone.
"""

from pathlib import Path
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, PackageLoader, select_autoescape
from starlette.exceptions import HTTPException

from citeaudit.core.errors import CiteauditError, DatabaseBusy
from citeaudit.review.auth import LoginLimiter
from citeaudit.review.markdown import answer_markdown, claim_markdown, markdown
from citeaudit.review.pages import (
    CsrfRefused,
    Denied,
    LoginRequired,
    ReviewConfig,
    ReviewContext,
    Session,
    claim_terms,
    highlight,
    page,
    redirect,
    safe_href,
    session_of,
)
from citeaudit.review.routers import auth, cross_pairs, edges, groups, queue, results, settings, triage
from citeaudit.store.review import ReviewStore

__all__ = ["ReviewConfig", "create_app", "highlight", "safe_href"]

_STATIC = Path(__file__).resolve().parent / "static"


def _templates() -> Environment:
    templates = Environment(
        loader=PackageLoader("citeaudit.review", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    templates.filters["href"] = safe_href
    templates.filters["terms"] = claim_terms
    templates.filters["markdown"] = markdown
    templates.filters["claim_markdown"] = claim_markdown
    templates.filters["answer_markdown"] = answer_markdown
    return templates


_TITLES = {400: "Bad request", 401: "Logged out", 403: "Refused", 404: "Not found", 405: "Not allowed", 409: "Refused"}


def _error(request: Request, status: int, message: str, login_next: str | None = None) -> Response:
    """An error page with the navigation of whoever is logged in (none for a visitor)."""
    current: Session | None = session_of(request)
    return page(
        request,
        "error.html.j2",
        status,
        title=_TITLES.get(status, "Error"),
        message=message,
        user=None if current is None else current.reviewer,
        csrf=None if current is None else current.csrf,
        login_next=login_next,
    )


def _login_required(request: Request, exc: Exception) -> Response:
    here = request.url.path
    if request.method == "GET":
        target = here + (f"?{request.url.query}" if request.url.query else "")
        return redirect(f"/login?next={quote(target, safe='')}" if here != "/" else "/login")
    # A form posted after the session expired: the page it came from (its typed text is kept by the browser).
    back = (here.rsplit("/", 1)[0] or "/queue") + "?draft=1"
    message = "not logged in (or the session expired); log in again and you are back where you were"
    return _error(request, 401, message, login_next=back)


def _denied(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, Denied)
    if isinstance(exc, CsrfRefused):
        with ReviewStore(request.app.state.review.config.db) as store:
            store.audit_log.log_event(exc.actor, "csrf.refused", f"{request.method} {request.url.path}", None)
    return _error(request, exc.status, exc.message)


def _refused(request: Request, exc: Exception) -> Response:
    return _error(request, 503 if isinstance(exc, DatabaseBusy) else 400, str(exc))


def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code == 404:
        return _error(request, 404, f"not found: {request.url.path}")
    return _error(request, exc.status_code, str(exc.detail))


def _invalid_request(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    # A path whose id is not a number names nothing: not found. A form missing a field is a bad request.
    if any(error.get("loc", ("",))[0] == "path" for error in exc.errors()):
        return _error(request, 404, f"not found: {request.url.path}")
    fields = sorted({str(error.get("loc", ("", "?"))[-1]) for error in exc.errors()})
    return _error(request, 400, f"the form is missing or has a wrong value for: {', '.join(fields)}")


def create_app(config: ReviewConfig) -> FastAPI:
    """The review application for one database (prepared with :meth:`ReviewStore.prepare` first)."""
    app = FastAPI(title="citeaudit review", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.review = ReviewContext(
        config, _templates(), LoginLimiter(config.login_attempts, config.login_window, config.clock)
    )
    app.mount("/static", StaticFiles(directory=_STATIC), name="static")
    app.add_exception_handler(LoginRequired, _login_required)
    app.add_exception_handler(Denied, _denied)
    app.add_exception_handler(CiteauditError, _refused)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(RequestValidationError, _invalid_request)
    for router in (
        auth.router,
        queue.router,
        edges.router,
        groups.router,
        settings.router,
        results.router,
        cross_pairs.router,
        triage.router,
    ):
        # The routers' own routes, not a router included as one opaque entry: the app's route table lists every
        # route, as the checks that every route needs a session read it.
        app.router.routes.extend(router.routes)
    return app
