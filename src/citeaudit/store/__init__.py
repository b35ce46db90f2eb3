"""The SQLite store: the only code that talks to the ledger.

:class:`Store` and its records are loaded on first use, so that the plain records of :mod:`citeaudit.store.records`
can be imported without opening the whole store.

A :class:`Store` is the one object a caller opens; its work is split by concern into objects it carries, so
callers keep one handle: ``store.sources`` (resolution), ``store.claims`` (answers and claim sets),
``store.facts`` (claim → fact mappings) and ``store.ratings`` (raters, for agreement), next to what the store does
itself (transactions, imports, protocols, scoring input). See :mod:`citeaudit.store.sqlite`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from citeaudit.store.sqlite import ImportReport, ProtocolInfo, Store

__all__ = ["ImportReport", "ProtocolInfo", "Store"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module("citeaudit.store.sqlite"), name)


def __dir__() -> list[str]:
    return sorted(__all__)
