"""Rank a source's passages for a claim: BM25, dense cosine similarity, or both fused (hybrid).

BM25 is rank-bm25's Okapi BM25 (k1 = 1.5, b = 0.75) over lower-cased word tokens, with English stopwords
removed from the claim only (so passage lengths stay true), and Lucene's inverse document frequency
ln(1 + (N - n + 0.5)/(n + 0.5)): the classic ln((N - n + 0.5)/(n + 0.5)) is 0 or negative for a term in half
or more of the passages, which on a source of two or three passages leaves nothing to rank. rank-bm25 was
chosen over bm25s because building one index per source of ~100 sentences is faster with it (measured in
``benchmarks/bench_evidence.py``). Hybrid fuses the two rankings by reciprocal rank, 1/(60 + rank), which
needs no calibration between the two score scales.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from enum import StrEnum
from itertools import chain

import numpy as np
import numpy.typing as npt
from rank_bm25 import BM25Okapi

from citeaudit.evidence._dense import Encoder, default_encoder
from citeaudit.evidence._passages import Passage, RankedPassage, as_passages

__all__ = ["PassageIndex", "RankMethod", "rank_passages"]

_TOKEN = re.compile(r"\w+")
_STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "from", "had", "has", "have", "he", "her", "his",
    "in", "into", "is", "it", "its", "of", "on", "or", "she", "that", "the", "their", "them", "then", "there",
    "these", "they", "this", "to", "was", "were", "which", "who", "will", "with",
})  # fmt: skip
_FUSION_K = 60


class _LuceneBM25(BM25Okapi):  # type: ignore[misc]
    def _initialize(self, corpus: list[list[str]]) -> Counter[str]:
        # The same statistics rank-bm25 computes term by term in Python, counted with Counter (C): per-passage
        # term frequencies, lengths, the average length and each term's document frequency.
        self.doc_freqs = [Counter(document) for document in corpus]
        self.doc_len = [len(document) for document in corpus]
        self.corpus_size = len(corpus)
        self.avgdl = sum(self.doc_len) / self.corpus_size
        # iterating a Counter yields its keys: one C-level count over every passage's distinct terms
        return Counter(chain.from_iterable(self.doc_freqs))

    def _calc_idf(self, nd: Counter[str]) -> None:
        # rank-bm25 calls this from its constructor with each term's document frequency.
        counts = np.fromiter(nd.values(), dtype=np.float64, count=len(nd))
        self.idf = dict(
            zip(nd.keys(), np.log1p((self.corpus_size - counts + 0.5) / (counts + 0.5)).tolist(), strict=True)
        )


class RankMethod(StrEnum):
    """How passages are ranked."""

    BM25 = "bm25"
    """Lexical: Okapi BM25."""
    DENSE = "dense"
    """Semantic: cosine similarity of sentence embeddings (extra ``citeaudit[models]``)."""
    HYBRID = "hybrid"
    """Both, fused by reciprocal rank."""


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def _order(scores: npt.NDArray[np.float64]) -> npt.NDArray[np.intp]:
    # Best first; ties keep passage order, so the ranking is deterministic.
    return np.lexsort((np.arange(len(scores)), -scores))


class PassageIndex:
    """The passages of one source, indexed once and ranked for as many claims as cite it."""

    def __init__(self, passages: str | Sequence[str | Passage], *, encoder: Encoder | None = None) -> None:
        self.passages = as_passages(passages)
        self._encoder = encoder
        self._bm25 = _LuceneBM25([_tokens(p.text) or [""] for p in self.passages]) if self.passages else None
        self._embeddings: npt.NDArray[np.float32] | None = None

    def bm25_scores(self, claim: str) -> npt.NDArray[np.float64]:
        """BM25 score of every passage for ``claim``."""
        if self._bm25 is None:
            return np.zeros(0)
        # Terms no passage contains add 0 to every score; dropping them first spares rank-bm25 a pass over the passages.
        query = [t for t in _tokens(claim) if t not in _STOPWORDS and t in self._bm25.idf]
        return np.asarray(self._bm25.get_scores(query), dtype=np.float64)

    def dense_scores(self, claim: str) -> npt.NDArray[np.float64]:
        """Cosine similarity of every passage to ``claim``."""
        if not self.passages:
            return np.zeros(0)
        encoder = self._encoder or default_encoder()
        if self._embeddings is None:
            self._embeddings = encoder.encode([p.text for p in self.passages])
        query = encoder.encode([claim])[0]
        return np.asarray(self._embeddings @ query, dtype=np.float64)

    def rank(self, claim: str, k: int = 5, method: RankMethod | str = RankMethod.BM25) -> list[RankedPassage]:
        """The ``k`` best passages for ``claim``, best first."""
        if k < 1:
            raise ValueError(f"k must be at least 1 (got {k!r})")
        method = RankMethod(method)
        bm25 = self.bm25_scores(claim) if method is not RankMethod.DENSE else None
        dense = self.dense_scores(claim) if method is not RankMethod.BM25 else None
        if method is RankMethod.BM25 and bm25 is not None:
            scores = bm25
        elif method is RankMethod.DENSE and dense is not None:
            scores = dense
        else:
            assert bm25 is not None
            assert dense is not None
            scores = np.zeros(len(self.passages))
            for component in (bm25, dense):
                ranks = np.empty(len(component), dtype=np.float64)
                ranks[_order(component)] = np.arange(1, len(component) + 1)
                scores += 1.0 / (_FUSION_K + ranks)
        ranked: list[RankedPassage] = []
        for rank, index in enumerate(_order(scores)[:k], start=1):
            passage = self.passages[index]
            ranked.append(
                RankedPassage(
                    int(index),
                    passage.text,
                    passage.start,
                    passage.end,
                    float(scores[index]),
                    rank,
                    None if bm25 is None else float(bm25[index]),
                    None if dense is None else float(dense[index]),
                )
            )
        return ranked


def rank_passages(
    claim: str,
    passages: str | Sequence[str | Passage],
    k: int = 5,
    method: RankMethod | str = RankMethod.BM25,
    *,
    encoder: Encoder | None = None,
) -> list[RankedPassage]:
    """The ``k`` passages that best match ``claim``, best first, with scores and character offsets.

    ``passages`` is a source's text (split into sentences), a list of passage strings (offsets into their
    ``"\\n"``-joined text) or ``Passage`` objects with their own offsets. ``dense`` and ``hybrid`` use
    ``encoder``, by default all-MiniLM-L6-v2 from the extra ``citeaudit[models]``.

    >>> [p.text for p in rank_passages("tank capacity", ["Weight: 35 kg.", "Tank capacity: 20 L."], k=1)]
    ['Tank capacity: 20 L.']
    """
    return PassageIndex(passages, encoder=encoder).rank(claim, k, method)
