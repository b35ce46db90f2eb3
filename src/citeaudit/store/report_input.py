"""What the HTML report reads from a database: the audit without its edges, and each edge as one row of plain
values (its shown label, the latest judgement's passage, period and reasoning, its review state).

Building every edge with its locations and whole judgement history as model objects costs more than the rest of
the report together at 100 000 edges; the report shows only each edge's outcome and one judgement, which SQL picks.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

import numpy as np

from citeaudit.core.model import Audit, Judgement, Label, ReviewState, RunKind, review_outcome
from citeaudit.core.scope import Scope
from citeaudit.core.scoring import LABELS
from citeaudit.store.judgements import JUDGEMENT_COLUMNS, judgement_from_row
from citeaudit.store.reading import CURRENT_CLAIM, int_columns, official_mask, read_audit
from citeaudit.store.review_rules import policy_reviews_required
from citeaudit.store.sqlite import Store

__all__ = ["EdgeRow", "ReportRows", "read_report_input", "shown_label"]

EdgeRow = tuple[str, str, str, str, str, str, str]
"""(claim id, source key, shown label, passage, period, reasoning, review state with the latest reviewer)."""


@dataclass(frozen=True, slots=True)
class ReportRows:
    """What the report reads from the ledger beside the audit without its edges."""

    edges: list[EdgeRow]
    """Every edge of the protocol's current claims, in the order the audit lists edges."""
    official: frozenset[str]
    """Keys of the protocol's sources on an official page, decided as the scorer decides (``official_mask``: once
    per host, from the host and path the store keeps with each source)."""


_CURRENT_CLAIMS = (
    "SELECT c.pk FROM claims c JOIN answers a ON a.pk = c.answer_pk JOIN runs r ON r.pk = a.run_pk "
    f"WHERE r.protocol_pk = ? AND {CURRENT_CLAIM}"
)

_STATES = tuple(str(state) for state in ReviewState)
_STATE_CODE = "CASE e.review_state " + " ".join(f"WHEN '{s}' THEN {i}" for i, s in enumerate(_STATES)) + " END"
"""The review state the store keeps with an edge, as its position in :data:`_STATES`."""

_EDGE_COLUMNS = ("e.pk", "e.claim_pk", "e.source_pk", "e.final_code", _STATE_CODE)
"""Each edge of the protocol's current claims as integers (read as columns: no row of Python values each)."""

_SHOWN_OF_JUDGEMENT = (
    "SELECT j.edge_pk, coalesce(j.passage, ''), coalesce(j.period, ''), coalesce(j.reasoning, ''), "
    "CASE WHEN j.reviewer <> '' THEN ' · ' || j.reviewer ELSE '' END FROM judgements j"
)
"""What the report shows of a judgement: its passage, period and reasoning, and its reviewer after the state."""

_JUDGEMENTS = (
    f"{_SHOWN_OF_JUDGEMENT} CROSS JOIN edges e ON e.pk = j.edge_pk WHERE e.claim_pk IN ({_CURRENT_CLAIMS}) AND "
    "(j.origin = 'human') = ? ORDER BY j.pk"
)
"""The judgements by people (or by others) of the protocol's edges, oldest first (CROSS JOIN: one scan of the
judgements in their own order, each edge found by its key, rather than a sort of them by edge)."""

_EVERY_JUDGEMENT = f"{_SHOWN_OF_JUDGEMENT} WHERE (j.origin = 'human') = ? ORDER BY j.pk"
"""The same of every judgement: what a database of one protocol reads (half the time; the edges not read are
never looked up)."""


def shown_label(state: ReviewState, label: Label | None) -> str:
    """The final label, or the review state while there is none (``disputed`` or ``pending``)."""
    if label is not None:
        return str(label)
    return "disputed" if state is ReviewState.DISPUTED else "pending"


def read_report_input(store: Store, protocol_pk: int) -> tuple[Audit, ReportRows]:
    """One protocol's audit without edges, and every edge of its current claims as an :data:`EdgeRow` (in the
    order the audit lists edges) with the keys of its official sources.

    The label is the one a single review gives (``review_outcome`` of all the edge's judgements): under the single
    policy that is the outcome the store keeps with the edge; under another policy it is worked out from the
    judgements, as for an audit read whole. The judgement shown is the edge's latest human one, else its latest."""
    db = store.connection
    every_answer = Scope(run_kinds=frozenset(RunKind))
    audit = read_audit(db, store.effective_protocol(protocol_pk, every_answer), protocol_pk, edges=False)
    shown_of = _judgements_shown(db, protocol_pk)
    pks, claim_pks, source_pks, codes, states = _edge_columns(db, protocol_pk)
    claim_id = dict(db.execute(f"SELECT c.pk, c.id FROM claims c WHERE c.pk IN ({_CURRENT_CLAIMS})", (protocol_pk,)))
    source_key = dict(
        db.execute(
            "SELECT s.pk, s.key FROM sources s JOIN protocol_sources ps ON ps.source_pk = s.pk "
            "WHERE ps.protocol_pk = ?",
            (protocol_pk,),
        )
    )
    outcomes = None if policy_reviews_required(db) == 1 else _single_review_outcomes(db, protocol_pk)
    labels = [str(label) for label in LABELS]
    nobody = (0, "", "", "", "")
    rows: list[EdgeRow] = []
    for pk, claim_pk, source_pk, code, state_code in zip(pks, claim_pks, source_pks, codes, states, strict=True):
        state = _STATES[state_code]
        if outcomes is None:
            shown = labels[code] if code < len(labels) else ("disputed" if state == "disputed" else "pending")
        else:
            outcome = outcomes.get(pk, (ReviewState.PENDING, None))
            state, shown = str(outcome[0]), shown_label(*outcome)
        _, passage, period, reasoning, reviewer = shown_of.get(pk, nobody)
        rows.append((claim_id[claim_pk], source_key[source_pk], shown, passage, period, reasoning, state + reviewer))
    mask = official_mask(db, audit.protocol)
    official = frozenset(key for pk, key in source_key.items() if pk < len(mask) and mask[pk])
    return audit, ReportRows(rows, official)


def _edge_columns(db: sqlite3.Connection, protocol_pk: int) -> list[list[int]]:
    """:data:`_EDGE_COLUMNS` of every edge of the protocol's current claims, by edge pk."""
    columns = int_columns(db, _EDGE_COLUMNS, "edges e", f"WHERE e.claim_pk IN ({_CURRENT_CLAIMS})", [protocol_pk])
    order = np.argsort(columns[0], kind="stable")
    return [column[order].tolist() for column in columns]


def _judgements_shown(db: sqlite3.Connection, protocol_pk: int) -> dict[int, tuple[int, str, str, str, str]]:
    """Per edge pk, its latest human judgement, else its latest, as (edge pk, passage, period, reasoning,
    `` · reviewer`` or nothing)."""
    (protocols,) = db.execute("SELECT count(*) FROM protocols").fetchone()
    shown: dict[int, tuple[int, str, str, str, str]] = {}
    for by_person in (False, True):  # the people's judgements read last: they win
        found = (
            db.execute(_EVERY_JUDGEMENT, (by_person,))
            if protocols == 1
            else db.execute(_JUDGEMENTS, (protocol_pk, by_person))
        )
        shown.update({row[0]: row for row in found})
    return shown


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
