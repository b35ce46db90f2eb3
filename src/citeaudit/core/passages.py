"""Passages of a source's text with their character offsets, and the two ways a text is split into them (pure).

:func:`split_paragraphs` makes the passages the store keeps, with their ordinals, for every document it stores;
:func:`split_sentences` cuts a text given on its own into sentences for ranking.

Paragraph passages follow paragraphs. A paragraph longer than ``max_chars`` is cut at sentence ends (at a space when
one sentence is longer still, hard at ``max_chars`` when there is no space); a paragraph shorter than
``min_chars`` (a heading, a table cell) joins the next one while the two fit in ``max_chars``.
Every passage is ``text[start:end]`` exactly, with no leading or trailing whitespace; passages are in order,
never overlap, and together hold every non-whitespace character of the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["MAX_CHARS", "MIN_CHARS", "Passage", "split_paragraphs", "split_sentences"]


@dataclass(frozen=True, slots=True)
class Passage:
    """A stretch of a source's text with its character offsets: ``text == source_text[start:end]``."""

    text: str
    """The passage."""
    start: int
    """Offset of the first character in the source text."""
    end: int
    """Offset one past the last character."""
    ordinal: int | None = None
    """Position among the passages its text was split into (0-based); ``None`` for a passage given on its own."""


MAX_CHARS = 1000
"""Longest passage, in characters."""
MIN_CHARS = 80
"""A paragraph shorter than this joins the next one."""

_PARAGRAPH = re.compile(r"[^\n]*\S[^\n]*(?:\n[ \t]*\S[^\n]*)*")
_SENTENCE_END = re.compile(r"[.!?…]['\")\]]*\s+")


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _cut(text: str, start: int, end: int, max_chars: int) -> list[tuple[int, int]]:
    """``[start, end)`` cut into pieces of at most ``max_chars``, preferring sentence ends, then spaces."""
    pieces = []
    while end - start > max_chars:
        limit = start + max_chars
        cut = None
        # A sentence end followed by whitespace; the whitespace is trimmed off the piece, so it still fits.
        for match in _SENTENCE_END.finditer(text, start, limit + 1):
            cut = match.end()
        if cut is None:
            space = text.rfind(" ", start + 1, limit)
            cut = space if space > start else limit
        piece = _trimmed(text, start, cut)
        if piece[1] > piece[0]:
            pieces.append(piece)
        start, _ = _trimmed(text, cut, end)
    piece = _trimmed(text, start, end)
    if piece[1] > piece[0]:
        pieces.append(piece)
    return pieces


def split_paragraphs(text: str, max_chars: int = MAX_CHARS, min_chars: int = MIN_CHARS) -> list[Passage]:
    """The paragraph passages of ``text`` with their offsets and ordinals (see the module docstring for the rules).

    Notes: an empty or all-whitespace text has no passages (``[]``).
    """
    if max_chars < 1 or not 0 <= min_chars <= max_chars:
        raise ValueError(f"need 1 <= max_chars and 0 <= min_chars <= max_chars, got {max_chars=}, {min_chars=}")
    units: list[tuple[int, int]] = []
    for match in _PARAGRAPH.finditer(text):
        start, end = _trimmed(text, match.start(), match.end())
        if end > start:
            units.extend(_cut(text, start, end, max_chars))
    spans: list[tuple[int, int]] = []
    for start, end in units:
        if spans and spans[-1][1] - spans[-1][0] < min_chars and end - spans[-1][0] <= max_chars:
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    return [Passage(text[start:end], start, end, i) for i, (start, end) in enumerate(spans)]


# A sentence ends at . ! ? (optionally closed by a quote or bracket) before whitespace; a line break always ends one.
_BOUNDARY = re.compile(r"(?<=[.!?])[\"”’)\]]?\s+|\n+")


def split_sentences(text: str, *, min_chars: int = 1) -> list[Passage]:
    """Split a text into sentence passages with offsets and ordinals; pieces shorter than ``min_chars`` once
    stripped (blank ones at least) are skipped.

    >>> [(p.text, p.start, p.end) for p in split_sentences("Tank: 20 L. Weight: 35 kg.")]
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
            passages.append(Passage(stripped, start, start + len(stripped), len(passages)))
        position = boundary.end() if boundary else len(text)
    return passages
