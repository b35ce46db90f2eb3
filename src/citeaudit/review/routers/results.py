"""Results (adjudicators and admins): the scores as ``citeaudit score`` prints them, and the agreement of two
raters as ``citeaudit agreement`` prints it."""

from fastapi import APIRouter, Request
from fastapi.responses import Response

from citeaudit.core.agreement import agreement
from citeaudit.core.errors import CiteauditError
from citeaudit.core.raters import Rater
from citeaudit.review.pages import Current, Db, context, page, require
from citeaudit.scoring.paths import label_pairs_from_store, score_path
from citeaudit.store import Store

__all__ = ["router"]

router = APIRouter()


@router.get("/score")
def score(request: Request, db: Db, current: Current) -> Response:
    """Final labels only, provisional while any edge has none."""
    reviewer = require(current, "adjudicator", "admin")
    scored = score_path(context(request).config.db, figures=True)
    return page(
        request,
        "score.html.j2",
        user=reviewer,
        csrf=current.csrf,
        result=scored.result,
        shown={
            name: scored.result.overall.shown(name, scored.unresolved_links)
            for name in ("precision", "coverage", "official_rate")
        },
        protocol=scored.protocol,
        document=scored.to_json(),
        groups=db.evidence.group_counts(),
        policy=db.accounts.settings()["policy"],
    )


@router.get("/agreement")
def agreement_page(request: Request, current: Current, a: str = "", b: str = "", resamples: int = 2000) -> Response:
    """What ``citeaudit agreement DB --between A B`` prints, for two raters chosen on the page."""
    reviewer = require(current, "adjudicator", "admin")
    with Store(context(request).config.db) as store:
        raters = store.ratings.raters()
        result = error = None
        retired = 0
        if a and b:
            try:
                chosen = (Rater.parse(a), Rater.parse(b))
                retired = store.ratings.retired_rated(chosen)
                pairs = label_pairs_from_store(store, *chosen)
                result = agreement(pairs, resamples=max(0, min(resamples, 20_000))).to_dict()
            except (CiteauditError, ValueError) as exc:
                error = str(exc)
    return page(
        request,
        "agreement.html.j2",
        user=reviewer,
        csrf=current.csrf,
        raters=[(str(rater), count) for rater, count in raters],
        chosen=(a, b),
        resamples=resamples,
        result=result,
        error=error,
        retired=retired,
    )
