"""Rank a source's passages for a claim: BM25, dense cosine similarity, or both fused (hybrid).

BM25 is Okapi BM25 (k1 = 1.5, b = 0.75) over lower-cased word tokens (``\\w+``), with English stopwords removed
from the claim only (so passage lengths stay true), a repeated claim term counted each time, and Lucene's inverse
document frequency ln(1 + (N - n + 0.5)/(n + 0.5)): the classic ln((N - n + 0.5)/(n + 0.5)) is 0 or negative for a
term in half or more of the passages, which on a source of two or three passages leaves nothing to rank.

The index is lazy. Building one tokenizes every passage in one regular-expression pass over the joined text and
keeps the tokens and each passage's length; ranking a claim is one pass over those tokens that counts only the
claim's terms. rank-bm25's ``BM25Okapi`` with the same idf gives the same scores (a property test holds them
equal to rounding), but counts every term of every passage into a dict per passage first, which costs more than
ranking the claim; on WiCE's sources of ~126 sentences, building and ranking once per edge takes 1.33× as long
with it, and 2.5× with bm25s (``benchmarks/bench_evidence.py``).

Hybrid is dense re-ranking: BM25 picks the 20 best passages, only those are embedded, and they are ordered by
reciprocal-rank fusion of their BM25 and dense ranks, 1/(60 + rank) each, which needs no calibration between the
two score scales; the other passages follow in BM25 order with their BM25 term alone (a missing rank adds
nothing, and a passage BM25 does not match has no BM25 rank), so they stay below every candidate. When BM25
matches no passage at all, the dense ranking orders every passage. On 150 WiCE dev claims, fusing within BM25's
top 20 found as many gold sets at top 3 as fusing over every sentence (0.453 both), embedding about a sixth of
the sentences.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from citeaudit.core.passages import Passage
from citeaudit.evidence._dense import Encoder, default_encoder
from citeaudit.evidence._methods import RankMethod
from citeaudit.evidence._passages import RankedPassage, as_passages
from citeaudit.evidence._windows import window_passages, windows_to_units

__all__ = ["HYBRID_CANDIDATES", "PassageIndex", "RankMethod", "rank_passages"]

_TOKEN = re.compile(r"\w+")
_SEPARATOR = "\x00"
_TOKEN_OR_SEPARATOR = re.compile(r"\w+|\x00")
_STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "from", "had", "has", "have", "he", "her", "his",
    "in", "into", "is", "it", "its", "of", "on", "or", "she", "that", "the", "their", "them", "then", "there",
    "these", "they", "this", "to", "was", "were", "which", "who", "will", "with",
})  # fmt: skip
_FUSION_K = 60
HYBRID_CANDIDATES = 20
"""Passages BM25 hands to the dense re-ranking in ``hybrid``."""


class _BM25Index:
    """Passage lengths up front; a term's frequency in each passage only when a claim asks for it."""

    k1 = 1.5
    b = 0.75

    def __init__(self, texts: Sequence[str]) -> None:
        # Every token of every passage, lower-cased, in one pass over one text, with a separator token between
        # passages (a separator no passage keeps); the separators' positions give each passage's length.
        joined = _SEPARATOR.join(t.replace(_SEPARATOR, " ") for t in texts).lower()
        self._tokens: list[str] = _TOKEN_OR_SEPARATOR.findall(joined)
        ends, position, index = [], -1, self._tokens.index
        for _ in range(len(texts) - 1):
            position = index(_SEPARATOR, position + 1)
            ends.append(position)
        ends.append(len(self._tokens))
        self._ends = ends
        lengths = np.diff(np.asarray(ends, dtype=np.float64), prepend=-1.0) - 1.0
        lengths = np.maximum(lengths, 1.0)  # an empty passage counts as one empty token, as rank-bm25 has it
        self.size = len(texts)
        self._norm = self.k1 * (1.0 - self.b + self.b * lengths / lengths.mean())

    def scores(self, terms: Counter[str]) -> npt.NDArray[np.float64]:
        """BM25 score of every passage for a claim's terms (with how often the claim says each)."""
        scores = np.zeros(self.size)
        if not terms:
            return scores
        # One pass over the tokens finds every occurrence of every claim term; (term, passage) → frequency.
        ends = self._ends
        found = Counter((token, bisect_left(ends, i)) for i, token in enumerate(self._tokens) if token in terms)
        postings: dict[str, list[tuple[int, int]]] = {}
        for (term, passage), tf in found.items():
            postings.setdefault(term, []).append((passage, tf))
        for term, pairs in postings.items():
            ids, tf = np.asarray(pairs, dtype=np.intp).T
            idf = math.log1p((self.size - len(pairs) + 0.5) / (len(pairs) + 0.5))
            scores[ids] += terms[term] * idf * tf * (self.k1 + 1.0) / (tf + self._norm[ids])
        return scores


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
        self._bm25 = _BM25Index([p.text for p in self.passages]) if self.passages else None
        self._embeddings: dict[int, npt.NDArray[np.float32]] = {}
        self._windows: PassageIndex | None = None

    @property
    def windows(self) -> PassageIndex:
        """The index of this source's windows of adjacent passages (built on first use)."""
        if self._windows is None:
            self._windows = PassageIndex(window_passages(self.passages), encoder=self._encoder)
        return self._windows

    def bm25_scores(self, claim: str) -> npt.NDArray[np.float64]:
        """BM25 score of every passage for ``claim``."""
        if self._bm25 is None:
            return np.zeros(0)
        return self._bm25.scores(Counter(t for t in _tokens(claim) if t not in _STOPWORDS))

    def _similarities(self, claim: str, indexes: Sequence[int]) -> npt.NDArray[np.float64]:
        # Each passage is embedded once, the first time a claim needs it; callers never pass no passage.
        encoder = self._encoder or default_encoder()
        missing = [i for i in indexes if i not in self._embeddings]
        if missing:
            rows = encoder.encode([self.passages[i].text for i in missing])
            self._embeddings.update(zip(missing, rows, strict=True))
        query = encoder.encode([claim])[0]
        return np.asarray(np.stack([self._embeddings[i] for i in indexes]) @ query, dtype=np.float64)

    def dense_scores(self, claim: str) -> npt.NDArray[np.float64]:
        """Cosine similarity of every passage to ``claim``."""
        if not self.passages:
            return np.zeros(0)
        return self._similarities(claim, range(len(self.passages)))

    def rank(
        self,
        claim: str,
        k: int = 5,
        method: RankMethod | str = RankMethod.BM25,
        *,
        candidates: int = HYBRID_CANDIDATES,
    ) -> list[RankedPassage]:
        """The ``k`` best passages for ``claim``, best first; ``hybrid`` re-ranks BM25's best ``candidates``."""
        if k < 1:
            raise ValueError(f"k must be at least 1 (got {k!r})")
        if candidates < 1:
            raise ValueError(f"candidates must be at least 1 (got {candidates!r})")
        method = RankMethod(method)
        if not self.passages:
            return []
        if method in (RankMethod.WINDOW, RankMethod.WINDOW_HYBRID):
            return self._rank_windows(claim, k, method, candidates)
        scores, bm25, dense = self._scores(claim, method, candidates)
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
                    dense.get(int(index)),
                )
            )
        return ranked

    def _rank_windows(self, claim: str, k: int, method: RankMethod, candidates: int) -> list[RankedPassage]:
        windows = self.windows
        plain = RankMethod.HYBRID if method is RankMethod.WINDOW_HYBRID else RankMethod.BM25
        scores, bm25, dense = windows._scores(claim, plain, candidates)
        return windows_to_units(
            self.passages,
            _order(scores),
            scores,
            self.bm25_scores(claim),
            k,
            window_bm25=bm25,
            window_dense=dense if dense else None,
        )

    def _scores(
        self, claim: str, method: RankMethod, candidates: int
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64] | None, dict[int, float]]:
        """(score of every passage, BM25 scores when BM25 took part, dense similarity by passage index)."""
        dense: dict[int, float] = {}
        if method is RankMethod.DENSE:
            bm25 = None
            scores = self.dense_scores(claim)
            dense = dict(enumerate(scores.tolist()))
        else:
            bm25 = self.bm25_scores(claim)
            scores = bm25
            if method is RankMethod.HYBRID:
                by_bm25 = _order(bm25)
                # A passage BM25 matches gets its reciprocal BM25 rank; one it does not match has no rank.
                scores = np.zeros(len(bm25))
                scores[by_bm25] = 1.0 / (_FUSION_K + np.arange(1, len(bm25) + 1))
                scores[bm25 <= 0] = 0.0
                # BM25's best few get the dense term too; when BM25 matches nothing, every passage does.
                chosen = by_bm25[:candidates].tolist() if bm25.max() > 0 else list(range(len(bm25)))
                similarity = self._similarities(claim, chosen)
                dense = dict(zip(chosen, similarity.tolist(), strict=True))
                scores[chosen] += 1.0 / (_FUSION_K + 1 + np.argsort(_order(similarity)))
        return scores, bm25, dense


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
