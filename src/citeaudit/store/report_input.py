"""What the HTML report reads from a database: the audit without its edges, and each edge as integer columns
(its claim, its source, the codes of its shown label and review state) with the two texts of the judgement it
shows (its passage, period and reasoning; its reviewer).

Building every edge with its locations and whole judgement history as model objects costs more than the rest of
the report together at 100 000 edges; the report shows only each edge's outcome and one judgement. SQLite writes
every judgement's part as JSON text (``json_array``, ``json_quote``), all of them in one text per query, and numpy
finds each edge's latest, so no Python value is made per field of an edge nor a row per judgement.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from citeaudit.core.model import Audit, Judgement, Label, ReviewState, RunKind, review_outcome
from citeaudit.core.scope import Scope
from citeaudit.core.scoring import DISPUTED_CODE, LABELS, PENDING_CODE
from citeaudit.store.judgements import JUDGEMENT_COLUMNS, judgement_from_row
from citeaudit.store.pipeline import BackgroundRead
from citeaudit.store.reading import CURRENT_CLAIM, STATE_CODE, STATES, int_columns, official_mask, read_audit
from citeaudit.store.review_rules import policy_reviews_required
from citeaudit.store.sqlite import Store

__all__ = [
    "SHOWN",
    "STATES",
    "EdgeReads",
    "EdgeRow",
    "JudgedTexts",
    "ReportRows",
    "edge_text",
    "json_text",
    "read_edge_reads",
    "read_judged_texts",
    "read_report_input",
    "shown_label",
    "with_official",
]

EdgeRow = tuple[str, str, str, str, str, str, str]
"""(claim id, source key, shown label, passage, period, reasoning, review state with the latest reviewer)."""

SHOWN: tuple[str, ...] = (*(str(label) for label in LABELS), "pending", "disputed")
"""The shown label of each code (the scorer's: the final labels, then :data:`PENDING_CODE`, :data:`DISPUTED_CODE`)."""


@dataclass(frozen=True, slots=True)
class ReportRows:
    """What the report reads from the ledger beside the audit without its edges: every edge of the protocol's
    current claims, in the order the audit lists edges (by edge key), as columns."""

    claim_pks: npt.NDArray[np.int64]
    """Per edge, its claim's key (see :attr:`claim_ids`)."""
    source_pks: npt.NDArray[np.int64]
    """Per edge, its source's key (see :attr:`source_keys`)."""
    codes: npt.NDArray[np.int64]
    """Per edge, the code of its shown label (:data:`SHOWN`)."""
    states: npt.NDArray[np.int64]
    """Per edge, the code of the review state shown with it (:data:`STATES`)."""
    texts: list[str]
    """Per edge, the passage, period and reasoning of the judgement it shows, as three JSON values joined by commas
    (``"<"`` not yet escaped)."""
    reviewers: list[str]
    """Per edge, the reviewer of the judgement it shows as its review reads after the state (``" · name"``, or
    ``""``), as a JSON string."""
    claim_ids: dict[int, str]
    """Claim id of each claim key."""
    source_keys: dict[int, str]
    """Source key of each source key (the store's integer one)."""
    official: frozenset[str] | None
    """Keys of the protocol's sources on an official page, decided as the scorer decides (``official_mask``: once
    per host, from the host and path the store keeps with each source); ``None`` until decided (read with
    ``official`` false, see :func:`with_official`)."""


_CURRENT_CLAIMS = (
    "SELECT c.pk FROM claims c JOIN answers a ON a.pk = c.answer_pk JOIN runs r ON r.pk = a.run_pk "
    f"WHERE r.protocol_pk = ? AND {CURRENT_CLAIM}"
)


_SHOWN_CODE = (
    f"CASE WHEN e.final_code < {PENDING_CODE} THEN e.final_code "
    f"WHEN e.review_state = '{ReviewState.DISPUTED}' THEN {DISPUTED_CODE} ELSE {PENDING_CODE} END"
)
"""An edge's shown label under a single review, as its position in :data:`SHOWN`: its final label, else its
review state (``disputed`` or ``pending``)."""

_EDGE_COLUMNS = ("e.claim_pk", "e.source_pk", _SHOWN_CODE, STATE_CODE)
"""Each edge of the protocol's current claims as integers (read as columns: no row of Python values each)."""

_JUDGED = (
    "SELECT group_concat(j.pk), group_concat(j.edge_pk), group_concat(ltrim(rtrim(json_array(coalesce(j.passage, "
    "''), coalesce(j.period, ''), coalesce(j.reasoning, '')), ']'), '[') || char(31) || "
    "json_quote(CASE WHEN j.reviewer <> '' THEN ' · ' || j.reviewer ELSE '' END), char(31)) "
    "FROM judgements j WHERE (j.origin = 'human') = ? {}"
)
"""The judgements by people (or by others) in three texts: their keys, their edges' keys, and each one's part of
its edge's columns in two pieces (its passage, period and reasoning as three JSON values; its reviewer as its
review reads after the state, a JSON string), the pieces joined by the unit separator, a character JSON always
escapes (so never inside a piece). No row of Python values per judgement."""

_SHOWN_OF_JUDGEMENT = (
    "SELECT j.edge_pk, coalesce(j.passage, ''), coalesce(j.period, ''), coalesce(j.reasoning, ''), "
    "CASE WHEN j.reviewer <> '' THEN ' · ' || j.reviewer ELSE '' END FROM judgements j"
)
"""What the report shows of a judgement: its passage, period and reasoning, and its reviewer after the state."""


def shown_label(state: ReviewState, label: Label | None) -> str:
    """The final label, or the review state while there is none (``disputed`` or ``pending``)."""
    if label is not None:
        return str(label)
    return "disputed" if state is ReviewState.DISPUTED else "pending"


def edge_text(values: tuple[str, str, str]) -> str:
    """(passage, period, reasoning) as :attr:`ReportRows.texts` holds them: JSON values joined by commas, as
    ``json.dumps`` writes them without ASCII escapes."""
    return json.dumps(values, ensure_ascii=False, separators=(",", ":"))[1:-1]


def json_text(value: str) -> str:
    """``value`` as a JSON string, as :attr:`ReportRows.reviewers` holds it."""
    return json.dumps(value, ensure_ascii=False)


JudgedTexts = list[tuple[str | None, str | None, str | None]]
"""What :func:`read_judged_texts` reads: the judgements' texts of one protocol's edges, in two parts."""


@dataclass(frozen=True, slots=True)
class EdgeReads:
    """The reads of :func:`read_report_input` whose time is SQLite's, each a few rows of text that numpy takes
    apart (:func:`read_edge_reads`): a thread of their own runs them while the caller works."""

    columns: list[npt.NDArray[np.int64]]
    """The key, claim, source, shown label code and review state code of every edge of the protocol's current
    claims, by edge key."""
    judged: JudgedTexts | None
    """:func:`read_judged_texts`, when the ledger keeps single-review outcomes (``None``: the outcomes are worked
    out from the judgements)."""


def read_edge_reads(db: sqlite3.Connection, protocol_pk: int) -> EdgeReads:
    """:class:`EdgeReads` of the protocol."""
    columns = _edge_columns(db, protocol_pk)
    return EdgeReads(columns, read_judged_texts(db, protocol_pk) if policy_reviews_required(db) == 1 else None)


def read_report_input(
    store: Store, protocol_pk: int, edges: BackgroundRead[EdgeReads] | None = None, *, official: bool = True
) -> tuple[Audit, ReportRows]:
    """One protocol's audit without edges, and every edge of its current claims as :class:`ReportRows` (in the
    order the audit lists edges) with the keys of its official sources.

    The label is the one a single review gives (``review_outcome`` of all the edge's judgements): under the single
    policy that is the outcome the store keeps with the edge; under another policy it is worked out from the
    judgements, as for an audit read whole. The judgement shown is the edge's latest human one, else its latest.
    ``edges``: :func:`read_edge_reads` of ``protocol_pk`` being read on a thread of its own (waited for once the
    audit is read). With ``official`` false the official sources are left undecided, for a caller that has the
    scorer's decision coming (:func:`with_official`)."""
    db = store.connection
    every_answer = Scope(run_kinds=frozenset(RunKind))
    audit = read_audit(db, store.effective_protocol(protocol_pk, every_answer), protocol_pk, edges=False)
    claim_ids = dict(db.execute(f"SELECT c.pk, c.id FROM claims c WHERE c.pk IN ({_CURRENT_CLAIMS})", (protocol_pk,)))
    source_keys = dict(
        db.execute(
            "SELECT s.pk, s.key FROM sources s JOIN protocol_sources ps ON ps.source_pk = s.pk "
            "WHERE ps.protocol_pk = ?",
            (protocol_pk,),
        )
    )
    keys = _official_keys(source_keys, official_mask(db, audit.protocol)) if official else None
    # the edges last: read on a thread of their own, they are then more likely done
    read = read_edge_reads(db, protocol_pk) if edges is None else edges.result()
    pks, claim_pks, source_pks, codes, states = read.columns
    if read.judged is not None:
        texts, reviewers = _texts(read.judged, pks)
    else:
        codes, states, texts, reviewers = _texts_of_outcomes(db, protocol_pk, pks)
    return audit, ReportRows(claim_pks, source_pks, codes, states, texts, reviewers, claim_ids, source_keys, keys)


def with_official(rows: ReportRows, mask: npt.NDArray[np.bool_]) -> ReportRows:
    """``rows`` with their official sources: those whose key ``mask`` marks (``official_mask`` of the audit's
    protocol, e.g. the one its scores were made with, ``ScoredPath.source_official``). Refuses a mask that does not
    reach every source the rows name (``ValueError``): it was made from another state of the ledger."""
    if rows.source_keys and max(rows.source_keys) >= len(mask):
        raise ValueError(f"the official mask covers {len(mask)} source keys, the rows name {max(rows.source_keys)}")
    return dataclasses.replace(rows, official=_official_keys(rows.source_keys, mask))


def _official_keys(source_keys: dict[int, str], mask: npt.NDArray[np.bool_]) -> frozenset[str]:
    return frozenset(key for pk, key in source_keys.items() if pk < len(mask) and mask[pk])


def _edge_columns(db: sqlite3.Connection, protocol_pk: int) -> list[npt.NDArray[np.int64]]:
    """The key and :data:`_EDGE_COLUMNS` of every edge of the protocol's current claims, by edge key."""
    columns = int_columns(
        db, ("e.pk", *_EDGE_COLUMNS), "edges e", f"WHERE e.claim_pk IN ({_CURRENT_CLAIMS})", [protocol_pk]
    )
    order = np.argsort(columns[0], kind="stable")
    return [column[order] for column in columns]


def read_judged_texts(db: sqlite3.Connection, protocol_pk: int) -> JudgedTexts:
    """:data:`_JUDGED` of the judgements by others, then by people, of the protocol's edges (of every edge, for
    a database of one protocol: half the time; the edges not read are never looked up)."""
    (protocols,) = db.execute("SELECT count(*) FROM protocols").fetchone()
    rest = (
        "" if protocols == 1 else f"AND j.edge_pk IN (SELECT e.pk FROM edges e WHERE e.claim_pk IN ({_CURRENT_CLAIMS}))"
    )
    return [
        db.execute(_JUDGED.format(rest), (by_person,) if protocols == 1 else (by_person, protocol_pk)).fetchone()
        for by_person in (False, True)
    ]


def _texts(judged: JudgedTexts, pks: npt.NDArray[np.int64]) -> tuple[list[str], list[str]]:
    """Per edge, the two pieces of its latest human judgement (else its latest) as SQLite wrote them (``judged``:
    :func:`read_judged_texts`): its passage, period and reasoning, and its reviewer. Picked by numpy, no text is
    made per edge."""
    heads, tails = ['"","",""'], ['""']  # an edge nobody judged: nothing shown, no reviewer
    chosen = np.zeros(int(pks.max(initial=0)) + 1, dtype=np.int64)
    for keys, edges, pieces in judged:  # the people's judgements last: they win
        if not keys or not edges or not pieces:
            continue
        order = np.argsort(np.fromstring(keys, dtype=np.int64, sep=","), kind="stable")  # oldest first
        edge_of = np.fromstring(edges, dtype=np.int64, sep=",")[order]
        last = len(order) - 1 - np.unique(edge_of[::-1], return_index=True)[1]  # each edge's latest judgement
        known = edge_of[last] < len(chosen)
        chosen[edge_of[last][known]] = order[last][known] + len(heads)
        split = pieces.split("\x1f")
        heads.extend(split[0::2])
        tails.extend(split[1::2])
    at = chosen[pks]
    texts: list[str] = np.array(heads, dtype=object)[at].tolist()
    reviewers: list[str] = np.array(tails, dtype=object)[at].tolist()
    return texts, reviewers


def _texts_of_outcomes(
    db: sqlite3.Connection, protocol_pk: int, pks: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], list[str], list[str]]:
    """The codes, states, texts and reviewers of the edges under a single review when the store keeps another
    policy's outcome: each worked out from the edge's judgements."""
    outcomes = _single_review_outcomes(db, protocol_pk)
    shown_of = _judgements_shown(db, protocol_pk)
    nobody = (0, "", "", "", "")
    codes, states, texts, reviewers = [], [], [], []
    for pk in pks.tolist():
        state, label = outcomes.get(pk, (ReviewState.PENDING, None))
        _, passage, period, reasoning, reviewer = shown_of.get(pk, nobody)
        codes.append(SHOWN.index(shown_label(state, label)))
        states.append(STATES.index(str(state)))
        texts.append(edge_text((passage, period, reasoning)))
        reviewers.append(json_text(reviewer))
    return np.array(codes, dtype=np.int64), np.array(states, dtype=np.int64), texts, reviewers


def _judgements_shown(db: sqlite3.Connection, protocol_pk: int) -> dict[int, tuple[int, str, str, str, str]]:
    """Per edge pk, its latest human judgement, else its latest, as (edge pk, passage, period, reasoning,
    `` · reviewer`` or nothing)."""
    shown: dict[int, tuple[int, str, str, str, str]] = {}
    query = (
        f"{_SHOWN_OF_JUDGEMENT} CROSS JOIN edges e ON e.pk = j.edge_pk WHERE e.claim_pk IN ({_CURRENT_CLAIMS}) AND "
        "(j.origin = 'human') = ? ORDER BY j.pk"
    )
    for by_person in (False, True):  # the people's judgements read last: they win
        shown.update({row[0]: row for row in db.execute(query, (protocol_pk, by_person))})
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
