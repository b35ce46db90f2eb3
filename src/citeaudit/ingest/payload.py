"""Loading engine payload files: one JSON document, JSON Lines with one payload per line, or a saved event stream."""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterable, Iterator
from itertools import chain
from typing import TYPE_CHECKING, Any, TypeVar

from citeaudit.core.errors import InputError, InvalidValue, MalformedInput
from citeaudit.core.identity import document_key, identity_url
from citeaudit.core.limits import UNPARSED, load_json, quick_json, shown
from citeaudit.core.model import AnswerStatus
from citeaudit.ingest.base import ParsedAnswer, ParsedCitation
from citeaudit.ingest.shape import Shape

if TYPE_CHECKING:
    from citeaudit.ingest.streams import Reassembled

__all__ = [
    "agent_response",
    "cut_short",
    "expect",
    "load_payloads",
    "load_responses",
    "once_each",
    "retrieved_only",
    "sonar_traits",
    "vendor_model",
]

_AGENT_ITEMS = frozenset({"search_results", "fetch_url_results"})
"""Output items only Perplexity's Agent API writes."""


def vendor_model(shape: Shape) -> bool:
    """A ``vendor/model`` model name: Perplexity's Agent API presets; OpenAI's own names have no slash."""
    return any("/" in model for model in shape.values("model"))


_SONAR_USAGE = ("usage.search_context_size", "usage.citation_tokens", "usage.num_search_queries")


def sonar_traits(shape: Shape) -> bool:
    """A Perplexity Sonar chat completion even without ``search_results`` or ``citations`` (an answer that cites
    nothing): a ``sonar…`` model name, or the search fields only Sonar writes into ``usage``."""
    if any(model.startswith("sonar") for model in shape.values("model")):
        return True
    return any(shape.has(path) for path in _SONAR_USAGE)


def agent_response(shape: Shape) -> bool:
    """A Perplexity Agent API response: an output item only it writes, or a ``response`` object (the Responses
    envelope) from a ``vendor/model`` model (a failed run has no output items)."""
    if shape.values("output[].type") & _AGENT_ITEMS:
        return True
    return shape.value_is("object", "response") and vendor_model(shape)


def load_payloads(data: bytes, source: str) -> Iterator[tuple[str, Any]]:
    """``(location, payload)`` pairs: ``("$", doc)`` for one JSON document, ``("line N", doc)`` for JSON Lines.

    A JSON document that is a list yields one payload per element (``"[i]"``). JSON Lines are split at line
    feeds only (a JSON string may hold U+2028 and other characters ``str.splitlines`` breaks at) and parsed one
    at a time as they are read, so a large file never holds every parsed payload at once.
    """
    return _payloads(data, source)


_Located = TypeVar("_Located", bound=tuple[Any, ...])


def once_each(responses: Iterable[_Located], source: str) -> Iterator[_Located]:
    """``responses`` (``(location, payload, ...)`` each, whole responses, not stream chunks) with the same response
    given twice refused at its second place, by the engine's own id (``id``, ``responseId``,
    ``search_metadata.id``): stored twice, it would count twice in every denominator."""
    seen: dict[str, str] = {}
    for response in responses:
        location = response[0]
        found = _response_id(response[1])
        if found is not None and seen.setdefault(found, location) != location:
            raise _twice(source, location, found, seen[found])
        yield response


def _twice(source: str, location: str, found: str, first: str) -> InvalidValue:
    return InvalidValue(source, location, f"response {shown(found, 60)} is also at {first}: one response given twice")


def _whole_responses(payloads: Iterable[tuple[str, Any]], source: str) -> Iterator[Reassembled]:
    """:func:`once_each` of ``payloads`` (whole responses), each as the
    :class:`~citeaudit.ingest.streams.Reassembled` it is: one step for each, as a large JSON Lines file holds
    hundreds of thousands of them."""
    from citeaudit.ingest.streams import Reassembled

    seen: dict[str, str] = {}
    new = tuple.__new__  # the named tuple made as the tuple it is: its own constructor is Python code
    for location, payload in payloads:
        found = _response_id(payload)
        if found is not None and seen.setdefault(found, location) != location:
            raise _twice(source, location, found, seen[found])
        yield new(Reassembled, (location, payload, None))


def _response_id(payload: Any) -> str | None:
    """The engine's own id of one payload, when it gives one."""
    if not isinstance(payload, dict):
        return None
    for key in ("id", "responseId"):
        value = payload.get(key)
        if isinstance(value, str) and value:
            return value
    metadata = payload.get("search_metadata")
    value = metadata.get("id") if isinstance(metadata, dict) else None
    return value if isinstance(value, str) and value else None


def _payloads(data: bytes, source: str) -> Iterator[tuple[str, Any]]:
    # Bytes that are not UTF-8 are refused here, wherever they are, before any line is read.
    try:
        whole = load_json(data, source)
    except MalformedInput as first_error:
        if not _syntax(first_error):
            raise
        yield from _json_lines(data, source, first_error)
        return
    if isinstance(whole, list):
        yield from ((f"[{i}]", item) for i, item in enumerate(whole))
        return
    yield ("$", whole)


def load_responses(data: bytes, source: str, protocol: str) -> Iterator[Reassembled]:
    """The responses of one engine ``protocol`` a file holds, as :func:`load_payloads` gives them, or put back
    together from the saved event stream the file holds (Server-Sent Events, one event per line, or a JSON list of
    events; see :mod:`citeaudit.ingest.streams`)."""
    from citeaudit.ingest.events import Events, sse_like
    from citeaudit.ingest.streams import event_of, gemini_chunks, reassemble

    # Each whole response once (a stream's chunks share their response's id until they are put together).
    if sse_like(data[:4096]):
        yield from once_each(reassemble(protocol, Events(data, source)), source)
        return
    if event_of(protocol, _first_line(data)):
        # one event per line; the last may be cut
        yield from once_each(reassemble(protocol, Events(data, source)), source)
        return
    payloads = load_payloads(data, source)
    first = next(payloads, None)
    if first is None:
        return
    every = chain((first,), payloads)
    if event_of(protocol, first[1]):
        yield from once_each(reassemble(protocol, Events.of(every, source)), source)
    elif protocol == "gemini":
        yield from once_each(gemini_chunks(every, source, stream=False), source)
    else:
        yield from _whole_responses(every, source)


_EVENT_LINE = 1 << 20


def _first_line(data: bytes) -> Any:
    """The JSON value on the first line that is not blank, when that line is one of at most a mebibyte (else
    ``None``): a single-line document of any size is not parsed twice (a list of events, or events larger than
    that, are still recognised once parsed as payloads)."""
    start = len(data) - len(data.lstrip())
    end = data.find(b"\n", start, start + _EVENT_LINE + 1)
    if end < 0 and len(data) - start > _EVENT_LINE:
        return None
    line = data[start : end if end >= 0 else len(data)].strip()
    if not line.startswith(b"{") or not line.endswith(b"}"):
        return None
    try:
        return load_json(line, "")
    except InputError:
        return None


def cut_short(answer: ParsedAnswer, cut: str | None) -> ParsedAnswer:
    """``answer`` as read from a stream that ended before its final event (``cut`` says where): incomplete, with
    that reason; failed when the stream gave no answer text before it ended."""
    if cut is None:
        return answer
    status = AnswerStatus.INCOMPLETE if answer.text.strip() else AnswerStatus.FAILED
    return answer._replace(status=status, failure=cut)


def _syntax(error: MalformedInput) -> bool:
    """Whether ``error`` is a JSON syntax error (so the text may still be JSON Lines), not a broken limit."""
    return isinstance(error.__cause__, json.JSONDecodeError)


_NOT_JSON = object()


def _lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    """``(line number, line)`` of the lines of UTF-8 ``data`` that are not blank (white space only, as
    ``str.isspace`` has it), split at line feeds, a leading byte order mark left out. The lines stay bytes: jiter
    reads them as they are."""
    start = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    number, length = 0, len(data)
    while start < length:
        end = data.find(b"\n", start)
        if end < 0:
            end = length
        number += 1
        line = data[start:end]
        start = end + 1
        # a line that opens with a printable ASCII character is no blank one (nearly every line of JSON Lines)
        if line and (0x20 < line[0] < 0x7F or not _blank(line)):
            yield number, line


def _blank(line: bytes) -> bool:
    """Whether a line of UTF-8 is white space only, as ``str.isspace`` has it."""
    words = line.lstrip()  # ASCII white space
    # what str.isspace also calls white space starts with a byte of 0x1c-0x1f or of a multibyte character
    return not words or (
        not (0x20 < words[0] < 0x7F or words[0] < 0x1C or words[0] == 0x7F) and not line.decode().strip()
    )


def _json_lines(data: bytes, source: str, first_error: MalformedInput) -> Iterator[tuple[str, Any]]:
    lines = _lines(data)
    first, second = next(lines, None), next(lines, None)
    parsed: Any = _NOT_JSON
    if first is not None and second is not None:
        try:
            parsed = load_json(first[1], source, f"line {first[0]}", bom=False)
        except MalformedInput as exc:
            if not _syntax(exc):
                raise
    if first is None or second is None or parsed is _NOT_JSON:
        # Not JSON Lines either: report the error where the whole document broke.
        raise first_error
    yield f"line {first[0]}", parsed
    # load_json's common case (a line jiter takes, within the limits) without its steps in between, as a large file
    # has hundreds of thousands of lines
    for number, line in chain((second,), lines):
        location = f"line {number}"
        value = quick_json(line)
        yield location, value if value is not UNPARSED else load_json(line, source, location, bom=False)


def _identity(citation: ParsedCitation) -> str:
    if citation.document is not None and not citation.answer_scoped:
        return document_key(citation.document)
    url = citation.url or ""
    # A URL that cannot be taken apart is kept as it is: the citation's source key, made later with the
    # citation's location at hand, refuses it there.
    try:
        return identity_url(url)
    except ValueError:
        return url


def retrieved_only(retrieved: Iterable[ParsedCitation], cited: Iterable[ParsedCitation]) -> list[ParsedCitation]:
    """Retrieved-only citations: each page (or document) once, those also cited left out (compared by source
    identity)."""
    seen = {_identity(citation) for citation in cited if citation.url or citation.document}
    found = []
    for citation in retrieved:
        key = _identity(citation)
        if key and key not in seen:
            seen.add(key)
            found.append(citation)
    return found


def expect(value: Any, kind: type | tuple[type, ...], source: str, location: str) -> Any:
    """``value`` if it is of ``kind``; otherwise an :class:`InvalidValue` naming the location and the value."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    # JSON's true and false are not numbers, though Python's bool is an int.
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in kinds):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
        raise InvalidValue(source, location, f"expected {names} (got {shown})")
    return value
