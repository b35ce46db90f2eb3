"""Readers for OpenAI web-search answers: the Responses API (``openai-responses``) and the Chat Completions
search models such as ``gpt-4o-search-preview`` (``openai-chat``).

Both shapes cite with ``url_citation`` annotations whose ``start_index``/``end_index`` locate the inline
citation *chip* (usually a markdown link such as ``([host](url))``), not the claim the chip supports. The claim
is the text before the chip, back to the start of its sentence or to the end of the previous chip when that is
later (as :func:`~citeaudit.ingest.text.span_before`), starting at its first word (a joining comma or a list
marker is left out). A chip with only white space, punctuation or other chips between it and the previous chip
closes the same claim, so repeated chips make one claim candidate that keeps every citation.

Offsets are read as code-point indices (Python ``str`` indices) into the text they belong to. The unit is not
documented, so every chip is checked: the slice has to look like a chip (it opens with ``(``/``[``/``【`` and
closes with ``)``/``]``/``】``, or it has no brackets and names the cited host or the title). If it does not and
the text has characters outside the Basic Multilingual Plane, the offsets are read again as UTF-16 code units;
a slice that still does not look like a chip refuses the file, naming the annotation. A zero-width annotation is
taken as a point with no chip.

Responses: the answer text is every ``output_text`` part (and ``refusal`` part) of every ``message`` item,
joined with ``""`` in output order; annotation offsets are shifted by the part's position in the joined text,
and a claim never reaches back into an earlier part. ``web_search_call`` items give the queries
(``action.queries``, else the older ``action.query``), the retrieval status and the retrieved set
(``action.sources`` and the page of ``open_page``/``find_in_page`` actions). Retrieved URLs that are also cited
are left out of the retrieved set (compared by normalized URL), and each retrieved URL is listed once.

Chat Completions: one answer per entry of ``choices``; the text is ``message.content`` (``message.refusal`` when
the content is null). Retrieval is ``used`` when the choice has ``url_citation`` annotations and ``unknown``
otherwise (the payload does not say whether a search ran). ``finish_reason`` ``length`` or ``content_filter``
make the answer incomplete. A body that is only an ``error`` object is a failed answer.

A ``url_citation`` without ``start_index``/``end_index`` (xAI's Responses-compatible API) or at ``0/0``
(OpenRouter writes that for every one) has no position. When every annotation of a one-part answer lacks one and
the text has ``[n]`` markers that all fall within the list (OpenRouter's Perplexity Sonar: the list is Sonar's, in
order), the markers place them, as for Sonar itself: marker ``n`` cites annotation ``n``, its claim the sentence it
closes; annotations no marker names stay answer-level. Otherwise it is located at a markdown link to its URL when
the text has one, and is an answer-level citation (cited, no claim) when it has none. ``file_citation`` annotations and
``file_search_call`` results are document sources (``document:<file id>``): a cited file is answer-level (its
``index`` is a point where no chip is written), files only searched are retrieved, and a completed file search
makes retrieval ``used``. ``file_path`` and ``container_file_citation`` cite no source and are skipped; other
annotation, content part and output item types are noted (the answer is partly understood). A ``url_citation``
without URL or title is a dangling citation. A top-level ``question_id`` / ``answer_id`` string (added by whoever
collected the payload, e.g. in JSON Lines) is passed on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from citeaudit.core.errors import InvalidValue, MalformedInput
from citeaudit.core.identity import host_of
from citeaudit.core.limits import load_json
from citeaudit.core.model import AnswerStatus, CitationKind, RetrievalStatus
from citeaudit.ingest.base import ANSWER_LEVEL, CUT_OFF, ClaimCandidate, ParsedAnswer, ParsedCitation, Reader
from citeaudit.ingest.markers import cite_markers, numbered
from citeaudit.ingest.payload import (
    agent_response,
    cut_short,
    expect,
    load_responses,
    retrieved_only,
    sonar_traits,
    vendor_model,
)
from citeaudit.ingest.shape import Shape, shape_of
from citeaudit.ingest.text import MARKER, SentenceIndex, candidates, claim_text, trim_span

__all__ = ["CHAT_READER", "RESPONSES_READER", "can_read_chat", "can_read_responses", "read_chat", "read_responses"]

_OPTIONAL_TEXT = (str, type(None))
_OPENERS = "([【"
_CLOSERS = ")]】"
_LEAD = re.compile(r"(?:\s|[,;:]|[-*•·](?=\s)|\d{1,3}[.)](?=\s))+")
"""White space, clause punctuation and list markers before a claim's first word."""


def _at(location: str, path: str) -> str:
    """The JSON path ``path`` inside the payload found at ``location`` (``$``, ``[i]`` or ``line N``)."""
    if not path:
        return location
    if location == "$":
        return path
    if location.startswith("["):
        return location + (path if path.startswith("[") else f".{path}")
    return f"{location}: {path}"


# -- annotations and chips ---------------------------------------------------------------------------------


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
class _Part:
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
    url = expect(entry.get("url"), _OPTIONAL_TEXT, source, f"{where}.url")
    title = expect(entry.get("title"), _OPTIONAL_TEXT, source, f"{where}.title")
    quote = expect(entry.get("content"), _OPTIONAL_TEXT, source, f"{where}.content")
    return _Annotation(start, end, url or None, title or None, where, quote or None)


_IGNORED_ANNOTATIONS = frozenset({"file_path", "container_file_citation"})
"""Annotation types that cite no source (a file the model wrote, a file in a code container)."""


def _part(text: str, raw: Any, source: str, where: str) -> _Part:
    """A text part with its ``url_citation`` and ``file_citation`` annotations; other types are noted."""
    if raw is None:
        return _Part(text)
    annotations: list[_Annotation] = []
    files: list[_FileCitation] = []
    unknown: list[str] = []
    for i, item in enumerate(expect(raw, list, source, where)):
        at = f"{where}[{i}]"
        entry = expect(item, dict, source, at)
        kind = expect(entry.get("type"), _OPTIONAL_TEXT, source, f"{at}.type")
        if kind == "url_citation":
            annotations.append(_annotation(entry, source, at))
        elif kind == "file_citation":
            file_id = expect(entry.get("file_id"), str, source, f"{at}.file_id")
            filename = expect(entry.get("filename"), _OPTIONAL_TEXT, source, f"{at}.filename")
            files.append(_FileCitation(file_id, filename or None))
        elif kind not in _IGNORED_ANNOTATIONS:
            unknown.append(f"annotation type {kind!r}")
    return _Part(text, tuple(annotations), tuple(files), tuple(unknown))


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


def _listed_by_markers(parts: Sequence[_Part]) -> bool:
    """Whether the answer's ``[n]`` markers place its citations: one text part, every ``url_citation`` without a
    position, and markers in the text that all fall within the list (numbered in order, as Sonar's are; a marker
    past the list shows the list is not what the markers count)."""
    if len(parts) != 1 or not parts[0].annotations or any(a.start is not None for a in parts[0].annotations):
        return False
    numbers = [int(match.group(1)) for match in MARKER.finditer(parts[0].text)]
    return bool(numbers) and all(1 <= number <= len(parts[0].annotations) for number in numbers)


def _by_markers(part: _Part) -> tuple[str, list[ParsedCitation], tuple[ClaimCandidate, ...], int]:
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


def _cited(parts: Sequence[_Part], source: str) -> tuple[str, list[ParsedCitation], tuple[ClaimCandidate, ...], int]:
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


def _payload_ids(body: dict[str, Any], source: str, location: str) -> tuple[str | None, str | None]:
    question = expect(body.get("question_id"), _OPTIONAL_TEXT, source, _at(location, "question_id"))
    answer = expect(body.get("answer_id"), _OPTIONAL_TEXT, source, _at(location, "answer_id"))
    return question or None, answer or None


def _error_text(error: Any) -> str | None:
    """``code: message`` of an error object (either part alone when the other is missing)."""
    if not isinstance(error, dict):
        return None
    parts = [str(error[name]) for name in ("code", "message") if error.get(name)]
    return ": ".join(parts) or None


# -- Responses API -----------------------------------------------------------------------------------------

_RESPONSE_STATUS = {
    "completed": AnswerStatus.COMPLETE,
    "incomplete": AnswerStatus.INCOMPLETE,
    "in_progress": AnswerStatus.INCOMPLETE,
    "queued": AnswerStatus.INCOMPLETE,
    "failed": AnswerStatus.FAILED,
    "cancelled": AnswerStatus.FAILED,
}


@dataclass(slots=True)
class _Searches:
    """What the ``web_search_call`` and ``file_search_call`` items of one response say."""

    statuses: list[str] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)
    files: list[ParsedCitation] = field(default_factory=list)
    """Files a ``file_search_call`` returned (when its results were included)."""

    def retrieval(self) -> RetrievalStatus:
        """Used when any search completed, failed when one failed, not used without any search call."""
        if not self.statuses:
            return RetrievalStatus.NOT_USED
        if "completed" in self.statuses:
            return RetrievalStatus.USED
        if "failed" in self.statuses:
            return RetrievalStatus.FAILED
        return RetrievalStatus.UNKNOWN


def _response_status(body: dict[str, Any], source: str, location: str) -> tuple[AnswerStatus, str | None]:
    status = expect(body.get("status"), _OPTIONAL_TEXT, source, _at(location, "status"))
    if status is None:
        return AnswerStatus.COMPLETE, None
    if status not in _RESPONSE_STATUS:
        raise InvalidValue(
            source,
            _at(location, "status"),
            f"unknown response status {status!r} (known: {', '.join(_RESPONSE_STATUS)})",
        )
    answer_status = _RESPONSE_STATUS[status]
    if answer_status is AnswerStatus.COMPLETE:
        return answer_status, None
    details = body.get("incomplete_details")
    reason = _error_text(body.get("error")) or (details.get("reason") if isinstance(details, dict) else None)
    return answer_status, str(reason) if reason else f"status {status!r}"


def _search_call(item: dict[str, Any], source: str, where: str, searches: _Searches) -> None:
    status = expect(item.get("status"), _OPTIONAL_TEXT, source, f"{where}.status")
    searches.statuses.append(status or "")
    if item.get("action") is None:
        _arguments_query(item, source, where, searches)
        return
    action = expect(item["action"], dict, source, f"{where}.action")
    queries = expect(action.get("queries") or [], list, source, f"{where}.action.queries")
    for i, query in enumerate(queries):
        searches.queries.append(expect(query, str, source, f"{where}.action.queries[{i}]"))
    if not queries and action.get("query"):
        searches.queries.append(expect(action["query"], str, source, f"{where}.action.query"))
    for i, raw in enumerate(expect(action.get("sources") or [], list, source, f"{where}.action.sources")):
        entry = expect(raw, dict, source, f"{where}.action.sources[{i}]")
        url = expect(entry.get("url"), _OPTIONAL_TEXT, source, f"{where}.action.sources[{i}].url")
        if url:
            searches.urls.append(url)
    page = expect(action.get("url"), _OPTIONAL_TEXT, source, f"{where}.action.url")
    if page:
        searches.urls.append(page)


def _arguments_query(item: dict[str, Any], source: str, where: str, searches: _Searches) -> None:
    """The query of a search call written as function-call ``arguments`` (xAI's Responses-compatible API)."""
    arguments = expect(item.get("arguments"), _OPTIONAL_TEXT, source, f"{where}.arguments")
    try:
        parsed = load_json(arguments, source, f"{where}.arguments") if arguments else None
    except MalformedInput as exc:
        if isinstance(exc.__cause__, json.JSONDecodeError):
            return  # not structured: nothing to read a query from, and nothing the answer depends on
        raise  # structured past the limits (nesting, numbers, keys): refused like any payload
    query = parsed.get("query") if isinstance(parsed, dict) else None
    if isinstance(query, str) and query:
        searches.queries.append(query)


def _searches_counted(body: dict[str, Any]) -> bool:
    """Whether ``usage.server_side_tool_usage_details`` (xAI) counts any search call."""
    usage = body.get("usage")
    details = usage.get("server_side_tool_usage_details") if isinstance(usage, dict) else None
    if not isinstance(details, dict):
        return False
    return any(
        name.endswith("search_calls") and isinstance(count, int) and count > 0 for name, count in details.items()
    )


def _file_search_call(item: dict[str, Any], source: str, where: str, searches: _Searches) -> None:
    """A ``file_search_call``: retrieval over uploaded files; its ``results`` (when included) are retrieved."""
    status = expect(item.get("status"), _OPTIONAL_TEXT, source, f"{where}.status")
    searches.statuses.append(status or "")
    for i, query in enumerate(expect(item.get("queries") or [], list, source, f"{where}.queries")):
        searches.queries.append(expect(query, str, source, f"{where}.queries[{i}]"))
    for i, raw in enumerate(expect(item.get("results") or [], list, source, f"{where}.results")):
        at = f"{where}.results[{i}]"
        entry = expect(raw, dict, source, at)
        file_id = expect(entry.get("file_id"), _OPTIONAL_TEXT, source, f"{at}.file_id")
        filename = expect(entry.get("filename"), _OPTIONAL_TEXT, source, f"{at}.filename")
        quote = expect(entry.get("text"), _OPTIONAL_TEXT, source, f"{at}.text")
        if file_id:
            searches.files.append(
                ParsedCitation(None, filename or None, kind=CitationKind.RETRIEVED, quote=quote, document=file_id)
            )


_IGNORED_ITEMS = frozenset(
    {
        # reasoning and tool traffic that holds neither answer text nor sources
        "reasoning",
        "function_call",
        "custom_tool_call",
        "code_interpreter_call",
        "image_generation_call",
        "computer_call",
        "local_shell_call",
        "mcp_call",
        "mcp_list_tools",
        "mcp_approval_request",
    }
)


def _message_parts(item: dict[str, Any], source: str, where: str) -> list[_Part]:
    if item.get("content") is None:
        return []
    parts = []
    for i, raw in enumerate(expect(item["content"], list, source, f"{where}.content")):
        at = f"{where}.content[{i}]"
        part = expect(raw, dict, source, at)
        if part.get("type") == "output_text":
            text = expect(part.get("text"), str, source, f"{at}.text")
            parts.append(_part(text, part.get("annotations"), source, f"{at}.annotations"))
        elif part.get("type") == "refusal":
            parts.append(_Part(expect(part.get("refusal"), str, source, f"{at}.refusal")))
        else:
            parts.append(_Part("", unknown=(f"message content part of type {part.get('type')!r}",)))
    return parts


def _read_response(payload: Any, source: str, location: str) -> ParsedAnswer:
    body = expect(payload, dict, source, location)
    status, failure = _response_status(body, source, location)
    # A response always carries its output list (empty when it failed): without one there is no answer to store.
    output = expect(body.get("output"), list, source, _at(location, "output"))
    parts: list[_Part] = []
    searches = _Searches()
    notes: list[str] = []
    for i, raw in enumerate(output):
        where = _at(location, f"output[{i}]")
        item = expect(raw, dict, source, where)
        kind = expect(item.get("type"), str, source, f"{where}.type")
        if kind == "message":
            parts.extend(_message_parts(item, source, where))
        elif kind in ("web_search_call", "x_search_call"):  # xAI searches X posts with the same kind of call
            _search_call(item, source, where, searches)
        elif kind == "file_search_call":
            _file_search_call(item, source, where, searches)
        elif kind.endswith("_search_call"):
            # a search tool not known yet: retrieval ran, though what it found is not read
            _search_call(item, source, where, searches)
            notes.append(f"output item of type {kind!r}")
        elif kind not in _IGNORED_ITEMS:
            notes.append(f"output item of type {kind!r}")
    notes.extend(note for part in parts for note in part.unknown)
    text, citations, claims, placed = _cited(parts, source)
    retrieval, reason = searches.retrieval(), None
    if retrieval is RetrievalStatus.NOT_USED and _searches_counted(body):
        # no search item in the output, but the usage counts searches (xAI): never read as "did not search"
        retrieval, reason = RetrievalStatus.UNKNOWN, "usage counts server-side searches, but no search call is listed"
    question_id, answer_id = _payload_ids(body, source, location)
    return ParsedAnswer(
        text=text,
        citations=(
            *citations,
            *retrieved_only(
                (
                    *(ParsedCitation(url=url, kind=CitationKind.RETRIEVED) for url in searches.urls),
                    *searches.files,
                ),
                citations,
            ),
        ),
        claims=claims,
        status=status,
        failure=failure,
        retrieval=retrieval,
        retrieval_reason=reason,
        model=expect(body.get("model"), _OPTIONAL_TEXT, source, _at(location, "model")),
        question_id=question_id,
        answer_id=answer_id,
        queries=tuple(dict.fromkeys(searches.queries)),
        notes=tuple(dict.fromkeys(notes)),
        placed_by_markers=placed,
    )


def read_responses(data: bytes, source: str) -> Iterator[ParsedAnswer]:
    """One answer per Responses API payload (one JSON document, a JSON list or JSON Lines), or per response of
    a saved event stream."""
    return (
        cut_short(_read_response(payload, source, location), cut)
        for location, payload, cut in load_responses(data, source, "openai-responses")
    )


def can_read_responses(content: bytes | Shape) -> bool:
    """A Responses API object (``"object": "response"``, or an ``output`` list holding an ``output_text``
    message) or a saved stream of its events (``response.created`` …), but not a Perplexity Agent API response,
    which has the same envelope but ``search_results`` items and ``vendor/model`` model names (OpenAI's own model
    names have no slash)."""
    shape = shape_of(content)
    if any(kind.startswith("response.") for kind in shape.values("type")):
        return not any("/" in model for model in shape.values("response.model"))
    if agent_response(shape) or vendor_model(shape):
        return False
    if shape.value_is("object", "response"):
        return True
    return shape.value_is("output[].type", "message") and shape.value_is("output[].content[].type", "output_text")


# -- Chat Completions --------------------------------------------------------------------------------------

_INCOMPLETE_FINISH = frozenset({"length", "content_filter"})


def _choice_text(message: dict[str, Any], source: str, where: str) -> str:
    name = "content" if message.get("content") is not None else "refusal"
    value = message.get(name)
    return "" if value is None else str(expect(value, str, source, f"{where}.message.{name}"))


def _read_choice(raw: Any, source: str, where: str) -> ParsedAnswer:
    choice = expect(raw, dict, source, where)
    message = expect(choice.get("message"), dict, source, f"{where}.message")
    part = _part(
        _choice_text(message, source, where), message.get("annotations"), source, f"{where}.message.annotations"
    )
    text, citations, claims, placed = _cited([part], source)
    finish = expect(choice.get("finish_reason"), _OPTIONAL_TEXT, source, f"{where}.finish_reason")
    incomplete = finish in _INCOMPLETE_FINISH
    return ParsedAnswer(
        text=text,
        citations=tuple(citations),
        claims=claims,
        status=AnswerStatus.INCOMPLETE if incomplete else AnswerStatus.COMPLETE,
        failure=(CUT_OFF if finish == "length" else "{reason}").format(reason=f"finish_reason {finish!r}")
        if incomplete
        else None,
        retrieval=RetrievalStatus.USED if part.annotations or part.files else RetrievalStatus.UNKNOWN,
        notes=tuple(dict.fromkeys(part.unknown)),
        placed_by_markers=placed,
    )


def _read_completion(payload: Any, source: str, location: str) -> list[ParsedAnswer]:
    body = expect(payload, dict, source, location)
    model = expect(body.get("model"), _OPTIONAL_TEXT, source, _at(location, "model"))
    question_id, answer_id = _payload_ids(body, source, location)
    if body.get("choices") is None and isinstance(body.get("error"), dict):
        failure = _error_text(body["error"]) or "error"
        return [
            ParsedAnswer(
                "",
                status=AnswerStatus.FAILED,
                failure=failure,
                model=model,
                question_id=question_id,
                answer_id=answer_id,
            )
        ]
    choices = expect(body.get("choices"), list, source, _at(location, "choices"))
    answers = []
    for i, raw in enumerate(choices):
        parsed = _read_choice(raw, source, _at(location, f"choices[{i}]"))
        own_id = answer_id if answer_id is None or len(choices) == 1 else f"{answer_id}-{i}"
        answers.append(replace(parsed, model=model, question_id=question_id, answer_id=own_id))
    return answers


def read_chat(data: bytes, source: str) -> Iterator[ParsedAnswer]:
    """One answer per choice of every Chat Completions payload (one JSON document, a JSON list or JSON Lines), or
    of every completion of a saved event stream."""
    return (
        cut_short(answer, cut)
        for location, payload, cut in load_responses(data, source, "openai-chat")
        for answer in _read_completion(payload, source, location)
    )


_PERPLEXITY_KEYS = frozenset({"search_results", "citations"})


def can_read_chat(content: bytes | Shape) -> bool:
    """A ``chat.completion`` object with ``url_citation`` annotations or from a ``gpt-…search…`` model, or a saved
    stream of ``chat.completion.chunk`` events, but not Perplexity Sonar (same envelope, with top-level
    ``search_results`` / ``citations`` or Sonar's own traits)."""
    shape = shape_of(content)
    if shape.value_is("object", "chat.completion.chunk"):
        return not (shape.fields() & _PERPLEXITY_KEYS or sonar_traits(shape))
    if not shape.value_is("object", "chat.completion") or shape.fields() & _PERPLEXITY_KEYS or sonar_traits(shape):
        return False
    if shape.value_is("choices[].message.annotations[].type", "url_citation"):
        return True
    return any(model.startswith("gpt-") and "search" in model for model in shape.values("model"))


_SSE = "Server-Sent Events as sent (data: lines, event: names, [DONE]) or one event's JSON per line"

RESPONSES_READER = Reader(
    name="openai-responses",
    description="OpenAI Responses API with web search (url_citation annotations, web_search_call sources)",
    can_read=can_read_responses,
    read_answers=read_responses,
    reads=(
        "Responses API responses of OpenAI and of Responses-compatible APIs (xAI): message output_text and "
        "refusal parts, flat url_citation and file_citation annotations, web_search_call (search, open_page, "
        "find_in_page; action.sources; xAI's arguments) and file_search_call (queries, results) items"
    ),
    streams=(
        "Responses streams of OpenAI, Azure OpenAI and xAI: response.created, response.output_item.added/done, "
        "response.content_part.added/done, response.output_text.delta/done, "
        "response.output_text.annotation.added, response.completed/incomplete/failed; "
        f"{_SSE}"
    ),
    positionless=(
        "url_citation without start_index/end_index (xAI) or at 0/0 (OpenRouter), and file_citation (a document "
        f"source): {ANSWER_LEVEL}; a markdown link to the cited URL written in the text is taken as its chip"
    ),
)

CHAT_READER = Reader(
    name="openai-chat",
    description="OpenAI Chat Completions search models (nested url_citation annotations)",
    can_read=can_read_chat,
    read_answers=read_chat,
    reads=(
        "Chat Completions search models (gpt-4o-search-preview, gpt-5-search-api) and OpenAI-compatible gateways "
        "(OpenRouter): nested url_citation annotations, one answer per choice"
    ),
    streams=(
        "Chat Completions streams: chat.completion.chunk, delta.content joined and delta.annotations appended per "
        f"choice, the last finish_reason; {_SSE}"
    ),
    positionless=(
        "url_citation without start_index/end_index or at 0/0 (OpenRouter): placed by the text's [n] markers when "
        "every annotation lacks a position and the markers all fall within the list (OpenRouter's Perplexity Sonar: "
        "marker n cites annotation n; the summary counts them); otherwise a markdown link to the cited URL written "
        f"in the text is taken as its chip, and without one it is {ANSWER_LEVEL}"
    ),
)
