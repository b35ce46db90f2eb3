"""The response headers citeaudit acts on, read from whatever a server sends.

A header value is text a server chose: ``str.isdigit`` takes ``"²"`` and ``"١٢"``, which ``float`` and ``int``
then refuse or read as something else. Every header the fetcher and the collector act on is read here, by rules
written out below; a value that breaks them raises :class:`MalformedHeader`, which fails the one source (or
request) that received it with a reason, never the run.
"""

from __future__ import annotations

import email.utils
import math
import re
from datetime import UTC, datetime

__all__ = ["MAX_HEADER_CHARS", "MalformedHeader", "content_length", "retry_after"]

MAX_HEADER_CHARS = 1000
"""Longest value of a header read here; a longer one is malformed (real values are a few dozen characters)."""

_DIGITS = re.compile(r"[0-9]+")
"""ASCII digits only: ``\\d`` and ``str.isdigit`` also take other scripts' digits and superscripts."""
_SECONDS_DIGITS = 12
"""Delta-seconds longer than this (over 31 000 years) are read as infinitely far, without converting them."""


class MalformedHeader(Exception):
    """A header value that breaks its rules; ``reason`` names the header for the source's failure reason."""

    def __init__(self, name: str, value: str) -> None:
        shown = value if len(value) <= 40 else value[:37] + "..."
        super().__init__(f"malformed {name}: {shown!r}")
        self.name = name
        self.value = value
        self.reason = "bad_header"


def _checked(name: str, value: str) -> str:
    text = value.strip(" \t")
    if not text or len(text) > MAX_HEADER_CHARS:
        raise MalformedHeader(name, value)
    return text


def retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value, ``None`` when the header is absent.

    The value is delta-seconds (ASCII digits; a longer number than any wait is ``inf``) or an HTTP date (a date in
    the past is 0). Anything else (other digits, a sign, a fraction, two values of a repeated header, a value over
    :data:`MAX_HEADER_CHARS`) raises :class:`MalformedHeader`."""
    if value is None:
        return None
    text = _checked("Retry-After", value)
    if _DIGITS.fullmatch(text):
        return math.inf if len(text.lstrip("0")) > _SECONDS_DIGITS else float(int(text))
    if not text.isascii():
        raise MalformedHeader("Retry-After", value)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        raise MalformedHeader("Retry-After", value) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def content_length(value: str | None) -> int | None:
    """The byte count a ``Content-Length`` value announces, ``None`` when absent; anything but ASCII digits (or
    repeated different values) raises :class:`MalformedHeader`. A repeated header with one value
    (``"12, 12"``) is that value."""
    if value is None:
        return None
    text = _checked("Content-Length", value)
    values = {part.strip(" \t") for part in text.split(",")}
    if len(values) != 1:
        raise MalformedHeader("Content-Length", value)
    (single,) = values
    if not _DIGITS.fullmatch(single):
        raise MalformedHeader("Content-Length", value)
    # Over 2**63 bytes no body can be; the digits are not converted past that length (int() refuses 4300 digits).
    return int(single) if len(single.lstrip("0")) <= 19 else 2**63
