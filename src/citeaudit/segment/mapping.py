"""``facts map``: proposals for every answer (or one run's), resumable, one transaction per answer."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from citeaudit.segment.facts import DEFAULT_THRESHOLD, Embedder, propose
from citeaudit.store import Store

__all__ = ["MapReport", "map_facts"]


@dataclass(slots=True)
class MapReport:
    """What one ``facts map`` run did."""

    answers: int = 0
    """Answers looked at."""
    facts_open: int = 0
    """(answer, required fact) pairs without a confirmed or proposed claim before this run."""
    proposed: int = 0
    """Proposals recorded (pending until confirmed)."""
    without_candidate: int = 0
    """Open pairs for which no claim agreed on entities and reached the threshold."""
    already: int = 0
    """Pairs already confirmed or proposed (left as they are)."""
    method: str = "lexical+entities"
    """How proposals were scored."""


def map_facts(
    store: Store,
    run: str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    embedder: Embedder | None = None,
    advance: Callable[[int], None] | None = None,
) -> MapReport:
    """Propose claim → required-fact mappings for the current claims of every answer (or one run's)."""
    report = MapReport(method="lexical+dense+entities" if embedder is not None else "lexical+entities")
    for answer_pk, _, _ in store.claims.answers(run):
        work = store.facts.work(answer_pk)
        report.answers += 1
        report.already += work.done
        report.facts_open += len(work.facts)
        proposals = propose(work.claims, work.facts, threshold, embedder, work.rejected)
        report.proposed += len(proposals)
        report.without_candidate += len(work.facts) - len(proposals)
        if proposals:
            store.facts.record_proposals(proposals, report.method)
        if advance is not None:
            advance(1)
    return report
