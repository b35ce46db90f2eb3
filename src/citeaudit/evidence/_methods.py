"""The ways passages are ranked, apart from the ranking itself (which needs numpy): the command line offers
them as choices without loading it."""

from enum import StrEnum

__all__ = ["RankMethod"]


class RankMethod(StrEnum):
    """How passages are ranked."""

    BM25 = "bm25"
    """Lexical: Okapi BM25."""
    DENSE = "dense"
    """Semantic: cosine similarity of sentence embeddings (extra ``citeaudit[models]``)."""
    HYBRID = "hybrid"
    """BM25's best passages re-ranked with the dense encoder, fused by reciprocal rank."""
    WINDOW = "window"
    """Windows of adjacent passages ranked by BM25, trimmed to what matches the claim (what a reviewer reads)."""
    WINDOW_HYBRID = "window-hybrid"
    """Windows as ``window``, BM25's best re-ranked with the dense encoder (extra ``citeaudit[models]``)."""
