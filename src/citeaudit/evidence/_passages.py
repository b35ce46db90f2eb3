"""Passages ranked for a claim, and the passages a ranking is given (a text, or pieces of one)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from citeaudit.core.passages import Passage, split_sentences

__all__ = ["RankedPassage", "as_passages"]


@dataclass(frozen=True, slots=True)
class RankedPassage:
    """A passage ranked for a claim."""

    index: int
    """Position of the passage in the list that was ranked."""
    text: str
    """The passage."""
    start: int
    """Start offset in the source text."""
    end: int
    """End offset (exclusive)."""
    score: float
    """Score of the method (BM25 score, cosine similarity, or reciprocal-rank fusion score for hybrid)."""
    rank: int
    """1 for the best passage."""
    bm25: float | None = None
    """BM25 score, when BM25 took part."""
    dense: float | None = None
    """Cosine similarity of the embeddings, when the dense encoder took part."""


def as_passages(passages: str | Sequence[str | Passage]) -> list[Passage]:
    """A document becomes its sentences; plain strings get offsets into their ``"\\n"``-joined text."""
    if isinstance(passages, str):
        return split_sentences(passages)
    result: list[Passage] = []
    position = 0
    for item in passages:
        if isinstance(item, Passage):
            result.append(item)
            position = item.end + 1
        else:
            result.append(Passage(item, position, position + len(item)))
            position += len(item) + 1
    return result
