"""Reader for Google AI Overviews as SerpApi returns them (``engine=google`` or ``engine=google_ai_overview``).

An ``ai_overview`` holds ``text_blocks[]`` (paragraphs, headings, lists whose items may nest further lists,
and variants such as ``expandable`` that carry ``text_blocks`` of their own) and ``references[]``
(``{title, link, snippet, source, index}``). A block's ``reference_indexes`` name references by their
``index`` field, not by their position in the list.

The answer text is built from the snippets in reading order: headings and paragraphs separated by a blank
line, list items each on their own line after ``- `` (indented two spaces per nesting level). Each snippet
that carries ``reference_indexes`` is one claim candidate with one citation per index; an index no reference
has is a dangling citation; references nothing points to are retrieved.

Decisions where the documentation is silent:

- a list item's ``title`` and ``snippet`` form one line (``title snippet``) and one claim span, because the
  title is often the claim's subject (``AX220: 20 L tank``);
- a block's own ``title`` (e.g. an ``expandable`` section's header) is a heading of its own; the block's
  ``reference_indexes`` attach to its snippet when it has one, else to its table, else to its title;
- a ``table`` given as rows of cells is rendered one row per line, cells separated by `` | ``;
- no ``ai_overview`` is a failed answer ("no AI Overview shown", with SerpApi's ``error`` when given); an
  ``ai_overview`` with only a ``page_token`` is incomplete; one with an ``error`` or without any text is
  failed;
- retrieval is ``used`` when the overview lists references, else ``unknown`` (SerpApi does not say);
- optional top-level ``question_id`` / ``answer_id`` strings (written by a collector) are passed on.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from citeaudit.core.errors import InvalidValue
from citeaudit.core.model import AnswerStatus, CitationKind, RetrievalStatus
from citeaudit.ingest.base import ParsedAnswer, ParsedCitation, Reader
from citeaudit.ingest.payload import expect, load_payloads, once_each
from citeaudit.ingest.shape import Shape, shape_of
from citeaudit.ingest.text import candidates, trim_span

__all__ = ["PAGE_TOKEN_ONLY", "PLATFORM", "READER", "can_read", "read_answers"]

PLATFORM = "google-ai-overview"
"""Platform of every answer this reader returns."""

PAGE_TOKEN_ONLY = "page_token only: fetch engine=google_ai_overview within 4 minutes"
"""Failure recorded for an AI Overview that Google loads lazily (only its page token is in the payload)."""

_GOOGLE_ENGINES = frozenset({"google", "google_ai_overview"})
_ENGINE_PATHS = ("search_parameters.engine", "search_metadata.engine", "engine")
_CELL_SEPARATOR = " | "


def can_read(content: bytes | Shape) -> bool:
    """A SerpApi ``engine=google`` / ``google_ai_overview`` response (one without an AI Overview records that
    none was shown), an ``ai_overview`` key, or ``text_blocks`` with ``reference_indexes``; never a SerpApi
    response of another engine (Bing Copilot and Google AI Mode answers have text blocks too)."""
    shape = shape_of(content)
    engines = frozenset().union(*(shape.values(path) for path in _ENGINE_PATHS))
    if engines:
        return bool(engines & _GOOGLE_ENGINES)
    if "ai_overview" in shape.fields():
        return True
    return shape.any_path(lambda path: "text_blocks" in path) and shape.any_path(
        lambda path: path.endswith("reference_indexes")
    )


def _at(where: str, path: str) -> str:
    """A location such as ``line 3: ai_overview.text_blocks[4]`` (no prefix for a single JSON document)."""
    if not path:
        return where
    return path if where == "$" else f"{where}: {path}"


# -- answer text ----------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Cited:
    """A piece of the answer text and the reference indexes attached to it."""

    start: int
    end: int
    indexes: list[int]


@dataclass(slots=True)
class _Overview:
    """The answer text as it is built, and the spans that cite references."""

    source: str
    where: str
    pieces: list[str] = field(default_factory=list)
    length: int = 0
    cited: list[_Cited] = field(default_factory=list)

    def check(self, value: Any, kind: type | tuple[type, ...], path: str) -> Any:
        """``value`` checked to be of ``kind``; the error names ``path``."""
        return expect(value, kind, self.source, _at(self.where, path))

    def optional(self, mapping: dict[str, Any], name: str, kind: type, path: str) -> Any:
        """``mapping[name]`` checked to be of ``kind``, or ``None`` when absent."""
        value = mapping.get(name)
        return None if value is None else self.check(value, kind, f"{path}.{name}" if path else name)

    def emit(self, separator: str, body: str) -> tuple[int, int]:
        """Append ``body`` after ``separator`` (no separator at the very start); its span."""
        if self.length:
            self.pieces.append(separator)
            self.length += len(separator)
        start = self.length
        self.pieces.append(body)
        self.length += len(body)
        return start, self.length

    def indexes(self, mapping: dict[str, Any], path: str) -> list[int]:
        """The ``reference_indexes`` of a block or list item."""
        values = self.optional(mapping, "reference_indexes", list, path) or []
        return [self.check(v, int, f"{path}.reference_indexes[{k}]") for k, v in enumerate(values)]

    def cite(self, span: tuple[int, int] | None, indexes: list[int]) -> None:
        """Attach reference indexes to a span of the text."""
        if span is not None and indexes:
            self.cited.append(_Cited(span[0], span[1], indexes))

    @property
    def text(self) -> str:
        """The answer text built so far."""
        return "".join(self.pieces)


def _table(rows: Any) -> str | None:
    """A table given as rows of cells, one row per line; anything else is not rendered."""
    if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
        return None
    lines = [_CELL_SEPARATOR.join(str(cell) for cell in row if cell is not None) for row in rows]
    return "\n".join(line for line in lines if line.strip()) or None


def _blocks(overview: _Overview, blocks: Any, path: str) -> None:
    for i, block in enumerate(overview.check(blocks, list, path)):
        _block(overview, overview.check(block, dict, f"{path}[{i}]"), f"{path}[{i}]")


def _block(overview: _Overview, block: dict[str, Any], path: str) -> None:
    """One text block: its title, snippet and table, then its list and nested blocks."""
    title = overview.optional(block, "title", str, path)
    snippet = overview.optional(block, "snippet", str, path)
    spans = [
        overview.emit("\n\n", body) if body and body.strip() else None
        for body in (title, snippet, _table(block.get("table")))
    ]
    target = spans[1] or spans[2] or spans[0]
    overview.cite(target, overview.indexes(block, path))
    if block.get("list") is not None:
        _items(overview, block["list"], f"{path}.list", 0)
    if block.get("text_blocks") is not None:
        _blocks(overview, block["text_blocks"], f"{path}.text_blocks")


def _items(overview: _Overview, items: Any, path: str, depth: int) -> None:
    """List items, each on its own line; nested lists one level deeper."""
    for i, item in enumerate(overview.check(items, list, path)):
        here = f"{path}[{i}]"
        entry = overview.check(item, dict, here)
        words = [overview.optional(entry, name, str, here) for name in ("title", "snippet")]
        body = " ".join(w.strip() for w in words if w and w.strip())
        span = overview.emit("\n" + "  " * depth + "- ", body) if body else None
        overview.cite(span, overview.indexes(entry, here))
        if entry.get("list") is not None:
            _items(overview, entry["list"], f"{here}.list", depth + 1)
        if entry.get("text_blocks") is not None:
            _blocks(overview, entry["text_blocks"], f"{here}.text_blocks")


# -- references -----------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Reference:
    """One reference card."""

    url: str | None
    title: str | None
    publisher: str | None


def _references(overview: _Overview, references: Any, path: str) -> tuple[list[_Reference], dict[int, int]]:
    """The references in order, and their positions by ``index``."""
    found: list[_Reference] = []
    by_index: dict[int, int] = {}
    for i, item in enumerate(overview.check(references, list, path)):
        here = f"{path}[{i}]"
        entry = overview.check(item, dict, here)
        url = overview.optional(entry, "link", str, here) or None
        title = overview.optional(entry, "title", str, here) or None
        if url is None and title is None:
            raise InvalidValue(overview.source, _at(overview.where, here), "has neither link nor title")
        index = overview.optional(entry, "index", int, here)
        if index is not None:
            if index in by_index:
                # Two references under one index: which one a block cites would be a guess.
                raise InvalidValue(
                    overview.source,
                    _at(overview.where, f"{here}.index"),
                    f"index {index!r} is also the index of {path}[{by_index[index]}]",
                )
            by_index[index] = len(found)
        found.append(_Reference(url, title, overview.optional(entry, "source", str, here) or None))
    return found, by_index


def _citations(
    overview: _Overview, text: str, references: list[_Reference], by_index: dict[int, int]
) -> tuple[list[ParsedCitation], list[tuple[int, int, int]]]:
    citations: list[ParsedCitation] = []
    spans: list[tuple[int, int, int]] = []
    cited: set[int] = set()
    for piece in overview.cited:
        start, end = trim_span(text, piece.start, piece.end)
        for index in piece.indexes:
            position = by_index.get(index)
            if position is None:
                citation = ParsedCitation(None, kind=CitationKind.DANGLING, start=start, end=end)
            else:
                cited.add(position)
                ref = references[position]
                citation = ParsedCitation(ref.url, ref.title, start=start, end=end, publisher=ref.publisher)
            spans.append((start, end, len(citations)))
            citations.append(citation)
    for position, ref in enumerate(references):
        if position not in cited:
            citations.append(ParsedCitation(ref.url, ref.title, kind=CitationKind.RETRIEVED, publisher=ref.publisher))
    return citations, spans


# -- reader ---------------------------------------------------------------------------------------------------


def _not_answered(status: AnswerStatus, failure: str, ids: tuple[str | None, str | None]) -> ParsedAnswer:
    return ParsedAnswer("", status=status, failure=failure, platform=PLATFORM, question_id=ids[0], answer_id=ids[1])


def _read_payload(payload: Any, source: str, where: str) -> ParsedAnswer:
    built = _Overview(source, where)
    body = built.check(payload, dict, "")
    ids = (built.optional(body, "question_id", str, ""), built.optional(body, "answer_id", str, ""))
    path = "ai_overview"
    found = body.get("ai_overview")
    if found is None and ("text_blocks" in body or "references" in body):
        path, found = "", body  # an engine=google_ai_overview response may carry the overview's fields at the top
    if found is None:
        error = body.get("error")
        return _not_answered(AnswerStatus.FAILED, "no AI Overview shown" + (f" ({error})" if error else ""), ids)
    overview = built.check(found, dict, path)
    if overview.get("error"):
        return _not_answered(AnswerStatus.FAILED, f"AI Overview error: {overview['error']}", ids)
    blocks = overview.get("text_blocks")
    if not blocks and overview.get("page_token"):
        return _not_answered(AnswerStatus.INCOMPLETE, PAGE_TOKEN_ONLY, ids)
    prefix = f"{path}." if path else ""
    if blocks is not None:
        _blocks(built, blocks, f"{prefix}text_blocks")
    text = built.text
    if not text.strip():
        return _not_answered(AnswerStatus.FAILED, "empty AI Overview", ids)
    references, by_index = _references(built, overview.get("references") or [], f"{prefix}references")
    citations, spans = _citations(built, text, references, by_index)
    return ParsedAnswer(
        text=text,
        citations=tuple(citations),
        claims=candidates(text, spans),
        retrieval=RetrievalStatus.USED if references else RetrievalStatus.UNKNOWN,
        platform=PLATFORM,
        question_id=ids[0],
        answer_id=ids[1],
    )


def read_answers(data: bytes, source: str) -> Iterator[ParsedAnswer]:
    """Every AI Overview in a SerpApi payload file (one response, a JSON list, or JSON Lines)."""
    return (_read_payload(payload, source, where) for where, payload in once_each(load_payloads(data, source), source))


READER = Reader(
    name="serpapi-ai-overview",
    description="Google AI Overviews from SerpApi (engine=google ai_overview, or engine=google_ai_overview)",
    can_read=can_read,
    read_answers=read_answers,
    reads=(
        "SerpApi engine=google responses with ai_overview (no overview: a failed answer; page_token only: "
        "incomplete) and engine=google_ai_overview responses: paragraphs, headings, nested lists, tables, "
        "expandable blocks"
    ),
    positionless="none occur: references no text block points to are retrieved",
)
