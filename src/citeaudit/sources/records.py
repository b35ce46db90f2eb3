"""What resolving a source produces: the records the resolver hands the store, defined with the store
(:mod:`citeaudit.store.records`) and named here too, where the resolver's code looks for them."""

from citeaudit.store.records import (
    FAILURE_REASONS,
    Document,
    FetchOutcome,
    Hop,
    Passage,
    ResolveReport,
    Snapshot,
)

__all__ = ["FAILURE_REASONS", "Document", "FetchOutcome", "Hop", "Passage", "ResolveReport", "Snapshot"]
