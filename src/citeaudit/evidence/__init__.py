"""Evidence passages: rank a source's passages (:class:`citeaudit.core.passages.Passage`) for a claim.

``rank_passages(claim, passages, k, method)`` is the entry point; ``PassageIndex`` keeps one source's index
for many claims. BM25 needs nothing extra; ``dense``, ``hybrid`` and ``window-hybrid`` need
``pip install 'citeaudit[models]'``. ``SUGGEST_METHOD`` (``window``) is the ranking reviewers get by default.

The names are loaded on first use: the ranking methods without the ranking (and numpy) behind them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from citeaudit.evidence._dense import Encoder, SentenceEncoder, default_encoder
    from citeaudit.evidence._methods import SUGGEST_METHOD, RankMethod
    from citeaudit.evidence._passages import RankedPassage
    from citeaudit.evidence._rank import HYBRID_CANDIDATES, PassageIndex, rank_passages

__all__ = [
    "HYBRID_CANDIDATES",
    "SUGGEST_METHOD",
    "Encoder",
    "PassageIndex",
    "RankMethod",
    "RankedPassage",
    "SentenceEncoder",
    "default_encoder",
    "rank_passages",
]

_HOME = {
    "HYBRID_CANDIDATES": "_rank",
    "SUGGEST_METHOD": "_methods",
    "Encoder": "_dense",
    "PassageIndex": "_rank",
    "RankMethod": "_methods",
    "RankedPassage": "_passages",
    "SentenceEncoder": "_dense",
    "default_encoder": "_dense",
    "rank_passages": "_rank",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


def __dir__() -> list[str]:
    return sorted(__all__)
