"""Sources: the resolver that reads each cited page. URL identity is pure and lives in :mod:`citeaudit.core.identity`.

The resolver's names are loaded on first use: the HTTP stack is needed only by ``resolve`` and ``collect``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from citeaudit.sources.fetch import USER_AGENT, ResolveSettings
    from citeaudit.sources.resolver import (
        resolve_sources,
        resolve_sources_async,
        resolve_urls,
        set_source_url,
        source_passages,
        source_snapshots,
    )

__all__ = [
    "USER_AGENT",
    "ResolveSettings",
    "resolve_sources",
    "resolve_sources_async",
    "resolve_urls",
    "set_source_url",
    "source_passages",
    "source_snapshots",
]

_HOME = {
    "USER_AGENT": "fetch",
    "ResolveSettings": "fetch",
    "resolve_sources": "resolver",
    "resolve_sources_async": "resolver",
    "resolve_urls": "resolver",
    "set_source_url": "resolver",
    "source_passages": "resolver",
    "source_snapshots": "resolver",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


def __dir__() -> list[str]:
    return sorted(__all__)
