"""Phrases inside a predicate that ``rules-v2`` makes claims of their own: examples after ``such as``, names in a
list, a year in brackets after a title, life dates after a subject, a place in a place, participle clauses and
a second date or place. Each function only finds the phrase; :mod:`citeaudit.segment.clauses` builds the claims.
Pure."""

from __future__ import annotations

import re
from collections.abc import Sequence

from citeaudit.segment import lexicon
from citeaudit.segment.words import _MAX_ITEM_WORDS, Clause, _clean, _copula_before, _Token

_YEAR_IN_BRACKETS = re.compile(r"\s*\((1[5-9]\d\d|20\d\d)\)$")


def _title_year(text: str, clause: Clause) -> list[Clause]:
    """``starred in A Bronx Tale (1993)`` → ``… starred in A Bronx Tale`` / ``A Bronx Tale is from 1993``: a year in
    brackets after a title closing the clause is a claim about the title."""
    body = text[clause.start : clause.end]
    found = _YEAR_IN_BRACKETS.search(body)
    if found is None:
        return [clause]
    words = body[: found.start()].split(" ")
    k = len(words)
    while k > 0:
        word = words[k - 1].strip("\"“”‘’'«»,")
        if not word or not (word[:1].isupper() or word[:1].isdigit() or word.lower() in lexicon.TITLE_WORDS):
            break
        k -= 1
    while k < len(words) and words[k].strip("\"“”‘’'«»") in lexicon.TITLE_WORDS:
        k += 1  # "the films Boy (2010)": lower-case words before the title are not part of it
    title = " ".join(words[k:]).strip("\"“”‘’'«», ")
    if not title or not title[:1].isupper() or len(words) - k > 10:
        return [clause]
    year_start = clause.start + found.start(1)
    return [
        Clause(clause.start, clause.start + found.start(), clause.prefix),
        Clause(year_start, year_start + 4, f"{title} is from"),
    ]


_BRACKET = re.compile(r"\(([^()]*)\)")


_BORN = re.compile(r"(?:born|b\.)\s+\S")


_LIFE_YEARS = re.compile(r"(?:c\.\s*)?(\d{4})\s*[-–—]\s*(?:c\.\s*)?(\d{4}|present)")


def _life_dates(text: str, start: int, end: int, subject: str) -> list[Clause]:
    """Claims of brackets after the subject: ``Wendy (born Son Seung-wan on 21 February 1994) is …`` → ``Wendy was
    born Son Seung-wan on …``; ``X (1957 – 2011) was …`` → ``X was born in 1957`` / ``X died in 2011``."""
    found = _BRACKET.search(text, start, end)
    if found is None:
        return []
    inner_start, inner_end = found.span(1)
    while inner_start < inner_end and text[inner_start].isspace():
        inner_start += 1
    if _BORN.match(text, inner_start, inner_end):
        return [Clause(inner_start, inner_end, f"{subject} was")]
    years = _LIFE_YEARS.fullmatch(text, inner_start, inner_end)
    if years is None:
        return []
    clauses = [Clause(years.start(1), years.end(1), f"{subject} was born in")]
    if years.group(2) != "present":
        clauses.append(Clause(years.start(2), years.end(2), f"{subject} died in"))
    return clauses


_PLACE_PREPOSITIONS = frozenset(["in", "from", "near", "at", "im", "aus", "bei"])


def _name_end(tokens: Sequence[_Token], first: int, limit: int) -> int:
    k = first
    while k < limit and tokens[k].upper and not tokens[k].depth and k - first < 3:
        k += 1
    return k


def _place_in_region(tokens: Sequence[_Token], first: int, comma: int, limit: int) -> bool:
    """``in Milan, Italy`` / ``born in Moradabad, Uttar Pradesh``: after a preposition of place, a name, a comma
    and a second name (at most three words each) that closes the clause or is followed by an adjunct: the first
    place lies in the second. Not in a list (``in Paris, London and Berlin``) and not after ``of``
    (``University of California, Los Angeles``)."""
    k = comma - 1
    while k > first and tokens[k].upper and not tokens[k].depth:
        k -= 1
    if comma - 1 - k > 3 or comma - 1 == k or tokens[k].word not in _PLACE_PREPOSITIONS or tokens[k].upper:
        return False
    run_end = _name_end(tokens, comma + 1, limit)
    if run_end == comma + 1 or tokens[comma + 1].word.replace(".", "") in ("dc", "d.c"):
        return False  # "Washington, D.C." is one place
    if run_end == limit:
        return True
    following = tokens[run_end].word
    if following == ",":
        return run_end + 1 < limit and tokens[run_end + 1].word not in ("and", "or", "und", "oder")
    return following in ("in", "on", "im", "am")


def _gerund(tokens: Sequence[_Token], at: int, limit: int) -> int | None:
    """Index of the ``-ing`` verb that opens a participle clause at ``at`` (``becoming …``, ``most notably winning
    …``, ``having established …``), ``None`` when there is none or nothing follows it."""
    k = at
    if k + 1 < limit and tokens[k].word in ("most", "thereby", "eventually", "later", "also", "subsequently"):
        k += 1 + (tokens[k].word == "most" and tokens[k + 1].word == "notably")
    if k + 1 >= limit:
        return None
    token = tokens[k]
    word = token.word
    if token.upper or token.depth or not word.isalpha() or not word.endswith("ing") or len(word) < 6:
        return None
    if word in lexicon.NOT_GERUNDS or tokens[k + 1].word in (",", ";"):
        return None
    return k


_LEAD_PARTICIPLES = frozenset(["born", "raised", "educated", "geboren"])


_DESCRIBED = frozenset(["known", "famous", "renowned", "remembered", "noted", "based", "located"])


_DEGREE = frozenset(["best", "well", "widely", "also", "perhaps", "mostly", "most", "internationally", "primarily"])


def _described(tokens: Sequence[_Token], first: int, i: int) -> bool:
    """``is an actor best known for …`` / ``is a company based in …``: after a copula and its noun, a participle
    that says something else about the subject."""
    word, previous = tokens[i].word, tokens[i - 1]
    if word in _DEGREE:
        if i + 2 >= len(tokens) or tokens[i + 1].word not in _DESCRIBED:
            return False
        following = tokens[i + 2].word
    elif word in _DESCRIBED:
        following = tokens[i + 1].word
    else:
        return False
    if following not in ("for", "as", "in", "at", "on", "by", "für", "als"):
        return False
    if previous.depth or not previous.word.isalpha() or previous.word in lexicon.DETERMINERS:
        return False
    if previous.word in lexicon.PREPOSITIONS or previous.word in lexicon.AUX or previous.word in _DEGREE:
        return False
    return _copula_before(tokens, first, i)


_YEAR = re.compile(r"1[5-9]\d\d|20\d\d")


_LIFE_EVENTS = frozenset(["born", "died", "geboren", "gestorben", "starb"])


_FOUR_DIGITS = re.compile(r"\d{4}")


def _second_place_or_date(tokens: Sequence[_Token], i: int) -> bool:
    """``born in Tehran on 27 October`` / ``born on 3 May 1862 in London`` / ``died in 2005 at the age of 86``: a
    second adjunct after a place or a date."""
    word, previous, following = tokens[i].word, tokens[i - 1], tokens[i + 1]
    if word in ("on", "am") and following.word in lexicon.MONTH_NAMES and (previous.upper or previous.word.isdigit()):
        return True
    if word in ("in", "im") and previous.upper and _YEAR.fullmatch(following.word):
        # "born in Los Angeles, California in 1994": a year after the place of a birth or a death
        return any(tokens[k].word in _LIFE_EVENTS for k in range(max(0, i - 8), i - 1))
    return word in lexicon.AFTER_YEAR and _FOUR_DIGITS.fullmatch(previous.word) is not None and not following.depth


def _name_in(tokens: Sequence[_Token], region: range, stop: int) -> int | None:
    """Where a name starts right after a lower-case noun in a list's first item (``the films Boy``), when the name
    is short enough to be one item."""
    for k in region:
        if k == region.start:
            continue
        token, previous = tokens[k], tokens[k - 1]
        if not token.upper or token.depth or previous.depth or previous.upper or not previous.word.isalpha():
            continue
        if (
            previous.word in lexicon.DETERMINERS
            or previous.word in lexicon.PREPOSITIONS
            or previous.word in lexicon.AUX
        ):
            continue
        return k if stop - k <= _MAX_ITEM_WORDS else None
    return None


def _such_as(tokens: Sequence[_Token], first: int, limit: int) -> tuple[int, int] | None:
    """``(index of the noun, index of the first example)`` for ``films such as The Big Easy`` / ``films like Judwaa``:
    a lower-case noun right before ``such as`` (or ``like`` after a plural noun) and a named example after it."""
    for i in range(first + 1, limit - 1):
        token = tokens[i]
        if token.depth:
            continue
        if token.word == "such" and i + 2 < limit and tokens[i + 1].word == "as":
            after = i + 2
        elif (token.word == "like" and tokens[i - 1].word.endswith("s")) or token.word in lexicon.INCLUDING:
            after = i + 1
        else:
            continue
        noun, example = tokens[i - 1], tokens[after]
        if (
            noun.upper
            or not noun.word.isalpha()
            or noun.word in lexicon.DETERMINERS
            or noun.word in lexicon.PREPOSITIONS
        ):
            continue
        if not (example.upper or example.depth or example.word[:1].isdigit()):
            continue
        return i - 1, after
    return None


_QUANTITY = frozenset(
    ["variety", "number", "range", "lot", "host", "couple", "list", "kind", "type", "array", "selection", "handful"]
)


def _such_head(text: str, tokens: Sequence[_Token], first: int, noun: int) -> str:
    """What the examples after ``such as`` share: the words between the verb and the last preposition before the
    noun (``in`` in ``appeared in several films such as``, ``for his roles in`` in ``known for his roles in
    television dramas such as``); empty when no preposition comes before the noun."""
    prepositions = [
        p
        for p in range(first, noun)
        if tokens[p].word in lexicon.PREPOSITIONS and not tokens[p].depth and not tokens[p].upper
    ]
    while prepositions and tokens[prepositions[-1]].word == "of" and tokens[prepositions[-1] - 1].word in _QUANTITY:
        prepositions.pop()  # "content for a variety of networks": the examples are networks content is for
    if not prepositions:
        return ""
    return _clean(text, tokens[first].start, tokens[prepositions[-1]].end)
