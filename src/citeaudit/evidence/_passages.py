"""Passages of a source with their character offsets, and how a document is split into them."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Passage", "RankedPassage", "as_passages", "split_passages"]


@dataclass(frozen=True, slots=True)
class Passage:
    """A piece of a source's text."""

    text: str
    """The passage."""
    start: int
    """Start offset in the source text."""
    end: int
    """End offset (exclusive) in the source text."""


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


# A sentence ends at . ! ? (optionally closed by a quote or bracket) before whitespace; a line break always ends one.
_BOUNDARY = re.compile(r"(?<=[.!?])[\"”’)\]]?\s+|\n+")


def split_passages(text: str, *, min_chars: int = 1) -> list[Passage]:
    """Split a document into sentence passages with offsets; blank pieces are skipped.

    >>> [(p.text, p.start, p.end) for p in split_passages("Tank: 20 L. Weight: 35 kg.")]
    [('Tank: 20 L.', 0, 11), ('Weight: 35 kg.', 12, 26)]
    """
    passages: list[Passage] = []
    position = 0
    for boundary in [*_BOUNDARY.finditer(text), None]:
        end = boundary.start() if boundary else len(text)
        if boundary and text[boundary.start()] in '"”’)]':
            end += 1
        piece = text[position:end]
        stripped = piece.strip()
        if len(stripped) >= min_chars:
            start = position + (len(piece) - len(piece.lstrip()))
            passages.append(Passage(stripped, start, start + len(stripped)))
        position = boundary.end() if boundary else len(text)
    return passages


def as_passages(passages: str | Sequence[str | Passage]) -> list[Passage]:
    """A document becomes its sentences; plain strings get offsets into their ``"\\n"``-joined text."""
    if isinstance(passages, str):
        return split_passages(passages)
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
