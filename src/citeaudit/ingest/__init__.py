"""Readers that turn files into audits: one module per format, registered in :data:`READERS`."""

from __future__ import annotations

import re
from pathlib import Path

from citeaudit.errors import InputError, UnknownFormat
from citeaudit.ingest import audit_json
from citeaudit.ingest.base import Reader
from citeaudit.model import Audit
from citeaudit.store import ImportReport, Store

__all__ = ["READERS", "Reader", "detect_reader", "ingest_file", "read_file"]

READERS: dict[str, Reader] = {audit_json.READER.name: audit_json.READER}
"""Every reader by format name."""

_HEAD_BYTES = 4096
_DECLARED_FORMAT = re.compile(rb'"format"\s*:\s*"([^"]*)"')


def detect_reader(data: bytes, source: str, fmt: str | None = None) -> Reader:
    """The reader named ``fmt``, or the one that recognises the content."""
    known = ", ".join(sorted(READERS))
    if fmt is not None:
        try:
            return READERS[fmt]
        except KeyError:
            raise UnknownFormat(source, "--format", f"no reader for {fmt!r}; known formats: {known}") from None
    head = data[:_HEAD_BYTES]
    for reader in READERS.values():
        if reader.can_read(head):
            return reader
    declared = _DECLARED_FORMAT.search(head)
    if declared:
        raise UnknownFormat(
            source,
            "format",
            f"no reader for format {declared.group(1).decode(errors='replace')!r}; known: {known}",
        )
    raise UnknownFormat(source, "", f"no reader recognises this content; known formats: {known} (or pass --format)")


def read_file(path: str | Path, fmt: str | None = None) -> tuple[Audit, bytes, Reader]:
    """Parse and check a file; nothing is written. Returns the audit, the raw bytes and the reader used."""
    file = Path(path)
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise InputError(str(file), "", f"cannot read: {exc.strerror}") from None
    reader = detect_reader(data, str(file), fmt)
    return reader.read(data, str(file)), data, reader


def ingest_file(store: Store, path: str | Path, fmt: str | None = None) -> ImportReport:
    """Read, check and store one file in one transaction; the same bytes twice is a no-op."""
    audit, data, reader = read_file(path, fmt)
    return store.import_audit(audit, data, origin=str(path), fmt=reader.name)
