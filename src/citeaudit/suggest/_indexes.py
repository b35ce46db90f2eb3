"""One passage index per page snapshot, shared by the suggestion runs (edges, cross pairs, the triage)."""

from __future__ import annotations

from citeaudit.core.passages import Passage
from citeaudit.evidence import PassageIndex
from citeaudit.store import Store
from citeaudit.store.suggestions import document_passages

__all__ = ["SnapshotIndexes"]


class SnapshotIndexes:
    """The passage index of each snapshot, built on first use: every claim citing the same page reuses it."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._built: dict[str, tuple[PassageIndex, list[int]]] = {}

    def __call__(self, sha256: str) -> tuple[PassageIndex, list[int]]:
        """The index of the snapshot ``sha256`` and each of its passages' ordinal in the store."""
        found = self._built.get(sha256)
        if found is None:
            text, rows = document_passages(self._store.connection, sha256)
            passages = [Passage(text[r.start : r.end], r.start, r.end) for r in rows]
            found = self._built[sha256] = (PassageIndex(passages), [r.ordinal for r in rows])
        return found
