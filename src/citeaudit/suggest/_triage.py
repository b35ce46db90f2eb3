"""``citeaudit suggest --triage``: for each edge without a final label, rank its snapshot's passages, run the
consistency checks and the relevance judge on the best ones, and store a triage suggestion for the edges either
reason is sure about (``citeaudit.judges.triage``). A triage suggestion is a model judgement like any other: it
never sets a label; a reviewer confirms it on the review UI's triage page, which records a human judgement."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from citeaudit.checks import run_checks
from citeaudit.core.errors import InvalidValue
from citeaudit.evidence import SUGGEST_METHOD, RankMethod
from citeaudit.judges import Suggestion
from citeaudit.judges.triage import (
    CONFLICT_OFF,
    DEFAULT_THRESHOLDS,
    TRIAGE_JUDGE,
    TRIAGE_VERSION,
    RelevanceJudge,
    TriageReason,
    TriageThresholds,
    triage_call,
)
from citeaudit.store import Store
from citeaudit.store.suggestions import edges_to_suggest, has_suggestion, record_suggestion
from citeaudit.suggest._indexes import SnapshotIndexes

if TYPE_CHECKING:
    from citeaudit.evidence import Encoder

__all__ = ["TriageReport", "triage_edges"]


@dataclass
class TriageReport:
    """What one triage pass did, every edge in scope accounted for.

    ``edges == offered + left_to_reviewer + already_offered + no_snapshot + empty_snapshot``.
    """

    edges: int = 0
    """Edges without a final label in scope."""
    offered: Counter[str] = field(default_factory=Counter)
    """Triage reason → edges newly offered for it."""
    left_to_reviewer: int = 0
    """Edges neither reason is sure about (nothing stored)."""
    already_offered: int = 0
    """Edges that already have a triage suggestion of this version and model (skipped)."""
    no_snapshot: int = 0
    """Edges whose source has no snapshot."""
    empty_snapshot: int = 0
    """Edges whose source's snapshot has no passage."""
    thresholds: TriageThresholds = DEFAULT_THRESHOLDS
    """The thresholds used."""

    def to_dict(self) -> dict[str, object]:
        """JSON-ready, every reason present."""
        return {
            "edges": self.edges,
            "offered": {str(reason): self.offered[str(reason)] for reason in TriageReason},
            "left_to_reviewer": self.left_to_reviewer,
            "already_offered": self.already_offered,
            "no_snapshot": self.no_snapshot,
            "empty_snapshot": self.empty_snapshot,
            "thresholds": {
                "conflict_min": self.thresholds.conflict_min,
                "irrelevant_below": self.thresholds.irrelevant_below,
            },
            # a reason not offered, and why
            "off": {} if self.thresholds.conflict_min is not None else {str(TriageReason.CHECK_CONFLICT): CONFLICT_OFF},
        }


def triage_edges(
    path: str | Path,
    *,
    thresholds: TriageThresholds = DEFAULT_THRESHOLDS,
    k: int = 3,
    method: RankMethod | str = SUGGEST_METHOD,
    run: str | None = None,
    encoder: Encoder | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> TriageReport:
    """Store a triage suggestion for each edge without a final label that a triage reason is sure about.

    Each suggestion is written in its own transaction (model judgement, suggestion row, ranked passages, audit-log
    row), as ``suggest`` writes; a rerun skips edges already offered by the same version and model.
    """
    if k < 1:
        raise InvalidValue("--top", str(k), "the number of passages must be at least 1")
    method = RankMethod(method)
    relevance = RelevanceJudge(encoder, thresholds.irrelevant_below)
    report = TriageReport(thresholds=thresholds)
    with Store(path) as store:
        db = store.connection
        edges = edges_to_suggest(db, run)
        report.edges = len(edges)
        indexes = SnapshotIndexes(store)
        if progress:
            progress(0, len(edges))
        for done, edge in enumerate(edges, start=1):
            sha = edge.document_sha256
            if sha is None:
                report.no_snapshot += 1
            elif has_suggestion(db, edge.pk, TRIAGE_JUDGE, relevance.model, TRIAGE_VERSION, None):
                report.already_offered += 1
            else:
                index, ordinals = indexes(sha)
                if not index.passages:
                    report.empty_snapshot += 1
                else:
                    ranked = index.rank(edge.claim, k, method)
                    shown = [p.text for p in ranked]
                    conflicts = []
                    for text in shown:
                        found = [
                            f for f in run_checks(edge.claim, text, claim_locale=edge.locale).findings if f.conflict
                        ]
                        conflicts.append("; ".join(f"{f.kind}: {f.detail}" for f in found) or None)
                    call = triage_call(
                        edge.claim, shown, relevance.similarities(edge.claim, shown), conflicts, thresholds
                    )
                    if call is None:
                        report.left_to_reviewer += 1
                    else:
                        suggestion = Suggestion(
                            call.label,
                            TRIAGE_JUDGE,
                            TRIAGE_VERSION,
                            relevance.model,
                            quote=call.passage,
                            reasoning=f"{call.reason}: {call.detail}",
                            extra={"similarity": call.similarity},
                        )
                        rows_shown = [
                            (p.rank, ordinals[p.index], p.start, p.end, p.score, p.bm25, p.dense) for p in ranked
                        ]
                        with store.transaction() as tx:
                            record_suggestion(tx, edge.pk, sha, str(method), rows_shown, suggestion.to_judgement())
                        report.offered[str(call.reason)] += 1
            if progress:
                progress(done, len(edges))
    return report
