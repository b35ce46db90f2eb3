"""Numbers as written in text, read by locale: ``1,200`` is twelve hundred in English and 1.2 in German.

Babel gives each locale's decimal and group symbols. A spaced group (``1 200``, with a plain, no-break or
narrow no-break space, or the Swiss apostrophe) is a thousands separator in every locale, as SI writing
allows. When a token has both ``.`` and ``,`` the last one is the decimal mark whatever the locale says.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from babel.core import UnknownLocaleError
from babel.numbers import get_decimal_symbol, get_group_symbol

from citeaudit.core.errors import InvalidValue

__all__ = ["NUMBER_PATTERN", "Number", "parse_number", "validate_locale"]

_SPACES = " \u00a0\u202f\u2009'\u2019"
NUMBER_PATTERN = (
    r"(?<![\w.,])"
    r"(?:\d{1,3}(?:[,.](?:\d{3}))+(?:[.,]\d+)?"  # 1,200,000 / 1.200,5
    rf"|\d{{1,3}}(?:[{_SPACES}]\d{{3}})+(?:[.,]\d+)?"  # 1 200 / 1 200,5
    r"|\d+(?:[.,]\d+)?)"  # 1200 / 1.2 / 1,2
    r"(?![\d])"
)


@dataclass(frozen=True, slots=True)
class Number:
    """A number read from text with the precision it was written to."""

    value: float
    """The value."""
    half_step: float
    """Half the place value of the last written digit (``5.3`` → 0.05): how far rounding may have moved it."""


@functools.cache
def _symbols(locale: str) -> tuple[str, str]:
    tag = locale.replace("-", "_")
    decimal, group = get_decimal_symbol(tag), get_group_symbol(tag)
    return decimal, ("," if group == "," else "." if group == "." else " ")


def validate_locale(locale: str, where: str) -> None:
    """Raise ``InvalidValue`` naming ``where`` when babel does not know ``locale``."""
    try:
        _symbols(locale)
    except (UnknownLocaleError, ValueError) as exc:
        raise InvalidValue(
            where, "locale", f"unknown locale {locale!r} (use a BCP 47 tag such as 'en' or 'de-DE')"
        ) from exc


def parse_number(token: str, locale: str = "en") -> Number:
    """Read one number token (as matched by ``NUMBER_PATTERN``) under ``locale``'s conventions.

    >>> parse_number("1,200", "en").value, parse_number("1.200", "de").value, parse_number("1 200", "fr").value
    (1200.0, 1200.0, 1200.0)
    >>> parse_number("1,2", "de").value
    1.2
    """
    decimal_symbol, group_symbol = _symbols(locale)
    text = re.sub(rf"[{_SPACES}](?=\d{{3}}(?!\d))", "", token)
    marks = [c for c in text if c in ",."]
    if not marks:
        integer, fraction = text, ""
    elif "," in marks and "." in marks:
        decimal = marks[-1]
        integer, _, fraction = text.rpartition(decimal)
        integer = integer.replace("," if decimal == "." else ".", "")
    elif len(marks) > 1:
        integer, fraction = text.replace(marks[0], ""), ""
    else:
        mark = marks[0]
        head, _, tail = text.partition(mark)
        grouping = len(tail) == 3 and len(head) <= 3 and head != "0"
        # A lone mark is the decimal mark unless the locale groups with it and it sits where a group would.
        if mark == decimal_symbol or mark != group_symbol or not grouping:
            integer, fraction = head, tail
        else:
            integer, fraction = head + tail, ""
    value = float(f"{integer or '0'}.{fraction or '0'}")
    return Number(value, 0.5 * 10.0 ** (-len(fraction)))
