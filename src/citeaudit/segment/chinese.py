"""Clauses of a Chinese sentence for ``rules-v2``: read by its punctuation and the verbs that open a predicate.
Pure."""

from __future__ import annotations

import re

from citeaudit.segment.words import Clause

_ZH_PREDICATE = re.compile(
    r"(?:也|还|并|并且|而且|同时|可以|可|能够|能|具有|拥有|有|是|为|支持|配备|采用|提供|通过|获得|包括|适合|适用|用于|"
    r"重|售价|不|已|曾|将|被|在|于|位于|成立|出生|毕业|担任|属于|需要|使用|搭载|内置|带有|符合)"
)


_ZH_SUBJECT_END = re.compile(r"的|是|为|有|可以|能|配备|支持|采用|具有|拥有|通过|在|于|位于")


def _chinese(text: str, start: int, end: int, hint: str | None) -> tuple[list[Clause], str | None]:
    """Clauses after ``，`` / ``,`` that open with a predicate get the subject of the first clause; other
    parts stay with the clause before them."""
    subject = _zh_subject(text, start, end) or hint
    parts: list[tuple[int, int]] = []
    begin = start
    depth = 0
    for i in range(start, end):
        char = text[i]
        if char in "（(「『“":
            depth += 1
        elif char in "）)」』”" and depth:
            depth -= 1
        elif char in "，," and not depth:
            parts.append((begin, i))
            begin = i + 1
    parts.append((begin, end))
    first_prefix = hint if hint and _ZH_PREDICATE.match(text, start) else ""
    clauses = [Clause(parts[0][0], parts[0][1], first_prefix)]
    for a, b in parts[1:]:
        while a < b and text[a].isspace():
            a += 1
        if subject and _ZH_PREDICATE.match(text, a, b):
            clauses.append(Clause(a, b, subject))
        else:
            last = clauses[-1]
            clauses[-1] = Clause(last.start, b, last.prefix)
    return [item for clause in clauses for item in _zh_items(text, clause)], subject


def _zh_items(text: str, clause: Clause) -> list[Clause]:
    """``AX220支持蓝牙、WLAN和NFC`` → one clause per object after the verb (``、`` between them, ``和`` / ``及`` /
    ``与`` before the last), each with the subject and verb in front."""
    if "、" not in text[clause.start : clause.end]:
        return [clause]
    verb = _ZH_PREDICATE.search(text, clause.start, clause.end)
    if verb is None or verb.end() >= text.find("、", clause.start, clause.end):
        return [clause]
    head = clause.prefix + text[clause.start : verb.end()].strip()
    bounds = [verb.end()]
    for i in range(verb.end(), clause.end):
        if text[i] == "、":
            bounds.append(i)
    last = max(text.rfind(joint, bounds[-1], clause.end) for joint in "和及与")
    if last > bounds[-1]:
        bounds.append(last)
    bounds.append(clause.end)
    items = [(bounds[k] + (k > 0), bounds[k + 1]) for k in range(len(bounds) - 1)]
    if any(b - a > 12 or b <= a for a, b in items):
        return [clause]  # long items are clauses of their own, not a list of objects
    found = [Clause(clause.start, items[0][1], clause.prefix)]
    found.extend(Clause(a, b, head) for a, b in items[1:])
    return found


def _zh_subject(text: str, start: int, end: int) -> str | None:
    """The topic of a Chinese sentence: the words before ``的`` when the subject is a possessive phrase
    (``AX220的水箱容量`` → ``AX220``), else the words before a verb other than the copulas ``为`` / ``是`` (an
    attribute such as ``最大工作压力为10巴`` has no topic to lend a later clause)."""
    found = _ZH_SUBJECT_END.search(text, start, end)
    if found is None or found.start() == start or found.group() in ("为", "是"):
        return None
    subject = text[start : found.start()].strip()
    if len(subject) > 20 or "，" in subject or "," in subject:
        return None
    return subject
