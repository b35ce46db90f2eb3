"""What the brand figures and misattribution read from a database: the audit without its edges, each edge's
outcome (final label under the review policy, the reviewed passage, the latest human judgement time), and every
snapshot of the pages it uses. Reading outcomes instead of whole judgement histories keeps ``score`` fast."""

from __future__ import annotations

from citeaudit.brand_metrics import EdgeOutcome, PageSnapshot
from citeaudit.model import Audit, Label, Protocol
from citeaudit.scoring import DISPUTED_CODE
from citeaudit.store.reading import CURRENT_CLAIM, read_audit
from citeaudit.store.review import code_label
from citeaudit.store.sqlite import Store

__all__ = ["page_snapshots", "read_outcomes", "source_locations"]


def read_outcomes(store: Store, protocol: Protocol, protocol_pk: int) -> tuple[Audit, list[EdgeOutcome]]:
    """One protocol's audit without edges, and the outcome of each edge of its current claims."""
    db = store.connection
    audit = read_audit(db, protocol, protocol_pk, edges=False)
    edge_filter = (
        "e.claim_pk IN (SELECT c.pk FROM claims c JOIN answers a ON a.pk = c.answer_pk JOIN runs r "
        f"ON r.pk = a.run_pk WHERE r.protocol_pk = ? AND {CURRENT_CLAIM})"
    )
    reviewed: dict[int, tuple[str | None, str | None]] = {}
    for edge_pk, passage, created_at in db.execute(
        f"SELECT j.edge_pk, j.passage, j.created_at FROM judgements j JOIN edges e ON e.pk = j.edge_pk "
        f"WHERE j.origin = 'human' AND {edge_filter} ORDER BY j.edge_pk, j.created_at, j.pk",
        (protocol_pk,),
    ):
        quoted = reviewed[edge_pk][0] if edge_pk in reviewed else None
        reviewed[edge_pk] = (passage or quoted, created_at)
    labels = [code_label(code) for code in range(max(len(Label), DISPUTED_CODE) + 1)]
    unjudged = (None, None)
    # SQLite gives ints and strs already; a million edges are built here, so no conversions per row.
    outcomes = [
        EdgeOutcome(cid, key, labels[code], *reviewed.get(pk, unjudged))
        for pk, cid, key, code in db.execute(
            f"SELECT e.pk, c.id, s.key, e.final_code FROM edges e JOIN claims c ON c.pk = e.claim_pk "
            f"JOIN sources s ON s.pk = e.source_pk WHERE {edge_filter} ORDER BY e.pk",
            (protocol_pk,),
        )
    ]
    return audit, outcomes


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


def source_locations(store: Store, protocol_pk: int) -> dict[str, tuple[str | None, str]]:
    """``key → (host, path)`` of the effective URL of each source one protocol's answers use (kept per source, so
    owners are decided without parsing URLs again)."""
    return {
        key: (host, path)
        for key, host, path in store.connection.execute(
            "SELECT s.key, s.host, s.path FROM sources s JOIN protocol_sources ps ON ps.source_pk = s.pk "
            "WHERE ps.protocol_pk = ?",
            (protocol_pk,),
        )
    }
