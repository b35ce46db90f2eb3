"""Clauses of one sentence for ``rules-v2``: where a sentence splits into independently checkable assertions.

Pure. A sentence ``[start, end)`` (closing punctuation and markers already trimmed) gives clauses, each an
exact span into the answer plus the *prefix* that makes its text self-contained (the shared subject, and the
verb for objects and adjuncts). English and German are read word by word with small lexicons; Chinese by
its punctuation and the verbs that open a predicate. What splits:

- coordinated predicates sharing a subject (``X has A and can B`` → ``X has A`` / ``X can B``) and coordinated
  clauses with their own subject (``…, and his wife died``);
- enumerations of objects sharing a predicate (``X supports A, B and C`` → ``X supports A`` / ``X supports B``
  / ``X supports C``; ``has a 500 Wh battery and a range of 120 km``);
- appositives and non-restrictive relative clauses (``X, who became Y, did Z`` → ``X became Y`` / ``X did Z``;
  ``…, founder of Z,`` → ``… is founder of Z``), and a relative clause after a copula (``was an engineer who is
  known for …``);
- comma-set adjuncts and ``including`` lists after the predicate (``…, after four years`` → ``X resigned after
  four years``), and a place after a year (``born on 3 May 1862 in London``);
- examples after ``such as`` / ``like`` / ``including`` (``appeared in films such as Heat`` → ``… appeared in
  films`` / ``… appeared in Heat``), list items sharing the words up to the first item's preposition (``known for
  his wit and charm`` → ``… known for his charm``), ``an actor best known for …``, participle clauses
  (``…, becoming …`` → ``X became …``), a leading ``Born in …,``, a year in brackets after a title, life dates
  in brackets after the subject, a place in a place (``in Milan, Italy``) and ``, where he …``; the phrases are
  found by :mod:`citeaudit.segment.phrases`;
- Chinese clauses after ``，`` that open with a predicate (``AX220的水箱容量为20升，可以在户外使用`` →
  ``AX220可以在户外使用``) and ``、`` / ``和`` enumerations after a verb.

Nothing inside brackets or quotes splits. A sentence whose subject cannot be found short and clear (no more
than ten words, not opened by a subordinator such as *whether* or *wenn*) is split only where each part
carries its own subject.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from citeaudit.segment import lexicon
from citeaudit.segment.chinese import _chinese
from citeaudit.segment.phrases import (
    _DEGREE,
    _DESCRIBED,
    _LEAD_PARTICIPLES,
    _described,
    _gerund,
    _life_dates,
    _name_end,
    _name_in,
    _place_in_region,
    _second_place_or_date,
    _such_as,
    _such_head,
    _title_year,
)
from citeaudit.segment.words import (
    _MAX_ITEM_WORDS,
    Clause,
    _clean,
    _closing_comma,
    _copula_before,
    _is_participle,
    _is_verb,
    _Token,
    _tokens,
    _verb_group_end,
)

__all__ = ["Clause", "split_sentence"]


_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


_NATIONALITY = re.compile(r"[A-Z][a-zé]+(?:an|ese|ish|ch|ss|i|ic)")


_MERGE = "\x00"
"""Prefix of a piece that is no clause of its own: it joins the clause before it."""


_MAX_SUBJECT_WORDS = 10


def split_sentence(text: str, start: int, end: int, subject_hint: str | None = None) -> tuple[list[Clause], str | None]:
    """Clauses of ``text[start:end]`` and the sentence's subject (``None`` when none was found).

    ``subject_hint`` is the subject of an earlier piece of the same sentence (an engine span cut it): a piece
    that opens with a predicate gets it put back.
    """
    if _CJK.search(text, start, end) and text.count(" ", start, end) * 8 < end - start:
        return _chinese(text, start, end, subject_hint)
    tokens = _tokens(text, start, end)
    if not tokens:
        return [Clause(start, end, "")], None
    return _english(text, tokens, start, end, subject_hint)


# -- English and German --------------------------------------------------------------------------------------


_ANY_RELATIVE = lexicon.RELATIVES | lexicon.GERMAN_RELATIVES


def _first_verb(tokens: Sequence[_Token]) -> int | None:
    """The finite verb of the main clause: the first verb outside a comma-set relative clause."""
    i = 1
    while i < len(tokens):
        word = tokens[i].word
        if word == "," and i + 1 < len(tokens) and tokens[i + 1].word in _ANY_RELATIVE:
            i = _closing_comma(tokens, i + 1, len(tokens))
            continue
        if word not in (",", ";") and _is_verb(tokens, i):
            return i
        i += 1
    return None


def _english(
    text: str, tokens: list[_Token], start: int, end: int, hint: str | None
) -> tuple[list[Clause], str | None]:
    verb = _first_verb(tokens)
    if tokens[0].word in lexicon.AUX or tokens[0].word in lexicon.VERBS:
        verb = 0  # a piece that continues an earlier piece's predicate ("… tank" | "and weighs 38 kg")
    if verb is None:
        return [Clause(start, end, "")], None
    clauses, subject = _english_clauses(text, tokens, verb, start, end, hint)
    if (
        subject is None
        and verb > 0
        and (tokens[0].word in lexicon.SUBORDINATORS or tokens[0].word in lexicon.PREPOSITIONS)
    ):
        clauses, subject = _after_lead(text, tokens, start, end, hint) or (clauses, subject)
    merged: list[Clause] = []
    for clause in clauses:
        if clause.prefix == _MERGE:
            if merged:
                merged[-1] = Clause(merged[-1].start, max(merged[-1].end, clause.end), merged[-1].prefix)
            continue
        merged.append(clause)
    if "(" in text[start:end]:
        merged = [part for clause in merged for part in _title_year(text, clause)]
    return merged, subject


def _after_lead(
    text: str, tokens: list[_Token], start: int, end: int, hint: str | None
) -> tuple[list[Clause], str | None] | None:
    """``As the representative of her country, Barboza competed …``: the clauses after a leading adverbial
    (the first comma after which a short subject and a verb follow); the adverbial stays in the first span."""
    for comma in range(1, len(tokens) - 2):
        if tokens[comma].word != "," or tokens[comma].depth:
            continue
        rest = tokens[comma + 1 :]
        verb = _first_verb(rest)
        if verb is None or rest[0].word in lexicon.SUBORDINATORS or rest[0].word in lexicon.PREPOSITIONS:
            continue
        clauses, subject = _english_clauses(text, rest, verb, rest[0].start, end, hint)
        if subject is None:
            continue
        if clauses and clauses[0].start == rest[0].start and not clauses[0].prefix:
            clauses[0] = Clause(start, clauses[0].end, "")
        return clauses, subject
    return None


def _english_clauses(
    text: str, tokens: list[_Token], verb: int, start: int, end: int, hint: str | None
) -> tuple[list[Clause], str | None]:
    """Clauses of a sentence whose main verb is ``tokens[verb]``: the subject before it (after a leading
    adverbial's comma, or before appositives set off by commas), the appositives, then the predicate."""
    commas = [i for i in range(verb) if tokens[i].word == "," and not tokens[i].depth]
    appositives: list[tuple[int, int]] = []
    lead: Clause | None = None
    if verb == 0:
        if not hint:
            return [Clause(start, end, "")], None
        subject = hint
        subject_first = 0
    elif not commas:
        subject_first = 0
        subject = _clean(text, start, tokens[verb].start)
    elif commas[-1] < verb - 1:
        subject_first = commas[-1] + 1
        subject = _clean(text, tokens[subject_first].start, tokens[verb].start)
        if len(commas) == 1 and tokens[0].word in _LEAD_PARTICIPLES:
            lead = Clause(start, tokens[commas[0] - 1].end, "")
    else:
        subject_first = 0
        subject = _clean(text, start, tokens[commas[0]].start)
        bounds = [*commas]
        appositives = [(bounds[k] + 1, bounds[k + 1]) for k in range(len(bounds) - 1)]
    words = subject.split()
    if (
        not words
        or len(words) > _MAX_SUBJECT_WORDS
        or words[0].lower() in lexicon.SUBORDINATORS
        or tokens[subject_first].word in lexicon.SUBORDINATORS
    ):
        return [Clause(start, end, "")], None
    clauses: list[Clause] = []
    if lead is not None:
        # "Born in France, Diallo began …" → "Diallo was born in France" / "Diallo began …"
        clauses.append(Clause(lead.start, lead.end, f"{subject} was"))
        start = tokens[subject_first].start
    for first, last in appositives:
        clauses.extend(_appositive(text, tokens, first, last, subject))
    bracketed = _life_dates(text, tokens[subject_first].start, tokens[verb].start, subject) if verb > 0 else []
    clauses.extend(bracketed)
    group_end = _verb_group_end(tokens, verb)
    verb_text = _clean(text, tokens[verb].start, tokens[group_end - 1].end)
    span_start = start if not appositives and not bracketed and verb > 0 else tokens[verb].start
    prefix = "" if span_start == start and verb > 0 else subject
    clauses.extend(_predicate(text, tokens, verb, group_end, len(tokens), span_start, end, subject, verb_text, prefix))
    return clauses, subject


def _appositive(text: str, tokens: Sequence[_Token], first: int, last: int, subject: str) -> list[Clause]:
    """The claim an appositive between the subject and its verb makes: a relative clause gets the subject in
    place of its pronoun, ``born …`` gets ``was``, a noun phrase gets ``is`` (``ist``)."""
    if first >= last:
        return []
    word = tokens[first].word
    begin, stop = tokens[first].start, tokens[last - 1].end
    if word in lexicon.RELATIVES or word in lexicon.GERMAN_RELATIVES:
        if first + 1 >= last:
            return []
        return [Clause(tokens[first + 1].start, stop, subject)]
    if word in ("born", "geboren"):
        return [Clause(begin, stop, f"{subject} was")]
    if word in ("often", "also", "commonly", "better", "known", "auch"):
        return [Clause(begin, stop, f"{subject} is")]
    if word in lexicon.DETERMINERS or tokens[first].word[:1].isalpha():
        copula = "ist" if word in ("ein", "eine", "der", "die", "das") else "is"
        return [Clause(begin, stop, f"{subject} {copula}")]
    return []


def _predicate(
    text: str,
    tokens: Sequence[_Token],
    verb: int,
    group_end: int,
    limit: int,
    span_start: int,
    end: int,
    subject: str,
    verb_text: str,
    prefix: str,
) -> list[Clause]:
    """Clauses of the predicate that starts at token ``verb`` (its span starting at ``span_start``)."""
    cut = _next_cut(tokens, group_end, limit)
    if cut is None:
        return _objects(text, tokens, verb, group_end, limit, span_start, end, subject, verb_text, prefix)
    kind, at, resume = cut
    stop = tokens[at - 1].end if at > 0 else tokens[at].start
    head = _objects(text, tokens, verb, group_end, at, span_start, stop, subject, verb_text, prefix)
    rest_start = tokens[resume].start
    if kind == "predicate":
        rest_group = _verb_group_end(tokens, resume)
        rest_verb = _clean(text, tokens[resume].start, tokens[rest_group - 1].end)
        return head + _predicate(text, tokens, resume, rest_group, limit, rest_start, end, subject, rest_verb, subject)
    if kind == "clause":
        sub_tokens = list(tokens[resume:limit])
        clauses, _ = _english(text, sub_tokens, rest_start, end, subject)
        return head + clauses
    if kind == "appositive":
        # "…, an alumnus of Ahmadu Bello University, a research university in Zaria" → "… University is a …"
        antecedent = _antecedent(text, tokens, at, verb, group_end, subject)
        close = _closing_comma(tokens, resume, limit)
        appositive = [Clause(rest_start, tokens[close - 1].end, f"{antecedent} is")]
        return head + appositive + _adjunct_or_rest(text, tokens, close + 1, limit, end, subject, verb_text)
    if kind == "relative":
        antecedent = _antecedent(text, tokens, at, verb, group_end, subject)
        close = _closing_comma(tokens, resume, limit)
        relative = [Clause(rest_start, tokens[close - 1].end, antecedent)] if close > resume else []
        return head + relative + _adjunct_or_rest(text, tokens, close + 1, limit, end, subject, verb_text)
    if kind == "where":
        close = _closing_comma(tokens, resume, limit)
        verb_at = resume if _is_verb(tokens, resume) or tokens[resume].word in lexicon.AUX else None
        if verb_at is None:
            return [*head, Clause(rest_start, tokens[close - 1].end, _MERGE)]
        rest_group = _verb_group_end(tokens, verb_at)
        rest_verb = _clean(text, tokens[verb_at].start, tokens[rest_group - 1].end)
        return (
            head
            + _predicate(
                text, tokens, verb_at, rest_group, close, rest_start, tokens[close - 1].end, subject, rest_verb, subject
            )
            + _adjunct_or_rest(text, tokens, close + 1, limit, end, subject, verb_text)
        )
    if kind == "place":
        # "in Milan, Italy" → "… in Milan" / "Milan is in Italy"
        place_start = at - 1
        while place_start > group_end and tokens[place_start - 1].upper and not tokens[place_start - 1].depth:
            place_start -= 1
        place = _clean(text, tokens[place_start].start, tokens[at - 1].end)
        run_end = _name_end(tokens, resume, limit)
        region = Clause(rest_start, tokens[run_end - 1].end, f"{place} is in")
        return [*head, region, *_adjunct_or_rest(text, tokens, run_end, limit, end, subject, verb_text)]
    if kind == "gerund":
        # "…, becoming the youngest minister" / "… before joining Mainz in 2016" → "He became …" / "He joined …"
        verb_word = tokens[resume].word
        after = resume + 1
        if verb_word == "having" and after < limit and _is_participle(tokens[after].word):
            past = f"had {tokens[after].word}"
            after += 1
        else:
            past = lexicon.past_tense(verb_word)
        if after >= limit:
            return head
        rest = f"{subject} {past}"
        return head + _predicate(text, tokens, after, after, limit, tokens[after].start, end, subject, past, rest)
    if kind == "described":
        # "is an actor best known for his role" → "… is an actor" / "… is best known for his role"
        copula = next((w for w in reversed(verb_text.split()) if w.lower() in lexicon.COPULAS), "is")
        rest_group = _verb_group_end(tokens, resume)
        rest_verb = f"{copula} {_clean(text, rest_start, tokens[rest_group - 1].end)}"
        rest_prefix = f"{subject} {copula}"
        return head + _predicate(
            text, tokens, resume, rest_group, limit, rest_start, end, subject, rest_verb, rest_prefix
        )
    # an adjunct or "including …": the subject and verb (with a short object right after it) go in front
    skip = 1 if tokens[resume].word in lexicon.INCLUDING else 0
    adjunct_head = verb_text
    if skip and at > group_end:
        adjunct_head = " ".join(p for p in (verb_text, _such_head(text, tokens, group_end, at - 1)) if p)
    if skip == 0:
        adjunct_head = " ".join(p for p in (verb_text, _object(text, tokens, group_end, at)) if p)
    return head + _adjunct(text, tokens, resume + skip, limit, end, subject, adjunct_head)


def _object(text: str, tokens: Sequence[_Token], first: int, limit: int) -> str:
    """``his first acting award`` in ``received his first acting award in 2006``: a short noun phrase opened by a
    determiner right after the verb, up to the first preposition or comma (empty when there is none)."""
    if first >= limit or tokens[first].word not in lexicon.DETERMINERS:
        return ""
    last = first
    while last + 1 < limit and last - first < 5:
        word = tokens[last + 1].word
        if word in lexicon.PREPOSITIONS or word in (",", ";") or word in lexicon.COORDINATORS or tokens[last + 1].depth:
            break
        last += 1
    if last - first >= 5:
        return ""
    return _clean(text, tokens[first].start, tokens[last].end)


def _adjunct(
    text: str, tokens: Sequence[_Token], first: int, limit: int, end: int, subject: str, verb_text: str
) -> list[Clause]:
    """An adjunct (``after four years``) read as a predicate of its own, with the subject and verb in front."""
    if first >= limit:
        return []
    shared = f"{subject} {verb_text}"
    return _predicate(text, tokens, first, first, limit, tokens[first].start, end, subject, verb_text, shared)


def _adjunct_or_rest(
    text: str, tokens: Sequence[_Token], first: int, limit: int, end: int, subject: str, verb_text: str
) -> list[Clause]:
    """What follows a split-off relative clause or adjunct: more adjuncts, a new predicate, or plain text."""
    if first >= limit:
        return []
    word = tokens[first].word
    if _is_verb(tokens, first) or word in lexicon.AUX:
        group = _verb_group_end(tokens, first)
        verb = _clean(text, tokens[first].start, tokens[group - 1].end)
        return _predicate(text, tokens, first, group, limit, tokens[first].start, end, subject, verb, subject)
    if word in lexicon.COORDINATORS and first + 1 < limit and _is_verb(tokens, first + 1):
        return _adjunct_or_rest(text, tokens, first + 1, limit, end, subject, verb_text)
    if word in lexicon.ADJUNCTS or word in lexicon.INCLUDING:
        skip = 1 if word in lexicon.INCLUDING else 0
        return _adjunct(text, tokens, first + skip, limit, end, subject, verb_text)
    # anything else (an appositive, "and Maria Jane Dyer", a place after a place) stays with the clause before
    close = _closing_comma(tokens, first, limit)
    merged = [Clause(tokens[first].start, tokens[close - 1].end, _MERGE)] if first < close else []
    return merged + _adjunct_or_rest(text, tokens, close + 1, limit, end, subject, verb_text)


_CUT_WORDS = frozenset(
    {";", ",", "before", "after", "who", "that", "where", "on", "am", "in", "im"}
    | lexicon.COORDINATORS
    | lexicon.AFTER_YEAR
    | _DEGREE
    | _DESCRIBED
)
"""The words at which :func:`_next_cut` may cut (any other word is passed over): the comma and semicolon, the
coordinators, the words that open a participle or relative clause, and those :func:`_described` and
:func:`_second_place_or_date` start with."""


def _next_cut(tokens: Sequence[_Token], first: int, limit: int) -> tuple[str, int, int] | None:
    """The next place the predicate splits: ``(kind, token index of the cut, index where the rest starts)``."""
    for i in range(first, limit):
        token = tokens[i]
        word = token.word
        if token.depth or word not in _CUT_WORDS:
            continue
        after = i + 1
        if word == ";" and after < limit:
            return "clause", i, after
        comma = word == ","
        if comma:
            following = tokens[after].word if after < limit else ""
            if following.isdigit() or not following:
                continue
            if following in lexicon.COORDINATORS and after + 1 < limit:
                found = _coordinated(tokens, after + 1, limit)
                if found:
                    return found[0], i, found[1]
                continue
            if following == "where" and after + 2 < limit and tokens[after + 1].word in lexicon.PRONOUNS:
                return "where", i, after + 2  # ", where he received a degree": the pronoun is the subject
            if following in lexicon.RELATIVES or (
                following in lexicon.GERMAN_RELATIVES and _german_relative(tokens, after, limit)
            ):
                if after + 1 < limit:
                    return "relative", i, after + 1
                continue
            gerund = _gerund(tokens, after, limit)
            if gerund is None and following in ("before", "after") and _gerund(tokens, after + 1, limit) == after + 1:
                gerund = after + 1
            if gerund is not None:
                return "gerund", i, gerund
            if _place_in_region(tokens, first, i, limit):
                return "place", i, after
            if (following in lexicon.ADJUNCTS or following in lexicon.INCLUDING) and after + 1 < limit:
                return "adjunct", i, after
            if (
                following in ("the", "a", "an")
                and i > first + 1
                and _appositive_after(tokens, after, limit)
                and _such_as(tokens, first, i) is None  # "shows including Heat, The Wire and …" is a list
            ):
                return "appositive", i, after
            continue
        if word in lexicon.COORDINATORS and after < limit and i > first:
            # "has written and directed films": verbs sharing one object are not cut apart
            found = _coordinated(tokens, after, limit)
            if found:
                return found[0], i, found[1]
        if word in ("before", "after") and i > first + 1 and _gerund(tokens, after, limit) == after:
            return "gerund", i, after
        relative = word in ("who", "that") and i > first and tokens[i - 1].word != "," and after < limit
        if relative and _copula_before(tokens, first, i) and _is_verb(tokens, after):
            return "predicate", i, after
        if i > first + 1 and after < limit and _described(tokens, first, i):
            return "described", i, i
        if i > first + 1 and after < limit and _second_place_or_date(tokens, i):
            return "adjunct", i, i
        if word == "where" and i > first and after + 1 < limit and tokens[after].word in lexicon.PRONOUNS:
            return "clause", i, after
    return None


def _appositive_after(tokens: Sequence[_Token], first: int, limit: int) -> bool:
    """``, the Dallas Cowboys`` closing a predicate: a noun phrase without a verb that is no list item (no ``and``
    in it or right after it)."""
    close = _closing_comma(tokens, first, limit)
    if close - first < 2:
        return False
    for k in range(first + 1, close):
        if tokens[k].word in lexicon.COORDINATORS or tokens[k].word == "or" or _is_verb(tokens, k):
            return False
    return not (close + 1 < limit and tokens[close + 1].word in ("and", "or", "und", "oder"))


def _german_relative(tokens: Sequence[_Token], at: int, limit: int) -> bool:
    """``, der 20 Liter fasst,``: a German relative pronoun opens a clause whose verb comes last."""
    close = _closing_comma(tokens, at + 1, limit)
    return close - at >= 3 and _is_verb(tokens, close - 1)


def _coordinated(tokens: Sequence[_Token], after: int, limit: int) -> tuple[str, int] | None:
    """After a coordinator: ``("predicate", verb index)`` for a new predicate of the same subject, ``("clause",
    first index)`` for a clause with its own subject, ``None`` otherwise."""
    k = after
    if k < limit and tokens[k].word in ("then", "also", "later", "dann", "auch", "später", "subsequently"):
        k += 1
    if k < limit and (_is_verb(tokens, k) or tokens[k].word in lexicon.AUX):
        return "predicate", k
    for j in range(after + 1, min(limit, after + 5)):
        if tokens[j].word in (",", ";") or tokens[j].depth:
            return None
        if tokens[j].word in lexicon.AUX or tokens[j].word in lexicon.VERBS:
            opener = tokens[after].word
            if opener in lexicon.DETERMINERS or opener in lexicon.PRONOUNS:
                return "clause", after
            return None
    return None


def _antecedent(text: str, tokens: Sequence[_Token], comma: int, verb: int, group_end: int, subject: str) -> str:
    """What a relative pronoun after ``comma`` stands for: a name or determiner phrase right before it, else
    the subject."""
    k = comma - 1
    first = k
    while first > group_end and tokens[first - 1].word not in (",", ";") and not tokens[first - 1].depth:
        if tokens[first].word in lexicon.DETERMINERS or tokens[first].word in lexicon.PREPOSITIONS:
            break
        first -= 1
    if tokens[first].word in lexicon.PREPOSITIONS:
        first += 1
    if first > k or tokens[k].depth:
        return subject
    return _clean(text, tokens[first].start, tokens[k].end) or subject


def _objects(
    text: str,
    tokens: Sequence[_Token],
    verb: int,
    group_end: int,
    limit: int,
    span_start: int,
    end: int,
    subject: str,
    verb_text: str,
    prefix: str,
) -> list[Clause]:
    """One predicate without further cuts, split at an enumeration of objects sharing it."""
    nationality = None
    if group_end < limit and span_start <= tokens[group_end].start:
        nationality = _nationality(text, tokens, group_end, limit, verb_text)
    if nationality is not None:
        # "was a Belgian serial killer" → "was a Belgian" / "was a serial killer"
        adjective_end, noun = nationality
        article = "an" if tokens[noun].word[:1] in "aeiou" else "a"
        shared = f"{subject} {verb_text} {article}"
        first = Clause(span_start, tokens[adjective_end].end, prefix)
        return [
            first,
            *_objects(text, tokens, verb, group_end, limit, tokens[noun].start, end, subject, verb_text, shared),
        ]
    whole = Clause(span_start, end, prefix)
    such = _such_as(tokens, group_end, limit)
    joint = None
    for i in range(group_end + 1, limit):
        if tokens[i].depth:
            continue
        if tokens[i].word in ("and", "or", "und", "oder", "sowie") and i + 1 < limit:
            if _adjectives(tokens, i, limit):
                continue  # "his innovative and controversial work": adjectives of one noun
            joint = i
            break
    if joint is None:
        if such is not None:
            # "appeared in films such as The Big Easy" → "appeared in films" / "appeared in The Big Easy"
            noun, item = such
            head = _such_head(text, tokens, group_end, noun)
            shared = " ".join(p for p in (subject, verb_text, head) if p)
            return [Clause(span_start, tokens[noun].end, prefix), Clause(tokens[item].start, end, shared)]
        return [whole]
    # items before the conjunction: comma-separated, back to the verb group
    bounds = [joint]
    k = joint - 1
    if tokens[k].word == ",":
        bounds = [k]
        k -= 1
    while k > group_end:
        if tokens[k].word == "," and not tokens[k].depth:
            if k + 1 < len(tokens) and tokens[k + 1].word.isdigit():
                return [whole]  # a date, not a list
            bounds.insert(0, k)
        k -= 1
    item_after = joint + 1
    second_at = bounds[0] + 1
    if second_at < limit and tokens[second_at].word in ("and", "or", "und", "oder", "sowie"):
        second_at += 1
    second = tokens[min(second_at, limit - 1)]
    item_stops = [*bounds]
    first_start = group_end
    if such is not None and such[1] >= bounds[0]:
        such = None
    region = range(such[1] if such else group_end, bounds[0])
    named = second.word in lexicon.DETERMINERS or second.word[:1].isdigit() or second.upper
    name = _name_in(tokens, region, bounds[0]) if (second.upper or second.depth) and such is None else None
    if name is not None:
        first_start = name  # "directed the series The Closer, Bones and …": the items share "the series"
    elif second.word not in lexicon.PREPOSITIONS:
        prepositions = [
            p for p in region if tokens[p].word in lexicon.PREPOSITIONS and not tokens[p].depth and not tokens[p].upper
        ]
        opened = [p for p in prepositions if second.word in lexicon.DETERMINERS and tokens[p + 1].word == second.word]
        if opened and bounds[0] - opened[-1] - 1 <= 2 * _MAX_ITEM_WORDS:
            # "held in the collections of the Musée d'Orsay in Paris, the Musée …": the item opens like the second
            first_start = opened[-1] + 1
        elif prepositions and bounds[0] - prepositions[-1] - 1 <= 4:
            first_start = prepositions[-1] + 1
            if not named and tokens[first_start].word in lexicon.POSSESSIVES and first_start + 1 < bounds[0]:
                first_start += 1  # "known for his wit, charm and …": the possessive is shared too
        elif such is not None:
            first_start = such[1]
    if first_start >= bounds[0]:
        return [whole]
    items: list[tuple[int, int]] = []
    begin = first_start
    for stop in item_stops:
        items.append((begin, stop))
        begin = stop + 1
        if begin < limit and tokens[begin].word in ("and", "or", "und", "oder", "sowie"):
            begin += 1
    last_stop = _closing_comma(tokens, item_after, limit)
    items.append((item_after, last_stop))
    items = [(a, b) for a, b in items if a < b]
    if len(items) < 2 or items[0][1] - items[0][0] > 2 * _MAX_ITEM_WORDS:
        return [whole]
    if any(b - a > _MAX_ITEM_WORDS for a, b in items[1:-1]):
        return [whole]
    if such is not None:
        # "films such as A, B and C": "films" is a claim; the items share what comes before the noun
        noun = such[0]
        between = _such_head(text, tokens, group_end, noun)
        if first_start > such[1]:
            between = " ".join(
                p for p in (between, _clean(text, tokens[such[1]].start, tokens[first_start - 1].end)) if p
            )
        clauses = [Clause(span_start, tokens[noun].end, prefix)]
        items[0] = (such[1], items[0][1])
        first_items = items
    else:
        between = _clean(text, tokens[group_end].start, tokens[first_start - 1].end) if first_start > group_end else ""
        clauses = [Clause(span_start, tokens[items[0][1] - 1].end, prefix)]
        first_items = items[1:]
    shared = " ".join(p for p in (subject, verb_text, between) if p)
    copular = not between and verb_text.split()[-1].lower() in lexicon.COPULAS
    for a, b in first_items:
        item_prefix = shared
        if (
            copular
            and tokens[a].word not in lexicon.DETERMINERS
            and tokens[a].word not in lexicon.PREPOSITIONS
            and not tokens[a].upper
            and tokens[a].word.isalpha()
        ):
            item_prefix = f"{shared} {'an' if tokens[a].word[:1] in 'aeiou' else 'a'}"  # "is an actress, singer"
        clauses.append(Clause(tokens[a].start, tokens[b - 1].end, item_prefix))
    if last_stop < limit:
        clauses.extend(_adjunct_or_rest(text, tokens, last_stop + 1, limit, end, subject, verb_text))
    return clauses


def _adjectives(tokens: Sequence[_Token], joint: int, limit: int) -> bool:
    """``his innovative and controversial work``: two lower-case words joined before one noun."""
    if joint < 2 or joint + 2 >= limit or tokens[joint - 2].word not in lexicon.DETERMINERS:
        return False
    before, after, noun = tokens[joint - 1], tokens[joint + 1], tokens[joint + 2]
    return (
        not before.upper
        and before.word.isalpha()
        and not after.upper
        and after.word not in lexicon.DETERMINERS
        and noun.word.isalpha()
        and noun.word not in lexicon.COORDINATORS
    )


def _nationality(
    text: str, tokens: Sequence[_Token], group_end: int, limit: int, verb_text: str
) -> tuple[int, int] | None:
    """``(index of the adjective's last word, index of the noun)`` for ``is a South Korean singer``: a copula, an
    article, a capitalised nationality and a lower-case noun."""
    if not verb_text or verb_text.split()[-1].lower() not in lexicon.COPULAS or group_end + 2 >= limit:
        return None
    if tokens[group_end].word not in ("a", "an"):
        return None
    k = group_end + 1
    if tokens[k].upper and k + 2 < limit and tokens[k + 1].upper:
        k += 1  # "South Korean", "New Zealand"
    word = text[tokens[k].start : tokens[k].end]
    noun = k + 1
    if not _NATIONALITY.fullmatch(word) or tokens[noun].upper or not tokens[noun].word.isalpha():
        return None
    if tokens[noun].word in lexicon.PREPOSITIONS or tokens[noun].word in lexicon.COORDINATORS or tokens[noun].depth:
        return None
    return k, noun


# -- Chinese -------------------------------------------------------------------------------------------------
