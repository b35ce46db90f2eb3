"""The interchange format ``citeaudit.audit/v1`` and protocol files (docs/ingest.md): the boundary where outside
data enters. Pydantic checks shapes; the reader checks references; both report the file, the JSON path and
the offending value. What comes out is a canonical :class:`~citeaudit.core.model.Audit`.
"""

from citeaudit.interchange.reader import (
    audit_from_document,
    load_audit,
    load_protocol,
    parse_audit_bytes,
    protocol_from_mapping,
)
from citeaudit.interchange.schema import AUDIT_FORMAT, AuditDocument, ProtocolIn
from citeaudit.interchange.writer import audit_to_document, protocol_to_mapping

__all__ = [
    "AUDIT_FORMAT",
    "AuditDocument",
    "ProtocolIn",
    "audit_from_document",
    "audit_to_document",
    "load_audit",
    "load_protocol",
    "parse_audit_bytes",
    "protocol_from_mapping",
    "protocol_to_mapping",
]
