"""Reader for answers of the Gemini Interactions API (``"object": "interaction"``) grounded with Google Search.

The answer is the text of the ``model_output`` steps' ``text`` contents, in order (``outputs[]`` of ``text`` items
in the API's earlier form). Each ``url_citation`` annotation (``url``, ``title``, ``start_index``, ``end_index``)
locates the span of the text its page supports, as a Gemini grounding support does, so an interaction is read as
the ``generateContent`` response it corresponds to: one grounding chunk per cited URL, one support per annotation,
each text content a part. ``google_search_call`` steps give the queries; pages a ``google_search_result`` lists
with a ``url`` and no annotation cites are retrieved. A saved event stream (``interaction.start``,
``content.delta`` …, ``interaction.complete``) is put back together first (see :mod:`citeaudit.ingest.streams`).

Decisions where the documentation is silent:

- offsets are read as UTF-8 byte offsets, as the rest of the Gemini API gives them; offsets that fall inside a
  character or past the text's bytes but fit its characters are read as character offsets;
- an annotation without both offsets is an answer-level citation of its URL;
- ``status`` other than ``completed`` makes an answer with text incomplete and one without text failed.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from citeaudit.core.errors import InvalidValue
from citeaudit.core.model import AnswerStatus
from citeaudit.ingest.base import ANSWER_LEVEL, ParsedAnswer, ParsedCitation, Reader
from citeaudit.ingest.gemini import read_generate_content
from citeaudit.ingest.payload import cut_short, expect, load_responses
from citeaudit.ingest.shape import Shape, shape_of

__all__ = ["READER", "can_read", "read_answers"]

_OPTIONAL_TEXT = (str, type(None))
_IGNORED_STEPS = frozenset({"thought", "user_input", "url_context_call", "url_context_result"})


def can_read(content: bytes | Shape) -> bool:
    """``"object": "interaction"``, ``steps`` holding a ``model_output``, or a saved stream of its events (the
    first one an ``interaction.…`` event)."""
    shape = shape_of(content)
    if shape.value_is("object", "interaction") or shape.value_is("steps[].type", "model_output"):
        return True
    return any(kind.startswith("interaction.") for kind in shape.values("event_type"))


@dataclass(slots=True)
class _Converted:
    """An interaction as a ``generateContent`` response, and what that response cannot say."""

    parts: list[dict[str, Any]] = field(default_factory=list)
    chunks: list[dict[str, Any]] = field(default_factory=list)
    by_url: dict[str, int] = field(default_factory=dict)
    supports: list[dict[str, Any]] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    unplaced: list[ParsedCitation] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def chunk(self, url: str, title: str | None) -> int:
        index = self.by_url.get(url)
        if index is None:
            index = self.by_url[url] = len(self.chunks)
            self.chunks.append({"web": {"uri": url, **({"title": title} if title else {})}})
        return index


def _byte_span(text: str, start: int, end: int) -> tuple[int, int] | None:
    """Byte offsets of the annotation's span: its offsets as bytes when they cut the text's UTF-8 at character
    boundaries, else as characters when they fit those."""
    encoded = text.encode("utf-8")
    if 0 <= start <= end <= len(encoded):
        try:
            encoded[:start].decode("utf-8")
            encoded[start:end].decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            return start, end
    if 0 <= start <= end <= len(text):
        return len(text[:start].encode("utf-8")), len(text[:end].encode("utf-8"))
    return None


def _text(content: dict[str, Any], found: _Converted, source: str, where: str) -> None:
    text = expect(content.get("text"), str, source, f"{where}.text")
    index = len(found.parts)
    found.parts.append({"text": text})
    for k, raw in enumerate(expect(content.get("annotations") or [], list, source, f"{where}.annotations")):
        at = f"{where}.annotations[{k}]"
        note = expect(raw, dict, source, at)
        if note.get("type") != "url_citation":
            found.notes.append(f"annotation of type {note.get('type')!r}")
            continue
        url = expect(note.get("url"), str, source, f"{at}.url")
        title = expect(note.get("title"), _OPTIONAL_TEXT, source, f"{at}.title") or None
        start = expect(note.get("start_index"), (int, type(None)), source, f"{at}.start_index")
        end = expect(note.get("end_index"), (int, type(None)), source, f"{at}.end_index")
        if start is None or end is None:
            found.unplaced.append(ParsedCitation(url, title, publisher=title))
            continue
        span = _byte_span(text, start, end)
        if span is None:
            raise InvalidValue(
                source, at, f"start_index {start!r}..end_index {end!r} do not fit the text ({len(text)} characters)"
            )
        found.supports.append(
            {
                "segment": {"partIndex": index, "startIndex": span[0], "endIndex": span[1]},
                "groundingChunkIndices": [found.chunk(url, title)],
            }
        )


def _search_result(step: dict[str, Any], found: _Converted, source: str, where: str) -> None:
    for k, raw in enumerate(expect(step.get("result") or [], list, source, f"{where}.result")):
        item = expect(raw, dict, source, f"{where}.result[{k}]")
        url = expect(item.get("url"), _OPTIONAL_TEXT, source, f"{where}.result[{k}].url")
        if url:
            found.chunk(url, expect(item.get("title"), _OPTIONAL_TEXT, source, f"{where}.result[{k}].title"))


def _steps(body: dict[str, Any], source: str, where: str) -> _Converted:
    found = _Converted()
    if body.get("steps") is None and body.get("outputs") is not None:
        steps = [{"type": "model_output", "content": expect(body["outputs"], list, source, f"{where}outputs")}]
        prefix = f"{where}outputs"
    else:
        steps = expect(body.get("steps") or [], list, source, f"{where}steps")
        prefix = ""
    for i, raw in enumerate(steps):
        at = prefix or f"{where}steps[{i}]"
        step = expect(raw, dict, source, at)
        kind = step.get("type")
        if kind == "model_output":
            for k, item in enumerate(expect(step.get("content") or [], list, source, f"{at}.content")):
                here = f"{prefix}[{k}]" if prefix else f"{at}.content[{k}]"
                content = expect(item, dict, source, here)
                if content.get("type") == "text":
                    _text(content, found, source, here)
                elif content.get("type") not in ("thought", None):
                    found.notes.append(f"model output content of type {content.get('type')!r}")
        elif kind == "google_search_call":
            arguments = expect(step.get("arguments") or {}, dict, source, f"{at}.arguments")
            queries = expect(arguments.get("queries") or [], list, source, f"{at}.arguments.queries")
            found.queries += [expect(q, str, source, f"{at}.arguments.queries[{n}]") for n, q in enumerate(queries)]
        elif kind == "google_search_result":
            _search_result(step, found, source, at)
        elif kind not in _IGNORED_STEPS:
            found.notes.append(f"step of type {kind!r}")
    return found


def _status(answer: ParsedAnswer, body: dict[str, Any], source: str, where: str) -> ParsedAnswer:
    status = expect(body.get("status"), _OPTIONAL_TEXT, source, f"{where}status")
    if status in (None, "completed"):
        return answer
    error = body.get("error")
    detail = error.get("message") if isinstance(error, dict) else None
    reason = f"status {status!r}" + (f": {detail}" if detail else "")
    if answer.text.strip():
        return answer._replace(status=AnswerStatus.INCOMPLETE, failure=reason)
    return answer._replace(status=AnswerStatus.FAILED, failure=reason)


def _read_interaction(payload: Any, source: str, location: str) -> ParsedAnswer:
    where = "" if location == "$" else f"{location}: "
    body = expect(payload, dict, source, location)
    found = _steps(body, source, where)
    metadata: dict[str, Any] = {"groundingChunks": found.chunks, "groundingSupports": found.supports}
    if found.queries:
        metadata["webSearchQueries"] = found.queries
    response = {
        "candidates": [{"content": {"parts": found.parts}, "groundingMetadata": metadata}],
        "modelVersion": body.get("model"),
        **{name: body[name] for name in ("question_id", "answer_id") if name in body},
    }
    answer = read_generate_content(response, source, location)
    if found.unplaced or found.notes:
        answer = answer._replace(
            citations=(*answer.citations, *found.unplaced),
            notes=tuple(dict.fromkeys((*answer.notes, *found.notes))),
        )
    return _status(answer, body, source, where)


def read_answers(data: bytes, source: str) -> Iterator[ParsedAnswer]:
    """One answer per interaction (one JSON document, a JSON list or JSON Lines), or per interaction of a saved
    event stream."""
    return (
        cut_short(_read_interaction(payload, source, location), cut)
        for location, payload, cut in load_responses(data, source, "gemini-interactions")
    )


READER = Reader(
    name="gemini-interactions",
    description="Gemini Interactions API grounded with Google Search (steps, url_citation annotations)",
    can_read=can_read,
    read_answers=read_answers,
    reads=(
        "interactions (object interaction): model_output steps' text with url_citation annotations (spans), "
        "google_search_call queries, google_search_result pages; the earlier outputs[] form; saved event streams"
    ),
    positionless=f"url_citation without start_index/end_index: {ANSWER_LEVEL}",
    streams=(
        "interaction.start, content.start/delta/stop (text, annotations), interaction.complete (its interaction "
        "when it carries the steps); Server-Sent Events or one event's JSON per line"
    ),
)
