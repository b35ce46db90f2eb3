"""The one clock every record is stamped with: UTC, ISO 8601."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

__all__ = ["utc_now"]


def utc_now(timespec: Literal["seconds", "microseconds"] = "seconds") -> str:
    """The current UTC time in ISO 8601 (``microseconds`` where records are ordered by it)."""
    return datetime.now(UTC).isoformat(timespec=timespec)
