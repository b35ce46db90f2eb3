"""``url_citation`` annotations of OpenAI-style answers: where each citation chip is, and which claim it closes.

The Responses API and the Chat Completions search models (``citeaudit.ingest.openai``) both cite with
``url_citation`` annotations whose ``start_index``/``end_index`` locate the inline citation *chip* (usually a
markdown link such as ``([host](url))``), not the claim the chip supports. The claim is the text before the chip,
back to the start of its sentence or to the end of the previous chip when that is later (as
:func:`~citeaudit.ingest.text.span_before`), starting at its first word (a joining comma or a list marker is left
out). A chip with only white space, punctuation or other chips between it and the previous chip closes the same
claim, so repeated chips make one claim candidate that keeps every citation.

Offsets are read as code-point indices (Python ``str`` indices) into the text they belong to. The unit is not
documented, so every chip is checked: the slice has to look like a chip (it opens with ``(``/``[``/``【`` and
closes with ``)``/``]``/``】``, or it has no brackets and names the cited host or the title). If it does not and
the text has characters outside the Basic Multilingual Plane, the offsets are read again as UTF-16 code units;
a slice that still does not look like a chip refuses the file, naming the annotation. A zero-width annotation is
taken as a point with no chip. An answer in several parts is their texts joined with ``""``: offsets are shifted
by the part's position in the joined text, and a claim never reaches back into an earlier part.

A ``url_citation`` without ``start_index``/``end_index`` (xAI's Responses-compatible API) or at ``0/0``
(OpenRouter writes that for every one) has no position. When every annotation of a one-part answer lacks one and
the text has ``[n]`` markers that all fall within the list (OpenRouter's Perplexity Sonar: the list is Sonar's, in
order), the markers place them, as for Sonar itself: marker ``n`` cites annotation ``n``, its claim the sentence it
closes; annotations no marker names stay answer-level. Otherwise it is located at a markdown link to its URL when
the text has one, and is an answer-level citation (cited, no claim) when it has none. ``file_citation``
annotations are document sources (``document:<file id>``), cited by the answer as a whole (their ``index`` is a
point where no chip is written). ``file_path`` and ``container_file_citation`` cite no source and are skipped;
other annotation types are noted. A ``url_citation`` without URL or title is a dangling citation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from citeaudit.core.errors import InvalidValue
from citeaudit.core.identity import host_of
from citeaudit.core.model import CitationKind
from citeaudit.ingest.base import ClaimCandidate, ParsedCitation
from citeaudit.ingest.markers import cite_markers, numbered
from citeaudit.ingest.payload import expect
from citeaudit.ingest.text import MARKER, SentenceIndex, candidates, claim_text, trim_span

__all__ = ["OPTIONAL_TEXT", "Part", "cited", "read_part"]

OPTIONAL_TEXT = (str, type(None))
"""A JSON string or null."""
_OPENERS = "([【"
_CLOSERS = ")]】"
_LEAD = re.compile(r"(?:\s|[,;:]|[-*•·](?=\s)|\d{1,3}[.)](?=\s))+")
"""White space, clause punctuation and list markers before a claim's first word."""


@dataclass(frozen=True, slots=True)
class _Annotation:
    """A ``url_citation`` as given, with offsets into the text of its own part (``None``: no position given)."""

    start: int | None
    end: int | None
    url: str | None
    title: str | None
    where: str
    """JSON path of the annotation, for errors."""
    quote: str | None = None
    """Source text the annotation carries (OpenRouter's ``content``)."""


@dataclass(frozen=True, slots=True)
class _FileCitation:
    """A ``file_citation``: an uploaded file the answer cites (no URL; ``index`` is a point, not a chip)."""

    file_id: str
    filename: str | None


@dataclass(frozen=True, slots=True)
class Part:
    """A piece of answer text and the annotations on it."""

    text: str
    annotations: tuple[_Annotation, ...] = ()
    files: tuple[_FileCitation, ...] = ()
    unknown: tuple[str, ...] = ()
    """Annotation types this reader does not know."""


@dataclass(frozen=True, slots=True)
class _Chip:
    """A located citation chip in the joined answer text."""

    start: int
    end: int
    floor: int
    """Start of the part the chip is in: its claim never reaches further back."""
    citation: int
    """Index of its citation in the answer."""


def _offset(value: Any, source: str, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidValue(source, where, f"expected a character offset (got {value!r})")
    return value


def _annotation(entry: dict[str, Any], source: str, where: str) -> _Annotation:
    """A ``url_citation`` annotation, nested (Chat Completions) or flat (Responses).

    Without ``start_index``/``end_index`` (xAI), or with both 0 (OpenRouter writes ``0/0`` for every one) it has
    no position: an answer-level citation.
    """
    if "url_citation" in entry:
        where = f"{where}.url_citation"
        entry = expect(entry["url_citation"], dict, source, where)
    raw_start, raw_end = entry.get("start_index"), entry.get("end_index")
    start = None if raw_start is None and raw_end is None else _offset(raw_start, source, f"{where}.start_index")
    end = None if start is None else _offset(raw_end, source, f"{where}.end_index")
    if start == 0 and end == 0:
        start = end = None
    url = expect(entry.get("url"), OPTIONAL_TEXT, source, f"{where}.url")
    title = expect(entry.get("title"), OPTIONAL_TEXT, source, f"{where}.title")
    quote = expect(entry.get("content"), OPTIONAL_TEXT, source, f"{where}.content")
    return _Annotation(start, end, url or None, title or None, where, quote or None)


_IGNORED_ANNOTATIONS = frozenset({"file_path", "container_file_citation"})
"""Annotation types that cite no source (a file the model wrote, a file in a code container)."""


def read_part(text: str, raw: Any, source: str, where: str) -> Part:
    """A text part with its ``url_citation`` and ``file_citation`` annotations; other types are noted."""
    if raw is None:
        return Part(text)
    annotations: list[_Annotation] = []
    files: list[_FileCitation] = []
    unknown: list[str] = []
    for i, item in enumerate(expect(raw, list, source, where)):
        at = f"{where}[{i}]"
        entry = expect(item, dict, source, at)
        kind = expect(entry.get("type"), OPTIONAL_TEXT, source, f"{at}.type")
        if kind == "url_citation":
            annotations.append(_annotation(entry, source, at))
        elif kind == "file_citation":
            file_id = expect(entry.get("file_id"), str, source, f"{at}.file_id")
            filename = expect(entry.get("filename"), OPTIONAL_TEXT, source, f"{at}.filename")
            files.append(_FileCitation(file_id, filename or None))
        elif kind not in _IGNORED_ANNOTATIONS:
            unknown.append(f"annotation type {kind!r}")
    return Part(text, tuple(annotations), tuple(files), tuple(unknown))


def _host_names(url: str | None) -> list[str]:
    """The cited host without ``www.`` and its first label, as a chip would show them."""
    try:
        host = host_of(url) if url else None
    except ValueError:
        return []
    if not host:
        return []
    host = host.removeprefix("www.")
    return [host, host.split(".")[0]]


def _looks_like_chip(piece: str, annotation: _Annotation) -> bool:
    """Whether ``piece`` can be the chip of ``annotation`` (see the module notes)."""
    shown = piece.strip()
    if not shown:
        return False
    if any(mark in shown for mark in _OPENERS + _CLOSERS):
        return shown[0] in _OPENERS and shown[-1] in _CLOSERS
    lowered = shown.lower()
    names = [*_host_names(annotation.url), (annotation.title or "").lower()]
    return any(len(name) >= 3 and name in lowered for name in names)


def _from_utf16(text: str, units: int) -> int | None:
    """Code-point index of a UTF-16 offset; ``None`` inside a surrogate pair or past the end."""
    count = 0
    for index, char in enumerate(text):
        if count == units:
            return index
        if count > units:
            return None
        count += 2 if ord(char) > 0xFFFF else 1
    return len(text) if count == units else None


def _fits(text: str, start: int, end: int, annotation: _Annotation) -> bool:
    """Whether ``text[start:end]`` is in range and can be the annotation's chip (a zero-width point always can)."""
    return 0 <= start <= end <= len(text) and (start == end or _looks_like_chip(text[start:end], annotation))


def _markdown_chip(text: str, url: str | None, taken: set[int]) -> tuple[int, int] | None:
    """The first markdown link to ``url`` in ``text`` not already taken by another citation: where an
    annotation without a position is written, if it is written at all."""
    if not url:
        return None
    link = re.compile(r"\(?\[[^\]\n]*\]\(\s*<?" + re.escape(url) + r">?\s*\)\)?")
    for match in link.finditer(text):
        if match.start() not in taken:
            return match.start(), match.end()
    return None


def _locate(text: str, annotation: _Annotation, source: str) -> tuple[int, int]:
    """Code-point offsets of the annotation's chip in ``text``."""
    start, end = annotation.start, annotation.end
    assert start is not None
    assert end is not None
    if _fits(text, start, end, annotation):
        return start, end
    if len(text.encode("utf-16-le", "surrogatepass")) != 2 * len(text):  # characters outside the BMP
        utf16_start, utf16_end = _from_utf16(text, start), _from_utf16(text, end)
        if utf16_start is not None and utf16_end is not None and _fits(text, utf16_start, utf16_end, annotation):
            return utf16_start, utf16_end
    where = annotation.where
    if not 0 <= start <= len(text):
        raise InvalidValue(source, f"{where}.start_index", f"{start!r} is outside the text (length {len(text)})")
    if not start <= end <= len(text):
        raise InvalidValue(
            source, f"{where}.end_index", f"{end!r} is outside the text (start_index {start}, length {len(text)})"
        )
    piece = text[start:end]
    shown = repr(piece) if len(piece) <= 80 else repr(piece[:77] + "...")
    raise InvalidValue(
        source,
        where,
        f"text[{start}:{end}] is {shown}, which does not look like the citation chip for {annotation.url!r} "
        "(offsets in an unexpected unit?)",
    )


def _has_words(text: str, start: int, end: int) -> bool:
    return any(char.isalnum() for char in claim_text(text, start, end))


def _claim_span(sentences: SentenceIndex, position: int, floor: int) -> tuple[int, int]:
    """The span a chip at ``position`` closes (as :func:`~citeaudit.ingest.text.span_before`, with the sentence
    boundaries computed once per text), starting at its first word: a comma joining it to the clause before or
    a list marker is not part of the claim."""
    text = sentences.text
    anchor = max(floor, min(position, len(text)) - 1)
    sentence_start = sentences.containing(anchor)[0] if text else 0
    start, end = trim_span(text, max(floor, sentence_start), position)
    lead = _LEAD.match(text, start, end)
    return (lead.end(), end) if lead else (start, end)


def _claim_spans(text: str, chips: Iterable[_Chip]) -> list[tuple[int, int, int]]:
    """``(start, end, citation)`` for the claim each chip closes; chips that close no words are left out."""
    sentences = SentenceIndex(text)
    spans: list[tuple[int, int, int]] = []
    reach = 0
    claim: tuple[int, int] | None = None
    for chip in sorted(chips, key=lambda c: (c.start, c.end, c.citation)):
        since = max(chip.floor, min(reach, chip.start))
        if claim is None or reach < chip.floor or _has_words(text, since, chip.start):
            claim = _claim_span(sentences, chip.start, since)
        if _has_words(text, *claim):
            spans.append((claim[0], claim[1], chip.citation))
        reach = max(reach, chip.end)
    return spans


def _listed_by_markers(parts: Sequence[Part]) -> bool:
    """Whether the answer's ``[n]`` markers place its citations: one text part, every ``url_citation`` without a
    position, and markers in the text that all fall within the list (numbered in order, as Sonar's are; a marker
    past the list shows the list is not what the markers count)."""
    if len(parts) != 1 or not parts[0].annotations or any(a.start is not None for a in parts[0].annotations):
        return False
    numbers = [int(match.group(1)) for match in MARKER.finditer(parts[0].text)]
    return bool(numbers) and all(1 <= number <= len(parts[0].annotations) for number in numbers)


def _by_markers(part: Part) -> tuple[str, list[ParsedCitation], tuple[ClaimCandidate, ...], int]:
    """Citations placed by the ``[n]`` markers: marker ``n`` cites annotation ``n``; annotations no marker names
    stay answer-level. Also returns how many citations the markers placed."""
    entries = [(annotation.url, annotation.title) for annotation in part.annotations]
    citations, claims, referenced = cite_markers(part.text, numbered(entries))
    placed = len(citations)
    for number, annotation in enumerate(part.annotations, start=1):
        if number not in referenced:
            citations.append(ParsedCitation(annotation.url, annotation.title, quote=annotation.quote))
    citations.extend(ParsedCitation(None, file.filename, document=file.file_id) for file in part.files)
    return part.text, citations, claims, placed


def cited(parts: Sequence[Part], source: str) -> tuple[str, list[ParsedCitation], tuple[ClaimCandidate, ...], int]:
    """The joined answer text, its cited (and dangling) citations, their claim candidates, and how many citations
    without a position the answer's ``[n]`` markers placed."""
    if _listed_by_markers(parts):
        return _by_markers(parts[0])
    text = "".join(part.text for part in parts)
    citations: list[ParsedCitation] = []
    chips: list[_Chip] = []
    offset = 0
    taken: set[int] = set()
    for part in parts:
        for annotation in part.annotations:
            if annotation.start is None:
                located = _markdown_chip(part.text, annotation.url, taken)
                if located is None:
                    # No position and no chip written for it: cited by the answer as a whole, no claim edge.
                    citations.append(ParsedCitation(annotation.url, annotation.title, quote=annotation.quote))
                    continue
                first, last = located
            else:
                first, last = _locate(part.text, annotation, source)
            taken.add(first)
            start, end = first + offset, last + offset
            kind = CitationKind.CITED if annotation.url or annotation.title else CitationKind.DANGLING
            citations.append(
                ParsedCitation(
                    url=annotation.url,
                    title=annotation.title,
                    marker=text[start:end] or None,
                    kind=kind,
                    start=start,
                    end=end,
                    quote=annotation.quote,
                )
            )
            chips.append(_Chip(start, end, offset, len(citations) - 1))
        for file in part.files:
            # An uploaded file: a document source of its own kind, cited by the answer as a whole (its ``index``
            # is a point where a chip would go, written nowhere in the text).
            citations.append(ParsedCitation(None, file.filename, document=file.file_id))
        offset += len(part.text)
    return text, citations, candidates(text, _claim_spans(text, chips)), 0
