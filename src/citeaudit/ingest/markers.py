"""Numbered ``[n]`` markers mapped to a numbered source list: shared by the readers whose answers cite that way
(Perplexity Sonar, Markdown answers, JSON Lines answers, ExpertQA)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from citeaudit.core.model import CitationKind
from citeaudit.ingest.base import ClaimCandidate, ParsedCitation
from citeaudit.ingest.text import MARKER, SentenceIndex, candidates

__all__ = ["SourceEntry", "cite_markers", "numbered"]

SourceEntry = tuple[str | None, str | None]
"""``(url, title)`` of one entry of a numbered source list."""


def cite_markers(
    text: str,
    lookup: Callable[[int], SourceEntry | None],
    body_end: int | None = None,
) -> tuple[list[ParsedCitation], tuple[ClaimCandidate, ...], set[int]]:
    """Citations and claim candidates for every ``[n]`` marker in ``text[:body_end]``.

    ``lookup(n)`` gives the source behind marker ``n`` or ``None`` when the marker points past the list (a
    *dangling* citation: kept and counted, never an edge). Each marker's claim is the sentence it stands in
    (a marker right after the closing punctuation belongs to that sentence). Returns the citations, the claim
    candidates and the set of numbers referenced.
    """
    limit = len(text) if body_end is None else body_end
    citations: list[ParsedCitation] = []
    spans: list[tuple[int, int, int]] = []
    referenced: set[int] = set()
    sentences = SentenceIndex(text)
    for match in MARKER.finditer(text, 0, limit):
        number = int(match.group(1))
        entry = lookup(number)
        index = len(citations)
        if entry is None:
            citations.append(
                ParsedCitation(
                    None, marker=match.group(0), kind=CitationKind.DANGLING, start=match.start(), end=match.end()
                )
            )
            continue
        referenced.add(number)
        url, title = entry
        citations.append(ParsedCitation(url, title, match.group(0), CitationKind.CITED, match.start(), match.end()))
        start, end = sentences.claim_span(match.start())
        if end > start:
            spans.append((start, end, index))
    return citations, candidates(text, spans), referenced


def numbered(entries: Sequence[SourceEntry]) -> Callable[[int], SourceEntry | None]:
    """Lookup for a 1-based list: ``[n]`` → ``entries[n - 1]``."""

    def lookup(number: int) -> SourceEntry | None:
        return entries[number - 1] if 1 <= number <= len(entries) else None

    return lookup
