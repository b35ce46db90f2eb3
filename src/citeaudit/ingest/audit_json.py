"""Reader for the interchange format ``citeaudit.audit/v1``."""

from __future__ import annotations

from citeaudit.ingest.base import Reader
from citeaudit.ingest.shape import Shape, shape_of
from citeaudit.interchange import parse_audit_bytes

__all__ = ["READER"]


def can_read(content: bytes | Shape) -> bool:
    """True when the document declares a ``citeaudit.audit/…`` format."""
    shape = shape_of(content)
    return not shape.listed and any(value.startswith("citeaudit.audit/") for value in shape.values("format"))


READER = Reader(
    name="audit-json",
    description="citeaudit.audit/v1 interchange JSON (answers, claims, edges, judgements)",
    can_read=can_read,
    read_audit=parse_audit_bytes,
    reads="citeaudit.audit/v1 documents (the interchange format; its JSON Schema: citeaudit schema)",
    positionless="answers[].citations without start/end are answer-level; claims and edges are given explicitly",
)
