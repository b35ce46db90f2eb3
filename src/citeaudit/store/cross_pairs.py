"""Cross pairs in the database: proposing them, their judgements (model and human), and reading them back.

Cross pairs live in their own tables and never touch ``edges`` or ``judgements``, so no score, edge count or
agreement figure can include them by accident. They are judged under the edges' review policy
(:mod:`citeaudit.core.review_policy`): the same reviewers' limit, the same refusals, and the same judgements
deciding their state.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from citeaudit.core.clock import utc_now
from citeaudit.core.errors import InvalidValue, ReviewRefused
from citeaudit.core.misattribution import CrossCandidate, CrossKind, CrossPair
from citeaudit.core.model import Judgement, Label, Origin, ReviewState, Stage
from citeaudit.core.review_policy import DOORS, StoredJudgement, counted_judgements, policy_outcome
from citeaudit.store.reading import CURRENT_CLAIM
from citeaudit.store.review_rules import policy_reviews_required, stored_item_refusal
from citeaudit.store.sqlite import Store

__all__ = [
    "CrossPairRow",
    "CrossToSuggest",
    "RankedRow",
    "cross_pair",
    "cross_pair_list",
    "cross_pairs_of",
    "cross_pairs_to_suggest",
    "cross_ranked_passages",
    "cross_refusal",
    "has_cross_suggestion",
    "has_run",
    "official_snapshot_keys",
    "propose_cross_pairs",
    "record_cross_judgement",
    "reviews_required",
    "shows_model_suggestions",
]

_COLUMNS = (
    "j.label, j.reviewer, j.origin, j.stage, j.passage, j.reasoning, j.created_at, j.judge, j.judge_model, "
    "j.judge_version, j.prompt_sha256, j.confidence"
)


def _judgement(row: Sequence[object]) -> Judgement:
    label, reviewer, origin, stage, passage, reasoning, created, judge, model, version, prompt, confidence = row
    return Judgement(
        Label(str(label)),
        None if reviewer is None else str(reviewer),
        Origin(str(origin)),
        Stage(str(stage)),
        None if passage is None else str(passage),
        None,
        None if reasoning is None else str(reasoning),
        None if created is None else str(created),
        None if judge is None else str(judge),
        None if model is None else str(model),
        None if version is None else str(version),
        None if prompt is None else str(prompt),
        None if confidence is None else float(str(confidence)),
    )


def reviews_required(store: Store) -> int:
    """Independent human reviews the project's review policy needs (cross pairs follow the edges' policy)."""
    return policy_reviews_required(store.connection)


def _stored(db: sqlite3.Connection, pair_pk: int) -> list[StoredJudgement]:
    """The pair's judgements with their row ids, oldest first (the policy orders reviews by row)."""
    return [
        StoredJudgement(int(pk), _judgement(row))
        for pk, *row in db.execute(
            f"SELECT j.pk, {_COLUMNS} FROM cross_judgements j WHERE j.cross_pair_pk = ? ORDER BY j.pk", (pair_pk,)
        )
    ]


def cross_refusal(db: sqlite3.Connection, pair_pk: int, reviewer: str, stage: Stage) -> str | None:
    """Why ``reviewer`` may not record a judgement of ``stage`` on the cross pair now (``None`` when they may):
    what the page asks before it offers a form, by the same rules as :func:`record_cross_judgement`."""
    return _refusal(db, pair_pk, Judgement(Label.UNKNOWN, reviewer, Origin.HUMAN, stage))


def _refusal(db: sqlite3.Connection, pair_pk: int, judgement: Judgement) -> str | None:
    """The edges' rules (:func:`citeaudit.store.review_rules.stored_item_refusal`) on the pair's claim and
    judgements."""
    (claim_pk,) = db.execute("SELECT claim_pk FROM cross_pairs WHERE pk = ?", (pair_pk,)).fetchone()
    return stored_item_refusal(db, int(claim_pk), _stored(db, pair_pk), judgement, item="cross pair")


def has_run(store: Store, run: str) -> bool:
    """Whether the database holds a run with this id."""
    return store.connection.execute("SELECT 1 FROM runs WHERE id = ?", (run,)).fetchone() is not None


def shows_model_suggestions(store: Store) -> bool:
    """Whether the project shows model suggestions to reviewers (the edges' setting, default no)."""
    row = store.connection.execute("SELECT value FROM review_settings WHERE key = 'show_model_suggestions'").fetchone()
    return row is not None and str(row[0]) == "true"


def official_snapshot_keys(store: Store, protocol_pk: int) -> set[str]:
    """Keys of the protocol's sources that have a snapshot with text (an official one can be a cross pair)."""
    return {
        str(key)
        for (key,) in store.connection.execute(
            "SELECT s.key FROM sources s JOIN protocol_sources ps ON ps.source_pk = s.pk WHERE ps.protocol_pk = ? "
            "AND EXISTS (SELECT 1 FROM fetches f WHERE f.source_pk = s.pk AND f.document_sha256 IS NOT NULL)",
            (protocol_pk,),
        )
    }


def propose_cross_pairs(db: sqlite3.Connection, protocol_pk: int, candidates: Iterable[CrossCandidate]) -> int:
    """Store the candidates that are not cross pairs yet (claims of the protocol, current claim sets); returns how
    many were added. Call inside a transaction."""
    claim_pk = {
        str(cid): int(pk)
        for cid, pk in db.execute(
            "SELECT c.id, c.pk FROM claims c JOIN answers a ON a.pk = c.answer_pk JOIN runs r ON r.pk = a.run_pk "
            f"WHERE r.protocol_pk = ? AND {CURRENT_CLAIM}",
            (protocol_pk,),
        )
    }
    existing = {(int(c), int(s)) for c, s in db.execute("SELECT claim_pk, source_pk FROM cross_pairs")}
    at = utc_now()
    added = 0
    for candidate in candidates:
        row = db.execute("SELECT pk FROM sources WHERE key = ?", (candidate.source_key,)).fetchone()
        if row is None or candidate.claim_id not in claim_pk:
            continue
        pair = (claim_pk[candidate.claim_id], int(row[0]))
        if pair in existing:
            continue
        db.execute(
            "INSERT INTO cross_pairs (claim_pk, source_pk, kind, proposed_at) VALUES (?, ?, ?, ?)",
            (*pair, str(candidate.kind), at),
        )
        existing.add(pair)
        added += 1
    return added


def cross_pairs_of(store: Store, protocol_pk: int) -> list[CrossPair]:
    """Every cross pair of the protocol's current claims with its judgements, in proposal order."""
    db = store.connection
    required = policy_reviews_required(db)
    judgements: dict[int, list[StoredJudgement]] = {}
    for pair_pk, pk, *row in db.execute(
        f"SELECT j.cross_pair_pk, j.pk, {_COLUMNS} FROM cross_judgements j ORDER BY j.pk"
    ):
        judgements.setdefault(int(pair_pk), []).append(StoredJudgement(int(pk), _judgement(row)))
    return [
        CrossPair(
            str(cid),
            str(key),
            CrossKind(str(kind)),
            tuple(j.judgement for j in judgements.get(int(pk), ())),
            tuple(counted_judgements(judgements.get(int(pk), []), required)),
        )
        for pk, cid, key, kind in db.execute(
            "SELECT x.pk, c.id, s.key, x.kind FROM cross_pairs x JOIN claims c ON c.pk = x.claim_pk "
            "JOIN sources s ON s.pk = x.source_pk JOIN answers a ON a.pk = c.answer_pk JOIN runs r ON r.pk = a.run_pk "
            f"WHERE r.protocol_pk = ? AND {CURRENT_CLAIM} ORDER BY x.pk",
            (protocol_pk,),
        )
    ]


@dataclass(frozen=True, slots=True)
class CrossToSuggest:
    """A cross pair a judge may be asked about."""

    pk: int
    """Cross pair row."""
    claim_id: str
    """The claim."""
    claim: str
    """Its text."""
    locale: str
    """Locale of its answer (for reading numbers)."""
    document_sha256: str | None
    """The source's latest snapshot, ``None`` when it has none."""
    human_labels: int
    """Human judgements it already has (a reviewed pair is not suggested for again)."""


def cross_pairs_to_suggest(db: sqlite3.Connection, run: str | None = None) -> list[CrossToSuggest]:
    """Cross pairs of current claims without a human judgement (of one run's answers, or all)."""
    where = "" if run is None else "AND r.id = ?"
    return [
        CrossToSuggest(int(pk), str(cid), str(text), str(locale or "en"), None if sha is None else str(sha), 0)
        for pk, cid, text, locale, sha in db.execute(
            "SELECT x.pk, c.id, c.text, coalesce(a.locale, r.locale, q.locale), "
            "(SELECT f.document_sha256 FROM fetches f WHERE f.source_pk = x.source_pk "
            "AND f.document_sha256 IS NOT NULL ORDER BY f.pk DESC LIMIT 1) "
            "FROM cross_pairs x JOIN claims c ON c.pk = x.claim_pk JOIN answers a ON a.pk = c.answer_pk "
            "JOIN runs r ON r.pk = a.run_pk JOIN questions q ON q.pk = a.question_pk "
            f"WHERE {CURRENT_CLAIM} AND NOT EXISTS (SELECT 1 FROM cross_judgements j WHERE j.cross_pair_pk = x.pk "
            f"AND j.origin = 'human') {where} ORDER BY x.pk",
            () if run is None else (run,),
        )
    ]


def has_cross_suggestion(
    db: sqlite3.Connection, pair_pk: int, judge: str, model: str | None, version: str, prompt_sha256: str | None
) -> bool:
    """Whether the cross pair has a suggestion from this judge (same name, model, version and prompt hash)."""
    return (
        db.execute(
            "SELECT 1 FROM cross_judgements WHERE cross_pair_pk = ? AND origin = 'model' AND judge = ? "
            "AND judge_model IS ? AND judge_version = ? AND prompt_sha256 IS ? LIMIT 1",
            (pair_pk, judge, model, version, prompt_sha256),
        ).fetchone()
        is not None
    )


RankedRow = tuple[int, int, int, int, float]
"""``(rank, ordinal, start, end, score)`` of a passage shown to a judge."""


def record_cross_judgement(
    db: sqlite3.Connection,
    pair_pk: int,
    judgement: Judgement,
    *,
    document_sha256: str | None = None,
    method: str | None = None,
    ranked: Sequence[RankedRow] = (),
    submission: str | None = None,
    door: str = "api",
) -> int:
    """Store one judgement of a cross pair (a model's with the snapshot and ranked passages it read), and an
    audit-log row; returns its pk. A repeated form ``submission`` stores nothing twice. Call inside a
    transaction: a person's judgement is checked there by the rules every door follows, as an edge's is
    (:mod:`citeaudit.core.review_policy`: the reviewer's account and its role, the pair's claim, state and
    reviewers), so two reviewers submitting at once cannot both pass them; what they refuse is a
    :class:`ReviewRefused`. ``door`` (one of :data:`~citeaudit.core.review_policy.DOORS`) goes into the
    audit-log row."""
    if door not in DOORS:
        raise InvalidValue("review", "door", f"door {door!r} is not one of {', '.join(DOORS)}")
    if db.execute("SELECT 1 FROM cross_pairs WHERE pk = ?", (pair_pk,)).fetchone() is None:
        raise InvalidValue("database", "cross_pairs", f"no cross pair {pair_pk}")
    if submission is not None:
        seen = db.execute("SELECT pk FROM cross_judgements WHERE submission = ?", (submission,)).fetchone()
        if seen is not None:
            return int(seen[0])
    if judgement.origin is Origin.HUMAN:
        why = _refusal(db, pair_pk, judgement)
        if why is not None:
            raise ReviewRefused(f"cross pair {pair_pk}: {why}")
    created = judgement.created_at or utc_now("microseconds")
    pk = db.execute(
        "INSERT INTO cross_judgements (cross_pair_pk, label, reviewer, origin, stage, passage, reasoning, created_at, "
        "judge, judge_model, judge_version, prompt_sha256, confidence, document_sha256, method, submission) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            pair_pk,
            str(judgement.label),
            judgement.reviewer,
            str(judgement.origin),
            str(judgement.stage),
            judgement.passage,
            judgement.reasoning,
            created,
            judgement.judge,
            judgement.judge_model,
            judgement.judge_version,
            judgement.prompt_sha256,
            judgement.confidence,
            document_sha256,
            method,
            submission,
        ),
    ).lastrowid
    assert pk is not None
    db.executemany(
        'INSERT INTO cross_suggested_passages (cross_judgement_pk, rank, ordinal, start, "end", score) '
        "VALUES (?, ?, ?, ?, ?, ?)",
        [(pk, *row) for row in ranked],
    )
    db.execute(
        "INSERT INTO audit_log (at, actor, action, target, before, after) VALUES (?, ?, ?, ?, NULL, ?)",
        (
            utc_now("microseconds"),
            judgement.reviewer or judgement.judge or "",
            "cross_suggestion" if judgement.origin is Origin.MODEL else "cross_judgement",
            f"cross_pair:{pair_pk}",
            json.dumps(
                {"judgement": pk, "label": str(judgement.label), "stage": str(judgement.stage), "door": door},
                sort_keys=True,
            ),
        ),
    )
    return int(pk)


@dataclass(frozen=True, slots=True)
class CrossPairRow:
    """A cross pair as the review pages show it."""

    pk: int
    """Cross pair row."""
    kind: CrossKind
    """Co-cited or official."""
    claim_pk: int
    """The claim's row."""
    claim_id: str
    """The claim."""
    claim_text: str
    """Its text."""
    claim_start: int | None
    """Its span in the answer."""
    claim_end: int | None
    """End of the span."""
    answer_id: str
    """Its answer."""
    answer_text: str
    """The answer's text."""
    source_pk: int
    """The other source's row."""
    source_key: str
    """The other source."""
    source_url: str | None
    """Its URL (resolved when known)."""
    source_title: str | None
    """Its title."""
    judgements: tuple[Judgement, ...]
    """Its judgements, oldest first."""
    state: ReviewState
    """Its review state under the project's policy (the edges' rules)."""
    final_label: Label | None
    """Its final label under that policy, ``None`` while it has none."""


_ROW = (
    'SELECT x.pk, x.kind, c.pk, c.id, c.text, c.start, c."end", a.id, a.text, s.pk, s.key, '
    "coalesce(s.resolved_url, s.url), s.title FROM cross_pairs x JOIN claims c ON c.pk = x.claim_pk "
    f"JOIN answers a ON a.pk = c.answer_pk JOIN sources s ON s.pk = x.source_pk WHERE {CURRENT_CLAIM}"
)


def _row(db: sqlite3.Connection, row: Sequence[object]) -> CrossPairRow:
    pk = int(str(row[0]))
    stored = _stored(db, pk)
    state, final = policy_outcome(stored, policy_reviews_required(db))
    start, end = row[5], row[6]
    return CrossPairRow(
        pk,
        CrossKind(str(row[1])),
        int(str(row[2])),
        str(row[3]),
        str(row[4]),
        None if start is None else int(str(start)),
        None if end is None else int(str(end)),
        str(row[7]),
        str(row[8]),
        int(str(row[9])),
        str(row[10]),
        None if row[11] is None else str(row[11]),
        None if row[12] is None else str(row[12]),
        tuple(j.judgement for j in stored),
        state,
        final,
    )


def cross_pair(db: sqlite3.Connection, pair_pk: int) -> CrossPairRow | None:
    """One cross pair of a current claim, or ``None``."""
    row = db.execute(f"{_ROW} AND x.pk = ?", (pair_pk,)).fetchone()
    return None if row is None else _row(db, row)


def cross_pair_list(db: sqlite3.Connection, limit: int = 200) -> list[CrossPairRow]:
    """Cross pairs of current claims, those without a human judgement first, then in proposal order."""
    rows = db.execute(
        f"{_ROW} ORDER BY EXISTS (SELECT 1 FROM cross_judgements j WHERE j.cross_pair_pk = x.pk "
        "AND j.origin = 'human'), x.pk LIMIT ?",
        (limit,),
    ).fetchall()
    return [_row(db, row) for row in rows]


def cross_ranked_passages(db: sqlite3.Connection, pair_pk: int) -> list[tuple[int, float, str]]:
    """``(rank, score, text)`` of the passages the latest model judgement of the pair was shown, best first."""
    row = db.execute(
        "SELECT j.pk, d.text FROM cross_judgements j JOIN documents d ON d.sha256 = j.document_sha256 "
        "WHERE j.cross_pair_pk = ? AND j.origin = 'model' ORDER BY j.pk DESC LIMIT 1",
        (pair_pk,),
    ).fetchone()
    if row is None:
        return []
    judgement_pk, text = int(row[0]), str(row[1])
    return [
        (int(rank), float(score), text[int(start) : int(end)])
        for rank, start, end, score in db.execute(
            'SELECT rank, start, "end", score FROM cross_suggested_passages WHERE cross_judgement_pk = ? ORDER BY rank',
            (judgement_pk,),
        )
    ]
