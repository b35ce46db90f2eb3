"""``rules-v1``: deterministic segmentation of an answer into independently checkable claims.

Pure and offline. The answer text is never changed: every claim carries an exact ``[start, end)`` span into
it, and its claim text is that span with engine artefacts removed (a second conjunct of a coordinated
predicate gets the shared subject put back in front). What the rules recognise:

- sentence ends in English and German (``. ! ?``) and Chinese / Japanese (``。！？；``); abbreviations
  (``e.g.``, ``z.B.``, ``ca.``), decimals and thousands separators (``3.5 bar``, ``1.200 €``, ``1,200``),
  German day ordinals before a month (``3. Oktober``), ``etc.`` before a capital ends one, and so does a full
  stop glued to the next sentence (``specifications.Based``, answer blocks joined as they came); a line break
  always ends a sentence;
- list items (the bullet is not part of the claim), markdown headings, plain-text headings (a short line
  without closing punctuation before a blank line or a list) and tables (a data row is one claim, its text
  pairs each cell with its column header);
- coordinated predicates sharing a subject (``X has A and can B`` → ``X has A`` / ``X can B``), also across
  engine spans (``X has A`` | ``and`` | ``weighs B``: the lone conjunction is no claim, ``X weighs B`` is);
- non-assertions (questions, greetings, narration and sign-offs, disclaimers, headings and lead-ins, lead-in
  fragments cut off by an engine span) are skipped and counted by reason.

Claim spans exclude the closing punctuation and the markers after it. A marker belongs to the claim(s) of
the sentence or clause it stands in; one right after the closing punctuation (``tank.[1]``) belongs to every
claim of that sentence, and so do markers closing the last clause when no earlier clause has a marker of its
own (``A and B [1].``), while ``A [1] and B [2].`` gives each clause its own (:meth:`Segmented.claims_at`).
"""

from __future__ import annotations

import bisect
import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from citeaudit.core.model import Segmentation
from citeaudit.ingest.text import ARTEFACT, claim_text, trim_claim

__all__ = [
    "METHOD",
    "VERSION",
    "ClaimSpan",
    "Rules",
    "Segmented",
    "SkipReason",
    "Skipped",
    "segment",
]

METHOD = "rules-v1"
"""Method name recorded in the protocol fingerprint."""
VERSION = "1"
"""Version of the rules; bump it whenever any output can change."""


class SkipReason(StrEnum):
    """Why a piece of answer text is not a claim."""

    QUESTION = "question"
    """A question (ends with ``?`` or ``？``)."""
    GREETING = "greeting"
    """A greeting, acknowledgement, narration or sign-off (``Sure!``, ``I'll look that up``, ``I hope this
    helps``)."""
    DISCLAIMER = "disclaimer"
    """A disclaimer about the answer itself (``This is not legal advice``)."""
    HEADING = "heading"
    """A markdown heading, a bold-only line, a table header or a lead-in ending with a colon."""
    FRAGMENT = "fragment"
    """A piece an engine span cut off a sentence that asserts nothing by itself (``Based on the results,``)."""
    REFERENCE = "reference"
    """A reference-list entry, a ``Sources:`` block or a footnote definition (``rules-v2`` only)."""


@dataclass(frozen=True, slots=True)
class Rules:
    """The parameters of ``rules-v1``; each enters the protocol fingerprint."""

    split_coordination: bool = True
    """Split coordinated predicates that share a subject into one claim each (English and German)."""
    skip_non_assertions: bool = True
    """Skip questions, greetings, disclaimers and headings (counted) instead of making them claims."""

    def segmentation(self) -> Segmentation:
        """The fingerprint component for these rules: method, version and sorted canonical parameters."""
        parameters = (
            ("skip_non_assertions", json.dumps(self.skip_non_assertions)),
            ("split_coordination", json.dumps(self.split_coordination)),
        )
        return Segmentation(method=METHOD, version=VERSION, parameters=parameters)


@dataclass(frozen=True, slots=True)
class ClaimSpan:
    """One claim found in an answer."""

    start: int
    """Start of its span in the answer text."""
    end: int
    """End of its span (exclusive)."""
    text: str
    """Claim text: the span without artefacts, completed with the subject for a second conjunct."""
    sentence: int
    """Index of the sentence it comes from (in :attr:`Segmented.sentences`)."""


@dataclass(frozen=True, slots=True)
class Skipped:
    """A piece of answer text that is not a claim."""

    start: int
    """Start of the skipped span."""
    end: int
    """End of the skipped span (exclusive)."""
    reason: SkipReason
    """Why it was skipped."""


@dataclass(frozen=True, slots=True)
class Segmented:
    """The claims of one answer, the sentences they come from and what was skipped."""

    claims: tuple[ClaimSpan, ...]
    """Claims in text order."""
    sentences: tuple[tuple[int, int, int], ...]
    """``(start, shared_from, end)`` of each sentence that gave claims: a marker at or after ``shared_from``
    (after the closing punctuation; or after the last clause when no earlier clause has a marker of its own)
    belongs to every claim of the sentence; ``end`` is after the markers that follow it."""
    skipped: tuple[Skipped, ...] = ()
    """Non-assertions, in text order."""
    _starts: list[int] = field(default_factory=list, repr=False, compare=False)
    _owners: list[int] = field(default_factory=list, repr=False, compare=False)

    def skipped_counts(self) -> dict[str, int]:
        """How many pieces were skipped, by reason."""
        return dict(Counter(str(s.reason) for s in self.skipped))

    def claims_at(self, position: int) -> tuple[int, ...]:
        """Indexes of the claims a citation marker at ``position`` belongs to (empty when it stands in no
        claim's sentence, e.g. in a skipped question)."""
        if not self._starts:
            self._starts.extend(s[0] for s in self.sentences)
            self._owners.extend(c.sentence for c in self.claims)
        index = bisect.bisect_right(self._starts, position) - 1
        if index < 0:
            return ()
        _, shared_from, end = self.sentences[index]
        if position >= end:
            return ()
        members = range(bisect.bisect_left(self._owners, index), bisect.bisect_right(self._owners, index))
        if position >= shared_from:
            return tuple(members)
        chosen = members[0]
        for i in members:
            if self.claims[i].start <= position:
                chosen = i
        return (chosen,)

    def claims_overlapping(self, start: int, end: int) -> tuple[int, ...]:
        """Indexes of the claims whose span overlaps ``[start, end)`` (for span-shaped citations)."""
        return tuple(i for i, c in enumerate(self.claims) if c.start < end and start < c.end)


_ABBREVIATIONS = frozenset(
    [
        "e.g",
        "i.e",
        "etc",
        "vs",
        "approx",
        "ca",
        "incl",
        "excl",
        "no",
        "nr",
        "fig",
        "p",
        "pp",
        "dr",
        "mr",
        "mrs",
        "ms",
        "st",
        "jr",
        "sr",
        "prof",
        "inc",
        "ltd",
        "co",
        "corp",
        "z.b",
        "bzw",
        "usw",
        "d.h",
        "ggf",
        "inkl",
        "max",
        "min",
        "art",
        "abs",
        "u.a",
        "s.o",
        "vgl",
        "evtl",
        "sog",
        "bspw",
        "zzgl",
        "z.t",
        "mio",
        "mrd",
        "jan",
        "feb",
        "mar",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "oct",
        "okt",
        "nov",
        "dec",
        "dez",
    ]
)
_FINAL_ABBREVIATIONS = frozenset(("etc", "usw", "inc", "ltd", "corp"))
"""Abbreviations that often end a sentence: a capital letter after them starts the next one."""
_MONTHS = frozenset(
    [
        "januar",
        "februar",
        "märz",
        "april",
        "mai",
        "juni",
        "juli",
        "august",
        "september",
        "oktober",
        "november",
        "dezember",
        "jan",
        "feb",
        "mär",
        "apr",
        "jun",
        "jul",
        "aug",
        "sep",
        "sept",
        "okt",
        "nov",
        "dez",
    ]
)
_STOP = re.compile(r"[.!?。！？；]")
_ALNUM = re.compile(r"[^\W_]")
_GLUED = re.compile(r"[a-zäöüß]{3}\.[A-ZÄÖÜ][a-zäöüß]{2}")
_ARTEFACT_OPENERS = "[(【\ue200"
_ARTEFACT_CLOSERS = "])】\ue201"
_CJK_STOP = "。！？；"
_CLOSERS = "\"'”’»)」』"
_TRAILING_ARTEFACTS = re.compile(r"(?:[ \t]*(?:" + ARTEFACT.pattern + r"))+", re.VERBOSE)
_BULLET = re.compile(r"[ \t]*(?:[-*•·+]|\d{1,3}(?:\[\d{1,4}\])*[.)])[ \t]+")
_HEADING = re.compile(r"[ \t]*#{1,6}[ \t]")
_BOLD_LINE = re.compile(r"[ \t]*(?:\*\*|__)[^*_\n]+(?:\*\*|__)[ \t]*:?[ \t]*$")
_TABLE_SEPARATOR = re.compile(r"[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(?:\|[ \t]*:?-{3,}:?[ \t]*)*\|?[ \t]*$")
_LINE = re.compile(r"[^\n]+")
_GREETING = re.compile(
    r"(?:hi|hello|hey|dear\b|sure|certainly|of course|absolutely|great question|good question|thanks|thank you|"
    r"i hope (?:this|that) helps|hope (?:this|that) helps|let me know|feel free|happy to help|"
    r"i'll (?:look|search|check|find)|i will (?:look|search|check)|let me (?:look|search|check|find)|"
    r"hallo|guten tag|gerne|natürlich|ich hoffe|ich suche|您好|你好|当然|希望)",
    re.IGNORECASE,
)
_DISCLAIMER = re.compile(
    r"(?:disclaimer|please note|note that this|i am not a|i'm not a|as an ai|this is not (?:legal|medical|financial)|"
    r"this does not constitute|consult (?:a|your) |please consult|always consult|"
    r"hinweis:|bitte beachten|dies ist keine|keine rechts|以上内容仅供参考|仅供参考)",
    re.IGNORECASE,
)
_SHORT_GREETING = 60
_SUBORDINATORS = frozenset(
    [
        "whether",
        "if",
        "when",
        "while",
        "although",
        "though",
        "because",
        "since",
        "as",
        "unless",
        "wenn",
        "ob",
        "weil",
        "obwohl",
        "da",
        "als",
        "falls",
    ]
)
_EN_VERBS = (
    "is|are|was|were|has|have|had|can|could|may|might|must|shall|should|will|would|does|do|did|"
    "offers|supports|includes|provides|comes|runs|uses|requires|weighs|costs|contains|features|holds|"
    "reaches|delivers|needs|meets|works|operates|allows|lets|remains|becomes|makes|gives|helps|"
    "lasts|measures|consumes|produces|carries|suits|fits|ships|stores|lacks|exceeds|matches|complies|charges"
)
_DE_VERBS = (
    "ist|sind|war|waren|hat|haben|hatte|kann|können|konnte|darf|dürfen|muss|müssen|soll|sollte|wird|werden|"
    "bietet|verfügt|eignet|lässt|wiegt|kostet|läuft|enthält|unterstützt|erreicht|benötigt|erfüllt|arbeitet|"
    "besitzt|liefert|verbraucht|misst|fasst"
)
_VERB = re.compile(rf"\b(?:{_EN_VERBS}|{_DE_VERBS})\b")
_VERB_AT = re.compile(rf"(?:{_EN_VERBS}|{_DE_VERBS})\b")
_LONE_CONJUNCTION = re.compile(r"(?:and|or|but|und|oder|sowie|aber|和|及|并且|而且)", re.IGNORECASE)
_LEADING_CONJUNCTION = re.compile(r"(?:,\s*)?(?:and|und|sowie)\s+")
_CONJUNCTIONS = (" and ", " und ", " sowie ")
_MAX_SUBJECT_WORDS = 6
_MAX_TITLE_WORDS = 6


def segment(text: str, regions: Iterable[tuple[int, int]] = (), rules: Rules = Rules()) -> Segmented:
    """Split ``text`` into claims.

    ``regions`` are engine-given spans (e.g. the claim candidates ingest made from Gemini segments or
    Anthropic cited blocks): their boundaries are kept, so no claim crosses one; the rules split only
    within them. Deterministic: the same text, regions and rules always give the same result.
    """
    cuts = sorted({b for start, end in regions for b in (start, end) if 0 < b < len(text)})
    builder = _Builder(text, cuts, rules)
    lines = list(_LINE.finditer(text))
    index = 0
    while index < len(lines):
        line = lines[index]
        start, end = line.span()
        if text.startswith("|", start) or text[start:end].lstrip().startswith("|"):
            index = builder.table(lines, index)
            continue
        index += 1
        bullet = _BULLET.match(text, start, end)
        if (
            _HEADING.match(text, start)
            or _BOLD_LINE.match(text, start, end)
            or (bullet is None and _is_title_line(text, start, end, lines[index] if index < len(lines) else None))
        ):
            builder.skip(start, end, SkipReason.HEADING)
            continue
        first = len(builder.sentences)
        builder.paragraph(bullet.end() if bullet else start, end)
        if bullet and len(builder.sentences) > first:
            # a marker in the bullet (``1[2]. Item``) belongs to the item's first sentence
            _, content_end, stop = builder.sentences[first]
            builder.sentences[first] = (start, content_end, stop)
    return Segmented(tuple(builder.claims), tuple(builder.sentences), tuple(builder.skipped))


class _Builder:
    """Collects claims, sentences and skipped pieces while :func:`segment` walks the lines."""

    def __init__(self, text: str, cuts: Sequence[int], rules: Rules) -> None:
        self.text = text
        self.cuts = cuts
        self.rules = rules
        self.claims: list[ClaimSpan] = []
        self.sentences: list[tuple[int, int, int]] = []
        self.skipped: list[Skipped] = []
        self._subject: str | None = None
        self._cut = False

    def skip(self, start: int, end: int, reason: SkipReason) -> None:
        if self.rules.skip_non_assertions:
            piece = _trim(self.text, start, end)
            self.skipped.append(Skipped(piece[0], piece[1], reason))
        else:
            self.sentence(start, end, end)

    def paragraph(self, start: int, end: int) -> None:
        """Sentences of one line (after its bullet)."""
        text = self.text
        begin = start
        for found in _STOP.finditer(text, start, end):
            at = found.start()
            if at < begin:
                continue
            char = text[at]
            after = at + 1
            if char not in _CJK_STOP:
                nxt = text[after : after + 1]
                if nxt.isalnum():
                    if char == "." and _GLUED.match(text, at - 3, at + 4):
                        # answer blocks joined without a space ("…specifications.Based on…")
                        self.sentence(begin, after, after)
                        begin = after
                    continue  # 3.5 bar, 1.200 €, example.com, z.B.
                if char == "." and self._not_a_stop(at, end):
                    continue
            while after < end and text[after] in _CLOSERS:
                after += 1
            content_end = after
            trailing = _TRAILING_ARTEFACTS.match(text, after, end)
            if trailing:
                after = trailing.end()
            if char not in _CJK_STOP and after < end and not text[after].isspace():
                continue
            self.sentence(begin, content_end, after)
            begin = after
        if begin < end:
            self.sentence(begin, end, end)

    def _not_a_stop(self, dot: int, end: int) -> bool:
        """True when the dot at ``dot`` ends an abbreviation, an initial or a day ordinal (``3. Oktober``)."""
        text = self.text
        words = text[max(0, dot - 12) : dot].split()
        word = words[-1].lstrip("([\"'").lower() if words and not text[dot - 1].isspace() else ""
        following = text[dot + 1 : min(end, dot + 16)].lstrip(" \t" + _CLOSERS)
        if word in _FINAL_ABBREVIATIONS:
            return not following[:1].isupper()  # "…, etc. The next sentence"
        if word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha()):
            return True
        if word.isdigit() and len(word) <= 2:
            next_word = following.split(" ", 1)[0].rstrip(".,").lower()
            if next_word in _MONTHS:
                return True
        return following[:1].islower()

    def sentence(self, start: int, content_end: int, end: int) -> None:
        """One sentence: cut at engine-span boundaries, classify, split coordinated predicates."""
        pieces = [start]
        at = bisect.bisect_right(self.cuts, start)
        while at < len(self.cuts) and self.cuts[at] < content_end:
            pieces.append(self.cuts[at])
            at += 1
        pieces.append(content_end)
        self._subject = None  # the subject of the sentence's first piece, for later pieces
        self._cut = len(pieces) > 2
        for i in range(len(pieces) - 1):
            last = i == len(pieces) - 2
            self._piece(pieces[i], pieces[i + 1], end if last else pieces[i + 1])
        if len(pieces) > 2 and self.sentences and self.sentences[-1][0] >= start and self.sentences[-1][2] < end:
            # later pieces gave no claim (e.g. only a marker): the markers after the sentence still belong to it
            begin, shared_from, _ = self.sentences[-1]
            self.sentences[-1] = (begin, min(shared_from, content_end), end)

    def _piece(self, start: int, content_end: int, end: int) -> None:
        text = self.text
        begin, stop = _trim(text, start, content_end)
        if _ALNUM.search(text, begin, stop) is None:
            return
        if self.rules.skip_non_assertions:
            reason = _non_assertion(text, begin, stop)
            if reason is not None:
                self.skipped.append(Skipped(begin, stop, reason))
                return
        while stop > begin and text[stop - 1] in ".!?。！？；":
            stop -= 1
        begin, stop = _trim_markers(text, begin, stop)
        if _LONE_CONJUNCTION.fullmatch(text, begin, stop):
            return  # an engine span cut "A [1] and B [2]" into pieces: the "and" between them asserts nothing
        if text[stop - 1 : stop] in ",，" and _VERB.search(text, begin, stop) is None:
            self.skipped.append(Skipped(begin, stop, SkipReason.FRAGMENT))
            return
        if self.rules.split_coordination:
            clauses = _clauses(text, begin, stop)
            opening = _LEADING_CONJUNCTION.match(text, begin, stop)
            verb_at = opening.end() if opening else begin
            if self._subject and len(clauses) == 1 and _VERB_AT.match(text, verb_at, stop):
                # a piece that continues the sentence's predicate ("… tank" | "and weighs 38 kg")
                clauses = [(verb_at, stop, self._subject)]
            elif self._subject is None and self._cut:
                self._subject = _subject(text, begin, stop)
        else:
            clauses = [(begin, stop, "")]
        index = len(self.sentences)
        first = len(self.claims)
        for c_start, c_end, subject in clauses:
            body = _claim_text(text, c_start, c_end)
            if c_end > c_start and _ALNUM.search(body) is not None:
                self.claims.append(ClaimSpan(c_start, c_end, f"{subject} {body}" if subject else body, index))
        made = self.claims[first:]
        if not made:
            return
        shared_from = content_end
        earlier_marked = any(
            ARTEFACT.search(text, made[i].start, made[i + 1].start) is not None for i in range(len(made) - 1)
        )
        if len(made) > 1 and not earlier_marked:
            # "A and B [1][2]." with no marker on A: the markers closing the sentence cite all of it
            shared_from = made[-1].end
        self.sentences.append((start, shared_from, end))

    def table(self, lines: Sequence[re.Match[str]], index: int) -> int:
        """A markdown table starting at ``lines[index]``; returns the index of the first line after it."""
        text = self.text
        rows = []
        while index < len(lines) and lines[index].group().lstrip().startswith("|"):
            rows.append(lines[index])
            index += 1
        header: list[str] = []
        if len(rows) >= 2 and _TABLE_SEPARATOR.match(rows[1].group()):
            header = _cells(rows[0].group())
            self.skip(*rows[0].span(), SkipReason.HEADING)
            rows = rows[2:]
        for row in rows:
            if _TABLE_SEPARATOR.match(row.group()):
                continue
            cells = _cells(row.group())
            start, end = _trim(text, row.start(), row.end())
            start += 1 if text[start] == "|" else 0
            end -= 1 if text[end - 1] == "|" else 0
            start, end = _trim(text, start, end)
            if not any(cells):
                continue
            pairs = [f"{h}: {c}" if h else c for h, c in zip(header + [""] * len(cells), cells, strict=False) if c]
            self.sentences.append((start, end, row.end()))
            self.claims.append(ClaimSpan(start, end, "; ".join(pairs), len(self.sentences) - 1))
        return index


_SLOW_TEXT = re.compile(r"[\[(【\ue200\n\t]|  ")


def _claim_text(text: str, start: int, end: int) -> str:
    """``claim_text`` of the span; the plain slice when it holds no artefact and no run of white space."""
    if _SLOW_TEXT.search(text, start, end) is None:
        return text[start:end]
    return claim_text(text, start, end)


def _trim_markers(text: str, start: int, end: int) -> tuple[int, int]:
    """``[start, end)`` without surrounding white space and engine artefacts (the cheap checks first)."""
    start, end = _trim(text, start, end)
    if start < end and (text[start] in _ARTEFACT_OPENERS or text[end - 1] in _ARTEFACT_CLOSERS):
        return trim_claim(text, start, end)
    return start, end


def _cells(row: str) -> list[str]:
    inner = row.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") else inner
    return [claim_text(cell, 0, len(cell)) for cell in inner.split("|")]


def _is_title_line(text: str, start: int, end: int, following: re.Match[str] | None) -> bool:
    """A short line without closing punctuation right before a blank line or a list: a plain-text heading
    ("Key specifications")."""
    stripped = text[start:end].rstrip()
    if not stripped or stripped[-1] in ".!?。！？；:：" or len(stripped.split()) > _MAX_TITLE_WORDS:
        return False
    if following is None:
        return False
    blank_line = "\n" in text[end + 1 : following.start()]
    return blank_line or _BULLET.match(text, following.start(), following.end()) is not None


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _non_assertion(text: str, start: int, end: int) -> SkipReason | None:
    last = text[end - 1]
    if last in "?？":
        return SkipReason.QUESTION
    if last == ":" or last == "：":
        return SkipReason.HEADING
    piece = text[start : min(end, start + 80)].lstrip("*_ ")
    if _DISCLAIMER.match(piece):
        return SkipReason.DISCLAIMER
    if end - start <= _SHORT_GREETING and _GREETING.match(piece):
        return SkipReason.GREETING
    if piece.lower().startswith(("i hope this helps", "hope this helps", "let me know", "feel free")):
        return SkipReason.GREETING
    return None


def _clauses(text: str, start: int, end: int) -> list[tuple[int, int, str]]:
    """``(start, end, subject)`` of each conjunct of a coordinated predicate; one entry when nothing splits.

    A split needs: a verb in the first conjunct with a short subject before it (no comma, not opened by a
    subordinator such as *whether* or *wenn*), and ``and`` / ``und`` / ``sowie`` directly followed by a verb.
    The subject is put in front of every later conjunct's text; spans still point into the answer.
    """
    conjunctions = _conjunctions(text, start, end)
    if not conjunctions:
        return [(start, end, "")]
    subject = _subject(text, start, conjunctions[0][0])
    if subject is None:
        return [(start, end, "")]
    clauses: list[tuple[int, int, str]] = []
    begin = start
    for conjunction_start, conjunction_end in conjunctions:
        clause = _trim_markers(text, begin, conjunction_start)
        clauses.append((*clause, subject if begin != start else ""))
        begin = conjunction_end
    clauses.append((*_trim_markers(text, begin, end), subject))
    return clauses


def _subject(text: str, start: int, end: int) -> str | None:
    """The short subject before the first verb in ``[start, end)``: at most six words, no comma, not opened
    by a subordinator such as *whether* or *wenn*; ``None`` when there is no such subject."""
    verb = _VERB.search(text, start, end)
    if verb is None:
        return None
    subject = claim_text(text, start, verb.start())
    words = subject.split()
    if not words or len(words) > _MAX_SUBJECT_WORDS or "," in subject or words[0].lower() in _SUBORDINATORS:
        return None
    return subject


def _conjunctions(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """``(start, end)`` of each ``and`` / ``und`` / ``sowie`` (with a comma before it) directly followed by a verb,
    outside parentheses, in text order."""
    found = []
    for word in _CONJUNCTIONS:
        at = text.find(word, start, end)
        while at >= 0:
            after = at + len(word)
            if _VERB_AT.match(text, after, end) and text.find("(", start, at) < 0:
                found.append((at - 1 if text[at - 1] == "," else at, after))
            at = text.find(word, after, end)
    return sorted(found)
