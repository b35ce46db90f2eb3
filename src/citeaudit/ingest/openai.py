"""Readers for OpenAI web-search answers: the Responses API (``openai-responses``) and the Chat Completions
search models such as ``gpt-4o-search-preview`` (``openai-chat``).

Both shapes cite with ``url_citation`` annotations that locate an inline citation chip, not the claim it
supports; ``citeaudit.ingest.url_citations`` finds each chip (checking the offsets' unit), the claim it closes,
and what to do with an annotation that has no position. This module reads everything else of the two payloads.

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

``file_search_call`` results are document sources (``document:<file id>``): files only searched are retrieved,
and a completed file search makes retrieval ``used``. Content part and output item types this reader does not
know are noted (the answer is partly understood). A top-level ``question_id`` / ``answer_id`` string (added by
whoever collected the payload, e.g. in JSON Lines) is passed on.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from citeaudit.core.errors import InvalidValue, MalformedInput
from citeaudit.core.limits import load_json
from citeaudit.core.model import AnswerStatus, CitationKind, RetrievalStatus
from citeaudit.ingest.base import ANSWER_LEVEL, CUT_OFF, ParsedAnswer, ParsedCitation, Reader
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
from citeaudit.ingest.url_citations import OPTIONAL_TEXT, Part, cited, read_part

__all__ = ["CHAT_READER", "RESPONSES_READER", "can_read_chat", "can_read_responses", "read_chat", "read_responses"]


def _at(location: str, path: str) -> str:
    """The JSON path ``path`` inside the payload found at ``location`` (``$``, ``[i]`` or ``line N``)."""
    if not path:
        return location
    if location == "$":
        return path
    if location.startswith("["):
        return location + (path if path.startswith("[") else f".{path}")
    return f"{location}: {path}"


def _payload_ids(body: dict[str, Any], source: str, location: str) -> tuple[str | None, str | None]:
    question = expect(body.get("question_id"), OPTIONAL_TEXT, source, _at(location, "question_id"))
    answer = expect(body.get("answer_id"), OPTIONAL_TEXT, source, _at(location, "answer_id"))
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
    status = expect(body.get("status"), OPTIONAL_TEXT, source, _at(location, "status"))
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
    status = expect(item.get("status"), OPTIONAL_TEXT, source, f"{where}.status")
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
        url = expect(entry.get("url"), OPTIONAL_TEXT, source, f"{where}.action.sources[{i}].url")
        if url:
            searches.urls.append(url)
    page = expect(action.get("url"), OPTIONAL_TEXT, source, f"{where}.action.url")
    if page:
        searches.urls.append(page)


def _arguments_query(item: dict[str, Any], source: str, where: str, searches: _Searches) -> None:
    """The query of a search call written as function-call ``arguments`` (xAI's Responses-compatible API)."""
    arguments = expect(item.get("arguments"), OPTIONAL_TEXT, source, f"{where}.arguments")
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
    status = expect(item.get("status"), OPTIONAL_TEXT, source, f"{where}.status")
    searches.statuses.append(status or "")
    for i, query in enumerate(expect(item.get("queries") or [], list, source, f"{where}.queries")):
        searches.queries.append(expect(query, str, source, f"{where}.queries[{i}]"))
    for i, raw in enumerate(expect(item.get("results") or [], list, source, f"{where}.results")):
        at = f"{where}.results[{i}]"
        entry = expect(raw, dict, source, at)
        file_id = expect(entry.get("file_id"), OPTIONAL_TEXT, source, f"{at}.file_id")
        filename = expect(entry.get("filename"), OPTIONAL_TEXT, source, f"{at}.filename")
        quote = expect(entry.get("text"), OPTIONAL_TEXT, source, f"{at}.text")
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


def _message_parts(item: dict[str, Any], source: str, where: str) -> list[Part]:
    if item.get("content") is None:
        return []
    parts = []
    for i, raw in enumerate(expect(item["content"], list, source, f"{where}.content")):
        at = f"{where}.content[{i}]"
        part = expect(raw, dict, source, at)
        if part.get("type") == "output_text":
            text = expect(part.get("text"), str, source, f"{at}.text")
            parts.append(read_part(text, part.get("annotations"), source, f"{at}.annotations"))
        elif part.get("type") == "refusal":
            parts.append(Part(expect(part.get("refusal"), str, source, f"{at}.refusal")))
        else:
            parts.append(Part("", unknown=(f"message content part of type {part.get('type')!r}",)))
    return parts


def _read_response(payload: Any, source: str, location: str) -> ParsedAnswer:
    body = expect(payload, dict, source, location)
    status, failure = _response_status(body, source, location)
    # A response always carries its output list (empty when it failed): without one there is no answer to store.
    output = expect(body.get("output"), list, source, _at(location, "output"))
    parts: list[Part] = []
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
    text, citations, claims, placed = cited(parts, source)
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
        model=expect(body.get("model"), OPTIONAL_TEXT, source, _at(location, "model")),
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
    part = read_part(
        _choice_text(message, source, where), message.get("annotations"), source, f"{where}.message.annotations"
    )
    text, citations, claims, placed = cited([part], source)
    finish = expect(choice.get("finish_reason"), OPTIONAL_TEXT, source, f"{where}.finish_reason")
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
    model = expect(body.get("model"), OPTIONAL_TEXT, source, _at(location, "model"))
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
        answers.append(parsed._replace(model=model, question_id=question_id, answer_id=own_id))
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
