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
    "trim_claim",
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


_BREAK = re.compile("[\n" + re.escape(_END_PUNCTUATION) + "]")
_LINE_RUN = re.compile(r"\n\s*")
_STOP_RUN = re.compile(
    "[" + re.escape(_END_PUNCTUATION + "\"'”’)") + "]*(?:" + ARTEFACT.pattern + r")*(?P<space>\s*)", re.VERBOSE
)
# What precedes an abbreviation's final dot (two letters, or the one letter of "p."): a dot without such
# neighbours is no abbreviation, so the helper's scan back over the word is skipped.
_ABBREVIATION_TAILS = frozenset(word[-3:-1] for word in _ABBREVIATIONS if len(word) > 2)
_ABBREVIATION_LETTERS = frozenset(word[-2] for word in _ABBREVIATIONS if len(word) == 2)
_SPACE_BEFORE_PUNCT = re.compile(r" (?=[,.;:!?。！？；])")
_ARTEFACT_STARTS = "[(【\ue200"
_ARTEFACT_ENDS = "])】\ue201"
_BULLET_STARTS = frozenset("-*•·#")
_ARTEFACT_START = re.compile("[" + re.escape(_ARTEFACT_STARTS) + "]")


def _sentence_starts(text: str) -> list[int]:
    """Offsets where sentences start. A marker right after closing punctuation (``tank.[1]``) stays with the
    sentence it closes; a line break always ends a sentence. Only line breaks and closing punctuation are
    visited, so an answer costs a handful of regex matches rather than a loop over its characters."""
    starts = [0]
    length = len(text)
    position = 0
    for found in _BREAK.finditer(text):
        at = found.start()
        if at < position:  # inside a run already consumed (closing punctuation, artefacts, white space)
            continue
        char = found.group()
        if char == "\n":
            run = _LINE_RUN.match(text, at)
            assert run is not None  # the pattern starts with the line break just found
            position = run.end()
        elif char == "." and _may_abbreviate(text, at) and _is_abbreviation(text, at):
            continue
        else:
            following = text[at + 1 : at + 3]
            if following[:1].isalnum():  # neither closer, artefact nor space: 3.5 bar, example.com
                if char not in _CJK_END:
                    continue
                position = at + 1
            elif following[:1] == " " and not following[1:].isspace():  # the usual single space
                position = at + 2
            else:
                run = _STOP_RUN.match(text, at + 1)
                assert run is not None  # every part of the pattern may be empty
                position = run.end()
                if position == run.start("space") and char not in _CJK_END:
                    continue
        if position < length:
            starts.append(position)
    return starts


def _may_abbreviate(text: str, dot: int) -> bool:
    """False when the dot at ``dot`` cannot end an abbreviation (the common, cheap answer)."""
    tail = text[max(dot - 2, 0) : dot].lower()
    return tail in _ABBREVIATION_TAILS or tail[-1:] in _ABBREVIATION_LETTERS


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


def claim_text(text: str, start: int, end: int) -> str:
    """The claim text of a span: artefacts and a leading list bullet removed, white space folded."""
    cleaned = text[start:end]
    if _ARTEFACT_START.search(cleaned) is not None:
        cleaned = ARTEFACT.sub(" ", cleaned)
    if cleaned[:1] in _BULLET_STARTS or cleaned[:1].isspace() or cleaned[:1].isdecimal():
        bullet = _BULLET.match(cleaned)  # anchored at the start, so at most one match
        if bullet is not None:
            cleaned = cleaned[bullet.end() :]
    return _SPACE_BEFORE_PUNCT.sub("", " ".join(cleaned.split()))


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

    def __init__(self, text: str, floor: int = 0) -> None:
        self.text = text
        self.floor = floor
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
        """The sentence containing ``position`` (not reaching back before ``floor``) without its closing markers:
        the span of the claim a marker in that sentence is attached to."""
        index = max(0, bisect.bisect_right(self.starts, position) - 1)
        span = self._claims.get(index)
        if span is None:
            starts = self.starts
            end = starts[index + 1] if index + 1 < len(starts) else len(self.text)
            span = trim_claim(self.text, max(starts[index], self.floor), max(end, self.floor))
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
            found.append(ClaimCandidate(claim, start, end, tuple(citations)))
    return tuple(found)
