"""``citeaudit suggest`` as a library call: for each edge without a final label whose source has a snapshot, rank
the snapshot's passages for the claim, ask a judge about the best ones and store both."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from citeaudit.core.errors import InvalidValue
from citeaudit.core.model import Label
from citeaudit.evidence import SUGGEST_METHOD, RankMethod
from citeaudit.judges import EdgeSuggestion, Judge
from citeaudit.store import Store
from citeaudit.store.suggestions import (
    edges_to_suggest,
    has_suggestion,
    record_suggestion,
    retired_to_suggest,
    run_exists,
)
from citeaudit.suggest._runner import SuggestTarget, check_settings, run_suggestions

__all__ = ["EDGES", "SuggestReport", "suggest_edges"]


@dataclass
class SuggestReport:
    """What one ``suggest`` run did, every edge in scope accounted for.

    ``edges == suggested + already_suggested + no_snapshot + empty_snapshot + over_limit``.
    """

    edges: int = 0
    """Edges without a final label in scope."""
    suggested: int = 0
    """Edges that got a new suggestion."""
    already_suggested: int = 0
    """Edges that already had a suggestion from the same judge, model, version and prompt (skipped)."""
    no_snapshot: int = 0
    """Edges whose source has no snapshot (never resolved, or every read failed): nothing to rank."""
    empty_snapshot: int = 0
    """Edges whose source's snapshot has no passage (no text was extracted)."""
    over_limit: int = 0
    """Edges left for a later run by ``limit``."""
    labels: Counter[str] = field(default_factory=Counter)
    """Suggested label → edges, for this run's suggestions."""
    retired: int = 0
    """Edges without a final label on claims a later segmentation retired: left out (not in ``edges``)."""

    def to_dict(self) -> dict[str, object]:
        """JSON-ready, every label present."""
        return {
            "edges": self.edges,
            "suggested": self.suggested,
            "already_suggested": self.already_suggested,
            "no_snapshot": self.no_snapshot,
            "empty_snapshot": self.empty_snapshot,
            "over_limit": self.over_limit,
            "labels": {str(label): self.labels[str(label)] for label in Label},
            "retired": self.retired,
        }


def _record(store: Store, pk: int, sha: str, method: str, result: EdgeSuggestion, ordinals: Sequence[int]) -> None:
    """Stores an edge's suggestion with its ranked passages (and their BM25 and dense scores)."""
    ranked = [(p.rank, ordinals[p.index], p.start, p.end, p.score, p.bm25, p.dense) for p in result.passages]
    with store.transaction() as tx:
        record_suggestion(tx, pk, sha, method, ranked, result.suggestion.to_judgement())


EDGES = SuggestTarget("edge", "edge", has_suggestion, _record)
"""Suggesting for edges: the suggestion tables."""


def suggest_edges(
    path: str | Path,
    judge: Judge,
    *,
    method: RankMethod | str = SUGGEST_METHOD,
    k: int = 3,
    run: str | None = None,
    limit: int | None = None,
    refresh: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> SuggestReport:
    """Suggest labels for the edges of the database at ``path`` that have no final label.

    Each edge is written in its own transaction (model judgement, suggestion, ranked passages, audit-log row), so
    a judge failure (``JudgeError``, re-raised with what was stored before it) leaves nothing half-written and a
    rerun continues. ``progress(done, total)`` follows the edges to judge.
    """
    check_settings(k, limit)
    ranking = RankMethod(method)
    report = SuggestReport()
    with Store(path) as store:
        db = store.connection
        edges = edges_to_suggest(db, run)
        if run is not None and not edges and not run_exists(db, run):
            raise InvalidValue("--run", run, f"no run {run!r} in {str(path)!r}")
        report.edges = len(edges)
        report.retired = retired_to_suggest(db, run)
        run_suggestions(
            store,
            edges,
            judge,
            EDGES,
            report,
            method=ranking,
            k=k,
            limit=limit,
            refresh=refresh,
            progress=progress,
        )
    return report
