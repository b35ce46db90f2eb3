"""Reader for Gemini API answers grounded with Google Search (``generateContent`` responses).

The answer is ``candidates[0].content.parts[].text`` joined in order. ``groundingMetadata`` lists the
sources (``groundingChunks[].web{uri, title}``, or ``retrievedContext`` for Vertex AI Search, RAG Engine and
File Search) and the cited spans (``groundingSupports[]``: a ``segment`` and the ``groundingChunkIndices`` that
support it). A ``retrievedContext`` chunk without ``uri`` is a document source keyed by its ``documentName``,
else its ``fileSearchStore`` and ``title``, else its position among the answer's chunks; its ``text`` is kept as
the quote.

Segment offsets are UTF-8 *byte* offsets into ``parts[partIndex].text`` (without ``partIndex``: into the text
parts joined when there are several, else part 0, or the first text part when part 0 holds none, as Gemini 3's
``toolCall``/``toolResponse`` parts do); they are turned into character offsets into the whole answer. Pages the
URL context tool fetched (``urlContextMetadata``) are retrieved.

When offsets do not land on character boundaries, run past the part, or slice
out something other than the given ``segment.text``, the segment is found by its text instead (first
occurrence at or after the previous support). Each support is one claim candidate with one citation per
chunk index; an index past ``groundingChunks`` is a dangling citation; chunks no support cites are
retrieved. ``web.uri`` is kept raw (a grounding redirect) and ``web.title`` (usually the publisher's bare
domain) is both title and publisher.

Decisions where the documentation is silent:

- ``thought`` parts (thinking summaries) are not part of the answer text; a support pointing into one is
  refused like any other bad ``partIndex``;
- no answer text at all is a failed answer: ``prompt blocked: …`` for a ``promptFeedback.blockReason``,
  ``finishReason …`` for a stop reason other than ``STOP`` / ``MAX_TOKENS``, else ``empty answer``;
- an answer cut off at the token limit (``MAX_TOKENS``) is incomplete, as for every engine;
- retrieval is ``used`` when the metadata shows a search (queries, chunks or a search entry point),
  ``unknown`` when it does not although ``usageMetadata.toolUsePromptTokenCount`` > 0, else ``not_used``;
- field names are read in the REST form (``groundingMetadata``) and in the snake_case form that the Python
  SDK's ``model_dump`` writes (``grounding_metadata``);
- optional top-level ``question_id`` / ``answer_id`` strings (written by a collector) are passed on.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from citeaudit.core.errors import InvalidValue
from citeaudit.core.model import AnswerStatus, CitationKind, RetrievalStatus
from citeaudit.ingest.base import CUT_OFF, ParsedAnswer, ParsedCitation, Reader
from citeaudit.ingest.payload import cut_short, expect, load_responses, retrieved_only
from citeaudit.ingest.shape import Shape, shape_of
from citeaudit.ingest.text import candidates, trim_span

__all__ = ["READER", "can_read", "read_answers", "read_generate_content"]

_CAMEL_HUMP = re.compile(r"(?<!^)(?=[A-Z])")
_ANSWERED = frozenset({"STOP", "MAX_TOKENS", "FINISH_REASON_UNSPECIFIED"})
_CHUNK_KINDS = ("web", "retrievedContext", "maps")


def can_read(content: bytes | Shape) -> bool:
    """A ``candidates`` list whose candidates carry ``groundingMetadata`` (or ``grounding_metadata``) or
    ``content.parts``."""
    shape = shape_of(content)
    if "candidates" not in shape.fields():
        return False
    candidate = shape.fields("candidates[]")
    return bool(candidate & {"groundingMetadata", "grounding_metadata"}) or shape.has("candidates[].content.parts")


# -- field access ---------------------------------------------------------------------------------------------


@cache
def _snake(name: str) -> str:
    return _CAMEL_HUMP.sub("_", name).lower()


def _field(mapping: dict[str, Any], name: str) -> Any:
    """``mapping[name]`` under its REST (camelCase) name or its Python SDK (snake_case) name."""
    value = mapping.get(name)
    return mapping.get(_snake(name)) if value is None else value


def _at(where: str, path: str) -> str:
    """A location such as ``line 3: candidates[0].groundingMetadata`` (no prefix for a single document)."""
    if not path:
        return where
    return path if where == "$" else f"{where}: {path}"


@dataclass(frozen=True, slots=True)
class _Reading:
    """One payload being read: the file and where in it, for error messages."""

    source: str
    where: str

    def get(self, mapping: dict[str, Any], name: str, kind: type | tuple[type, ...], path: str) -> Any:
        """``mapping``'s field ``name`` (``None`` when absent), checked to be of ``kind``."""
        value = _field(mapping, name)
        location = _at(self.where, f"{path}.{name}" if path else name)
        return None if value is None else expect(value, kind, self.source, location)

    def check(self, value: Any, kind: type | tuple[type, ...], path: str) -> Any:
        """``value`` checked to be of ``kind``."""
        return expect(value, kind, self.source, _at(self.where, path))

    def invalid(self, path: str, message: str) -> InvalidValue:
        """An error naming ``path``."""
        return InvalidValue(self.source, _at(self.where, path), message)


# -- answer text ----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Part:
    """One text part of the answer and where it starts in the joined text."""

    offset: int
    text: str
    encoded: bytes


def _parts(candidate: dict[str, Any], reading: _Reading) -> tuple[str, dict[int, _Part]]:
    """The answer text and its text parts by ``partIndex``."""
    content = reading.get(candidate, "content", dict, "candidates[0]") or {}
    items = reading.get(content, "parts", list, "candidates[0].content") or []
    pieces: list[str] = []
    parts: dict[int, _Part] = {}
    offset = 0
    for i, item in enumerate(items):
        here = f"candidates[0].content.parts[{i}]"
        part = reading.check(item, dict, here)
        text = reading.get(part, "text", str, here)
        if text is None or part.get("thought") is True:
            continue
        parts[i] = _Part(offset, text, text.encode("utf-8"))
        pieces.append(text)
        offset += len(text)
    return "".join(pieces), parts


def _failure(body: dict[str, Any], candidate: dict[str, Any] | None, reading: _Reading) -> str:
    """Why a payload without answer text has no answer."""
    feedback = reading.get(body, "promptFeedback", dict, "") or {}
    blocked = reading.get(feedback, "blockReason", str, "promptFeedback")
    if blocked:
        detail = reading.get(feedback, "blockReasonMessage", str, "promptFeedback")
        return f"prompt blocked: {blocked}" + (f" ({detail})" if detail else "")
    if candidate is None:
        return "no candidates in the response"
    finish = reading.get(candidate, "finishReason", str, "candidates[0]")
    if finish and finish not in _ANSWERED:
        return f"finishReason {finish}"
    return "empty answer" + (f" (finishReason {finish})" if finish else "")


# -- grounding ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Chunk:
    """One grounding chunk: a web page (via its redirect) or a retrieved document."""

    url: str | None
    title: str | None
    publisher: str | None
    document: str | None = None
    """What identifies a retrieved document without a URL (see :attr:`ParsedCitation.document`)."""
    answer_scoped: bool = False
    quote: str | None = None
    """The retrieved passage, when the chunk carries it (File Search)."""

    def citation(self, kind: CitationKind = CitationKind.CITED, span: tuple[int, int] | None = None) -> ParsedCitation:
        start, end = span if span is not None else (None, None)
        return ParsedCitation(
            self.url,
            self.title,
            kind=kind,
            start=start,
            end=end,
            quote=self.quote,
            publisher=self.publisher,
            document=self.document,
            answer_scoped=self.answer_scoped,
        )


def _retrieved_context(body: dict[str, Any], index: int, here: str, reading: _Reading) -> _Chunk:
    """A ``retrievedContext`` chunk (Vertex AI Search, RAG Engine, Gemini File Search).

    With a ``uri`` it is that page or file; without one it is a document of its own, keyed by what identifies it:
    its ``documentName``, else its file-search store and title, else (neither ``uri`` nor ``title``, as File
    Search answers give it) its position among the answer's chunks.
    """
    uri = reading.get(body, "uri", str, here) or None
    title = reading.get(body, "title", str, here) or None
    store = reading.get(body, "fileSearchStore", str, here) or None
    passage = reading.get(body, "text", str, here) or None
    if uri is not None:
        return _Chunk(uri, title, None, quote=passage)
    name = reading.get(body, "documentName", str, here) or None
    if name is not None:
        return _Chunk(None, title, store, document=name, quote=passage)
    if title is not None and store is not None:
        return _Chunk(None, title, store, document=f"{store}/{title}", quote=passage)
    if title is not None:
        return _Chunk(None, title, None, quote=passage)
    return _Chunk(None, title, store, document=f"chunk{index}", answer_scoped=True, quote=passage)


def _chunks(metadata: dict[str, Any], path: str, reading: _Reading, notes: list[str]) -> list[_Chunk | None]:
    """The grounding chunks in order; ``None`` for one of a kind this reader does not know and that names no
    page (noted: the answer is partly understood)."""
    found: list[_Chunk | None] = []
    for i, item in enumerate(reading.get(metadata, "groundingChunks", list, path) or []):
        here = f"{path}.groundingChunks[{i}]"
        chunk = reading.check(item, dict, here)
        kind = next((k for k in _CHUNK_KINDS if _field(chunk, k) is not None), None)
        if kind is None:
            kinds = sorted(chunk)
            note = f"grounding chunk of kind {', '.join(kinds) if kinds else 'none'}"
            if note not in notes:
                notes.append(note)
            # a kind not known yet that still names a page (``{"image": {"uri": …}}``) is that page
            other = next((chunk[k] for k in kinds if isinstance(chunk[k], dict) and chunk[k].get("uri")), None)
            uri = other.get("uri") if other is not None else None
            found.append(_Chunk(uri, None, None) if isinstance(uri, str) and uri else None)
            continue
        body = reading.get(chunk, kind, dict, here)
        if kind == "retrievedContext":
            found.append(_retrieved_context(body, i, f"{here}.{kind}", reading))
            continue
        uri = reading.get(body, "uri", str, f"{here}.{kind}") or None
        title = reading.get(body, "title", str, f"{here}.{kind}") or None
        if uri is None and title is None:
            raise reading.invalid(f"{here}.{kind}", "has neither uri nor title")
        # web.title is the publisher's domain, not the page title; a maps place's title is the place's name
        found.append(_Chunk(uri, title, title if kind == "web" else None))
    return found


def _decode(encoded: bytes) -> str | None:
    try:
        return encoded.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _by_offsets(segment: dict[str, Any], part: _Part, here: str, reading: _Reading) -> tuple[int, int] | None:
    """The segment's character span from its byte offsets, or ``None`` when they do not fit the part."""
    start = reading.get(segment, "startIndex", int, here) or 0
    end = reading.get(segment, "endIndex", int, here)
    if end is None or not 0 <= start <= end <= len(part.encoded):
        return None
    before = _decode(part.encoded[:start])
    inside = _decode(part.encoded[start:end])
    if before is None or inside is None:
        return None
    expected = reading.get(segment, "text", str, here)
    if expected is not None and inside != expected:
        return None
    return part.offset + len(before), part.offset + len(before) + len(inside)


def _segment_span(
    segment: dict[str, Any],
    parts: dict[int, _Part],
    whole: _Part,
    floor: int,
    here: str,
    reading: _Reading,
) -> tuple[int, int]:
    """Character span of a support's segment in the whole answer text (``whole``: all text parts joined).

    Without ``partIndex`` the offsets are read against the joined text first (where an answer has several text
    parts, Gemini counts them so), then against part 0, or the first text part when part 0 holds no text
    (Gemini 3 writes ``toolCall`` / ``toolResponse`` parts before the text); the segment is found by its text in
    the answer when its offsets fit nowhere.
    """
    text = whole.text
    given = reading.get(segment, "partIndex", int, here)
    if given is None and len(parts) > 1:
        joined = _by_offsets(segment, whole, here, reading)
        if joined is not None:
            return joined
    index = given or 0
    if given is None and index not in parts and parts:
        index = min(parts)
    part = parts.get(index)
    if part is None:
        raise reading.invalid(f"{here}.partIndex", f"no answer text part {index!r} (text parts: {sorted(parts)})")
    span = _by_offsets(segment, part, here, reading)
    if span is not None:
        return span
    expected = reading.get(segment, "text", str, here)
    position = text.find(expected, max(floor, part.offset)) if expected else -1
    if position < 0:
        start = _field(segment, "startIndex") or 0
        end = _field(segment, "endIndex")
        found = (
            f"its text {expected!r} is not in the answer after character {floor}"
            if expected
            else "it has no text to find it by"
        )
        raise reading.invalid(
            here,
            f"byte offsets {start!r}..{end!r} do not fit part {index} ({len(part.encoded)} bytes), and {found}",
        )
    return position, position + len(expected)


@dataclass(slots=True)
class _Grounded:
    """Citation locations and claim spans of one answer."""

    citations: list[ParsedCitation]
    spans: list[tuple[int, int, int]]


def _supports(
    metadata: dict[str, Any],
    path: str,
    chunks: list[_Chunk | None],
    parts: dict[int, _Part],
    text: str,
    reading: _Reading,
) -> _Grounded:
    grounded = _Grounded([], [])
    cited: set[int] = set()
    floor = 0
    whole = _Part(0, text, text.encode("utf-8"))
    for i, item in enumerate(reading.get(metadata, "groundingSupports", list, path) or []):
        here = f"{path}.groundingSupports[{i}]"
        support = reading.check(item, dict, here)
        segment = reading.get(support, "segment", dict, here)
        if segment is None:
            raise reading.invalid(f"{here}.segment", "is missing")
        start, end = _segment_span(segment, parts, whole, floor, f"{here}.segment", reading)
        floor = start
        start, end = trim_span(text, start, end)
        indices = reading.get(support, "groundingChunkIndices", list, here) or []
        for k, value in enumerate(indices):
            index = reading.check(value, int, f"{here}.groundingChunkIndices[{k}]")
            if 0 <= index < len(chunks):
                cited.add(index)
                chunk = chunks[index]
                if chunk is None:
                    continue  # a chunk of an unknown kind that names no page (noted)
                citation = chunk.citation(span=(start, end))
            else:
                citation = ParsedCitation(None, kind=CitationKind.DANGLING, start=start, end=end)
            grounded.spans.append((start, end, len(grounded.citations)))
            grounded.citations.append(citation)
    for index, unused in enumerate(chunks):
        if index not in cited and unused is not None:
            grounded.citations.append(unused.citation(CitationKind.RETRIEVED))
    return grounded


_URL_FETCHED = "URL_RETRIEVAL_STATUS_SUCCESS"


def _url_context(candidate: dict[str, Any], reading: _Reading) -> tuple[list[str], list[str]]:
    """Pages the URL context tool fetched (``urlContextMetadata.urlMetadata``), and the statuses of those it could
    not fetch."""
    path = "candidates[0].urlContextMetadata"
    found = reading.get(candidate, "urlContextMetadata", dict, "candidates[0]") or {}
    fetched: list[str] = []
    failed: list[str] = []
    for k, item in enumerate(reading.get(found, "urlMetadata", list, path) or []):
        here = f"{path}.urlMetadata[{k}]"
        entry = reading.check(item, dict, here)
        url = reading.get(entry, "retrievedUrl", str, here)
        status = reading.get(entry, "urlRetrievalStatus", str, here)
        if url and status in (None, _URL_FETCHED):
            fetched.append(url)
        elif url:
            failed.append(status or "unspecified")
    return fetched, failed


def _retrieval(body: dict[str, Any], metadata: dict[str, Any], path: str, reading: _Reading) -> RetrievalStatus:
    """Whether Google Search ran; a missing record of a search that token counts show is never a zero."""
    for name in ("webSearchQueries", "groundingChunks", "searchEntryPoint"):
        if _field(metadata, name):
            return RetrievalStatus.USED
    usage = reading.get(body, "usageMetadata", dict, "") or {}
    tool_tokens = reading.get(usage, "toolUsePromptTokenCount", int, "usageMetadata") or 0
    return RetrievalStatus.UNKNOWN if tool_tokens > 0 else RetrievalStatus.NOT_USED


# -- reader ---------------------------------------------------------------------------------------------------


def _read_payload(payload: Any, reading: _Reading) -> ParsedAnswer:
    body = reading.check(payload, dict, "")
    model = reading.get(body, "modelVersion", str, "")
    question_id = reading.get(body, "question_id", str, "")
    answer_id = reading.get(body, "answer_id", str, "")
    found = reading.get(body, "candidates", list, "") or []
    candidate = reading.check(found[0], dict, "candidates[0]") if found else None
    text, parts = _parts(candidate, reading) if candidate is not None else ("", {})
    if not text.strip():
        failure = _failure(body, candidate, reading)
        return ParsedAnswer(
            "", status=AnswerStatus.FAILED, failure=failure, model=model, question_id=question_id, answer_id=answer_id
        )
    assert candidate is not None
    path = "candidates[0].groundingMetadata"
    metadata = reading.get(candidate, "groundingMetadata", dict, "candidates[0]") or {}
    notes: list[str] = []
    chunks = _chunks(metadata, path, reading, notes)
    grounded = _supports(metadata, path, chunks, parts, text, reading)
    queries = reading.get(metadata, "webSearchQueries", list, path) or []
    cut_off = reading.get(candidate, "finishReason", str, "candidates[0]") == "MAX_TOKENS"
    fetched, failed = _url_context(candidate, reading)
    retrieval = _retrieval(body, metadata, path, reading)
    reason = (
        "usageMetadata.toolUsePromptTokenCount shows a search, but no grounding metadata came back"
        if retrieval is RetrievalStatus.UNKNOWN
        else None
    )
    if fetched and retrieval is not RetrievalStatus.USED:
        retrieval, reason = RetrievalStatus.USED, None
    elif failed and retrieval is not RetrievalStatus.USED:
        retrieval, reason = RetrievalStatus.FAILED, "urlContextMetadata: " + ", ".join(dict.fromkeys(failed))
    pages = (ParsedCitation(url, kind=CitationKind.RETRIEVED) for url in fetched)
    return ParsedAnswer(
        status=AnswerStatus.INCOMPLETE if cut_off else AnswerStatus.COMPLETE,
        failure=CUT_OFF.format(reason="finishReason MAX_TOKENS") if cut_off else None,
        text=text,
        citations=(*grounded.citations, *retrieved_only(pages, grounded.citations)),
        claims=candidates(text, grounded.spans),
        retrieval=retrieval,
        retrieval_reason=reason,
        model=model,
        question_id=question_id,
        answer_id=answer_id,
        queries=tuple(reading.check(q, str, f"{path}.webSearchQueries[{k}]") for k, q in enumerate(queries)),
        notes=tuple(notes),
    )


def read_generate_content(payload: Any, source: str, where: str) -> ParsedAnswer:
    """The answer in one ``generateContent`` response (``where`` names it in ``source``: ``$`` for a whole
    document)."""
    return _read_payload(payload, _Reading(source, where))


def read_answers(data: bytes, source: str) -> Iterator[ParsedAnswer]:
    """Every answer in a Gemini payload file (one response, a JSON list, or JSON Lines), the chunks of a streamed
    response (an event stream, or a JSON list of chunks sharing a ``responseId``) read as one response."""
    return (
        cut_short(_read_payload(payload, _Reading(source, where)), cut)
        for where, payload, cut in load_responses(data, source, "gemini")
    )


_SSE = "Server-Sent Events as sent (data: lines, event: names, [DONE]) or one event's JSON per line"

READER = Reader(
    name="gemini",
    description="Gemini API generateContent responses grounded with Google Search (groundingMetadata)",
    can_read=can_read,
    read_answers=read_answers,
    reads=(
        "generateContent responses of the Gemini API and Vertex AI (and reassembled streamGenerateContent): "
        "groundingChunks web and retrievedContext (Vertex AI Search, RAG Engine, File Search: a chunk without uri "
        "is a document source) and maps, groundingSupports with or without partIndex (Gemini 3 toolCall / "
        "toolResponse parts before the text; offsets across several text parts), urlContextMetadata (pages the "
        "URL context tool fetched are retrieved), thought parts left out, REST camelCase and SDK snake_case names"
    ),
    positionless="none occur: every support has a segment; chunks no support cites are retrieved, not cited",
    streams=(
        "streamGenerateContent: chunks up to the one with a finishReason, text parts joined, groundingMetadata from "
        f"the last chunk; {_SSE} (alt=sse), or a JSON array of chunks sharing a responseId"
    ),
)
