"""What the HTML report reads from a database: the audit without its edges, and each edge as one row of plain
values (its shown label, the latest judgement's passage, period and reasoning, its review state).

Building every edge with its locations and whole judgement history as model objects costs more than the rest of
the report together at 100 000 edges; the report shows only each edge's outcome and one judgement, which SQL picks.
"""

from __future__ import annotations

import sqlite3

from citeaudit.core.model import Audit, Judgement, Label, ReviewState, RunKind, review_outcome
from citeaudit.core.scope import Scope
from citeaudit.core.scoring import LABELS
from citeaudit.store.judgements import JUDGEMENT_COLUMNS, judgement_from_row
from citeaudit.store.reading import CURRENT_CLAIM, read_audit
from citeaudit.store.review_rules import policy_reviews_required
from citeaudit.store.sqlite import Store

__all__ = ["EdgeRow", "read_report_input", "shown_label"]

EdgeRow = tuple[str, str, str, str, str, str, str]
"""(claim id, source key, shown label, passage, period, reasoning, review state with the latest reviewer)."""

_EDGES = (
    "SELECT e.pk, c.id, s.key, e.review_state, e.final_code, j.passage, j.period, j.reasoning, j.reviewer "
    "FROM edges e JOIN claims c ON c.pk = e.claim_pk JOIN sources s ON s.pk = e.source_pk "
    "LEFT JOIN judgements j ON j.pk = coalesce("
    "(SELECT max(h.pk) FROM judgements h WHERE h.edge_pk = e.pk AND h.origin = 'human'), "
    "(SELECT max(h.pk) FROM judgements h WHERE h.edge_pk = e.pk)) "
    "WHERE e.claim_pk IN (SELECT c.pk FROM claims c JOIN answers a ON a.pk = c.answer_pk JOIN runs r "
    f"ON r.pk = a.run_pk WHERE r.protocol_pk = ? AND {CURRENT_CLAIM}) ORDER BY e.pk"
)
"""Each edge of the protocol's current claims with its stored outcome and its latest human judgement (the latest
judgement of any origin when no person judged it), in the order the audit lists edges."""


def shown_label(state: ReviewState, label: Label | None) -> str:
    """The final label, or the review state while there is none (``disputed`` or ``pending``)."""
    if label is not None:
        return str(label)
    return "disputed" if state is ReviewState.DISPUTED else "pending"


def read_report_input(store: Store, protocol_pk: int) -> tuple[Audit, list[EdgeRow]]:
    """One protocol's audit without edges, and every edge of its current claims as an :data:`EdgeRow`.

    The label is the one a single review gives (``review_outcome`` of all the edge's judgements): under the single
    policy that is the outcome the store keeps with the edge; under another policy it is worked out from the
    judgements, as for an audit read whole."""
    db = store.connection
    every_answer = Scope(run_kinds=frozenset(RunKind))
    audit = read_audit(db, store.effective_protocol(protocol_pk, every_answer), protocol_pk, edges=False)
    single = policy_reviews_required(db) == 1
    outcomes = {} if single else _single_review_outcomes(db, protocol_pk)
    rows: list[EdgeRow] = []
    for pk, claim_id, source_key, state, code, passage, period, reasoning, reviewer in db.execute(
        _EDGES, (protocol_pk,)
    ):
        if single:
            label = LABELS[code] if code < len(LABELS) else None
            outcome = (ReviewState(state), label)
        else:
            outcome = outcomes.get(pk, (ReviewState.PENDING, None))
        review = f"{outcome[0]}" + (f" · {reviewer}" if reviewer else "")
        rows.append((claim_id, source_key, shown_label(*outcome), passage or "", period or "", reasoning or "", review))
    return audit, rows


def _single_review_outcomes(db: sqlite3.Connection, protocol_pk: int) -> dict[int, tuple[ReviewState, Label | None]]:
    """Per edge pk with judgements, the outcome a single review gives (the stored one follows another policy)."""
    judgements: dict[int, list[Judgement]] = {}
    for edge_pk, *row in db.execute(
        f"SELECT j.edge_pk, {JUDGEMENT_COLUMNS} FROM judgements j JOIN edges e ON e.pk = j.edge_pk "
        "JOIN claims c ON c.pk = e.claim_pk JOIN answers a ON a.pk = c.answer_pk JOIN runs r ON r.pk = a.run_pk "
        f"WHERE r.protocol_pk = ? AND {CURRENT_CLAIM} ORDER BY j.pk",
        (protocol_pk,),
    ):
        judgements.setdefault(edge_pk, []).append(judgement_from_row(row))
    return {pk: review_outcome(found) for pk, found in judgements.items()}
