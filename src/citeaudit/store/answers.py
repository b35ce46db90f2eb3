"""Answers as an analyst looks them up: one row per answer with what review still needs, without SQL.

An answer's claims are its current claims (the newest claim set); its edges are theirs. ``state`` sums the
edges up: ``pending`` while any edge lacks a final label (disputed ones included), ``reviewed`` when every
edge has one, ``no-edges`` when no claim cites anything. Answers the engines did not give are not here: the
import counted them apart.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from citeaudit.core.errors import InvalidValue
from citeaudit.core.scoring import LABELS, PENDING_CODE
from citeaudit.store.reading import int_columns
from citeaudit.store.sqlite import Store

__all__ = [
    "ANSWER_STATES",
    "AnswerFilters",
    "AnswerRow",
    "ClaimEdges",
    "answer_claims",
    "answer_rows",
    "collection_values",
    "collections_measured",
    "collections_with_answers",
    "date_collection",
    "link_collected",
    "partly_understood",
    "record_partly_understood",
    "record_response_id",
    "unresolved_sources",
]

ANSWER_STATES = ("pending", "reviewed", "no-edges")
"""What ``--state`` can ask for."""


@dataclass(frozen=True, slots=True)
class AnswerFilters:
    """Which answers to list; each field keeps answers equal to one of its values (empty: no filter)."""

    runs: Sequence[str] = ()
    platforms: Sequence[str] = ()
    questions: Sequence[str] = ()
    collections: Sequence[str] = ()
    states: Sequence[str] = ()


@dataclass(frozen=True, slots=True)
class AnswerRow:
    """One answer and where its review stands."""

    id: str
    platform: str
    run: str
    question: str
    collection: str | None
    """The collection it was gathered in (``collect`` or ``ingest --manifest``), if any."""
    response_id: str | None
    """The engine's own id of the response, when the payload gave one."""
    claims: int
    edges: int
    pending: int
    """Edges without a final label, disputed ones included."""
    text: str

    @property
    def state(self) -> str:
        """``pending``, ``reviewed`` or ``no-edges``."""
        if self.pending:
            return "pending"
        return "reviewed" if self.edges else "no-edges"

    def to_dict(self) -> dict[str, object]:
        """JSON form (the text is left to ``answers show``)."""
        return {
            "id": self.id,
            "platform": self.platform,
            "run": self.run,
            "question": self.question,
            "collection": self.collection,
            "response_id": self.response_id,
            "claims": self.claims,
            "edges": self.edges,
            "pending": self.pending,
            "state": self.state,
        }


def _in(column: str, values: Sequence[str], where: list[str], params: list[object]) -> None:
    if values:
        where.append(f"{column} IN ({', '.join('?' for _ in values)})")
        params.extend(values)


def answer_rows(
    store: Store, filters: AnswerFilters = AnswerFilters(), answer_id: str | None = None
) -> list[AnswerRow]:
    """Answers matching ``filters`` (or the one ``answer_id``), in import order."""
    unknown = [s for s in filters.states if s not in ANSWER_STATES]
    if unknown:
        raise InvalidValue("--state", "", f"{unknown[0]!r} is not one of {', '.join(ANSWER_STATES)}")
    db = store.connection
    has_response_id = any(row[1] == "response_id" for row in db.execute("PRAGMA table_info(answers)"))
    where: list[str] = []
    params: list[object] = []
    _in("r.id", filters.runs, where, params)
    _in("coalesce(a.platform, r.platform, '')", filters.platforms, where, params)
    _in("q.id", filters.questions, where, params)
    _in("col.name", filters.collections, where, params)
    if answer_id is not None:
        where.append("a.id = ?")
        params.append(answer_id)
    sql = f"""
        SELECT a.id, coalesce(a.platform, r.platform, ''), r.id, q.id, col.name,
               {"a.response_id" if has_response_id else "NULL"},
               (SELECT count(*) FROM claims c WHERE c.answer_pk = a.pk AND c.current = 1),
               (SELECT count(*) FROM edges e JOIN claims c ON c.pk = e.claim_pk
                 WHERE c.answer_pk = a.pk AND c.current = 1),
               (SELECT count(*) FROM edges e JOIN claims c ON c.pk = e.claim_pk
                 WHERE c.answer_pk = a.pk AND c.current = 1 AND e.final_code >= {PENDING_CODE}),
               a.text
          FROM answers a
          JOIN runs r ON r.pk = a.run_pk
          JOIN questions q ON q.pk = a.question_pk
          LEFT JOIN (SELECT t.answer_id AS answer_id, min(c.name) AS name
                       FROM collection_tasks t JOIN collections c ON c.pk = t.collection_pk
                      WHERE t.answer_id IS NOT NULL GROUP BY t.answer_id) col ON col.answer_id = a.id
         {"WHERE " + " AND ".join(where) if where else ""}
         ORDER BY a.pk
    """
    rows = [AnswerRow(*row) for row in db.execute(sql, params)]
    if filters.states:
        rows = [row for row in rows if row.state in filters.states]
    return rows


@dataclass(frozen=True, slots=True)
class ClaimEdges:
    """A current claim of an answer with its edges: ``(source URL, review state, final label or None)``."""

    id: str
    text: str
    start: int | None
    end: int | None
    fact: str | None
    edges: tuple[tuple[str, str, str | None], ...]


def answer_claims(store: Store, answer_id: str) -> list[ClaimEdges]:
    """The current claims of one answer, in text order, each with its edges."""
    db = store.connection
    claims = db.execute(
        'SELECT c.pk, c.id, c.text, c.start, c."end", f.id FROM claims c JOIN answers a ON a.pk = c.answer_pk '
        "LEFT JOIN required_facts f ON f.pk = c.fact_pk WHERE a.id = ? AND c.current = 1 "
        "ORDER BY coalesce(c.start, 0), c.pk",
        (answer_id,),
    ).fetchall()
    found = []
    for pk, cid, text, start, end, fact in claims:
        edges = tuple(
            (str(url), str(state), str(LABELS[code]) if 0 <= code < len(LABELS) else None)
            for url, state, code in db.execute(
                "SELECT coalesce(s.resolved_url, s.url, s.key), e.review_state, e.final_code FROM edges e "
                "JOIN sources s ON s.pk = e.source_pk WHERE e.claim_pk = ? ORDER BY e.pk",
                (pk,),
            )
        )
        found.append(ClaimEdges(cid, text, start, end, fact, edges))
    return found


def record_response_id(store: Store, payload_sha256: str, response_id: str) -> int:
    """Keep the engine's own response id on the answers imported from that payload (those without one yet);
    returns how many answers got it."""
    with store.transaction() as db:
        return db.execute(
            "UPDATE answers SET response_id = ? WHERE payload_sha256 = ? AND response_id IS NULL",
            (response_id, payload_sha256),
        ).rowcount


def record_partly_understood(store: Store, payload_sha256: str, answers: int) -> None:
    """Keep with the import of that payload how many of its answers the reader only partly understood (known
    once the last chunk was read, after the import's counts were written)."""
    with store.transaction() as db:
        db.execute(
            "UPDATE imports SET counts = json_set(counts, '$.partial', ?) WHERE payload_sha256 = ?",
            (answers, payload_sha256),
        )


def partly_understood(store: Store, runs: Collection[str]) -> list[str]:
    """One warning per import with answers in ``runs`` that its reader only partly understood."""
    rows = store.connection.execute(
        "SELECT i.pk, i.origin, i.format, json_extract(i.counts, '$.partial') FROM imports i "
        "WHERE json_extract(i.counts, '$.partial') > 0 ORDER BY i.pk"
    ).fetchall()
    warnings = []
    for import_pk, origin, fmt, answers in rows:
        found = {
            run
            for (run,) in store.connection.execute(
                "SELECT DISTINCT r.id FROM answers a JOIN runs r ON r.pk = a.run_pk WHERE a.import_pk = ?",
                (import_pk,),
            )
        }
        if found & set(runs):
            warnings.append(
                f"{answers} answer(s) of {origin} ({fmt}) only partly understood: the payload holds parts this "
                "reader does not know, which are not counted"
            )
    return warnings


def link_collected(store: Store, collection_pk: int, imported: Sequence[tuple[tuple[str, str, str, int], str]]) -> int:
    """Record imported files as the collection's tasks (``(question, engine, locale, repeat)`` and the payload's
    SHA-256 each), done, with the answer each gave; returns how many tasks have an answer."""
    from citeaudit.core.clock import utc_now

    now = utc_now()
    answered = 0
    with store.transaction() as db:
        for (question, engine, locale, repeat), sha in imported:
            row = db.execute("SELECT id FROM answers WHERE payload_sha256 = ? ORDER BY pk LIMIT 1", (sha,)).fetchone()
            answer = None if row is None else str(row[0])
            answered += answer is not None
            db.execute(
                "INSERT INTO collection_tasks (collection_pk, question_id, engine, locale, repeat, state, outcome, "
                "attempts, payload_sha256, answer_id, updated_at) VALUES (?, ?, ?, ?, ?, 'done', ?, 0, ?, ?, ?) "
                "ON CONFLICT (collection_pk, question_id, engine, locale, repeat) DO UPDATE SET state = 'done', "
                "outcome = excluded.outcome, payload_sha256 = excluded.payload_sha256, "
                "answer_id = excluded.answer_id, updated_at = excluded.updated_at",
                (
                    collection_pk,
                    question,
                    engine,
                    locale,
                    repeat,
                    "answered" if answer is not None else "engine_failed",
                    sha,
                    answer,
                    now,
                ),
            )
    return answered


def collection_values(store: Store) -> dict[str, dict[str, str | None]]:
    """Per answer id, its collection and the collection's date (``collection`` and ``collection_date``), for the
    answers linked to one: the dimensions an audit read from the database does not carry itself."""
    values: dict[str, dict[str, str | None]] = {"collection": {}, "collection_date": {}}
    for answer_id, name, created in store.connection.execute(
        "SELECT t.answer_id, min(k.name), min(substr(k.created_at, 1, 10)) FROM collection_tasks t "
        "JOIN collections k ON k.pk = t.collection_pk WHERE t.answer_id IS NOT NULL GROUP BY t.answer_id"
    ):
        values["collection"][str(answer_id)] = name
        values["collection_date"][str(answer_id)] = created
    return values


def collections_with_answers(store: Store) -> list[tuple[str, str, int, int]]:
    """``(name, date, protocol row id, answers)`` of every collection with answers, oldest first."""
    return [
        (str(name), str(created)[:10], int(protocol_pk), int(n))
        for name, created, protocol_pk, n in store.connection.execute(
            "SELECT k.name, k.created_at, k.protocol_pk, count(DISTINCT t.answer_id) FROM collections k "
            "JOIN collection_tasks t ON t.collection_pk = k.pk WHERE t.answer_id IS NOT NULL "
            "GROUP BY k.pk ORDER BY k.created_at, k.pk"
        )
    ]


def unresolved_sources(store: Store, *source_pks: npt.NDArray[np.int64]) -> int:
    """How many distinct sources among the arrays ``source_pks`` are still pending (their link not followed yet).

    The pending sources are read as one column and looked up in a table indexed by source pk, so the cost stays
    linear in the citations and edges (ten million at a time when a large database is scored)."""
    (pending,) = int_columns(store.connection, ["s.pk"], "sources s", "WHERE s.status = 'pending'", [])
    if not len(pending):
        return 0
    cited = np.zeros(int(pending.max()) + 1, dtype=np.bool_)
    for pks in source_pks:
        cited[pks[(pks >= 0) & (pks < len(cited))]] = True
    return int(np.count_nonzero(cited[pending]))


def date_collection(store: Store, collection_pk: int, day: str) -> str:
    """Date a collection that has no answers yet by the day its responses were collected (``YYYY-MM-DD``); returns
    the collection's day as it stands (a collection with answers keeps its own)."""
    with store.transaction() as db:
        (created, answered) = db.execute(
            "SELECT k.created_at, EXISTS (SELECT 1 FROM collection_tasks t WHERE t.collection_pk = k.pk "
            "AND t.answer_id IS NOT NULL) FROM collections k WHERE k.pk = ?",
            (collection_pk,),
        ).fetchone()
        if answered:
            return str(created)[:10]
        db.execute("UPDATE collections SET created_at = ? WHERE pk = ?", (f"{day}T00:00:00+00:00", collection_pk))
    return day


def collections_measured(store: Store) -> list[tuple[str, str, int, int, int]]:
    """``(name, date, protocol row id the collection was made under, protocol row id its answers' runs are measured
    under now, answers)`` per collection and measuring protocol, oldest first. The two protocols differ after
    ``protocol revise`` moved the collection's runs to a new version."""
    return [
        (str(name), str(created)[:10], int(made_under), int(measured_under), int(n))
        for name, created, made_under, measured_under, n in store.connection.execute(
            "SELECT k.name, k.created_at, k.protocol_pk, r.protocol_pk, count(DISTINCT t.answer_id) FROM collections k "
            "JOIN collection_tasks t ON t.collection_pk = k.pk JOIN answers a ON a.id = t.answer_id "
            "JOIN runs r ON r.pk = a.run_pk GROUP BY k.pk, r.protocol_pk ORDER BY k.created_at, k.pk, r.protocol_pk"
        )
    ]
