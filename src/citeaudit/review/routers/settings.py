"""Project settings (admins): the review policy and whether reviewers see model suggestions."""

from typing import Annotated

from fastapi import APIRouter, Form, Request
from fastapi.responses import Response

from citeaudit.review.pages import Current, Db, check_csrf, page, require

__all__ = ["router"]

router = APIRouter()


@router.get("/settings")
def settings_page(request: Request, db: Db, current: Current) -> Response:
    """The settings form."""
    reviewer = require(current, "admin")
    return page(request, "settings.html.j2", user=reviewer, csrf=current.csrf, settings=db.settings(), changed=None)


@router.post("/settings")
def change_settings(
    request: Request,
    db: Db,
    current: Current,
    csrf: Annotated[str, Form()] = "",
    policy: Annotated[str, Form()] = "single",
    show_model_suggestions: Annotated[str, Form()] = "false",
) -> Response:
    """Change the settings (each change is in the audit log); a policy change recomputes every edge's state."""
    check_csrf(current, csrf)
    reviewer = require(current, "admin")
    changed = db.set_setting(reviewer.name, "policy", policy)
    db.set_setting(reviewer.name, "show_model_suggestions", show_model_suggestions)
    return page(request, "settings.html.j2", user=reviewer, csrf=current.csrf, settings=db.settings(), changed=changed)
