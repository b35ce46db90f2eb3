"""``citeaudit suggest`` as a library call: for each edge without a final label whose source has a snapshot, rank
the snapshot's passages for the claim, ask a judge about the best ones and store both."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from citeaudit.core.errors import InvalidValue, JudgeError
from citeaudit.core.model import Label
from citeaudit.evidence import SUGGEST_METHOD, RankMethod
from citeaudit.judges import Judge, suggest_for_edge
from citeaudit.store import Store
from citeaudit.store.suggestions import (
    EdgeToSuggest,
    edges_to_suggest,
    has_suggestion,
    record_suggestion,
    retired_to_suggest,
    run_exists,
)
from citeaudit.suggest._indexes import SnapshotIndexes

__all__ = ["SuggestReport", "prompt_hash_of", "suggest_edges"]


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


def prompt_hash_of(judge: Judge) -> str | None:
    """The judge's prompt hash (the ``openai`` judge's), ``None`` for judges without a prompt."""
    value = getattr(judge, "prompt_sha256", None)
    return value if isinstance(value, str) else None


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
    if k < 1:
        raise InvalidValue("--top", str(k), "the number of passages must be at least 1")
    if limit is not None and limit < 0:
        raise InvalidValue("--limit", str(limit), "the limit must be 0 or more")
    method = RankMethod(method)
    prompt = prompt_hash_of(judge)
    report = SuggestReport()
    with Store(path) as store:
        db = store.connection
        edges = edges_to_suggest(db, run)
        if run is not None and not edges and not run_exists(db, run):
            raise InvalidValue("--run", run, f"no run {run!r} in {str(path)!r}")
        report.edges = len(edges)
        report.retired = retired_to_suggest(db, run)
        todo: list[EdgeToSuggest] = []
        for edge in edges:
            if edge.document_sha256 is None:
                report.no_snapshot += 1
            elif not refresh and has_suggestion(db, edge.pk, judge.name, judge.model, judge.version, prompt):
                report.already_suggested += 1
            else:
                todo.append(edge)
        indexes = SnapshotIndexes(store)
        total = len(todo) if limit is None else min(len(todo), limit)
        done = 0
        if progress:
            progress(done, total)
        for edge in todo:
            if limit is not None and report.suggested >= limit:
                report.over_limit += 1
                continue
            sha = edge.document_sha256
            assert sha is not None
            index, ordinals = indexes(sha)
            if not index.passages:
                report.empty_snapshot += 1
                continue
            try:
                result = suggest_for_edge(judge, edge.claim, index, k=k, method=method, claim_locale=edge.locale)
            except JudgeError as exc:
                raise JudgeError(
                    f"{exc} (edge {edge.pk}, claim {edge.claim_id!r}); nothing was stored for that edge, "
                    f"{report.suggested} suggestion(s) stored before it are kept: rerun to continue"
                ) from exc
            ranked = [(p.rank, ordinals[p.index], p.start, p.end, p.score, p.bm25, p.dense) for p in result.passages]
            with store.transaction() as tx:
                record_suggestion(tx, edge.pk, sha, str(method), ranked, result.suggestion.to_judgement())
            report.suggested += 1
            report.labels[str(result.suggestion.label)] += 1
            done += 1
            if progress:
                progress(done, total)
    return report
