"""The one clock every record is stamped with: UTC, ISO 8601.

Code that measures time out (sessions, reservations of an edge, the login rate limit) takes a :data:`Clock`, a
callable returning the current aware UTC time, with :func:`system_clock` as the default; a test passes a
:class:`ManualClock` and moves it forward instead of waiting.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Literal

__all__ = ["Clock", "ManualClock", "iso", "system_clock", "utc_now"]

Clock = Callable[[], datetime]
"""The current time, timezone-aware in UTC."""


def system_clock() -> datetime:
    """The machine's current UTC time."""
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    """``moment`` as the stores write times: ISO 8601 in UTC with microseconds, comparable as text."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def utc_now(timespec: Literal["seconds", "microseconds"] = "seconds") -> str:
    """The current UTC time in ISO 8601 (``microseconds`` where records are ordered by it)."""
    return datetime.now(UTC).isoformat(timespec=timespec)


class ManualClock:
    """A clock that stands still until it is moved: time-outs are tested by moving it, never by sleeping."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or datetime(2026, 1, 1, tzinfo=UTC)
        if self._now.tzinfo is None:
            raise ValueError(f"a clock's time must be timezone-aware, not {self._now!r}")
        self._lock = threading.Lock()

    def __call__(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` forward (never back)."""
        if seconds < 0:
            raise ValueError(f"a clock moves forward only, not by {seconds!r} s")
        with self._lock:
            self._now += timedelta(seconds=seconds)
