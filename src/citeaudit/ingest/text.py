"""Answer-text helpers shared by the engine readers: engine artefacts, sentence spans, claim candidates.

Readers never change the stored answer text; these helpers only compute spans into it and the claim text
(with markers and link chips stripped) for claim candidates. Proper segmentation into independently
checkable claims is a separate, versioned step.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from typing import Final

from citeaudit.ingest.base import ClaimCandidate
from citeaudit.ingest.sentences import ARTEFACT, sentences

_NEW: Final = tuple.__new__

__all__ = [
    "ARTEFACT",
    "MARKER",
    "SentenceIndex",
    "candidates",
    "claim_text",
    "sentence_containing",
    "span_before",
    "trim_claim",
    "trim_span",
]

MARKER = re.compile(r"\[(\d{1,4})\]")
"""A numbered citation marker such as ``[2]`` (group 1: the number)."""

_BULLET = re.compile(r"^\s*(?:[-*•·]|\d{1,3}[.)]|#{1,6})\s+")
_TRAILING = re.compile(r"(?:\s*(?:" + ARTEFACT.pattern + r"))+\s*$", re.VERBOSE)
_LEADING = re.compile(r"^\s*(?:(?:" + ARTEFACT.pattern + r")\s*)+", re.VERBOSE)


_SPACE_BEFORE_PUNCT = re.compile(r" (?=[,.;:!?。！？；])")
_ARTEFACT_STARTS = "[(【\ue200"
_ARTEFACT_ENDS = "])】\ue201"
_BULLET_STARTS = frozenset("-*•·#")
_ARTEFACT_START = re.compile("[" + re.escape(_ARTEFACT_STARTS) + "]")


def trim_claim(text: str, start: int, end: int) -> tuple[int, int]:
    """``trim_span(text, start, end)`` for the common case (plain text closed by ``[n]`` markers) without its
    regex scans; anything unusual at either end goes to :func:`trim_span`."""
    piece = text[start:end]
    head = piece.lstrip()
    if not head or head[0] in _ARTEFACT_STARTS:
        return trim_span(text, start, end)
    begin = start + len(piece) - len(head)
    stop = begin + len(head.rstrip())
    while text[stop - 1] == "]":
        opening = text.rfind("[", begin, stop)
        if opening < 0 or MARKER.fullmatch(text, opening, stop) is None:
            return trim_span(text, start, end)
        stop = opening
        while text[stop - 1].isspace():
            stop -= 1
    if text[stop - 1] in _ARTEFACT_ENDS:
        return trim_span(text, start, end)
    return begin, stop


_PLAIN = re.compile(r"[^\s\[(【\ue200]++(?: [^\s\[(【\ue200,.;:!?。！？；][^\s\[(【\ue200]*+)*+")
"""Text :func:`claim_text` leaves as it is (unless it opens like a bullet): no artefact, no white space but single
spaces between words, none at either end or before punctuation. The quantifiers are possessive: a word ends only at a
space or an artefact's opening, which no shorter match can get past, so nothing is tried twice (a fifth less time
than backtracking allowed)."""


_PLAIN_MARKED = re.compile(f"({_PLAIN.pattern}) ?" + r"\[\d{1,4}\](?: ?\[\d{1,4}\])*([.!?])")
"""Plain text, then ``[n]`` markers (each after at most one space), then the stop they stand before, as Sonar
writes a sentence (``tank [1][7].``): its claim text is the plain text and the stop."""


def claim_text(text: str, start: int, end: int) -> str:
    """The claim text of a span: artefacts and a leading list bullet removed, white space folded."""
    if start < end and not (text[start] in _BULLET_STARTS or text[start].isdecimal()):
        # plain text holds no "[" and a marked sentence does: one of the two patterns is tried, not both
        if text.find("[", start, end) < 0:
            if _PLAIN.fullmatch(text, start, end) is not None:
                return text[start:end]  # the common claim: nothing to remove or fold
        else:
            marked = _PLAIN_MARKED.fullmatch(text, start, end)
            if marked is not None:  # the markers go, and the spaces they leave before the stop
                return marked.group(1) + marked.group(2)
    cleaned = text[start:end]
    if _ARTEFACT_START.search(cleaned) is not None:
        cleaned = ARTEFACT.sub(" ", cleaned)
    if cleaned[:1] in _BULLET_STARTS or cleaned[:1].isspace() or cleaned[:1].isdecimal():
        bullet = _BULLET.match(cleaned)  # anchored at the start, so at most one match
        if bullet is not None:
            cleaned = cleaned[bullet.end() :]
    return _SPACE_BEFORE_PUNCT.sub("", " ".join(cleaned.split()))


def sentence_containing(text: str, position: int) -> tuple[int, int]:
    """``(start, end)`` of the sentence that contains ``position`` (markers after its punctuation included)."""
    return SentenceIndex(text).containing(position)


class SentenceIndex:
    """Sentence boundaries of one text (from :func:`~citeaudit.ingest.sentences.sentences`, the one splitter
    ingest and segmentation share), computed once, for many look-ups."""

    def __init__(self, text: str, floor: int = 0) -> None:
        self.text = text
        self.floor = floor
        self.sentences = sentences(text)
        self.starts = [s.region for s in self.sentences]
        """Where each sentence's stretch of the text begins (a position belongs to the last one at or before it)."""
        self._spans: dict[int, tuple[int, int]] = {}
        self._claims: dict[int, tuple[int, int]] = {}

    def _bounds(self, position: int) -> tuple[int, tuple[int, int]]:
        index = max(0, bisect.bisect_right(self.starts, position) - 1)
        if not self.sentences:
            return index, (0, len(self.text))
        sentence = self.sentences[index]
        return index, (sentence.start, sentence.end)

    def containing(self, position: int) -> tuple[int, int]:
        """``(start, end)`` of the sentence containing ``position``: a list bullet, white space and leading
        artefacts left out, trailing markers kept (they belong to the sentence they close)."""
        index, (start, end) = self._bounds(position)
        span = self._spans.get(index)
        if span is None:
            span = trim_span(self.text, start, end, keep_trailing_artefacts=True)
            self._spans[index] = span
        return span

    def claim_span(self, position: int) -> tuple[int, int]:
        """The sentence containing ``position`` (not reaching back before ``floor``) without its closing markers:
        the span of the claim a marker in that sentence is attached to."""
        index, (start, end) = self._bounds(position)
        span = self._claims.get(index)
        if span is None:
            span = trim_claim(self.text, max(start, self.floor), max(end, self.floor))
            self._claims[index] = span
        return span


def trim_span(text: str, start: int, end: int, *, keep_trailing_artefacts: bool = False) -> tuple[int, int]:
    """Shrink ``[start, end)`` past surrounding white space and engine artefacts."""
    piece = text[start:end]
    leading = _LEADING.match(piece)
    if leading:
        start += leading.end()
        piece = text[start:end]
    if not keep_trailing_artefacts:
        trailing = _TRAILING.search(piece)
        if trailing:
            end -= len(piece) - trailing.start()
            piece = text[start:end]
    stripped = piece.rstrip()
    end -= len(piece) - len(stripped)
    lstripped = stripped.lstrip()
    start += len(stripped) - len(lstripped)
    return start, max(start, end)


def span_before(text: str, position: int, floor: int = 0) -> tuple[int, int]:
    """The claim span a citation at ``position`` closes: back to the start of its sentence (or ``floor``, e.g.
    the end of the previous citation's claim), artefacts trimmed."""
    anchor = max(floor, min(position, len(text)) - 1)
    sentence_start, _ = sentence_containing(text, anchor) if text else (0, 0)
    return trim_span(text, max(floor, sentence_start), position)


def candidates(text: str, cited_spans: Iterable[tuple[int, int, int]]) -> tuple[ClaimCandidate, ...]:
    """Claim candidates from ``(span start, span end, citation index)`` triples: equal spans merge into one
    candidate (in order of first appearance) that keeps every citation index, duplicates included."""
    merged: dict[tuple[int, int], list[int]] = {}
    for start, end, citation in cited_spans:
        merged.setdefault((start, end), []).append(citation)
    found = []
    for (start, end), citations in merged.items():
        claim = claim_text(text, start, end)
        if claim:
            # the named tuple made as the tuple it is (its own constructor is Python code; tests/test_compiled.py)
            found.append(_NEW(ClaimCandidate, (claim, start, end, tuple(citations))))
    return tuple(found)
