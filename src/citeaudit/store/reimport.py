"""The same payload imported again with other metadata: what would change, and moving its answers.

A payload's bytes name an import (by their sha256). The metadata a command gives an engine payload — the question
its answers answer, their platform, their run — is not in those bytes, so the same bytes can come again with a
corrected question. Identical metadata is a no-op; different metadata is refused unless the caller asks to
replace it, and then the import's answers move (same rows, so their claims, edges and judgements stay with
them), with an audit-log row saying what moved, from what to what and who ran it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from citeaudit.core.clock import utc_now
from citeaudit.core.errors import InvalidValue, UnknownReference

__all__ = [
    "FIELDS",
    "CollectionTask",
    "MetadataChange",
    "collection_day",
    "describe",
    "metadata_changes",
    "move_answers",
    "other_collections",
    "redate_collection",
    "release_tasks",
    "stale_tasks",
]

FIELDS = ("question", "platform", "run")
"""The metadata of an import's answers that a command may give and a re-import may correct."""


@dataclass(frozen=True, slots=True)
class MetadataChange:
    """One field of one answer that the new metadata changes."""

    answer_pk: int
    """The answer's row."""
    answer_id: str
    """Its id."""
    field: str
    """One of :data:`FIELDS`."""
    stored: str | None
    """What the database holds."""
    wanted: str
    """What the new import says."""


def metadata_changes(db: sqlite3.Connection, import_pk: int, wanted: Mapping[str, str]) -> list[MetadataChange]:
    """What ``wanted`` (field → value, only the fields the command gave) changes in the answers of import
    ``import_pk``; empty when nothing does."""
    unknown = sorted(set(wanted) - set(FIELDS))
    if unknown:
        raise InvalidValue("import", "metadata", f"unknown field {unknown[0]!r}; fields: {', '.join(FIELDS)}")
    changes: list[MetadataChange] = []
    for pk, answer_id, question, platform, run in db.execute(
        "SELECT a.pk, a.id, q.id, a.platform, r.id FROM answers a JOIN questions q ON q.pk = a.question_pk "
        "JOIN runs r ON r.pk = a.run_pk WHERE a.import_pk = ? ORDER BY a.pk",
        (import_pk,),
    ):
        stored = {"question": question, "platform": platform, "run": run}
        changes.extend(
            MetadataChange(int(pk), str(answer_id), field, stored[field], value)
            for field, value in wanted.items()
            if stored[field] != value
        )
    return changes


def describe(changes: Sequence[MetadataChange]) -> str:
    """``question 'q2' → 'q1' (2 answers); platform …``: what differs, field by field."""
    counted: dict[tuple[str, str | None, str], int] = {}
    for change in changes:
        key = (change.field, change.stored, change.wanted)
        counted[key] = counted.get(key, 0) + 1
    return "; ".join(
        f"{field} {stored!r} → {wanted!r} ({n} answer{'s' if n != 1 else ''})"
        for (field, stored, wanted), n in sorted(counted.items(), key=lambda item: (item[0][0], str(item[0][1])))
    )


def move_answers(
    db: sqlite3.Connection, changes: Sequence[MetadataChange], origin: str, sha256: str, actor: str
) -> int:
    """Apply ``changes`` to the answers' rows inside the caller's transaction and append one audit-log row;
    returns how many answers moved. A question or run the answers' protocol does not have is an
    :class:`UnknownReference`; a claim confirmed as stating a required fact of the question it leaves is an
    :class:`InvalidValue` (the mapping would point at a fact the new question does not require)."""
    moved: dict[int, dict[str, str]] = {}
    for change in changes:
        moved.setdefault(change.answer_pk, {})[change.field] = change.wanted
    before: dict[str, dict[str, str | None]] = {}
    after: dict[str, dict[str, str]] = {}
    for change in changes:
        before.setdefault(change.answer_id, {})[change.field] = change.stored
        after.setdefault(change.answer_id, {})[change.field] = change.wanted
    for answer_pk, fields in moved.items():
        protocol_pk, run_pk, question_pk, answer_id = db.execute(
            "SELECT r.protocol_pk, a.run_pk, a.question_pk, a.id FROM answers a JOIN runs r ON r.pk = a.run_pk "
            "WHERE a.pk = ?",
            (answer_pk,),
        ).fetchone()
        if "question" in fields:
            question_pk = _question(db, protocol_pk, fields["question"], origin)
            _no_mapped_facts(db, answer_pk, answer_id, origin)
        if "run" in fields:
            run_pk = _run(db, protocol_pk, run_pk, fields["run"], origin)
        db.execute("UPDATE answers SET question_pk = ?, run_pk = ? WHERE pk = ?", (question_pk, run_pk, answer_pk))
        if "platform" in fields:
            db.execute("UPDATE answers SET platform = ? WHERE pk = ?", (fields["platform"], answer_pk))
    db.execute(
        "INSERT INTO audit_log (at, actor, action, target, before, after) VALUES (?, ?, ?, ?, ?, ?)",
        (
            utc_now("microseconds"),
            actor,
            "answers.move",
            f"import:{sha256}",
            json.dumps(before, sort_keys=True, ensure_ascii=False),
            json.dumps({"file": origin, "answers": after}, sort_keys=True, ensure_ascii=False),
        ),
    )
    return len(moved)


def _question(db: sqlite3.Connection, protocol_pk: int, question: str, origin: str) -> int:
    row = db.execute("SELECT pk FROM questions WHERE protocol_pk = ? AND id = ?", (protocol_pk, question)).fetchone()
    if row is None:
        raise UnknownReference(origin, "--question-id", f"no question {question!r} in the answers' protocol")
    return int(row[0])


def _no_mapped_facts(db: sqlite3.Connection, answer_pk: int, answer_id: str, origin: str) -> None:
    mapped = db.execute(
        "SELECT c.id FROM claims c WHERE c.answer_pk = ? AND c.fact_pk IS NOT NULL ORDER BY c.pk LIMIT 1",
        (answer_pk,),
    ).fetchone()
    if mapped is not None:
        raise InvalidValue(
            origin,
            f"answer {answer_id!r}",
            f"claim {mapped[0]!r} is confirmed as stating a required fact of the question the answer would leave; "
            "its coverage would point at a fact the new question does not require",
        )


def _run(db: sqlite3.Connection, protocol_pk: int, run_pk: int, run: str, origin: str) -> int:
    found = db.execute("SELECT pk, protocol_pk FROM runs WHERE id = ?", (run,)).fetchone()
    if found is not None:
        if int(found[1]) != protocol_pk:
            raise InvalidValue(origin, "--run", f"run {run!r} is measured under another protocol")
        return int(found[0])
    # a new run with the settings of the one the answer leaves (kind, platform, model, date, locale, sample)
    pk = db.execute(
        "INSERT INTO runs (protocol_pk, id, kind, platform, model, collected_at, locale, sample) "
        "SELECT protocol_pk, ?, kind, platform, model, collected_at, locale, sample FROM runs WHERE pk = ?",
        (run, run_pk),
    ).lastrowid
    assert pk is not None
    return int(pk)


CollectionTask = tuple[str, str, str, str, int]
"""``(collection name, question, engine, locale, repeat)`` of a collection's task."""


def stale_tasks(
    db: sqlite3.Connection, sha256: str, collection_pk: int, task: tuple[str, str, str, int]
) -> list[tuple[int, CollectionTask]]:
    """The collection tasks that name the payload ``sha256`` as their answer other than ``task`` of collection
    ``collection_pk`` (``(question, engine, locale, repeat)``): what an earlier import of the same file with
    another manifest row or into another collection left, with their row ids."""
    question, engine, locale, repeat = task
    return [
        (int(pk), (str(name), str(q), str(e), str(loc), int(r)))
        for pk, name, q, e, loc, r in db.execute(
            "SELECT t.pk, k.name, t.question_id, t.engine, t.locale, t.repeat FROM collection_tasks t "
            "JOIN collections k ON k.pk = t.collection_pk WHERE t.payload_sha256 = ? AND NOT (t.collection_pk = ? "
            "AND t.question_id = ? AND t.engine = ? AND t.locale = ? AND t.repeat = ?) ORDER BY t.pk",
            (sha256, collection_pk, question, engine, locale, repeat),
        )
    ]


def release_tasks(
    db: sqlite3.Connection, tasks: Sequence[tuple[int, CollectionTask]], origin: str, sha256: str, actor: str
) -> None:
    """Free the tasks an earlier import of the file answered by mistake (pending again, no answer), inside the
    caller's transaction, with an audit-log row naming them."""
    at = utc_now("microseconds")
    db.executemany(
        "UPDATE collection_tasks SET state = 'pending', outcome = NULL, payload_sha256 = NULL, answer_id = NULL, "
        "updated_at = ? WHERE pk = ?",
        [(at, pk) for pk, _ in tasks],
    )
    db.execute(
        "INSERT INTO audit_log (at, actor, action, target, before, after) VALUES (?, ?, ?, ?, ?, ?)",
        (
            at,
            actor,
            "collection_tasks.release",
            f"import:{sha256}",
            json.dumps([list(task) for _, task in tasks], ensure_ascii=False),
            json.dumps({"file": origin, "state": "pending"}, sort_keys=True),
        ),
    )


def other_collections(db: sqlite3.Connection, sha256: str, name: str) -> list[str]:
    """The collections other than ``name`` in which the payload ``sha256`` answers a task: where an earlier
    import of the same file put it."""
    return [
        str(found)
        for (found,) in db.execute(
            "SELECT DISTINCT k.name FROM collection_tasks t JOIN collections k ON k.pk = t.collection_pk "
            "WHERE t.payload_sha256 = ? AND k.name != ? ORDER BY k.name",
            (sha256, name),
        )
    ]


def collection_day(db: sqlite3.Connection, collection_pk: int) -> str:
    """The day (``YYYY-MM-DD``) collection ``collection_pk`` is dated."""
    (day,) = db.execute("SELECT substr(created_at, 1, 10) FROM collections WHERE pk = ?", (collection_pk,)).fetchone()
    return str(day)


def redate_collection(db: sqlite3.Connection, collection_pk: int, day: str, origin: str, actor: str) -> tuple[str, int]:
    """Date collection ``collection_pk`` by ``day`` (``YYYY-MM-DD``) although it has answers, inside the
    caller's transaction, with an audit-log row; returns the day it had and how many answers it dates (the
    collection's date is every one of its answers')."""
    name, created = db.execute("SELECT name, created_at FROM collections WHERE pk = ?", (collection_pk,)).fetchone()
    (answers,) = db.execute(
        "SELECT count(DISTINCT answer_id) FROM collection_tasks WHERE collection_pk = ? AND answer_id IS NOT NULL",
        (collection_pk,),
    ).fetchone()
    db.execute("UPDATE collections SET created_at = ? WHERE pk = ?", (f"{day}T00:00:00+00:00", collection_pk))
    db.execute(
        "INSERT INTO audit_log (at, actor, action, target, before, after) VALUES (?, ?, ?, ?, ?, ?)",
        (
            utc_now("microseconds"),
            actor,
            "collections.redate",
            f"collection:{name}",
            json.dumps({"date": str(created)[:10], "answers": int(answers)}, sort_keys=True),
            json.dumps({"file": origin, "date": day}, sort_keys=True, ensure_ascii=False),
        ),
    )
    return str(created)[:10], int(answers)
