"""``citeaudit segment`` writes exactly the rows the straightforward path writes, on real answers.

The service commits answers in batches and writes each answer's new claims, edges and locations with a few
``executemany`` calls, numbering the rows itself. The reference path here is the plain one: one transaction per
answer, one ``INSERT`` per claim, edge and location, the row ids left to SQLite, the claim id checked with one
``SELECT`` each. Both run on copies of one database built by ingest of real answers (ExpertQA, the recorded
engine payloads) through rules-v2, then rules-v1 (claims retired, ingested claims kept), then rules-v2 again
(claims of an older set brought back, new ids that collide with taken ones); every row of the claim tables
must be equal (``created_at`` apart); ``tests/test_segment_worker.py`` runs the same comparison with the worker.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import pytest

from citeaudit.core.model import Segmentation
from citeaudit.core.scoring import PENDING_CODE
from citeaudit.ingest import Attachment, read_file, read_files, store_prepared
from citeaudit.interchange import load_protocol
from citeaudit.segment.claimsets import plan_segmentation
from citeaudit.segment.resegment import _segment_with, resegment, rules_for
from citeaudit.store import Store
from citeaudit.store.claimsets import (
    AnswerClaims,
    NewClaim,
    SetPlan,
    answer_claims,
    answer_claims_many,
    segment_inputs,
)
from conftest import SHARED

EXPERTQA = SHARED / "data" / "expertqa"
ENGINES = SHARED / "data" / "engine-payloads"
PROTOCOL = Path(__file__).parent / "fixtures" / "protocol.yaml"
TABLES = {
    "claims": 'SELECT pk, id, answer_pk, text, start, "end", fact_pk, severity, entity, current FROM claims',
    "claim_sets": "SELECT pk, answer_pk, ordinal, method, version, parameters, action, actor, counts FROM claim_sets",
    "claim_set_members": "SELECT set_pk, claim_pk FROM claim_set_members",
    "edges": "SELECT pk, claim_pk, source_pk, review_state, final_code, n_locations FROM edges",
    "edge_locations": 'SELECT pk, edge_pk, marker, start, "end" FROM edge_locations',
}


def _insert_set(  # the reference path's set row: one INSERT, its row id left to SQLite
    db: sqlite3.Connection,
    answer_pk: int,
    ordinal: int,
    segmentation: Segmentation,
    action: str,
    actor: str | None,
    created_at: str,
    counts: dict[str, object],
    members: Sequence[int],
) -> int:
    pk = db.execute(
        "INSERT INTO claim_sets (answer_pk, ordinal, method, version, parameters, action, actor, created_at, counts) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            answer_pk,
            ordinal,
            segmentation.method,
            segmentation.version,
            json.dumps([list(p) for p in segmentation.parameters]),
            action,
            actor,
            created_at,
            json.dumps(counts, sort_keys=True),
        ),
    ).lastrowid
    assert pk is not None
    db.executemany("INSERT INTO claim_set_members VALUES (?, ?)", [(pk, m) for m in dict.fromkeys(members)])
    return pk


def _data() -> None:
    if not EXPERTQA.is_dir() or not ENGINES.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"the shared data is missing at {SHARED / 'data'}: CI must have ../shared/data")
        pytest.skip(f"ExpertQA or engine payloads not found under {SHARED / 'data'} (see SOURCES.md)")


def _reference_write(
    db: sqlite3.Connection, state: AnswerClaims, plan: SetPlan, segmentation: Segmentation, ingested_as: Segmentation
) -> None:
    """The plain write: row by row, row ids from SQLite."""
    ordinal = 1
    if state.current_set is None:
        counts0: dict[str, object] = {"claims": len(state.claims)}
        _insert_set(db, state.pk, 0, ingested_as, "ingest", None, "t", counts0, [c.pk for c in state.claims])
    else:
        ordinal = state.current_set.ordinal + 1
    taken = {c.id for c in state.history}
    members: list[int] = []
    number = 0
    for member in plan.members:
        if isinstance(member, int):
            members.append(member)
            continue
        number += 1
        members.append(_reference_claim(db, state, member, f"{state.id}-s{ordinal}c{number}", taken))
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
    _insert_set(db, state.pk, ordinal, segmentation, "segment", None, "t", counts, members)
    db.execute("UPDATE claims SET current = 0 WHERE answer_pk = ? AND current = 1", (state.pk,))
    for pk in dict.fromkeys(members):
        db.execute("UPDATE claims SET current = 1 WHERE pk = ?", (pk,))


def _reference_claim(
    db: sqlite3.Connection, state: AnswerClaims, claim: NewClaim, claim_id: str, taken: set[str]
) -> int:
    while claim_id in taken or db.execute("SELECT 1 FROM claims WHERE id = ?", (claim_id,)).fetchone():
        claim_id += "x"
    taken.add(claim_id)
    pk = db.execute(
        'INSERT INTO claims (id, answer_pk, text, start, "end") VALUES (?, ?, ?, ?, ?)',
        (claim_id, state.pk, claim.text, claim.start, claim.end),
    ).lastrowid
    assert pk is not None
    for source_pk, locations in claim.edges.items():
        edge_pk = db.execute(
            "INSERT INTO edges (claim_pk, source_pk, review_state, final_code, n_locations) VALUES (?, ?, ?, ?, ?)",
            (pk, source_pk, "pending", PENDING_CODE, len(locations)),
        ).lastrowid
        for marker, start, end in locations:
            db.execute(
                'INSERT INTO edge_locations (edge_pk, marker, start, "end") VALUES (?, ?, ?, ?)',
                (edge_pk, marker, start, end),
            )
    return pk


def _reference_resegment(path: Path, method: str) -> None:
    """One transaction per answer; answers already segmented this way are left alone."""
    rules = rules_for(method)
    segmentation = rules.segmentation()
    with Store(path) as store:
        for answer_pk, _, protocol_pk in store.claims.answers():
            with store.transaction() as db:
                state = answer_claims(db, answer_pk)
                ingested_as = store.protocol(protocol_pk).segmentation
                current = state.current_set.segmentation if state.current_set else ingested_as
                if state.current_set is not None and current == segmentation:
                    continue
                segmented = _segment_with(state.text, state.regions, rules)
                plan = plan_segmentation(segmented, state.claims, state.edges, state.history)
                _reference_write(db, state, plan, segmentation, ingested_as)


def _rows(path: Path) -> dict[str, list[tuple[object, ...]]]:
    with sqlite3.connect(path) as db:
        return {name: sorted(db.execute(sql).fetchall(), key=repr) for name, sql in TABLES.items()}


def _ingest(path: Path, files: Sequence[Path]) -> None:
    protocol = load_protocol(PROTOCOL)
    attachment = Attachment(protocol, question_id=protocol.questions[0].id)
    with Store(path) as store:
        for item in read_files(list(files)):
            store_prepared(store, item)
        for payload in sorted(ENGINES.rglob("*.json")):
            store_prepared(store, read_file(payload, None, attachment))


def test_segment_writes_the_rows_the_plain_path_writes(tmp_path: Path) -> None:
    compare_with_plain_path(tmp_path, worker=False)


def compare_with_plain_path(tmp_path: Path, worker: bool) -> None:
    """``resegment`` (with or without its worker) and the plain path through rules-v2, rules-v1, rules-v2 on real
    answers: every row of the claim tables equal after each."""
    _data()
    built = tmp_path / "built.db"
    _ingest(built, sorted(EXPERTQA.glob("*.jsonl"))[:2])
    with sqlite3.connect(built) as db:
        # a claim of another answer already holds the id the first answer's second new claim would get
        (first, first_id), (second, _) = db.execute("SELECT pk, id FROM answers ORDER BY pk LIMIT 2").fetchall()
        db.execute("INSERT INTO claims (id, answer_pk, text) VALUES (?, ?, ?)", (f"{first_id}-s1c2", second, "x"))
        assert first != second
    fast, plain = tmp_path / "fast.db", tmp_path / "plain.db"
    shutil.copy(built, fast)
    shutil.copy(built, plain)
    for method in ("rules-v2", "rules-v1", "rules-v2"):
        with Store(fast) as store:
            resegment(store, method, worker=worker)
        _reference_resegment(plain, method)
        fast_rows, plain_rows = _rows(fast), _rows(plain)
        assert fast_rows["claims"], "nothing was segmented"
        for name in TABLES:
            assert fast_rows[name] == plain_rows[name], f"{name} differ after {method}"
        _same_reading(fast)


def _same_reading(path: Path) -> None:
    """The answers as read in groups are the answers as read one by one."""
    with Store(path) as store, store.transaction() as db:
        pks = [pk for (pk,) in db.execute("SELECT pk FROM answers ORDER BY pk")]
        protocols = dict(db.execute("SELECT a.pk, r.protocol_pk FROM answers a JOIN runs r ON r.pk = a.run_pk"))
        alone = [answer_claims(db, pk) for pk in pks]
        assert answer_claims_many(db, pks) == [(state, protocols[pk]) for state, pk in zip(alone, pks, strict=True)]
        # what the worker is handed: the same text and spans, and the newest set's segmentation
        expected = [(s.pk, s.text, s.regions, s.current_set and s.current_set.segmentation) for s in alone]
        assert segment_inputs(db, pks) == expected


def test_an_answer_that_fails_keeps_the_answers_finished_before_it(tmp_path: Path) -> None:
    _data()
    path = tmp_path / "failing.db"
    _ingest(path, sorted(EXPERTQA.glob("*.jsonl"))[:1])
    rules = rules_for("rules-v2")
    done: list[int] = []
    planned: list[int] = []

    def planner(state: AnswerClaims, current: Segmentation) -> tuple[SetPlan, Segmentation]:
        if len(planned) == 3:
            raise RuntimeError("the fourth answer fails")
        planned.append(state.pk)
        segmented = _segment_with(state.text, state.regions, rules)
        return plan_segmentation(segmented, state.claims, state.edges, state.history), rules.segmentation()

    with Store(path) as store:
        answers = [pk for pk, _, _ in store.claims.answers()]
        with pytest.raises(RuntimeError, match="fourth"):
            store.claims.change_each(answers, planner, "segment", None, lambda plan: done.append(1), batch_seconds=60)
    with sqlite3.connect(path) as db:
        segmented = [pk for (pk,) in db.execute("SELECT DISTINCT answer_pk FROM claim_sets ORDER BY answer_pk")]
    assert segmented == answers[:3]
    assert len(done) == 3


def test_an_answer_given_twice_is_read_again_after_its_first_set_is_written(tmp_path: Path) -> None:
    _data()
    path = tmp_path / "twice.db"
    _ingest(path, sorted(EXPERTQA.glob("*.jsonl"))[:1])
    rules = rules_for("rules-v2")

    def planner(state: AnswerClaims, current: Segmentation) -> tuple[SetPlan, Segmentation]:
        segmented = _segment_with(state.text, state.regions, rules)
        return plan_segmentation(segmented, state.claims, state.edges, state.history), rules.segmentation()

    with Store(path) as store:
        first, second = [pk for pk, _, _ in store.claims.answers()][:2]
        store.claims.change_each([first, second, first], planner, "segment", None, lambda plan: None)
    with sqlite3.connect(path) as db:
        ordinals = db.execute("SELECT answer_pk, ordinal FROM claim_sets ORDER BY pk").fetchall()
    # the first answer: set 0 (as ingested), then 1 and 2; the second: 0 and 1
    assert ordinals == [(first, 0), (first, 1), (second, 0), (second, 1), (first, 2)]
