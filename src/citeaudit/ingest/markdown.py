"""Reader for Markdown answers: text with ``[n]`` markers and a numbered reference list.

Reference lines look like ``[1]: https://…``, ``[1] https://… "Title"`` or ``1. https://…``. The stored answer
is the whole document, verbatim; markers are looked for in the body above the reference list only. A listed
reference that no marker points to is still shown to the reader, so it stays a cited source (without a claim).
"""

from __future__ import annotations

import re

from citeaudit.core.errors import InvalidValue, MalformedInput
from citeaudit.core.model import CitationKind, RetrievalStatus
from citeaudit.ingest.base import ANSWER_LEVEL, ParsedAnswer, ParsedCitation, Reader
from citeaudit.ingest.markers import cite_markers
from citeaudit.ingest.shape import Shape, shape_of

__all__ = ["READER", "read_answers"]

_REFERENCE = re.compile(
    r"""^[ \t]*(?:\[(?P<n>\d{1,4})\]:?|(?P<m>\d{1,4})[.)])[ \t]+
        <?(?P<url>https?://[^\s>]+)>?
        (?:[ \t]+(?:"(?P<t1>[^"]*)"|'(?P<t2>[^']*)'|\((?P<t3>[^)]*)\)|[-–—][ \t]*(?P<t4>.+?)))?[ \t]*$""",
    re.MULTILINE | re.VERBOSE,
)


def can_read(content: bytes | Shape) -> bool:
    """Markdown answers are text, not JSON, with at least one reference line in their first bytes."""
    shape = shape_of(content)
    if shape.json:
        return False
    return _REFERENCE.search(shape.head.decode("utf-8", "replace")) is not None


def read_answers(data: bytes, source: str) -> list[ParsedAnswer]:
    """One answer per file."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise MalformedInput(source, f"byte {exc.start}", "not UTF-8 text") from None
    references: dict[int, tuple[str, str | None, int, int]] = {}
    body_end = len(text)
    for match in _REFERENCE.finditer(text):
        number = int(match.group("n") or match.group("m"))
        if number in references:
            line = text.count("\n", 0, match.start()) + 1
            raise InvalidValue(source, f"line {line}", f"reference [{number}] is listed twice")
        title = next((match.group(g) for g in ("t1", "t2", "t3", "t4") if match.group(g)), None)
        references[number] = (match.group("url"), title, match.start(), match.end())
        body_end = min(body_end, match.start())

    def lookup(number: int) -> tuple[str | None, str | None] | None:
        found = references.get(number)
        return None if found is None else (found[0], found[1])

    citations, claims, referenced = cite_markers(text, lookup, body_end)
    for number, (url, title, start, end) in sorted(references.items()):
        if number not in referenced:
            citations.append(ParsedCitation(url, title, f"[{number}]", CitationKind.CITED, start, end))
    return [
        ParsedAnswer(
            text=text,
            citations=tuple(citations),
            claims=claims,
            retrieval=RetrievalStatus.UNKNOWN,
        )
    ]


READER = Reader(
    name="markdown",
    description='Markdown answer with [n] markers and a numbered reference list ([n]: URL or [n] URL "title")',
    can_read=can_read,
    read_answers=read_answers,
    generic=True,
    media_type="text/markdown",
    reads="a Markdown answer with [n] markers and a numbered reference list",
    positionless=f"listed references no marker points to are {ANSWER_LEVEL}",
)
