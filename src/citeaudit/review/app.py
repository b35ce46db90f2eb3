"""The review web UI: a FastAPI application, rendered on the server with Jinja2, fully offline (its only script
and style sheet are served by the app itself).

One router per concern (:mod:`citeaudit.review.routers`: auth, queue, edges, groups, settings, results) over
what they share (:mod:`citeaudit.review.pages`). Every route checks the session and the role; every
state-changing form carries the session's CSRF token; what a viewer sees of an edge's judgements is decided
by :mod:`citeaudit.review.blind` alone.
"""

from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, PackageLoader, select_autoescape

from citeaudit.errors import CiteauditError, DatabaseBusy
from citeaudit.review.auth import LoginLimiter
from citeaudit.review.pages import (
    Denied,
    LoginRequired,
    ReviewConfig,
    ReviewContext,
    highlight,
    page,
    redirect,
    safe_href,
)
from citeaudit.review.routers import auth, cross_pairs, edges, groups, queue, results, settings

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
    return templates


def _login_required(request: Request, exc: Exception) -> Response:
    if request.method == "GET":
        return redirect("/login")
    return page(request, "error.html.j2", 401, message="not logged in (or the session expired)", user=None)


def _denied(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, Denied)
    return page(request, "error.html.j2", exc.status, message=exc.message, user=None)


def _refused(request: Request, exc: Exception) -> Response:
    status = 503 if isinstance(exc, DatabaseBusy) else 400
    return page(request, "error.html.j2", status, message=str(exc), user=None)


def create_app(config: ReviewConfig) -> FastAPI:
    """The review application for one database (prepared with :meth:`ReviewStore.prepare` first)."""
    app = FastAPI(title="citeaudit review", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.review = ReviewContext(config, _templates(), LoginLimiter(config.login_attempts, config.login_window))
    app.mount("/static", StaticFiles(directory=_STATIC), name="static")
    app.add_exception_handler(LoginRequired, _login_required)
    app.add_exception_handler(Denied, _denied)
    app.add_exception_handler(CiteauditError, _refused)
    for router in (
        auth.router,
        queue.router,
        edges.router,
        groups.router,
        settings.router,
        results.router,
        cross_pairs.router,
    ):
        # The routers' own routes, not a router included as one opaque entry: the app's route table lists every
        # route, as the checks that every route needs a session read it.
        app.router.routes.extend(router.routes)
    return app
