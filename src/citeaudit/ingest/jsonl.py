"""Reader for plain answers, one JSON object per line.

Each line: ``{"text": …, "citations": [URL or {"url", "title"}…]}`` with optional ``id``, ``question_id``,
``platform`` and ``model``. ``[n]`` markers in the text point 1-based into ``citations``; without markers the
citations belong to the answer as a whole (cited sources, no claim candidates). Unknown keys are refused, so a
misspelt field is an error rather than a silently dropped value.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from citeaudit.core.errors import InvalidValue
from citeaudit.core.model import CitationKind, RetrievalStatus
from citeaudit.ingest.base import ANSWER_LEVEL, ParsedAnswer, ParsedCitation, Reader
from citeaudit.ingest.markers import SourceEntry, cite_markers, numbered
from citeaudit.ingest.payload import expect, load_payloads
from citeaudit.ingest.shape import Shape, shape_of

__all__ = ["READER", "read_answers"]

_KEYS = frozenset({"id", "question_id", "platform", "model", "text", "citations"})


def can_read(content: bytes | Shape) -> bool:
    """A first line that is a JSON object with ``text`` and ``citations`` keys, no ``format`` and no ``type`` at
    any depth (engine payloads, e.g. Anthropic messages, carry typed blocks)."""
    shape = shape_of(content)
    if shape.listed or not {"text", "citations"} <= shape.fields() or "format" in shape.fields():
        return False
    return not shape.any_path(lambda path: path == "type" or path.endswith(".type"))


def _entry(value: Any, source: str, where: str) -> SourceEntry:
    if isinstance(value, str):
        return value, None
    item = expect(value, dict, source, where)
    unknown = set(item) - {"url", "title"}
    if unknown:
        raise InvalidValue(source, f"{where}.{sorted(unknown)[0]}", "unknown key (expected url, title)")
    url = item.get("url")
    title = item.get("title")
    if url is None and title is None:
        raise InvalidValue(source, where, f"needs a url or a title (got {value!r})")
    return (
        expect(url, str, source, f"{where}.url") if url is not None else None,
        expect(title, str, source, f"{where}.title") if title is not None else None,
    )


def _optional_text(line: dict[str, Any], key: str, source: str, where: str) -> str | None:
    value = line.get(key)
    return None if value is None else str(expect(value, str, source, f"{where}.{key}"))


def read_answers(data: bytes, source: str) -> Iterator[ParsedAnswer]:
    """One answer per line, read as the lines are."""
    for where, line in load_payloads(data, source):
        line = expect(line, dict, source, where)
        unknown = set(line) - _KEYS
        if unknown:
            key = sorted(unknown)[0]
            raise InvalidValue(source, f"{where}: {key}", f"unknown key; expected {', '.join(sorted(_KEYS))}")
        text = expect(line.get("text"), str, source, f"{where}: text")
        entries = [
            _entry(value, source, f"{where}: citations[{i}]")
            for i, value in enumerate(expect(line.get("citations", []), list, source, f"{where}: citations"))
        ]
        citations, claims, referenced = cite_markers(text, numbered(entries))
        for number, (url, title) in enumerate(entries, start=1):
            if number not in referenced:
                citations.append(ParsedCitation(url, title, None, CitationKind.CITED))
        yield ParsedAnswer(
            text=text,
            citations=tuple(citations),
            claims=claims,
            retrieval=RetrievalStatus.UNKNOWN,
            platform=_optional_text(line, "platform", source, where),
            model=_optional_text(line, "model", source, where),
            question_id=_optional_text(line, "question_id", source, where),
            answer_id=_optional_text(line, "id", source, where),
        )


READER = Reader(
    name="jsonl",
    description='one answer per line: {"text", "citations": [URL or {url, title}], "id"?, "question_id"?, '
    '"platform"?, "model"?}',
    can_read=can_read,
    read_answers=read_answers,
    generic=True,
    reads='one {"text", "citations"} object per line, [n] markers into citations',
    positionless=f"citations no [n] marker points to are {ANSWER_LEVEL}",
)
