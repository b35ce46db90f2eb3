"""``rules-v2``: answers into claims, one checkable assertion each, with exact spans and self-contained texts.

Pure and offline; the answer text is never changed. Lines and blocks are read as ``rules-v1`` reads them
(headings, tables, list items, non-assertions skipped and counted), with these differences:

- sentences come from the one splitter ingest also uses (:mod:`citeaudit.ingest.sentences`), so an
  abbreviation (``U.S.``, ``Inc.``, ``Dr.``) never ends a claim and a marker after a full-width stop
  (``水箱。[1]``) stays with its sentence;
- reference lists (``[1]: https://…``, ``[^1]: note``, a ``Sources:`` / ``Quellen:`` / ``参考资料`` block, a line
  that is only a link) are never claims: they are skipped as ``reference``;
- each sentence is split into clauses (:mod:`citeaudit.segment.clauses`): coordinated predicates and
  clauses, enumerations of objects sharing a predicate, appositives and non-restrictive relative clauses,
  comma-set adjuncts; in English, German and Chinese. Each claim's span is the clause it comes from; its
  text is that clause completed with what it shares (the subject, the verb) so it reads on its own.

Markers: one after the sentence's closing punctuation, or closing its last clause when no earlier clause
has a marker of its own, belongs to every claim of the sentence; one inside a clause belongs to that clause
(:meth:`~citeaudit.segment.rules.Segmented.claims_at`).
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from citeaudit.core.model import Segmentation
from citeaudit.ingest.sentences import ARTEFACT, LINE_LEAD, sentences
from citeaudit.ingest.text import claim_text
from citeaudit.segment import lexicon
from citeaudit.segment.clauses import Clause, split_sentence
from citeaudit.segment.rules import (
    _GREETING,
    ClaimSpan,
    Rules,
    Segmented,
    Skipped,
    SkipReason,
    _Builder,
    _is_title_line,
    _non_assertion,
    _trim,
    _trim_markers,
)
from citeaudit.segment.rules import METHOD as V1_METHOD

__all__ = ["METHOD", "RULES_METHODS", "VERSION", "RulesV2", "segment"]

METHOD = "rules-v2"
"""Method name recorded in the protocol fingerprint."""
VERSION = "3"
"""Version of these rules; bump it whenever any output can change."""
RULES_METHODS = (V1_METHOD, METHOD)
"""The rules methods, in order: rules-v1, then this one (the default)."""


@dataclass(frozen=True, slots=True)
class RulesV2:
    """The parameters of ``rules-v2``; each enters the protocol fingerprint."""

    split_clauses: bool = True
    """Split sentences into clauses (coordination, enumerations, appositives, relative clauses, adjuncts)."""
    skip_non_assertions: bool = True
    """Skip questions, greetings, disclaimers, headings and reference lists (counted) instead of making them
    claims."""

    def segmentation(self) -> Segmentation:
        """The fingerprint component: method, version and sorted canonical parameters."""
        parameters = (
            ("skip_non_assertions", json.dumps(self.skip_non_assertions)),
            ("split_clauses", json.dumps(self.split_clauses)),
        )
        return Segmentation(method=METHOD, version=VERSION, parameters=parameters)


_HEADING = re.compile(r"[ \t]*#{1,6}[ \t]")
_BOLD_LINE = re.compile(r"[ \t]*(?:\*\*|__)[^*_\n]+(?:\*\*|__)[ \t]*:?[ \t]*$")
_LINE = re.compile(r"[^\n]+")
_URL = re.compile(r"https?://\S+|www\.\S+")
_REFERENCE_LINE = re.compile(r"[ \t]*(?:[-*•·+][ \t]+)?(?:\[\^?\d{1,4}\^?\]:?|\d{1,4}[.)]|\^\d{1,4})[ \t]*(?=\S)")
_FOOTNOTE = re.compile(r"[ \t]*\[\^[^\]\s]{1,20}\]:")
_SOURCES_HEADING = re.compile(
    r"[ \t]*(?:#{1,6}[ \t]*)?(?:\*\*|__)?[ \t]*"
    r"(?:sources?|references?|citations?|bibliography|links|further reading|"
    r"quellen|quellenangaben|literatur|einzelnachweise|参考资料|参考文献|来源|资料来源|引用)"
    r"[ \t]*(?:\*\*|__)?[ \t]*[:：]?[ \t]*(?:\*\*|__)?[ \t]*$",
    re.IGNORECASE,
)
_LONE_CONJUNCTION = re.compile(r"(?:and|or|but|und|oder|sowie|aber|和|及|并且|而且)", re.IGNORECASE)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")


def segment(text: str, regions: Iterable[tuple[int, int]] = (), rules: RulesV2 = RulesV2()) -> Segmented:
    """Split ``text`` into claims with ``rules-v2``.

    ``regions`` are engine-given spans (claim candidates from Gemini segments or Anthropic cited blocks):
    no claim crosses one of their boundaries. Deterministic: the same text, regions and rules always give
    the same result.
    """
    cuts = sorted({b for start, end in regions for b in (start, end) if 0 < b < len(text)})
    builder = _ClauseBuilder(text, cuts, rules)
    lines = list(_LINE.finditer(text))
    index = 0
    in_sources = False
    while index < len(lines):
        line = lines[index]
        start, end = line.span()
        if text[start:end].lstrip().startswith("|"):
            in_sources = False
            index = builder.table(lines, index)
            continue
        index += 1
        if _SOURCES_HEADING.fullmatch(text, start, end):
            in_sources = True
            builder.skip(start, end, SkipReason.REFERENCE)
            continue
        if _is_reference(text, start, end, in_sources):
            builder.skip(start, end, SkipReason.REFERENCE)
            continue
        in_sources = False
        lead = LINE_LEAD.match(text, start, end)
        bullet = lead is not None and lead.end() > start and text[start:end].lstrip()[:1] not in "#>"
        following = lines[index] if index < len(lines) else None
        if (
            _HEADING.match(text, start)
            or _BOLD_LINE.match(text, start, end)
            or (not bullet and _is_title(text, start, end, following))
        ):
            builder.skip(start, end, SkipReason.HEADING)
            continue
        first = len(builder.sentences)
        for sentence in sentences(text, start, end):
            builder.sentence(sentence.start, sentence.stop, sentence.end)
        if bullet and len(builder.sentences) > first:
            # a marker in the bullet (``1[2]. Item``) belongs to the item's first sentence
            _, content_end, stop = builder.sentences[first]
            builder.sentences[first] = (start, content_end, stop)
    return Segmented(tuple(builder.claims), tuple(builder.sentences), tuple(builder.skipped))


def _is_reference(text: str, start: int, end: int, in_sources: bool) -> bool:
    """A reference-list entry, a footnote definition or a line that is only a link: never a claim."""
    line = text[start:end]
    if _FOOTNOTE.match(line):
        return True
    stripped = _URL.sub("", ARTEFACT.sub("", line)).strip(" \t-*•·+:|<>()[]\"'")
    if not stripped and (_URL.search(line) or ARTEFACT.search(line)):
        return True  # only links and markers
    numbered = _REFERENCE_LINE.match(line)
    if numbered and _URL.search(line) and (line.lstrip()[:1] == "[" or len(stripped.split()) <= 12):
        return True  # "[1]: https://… "Title"", "1. https://…", "[2] Title – https://…"
    return in_sources and (numbered is not None or _URL.search(line) is not None or line.lstrip()[:1] in "-*•")


def _is_title(text: str, start: int, end: int, following: re.Match[str] | None) -> bool:
    """A plain-text heading (as ``rules-v1``), but never a line whose words end with a stop before trailing
    markers (``…水箱。[1]``) and never a line of Chinese or Japanese text (it has no spaces to count words by)."""
    stop = _trim_markers(text, start, end)[1]
    if stop > start and text[stop - 1] in ".!?。！？；:：":
        return False
    if _CJK.search(text, start, end):
        return False
    return _is_title_line(text, start, end, following)


class _ClauseBuilder(_Builder):
    """``rules-v1``'s builder with each sentence split into clauses."""

    rules2: RulesV2

    def __init__(self, text: str, cuts: Sequence[int], rules: RulesV2) -> None:
        super().__init__(text, cuts, Rules(split_coordination=False, skip_non_assertions=rules.skip_non_assertions))
        self.rules2 = rules

    def sentence(self, start: int, content_end: int, end: int) -> None:
        """One sentence: cut at engine-span boundaries, classify, split into clauses."""
        pieces = [start]
        at = bisect.bisect_right(self.cuts, start)
        while at < len(self.cuts) and self.cuts[at] < content_end:
            pieces.append(self.cuts[at])
            at += 1
        pieces.append(content_end)
        index = len(self.sentences)
        first = len(self.claims)
        subject: str | None = None
        for i in range(len(pieces) - 1):
            subject = self._clauses(pieces[i], pieces[i + 1], index, subject)
        made = self.claims[first:]
        if not made:
            return
        shared_from = content_end
        earlier_marked = any(
            ARTEFACT.search(self.text, made[i].start, made[i + 1].start) is not None for i in range(len(made) - 1)
        )
        if len(made) > 1 and not earlier_marked:
            # "A and B [1][2]." with no marker on A: the markers closing the sentence cite all of it
            shared_from = min(shared_from, made[-1].end)
        self.sentences.append((start, shared_from, end))

    def _clauses(self, start: int, stop: int, index: int, subject: str | None) -> str | None:
        """Claims of one piece of a sentence; returns the subject later pieces may share."""
        text = self.text
        begin, stop = _trim(text, start, stop)
        if begin >= stop or not any(c.isalnum() for c in text[begin:stop]):
            return subject
        if self.rules.skip_non_assertions:
            reason = _skip_reason(text, begin, stop)
            if reason is not None:
                self.skipped.append(Skipped(begin, stop, reason))
                return subject
        while stop > begin and text[stop - 1] in ".!?。！？；":
            stop -= 1
        begin, stop = _trim_markers(text, begin, stop)
        if begin >= stop:
            return subject
        if _LONE_CONJUNCTION.fullmatch(text, begin, stop):
            return subject  # an engine span cut "A [1] and B [2]" into pieces: the "and" asserts nothing
        if text[stop - 1] in ",，" and self.rules.skip_non_assertions:
            self.skipped.append(Skipped(begin, stop, SkipReason.FRAGMENT))
            return subject
        clauses: list[Clause]
        if self.rules2.split_clauses:
            clauses, found_subject = split_sentence(text, begin, stop, subject)
            subject = subject or found_subject
        else:
            clauses = [Clause(begin, stop, "")]
        for clause in clauses:
            c_start, c_end = _trim_markers(text, clause.start, clause.end)
            if c_end <= c_start:
                continue
            body = claim_text(text, c_start, c_end)
            if not any(c.isalnum() for c in body):
                continue
            self.claims.append(ClaimSpan(c_start, c_end, _join(clause.prefix, body), index))
        return subject


def _skip_reason(text: str, start: int, end: int) -> SkipReason | None:
    """``rules-v1``'s non-assertions, except that a greeting is a whole word: ``Hicks starred …`` and ``Surendra
    is …`` are claims, not ``Hi`` or ``Sure``."""
    reason = _non_assertion(text, start, end)
    if reason is SkipReason.GREETING:
        piece = text[start : min(end, start + 80)].lstrip("*_ ")
        found = _GREETING.match(piece)
        if found is not None and found.end() < len(piece):
            following = piece[found.end()]
            if following.isalpha() and not _CJK.match(following):
                return None
    return reason


def _join(prefix: str, body: str) -> str:
    if not prefix:
        return body
    if _CJK.search(prefix[-1:]) or _CJK.search(body[:1]):
        return prefix + body
    first = body.split(" ", 1)[0]
    if first[:1].isupper() and first.lower() in lexicon.PARTICIPLES:
        body = first.lower() + body[len(first) :]  # "Born in Lyon, Diallo …" → "Diallo was born in Lyon"
    return f"{prefix} {body}"
