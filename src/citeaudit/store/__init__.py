"""Persistence: the SQLite store (the only place that writes SQL)."""

from citeaudit.store.sqlite import ImportReport, ProtocolInfo, Store

__all__ = ["ImportReport", "ProtocolInfo", "Store"]
