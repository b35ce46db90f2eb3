"""Required facts are fixed before results are seen; changing them afterwards is recorded and disclosed.

A platform run's required-fact list is locked (hash and time) when its first answers are stored. Revising
the list afterwards moves the run to a new protocol version (a new fingerprint, so a new scoring identity):
claims keep their mapping to facts whose id survives, and the change is appended to ``protocol_revisions``
with who, when, why and what. Every score of a run revised after its lock carries a warning.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass

from citeaudit.core.clock import utc_now
from citeaudit.core.errors import InvalidValue
from citeaudit.core.model import Protocol
from citeaudit.core.protocol import differing_components
from citeaudit.store.sqlite import Store

__all__ = ["Revision", "history", "protocol_to_revise", "revise_protocol", "revision_warnings"]


@dataclass(frozen=True, slots=True)
class Revision:
    """What a revision did."""

    from_protocol: str
    to_protocol: str
    runs: tuple[str, ...]
    """Runs moved to the revised protocol."""
    locked_runs: int
    """Of those, runs whose facts were already locked (their scores now carry a warning)."""
    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]
    claims_unmapped: int
    """Claims that were mapped to a removed fact and are now mapped to none."""
    components: tuple[str, ...]
    """Fingerprint components that differ."""


def _facts(protocol: Protocol) -> dict[str, tuple[str, str, str | None]]:
    return {
        f.id: (q.id, f.text, None if f.severity is None else str(f.severity))
        for q in protocol.questions
        for f in q.required_facts
    }


def _revision_components(old: Protocol, new: Protocol, by: str) -> set[str]:
    """The fingerprint components a revision changes; refuses one that keeps the version, changes the id,
    changes nothing that counts, or names nobody."""
    where = f"protocol {new.id}@{new.version}"
    if new.id != old.id:
        raise InvalidValue(where, "id", f"a revision keeps the protocol id {old.id!r} (got {new.id!r})")
    if new.version == old.version:
        raise InvalidValue(where, "version", f"give the revised protocol a new version (still {old.version!r})")
    components = set(differing_components(old, new))
    if not components:
        raise InvalidValue(where, "", f"nothing that changes a score differs from {old.id}@{old.version}")
    if not by.strip():
        raise InvalidValue("--by", "", "name who makes the change")
    return components


def revise_protocol(store: Store, old_pk: int, new: Protocol, *, by: str, reason: str | None) -> Revision:
    """Move every run of the protocol ``old_pk`` to ``new`` (same id, new version) and record the change."""
    old = store.protocol(old_pk)
    where = f"protocol {new.id}@{new.version}"
    components = _revision_components(old, new, by)
    before, after = _facts(old), _facts(new)
    added = tuple(sorted(after.keys() - before.keys()))
    removed = tuple(sorted(before.keys() - after.keys()))
    changed = tuple(sorted(k for k in before.keys() & after.keys() if before[k] != after[k]))
    now = utc_now()
    with store.transaction() as db:
        runs = db.execute("SELECT pk, id FROM runs WHERE protocol_pk = ? ORDER BY pk", (old_pk,)).fetchall()
        if not runs:
            raise InvalidValue(where, "", f"{old.id}@{old.version} has no runs to revise")
        new_questions = {q.id for q in new.questions}
        missing = db.execute(
            "SELECT DISTINCT q.id FROM answers a JOIN runs r ON r.pk = a.run_pk "
            "JOIN questions q ON q.pk = a.question_pk WHERE r.protocol_pk = ? ORDER BY q.id",
            (old_pk,),
        ).fetchall()
        lost = [qid for (qid,) in missing if qid not in new_questions]
        if lost:
            raise InvalidValue(where, "questions", f"answered questions missing from the revision: {lost}")
        new_pk = store._protocol_pk(db, new)
        if new_pk == old_pk:  # pragma: no cover - excluded by the differing-components check
            raise InvalidValue(where, "", "the revision has the same fingerprint")
        run_pks = [pk for pk, _ in runs]
        marks = ", ".join("?" * len(run_pks))
        db.execute(
            f"UPDATE answers SET question_pk = (SELECT nq.pk FROM questions oq JOIN questions nq "
            f"ON nq.id = oq.id AND nq.protocol_pk = ? WHERE oq.pk = answers.question_pk) WHERE run_pk IN ({marks})",
            (new_pk, *run_pks),
        )
        claims = f"SELECT c.pk FROM claims c JOIN answers a ON a.pk = c.answer_pk WHERE a.run_pk IN ({marks})"
        (unmapped,) = db.execute(
            f"SELECT count(*) FROM claims c JOIN required_facts f ON f.pk = c.fact_pk WHERE c.pk IN ({claims}) "
            f"AND f.id NOT IN (SELECT id FROM required_facts WHERE protocol_pk = ?)",
            (*run_pks, new_pk),
        ).fetchone()
        db.execute(
            f"UPDATE claims SET fact_pk = (SELECT nf.pk FROM required_facts of JOIN required_facts nf "
            f"ON nf.id = of.id AND nf.protocol_pk = ? WHERE of.pk = claims.fact_pk) "
            f"WHERE fact_pk IS NOT NULL AND pk IN ({claims})",
            (new_pk, *run_pks),
        )
        db.execute(f"UPDATE runs SET protocol_pk = ? WHERE pk IN ({marks})", (new_pk, *run_pks))
        db.execute(
            "INSERT OR IGNORE INTO protocol_sources SELECT ?, source_pk FROM protocol_sources WHERE protocol_pk = ?",
            (new_pk, old_pk),
        )
        changes = json.dumps(
            {
                "components": sorted(components),
                "facts_added": [{"id": k, "text": after[k][1]} for k in added],
                "facts_removed": [{"id": k, "text": before[k][1]} for k in removed],
                "facts_changed": [
                    {"id": k, "before": before[k][1], "after": after[k][1], "severity": [before[k][2], after[k][2]]}
                    for k in changed
                ],
                "claims_unmapped": unmapped,
            },
            ensure_ascii=False,
            sort_keys=True,
        )
        db.executemany(
            "INSERT INTO protocol_revisions (run_pk, from_protocol_pk, to_protocol_pk, changed_by, changed_at, "
            "reason, changes) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(pk, old_pk, new_pk, by, now, reason, changes) for pk in run_pks],
        )
        (locked,) = db.execute(f"SELECT count(*) FROM fact_locks WHERE run_pk IN ({marks})", run_pks).fetchone()
        # The same record in the audit log every review action goes to (who, when, what, before and after).
        db.execute(
            "INSERT INTO audit_log (at, actor, action, target, before, after) VALUES (?, ?, ?, ?, ?, ?)",
            (
                now,
                by,
                "protocol.revise",
                f"protocol {old.id}",
                json.dumps({"protocol": f"{old.id}@{old.version}", "runs": [r for _, r in runs]}),
                json.dumps({"protocol": f"{new.id}@{new.version}", "reason": reason, "changes": json.loads(changes)}),
            ),
        )
    return Revision(
        from_protocol=f"{old.id}@{old.version}",
        to_protocol=f"{new.id}@{new.version}",
        runs=tuple(run_id for _, run_id in runs),
        locked_runs=int(locked),
        added=added,
        removed=removed,
        changed=changed,
        claims_unmapped=int(unmapped),
        components=tuple(sorted(components)),
    )


def revision_warnings(store: Store, protocol_pk: int, runs: Collection[str]) -> list[str]:
    """One warning per revision made after one of ``runs`` (the runs with answers in scope) was locked."""
    rows = store.connection.execute(
        "SELECT r.id, l.locked_at, l.facts_hash, v.changed_at, v.changed_by, v.reason, v.changes, "
        "fp.id || '@' || fp.version, tp.id || '@' || tp.version "
        "FROM protocol_revisions v JOIN runs r ON r.pk = v.run_pk JOIN fact_locks l ON l.run_pk = v.run_pk "
        "JOIN protocols fp ON fp.pk = v.from_protocol_pk JOIN protocols tp ON tp.pk = v.to_protocol_pk "
        "WHERE r.protocol_pk = ? AND v.changed_at >= l.locked_at ORDER BY v.pk",
        (protocol_pk,),
    ).fetchall()
    warnings = []
    for run, locked_at, facts_hash, changed_at, by, reason, changes, source, target in rows:
        if run not in runs:
            continue
        detail = json.loads(changes)
        parts = [
            f"{len(detail['facts_added'])} added",
            f"{len(detail['facts_removed'])} removed",
            f"{len(detail['facts_changed'])} changed",
        ]
        warnings.append(
            f"required facts changed after answers were ingested: run {run} was measured against the list locked "
            f"at {locked_at} ({facts_hash[:19]}…), revised from {source} to {target} at {changed_at} by {by} "
            f"({', '.join(parts)}{'; ' + reason if reason else ''}); these results are not pre-registered"
        )
    return warnings


def protocol_to_revise(store: Store, protocol_id: str, selector: str | None) -> int:
    """The protocol whose runs a revision moves: ``selector`` if given, else the one with runs and this id."""
    if selector:
        return store.choose_protocol(selector)
    found = store.connection.execute(
        "SELECT DISTINCT p.pk, p.version FROM protocols p JOIN runs r ON r.protocol_pk = p.pk WHERE p.id = ? "
        "ORDER BY p.pk",
        (protocol_id,),
    ).fetchall()
    if len(found) != 1:
        versions = ", ".join(f"{protocol_id}@{v}" for _, v in found) or "none"
        raise InvalidValue(
            "--from",
            "",
            f"{len(found)} protocols with id {protocol_id!r} have runs ({versions}); name one with --from ID@VERSION",
        )
    return int(found[0][0])


def history(store: Store) -> list[dict[str, object]]:
    """Every run's fact lock and every revision, oldest first."""
    events: list[dict[str, object]] = []
    for run, protocol, facts_hash, locked_at in store.connection.execute(
        "SELECT r.id, p.id || '@' || p.version, l.facts_hash, l.locked_at FROM fact_locks l "
        "JOIN runs r ON r.pk = l.run_pk JOIN protocols p ON p.pk = l.protocol_pk ORDER BY l.locked_at, l.pk"
    ):
        events.append({"at": locked_at, "event": "locked", "run": run, "protocol": protocol, "facts": facts_hash})
    for run, source, target, by, at, reason, changes in store.connection.execute(
        "SELECT r.id, fp.id || '@' || fp.version, tp.id || '@' || tp.version, v.changed_by, v.changed_at, v.reason, "
        "v.changes FROM protocol_revisions v JOIN runs r ON r.pk = v.run_pk JOIN protocols fp ON "
        "fp.pk = v.from_protocol_pk JOIN protocols tp ON tp.pk = v.to_protocol_pk ORDER BY v.pk"
    ):
        events.append(
            {
                "at": at,
                "event": "revised",
                "run": run,
                "protocol": f"{source} -> {target}",
                "by": by,
                "reason": reason,
                "changes": json.loads(changes),
            }
        )
    return sorted(events, key=lambda e: str(e["at"]))
