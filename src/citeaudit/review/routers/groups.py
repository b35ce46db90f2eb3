"""Evidence groups: several sources that together support one claim, with the required documents, the
reasoning steps and the decision."""

from typing import Annotated

from fastapi import APIRouter, Form
from fastapi.responses import Response

from citeaudit.review.pages import Current, Db, check_csrf, label_of, lines_of, local_path, redirect, require

__all__ = ["router"]

router = APIRouter()


@router.post("/claims/{claim_pk}/groups")
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
    """Record an evidence group for a claim."""
    check_csrf(current, csrf)
    reviewer = require(current, "reviewer", "adjudicator")
    db.evidence.create_group(
        claim_pk,
        sources or [],
        lines_of(required_documents),
        lines_of(reasoning_steps),
        label_of(decision) if decision else None,
        reviewer.name,
    )
    return redirect(local_path(back))
