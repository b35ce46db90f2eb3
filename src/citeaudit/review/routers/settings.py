"""Project settings (admins): the review policy and whether reviewers see model suggestions.

Changing the policy of a database that people have judged asks first, saying which edges would change state and
how (a stricter policy takes final labels away until the second reviews come in)."""

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
    return page(
        request,
        "settings.html.j2",
        user=reviewer,
        csrf=current.csrf,
        settings=db.accounts.settings(),
        changed=None,
        ask=None,
    )


@router.post("/settings")
def change_settings(
    request: Request,
    db: Db,
    current: Current,
    csrf: Annotated[str, Form()] = "",
    policy: Annotated[str, Form()] = "single",
    show_model_suggestions: Annotated[str, Form()] = "false",
    confirm: Annotated[str, Form()] = "",
) -> Response:
    """Change the settings (each change is in the audit log); a policy change of a judged database is shown and
    confirmed before every edge's state is recomputed."""
    check_csrf(current, csrf)
    reviewer = require(current, "admin")
    settings = db.accounts.settings()
    if policy != settings["policy"] and confirm != policy and db.judgements.has_human_judgements():
        moves = db.judgements.policy_change(policy)
        return page(
            request,
            "settings.html.j2",
            user=reviewer,
            csrf=current.csrf,
            settings=settings,
            changed=None,
            ask={"policy": policy, "show_model_suggestions": show_model_suggestions, "moves": sorted(moves.items())},
        )
    changed = db.accounts.set_setting(reviewer.name, "policy", policy)
    db.accounts.set_setting(reviewer.name, "show_model_suggestions", show_model_suggestions)
    return page(
        request,
        "settings.html.j2",
        user=reviewer,
        csrf=current.csrf,
        settings=db.accounts.settings(),
        changed=changed,
        ask=None,
    )
