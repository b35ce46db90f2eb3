"""Claim sets and fact mappings in SQLite: reading an answer's current claims and writing a new set.

Every write here runs inside the caller's transaction; nothing is updated or deleted except
``claims.fact_pk`` when a mapping to a required fact is confirmed.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from citeaudit.core.errors import UnknownReference
from citeaudit.core.model import Segmentation
from citeaudit.core.scoring import PENDING_CODE
from citeaudit.store.reading import CURRENT_CLAIM

__all__ = [
    "AnswerClaims",
    "ClaimPlan",
    "CurrentClaim",
    "CurrentEdge",
    "NewClaim",
    "NewSet",
    "SetInfo",
    "SetPlan",
    "StoredLocation",
    "answer_claims",
    "answer_claims_many",
    "answers_in",
    "claim_answer",
    "segment_inputs",
    "write_claim_set",
    "write_claim_sets",
]

# The rows read for an answer and the plan written back: the segment services compute a plan from the first and
# hand it to the store as plain records.

StoredLocation = tuple[str | None, int | None, int | None]
"""``(marker, start, end)`` of one citation location of an edge."""


@dataclass(frozen=True, slots=True)
class CurrentClaim:
    """A claim as stored, with its row id."""

    pk: int
    """Row id."""
    id: str
    """Claim id."""
    text: str
    """Claim text."""
    start: int | None
    """Span start (``None`` when the claim came without a span)."""
    end: int | None
    """Span end (exclusive)."""
    fact_pk: int | None = None
    """Row id of the required fact it is confirmed to state, if any."""


@dataclass(frozen=True, slots=True)
class CurrentEdge:
    """An edge of a current claim, with its locations and how many judgements it holds."""

    claim_pk: int
    """The claim's row id."""
    source_pk: int
    """The source's row id."""
    locations: tuple[StoredLocation, ...]
    """Citation locations."""
    judgements: int = 0
    """Judgements recorded on it."""


@dataclass(frozen=True, slots=True)
class NewClaim:
    """A claim to create, with the pending edges its citation locations make."""

    text: str
    """Claim text."""
    start: int
    """Span start."""
    end: int
    """Span end (exclusive)."""
    edges: dict[int, list[StoredLocation]] = field(default_factory=dict)
    """Locations by source row id: one pending edge per source."""


ClaimPlan = int | NewClaim
"""A member of the new set: the row id of a kept claim, or a claim to create."""


@dataclass(frozen=True, slots=True)
class SetPlan:
    """The new claim set of one answer and what it changes."""

    members: tuple[ClaimPlan, ...]
    """Members in text order."""
    kept: int
    """Claims unchanged in text and span: same row, edges and judgements."""
    new: int
    """Claims created (their edges are pending)."""
    retired: int
    """Current claims not in the new set (kept in the history with their judgements)."""
    edges_kept: int
    """Edges of kept claims."""
    edges_pending: int
    """New edges, pending review."""
    judgements_kept: int
    """Judgements on the edges of kept claims."""
    judgements_not_transferred: int
    """Judgements on the edges of retired claims: they stay with those claims, never move to new text."""
    facts_not_transferred: int
    """Retired claims that were confirmed to state a required fact: the mapping stays with them; the new
    claims need confirming again (``facts map`` / ``facts confirm``)."""
    unattached: int
    """Citation locations of replaced claims that fell on no claim of the new set (in skipped text such as a
    question, or on a replaced claim without a span in the answer): counted, kept in the history."""
    skipped: dict[str, int] = field(default_factory=dict)
    """Non-assertions skipped, by reason."""

    @property
    def changed(self) -> bool:
        """Whether the new set differs from the current one."""
        return self.new > 0 or self.retired > 0


@dataclass(frozen=True, slots=True)
class SetInfo:
    """The newest claim set of an answer."""

    pk: int
    """Row id."""
    ordinal: int
    """Its number among the answer's sets (0 = the claims as ingested)."""
    segmentation: Segmentation
    """Method, version and parameters it was made with."""
    action: str
    """``ingest``, ``segment``, ``split``, ``merge`` or ``edit``."""


@dataclass(frozen=True, slots=True)
class AnswerClaims:
    """One answer with its current claims, their edges and every claim it ever had."""

    pk: int
    """Answer row id."""
    id: str
    """Answer id."""
    text: str
    """Answer text."""
    current_set: SetInfo | None
    """Newest claim set (``None`` when the answer still has its ingested claims only)."""
    claims: tuple[CurrentClaim, ...]
    """Current claims in text order."""
    edges: tuple[CurrentEdge, ...]
    """Edges of every claim in ``history`` (a claim brought back from an older set brings its edges)."""
    history: tuple[CurrentClaim, ...]
    """Every claim of the answer, any set, oldest first."""
    regions: tuple[tuple[int, int], ...]
    """Engine-given spans: the spans of the claims as ingested."""


def answers_in(db: sqlite3.Connection, run: str | None) -> list[tuple[int, str, int]]:
    """``(answer pk, answer id, protocol pk)`` of every answer, or of one run's, in import order."""
    if run is not None and db.execute("SELECT 1 FROM runs WHERE id = ?", (run,)).fetchone() is None:
        known = [r for (r,) in db.execute("SELECT id FROM runs ORDER BY pk LIMIT 20")]
        raise UnknownReference("--run", "", f"no run {run!r} in the database; runs: {', '.join(known) or 'none'}")
    sql = "SELECT a.pk, a.id, r.protocol_pk FROM answers a JOIN runs r ON r.pk = a.run_pk"
    rows = db.execute(sql + (" WHERE r.id = ?" if run else "") + " ORDER BY a.pk", (run,) if run else ())
    return [(int(pk), str(aid), int(ppk)) for pk, aid, ppk in rows]


def claim_answer(db: sqlite3.Connection, claim_id: str) -> int:
    """Row id of the answer a claim belongs to."""
    row = db.execute("SELECT answer_pk FROM claims WHERE id = ?", (claim_id,)).fetchone()
    if row is None:
        raise UnknownReference("claim", "", f"no claim {claim_id!r} in the database")
    return int(row[0])


def _segmentation(method: str, version: str | None, parameters: str) -> Segmentation:
    return Segmentation(method, version, tuple((str(n), str(v)) for n, v in json.loads(parameters)))


def answer_claims(db: sqlite3.Connection, answer_pk: int) -> AnswerClaims:
    """An answer's current claims, their edges, its claim history and its engine-given spans."""
    aid, text = db.execute("SELECT id, text FROM answers WHERE pk = ?", (answer_pk,)).fetchone()
    row = db.execute(
        "SELECT pk, ordinal, method, version, parameters, action FROM claim_sets WHERE answer_pk = ? "
        "ORDER BY pk DESC LIMIT 1",
        (answer_pk,),
    ).fetchone()
    current_set = None if row is None else SetInfo(row[0], row[1], _segmentation(row[2], row[3], row[4]), row[5])
    # every claim of the answer in one query: the history in row order, the current ones (CURRENT_CLAIM) in
    # text order, claims without a span first
    rows = db.execute(
        'SELECT c.pk, c.id, c.text, c.start, c."end", c.fact_pk, c.current FROM claims c WHERE c.answer_pk = ? '
        "ORDER BY c.pk",
        (answer_pk,),
    ).fetchall()
    history = tuple(CurrentClaim(*r[:6]) for r in rows)
    claims = tuple(
        sorted(
            (claim for claim, row in zip(history, rows, strict=True) if row[6] == 1),
            key=lambda c: (-1 if c.start is None else c.start, c.pk),
        )
    )
    ingested_spans: Iterable[tuple[int | None, int | None]] = (
        ((c.start, c.end) for c in claims)
        if current_set is None
        else db.execute(
            'SELECT c.start, c."end" FROM claims c JOIN claim_set_members m ON m.claim_pk = c.pk WHERE m.set_pk = '
            "(SELECT pk FROM claim_sets WHERE answer_pk = ? ORDER BY ordinal LIMIT 1)",
            (answer_pk,),
        )
    )
    regions = tuple(sorted({(s, e) for s, e in ingested_spans if s is not None and e is not None}))
    locations: dict[int, list[tuple[str | None, int | None, int | None]]] = {}
    for edge_pk, marker, start, end in db.execute(
        'SELECT l.edge_pk, l.marker, l.start, l."end" FROM edge_locations l JOIN edges e ON e.pk = l.edge_pk '
        "JOIN claims c ON c.pk = e.claim_pk WHERE c.answer_pk = ? ORDER BY l.pk",
        (answer_pk,),
    ):
        locations.setdefault(edge_pk, []).append((marker, start, end))
    edges = tuple(
        CurrentEdge(int(claim_pk), int(source_pk), tuple(locations.get(edge_pk, ())), int(judged))
        for edge_pk, claim_pk, source_pk, judged in db.execute(
            "SELECT e.pk, e.claim_pk, e.source_pk, (SELECT count(*) FROM judgements j WHERE j.edge_pk = e.pk) "
            "FROM edges e JOIN claims c ON c.pk = e.claim_pk WHERE c.answer_pk = ? ORDER BY e.pk",
            (answer_pk,),
        )
    )
    return AnswerClaims(answer_pk, aid, text, current_set, claims, edges, history, regions)


def _first_set_spans(db: sqlite3.Connection, chunk: Sequence[int], marks: str) -> dict[int, set[tuple[int, int]]]:
    """``answer pk → spans`` of the claims of each answer's first claim set (empty for an answer without one)."""
    spans: dict[int, set[tuple[int, int]]] = {pk: set() for pk in chunk}
    for answer_pk, start, end in db.execute(
        'SELECT s.answer_pk, c.start, c."end" FROM claim_sets s JOIN claim_set_members m ON m.set_pk = s.pk '
        f"JOIN claims c ON c.pk = m.claim_pk WHERE s.answer_pk IN ({marks}) AND s.ordinal = "
        "(SELECT min(t.ordinal) FROM claim_sets t WHERE t.answer_pk = s.answer_pk)",
        chunk,
    ):
        if start is not None and end is not None:
            spans[answer_pk].add((start, end))
    return spans


def segment_inputs(
    db: sqlite3.Connection, answer_pks: Sequence[int]
) -> list[tuple[int, str, tuple[tuple[int, int], ...], Segmentation | None]]:
    """``(answer pk, text, engine-given spans, segmentation of the newest claim set or None)`` of each answer, in
    the order given: what segmenting them needs, read with a few queries per 500 answers. The text and spans are
    those :func:`answer_claims` reads."""
    found: list[tuple[int, str, tuple[tuple[int, int], ...], Segmentation | None]] = []
    for at in range(0, len(answer_pks), 500):
        chunk = list(answer_pks[at : at + 500])
        marks = ", ".join("?" * len(chunk))
        texts = dict(db.execute(f"SELECT pk, text FROM answers WHERE pk IN ({marks})", chunk).fetchall())
        newest = {
            int(answer_pk): _segmentation(method, version, parameters)
            for answer_pk, method, version, parameters in db.execute(
                "SELECT answer_pk, method, version, parameters FROM claim_sets WHERE pk IN "
                f"(SELECT max(pk) FROM claim_sets WHERE answer_pk IN ({marks}) GROUP BY answer_pk)",
                chunk,
            )
        }
        # the claims as ingested: those of the answer's first set, or its current claims while it has none
        spans = _first_set_spans(db, chunk, marks)
        for answer_pk, start, end in db.execute(
            f'SELECT c.answer_pk, c.start, c."end" FROM claims c WHERE c.answer_pk IN ({marks}) AND {CURRENT_CLAIM}',
            chunk,
        ):
            if answer_pk not in newest and start is not None and end is not None:
                spans[answer_pk].add((start, end))
        found.extend((pk, texts[pk], tuple(sorted(spans[pk])), newest.get(pk)) for pk in chunk)
    return found


def answer_claims_many(db: sqlite3.Connection, answer_pks: Sequence[int]) -> list[tuple[AnswerClaims, int]]:
    """:func:`answer_claims` of each answer, in the order given, with the row id of its protocol: the same
    records, read with a few queries per 500 answers instead of several per answer."""
    found: list[tuple[AnswerClaims, int]] = []
    for at in range(0, len(answer_pks), 500):
        chunk = list(answer_pks[at : at + 500])
        marks = ", ".join("?" * len(chunk))
        answers = {
            pk: (aid, text, protocol_pk)
            for pk, aid, text, protocol_pk in db.execute(
                "SELECT a.pk, a.id, a.text, r.protocol_pk FROM answers a JOIN runs r ON r.pk = a.run_pk "
                f"WHERE a.pk IN ({marks})",
                chunk,
            )
        }
        newest = {
            row[1]: SetInfo(row[0], row[2], _segmentation(row[3], row[4], row[5]), row[6])
            for row in db.execute(
                "SELECT pk, answer_pk, ordinal, method, version, parameters, action FROM claim_sets WHERE pk IN "
                f"(SELECT max(pk) FROM claim_sets WHERE answer_pk IN ({marks}) GROUP BY answer_pk)",
                chunk,
            )
        }
        history: dict[int, list[CurrentClaim]] = {pk: [] for pk in chunk}
        current: dict[int, list[CurrentClaim]] = {pk: [] for pk in chunk}
        for pk, cid, text, start, end, fact_pk, is_current, answer_pk in db.execute(
            'SELECT pk, id, text, start, "end", fact_pk, current, answer_pk FROM claims '
            f"WHERE answer_pk IN ({marks}) ORDER BY pk",
            chunk,
        ):
            claim = CurrentClaim(pk, cid, text, start, end, fact_pk)
            history[answer_pk].append(claim)
            if is_current == 1:
                current[answer_pk].append(claim)
        ingested = _first_set_spans(db, chunk, marks)
        locations: dict[int, list[StoredLocation]] = {}
        for edge_pk, marker, start, end in db.execute(
            'SELECT l.edge_pk, l.marker, l.start, l."end" FROM edge_locations l JOIN edges e ON e.pk = l.edge_pk '
            f"JOIN claims c ON c.pk = e.claim_pk WHERE c.answer_pk IN ({marks}) ORDER BY l.pk",
            chunk,
        ):
            locations.setdefault(edge_pk, []).append((marker, start, end))
        edges: dict[int, list[CurrentEdge]] = {pk: [] for pk in chunk}
        for edge_pk, claim_pk, source_pk, judged, answer_pk in db.execute(
            "SELECT e.pk, e.claim_pk, e.source_pk, (SELECT count(*) FROM judgements j WHERE j.edge_pk = e.pk), "
            f"c.answer_pk FROM edges e JOIN claims c ON c.pk = e.claim_pk WHERE c.answer_pk IN ({marks}) "
            "ORDER BY e.pk",
            chunk,
        ):
            edges[answer_pk].append(
                CurrentEdge(int(claim_pk), int(source_pk), tuple(locations.get(edge_pk, ())), int(judged))
            )
        for pk in chunk:
            aid, text, protocol_pk = answers[pk]
            current_set = newest.get(pk)
            claims = tuple(sorted(current[pk], key=lambda c: (-1 if c.start is None else c.start, c.pk)))
            spans = (
                {(c.start, c.end) for c in claims if c.start is not None and c.end is not None}
                if current_set is None
                else ingested[pk]
            )
            state = AnswerClaims(
                pk, aid, text, current_set, claims, tuple(edges[pk]), tuple(history[pk]), tuple(sorted(spans))
            )
            found.append((state, int(protocol_pk)))
    return found


NewSet = tuple[AnswerClaims, SetPlan, Segmentation, Segmentation]
"""``(answer as read, plan, segmentation of the new set, segmentation its claims were ingested with)``."""


def write_claim_set(
    db: sqlite3.Connection,
    state: AnswerClaims,
    plan: SetPlan,
    segmentation: Segmentation,
    ingested_as: Segmentation,
    action: str,
    actor: str | None,
    created_at: str,
) -> int:
    """Record ``plan`` as the answer's newest claim set: new claims with pending edges, kept claims as they
    are. An answer's first set is preceded by set 0 holding the claims as ingested, so the history starts
    there. Returns the new set's ordinal."""
    write_claim_sets(db, [(state, plan, segmentation, ingested_as)], action, actor, created_at)
    return 1 if state.current_set is None else state.current_set.ordinal + 1


def _next_pk(db: sqlite3.Connection, table: str) -> int:
    """The row id SQLite would give the next row of ``table`` (one more than the largest in use)."""
    (largest,) = db.execute(f"SELECT max(pk) FROM {table}").fetchone()
    return 1 if largest is None else int(largest) + 1


def _counts(plan: SetPlan) -> str:
    counts = {
        "kept": plan.kept,
        "new": plan.new,
        "retired": plan.retired,
        "edges_kept": plan.edges_kept,
        "edges_pending": plan.edges_pending,
        "judgements_kept": plan.judgements_kept,
        "judgements_not_transferred": plan.judgements_not_transferred,
        "facts_not_transferred": plan.facts_not_transferred,
        "unattached_locations": plan.unattached,
        "skipped": plan.skipped,
    }
    return json.dumps(counts, sort_keys=True)


def write_claim_sets(
    db: sqlite3.Connection, sets: Sequence[NewSet], action: str, actor: str | None, created_at: str
) -> None:
    """:func:`write_claim_set` for several answers (each read before any of them was written), with one
    ``executemany`` per table. Rows are numbered here as SQLite would number them one by one, answer after
    answer, so the rows are those the answers written one at a time would leave."""
    ids: dict[int, list[str]] = {}
    for state, plan, _, _ in sets:
        ordinal = 1 if state.current_set is None else state.current_set.ordinal + 1
        count = sum(1 for m in plan.members if not isinstance(m, int))
        ids[state.pk] = [f"{state.id}-s{ordinal}c{number}" for number in range(1, count + 1)]
    wanted = [claim_id for found in ids.values() for claim_id in found]
    stored: set[str] = set()  # the ids already taken among those
    for at in range(0, len(wanted), 500):
        chunk = wanted[at : at + 500]
        marks = ", ".join("?" * len(chunk))
        stored.update(row[0] for row in db.execute(f"SELECT id FROM claims WHERE id IN ({marks})", chunk))
    set_pk, claim_pk = _next_pk(db, "claim_sets"), _next_pk(db, "claims")
    edge_pk, location_pk = _next_pk(db, "edges"), _next_pk(db, "edge_locations")
    set_rows: list[tuple[object, ...]] = []
    member_rows: list[tuple[int, int]] = []
    claim_rows: list[tuple[object, ...]] = []
    edge_rows: list[tuple[object, ...]] = []
    location_rows: list[tuple[object, ...]] = []
    retired: list[tuple[int]] = []
    restored: list[tuple[int]] = []
    written: set[str] = set()  # ids given to claims of the answers before this one
    for state, plan, segmentation, ingested_as in sets:
        ordinal = 1
        if state.current_set is None:
            counts = json.dumps({"claims": len(state.claims)}, sort_keys=True)
            set_rows.append(_set_row(set_pk, state.pk, 0, ingested_as, "ingest", None, created_at, counts))
            member_rows.extend((set_pk, pk) for pk in dict.fromkeys(c.pk for c in state.claims))
            set_pk += 1
        else:
            ordinal = state.current_set.ordinal + 1
        taken = {c.id for c in state.history}
        members: list[int] = []
        created: set[int] = set()
        made = iter(ids[state.pk])
        for member in plan.members:
            if isinstance(member, int):
                members.append(member)
                continue
            claim_id = next(made)
            if claim_id in taken or claim_id in stored or claim_id in written:
                while (
                    claim_id in taken
                    or claim_id in written
                    or db.execute("SELECT 1 FROM claims WHERE id = ?", (claim_id,)).fetchone()
                ):
                    claim_id += "x"
            taken.add(claim_id)
            written.add(claim_id)
            claim_rows.append((claim_pk, claim_id, state.pk, member.text, member.start, member.end))
            for source_pk, where in member.edges.items():
                edge_rows.append((edge_pk, claim_pk, source_pk, "pending", PENDING_CODE, len(where)))
                for location in where:
                    location_rows.append((location_pk, edge_pk, *location))
                    location_pk += 1
                edge_pk += 1
            members.append(claim_pk)
            created.add(claim_pk)
            claim_pk += 1
        set_rows.append(_set_row(set_pk, state.pk, ordinal, segmentation, action, actor, created_at, _counts(plan)))
        member_rows.extend((set_pk, pk) for pk in dict.fromkeys(members))
        set_pk += 1
        # Only the flags that change are written: the current claims left out go to 0, claims of older sets
        # brought back go to 1 (the claims just created are current already).
        chosen = set(members)
        current = {c.pk for c in state.claims}
        retired.extend((pk,) for pk in sorted(current - chosen))
        restored.extend((pk,) for pk in sorted(chosen - current - created))
    db.executemany('INSERT INTO claims (pk, id, answer_pk, text, start, "end") VALUES (?, ?, ?, ?, ?, ?)', claim_rows)
    db.executemany(
        "INSERT INTO edges (pk, claim_pk, source_pk, review_state, final_code, n_locations) VALUES (?, ?, ?, ?, ?, ?)",
        edge_rows,
    )
    db.executemany(
        'INSERT INTO edge_locations (pk, edge_pk, marker, start, "end") VALUES (?, ?, ?, ?, ?)', location_rows
    )
    db.executemany(
        "INSERT INTO claim_sets (pk, answer_pk, ordinal, method, version, parameters, action, actor, created_at, "
        "counts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        set_rows,
    )
    db.executemany("INSERT INTO claim_set_members VALUES (?, ?)", member_rows)
    db.executemany("UPDATE claims SET current = 0 WHERE pk = ?", retired)
    db.executemany("UPDATE claims SET current = 1 WHERE pk = ?", restored)


def _set_row(
    pk: int,
    answer_pk: int,
    ordinal: int,
    segmentation: Segmentation,
    action: str,
    actor: str | None,
    created_at: str,
    counts: str,
) -> tuple[object, ...]:
    parameters = json.dumps([list(p) for p in segmentation.parameters])
    return (
        pk,
        answer_pk,
        ordinal,
        segmentation.method,
        segmentation.version,
        parameters,
        action,
        actor,
        created_at,
        counts,
    )
