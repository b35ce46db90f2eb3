"""Reader for Anthropic Messages API answers with the web search tool (``anthropic``).

The answer text is every ``text`` block joined with ``""`` in content order, the model's lead-in before a search
included. The model splits its answer so that a cited claim is a text block of its own: each block with
``citations`` is one claim candidate spanning the block (surrounding white space trimmed), and every citation's
location is the whole block, untrimmed, since Anthropic writes no markers (``marker`` is ``None``).
``cited_text`` is kept as the citation's quote.

Citation types: ``web_search_result_location`` (``url``, ``title``, ``cited_text``), ``search_result_location``
(``source`` as the URL) and the document locations ``char_location`` / ``page_location`` /
``content_block_location`` (title-only: ``document_title``, else ``document N``). A web citation with neither URL
nor title is dangling; other citation types name no source and are skipped.

``web_search_tool_result`` blocks give the retrieved set (``web_search_result`` entries; each URL once, URLs
also cited left out, compared by normalized URL) and the retrieval status: ``used`` when any search returned
results, ``failed`` when the searches returned only ``web_search_tool_result_error`` objects, ``unknown`` when
a search was issued (``server_tool_use``) but no result is in the payload, ``not_used`` when the model did not
search. ``server_tool_use`` inputs of the ``web_search`` tool give the queries.

Answer status: ``stop_reason`` ``max_tokens``, ``pause_turn`` or ``model_context_window_exceeded`` leave the
answer incomplete; ``refusal`` is a complete answer recorded as it is. A body of ``"type": "error"`` is a failed
answer. A top-level ``question_id`` / ``answer_id`` string (added by whoever collected the payload) is passed on.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from citeaudit.errors import InvalidValue
from citeaudit.ingest.base import CUT_OFF, ParsedAnswer, ParsedCitation, Reader
from citeaudit.ingest.payload import expect, load_payloads, retrieved_only
from citeaudit.ingest.text import candidates, trim_span
from citeaudit.limits import shown
from citeaudit.model import AnswerStatus, CitationKind, RetrievalStatus

__all__ = ["READER", "can_read", "read_answers"]

_OPTIONAL_TEXT = (str, type(None))
_INCOMPLETE_STOP = frozenset({"max_tokens", "pause_turn", "model_context_window_exceeded"})
_DOCUMENT_LOCATIONS = frozenset({"char_location", "page_location", "content_block_location"})


def _at(location: str, path: str) -> str:
    """The JSON path ``path`` inside the payload found at ``location`` (``$``, ``[i]`` or ``line N``)."""
    if not path:
        return location
    if location == "$":
        return path
    if location.startswith("["):
        return location + (path if path.startswith("[") else f".{path}")
    return f"{location}: {path}"


@dataclass(slots=True)
class _Reading:
    """What the content blocks of one message say, gathered in order."""

    pieces: list[str] = field(default_factory=list)
    length: int = 0
    citations: list[ParsedCitation] = field(default_factory=list)
    spans: list[tuple[int, int, int]] = field(default_factory=list)
    """``(claim start, claim end, citation index)``."""
    queries: list[str] = field(default_factory=list)
    results: list[ParsedCitation] = field(default_factory=list)
    searches: int = 0
    answered: int = 0
    errors: int = 0
    error_codes: list[str] = field(default_factory=list)

    def retrieval(self) -> RetrievalStatus:
        """Used when any search returned results, failed when searches returned only errors."""
        if self.answered:
            return RetrievalStatus.USED
        if self.errors:
            return RetrievalStatus.FAILED
        if self.searches:
            return RetrievalStatus.UNKNOWN
        return RetrievalStatus.NOT_USED


def _retrieval_reason(reading: _Reading) -> str | None:
    status = reading.retrieval()
    if status is RetrievalStatus.FAILED:
        return "web_search_tool_result_error: " + ", ".join(dict.fromkeys(reading.error_codes))
    if status is RetrievalStatus.UNKNOWN:
        return "a search was issued (server_tool_use) but no result is in the payload"
    return None


def _citation(raw: Any, start: int, end: int, source: str, where: str) -> ParsedCitation | None:
    """The citation of one ``citations[]`` entry located at the block span; ``None`` for types naming no source."""
    entry = expect(raw, dict, source, where)
    kind = expect(entry.get("type"), _OPTIONAL_TEXT, source, f"{where}.type")
    quote = expect(entry.get("cited_text"), _OPTIONAL_TEXT, source, f"{where}.cited_text")
    title = expect(entry.get("title"), _OPTIONAL_TEXT, source, f"{where}.title")
    if kind in ("web_search_result_location", "search_result_location"):
        name = "url" if kind == "web_search_result_location" else "source"
        url = expect(entry.get(name), _OPTIONAL_TEXT, source, f"{where}.{name}") or None
        cited = CitationKind.CITED if url or title else CitationKind.DANGLING
        return ParsedCitation(url=url, title=title or None, kind=cited, start=start, end=end, quote=quote)
    if kind in _DOCUMENT_LOCATIONS:
        document = expect(entry.get("document_title"), _OPTIONAL_TEXT, source, f"{where}.document_title")
        label = document or f"document {entry.get('document_index', '?')}"
        return ParsedCitation(url=None, title=label, start=start, end=end, quote=quote)
    return None


def _text_block(block: dict[str, Any], source: str, where: str, reading: _Reading) -> None:
    text = expect(block.get("text"), str, source, f"{where}.text")
    start = reading.length
    reading.pieces.append(text)
    reading.length += len(text)
    if block.get("citations") is None:
        return
    entries = expect(block["citations"], list, source, f"{where}.citations")
    claim_start, claim_end = trim_span(text, 0, len(text))
    for i, raw in enumerate(entries):
        cited = _citation(raw, start, reading.length, source, f"{where}.citations[{i}]")
        if cited is None:
            continue
        reading.citations.append(cited)
        reading.spans.append((start + claim_start, start + claim_end, len(reading.citations) - 1))


def _tool_use(block: dict[str, Any], source: str, where: str, reading: _Reading) -> None:
    if block.get("name") != "web_search":
        return
    reading.searches += 1
    tool_input = expect(block.get("input") or {}, dict, source, f"{where}.input")
    query = expect(tool_input.get("query"), _OPTIONAL_TEXT, source, f"{where}.input.query")
    if query:
        reading.queries.append(query)


def _search_result(block: dict[str, Any], source: str, where: str, reading: _Reading) -> None:
    content = expect(block.get("content"), (list, dict), source, f"{where}.content")
    if isinstance(content, dict):
        # An error object instead of results: the search failed, which is not the same as citing nothing.
        if content.get("type") == "web_search_tool_result_error":
            reading.errors += 1
            code = content.get("error_code")
            reading.error_codes.append(code if isinstance(code, str) and code else "unspecified")
        return
    reading.answered += 1
    for i, raw in enumerate(content):
        at = f"{where}.content[{i}]"
        result = expect(raw, dict, source, at)
        if result.get("type") != "web_search_result":
            continue
        url = expect(result.get("url"), _OPTIONAL_TEXT, source, f"{at}.url")
        title = expect(result.get("title"), _OPTIONAL_TEXT, source, f"{at}.title")
        if url:
            reading.results.append(ParsedCitation(url=url, title=title or None, kind=CitationKind.RETRIEVED))


def _status(body: dict[str, Any], source: str, location: str) -> tuple[AnswerStatus, str | None]:
    stop = expect(body.get("stop_reason"), _OPTIONAL_TEXT, source, _at(location, "stop_reason"))
    if stop in _INCOMPLETE_STOP:
        reason = f"stop_reason {stop!r}"
        return AnswerStatus.INCOMPLETE, CUT_OFF.format(reason=reason) if stop == "max_tokens" else reason
    return AnswerStatus.COMPLETE, None


def _failure(body: dict[str, Any]) -> str:
    """``type: message`` of an error body."""
    error = body.get("error")
    details = error if isinstance(error, dict) else {}
    return ": ".join(str(details[name]) for name in ("type", "message") if details.get(name)) or "error"


def _read_message(payload: Any, source: str, location: str) -> ParsedAnswer:
    body = expect(payload, dict, source, location)
    question_id = expect(body.get("question_id"), _OPTIONAL_TEXT, source, _at(location, "question_id")) or None
    answer_id = expect(body.get("answer_id"), _OPTIONAL_TEXT, source, _at(location, "answer_id")) or None
    model = expect(body.get("model"), _OPTIONAL_TEXT, source, _at(location, "model"))
    kind = body.get("type")
    if kind not in ("message", "error"):
        # Every Messages API body says what it is; anything else would be stored as an empty answer.
        raise InvalidValue(source, _at(location, "type"), f"expected 'message' or 'error' (got {shown(kind)})")
    if kind == "error":
        return ParsedAnswer(
            "",
            status=AnswerStatus.FAILED,
            failure=_failure(body),
            model=model,
            question_id=question_id,
            answer_id=answer_id,
        )
    reading = _Reading()
    content = [] if body.get("content") is None else expect(body["content"], list, source, _at(location, "content"))
    for i, raw in enumerate(content):
        where = _at(location, f"content[{i}]")
        block = expect(raw, dict, source, where)
        kind = expect(block.get("type"), _OPTIONAL_TEXT, source, f"{where}.type")
        if kind == "text":
            _text_block(block, source, where, reading)
        elif kind == "server_tool_use":
            _tool_use(block, source, where, reading)
        elif kind == "web_search_tool_result":
            _search_result(block, source, where, reading)
    text = "".join(reading.pieces)
    status, failure = _status(body, source, location)
    return ParsedAnswer(
        text=text,
        citations=(*reading.citations, *retrieved_only(reading.results, reading.citations)),
        claims=candidates(text, reading.spans),
        status=status,
        failure=failure,
        retrieval=reading.retrieval(),
        retrieval_reason=_retrieval_reason(reading),
        model=model,
        question_id=question_id,
        answer_id=answer_id,
        queries=tuple(dict.fromkeys(reading.queries)),
    )


def read_answers(data: bytes, source: str) -> Iterator[ParsedAnswer]:
    """One answer per Messages API payload (one JSON document, a JSON list or JSON Lines)."""
    return (_read_message(payload, source, location) for location, payload in load_payloads(data, source))


_MESSAGE = re.compile(rb'"type"\s*:\s*"message"')
_ANTHROPIC_MARK = re.compile(
    rb'"(?:stop_reason|server_tool_use|web_search_tool_result|web_search_result_location)"'
    rb'|"model"\s*:\s*"[^"]*claude'
)
_OTHER_SHAPE = re.compile(rb'"object"\s*:|"output_text"|"choices"\s*:')


def can_read(head: bytes) -> bool:
    """A Messages API object (``"type": "message"`` with an Anthropic field such as ``stop_reason``,
    ``web_search_tool_result`` or a ``claude`` model), and none of OpenAI's ``object``/``output_text``/``choices``
    (a Responses ``message`` item looks alike)."""
    return bool(_MESSAGE.search(head) and _ANTHROPIC_MARK.search(head) and not _OTHER_SHAPE.search(head))


READER = Reader(
    name="anthropic",
    description="Anthropic Messages API with web search (cited text blocks, web_search_tool_result)",
    can_read=can_read,
    read_answers=read_answers,
)
