"""The triage's SQL: the edges ``suggest --triage`` offered that no person has judged yet, with the suggestion to
confirm. Confirming records a human judgement through
:meth:`~citeaudit.store.review_judgements.ReviewJudgements.record_judgement`, never here."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from citeaudit.core.model import Label
from citeaudit.core.scoring import PENDING_CODE

__all__ = ["TRIAGE_PAGE", "TriageOffer", "triage_offer", "triage_offers"]

TRIAGE_PAGE = 50
"""Offers on one page of the triage."""

_OFFERS = (
    "SELECT e.pk, c.text, coalesce(s.resolved_url, s.url, s.title), j.pk, j.label, j.passage, j.reasoning "
    "FROM (SELECT edge_pk, max(pk) AS pk FROM judgements WHERE origin = 'model' AND judge = 'triage' "
    "GROUP BY edge_pk) latest "
    "JOIN judgements j ON j.pk = latest.pk JOIN edges e ON e.pk = latest.edge_pk "
    "JOIN claims c ON c.pk = e.claim_pk JOIN sources s ON s.pk = e.source_pk "
    "WHERE e.final_code = ? AND c.current = 1 "
    # no person has judged the edge: under double review the second reviewer never meets the suggestion here
    "AND NOT EXISTS (SELECT 1 FROM judgements h WHERE h.edge_pk = e.pk AND h.origin = 'human')"
)


@dataclass(frozen=True, slots=True)
class TriageOffer:
    """One edge offered in the triage, with the suggestion a reviewer may confirm."""

    edge_pk: int
    """Edge row id."""
    claim: str
    """Claim text."""
    source: str
    """The source's URL (resolved when known) or title."""
    suggestion_pk: int
    """Row id of the triage suggestion (a model judgement)."""
    label: Label
    """The proposed label."""
    passage: str | None
    """The passage the suggestion rests on."""
    reason: str
    """The triage reason (``check_conflict`` or ``irrelevant``)."""
    detail: str
    """What the check found, or the similarity against the threshold."""


def _offer(row: tuple[object, ...]) -> TriageOffer:
    edge_pk, claim, source, suggestion_pk, label, passage, reasoning = row
    reason, _, detail = str(reasoning or "").partition(": ")
    return TriageOffer(
        int(str(edge_pk)),
        str(claim),
        str(source),
        int(str(suggestion_pk)),
        Label(str(label)),
        None if passage is None else str(passage),
        reason,
        detail,
    )


def triage_offers(db: sqlite3.Connection, reason: str | None = None, limit: int = TRIAGE_PAGE) -> list[TriageOffer]:
    """Offers in edge order, at most ``limit``; ``reason`` keeps one triage reason."""
    sql = _OFFERS
    params: list[object] = [PENDING_CODE]
    if reason is not None:
        sql += " AND j.reasoning LIKE ? ESCAPE '\\'"
        params.append(reason.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + ": %")
    rows = db.execute(f"{sql} ORDER BY e.pk LIMIT ?", [*params, limit]).fetchall()
    return [_offer(row) for row in rows]


def triage_offer(db: sqlite3.Connection, edge_pk: int) -> TriageOffer | None:
    """The edge's offer, or ``None`` when it is not (or no longer) offered."""
    row = db.execute(f"{_OFFERS} AND e.pk = ?", (PENDING_CODE, edge_pk)).fetchone()
    return None if row is None else _offer(row)
