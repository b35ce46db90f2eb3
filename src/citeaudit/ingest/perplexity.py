"""Reader for Perplexity answers: Sonar chat completions and Agent API responses.

Sonar returns an OpenAI-style chat completion plus top-level ``search_results`` (``{title, url, date}``) and/or
``citations`` (URL strings); the answer's ``[n]`` markers are 1-based positions into ``search_results`` (into
``citations`` when there are no search results). The Agent API returns ``output[]`` items: ``search_results``
(``results[{id, url, title}]``, ``queries[]``), ``fetch_url_results`` and ``message`` items whose
``output_text`` parts hold the text; there the markers name a result's ``id``.

A Sonar answer that cites nothing carries neither list; it is recognised by its ``sonar…`` model name or the
search fields Sonar writes into ``usage``.

Every marker is a citation location; its claim is the sentence it closes, markers stripped. A marker with no
source behind it is *dangling*: counted, never an edge. Sources no marker points to are *retrieved*.

Decisions where the documentation is silent:

- an answer with no text is a failed answer (``empty answer``), never a complete answer without citations;
- an Agent response with ``status: incomplete`` that carries text is kept as a complete answer (the text is
  what the engine showed); without text it is recorded as incomplete;
- a Sonar payload with a top-level ``error`` and no ``choices`` (a captured error body) is a failed answer;
- markers inside a leading ``<think>…</think>`` block (``sonar-reasoning`` models) are reasoning, not
  citations shown to the reader, so they are not read;
- Agent ``url_citation`` annotations add a citation only where no ``[n]`` marker already sits at their
  start (they usually locate the same marker); one without ``start_index``/``end_index`` is an answer-level
  citation of its URL, unless a marker already cites that URL;
- optional top-level ``question_id`` / ``answer_id`` strings (written by a collector into JSON Lines) are
  passed on.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from citeaudit.core.errors import InvalidValue
from citeaudit.core.model import AnswerStatus, CitationKind, RetrievalStatus
from citeaudit.ingest.base import ANSWER_LEVEL, CUT_OFF, ParsedAnswer, ParsedCitation, Reader
from citeaudit.ingest.payload import agent_response, cut_short, expect, load_responses, sonar_traits
from citeaudit.ingest.shape import Shape, shape_of
from citeaudit.ingest.text import MARKER, SentenceIndex, candidates

_NEW: Final = tuple.__new__


def _citation(
    url: str | None, title: str | None, marker: str | None, kind: CitationKind, start: int | None, end: int | None
) -> ParsedCitation:
    """``ParsedCitation(url, title, marker, kind, start, end)``, made as the tuple it is: a named tuple's own
    constructor is Python code, and a reader makes one for every citation (tests/test_compiled.py holds the two
    alike, field for field)."""
    return _NEW(ParsedCitation, (url, title, marker, kind, start, end, None, None, None, False))


__all__ = ["READER", "can_read", "read_answers"]

_THINK_OPEN = re.compile(r"\s*<think>")
_THINK_CLOSE = "</think>"
_AGENT_DONE = ("completed", "incomplete")


def can_read(content: bytes | Shape) -> bool:
    """Sonar: a top-level ``search_results`` key, ``citations`` next to ``choices`` (OpenAI chat completions have
    neither), or a chat completion with Sonar's own traits (a ``sonar…`` model, Sonar's search fields in
    ``usage``), which is how an answer citing nothing is recognised; Agent API: an ``output`` list with a
    ``search_results`` / ``fetch_url_results`` item, or a ``response`` object from a ``vendor/model`` model (a
    failed run has no output items; OpenAI's own model names have no slash)."""
    shape = shape_of(content)
    keys = shape.fields()
    if "output" in keys and agent_response(shape):
        return True
    if "search_results" in keys or {"citations", "choices"} <= keys:
        return True
    return "choices" in keys and shape.value_is("object", "chat.completion") and sonar_traits(shape)


# -- reading payloads -----------------------------------------------------------------------------------------


def _path(parts: tuple[str | int, ...]) -> str:
    """``("search_results", 4, "url")`` → ``search_results[4].url``."""
    path = ""
    for part in parts:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else part)
    return path


class _Reading:
    """One payload being read; locations for errors are only spelled out when there is an error.

    A plain class, as :class:`_Citations`: compiled, it is made without the Python ``__init__`` a dataclass has
    (one of each for every answer read)."""

    def __init__(self, source: str, where: str) -> None:
        self.source: Final = source
        self.where: Final = where

    def at(self, *parts: str | int) -> str:
        """A location such as ``line 3: search_results[4].url`` (no prefix for a single JSON document)."""
        path = _path(parts)
        if not path:
            return self.where
        return path if self.where == "$" else f"{self.where}: {path}"

    def check(self, value: Any, kind: type | tuple[type, ...], *parts: str | int) -> Any:
        """``value`` if it is of ``kind``, else an error naming its location and the value."""
        # A bool goes the long way: expect refuses true / false where a number is wanted.
        ok = isinstance(value, kind) and type(value) is not bool
        return value if ok else expect(value, kind, self.source, self.at(*parts))

    def get(self, mapping: dict[str, Any], kind: type | tuple[type, ...], *parts: str | int) -> Any:
        """``mapping[parts[-1]]`` checked to be of ``kind``, or ``None`` when absent or null."""
        name = parts[-1]
        value = mapping.get(name) if isinstance(name, str) else None
        return None if value is None else self.check(value, kind, *parts)

    def invalid(self, message: str, *parts: str | int) -> InvalidValue:
        """An error naming a location."""
        return InvalidValue(self.source, self.at(*parts), message)


# -- shared shapes --------------------------------------------------------------------------------------------

_Source = tuple[str, str | None]
"""One search result an answer can cite: URL and title (a plain tuple: there are millions of them)."""


class _Citations:
    """Citation locations and claim spans collected while reading one answer."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.citations: list[ParsedCitation] = []
        self.spans: list[tuple[int, int, int]] = []
        self.marker_starts: set[int] = set()
        self.cited_urls: set[str] = set()

    def add_markers(self, sentences: SentenceIndex, floor: int, by_number: dict[int, _Source]) -> None:
        """Every ``[n]`` marker from ``floor`` on; ``by_number`` gives the source behind n, if any."""
        spans, citations, cited_urls, claim_span = self.spans, self.citations, self.cited_urls, sentences.claim_span
        marker_starts = self.marker_starts
        dangling, cited_kind = CitationKind.DANGLING, CitationKind.CITED
        for match in MARKER.finditer(self.text, floor):
            start, end = match.span()
            marker_starts.add(start)
            marker, number = match.group(0, 1)
            cited = by_number.get(int(number))
            if cited is None:
                citation = _citation(None, None, marker, dangling, start, end)
            else:
                url = cited[0]
                citation = _citation(url, cited[1], marker, cited_kind, start, end)
                cited_urls.add(url)
            claim_start, claim_end = claim_span(start)
            spans.append((claim_start, claim_end, len(citations)))
            citations.append(citation)

    def add_located(self, url: str, title: str | None, start: int, end: int, claim: tuple[int, int]) -> None:
        """A citation located by an annotation rather than a marker."""
        self.spans.append((claim[0], claim[1], len(self.citations)))
        self.citations.append(ParsedCitation(url, title, self.text[start:end] or None, CitationKind.CITED, start, end))
        self.cited_urls.add(url)

    def add_unplaced(self, url: str, title: str | None) -> None:
        """A citation without a position: cited by the answer as a whole (once per URL no marker cites)."""
        if url not in self.cited_urls:
            self.citations.append(ParsedCitation(url, title))
            self.cited_urls.add(url)

    def add_retrieved(self, sources: Iterable[_Source]) -> None:
        """Sources whose URL no location cites, as retrieved citations (each URL once)."""
        seen = self.cited_urls
        for url, title in sources:
            if url not in seen:
                seen.add(url)
                self.citations.append(_citation(url, title, None, CitationKind.RETRIEVED, None, None))

    def answer(
        self, body: dict[str, Any], reading: _Reading, retrieval: RetrievalStatus, queries: tuple[str, ...] = ()
    ) -> ParsedAnswer:
        """The complete answer these citations belong to."""
        question_id, answer_id = _ids(body, reading)
        # made as the tuple it is, field by field (tests/test_compiled.py holds it to the one made by name)
        return _NEW(
            ParsedAnswer,
            (
                self.text,  # text
                tuple(self.citations),  # citations
                candidates(self.text, self.spans),  # claims
                AnswerStatus.COMPLETE,  # status
                None,  # failure
                retrieval,  # retrieval
                None,  # platform
                reading.get(body, str, "model"),  # model
                question_id,
                answer_id,
                queries,
                None,  # retrieval_reason
                (),  # notes
                0,  # placed_by_markers
            ),
        )


def _think_end(text: str) -> int:
    """End of a leading ``<think>`` block (0 when there is none; the whole text when it never closes)."""
    opening = _THINK_OPEN.match(text)
    if opening is None:
        return 0
    closing = text.find(_THINK_CLOSE, opening.end())
    return len(text) if closing < 0 else closing + len(_THINK_CLOSE)


def _ids(body: dict[str, Any], reading: _Reading) -> tuple[str | None, str | None]:
    """Question and answer id a collector wrote next to the payload (JSON Lines), if any."""
    return reading.get(body, str, "question_id"), reading.get(body, str, "answer_id")


def _error_text(error: Any) -> str | None:
    """``code: type: message`` from an error object (or the error itself when it is a string)."""
    if isinstance(error, dict):
        parts = [str(error[key]) for key in ("code", "type", "message") if error.get(key) not in (None, "")]
        return ": ".join(dict.fromkeys(parts)) or None
    if error in (None, ""):
        return None
    return str(error)


def _not_answered(body: dict[str, Any], reading: _Reading, status: AnswerStatus, failure: str) -> ParsedAnswer:
    question_id, answer_id = _ids(body, reading)
    return ParsedAnswer(
        text="",
        status=status,
        failure=failure,
        model=reading.get(body, str, "model"),
        question_id=question_id,
        answer_id=answer_id,
    )


# -- Sonar ----------------------------------------------------------------------------------------------------


def _sonar_sources(body: dict[str, Any], reading: _Reading) -> list[_Source]:
    """``search_results``, or the bare ``citations`` URLs when there are none."""
    results = reading.get(body, list, "search_results")
    if results:
        found = []
        for i, result in enumerate(results):
            # Checked inline: this loop runs for every search result of every answer.
            entry = result if isinstance(result, dict) else reading.check(result, dict, "search_results", i)
            url, title = entry.get("url"), entry.get("title")
            if not isinstance(url, str):
                url = reading.check(url, str, "search_results", i, "url")
            if title is not None and not isinstance(title, str):
                title = reading.check(title, str, "search_results", i, "title")
            found.append((url, title or None))
        return found
    urls = reading.get(body, list, "citations") or []
    return [(reading.check(url, str, "citations", i), None) for i, url in enumerate(urls)]


def _sonar_text(body: dict[str, Any], reading: _Reading) -> tuple[str, str | None]:
    """The answer text and the finish reason of the first choice."""
    choices = reading.check(body.get("choices"), list, "choices")
    if not choices:
        raise reading.invalid("expected at least one choice (got [])", "choices")
    choice = reading.check(choices[0], dict, "choices", 0)
    message = reading.check(choice.get("message"), dict, "choices", 0, "message")
    text = reading.get(message, str, "choices", 0, "message", "content") or ""
    return text, reading.get(choice, str, "choices", 0, "finish_reason")


def _read_sonar(body: dict[str, Any], reading: _Reading) -> ParsedAnswer:
    if "choices" not in body and body.get("error") is not None:
        return _not_answered(body, reading, AnswerStatus.FAILED, f"error: {_error_text(body['error'])}")
    text, finish = _sonar_text(body, reading)
    sources = _sonar_sources(body, reading)
    floor = _think_end(text)
    if not text[floor:].strip():
        return _not_answered(body, reading, AnswerStatus.FAILED, f"empty answer (finish_reason {finish!r})")
    found = _Citations(text)
    found.add_markers(SentenceIndex(text, floor), floor, dict(enumerate(sources, start=1)))
    found.add_retrieved(sources)
    answer = found.answer(body, reading, RetrievalStatus.USED if sources else RetrievalStatus.UNKNOWN)
    if finish == "length":
        return answer._replace(status=AnswerStatus.INCOMPLETE, failure=CUT_OFF.format(reason="finish_reason 'length'"))
    return answer


# -- Agent API ------------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _AgentOutput:
    """What the ``output[]`` items of one Agent response hold."""

    sources: list[_Source] = field(default_factory=list)
    by_id: dict[int, _Source] = field(default_factory=dict)
    fetched: list[_Source] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    parts: list[tuple[int, str, list[Any], tuple[str | int, ...]]] = field(default_factory=list)
    searched: bool = False
    length: int = 0
    notes: list[str] = field(default_factory=list)
    """Output item types this reader does not know (the answer is then partly understood)."""


def _marker_number(result_id: int | str) -> int | None:
    """The ``[n]`` marker that names a result id (ids are numbers, sometimes written as text)."""
    if isinstance(result_id, int):
        return result_id
    text = result_id.strip()
    return int(text) if text.isdecimal() else None


def _agent_search(item: dict[str, Any], here: tuple[str | int, ...], found: _AgentOutput, reading: _Reading) -> None:
    found.searched = True
    queries = reading.get(item, list, *here, "queries") or []
    found.queries.extend(reading.check(q, str, *here, "queries", k) for k, q in enumerate(queries))
    for k, result in enumerate(reading.get(item, list, *here, "results") or []):
        at = (*here, "results", k)
        entry = reading.check(result, dict, *at)
        result_id = reading.check(entry.get("id"), (int, str), *at, "id")
        url = reading.check(entry.get("url"), str, *at, "url")
        found.sources.append((url, reading.get(entry, str, *at, "title") or None))
        number = _marker_number(result_id)
        if number is not None and number not in found.by_id:  # a repeated id does not re-point earlier markers
            found.by_id[number] = found.sources[-1]


def _agent_fetch(item: dict[str, Any], here: tuple[str | int, ...], found: _AgentOutput, reading: _Reading) -> None:
    found.searched = True
    for k, content in enumerate(reading.get(item, list, *here, "contents") or []):
        at = (*here, "contents", k)
        entry = reading.check(content, dict, *at)
        url = reading.check(entry.get("url"), str, *at, "url")
        found.fetched.append((url, reading.get(entry, str, *at, "title") or None))


def _agent_message(item: dict[str, Any], here: tuple[str | int, ...], found: _AgentOutput, reading: _Reading) -> None:
    for k, part in enumerate(reading.get(item, list, *here, "content") or []):
        at = (*here, "content", k)
        entry = reading.check(part, dict, *at)
        if entry.get("type") != "output_text":
            continue
        text = reading.check(entry.get("text"), str, *at, "text")
        found.parts.append((found.length, text, reading.get(entry, list, *at, "annotations") or [], at))
        found.length += len(text)


_AGENT_IGNORED = frozenset({"reasoning", "function_call", "function_call_output"})
"""Output items that hold neither answer text nor sources."""
_AGENT_ITEMS = {"search_results": _agent_search, "fetch_url_results": _agent_fetch, "message": _agent_message}


def _agent_output(body: dict[str, Any], reading: _Reading) -> _AgentOutput:
    found = _AgentOutput()
    for i, item in enumerate(reading.get(body, list, "output") or []):
        entry = reading.check(item, dict, "output", i)
        kind = entry.get("type")
        read = _AGENT_ITEMS.get(kind) if isinstance(kind, str) else None
        if read is not None:
            read(entry, ("output", i), found, reading)
        elif kind not in _AGENT_IGNORED and f"output item of type {kind!r}" not in found.notes:
            found.notes.append(f"output item of type {kind!r}")
    return found


def _add_annotations(found: _Citations, output: _AgentOutput, sentences: SentenceIndex, reading: _Reading) -> None:
    """``url_citation`` annotations that no ``[n]`` marker already stands for."""
    for offset, part, notes, here in output.parts:
        for k, note in enumerate(notes):
            at = (*here, "annotations", k)
            entry = reading.check(note, dict, *at)
            if reading.check(entry.get("type"), (str, type(None)), *at, "type") != "url_citation":
                continue
            # Responses-style annotations are flat; chat-completions-style ones nest the fields.
            cited = reading.check(entry.get("url_citation", entry), dict, *at, "url_citation")
            url = reading.check(cited.get("url"), str, *at, "url")
            if cited.get("start_index") is None and cited.get("end_index") is None:
                found.add_unplaced(url, reading.get(cited, str, *at, "title") or None)
                continue
            start = reading.check(cited.get("start_index"), int, *at, "start_index")
            end = reading.check(cited.get("end_index"), int, *at, "end_index")
            if not 0 <= start <= end <= len(part):
                raise reading.invalid(f"span {start}..{end} is outside its text (0..{len(part)})", *at)
            if start + offset in found.marker_starts:
                continue
            title = reading.get(cited, str, *at, "title") or None
            found.add_located(url, title, start + offset, end + offset, sentences.claim_span(start + offset))


def _agent_status(body: dict[str, Any], reading: _Reading) -> str | None:
    """The response's ``status``; an ``error`` without a status counts as failed."""
    status: str | None = reading.get(body, str, "status")
    if status is None and body.get("error") is not None:
        return "failed"
    return status


def _incomplete_reason(body: dict[str, Any]) -> str:
    details = body.get("incomplete_details")
    reason = _error_text(details.get("reason") if isinstance(details, dict) else details)
    return reason or _error_text(body.get("error")) or "no reason given"


def _read_agent(body: dict[str, Any], reading: _Reading) -> ParsedAnswer:
    status = _agent_status(body, reading)
    if status is not None and status not in _AGENT_DONE:
        reason = _error_text(body.get("error")) or "no error given"
        return _not_answered(body, reading, AnswerStatus.FAILED, f"{status}: {reason}")
    output = _agent_output(body, reading)
    text = "".join(part for _, part, _, _ in output.parts)
    floor = _think_end(text)
    if not text[floor:].strip():
        if status == "incomplete":
            return _not_answered(body, reading, AnswerStatus.INCOMPLETE, f"incomplete: {_incomplete_reason(body)}")
        return _not_answered(body, reading, AnswerStatus.FAILED, "empty answer")
    sentences = SentenceIndex(text, floor)
    found = _Citations(text)
    found.add_markers(sentences, floor, output.by_id)
    _add_annotations(found, output, sentences, reading)
    found.add_retrieved(output.sources + output.fetched)
    retrieval = RetrievalStatus.USED if output.searched else RetrievalStatus.UNKNOWN
    answer = found.answer(body, reading, retrieval, tuple(output.queries))
    return answer._replace(notes=tuple(output.notes)) if output.notes else answer


# -- reader ---------------------------------------------------------------------------------------------------


def _read_payload(payload: Any, reading: _Reading) -> ParsedAnswer:
    body = reading.check(payload, dict)
    if "output" in body and "choices" not in body:
        return _read_agent(body, reading)
    return _read_sonar(body, reading)


def read_answers(data: bytes, source: str) -> Iterator[ParsedAnswer]:
    """Every answer in a Perplexity payload file (one response, a JSON list, or JSON Lines), or per completion of
    a saved Sonar event stream."""
    # A generator function, not a returned generator expression: compiled (setup.py), that would be a list of
    # every answer in the file, read before the first is written.
    for where, payload, cut in load_responses(data, source, "openai-chat"):
        yield cut_short(_read_payload(payload, _Reading(source, where)), cut)


_SSE = "Server-Sent Events as sent (data: lines, event: names, [DONE]) or one event's JSON per line"

READER = Reader(
    name="perplexity",
    description="Perplexity Sonar chat completions and Agent API responses ([n] markers, search results)",
    can_read=can_read,
    read_answers=read_answers,
    reads=(
        "Sonar chat completions (search_results, citations, or neither: an uncited answer; sonar-reasoning "
        "<think> blocks left out) and Agent API (/v1/agent) responses (search_results and fetch_url_results items, "
        "[n] markers naming result ids, url_citation annotations)"
    ),
    streams=(
        "Sonar streams: chat.completion.chunk (delta.content joined; citations and search_results of the last "
        f"chunk, which every chunk repeats) and chat.completion.done; {_SSE}"
    ),
    positionless=(
        "each [n] marker is a position (listed sources no marker names are retrieved); an Agent url_citation "
        f"without offsets is {ANSWER_LEVEL}"
    ),
)
