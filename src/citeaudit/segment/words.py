"""Words of an English or German sentence for ``rules-v2``: tokens with their bracket depth, verbs and verb
groups, and the clause (an exact span and the text put in front of it) that a claim is made of. Pure."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from citeaudit.segment import lexicon

__all__ = ["Clause"]

_MAX_ITEM_WORDS = 7
"""The longest item of an enumeration, in words."""


class Clause(NamedTuple):
    """One clause: its exact span and what goes in front of that span's text."""

    start: int
    """Start of its span in the answer."""
    end: int
    """End of its span (exclusive)."""
    prefix: str
    """Text put in front of the span's text (empty when the span reads on its own)."""


_MARKS = re.compile(r"[()\[\]{}\"“”]")


_WORD = re.compile(r"[^\s,;，；、]+|[,;，；、]")


class _Token(NamedTuple):
    start: int
    end: int
    word: str
    """Lower-cased, stripped of quotes and closing punctuation."""
    depth: int
    """Bracket / quote nesting at the token."""
    upper: bool
    """Whether it starts with a capital letter."""


_new = tuple.__new__  # a named tuple made without its Python-level constructor: tokens are made by the thousand


def _tokens(text: str, start: int, end: int) -> list[_Token]:
    marks = [m.start() for m in _MARKS.finditer(text, start, end)]
    if not marks:  # the common sentence: no bracket, no quote, nothing nests
        return [
            _new(_Token, (m.start(), m.end(), w.rstrip(".:!?").lower(), 0, w[0].isupper()))
            for m in _WORD.finditer(text, start, end)
            for w in (m.group(),)
        ]
    tokens: list[_Token] = []
    depth = 0
    quoted = False
    next_mark = 0
    for found in _WORD.finditer(text, start, end):
        raw = found.group()
        token_end = found.end()
        if next_mark >= len(marks) or marks[next_mark] >= token_end:  # no bracket or quote in this word
            tokens.append(
                _new(_Token, (found.start(), token_end, raw.rstrip(".:!?").lower(), depth + quoted, raw[0].isupper()))
            )
            continue
        while next_mark < len(marks) and marks[next_mark] < token_end:
            next_mark += 1
        opening = raw.count("(") + raw.count("[") + raw.count("{")
        token_depth = depth + (raw[0] in "([{") + quoted
        word = raw.strip("\"'“”‘’«»()[]{}.:!?").lower()
        tokens.append(_Token(found.start(), token_end, word, token_depth, raw.lstrip("\"'“‘«([{")[:1].isupper()))
        depth = max(0, depth + opening - raw.count(")") - raw.count("]") - raw.count("}"))
        straight = raw.count('"') % 2
        if straight or raw.count("“") != raw.count("”"):
            quoted = not quoted if straight else raw.count("“") > raw.count("”")
    return tokens


_AUX_OR_VERBS = lexicon.AUX | lexicon.VERBS


def _is_verb(tokens: Sequence[_Token], i: int) -> bool:
    token = tokens[i]
    word = token.word
    if token.depth or not word.isalpha() or (token.upper and i > 0):
        return False  # "On May 7", "Will Smith": a capital inside the sentence is no verb
    if word in _AUX_OR_VERBS:
        # "Osama bin Laden": German "bin" between two names is a name particle
        return not (word == "bin" and i + 1 < len(tokens) and tokens[i + 1].upper and tokens[i - 1].upper)
    if word[-1] == "s":  # the words _present_verb may take; no word in -ed is one of them
        return _present_verb(tokens, i)
    if i == 0 or len(word) < 4 or not word.endswith("ed") or token.upper:
        return False
    previous = tokens[i - 1].word
    return previous not in lexicon.NOT_VERB_BEFORE and previous not in lexicon.AUX


def _present_verb(tokens: Sequence[_Token], i: int) -> bool:
    """``Oboh's work focuses on …``: a lower-case word in -s early in the sentence, after a noun or a name and
    before a preposition, an article or a pronoun, reads as the verb."""
    word = tokens[i].word
    if not 0 < i <= 6 or len(word) < 4 or not word.endswith("s") or word.endswith(("ss", "us", "is", "ics", "'s")):
        return False
    previous = tokens[i - 1].word
    if (
        previous in lexicon.NOT_VERB_BEFORE
        or previous in lexicon.DETERMINERS
        or previous in lexicon.PREPOSITIONS
        or previous == ","
    ):
        return False
    following = tokens[i + 1].word if i + 1 < len(tokens) else ""
    return following in lexicon.PREPOSITIONS or following in lexicon.DETERMINERS or following in lexicon.PRONOUNS


def _verb_group_end(tokens: Sequence[_Token], i: int) -> int:
    """Index after the verb group starting at ``i`` (auxiliaries, adverbs, participles)."""
    j = i + 1
    while j < len(tokens):
        word = tokens[j].word
        if tokens[j].depth:
            break
        if (
            word in lexicon.AUX
            or word in lexicon.PARTICIPLES
            or word == "not"
            or (word.endswith("ly") and len(word) > 3)
            or (word in lexicon.GROUP_ADVERBS and tokens[j - 1].word in lexicon.AUX)
            or (
                (tokens[j - 1].word in lexicon.AUX or tokens[j - 1].word in lexicon.GROUP_ADVERBS)
                and (word.endswith("ed") or word.endswith("en") or word.endswith("ing"))
            )
        ):
            j += 1
        elif (
            word in ("and", "or", "and/or")
            and j + 1 < len(tokens)
            and not tokens[j + 1].upper
            and not tokens[j + 1].depth
            and _is_participle(tokens[j + 1].word)
            and tokens[j - 1].word not in lexicon.AUX
        ):
            j += 2  # "has written and directed films", "was born and raised in": one verb group
        else:
            break
    return j


def _is_participle(word: str) -> bool:
    return word in lexicon.PARTICIPLES or (word.endswith("ed") and word.isalpha())


_BRACKETED = re.compile(r"\s*\([^()]*\)")
_NUMBER_MARKER = re.compile(r"\[\d{1,4}\]")


def _clean(text: str, start: int, end: int) -> str:
    piece = text[start:end]
    if "(" in piece:
        piece = _BRACKETED.sub("", piece)
    if "[" in piece:
        piece = _NUMBER_MARKER.sub("", piece)
    return " ".join(piece.split()).strip(" ,;")


def _closing_comma(tokens: Sequence[_Token], first: int, limit: int) -> int:
    for i in range(first, limit):
        if tokens[i].word == "," and not tokens[i].depth:
            following = tokens[i + 1].word if i + 1 < limit else ""
            if following.isdigit():
                continue  # "October 27, 1940"
            return i
    return limit


def _copula_before(tokens: Sequence[_Token], first: int, at: int) -> bool:
    return any(tokens[k].word in lexicon.COPULAS for k in range(max(0, first - 3), first))
