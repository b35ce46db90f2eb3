"""Loading engine payload files: one JSON document, or JSON Lines with one payload per line."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from itertools import chain
from typing import Any

from citeaudit.errors import InvalidValue, MalformedInput
from citeaudit.ingest.base import ParsedCitation
from citeaudit.limits import load_json
from citeaudit.sources.urls import identity_url

__all__ = ["AGENT_ITEM", "RESPONSE_OBJECT", "VENDOR_MODEL", "expect", "load_payloads", "retrieved_only"]

RESPONSE_OBJECT = re.compile(rb'"object"\s*:\s*"response"')
"""A Responses-shaped body (OpenAI's, and Perplexity's Agent API)."""
AGENT_ITEM = re.compile(rb'"type"\s*:\s*"(?:search_results|fetch_url_results)"')
"""An output item only Perplexity's Agent API writes."""
VENDOR_MODEL = re.compile(rb'"model"\s*:\s*"[^"/]+/')
"""A ``vendor/model`` model name: Perplexity's Agent API presets; OpenAI's own names have no slash."""


def load_payloads(data: bytes, source: str) -> Iterator[tuple[str, Any]]:
    """``(location, payload)`` pairs: ``("$", doc)`` for one JSON document, ``("line N", doc)`` for JSON Lines.

    A JSON document that is a list yields one payload per element (``"[i]"``). JSON Lines are split at line
    feeds only (a JSON string may hold U+2028 and other characters ``str.splitlines`` breaks at) and parsed one
    at a time as they are read, so a large file never holds every parsed payload at once.
    """
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise MalformedInput(source, f"byte {exc.start}", "not UTF-8 text") from None
    try:
        whole = load_json(text, source)
    except MalformedInput as first_error:
        if not _syntax(first_error):
            raise
        yield from _json_lines(text, source, first_error)
        return
    if isinstance(whole, list):
        yield from ((f"[{i}]", item) for i, item in enumerate(whole))
        return
    yield ("$", whole)


def _syntax(error: MalformedInput) -> bool:
    """Whether ``error`` is a JSON syntax error (so the text may still be JSON Lines), not a broken limit."""
    return isinstance(error.__cause__, json.JSONDecodeError)


_NOT_JSON = object()


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of the lines that are not blank, split at line feeds."""
    start, number, length = 0, 0, len(text)
    while start < length:
        end = text.find("\n", start)
        if end < 0:
            end = length
        number += 1
        line = text[start:end]
        if line.strip():
            yield number, line
        start = end + 1


def _json_lines(text: str, source: str, first_error: MalformedInput) -> Iterator[tuple[str, Any]]:
    lines = _lines(text)
    first, second = next(lines, None), next(lines, None)
    parsed: Any = _NOT_JSON
    if first is not None and second is not None:
        try:
            parsed = load_json(first[1], source, f"line {first[0]}")
        except MalformedInput as exc:
            if not _syntax(exc):
                raise
    if first is None or second is None or parsed is _NOT_JSON:
        # Not JSON Lines either: report the error where the whole document broke.
        raise first_error
    yield f"line {first[0]}", parsed
    for number, line in chain((second,), lines):
        yield f"line {number}", load_json(line, source, f"line {number}")


def retrieved_only(retrieved: Iterable[ParsedCitation], cited: Iterable[ParsedCitation]) -> list[ParsedCitation]:
    """Retrieved-only citations: each page once, pages also cited left out (compared by source identity)."""
    seen = {_identity(citation.url) for citation in cited if citation.url}
    found = []
    for citation in retrieved:
        key = _identity(citation.url or "")
        if key and key not in seen:
            seen.add(key)
            found.append(citation)
    return found


def _identity(url: str) -> str:
    # A URL that cannot be taken apart is kept as it is: the citation's source key, made later with the
    # citation's location at hand, refuses it there.
    try:
        return identity_url(url)
    except ValueError:
        return url


def expect(value: Any, kind: type | tuple[type, ...], source: str, location: str) -> Any:
    """``value`` if it is of ``kind``; otherwise an :class:`InvalidValue` naming the location and the value."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    # JSON's true and false are not numbers, though Python's bool is an int.
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in kinds):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
        raise InvalidValue(source, location, f"expected {names} (got {shown})")
    return value
