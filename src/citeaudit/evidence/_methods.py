"""The ways passages are ranked, apart from the ranking itself (which needs numpy): the command line offers
them as choices without loading it."""

from enum import StrEnum

__all__ = ["SUGGEST_METHOD", "RankMethod"]


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


SUGGEST_METHOD = RankMethod.WINDOW
"""The ranking reviewers get unless told otherwise: ``suggest`` (edges and cross pairs), ``judge audit`` and
``suggest_for_edge`` show these units, the ones ``benchmarks/bench_evidence.py`` measures against its target.
``rank_passages`` and ``PassageIndex.rank`` rank single passages by BM25 unless told otherwise."""
