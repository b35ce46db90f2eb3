"""Reader for the interchange format ``citeaudit.audit/v1``."""

from __future__ import annotations

import re

from citeaudit.ingest.base import Reader
from citeaudit.interchange import parse_audit_bytes

__all__ = ["READER"]

_FORMAT = re.compile(rb'"format"\s*:\s*"citeaudit\.audit/')


def can_read(head: bytes) -> bool:
    """True when the document declares a ``citeaudit.audit/…`` format near its start."""
    return bool(_FORMAT.search(head))


READER = Reader(
    name="audit-json",
    description="citeaudit.audit/v1 interchange JSON (answers, claims, edges, judgements)",
    can_read=can_read,
    read_audit=parse_audit_bytes,
)
