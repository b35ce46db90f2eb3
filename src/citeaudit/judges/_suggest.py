"""One edge, end to end: rank the source's passages for the claim, then ask a judge about the best ones."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from citeaudit.core.model import Label
from citeaudit.core.passages import Passage
from citeaudit.evidence import SUGGEST_METHOD, PassageIndex, RankedPassage, RankMethod
from citeaudit.judges._base import Judge, JudgeRequest, Suggestion

__all__ = ["EdgeSuggestion", "suggest_for_edge"]


@dataclass(frozen=True, slots=True)
class EdgeSuggestion:
    """The passages shown to the judge (best first, with scores and offsets) and what the judge proposed."""

    passages: tuple[RankedPassage, ...]
    """Top passages of the source for the claim."""
    suggestion: Suggestion
    """The judge's proposal, made from exactly these passages."""


def suggest_for_edge(
    judge: Judge,
    claim: str,
    source: str | Sequence[str | Passage] | PassageIndex,
    *,
    k: int = 3,
    method: RankMethod | str = SUGGEST_METHOD,
    claim_locale: str = "en",
    passage_locale: str | None = None,
) -> EdgeSuggestion:
    """Rank ``source`` (its text, its passages, or a ``PassageIndex`` reused across claims) and judge the top ``k``.

    A source with no passage gets ``unknown`` without asking the judge (nothing to read is not evidence).
    """
    index = source if isinstance(source, PassageIndex) else PassageIndex(source)
    ranked = tuple(index.rank(claim, k, method))
    if not ranked:
        suggestion = Suggestion(
            label=Label.UNKNOWN,
            judge=judge.name,
            version=judge.version,
            model=judge.model,
            failure="the source has no text to rank",
        )
        return EdgeSuggestion(ranked, suggestion)
    request = JudgeRequest(
        claim, tuple(p.text for p in ranked), claim_locale=claim_locale, passage_locale=passage_locale
    )
    return EdgeSuggestion(ranked, judge.judge(request))
