"""Answer-text helpers shared by the engine readers: engine artefacts, sentence spans, claim candidates.

Readers never change the stored answer text; these helpers only compute spans into it and the claim text
(with markers and link chips stripped) for claim candidates. Proper segmentation into independently
checkable claims is a separate, versioned step.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable

from citeaudit.ingest.base import ClaimCandidate

__all__ = [
    "ARTEFACT",
    "MARKER",
    "SentenceIndex",
    "candidates",
    "claim_text",
    "sentence_containing",
    "span_before",
    "trim_span",
]

MARKER = re.compile(r"\[(\d{1,4})\]")
"""A numbered citation marker such as ``[2]`` (group 1: the number)."""

ARTEFACT = re.compile(
    r"""
      \[\d{1,4}\]                      # [2]
    | \[\^\d{1,4}\^?\]                 # [^2^] / [^2]  (Copilot, markdown footnotes)
    | \[cite:\s*[\d,\s]+\]             # [cite: 1, 2]  (Gemini apps)
    | 【[^】]*】                        # 【4†source】 (ChatGPT UI)
    | \ue200[^\ue201]*\ue201           # private-use citation tokens
    | \(\s*\[[^\]]*\]\([^)\s]*\)\s*\)  # link chip: ([example.com](https://example.com/...))
    | \[[^\]]*\]\(https?://[^)\s]*\)   # bare markdown link used as a chip
    """,
    re.VERBOSE,
)
"""Engine artefacts stripped from claim text (never from the stored answer)."""

_END_PUNCTUATION = ".!?。！？；"
_ABBREVIATIONS = frozenset(
    [
        "e.g.",
        "i.e.",
        "etc.",
        "vs.",
        "approx.",
        "ca.",
        "incl.",
        "excl.",
        "no.",
        "nr.",
        "fig.",
        "p.",
        "pp.",
        "dr.",
        "mr.",
        "mrs.",
        "ms.",
        "st.",
        "z.b.",
        "bzw.",
        "usw.",
        "d.h.",
        "ggf.",
        "inkl.",
        "max.",
        "min.",
        "art.",
        "abs.",
    ]
)
_BULLET = re.compile(r"^\s*(?:[-*•·]|\d{1,3}[.)]|#{1,6})\s+")
_CJK_END = "。！？；"
_TRAILING = re.compile(r"(?:\s*(?:" + ARTEFACT.pattern + r"))+\s*$", re.VERBOSE)
_LEADING = re.compile(r"^\s*(?:(?:" + ARTEFACT.pattern + r")\s*)+", re.VERBOSE)
_SPACES = re.compile(r"\s+")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([,.;:!?。！？；])")


_BOUNDARY_CANDIDATE = re.compile(r"[.!?。！？；\n]")


def _sentence_starts(text: str) -> list[int]:
    """Offsets where sentences start. A marker right after closing punctuation (``tank.[1]``) stays with the
    sentence it closes; a line break always ends a sentence."""
    starts = [0]
    n = len(text)
    found = _BOUNDARY_CANDIDATE.search(text)
    while found is not None:
        i = found.start()
        char = text[i]
        resume = i + 1
        if char == "\n":
            j = i
            while j < n and text[j].isspace():
                j += 1
            if j < n:
                starts.append(j)
            resume = j
        elif not (char == "." and _is_abbreviation(text, i)):
            j = i + 1
            while j < n and text[j] in _END_PUNCTUATION + "\"'”’)":
                j += 1
            while (match := ARTEFACT.match(text, j)) is not None:
                j = match.end()
            if j >= n:
                break
            if text[j].isspace() or char in _CJK_END:
                k = j
                while k < n and text[k].isspace():
                    k += 1
                if k < n:
                    starts.append(k)
                resume = k
            else:
                resume = j
        found = _BOUNDARY_CANDIDATE.search(text, max(resume, i + 1))
    return starts


def _is_abbreviation(text: str, dot: int) -> bool:
    word_start = dot
    while word_start > 0 and not text[word_start - 1].isspace():
        word_start -= 1
    word = text[word_start : dot + 1].lower().lstrip("([\"'")
    return word in _ABBREVIATIONS


def sentence_containing(text: str, position: int) -> tuple[int, int]:
    """``(start, end)`` of the sentence that contains ``position`` (markers after its punctuation included)."""
    return SentenceIndex(text).containing(position)


class SentenceIndex:
    """Sentence boundaries of one text, computed once, for many look-ups."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = _sentence_starts(text)
        self._spans: dict[int, tuple[int, int]] = {}
        self._claims: dict[int, tuple[int, int]] = {}

    def containing(self, position: int) -> tuple[int, int]:
        """``(start, end)`` of the sentence containing ``position``, white space and leading artefacts trimmed,
        trailing markers kept (they belong to the sentence they close)."""
        index = max(0, bisect.bisect_right(self.starts, position) - 1)
        span = self._spans.get(index)
        if span is None:
            start = self.starts[index]
            end = self.starts[index + 1] if index + 1 < len(self.starts) else len(self.text)
            span = trim_span(self.text, start, end, keep_trailing_artefacts=True)
            self._spans[index] = span
        return span

    def claim_span(self, position: int) -> tuple[int, int]:
        """The sentence containing ``position`` without trailing markers: the span of the claim a marker in
        that sentence is attached to."""
        index = max(0, bisect.bisect_right(self.starts, position) - 1)
        span = self._claims.get(index)
        if span is None:
            span = trim_span(self.text, *self.containing(position))
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


def claim_text(text: str, start: int, end: int) -> str:
    """The claim text of a span: artefacts removed, white space folded."""
    cleaned = _BULLET.sub("", ARTEFACT.sub(" ", text[start:end]))
    cleaned = _SPACE_BEFORE_PUNCT.sub(r"\1", _SPACES.sub(" ", cleaned))
    return cleaned.strip()


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
            found.append(ClaimCandidate(claim, start, end, tuple(citations)))
    return tuple(found)
