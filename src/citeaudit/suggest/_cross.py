"""``citeaudit suggest --cross-pairs``: propose the cross pairs of the claims at risk, then rank each pair's source
passages for the claim and store a judge's suggestion, exactly as for edges but in the cross-pair tables."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from citeaudit.core.errors import InvalidValue
from citeaudit.core.identity import OfficialMatcher
from citeaudit.core.misattribution import claims_at_risk, cross_candidates
from citeaudit.core.model import Label, RunKind
from citeaudit.core.scope import Scope, select_audit
from citeaudit.evidence import SUGGEST_METHOD, RankMethod
from citeaudit.judges import EdgeSuggestion, Judge
from citeaudit.store import Store
from citeaudit.store.brand_input import read_outcomes
from citeaudit.store.cross_pairs import (
    cross_pairs_to_suggest,
    has_cross_suggestion,
    has_run,
    official_snapshot_keys,
    propose_cross_pairs,
    record_cross_judgement,
)
from citeaudit.suggest._runner import SuggestTarget, check_settings, run_suggestions

__all__ = ["CROSS_PAIRS", "CrossSuggestReport", "suggest_cross_pairs"]


@dataclass
class CrossSuggestReport:
    """What one ``suggest --cross-pairs`` run did, every cross pair in scope accounted for.

    ``cross_pairs == suggested + already_suggested + no_snapshot + empty_snapshot + over_limit``.
    """

    proposed: int = 0
    """Cross pairs added by this run (claims at risk × co-cited sources and official pages)."""
    cross_pairs: int = 0
    """Cross pairs in scope without a human judgement whose claim is still at risk."""
    suggested: int = 0
    """Cross pairs that got a new suggestion."""
    already_suggested: int = 0
    """Cross pairs that already had a suggestion from the same judge, model, version and prompt (skipped)."""
    no_snapshot: int = 0
    """Cross pairs whose source has no snapshot: nothing to rank."""
    empty_snapshot: int = 0
    """Cross pairs whose source's snapshot has no passage."""
    over_limit: int = 0
    """Cross pairs left for a later run by ``limit``."""
    labels: Counter[str] = field(default_factory=Counter)
    """Suggested label → cross pairs, for this run's suggestions."""

    def to_dict(self) -> dict[str, object]:
        """JSON-ready, every label present."""
        return {
            "proposed": self.proposed,
            "cross_pairs": self.cross_pairs,
            "suggested": self.suggested,
            "already_suggested": self.already_suggested,
            "no_snapshot": self.no_snapshot,
            "empty_snapshot": self.empty_snapshot,
            "over_limit": self.over_limit,
            "labels": {str(label): self.labels[str(label)] for label in Label},
        }


def _record(store: Store, pk: int, sha: str, method: str, result: EdgeSuggestion, ordinals: Sequence[int]) -> None:
    """Stores a cross pair's suggestion with its ranked passages."""
    ranked = [(p.rank, ordinals[p.index], p.start, p.end, p.score) for p in result.passages]
    with store.transaction() as tx:
        record_cross_judgement(
            tx, pk, result.suggestion.to_judgement(), document_sha256=sha, method=method, ranked=ranked
        )


CROSS_PAIRS = SuggestTarget("cross pair", "pair", has_cross_suggestion, _record)
"""Suggesting for cross pairs: the cross-pair tables."""


def _propose(store: Store, run: str | None) -> tuple[int, set[str]]:
    """Add the cross pairs of every protocol's claims at risk (of one run, when given) in one transaction; returns
    how many were added and the ids of the claims at risk now."""
    scope = Scope(run_kinds=frozenset(RunKind), where={} if run is None else {"run": frozenset({run})})
    added = 0
    at_risk: set[str] = set()
    with store.transaction() as tx:
        for info in store.protocols():
            protocol = store.protocol(info.pk)
            whole, outcomes = read_outcomes(store, protocol, info.pk)
            audit = select_audit(whole, scope)[0]
            claims = {c.id for c in audit.claims}
            edges = [e for e in outcomes if e.claim_id in claims]
            matcher = OfficialMatcher(protocol.official_domains)
            candidates = cross_candidates(audit, matcher, official_snapshot_keys(store, info.pk), edges=edges)
            added += propose_cross_pairs(tx, info.pk, candidates)
            at_risk.update(claims_at_risk(audit, edges))
    return added, at_risk


def suggest_cross_pairs(
    path: str | Path,
    judge: Judge,
    *,
    method: RankMethod | str = SUGGEST_METHOD,
    k: int = 3,
    run: str | None = None,
    limit: int | None = None,
    refresh: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> CrossSuggestReport:
    """Propose cross pairs in the database at ``path`` and suggest labels for those without a human judgement.

    Each cross pair is written in its own transaction, so a judge failure (``JudgeError``, re-raised with what was
    stored before it) leaves nothing half-written and a rerun continues.
    """
    check_settings(k, limit)
    ranking = RankMethod(method)
    report = CrossSuggestReport()
    with Store(path) as store:
        if run is not None and not has_run(store, run):
            raise InvalidValue("--run", run, f"no run {run!r} in {str(path)!r}")
        report.proposed, at_risk = _propose(store, run)
        # A claim whose edge was found supported since its cross pairs were proposed is no longer at risk.
        pairs = [pair for pair in cross_pairs_to_suggest(store.connection, run) if pair.claim_id in at_risk]
        report.cross_pairs = len(pairs)
        run_suggestions(
            store,
            pairs,
            judge,
            CROSS_PAIRS,
            report,
            method=ranking,
            k=k,
            limit=limit,
            refresh=refresh,
            progress=progress,
        )
    return report
