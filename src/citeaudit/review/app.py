"""The review web UI: a FastAPI application, rendered on the server with Jinja2, fully offline (its only script
and style sheet are served by the app itself).

Every route checks the session and the role; every state-changing form carries the session's CSRF token;
what a viewer sees of an edge's judgements is decided by :mod:`citeaudit.review.blind` alone.
"""

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar

from fastapi import Depends, FastAPI, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from jinja2 import Environment, PackageLoader, select_autoescape

from citeaudit.agreement import Rater, agreement
from citeaudit.api import label_pairs_from_store, score_path
from citeaudit.errors import CiteauditError, DatabaseBusy
from citeaudit.model import Judgement, Label, Origin, ReviewState, Severity, Stage
from citeaudit.review.auth import (
    SESSION_COOKIE,
    LoginLimiter,
    csrf_matches,
    expiry,
    new_token,
    token_digest,
    verify_password,
)
from citeaudit.review.blind import can_adjudicate, visible_judgements
from citeaudit.review.queue import decode_cursor, encode_cursor, page_order, start_key
from citeaudit.store import Store
from citeaudit.store.copies import ClaimSupport, Conflict, SupportRow, claim_support, conflicts, fact_support
from citeaudit.store.review import QueueFilter, Reviewer, ReviewStore, code_label, now
from citeaudit.store.review_records import EdgeView

__all__ = ["ReviewConfig", "create_app", "highlight", "safe_href"]

E = TypeVar("E", bound=StrEnum)

LOGIN_CSRF_COOKIE = "citeaudit_login_csrf"
PAGE_SIZE = 50
_STATIC = Path(__file__).resolve().parent / "static"
_SAFE_URL = re.compile(r"^https?://", re.IGNORECASE)
_NEEDS_BY_ROLE = {
    "reviewer": ("review",),
    "adjudicator": ("review", "adjudicate"),
    "admin": ("browse", "review", "adjudicate"),
}
_SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
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


class _Denied(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class _LoginRequired(Exception):
    pass


@dataclass(frozen=True, slots=True)
class _Session:
    reviewer: Reviewer
    csrf: str
    token_digest: str


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


@dataclass(frozen=True, slots=True)
class EvidenceView:
    """Independent support and the conflict (if any) of one claim, for those who see every label."""

    support: ClaimSupport | None
    fact: SupportRow | None
    conflict: Conflict | None


def evidence_view(db: Path, claim_id: str) -> EvidenceView:
    """Copy-group support and supported-vs-conflicting sources of ``claim_id``."""
    with Store(db) as store:
        support = claim_support(store, [claim_id]).get(claim_id)
        fact = fact_support(store, claim_id)
        conflict = next(iter(conflicts(store, claim_id)), None)
    return EvidenceView(support, fact, conflict)


def edge_or_404(db: ReviewStore, edge_pk: int) -> EdgeView:
    """The edge, or a 404 naming it."""
    edge = db.edge(edge_pk)
    if edge is None:
        raise _Denied(404, f"no edge {edge_pk}")
    return edge


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def create_app(config: ReviewConfig) -> FastAPI:
    """The review application for one database (prepared with :meth:`ReviewStore.prepare` first)."""
    limiter = LoginLimiter(config.login_attempts, config.login_window)
    templates = Environment(
        loader=PackageLoader("citeaudit.review", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    templates.filters["href"] = safe_href
    app = FastAPI(title="citeaudit review", docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static", StaticFiles(directory=_STATIC), name="static")

    def store() -> Iterator[ReviewStore]:
        with ReviewStore(config.db, config.busy_timeout) as opened:
            yield opened

    Db = Annotated[ReviewStore, Depends(store)]  # noqa: N806 (a type alias)

    def session(request: Request, db: Db) -> _Session:
        token = request.cookies.get(SESSION_COOKIE)
        if not token:
            raise _LoginRequired
        digest = token_digest(token)
        found = db.session(digest, now())
        if found is None:
            raise _LoginRequired
        return _Session(found[0], found[1], digest)

    Current = Annotated[_Session, Depends(session)]  # noqa: N806 (a type alias)

    def require(current: _Session, *roles: str) -> Reviewer:
        if current.reviewer.role not in roles:
            raise _Denied(403, f"this page is for {' or '.join(roles)} accounts")
        return current.reviewer

    def check_csrf(current: _Session, given: str | None) -> None:
        if not csrf_matches(current.csrf, given):
            raise _Denied(403, "the form's CSRF token is missing or wrong; reload the page and try again")

    def page(name: str, status: int = 200, **context: Any) -> HTMLResponse:
        body = templates.get_template(name).render(**context)
        return HTMLResponse(body, status_code=status, headers=_SECURITY_HEADERS)

    def redirect(url: str) -> RedirectResponse:
        return RedirectResponse(url, status_code=303, headers=_SECURITY_HEADERS)

    @app.exception_handler(_LoginRequired)
    def login_required(request: Request, exc: _LoginRequired) -> Response:
        if request.method == "GET":
            return redirect("/login")
        return page("error.html.j2", 401, message="not logged in (or the session expired)", user=None)

    @app.exception_handler(_Denied)
    def denied(request: Request, exc: _Denied) -> Response:
        return page("error.html.j2", exc.status, message=exc.message, user=None)

    @app.exception_handler(CiteauditError)
    def refused(request: Request, exc: CiteauditError) -> Response:
        if isinstance(exc, DatabaseBusy):
            return page("error.html.j2", 503, message=str(exc), user=None)
        return page("error.html.j2", 400, message=str(exc), user=None)

    def not_recorded_yet(current: _Session, action: str, form: dict[str, str]) -> Response:
        """The reviewer's form again, filled in as sent, when the database was busy: nothing is lost, and the
        same submission id keeps a second click from recording it twice."""
        response = page(
            "busy.html.j2",
            503,
            user=current.reviewer,
            csrf=current.csrf,
            action=action,
            form=form,
            labels=[label.value for label in Label],
            severities=[severity.value for severity in Severity],
            waited=config.busy_timeout,
        )
        response.headers["Retry-After"] = "5"
        return response

    # -- login ---------------------------------------------------------------------------------------

    @app.get("/login")
    def login_form(request: Request) -> Response:
        token = new_token()
        response = page("login.html.j2", csrf=token, error=None, user=None)
        response.set_cookie(LOGIN_CSRF_COOKIE, token, httponly=True, secure=True, samesite="strict")
        return response

    @app.post("/login")
    def login(
        request: Request,
        db: Db,
        name: Annotated[str, Form()],
        password: Annotated[str, Form()],
        csrf: Annotated[str, Form()] = "",
    ) -> Response:
        expected = request.cookies.get(LOGIN_CSRF_COOKIE)
        if not expected or not csrf_matches(expected, csrf):
            raise _Denied(403, "the login form's CSRF token is missing or wrong; reload the page")
        address = f"address:{request.client.host if request.client else '?'}"
        account = f"account:{name}"
        if limiter.blocked(address, account):
            return page("login.html.j2", 429, csrf=expected, error="too many failed logins; wait and retry", user=None)
        reviewer = db.reviewer(name)
        if reviewer is None or not verify_password(reviewer.password_hash, password):
            limiter.failed(address, account)
            return page("login.html.j2", 401, csrf=expected, error="wrong name or password", user=None)
        limiter.succeeded(account)
        token = new_token()
        db.open_session(reviewer, token_digest(token), new_token(), expiry(config.session_lifetime))
        response = redirect("/queue")
        response.set_cookie(
            SESSION_COOKIE,
            token,
            max_age=int(config.session_lifetime.total_seconds()),
            httponly=True,
            secure=True,
            samesite="strict",
        )
        response.delete_cookie(LOGIN_CSRF_COOKIE)
        return response

    @app.post("/logout")
    def logout(db: Db, current: Current, csrf: Annotated[str, Form()] = "") -> Response:
        check_csrf(current, csrf)
        db.close_session(current.token_digest, current.reviewer.name)
        response = redirect("/login")
        response.delete_cookie(SESSION_COOKIE)
        return response

    # -- queue ---------------------------------------------------------------------------------------

    def queue_filter(request: Request) -> QueueFilter:
        query = request.query_params
        state = query.get("state") or None
        if state is not None and state not in {s.value for s in ReviewState}:
            raise _Denied(400, f"state {state!r} is not one of {', '.join(s.value for s in ReviewState)}")
        return QueueFilter(
            run=query.get("run") or None,
            platform=query.get("platform") or None,
            question=query.get("question") or None,
            state=ReviewState(state) if state else None,
        )

    def needs_of(request: Request, reviewer: Reviewer) -> str:
        allowed = _NEEDS_BY_ROLE[reviewer.role]
        needs = request.query_params.get("needs") or allowed[0]
        if needs not in allowed:
            raise _Denied(403, f"a {reviewer.role} may list {', '.join(allowed)}, not {needs!r}")
        return needs

    @app.get("/")
    def home(current: Current) -> Response:
        return redirect("/queue")

    @app.get("/queue")
    def queue(request: Request, db: Db, current: Current) -> Response:
        reviewer = require(current, "reviewer", "adjudicator", "admin")
        filters = queue_filter(request)
        needs = needs_of(request, reviewer)
        after = decode_cursor(request.query_params.get("after"))
        rows = db.queue(reviewer, needs, filters, start_key(reviewer.pk), after, PAGE_SIZE + 1)
        more = len(rows) > PAGE_SIZE
        rows = rows[:PAGE_SIZE]
        next_after = None
        if more:
            last = rows[-1]
            lap = 0 if last.key >= start_key(reviewer.pk) else 1
            next_after = encode_cursor(lap, last.key)
        page_key = rows[0].key if rows else 0
        params = {k: v for k, v in request.query_params.items() if k != "after" and v}
        return page(
            "queue.html.j2",
            user=reviewer,
            csrf=current.csrf,
            rows=page_order(rows, reviewer.pk, page_key),
            filters=filters,
            needs=needs,
            needs_choices=_NEEDS_BY_ROLE[reviewer.role],
            values=db.filter_values(),
            states=[s.value for s in ReviewState],
            next_query={**params, "after": next_after} if next_after else None,
        )

    @app.get("/queue/next")
    def queue_next(request: Request, db: Db, current: Current) -> Response:
        reviewer = require(current, "reviewer", "adjudicator", "admin")
        rows = db.queue(
            reviewer, needs_of(request, reviewer), queue_filter(request), start_key(reviewer.pk), None, PAGE_SIZE
        )
        if not rows:
            return redirect("/queue")
        first = page_order(rows, reviewer.pk, rows[0].key)[0]
        return redirect(f"/edges/{first.edge_pk}")

    # -- edges ---------------------------------------------------------------------------------------

    @app.get("/edges/{edge_pk}")
    def edge_page(edge_pk: int, db: Db, current: Current) -> Response:
        reviewer = require(current, "reviewer", "adjudicator", "admin")
        edge = edge_or_404(db, edge_pk)
        settings = db.settings()
        shown = visible_judgements(
            reviewer, edge.review_state, db.judgements(edge_pk), settings["show_model_suggestions"] == "true"
        )
        adjudicating = can_adjudicate(reviewer, edge.review_state)
        seen_all = reviewer.role == "admin" or adjudicating
        return page(
            "edge.html.j2",
            user=reviewer,
            csrf=current.csrf,
            edge=edge,
            highlight=highlight(edge.answer_text, edge.claim_text, edge.claim_start, edge.claim_end),
            passages=db.passages(edge.source_pk),
            ranked_passages=db.suggested_passages(edge_pk),
            attachments=db.url_attachments(edge.source_pk),
            own=[j for j in shown if j.judgement.origin is Origin.HUMAN and j.judgement.reviewer == reviewer.name],
            suggestions=[j for j in shown if j.judgement.origin is Origin.MODEL],
            others=[j for j in shown if j.judgement.origin is Origin.HUMAN and j.judgement.reviewer != reviewer.name],
            show_state=seen_all,
            final_label=code_label(edge.final_code) if seen_all else None,
            adjudicating=adjudicating,
            may_review=reviewer.role != "admin" and not adjudicating,
            labels=[label.value for label in Label],
            submission=new_token(),
            claim_sources=db.claim_sources(edge.claim_pk),
            # Other edges' final labels show through these counts: only for those who may see every label.
            evidence_view=evidence_view(config.db, edge.claim_id) if seen_all else None,
            groups=db.groups(edge.claim_pk),
            policy=settings["policy"],
        )

    def one_of(kind: type[E], what: str, value: str) -> E:
        """The member of ``kind`` a form sent, or a 400 naming the field, the value and the choices."""
        if value not in {member.value for member in kind}:
            raise _Denied(400, f"{what} {value!r} is not one of {', '.join(member.value for member in kind)}")
        return kind(value)

    def label_of(value: str) -> Label:
        return one_of(Label, "label", value)

    def text_or_none(value: str) -> str | None:
        return value.strip() or None

    def severity_of(value: str) -> Severity | None:
        return one_of(Severity, "severity", value) if value.strip() else None

    @app.post("/edges/{edge_pk}/judgements")
    def judge(
        edge_pk: int,
        db: Db,
        current: Current,
        label: Annotated[str, Form()],
        submission: Annotated[str, Form()],
        csrf: Annotated[str, Form()] = "",
        passage: Annotated[str, Form()] = "",
        period: Annotated[str, Form()] = "",
        reasoning: Annotated[str, Form()] = "",
        severity: Annotated[str, Form()] = "",
    ) -> Response:
        check_csrf(current, csrf)
        reviewer = require(current, "reviewer", "adjudicator")
        edge = edge_or_404(db, edge_pk)
        if can_adjudicate(reviewer, edge.review_state):
            raise _Denied(409, "this edge is disputed: record an adjudication instead of a review")
        judgement = Judgement(
            label_of(label),
            reviewer.name,
            Origin.HUMAN,
            Stage.REVIEW,
            text_or_none(passage),
            text_or_none(period),
            text_or_none(reasoning),
            now(),
            severity=severity_of(severity),
        )
        try:
            db.record_judgement(edge_pk, judgement, submission)
        except DatabaseBusy:
            form = {"label": label, "submission": submission, "passage": passage, "period": period}
            return not_recorded_yet(
                current, f"/edges/{edge_pk}/judgements", {**form, "reasoning": reasoning, "severity": severity}
            )
        return redirect("/queue/next")

    @app.post("/edges/{edge_pk}/adjudication")
    def adjudicate(
        edge_pk: int,
        db: Db,
        current: Current,
        label: Annotated[str, Form()],
        submission: Annotated[str, Form()],
        csrf: Annotated[str, Form()] = "",
        reasoning: Annotated[str, Form()] = "",
        passage: Annotated[str, Form()] = "",
        period: Annotated[str, Form()] = "",
    ) -> Response:
        check_csrf(current, csrf)
        reviewer = require(current, "adjudicator", "admin")
        edge = edge_or_404(db, edge_pk)
        if not can_adjudicate(reviewer, edge.review_state):
            raise _Denied(409, f"only disputed edges are adjudicated; this one is {edge.review_state}")
        rationale = text_or_none(reasoning)
        if rationale is None:
            raise _Denied(400, "an adjudication needs a rationale")
        judgement = Judgement(
            label_of(label),
            reviewer.name,
            Origin.HUMAN,
            Stage.ADJUDICATION,
            text_or_none(passage),
            text_or_none(period),
            rationale,
            now(),
        )
        try:
            db.record_judgement(edge_pk, judgement, submission)
        except DatabaseBusy:
            form = {"label": label, "submission": submission, "passage": passage, "period": period}
            return not_recorded_yet(current, f"/edges/{edge_pk}/adjudication", {**form, "reasoning": reasoning})
        return redirect(f"/edges/{edge_pk}")

    @app.post("/sources/{source_pk}/url")
    def attach_url(
        source_pk: int,
        db: Db,
        current: Current,
        url: Annotated[str, Form()],
        csrf: Annotated[str, Form()] = "",
        back: Annotated[str, Form()] = "/queue",
    ) -> Response:
        check_csrf(current, csrf)
        reviewer = require(current, "reviewer", "adjudicator", "admin")
        if not safe_href(url):
            raise _Denied(400, f"{url!r} is not an http(s) URL")
        db.attach_url(source_pk, url.strip(), reviewer.name)
        return redirect(back if back.startswith("/") and not back.startswith("//") else "/queue")

    @app.post("/claims/{claim_pk}/groups")
    def create_group(
        claim_pk: int,
        db: Db,
        current: Current,
        csrf: Annotated[str, Form()] = "",
        sources: Annotated[list[int] | None, Form()] = None,
        required_documents: Annotated[str, Form()] = "",
        reasoning_steps: Annotated[str, Form()] = "",
        decision: Annotated[str, Form()] = "",
        back: Annotated[str, Form()] = "/queue",
    ) -> Response:
        check_csrf(current, csrf)
        reviewer = require(current, "reviewer", "adjudicator")
        db.create_group(
            claim_pk,
            sources or [],
            _lines(required_documents),
            _lines(reasoning_steps),
            label_of(decision) if decision else None,
            reviewer.name,
        )
        return redirect(back if back.startswith("/") and not back.startswith("//") else "/queue")

    # -- scores, settings, agreement -----------------------------------------------------------------

    @app.get("/score")
    def score(db: Db, current: Current) -> Response:
        reviewer = require(current, "adjudicator", "admin")
        scored = score_path(config.db)
        return page(
            "score.html.j2",
            user=reviewer,
            csrf=current.csrf,
            result=scored.result,
            protocol=scored.protocol,
            document=scored.to_json(),
            groups=db.group_counts(),
            policy=db.settings()["policy"],
        )

    @app.get("/settings")
    def settings_page(db: Db, current: Current) -> Response:
        reviewer = require(current, "admin")
        return page("settings.html.j2", user=reviewer, csrf=current.csrf, settings=db.settings(), changed=None)

    @app.post("/settings")
    def change_settings(
        db: Db,
        current: Current,
        csrf: Annotated[str, Form()] = "",
        policy: Annotated[str, Form()] = "single",
        show_model_suggestions: Annotated[str, Form()] = "false",
    ) -> Response:
        check_csrf(current, csrf)
        reviewer = require(current, "admin")
        changed = db.set_setting(reviewer.name, "policy", policy)
        db.set_setting(reviewer.name, "show_model_suggestions", show_model_suggestions)
        return page("settings.html.j2", user=reviewer, csrf=current.csrf, settings=db.settings(), changed=changed)

    @app.get("/agreement")
    def agreement_page(current: Current, a: str = "", b: str = "", resamples: int = 2000) -> Response:
        """What ``citeaudit agreement DB --between A B`` prints, for two raters chosen on the page."""
        reviewer = require(current, "adjudicator", "admin")
        with Store(config.db) as store:
            raters = store.raters()
            result = error = None
            if a and b:
                try:
                    pairs = label_pairs_from_store(store, Rater.parse(a), Rater.parse(b))
                    result = agreement(pairs, resamples=max(0, min(resamples, 20_000))).to_dict()
                except CiteauditError as exc:
                    error = str(exc)
        return page(
            "agreement.html.j2",
            user=reviewer,
            csrf=current.csrf,
            raters=[(str(rater), count) for rater, count in raters],
            chosen=(a, b),
            resamples=resamples,
            result=result,
            error=error,
        )

    return app
