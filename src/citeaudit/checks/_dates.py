"""Dates and validity periods: when a certificate was issued, until when it is valid, what date a claim means.

A date is kept at the precision written (year, month or day) and compared at the coarser precision of the two
sides. Its *role* comes from the words just before it: ``valid until``/``expires`` (expiry), ``issued``/
``valid from`` (issue), ``as of``/``valid in`` (the date a claim applies a fact to), else none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["DateMention", "dates_in"]

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",),
            ("june", "jun"), ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"),
            ("october", "oct"), ("november", "nov"), ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}  # fmt: skip
_MONTH = r"(?P<month_name>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_YEAR = r"(?P<year>(?:19|20)\d{2})"
_ROLE_WORDS = {
    "expiry": r"valid until|valid till|valid through|valid thru|valid to|expires?(?: on)?|expired(?: on)?"
    r"|expiry(?: date)?|expiration(?: date)?|gültig bis",
    "issue": r"issued(?: on)?|issue date|date of issue|valid from|effective(?: from)?|since|certified on",
    "as_of": r"as of|valid in|valid on|valid at|in force (?:on|in)|current as of",
}
_FORMS = [
    re.compile(r"\b(?P<year>(?:19|20)\d{2})-(?P<month>\d{2})-(?P<day>\d{2})\b"),
    re.compile(rf"\b(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s+{_MONTH}\s+{_YEAR}\b", re.IGNORECASE),
    re.compile(rf"\b{_MONTH}\s+(?P<day>\d{{1,2}})(?:st|nd|rd|th)?,?\s+{_YEAR}\b", re.IGNORECASE),
    re.compile(r"\b(?P<first>\d{1,2})(?P<sep>[./])(?P<second>\d{1,2})(?P=sep)(?P<year>(?:19|20)\d{2})\b"),
    re.compile(rf"\b{_MONTH}\s+{_YEAR}\b", re.IGNORECASE),
    re.compile(rf"\b{_YEAR}\b"),
]
_PERIOD_END = re.compile(r"\s*(?:to|until|till|through|–|-|—|bis)\s*$", re.IGNORECASE)
_ROLE_PATTERNS = {
    role: re.compile(rf"(?:^|[^\w])(?:{words})\s*:?\s*(?:the\s+)?$", re.IGNORECASE)
    for role, words in _ROLE_WORDS.items()
}


@dataclass(frozen=True, slots=True)
class DateMention:
    """A date in text at the precision it was written."""

    start: int
    """Start offset."""
    end: int
    """End offset (exclusive)."""
    text: str
    """As written."""
    parts: tuple[int, ...]
    """(year,), (year, month) or (year, month, day)."""
    role: str | None
    """``expiry``, ``issue``, ``as_of`` or ``None``."""


def _parts(match: re.Match[str], locale: str) -> tuple[int, ...] | None:
    groups = match.groupdict()
    year = int(groups["year"])
    if groups.get("first"):
        first, second = int(groups["first"]), int(groups["second"])
        # 03/04/2026 is 4 March in the US and 3 April elsewhere; a dotted date is day first everywhere.
        month_first = groups["sep"] == "/" and locale.replace("_", "-").lower() in {"en", "en-us"}
        month, day = (first, second) if month_first else (second, first)
        return (year, month, day) if 1 <= month <= 12 and 1 <= day <= 31 else None
    written = str(_MONTHS[groups["month_name"].lower()]) if groups.get("month_name") else groups.get("month")
    if written is None:
        return (year,)
    month = int(written)
    if groups.get("day"):
        day = int(groups["day"])
        return (year, month, day) if 1 <= month <= 12 and 1 <= day <= 31 else None
    return (year, month) if 1 <= month <= 12 else None


def _role(text: str, start: int) -> str | None:
    before = text[max(0, start - 40) : start]
    for role in ("expiry", "issue", "as_of"):
        if _ROLE_PATTERNS[role].search(before):
            return role
    return None


_VALID_FOR = re.compile(
    r"(?:valid|validity|good)\s+(?:for|of)\s+(?P<count>\d{1,2})\s*(?P<unit>years?|months?)", re.IGNORECASE
)


def _derived_expiries(text: str, mentions: list[DateMention]) -> list[DateMention]:
    # "issued 1 March 2024, valid for 3 years": an expiry of 1 March 2027 at the issue date's precision.
    derived: list[DateMention] = []
    issues = [m for m in mentions if m.role == "issue"]
    for period in _VALID_FOR.finditer(text):
        issue = next((m for m in reversed(issues) if m.end <= period.start()), None) or next(
            (m for m in issues if m.start >= period.end()), None
        )
        if issue is None:
            continue
        count = int(period.group("count"))
        months = count * (12 if period.group("unit").lower().startswith("year") else 1)
        if len(issue.parts) == 1 and months % 12:
            continue  # a year plus some months has no year-precision answer
        year, rest = issue.parts[0], issue.parts[1:]
        if rest:
            month_index = rest[0] - 1 + months
            parts: tuple[int, ...] = (year + month_index // 12, month_index % 12 + 1, *rest[1:])
        else:
            parts = (year + months // 12,)
        derived.append(DateMention(period.start(), period.end(), period.group(), parts, "expiry"))
    return derived


def dates_in(text: str, locale: str = "en") -> list[DateMention]:
    """Every date in ``text``; a bare year counts only when a role word stands right before it."""
    taken: list[tuple[int, int]] = []
    mentions: list[DateMention] = []
    for index, form in enumerate(_FORMS):
        for match in form.finditer(text):
            if any(s <= match.start() < e or s < match.end() <= e for s, e in taken):
                continue
            parts = _parts(match, locale)
            if parts is None:
                continue
            role = _role(text, match.start())
            if index == len(_FORMS) - 1 and role is None:
                if not any(m.role == "issue" and _PERIOD_END.match(text, m.end, match.start()) for m in mentions):
                    continue
                role = "expiry"
            taken.append((match.start(), match.end()))
            mentions.append(DateMention(match.start(), match.end(), match.group(), parts, role))
    mentions.sort(key=lambda mention: mention.start)
    mentions += _derived_expiries(text, mentions)
    mentions.sort(key=lambda mention: mention.start)
    # "valid from X to Y": the end of a period that starts with an issue date is its expiry.
    for i in range(1, len(mentions)):
        previous, current = mentions[i - 1], mentions[i]
        if previous.role == "issue" and _PERIOD_END.match(text, previous.end, current.start):
            mentions[i] = DateMention(current.start, current.end, current.text, current.parts, "expiry")
    return mentions
