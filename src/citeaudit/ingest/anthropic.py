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

``web_search_tool_result`` blocks (``web_search_result`` entries) and ``web_fetch_tool_result`` blocks (the
fetched ``url`` of a ``web_fetch_result``, both versions of the web fetch tool) give the retrieved set (each URL
once, URLs also cited left out, compared by normalized URL) and the retrieval status: ``used`` when any search
or fetch returned something, ``failed`` when they returned only error objects (``web_search_tool_result_error``,
``web_fetch_tool_error``), ``unknown`` when one was issued (``server_tool_use``) but no result is in the payload,
``not_used`` when the model neither searched nor fetched. ``server_tool_use`` inputs of the ``web_search`` tool
give the queries. Content blocks and citation types this reader does not know are noted: the answer counts as
partly understood in the import summary.

Answer status: ``stop_reason`` ``max_tokens`` or ``model_context_window_exceeded`` leave the answer incomplete;
``refusal`` is a complete answer recorded as it is. A response that stopped with ``pause_turn`` and the response
after it in the same payload (the answer to the continuation request; ``citeaudit ingest`` given the two files in
order makes them one payload) are one answer, their text, citations, queries and results read in order; a paused
turn with nothing after it is incomplete. A body of ``"type": "error"`` is a failed answer. A top-level
``question_id`` / ``answer_id`` string (added by whoever collected the payload) is passed on.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from citeaudit.core.errors import InvalidValue
from citeaudit.core.limits import shown
from citeaudit.core.model import AnswerStatus, CitationKind, RetrievalStatus
from citeaudit.ingest.base import CUT_OFF, ParsedAnswer, ParsedCitation, Reader
from citeaudit.ingest.payload import cut_short, expect, load_responses, retrieved_only
from citeaudit.ingest.shape import Shape, shape_of
from citeaudit.ingest.text import candidates, trim_span

__all__ = ["READER", "can_read", "read_answers"]

_OPTIONAL_TEXT = (str, type(None))
_INCOMPLETE_STOP = frozenset({"max_tokens", "pause_turn", "model_context_window_exceeded"})
_DOCUMENT_LOCATIONS = frozenset({"char_location", "page_location", "content_block_location"})
_RETRIEVAL_TOOLS = frozenset({"web_search", "web_fetch"})
_FETCH_ERRORS = frozenset({"web_fetch_tool_error", "web_fetch_tool_result_error"})
_IGNORED_BLOCKS = frozenset(
    {
        # reasoning and tool traffic that holds neither answer text nor web sources
        "thinking",
        "redacted_thinking",
        "tool_use",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "mcp_tool_use",
        "mcp_tool_result",
        "container_upload",
    }
)


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
    error_codes: dict[str, list[str]] = field(default_factory=dict)
    """Error codes by the type of error object (``web_search_tool_result_error``, ``web_fetch_tool_error``)."""
    notes: list[str] = field(default_factory=list)
    """What was seen but not understood (unknown block or citation types)."""

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
        return "; ".join(f"{kind}: {', '.join(dict.fromkeys(codes))}" for kind, codes in reading.error_codes.items())
    if status is RetrievalStatus.UNKNOWN:
        return "a search or fetch was issued (server_tool_use) but no result is in the payload"
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


def _note(reading: _Reading, what: str) -> None:
    if what not in reading.notes:
        reading.notes.append(what)


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
            _note(reading, f"citation type {raw.get('type')!r} names no source this reader knows")
            continue
        reading.citations.append(cited)
        reading.spans.append((start + claim_start, start + claim_end, len(reading.citations) - 1))


def _tool_use(block: dict[str, Any], source: str, where: str, reading: _Reading) -> None:
    if block.get("name") not in _RETRIEVAL_TOOLS:
        return
    reading.searches += 1
    if block.get("name") != "web_search":
        return
    tool_input = expect(block.get("input") or {}, dict, source, f"{where}.input")
    query = expect(tool_input.get("query"), _OPTIONAL_TEXT, source, f"{where}.input.query")
    if query:
        reading.queries.append(query)


def _fetch_result(block: dict[str, Any], source: str, where: str, reading: _Reading) -> None:
    """A ``web_fetch_tool_result``: the fetched page is retrieved (cited only where a text block cites it)."""
    content = expect(block.get("content"), dict, source, f"{where}.content")
    kind = expect(content.get("type"), _OPTIONAL_TEXT, source, f"{where}.content.type")
    if kind in _FETCH_ERRORS:
        reading.errors += 1
        code = content.get("error_code")
        reading.error_codes.setdefault(kind, []).append(code if isinstance(code, str) and code else "unspecified")
        return
    if kind != "web_fetch_result":
        _note(reading, f"web_fetch_tool_result content of type {kind!r}")
        return
    reading.answered += 1
    url = expect(content.get("url"), _OPTIONAL_TEXT, source, f"{where}.content.url")
    document = content.get("content")
    title = document.get("title") if isinstance(document, dict) else None
    title = expect(title, _OPTIONAL_TEXT, source, f"{where}.content.content.title")
    if url:
        reading.results.append(ParsedCitation(url=url, title=title or None, kind=CitationKind.RETRIEVED))


def _search_result(block: dict[str, Any], source: str, where: str, reading: _Reading) -> None:
    content = expect(block.get("content"), (list, dict), source, f"{where}.content")
    if isinstance(content, dict):
        # An error object instead of results: the search failed, which is not the same as citing nothing.
        if content.get("type") == "web_search_tool_result_error":
            reading.errors += 1
            code = content.get("error_code")
            codes = reading.error_codes.setdefault("web_search_tool_result_error", [])
            codes.append(code if isinstance(code, str) and code else "unspecified")
        return
    reading.answered += 1
    for i, raw in enumerate(content):
        at = f"{where}.content[{i}]"
        result = expect(raw, dict, source, at)
        kind = result.get("type")
        if kind != "web_search_result":
            # A result of a kind not known yet is not read, and the answer says so (partly understood).
            _note(reading, f"web_search_tool_result entry of type {shown(kind, 40)}")
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


def _read_content(body: dict[str, Any], source: str, location: str, reading: _Reading) -> None:
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
        elif kind == "web_fetch_tool_result":
            _fetch_result(block, source, where, reading)
        elif kind not in _IGNORED_BLOCKS:
            _note(reading, f"content block of type {kind!r}")


def _read_message(turns: list[tuple[str, Any]], source: str) -> ParsedAnswer:
    """One answer from one message, or from a paused turn and its continuation(s) (``turns`` in order): their
    content is read as one message; status, model and ids are those of the last."""
    reading = _Reading()
    bodies = [(location, expect(payload, dict, source, location)) for location, payload in turns]
    location, body = bodies[-1]
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
    for where, turn in bodies:
        _read_content(turn, source, where, reading)
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
        notes=tuple(reading.notes),
    )


def _paused(payload: Any) -> bool:
    return isinstance(payload, dict) and payload.get("type") == "message" and payload.get("stop_reason") == "pause_turn"


def read_answers(data: bytes, source: str) -> Iterator[ParsedAnswer]:
    """One answer per Messages API payload (one JSON document, a JSON list or JSON Lines).

    A response that stopped with ``stop_reason: pause_turn`` and the response right after it (the answer to the
    continuation request, which sends the paused turn back) are one answer; a paused turn with nothing after it
    is an incomplete answer. A saved event stream gives the messages it holds (a paused turn and its continuation
    streamed into one file are one answer too).
    """
    turns: list[tuple[str, Any]] = []
    for location, payload, cut in load_responses(data, source, "anthropic"):
        turns.append((location, payload))
        if cut is not None or not _paused(payload):
            yield cut_short(_read_message(turns, source), cut)
            turns = []
    if turns:
        yield _read_message(turns, source)


_BLOCK_TYPES = frozenset(
    {
        "text",
        "thinking",
        "redacted_thinking",
        "tool_use",
        "server_tool_use",
        "web_search_tool_result",
        "web_fetch_tool_result",
    }
)
_OTHER_SHAPE = frozenset({"object", "choices", "output", "candidates"})


def can_read(content: bytes | Shape) -> bool:
    """A Messages API object: ``"type": "message"`` at the top with an Anthropic trait (a ``stop_reason`` key, a
    ``claude`` model or Anthropic content block types), none of OpenAI's ``object``/``choices``/``output`` keys
    and no ``output_text`` part (a Responses ``message`` item looks alike); or a saved event stream, which starts
    with ``message_start``."""
    shape = shape_of(content)
    if shape.value_is("type", "message_start") and shape.value_is("message.type", "message"):
        return True  # a saved event stream
    if not shape.value_is("type", "message") or shape.fields() & _OTHER_SHAPE:
        return False
    if shape.value_is("content[].type", "output_text"):
        return False
    claude = any(model.startswith("claude") for model in shape.values("model"))
    return shape.has("stop_reason") or claude or bool(shape.values("content[].type") & _BLOCK_TYPES)


_SSE = "Server-Sent Events as sent (data: lines, event: names, [DONE]) or one event's JSON per line"

READER = Reader(
    name="anthropic",
    description="Anthropic Messages API with web search (cited text blocks, web_search_tool_result)",
    can_read=can_read,
    read_answers=read_answers,
    reads=(
        "Messages API responses (anthropic-version 2023-06-01): web_search_20250305 results and errors, "
        "web_fetch_20250910 and web_fetch_20260209 results and errors, text-block citations "
        "(web_search_result_location, search_result_location, char/page/content_block locations); a pause_turn "
        "response and its continuation as one answer; the SDK's sorted-key dumps and reassembled streams"
    ),
    positionless="none occur: every citation is located at the text block that carries it",
    streams=(
        "Messages streams: message_start, content_block_start/_delta (text_delta, citations_delta, input_json_delta "
        "of server_tool_use, thinking_delta)/_stop, message_delta, message_stop; a pause_turn stream and its "
        f"continuation as one answer; {_SSE}"
    ),
)
