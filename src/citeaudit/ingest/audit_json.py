"""Reader for the interchange format ``citeaudit.audit/v1``.

Recognising a document is cheap (:func:`can_read` looks at its declared format); parsing one loads the interchange
format's schema (pydantic), which is loaded then and only then: every payload's format is found by trying this
reader first, and an engine's payload is read without that schema (the import waits for it before its worker
starts)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from citeaudit.ingest.base import Reader
from citeaudit.ingest.shape import Shape, shape_of

if TYPE_CHECKING:
    from citeaudit.core.model import Audit

__all__ = ["READER"]


def can_read(content: bytes | Shape) -> bool:
    """True when the document declares a ``citeaudit.audit/…`` format."""
    shape = shape_of(content)
    return not shape.listed and any(value.startswith("citeaudit.audit/") for value in shape.values("format"))


def read_audit(data: bytes, source: str) -> Audit:
    """Parse and check an audit document (:func:`citeaudit.interchange.parse_audit_bytes`)."""
    from citeaudit.interchange import parse_audit_bytes

    return parse_audit_bytes(data, source)


READER = Reader(
    name="audit-json",
    description="citeaudit.audit/v1 interchange JSON (answers, claims, edges, judgements)",
    can_read=can_read,
    read_audit=read_audit,
    reads="citeaudit.audit/v1 documents (the interchange format; its JSON Schema: citeaudit schema)",
    positionless="answers[].citations without start/end are answer-level; claims and edges are given explicitly",
)
