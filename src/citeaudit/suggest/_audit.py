"""``citeaudit judge audit`` as a library call: the bias battery on the edges a gold reviewer labelled, with the
judge's agreement with that reviewer (``citeaudit.core.agreement``) and its calibration where it gives confidences."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from citeaudit.core.agreement import Agreement, agreement
from citeaudit.core.errors import InvalidValue
from citeaudit.core.model import Label
from citeaudit.core.passages import Passage
from citeaudit.core.raters import RatedJudgement, Rater, RaterKind, pair_latest
from citeaudit.evidence import SUGGEST_METHOD, PassageIndex, RankMethod
from citeaudit.judges import Judge
from citeaudit.judges.battery import BatteryEdge, BatteryReport, run_battery
from citeaudit.store import Store
from citeaudit.store.suggestions import document_passages, gold_edges, latest_passages, review_raters

__all__ = ["JudgeAuditReport", "judge_audit"]


@dataclass(frozen=True, slots=True)
class JudgeAuditReport:
    """The battery and the agreement with the gold reviewer, with every gold edge accounted for.

    ``gold_edges == tested + without_text + over_limit``; ``tested == from_suggestions + ranked_now``.
    """

    gold: str
    """The gold reviewer."""
    gold_edges: int
    """Edges the gold reviewer labelled (review stage)."""
    tested: int
    """Edges the battery ran on."""
    from_suggestions: int
    """Tested edges whose passages are those of their latest stored suggestion."""
    ranked_now: int
    """Tested edges whose snapshot was ranked for this audit (no stored suggestion)."""
    without_text: int
    """Gold edges with neither a stored suggestion nor snapshot passages (not tested)."""
    over_limit: int
    """Gold edges left out by ``limit``."""
    battery: BatteryReport
    """Flip rates, paired intervals, agreement and calibration from :func:`run_battery`."""
    agreement: Agreement
    """The judge's baseline labels against the gold reviewer (gold = rater A), with cluster-bootstrap intervals over
    answers."""

    def to_dict(self) -> dict[str, object]:
        """JSON-ready with stable keys: ``gold``, ``judge``, ``edges``, ``perturbations``, ``agreement``,
        ``calibration``, ``baseline_labels``."""
        battery = self.battery.to_dict()
        return {
            "gold": self.gold,
            "judge": {"name": self.battery.judge, "model": self.battery.model, "version": self.battery.version},
            "edges": {
                "gold": self.gold_edges,
                "tested": self.tested,
                "from_suggestions": self.from_suggestions,
                "ranked_now": self.ranked_now,
                "without_text": self.without_text,
                "over_limit": self.over_limit,
            },
            "baseline_labels": battery["baseline_labels"],
            "perturbations": battery["perturbations"],
            "agreement": self.agreement.to_dict(),
            "calibration": battery["calibration"],
        }


def judge_audit(
    path: str | Path,
    judge: Judge,
    gold: str,
    *,
    limit: int | None = None,
    k: int = 3,
    method: RankMethod | str = SUGGEST_METHOD,
    resamples: int = 9999,
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
) -> JudgeAuditReport:
    """Run the bias battery with ``judge`` on the edges ``gold`` labelled in the database at ``path``.

    Gold is the reviewer's latest review-stage judgement per edge. Passages are those of the edge's latest stored
    suggestion, else the top ``k`` passages of the source's snapshot ranked by ``method`` now. Intervals: the
    battery's resample questions, the agreement's resample answers. Nothing is written.
    """
    if limit is not None and limit < 1:
        raise InvalidValue("--limit", str(limit), "the limit must be at least 1")
    method = RankMethod(method)
    with Store(path) as store:
        db = store.connection
        found = gold_edges(db, gold)
        if not found:
            reviewers = review_raters(db)
            raise InvalidValue(
                "--gold",
                gold,
                f"reviewer {gold!r} labelled no edge in {str(path)!r}; reviewers: {', '.join(reviewers) or 'none'}",
            )
        chosen = found if limit is None else found[:limit]
        edges: list[BatteryEdge] = []
        answers: dict[str, str] = {}
        from_suggestions = ranked_now = without_text = 0
        indexes: dict[str, PassageIndex] = {}
        for item in chosen:
            edge = item.edge
            stored = latest_passages(db, edge.pk)
            if stored:
                passages = tuple(p.text for p in stored)
                from_suggestions += 1
            elif edge.document_sha256 is not None:
                if edge.document_sha256 not in indexes:
                    text, rows = document_passages(db, edge.document_sha256)
                    indexes[edge.document_sha256] = PassageIndex(
                        [Passage(text[r.start : r.end], r.start, r.end) for r in rows]
                    )
                passages = tuple(p.text for p in indexes[edge.document_sha256].rank(edge.claim, k, method))
                ranked_now += bool(passages)
            else:
                passages = ()
            if not passages:
                without_text += 1
                continue
            edges.append(BatteryEdge(str(edge.pk), edge.claim, passages, Label(item.gold), edge.question_id))
            answers[str(edge.pk)] = item.answer_id
    if not edges:
        raise InvalidValue(
            "--gold",
            gold,
            f"none of the {len(chosen)} edge(s) reviewer {gold!r} labelled has text to judge (no stored suggestion, "
            "no snapshot of the source): run `citeaudit resolve` first",
        )
    battery = run_battery(judge, edges, resamples=resamples, seed=seed, progress=progress)
    gold_rater, judge_rater = Rater(gold), Rater(judge.name, RaterKind.MODEL)
    rated = [RatedJudgement(e.id, answers[e.id], gold_rater, e.gold) for e in edges if e.gold is not None]
    rated += [
        RatedJudgement(e.id, answers[e.id], judge_rater, s.label) for e, s in zip(edges, battery.baseline, strict=True)
    ]
    pairs = pair_latest(rated, gold_rater, judge_rater, edges_total=len(edges))
    return JudgeAuditReport(
        gold,
        len(found),
        len(edges),
        from_suggestions,
        ranked_now,
        without_text,
        len(found) - len(chosen),
        battery,
        agreement(pairs, resamples=resamples, seed=seed),
    )
