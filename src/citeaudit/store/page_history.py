"""Every snapshot of the pages an audit cites, for version drift: when each was read and what it held."""

from __future__ import annotations

from citeaudit.brand_metrics import PageSnapshot
from citeaudit.store.sqlite import Store

__all__ = ["page_snapshots"]


def page_snapshots(store: Store, protocol_pk: int) -> list[PageSnapshot]:
    """Every snapshot with a document of the sources one protocol's answers use, oldest first per source."""
    return [
        PageSnapshot(str(key), str(fetched_at), f"sha256:{sha}", page_date)
        for key, fetched_at, sha, page_date in store.connection.execute(
            "SELECT s.key, f.fetched_at, f.document_sha256, coalesce(d.updated, d.published) FROM fetches f "
            "JOIN sources s ON s.pk = f.source_pk JOIN protocol_sources ps ON ps.source_pk = s.pk "
            "JOIN documents d ON d.sha256 = f.document_sha256 WHERE ps.protocol_pk = ? ORDER BY s.pk, f.fetched_at",
            (protocol_pk,),
        )
    ]
