"""Sources: URL identity and official matching (pure), and the resolver that reads each cited page."""

from citeaudit.sources.fetch import USER_AGENT, ResolveSettings
from citeaudit.sources.records import Document, FetchOutcome, Hop, Passage, ResolveReport, Snapshot
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
    "Document",
    "FetchOutcome",
    "Hop",
    "Passage",
    "ResolveReport",
    "ResolveSettings",
    "Snapshot",
    "resolve_sources",
    "resolve_sources_async",
    "resolve_urls",
    "set_source_url",
    "source_passages",
    "source_snapshots",
]
