"""What a reader is."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from citeaudit.model import Audit

__all__ = ["Reader"]


class _CanRead(Protocol):
    def __call__(self, head: bytes) -> bool: ...


class _Read(Protocol):
    def __call__(self, data: bytes, source: str) -> Audit: ...


@dataclass(frozen=True, slots=True)
class Reader:
    """A file format citeaudit can import."""

    name: str
    """Format name for ``--format``."""
    description: str
    """One line for ``citeaudit formats``."""
    can_read: _CanRead
    """Whether the first bytes of a file look like this format."""
    read: _Read
    """Parse and check a whole file; ``source`` names it in errors."""
