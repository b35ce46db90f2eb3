"""Evidence passages: split a source into passages with offsets and rank them for a claim.

``rank_passages(claim, passages, k, method)`` is the entry point; ``PassageIndex`` keeps one source's index
for many claims. BM25 needs nothing extra; ``dense`` and ``hybrid`` need ``pip install 'citeaudit[models]'``.
"""

from citeaudit.evidence._dense import Encoder, SentenceEncoder, default_encoder
from citeaudit.evidence._passages import Passage, RankedPassage, split_passages
from citeaudit.evidence._rank import HYBRID_CANDIDATES, PassageIndex, RankMethod, rank_passages

__all__ = [
    "HYBRID_CANDIDATES",
    "Encoder",
    "Passage",
    "PassageIndex",
    "RankMethod",
    "RankedPassage",
    "SentenceEncoder",
    "default_encoder",
    "rank_passages",
    "split_passages",
]
