"""Where an engine finds the tables, and which protocol it scores.

A *table root* is a folder (or any URL the engine reads, e.g. ``s3://bucket/audit``) written by
``citeaudit export --format parquet``; a database is read through the same batches the export writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from citeaudit.core.convention_sql import partition_value
from citeaudit.core.errors import ScopeError
from citeaudit.core.model import Protocol
from citeaudit.interchange import ProtocolIn, protocol_from_mapping

__all__ = ["ProtocolRow", "choose_protocol_row", "parse_protocol_row"]


@dataclass(frozen=True, slots=True)
class ProtocolRow:
    """One row of the ``protocols`` table."""

    protocol_id: str
    """Protocol id."""
    version: str
    """Protocol version."""
    scoring: str
    """Scoring convention."""
    fingerprint: str
    """Full fingerprint (``sha256:…``)."""
    weighted: bool
    """Whether the protocol declares weights."""
    body: str
    """The protocol as JSON."""

    @property
    def partition(self) -> str:
        """Its ``protocol=`` partition value."""
        return partition_value(self.fingerprint)


def choose_protocol_row(rows: Sequence[ProtocolRow], selector: str | None, where: str) -> ProtocolRow:
    """The protocol named by ``selector`` (id, ``id@version`` or fingerprint prefix), else the only one."""
    listed = "; ".join(f"{r.protocol_id}@{r.version} ({r.fingerprint[:19]}…)" for r in rows) or "none"
    if selector:
        matches = [
            r
            for r in rows
            if selector in (r.protocol_id, f"{r.protocol_id}@{r.version}")
            or r.fingerprint.startswith(selector)
            or r.fingerprint.removeprefix("sha256:").startswith(selector)
        ]
        if len(matches) == 1:
            return matches[0]
        reason = "no protocol" if not matches else f"{len(matches)} protocols"
        raise ScopeError(f"{reason} matches {selector!r} in {where!r}; protocols: {listed}")
    if len(rows) == 1:
        return rows[0]
    if not rows:
        raise ScopeError(f"{where!r} holds no protocols table rows; write it with `citeaudit export --format parquet`")
    raise ScopeError(f"{where!r} holds {len(rows)} protocols; choose one with --protocol. Protocols: {listed}")


def parse_protocol_row(row: ProtocolRow, where: str) -> Protocol:
    """The protocol a ``protocols`` row carries."""
    return protocol_from_mapping(ProtocolIn.model_validate_json(row.body), where, path="protocols.body")
