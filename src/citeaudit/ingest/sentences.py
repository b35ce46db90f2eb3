"""The sentence splitter: where the sentences of an answer start and end.

One splitter serves every part that needs sentences: the engine readers (the claim a ``[n]`` marker closes is
the sentence it stands in) and segmentation (``rules-v2`` splits sentences further into clauses). Pure and
offline; the text is never changed, only offsets into it are computed.

What ends a sentence:

- a line break, always; a list bullet, a heading's ``#`` or a quote's ``>`` at the start of a line is not
  part of the sentence that follows it;
- ``. ! ?`` followed by white space (or the end of the text), after any closing quotes or brackets and any
  engine artefacts (``tank. [1][2] Next``: the markers belong to the sentence they follow);
- ``。 ！ ？ ；`` always, with the artefacts right after them (``水箱。[1]它…``).

What does not: a full stop inside a word or number (``3.5 bar``, ``1.200 €``, ``example.com``, ``z.B.``), except
between two words glued together when answer blocks are joined without a space (``specifications.Based``);
a full stop followed by a lower-case word; a ``!`` or ``?`` inside a quotation closed later on the line (a title
such as ``"Razzle Dazzle! The Best of …"``); an abbreviation (:func:`is_abbreviation`): titles and Latin
abbreviations (``Dr.``, ``St.``, ``vs.``, ``e.g.``, ``i.e.``) never end a sentence, ``No.`` / ``p.`` / ``Fig.`` and
a lower-case ``c.`` (circa: ``(c. 1900)``) not before a number, and words that also close sentences (``Inc.``,
``Bros.``, ``U.S.``, initials, ``Jr.``) only before a word that typically opens one (``The``, ``He``, ``In``, …); a
German day ordinal before a month (``3. Oktober``).
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple

__all__ = ["ARTEFACT", "CJK_STOPS", "LINE_LEAD", "STOPS", "Sentence", "is_abbreviation", "sentences"]


def _words(words: str) -> frozenset[str]:
    """A lexicon written as one string of space-separated words."""
    return frozenset(words.split())


STOPS = ".!?。！？；"
"""Characters that may end a sentence."""
CJK_STOPS = "。！？；"
"""Full-width stops: they end a sentence whatever follows."""

ARTEFACT = re.compile(
    r"""
      \[\d{1,4}\]                      # [2]
    | \[\^\d{1,4}\^?\]                 # [^2^] / [^2]  (Copilot, markdown footnotes)
    | \[cite:\s*[\d,\s]+\]             # [cite: 1, 2]  (Gemini apps)
    | 【[^】]*】                        # 【4†source】 (ChatGPT UI)
    | \ue200[^\ue201]*\ue201           # private-use citation tokens
    | \(\s*\[[^\]]*\]\([^)\s]*\)\s*\)  # link chip: ([example.com](https://example.com/...))
    | \[[^\]]*\]\(https?://[^)\s]*\)   # bare markdown link used as a chip
    """,
    re.VERBOSE,
)
"""Engine artefacts: citation markers and link chips (stripped from claim text, never from the stored answer)."""
_CLOSERS = "\"'”’»)」』"
_TRAILING = re.compile(r"(?:[ \t]*(?:" + ARTEFACT.pattern + r"))+", re.VERBOSE)
LINE_LEAD = re.compile(r"[ \t]*(?:(?:[-*•·+]|\d{1,3}(?:\[\d{1,4}\])*[.)]|#{1,6}|>)[ \t]+)?[ \t]*")
"""White space, then a list bullet (``- ``, ``* ``, ``1. ``), a heading's ``#`` or a quote's ``>`` at a line start."""
_CANDIDATE = re.compile(r"[.!?。！？；]")
_GLUED = re.compile(r"[a-zäöüß]{3}\.[A-ZÄÖÜ][a-zäöüß]{2}")
_NEVER_FINAL = _words(
    "dr mr mrs ms messrs prof st mt ft sen rep gov gen col lt sgt capt cpt adm rev hon pres vs e.g i.e cf "
    "ca approx incl excl esp viz et al resp z.b d.h u.a s.o bzw ggf vgl inkl bspw evtl sog zzgl z.t u.u "
    "o.ä hr fr dipl ing"
)
"""Abbreviations that never end a sentence: titles before a name and Latin / German abbreviations."""
_BEFORE_NUMBERS = _words("no nr nos p pp fig figs art abs vol ch sec op max min tel")
"""Abbreviations before a number (``No. 5``, ``p. 12``); elsewhere the word may end a sentence (``… is no.``)."""
_FINAL = _words(
    "etc usw inc ltd co corp bros jr sr llc plc gmbh ag jan feb mar apr jun jul aug sep sept oct okt nov dec dez"
)
"""Abbreviations that also close sentences: they end one only before a word that typically opens a sentence."""
_OPENERS = _words(
    "the a an this that these those it its he she they we i you his her their our my your there here in "
    "on at as after before during from for with by to of since until when while although though however "
    "also but and yet so then today later some many most one two both each all no other such if because "
    "despite according born der die das ein eine er sie es wir ich im am mit nach seit bei für von zu "
    "auch aber und dies diese dieser dieses"
)
"""Words that typically open a sentence: after ``Inc.`` / ``U.S.`` / an initial, such a word starts a new one."""
_MONTHS = _words(
    "januar februar märz april mai juni juli august september oktober november dezember jan feb mär apr "
    "jun jul aug sep sept okt nov dez"
)
_DOTTED = re.compile(r"(?:[^\W\d_]\.)+[^\W\d_]")
"""``u.s`` / ``e.g`` / ``ph.d``: letters joined by dots (the final dot is the one being judged)."""


class Sentence(NamedTuple):
    """One sentence: offsets into the text."""

    start: int
    """First character of its text (after a line's bullet and white space)."""
    stop: int
    """After its closing punctuation and closing quotes or brackets (the end of its words when it has none)."""
    end: int
    """After the engine artefacts that follow the closing punctuation (they belong to this sentence)."""
    region: int
    """Where its stretch of the text begins: the line start for a line's first sentence (so a marker inside a
    bullet such as ``1[2].`` belongs to it), the previous sentence's end otherwise."""


def sentences(text: str, start: int = 0, end: int | None = None) -> list[Sentence]:
    """The sentences of ``text[start:end]`` in text order (white space only gives none)."""
    limit = len(text) if end is None else end
    found: list[Sentence] = []
    line_start = start
    while line_start < limit:
        line_end = text.find("\n", line_start, limit)
        if line_end < 0:
            line_end = limit
        _line(text, line_start, line_end, found)
        line_start = line_end + 1
    return found


def _line(text: str, line_start: int, line_end: int, found: list[Sentence]) -> None:
    lead = LINE_LEAD.match(text, line_start, line_end)
    begin = lead.end() if lead else line_start
    region = line_start
    for candidate in _CANDIDATE.finditer(text, begin, line_end):
        at = candidate.start()
        if at < begin:
            continue  # inside the closing run of a sentence already ended
        stop = _sentence_end(text, at, line_end, begin)
        if stop is None:
            continue
        after, trailing_end = stop
        _add(text, begin, after, trailing_end, region, found)
        region = trailing_end
        begin = trailing_end
    if begin < line_end:
        _add(text, begin, line_end, line_end, region, found)


_NEW: Final = tuple.__new__


def _add(text: str, begin: int, stop: int, end: int, region: int, found: list[Sentence]) -> None:
    # str.strip() and str.isspace() agree on what white space is; the slices are a sentence long
    piece = text[begin:stop]
    words = piece.strip()
    if words:
        begin += len(piece) - len(piece.lstrip())
        stop = begin + len(words)
        # made as the tuple it is: a named tuple's own constructor is Python code (tests/test_compiled.py)
        found.append(_NEW(Sentence, (begin, stop, max(stop, _rstrip(text, end, stop)), region)))


def _rstrip(text: str, end: int, floor: int) -> int:
    """``end`` moved back past white space, not before ``floor``."""
    return floor + len(text[floor:end].rstrip()) if end > floor else end


def _sentence_end(text: str, at: int, line_end: int, begin: int) -> tuple[int, int] | None:
    """``(stop, end)`` when the punctuation at ``at`` ends a sentence, else ``None``."""
    char = text[at]
    after = at + 1
    if char not in CJK_STOPS:
        following = text[after : after + 1]
        if following in (".", "!", "?"):
            return None  # "..." and "?!": the last of the run decides
        if char != "." and following.isspace() and _inside_quotes(text, begin, at, line_end):
            return None  # a title such as "Razzle Dazzle! The Best of …" goes on to its closing quote
        if following.isalnum():
            if char == "." and _GLUED.match(text, at - 3, at + 4):
                return after, after  # answer blocks joined without a space ("…specifications.Based on…")
            return None  # 3.5 bar, 1.200 €, example.com, z.B.
        if char == "." and is_abbreviation(text, at, line_end):
            return None
    while after < line_end and text[after] in _CLOSERS:
        after += 1
    stop = after
    trailing = _TRAILING.match(text, after, line_end)
    if trailing:
        after = trailing.end()
    if char not in CJK_STOPS and after < line_end and not text[after].isspace():
        return None
    return stop, after


def _inside_quotes(text: str, begin: int, at: int, line_end: int) -> bool:
    """Whether ``at`` stands inside a quotation opened in this sentence and closed later on the line (checked for
    ``!`` and ``?``, which titles carry; a full stop inside quoted speech still ends a sentence)."""
    straight = text.count('"', begin, at)
    if straight % 2:
        return text.find('"', at, line_end) >= 0
    opened = text.count("“", begin, at) - text.count("”", begin, at)
    return opened > 0 and text.find("”", at, line_end) >= 0


def is_abbreviation(text: str, dot: int, end: int | None = None) -> bool:
    """Whether the full stop at ``dot`` belongs to an abbreviation, an initial or a day ordinal rather than
    ending a sentence (see the module docstring for the rules)."""
    limit = len(text) if end is None else end
    if dot > 0 and text[dot - 1] in "])":
        # After a closing bracket ("tank [2]. It", "(IP54). The"): no abbreviation, initial or ordinal ends so,
        # and only a lower-case word carries the sentence on (_by_rules decides the same, more slowly).
        return text[dot + 1 : min(limit, dot + 40)].lstrip(" \t" + _CLOSERS).lstrip()[:1].islower()
    return _by_rules(text, dot, limit)


def _by_rules(text: str, dot: int, limit: int) -> bool:
    before = text[max(0, dot - 24) : dot].rsplit(None, 1)
    word = before[-1].lstrip("([{\"'“‘«").rstrip(".").lower() if before and not text[dot - 1].isspace() else ""
    # "FRED/St. Louis", "Dallas–St. Paul": the abbreviation is the last part of a slashed or dashed word
    word = word.rsplit("/", 1)[-1].rsplit("–", 1)[-1].rsplit("—", 1)[-1]
    if not word:
        return False
    following = text[dot + 1 : min(limit, dot + 40)].lstrip(" \t" + _CLOSERS).split(None, 1)
    next_word = following[0] if following else ""
    if next_word[:1].islower():
        return True  # a lower-case word goes on with the sentence ("approx. five", "Inc. and")
    if word in _NEVER_FINAL:
        return True
    if word in _BEFORE_NUMBERS:
        return next_word[:1].isdigit()
    if word == "c" and text[dot - 1] == "c" and next_word[:1].isdigit():
        return True  # circa: "(c. 1900)", "built c. 1200"
    if word.isdigit() and len(word) <= 2:
        return next_word.rstrip(".,").lower() in _MONTHS
    final = word in _FINAL or (len(word) == 1 and word.isalpha()) or _DOTTED.fullmatch(word) is not None
    if not final:
        return False
    if word in ("etc", "usw"):
        return not next_word[:1].isupper()  # "…, etc. The next sentence"
    if not next_word:
        return False  # at the end of a line or of the text: the sentence ends with the abbreviation
    opener = next_word.strip("\"'“‘«(,;:").lower()
    if not opener[:1].isalpha() or not opener.isascii():
        return False  # a number, a symbol or a CJK word after "Inc.": a new sentence
    return opener not in _OPENERS
