"""The review store without the web layer: queue order and keyset pages, filters, policies, passages and the
login limiter, on real SQLite files."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import answer, claim, document
from citeaudit.core.clock import ManualClock
from citeaudit.core.model import Judgement, Label, Origin, ReviewState, Stage, review_outcome
from citeaudit.review.auth import LoginLimiter
from citeaudit.review.blind import can_adjudicate, visible_judgements
from citeaudit.review.queue import decode_cursor, encode_cursor, start_key
from citeaudit.store import review_queue
from citeaudit.store.review import KEY_SPACE, QueueFilter, Reviewer, ReviewStore, StoredJudgement
from review_support import make_db

N_EDGES = 60


def many_edges_document() -> dict[str, object]:
    """60 edges: answers a0..a5 (platforms p0/p1 alternating, runs r0/r1/r2 by answer % 3, question q1),
    each with 10 claims of one edge each."""
    answers = [answer(f"a{i}", platform=f"p{i % 2}", run=f"r{i % 3}") for i in range(6)]
    claims = [claim(f"a{i}c{j}", f"a{i}") for i in range(6) for j in range(10)]
    edges = [{"claim_id": c["id"], "url": f"https://s{n}.example/"} for n, c in enumerate(claims)]
    return document(answers, claims, edges)


@pytest.fixture(scope="module")
def queue_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_db(tmp_path_factory.mktemp("queue") / "queue.db", many_edges_document())


def reviewer(pk: int, name: str = "ann", role: str = "reviewer") -> Reviewer:
    return Reviewer(pk, name, role, "unused")


def walk(
    store: ReviewStore, who: Reviewer, page: int, filters: QueueFilter = QueueFilter(), needs: str = "review"
) -> list[int]:
    """Every edge of the queue, page by page through the keyset cursor (as the queue page does)."""
    seen: list[int] = []
    after = None
    start = start_key(who.pk)
    while True:
        rows = store.queue.page(who, needs, filters, start, after, page)
        seen.extend(row.edge_pk for row in rows)
        if len(rows) < page:
            return seen
        last = rows[-1]
        after = decode_cursor(encode_cursor(0 if last.key >= start else 1, last.key))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(reviewer_pk=st.integers(1, 10_000), page=st.integers(1, 70))
def test_keyset_pages_visit_every_edge_once(queue_db: Path, reviewer_pk: int, page: int) -> None:
    with ReviewStore(queue_db) as store:
        seen = walk(store, reviewer(reviewer_pk), page)
    assert sorted(seen) == list(range(1, N_EDGES + 1))


def test_order_is_stable_per_reviewer_and_differs_between_reviewers(queue_db: Path) -> None:
    with ReviewStore(queue_db) as store:
        first = walk(store, reviewer(1), 7)
        again = walk(store, reviewer(1), 25)
        other = walk(store, reviewer(2), 7)
    assert first == again
    assert first != other
    assert first != sorted(first)  # not the import order
    assert start_key(1) != start_key(2)


@pytest.mark.parametrize("narrow", [0.0, 1.01], ids=["edges-first", "answers-first"])
def test_filters(queue_db: Path, narrow: float, monkeypatch: pytest.MonkeyPatch) -> None:
    # the same rows whichever end the query starts from
    monkeypatch.setattr(review_queue, "_NARROW_FILTER", narrow)
    with ReviewStore(queue_db) as store:
        who = reviewer(3)
        # answers a1, a3, a5 are on p1: 3 answers x 10 edges
        assert len(walk(store, who, 8, QueueFilter(platform="p1"))) == 30
        # run r0 holds a0 and a3: 20 edges
        assert len(walk(store, who, 8, QueueFilter(run="r0"))) == 20
        # run r2 on p1 is a5 alone: 10 edges
        assert len(walk(store, who, 8, QueueFilter(run="r2", platform="p1"))) == 10
        assert len(walk(store, who, 8, QueueFilter(question="q1"))) == 60
        assert walk(store, who, 8, QueueFilter(question="q9")) == []
        assert len(walk(store, who, 8, QueueFilter(state=ReviewState.PENDING))) == 60
        assert walk(store, who, 8, QueueFilter(state=ReviewState.DISPUTED)) == []
        assert walk(store, who, 8, QueueFilter(run="r9")) == []
        assert walk(store, who, 8, QueueFilter(run="r1", platform="p9")) == []
        # r1 is a1 (p1) and a4 (p0): its p1 part is a1's 10 edges, pks 11..20
        assert sorted(walk(store, who, 8, QueueFilter(run="r1", platform="p1"))) == list(range(11, 21))


@pytest.mark.parametrize(
    ("needs", "state", "index"),
    [
        ("review", None, "edges_queue"),
        ("review", ReviewState.PENDING, "edges_queue"),
        ("adjudicate", None, "edges_queue"),
        ("adjudicate", ReviewState.DISPUTED, "edges_queue"),
        ("browse", None, "edges_queue_keys"),
        ("browse", ReviewState.PENDING, "edges_queue_keys"),
        ("browse", ReviewState.LABELLED, "edges_queue_keys"),
    ],
)
def test_every_walk_reads_a_queue_index_in_key_order(
    queue_db: Path, needs: str, state: ReviewState | None, index: str
) -> None:
    # a page is a range of one index in key order: never a sort of every edge the walk could list
    with ReviewStore(queue_db) as store:
        asked: list[str] = []
        db = store.queue._db
        db.set_trace_callback(asked.append)
        try:
            store.queue.page(reviewer(1, "root", "admin"), needs, QueueFilter(state=state), 0, None, 10)
        finally:
            db.set_trace_callback(None)
        (walk_sql,) = [sql for sql in asked if "ORDER BY" in sql]
        plan = [row[3] for row in db.execute(f"EXPLAIN QUERY PLAN {walk_sql}")]
    assert plan[0].startswith(f"SEARCH e USING INDEX {index} ("), plan
    assert not any("TEMP B-TREE" in step for step in plan), plan


def judge(store: ReviewStore, edge: int, name: str, label: Label, submission: str) -> None:
    if store.accounts.reviewer(name) is None:  # every judgement is a review account's
        store.accounts.add_reviewer(name, "adjudicator" if name == "ada" else "reviewer", "unused")
    store.judgements.record_judgement(
        edge,
        Judgement(label, name, Origin.HUMAN, Stage.REVIEW, created_at=f"2026-11-30T00:00:0{len(name)}"),
        submission,
    )


def test_queue_follows_policy_and_judgements(tmp_path: Path) -> None:
    db = make_db(tmp_path / "q.db", many_edges_document())
    ann, bob, ada = reviewer(1, "ann"), reviewer(2, "bob"), reviewer(3, "ada", "adjudicator")
    with ReviewStore(db) as store:
        store.accounts.set_setting("test", "policy", "double")
        judge(store, 1, "ann", Label.SUPPORTED, "s1")
        judge(store, 2, "ann", Label.SUPPORTED, "s2")
        judge(store, 2, "bob", Label.PARTIAL, "s3")
        # ann judged edges 1 and 2: 58 left for her; bob judged 2, edge 1 still needs its second review
        assert sorted(walk(store, ann, 10)) == list(range(3, 61))
        assert sorted(walk(store, bob, 10)) == [1, *range(3, 61)]
        # the disputed edge is the adjudicator's
        assert walk(store, ada, 10, needs="adjudicate") == [2]
        # blind: ann's label on edge 1 does not move it into another reviewer's "labelled" list; every edge ada
        # may review is pending from where she stands (60 edges, minus the disputed edge 2)
        assert walk(store, ada, 10, QueueFilter(state=ReviewState.LABELLED), needs="review") == []
        assert sorted(walk(store, ada, 10, QueueFilter(state=ReviewState.PENDING), needs="review")) == [
            1,
            *range(3, 61),
        ]
        # back to single review: edge 1 (one review) now has its final label and leaves everyone's queue
        assert store.accounts.set_setting("test", "policy", "single") == 1
        assert 1 not in walk(store, bob, 10)


def test_policy_change_recomputes_states(tmp_path: Path) -> None:
    db = make_db(tmp_path / "p.db", many_edges_document())
    with ReviewStore(db) as store:
        judge(store, 5, "ann", Label.SUPPORTED, "x1")
        assert store.accounts.set_setting("root", "policy", "double") == 1
    with sqlite3.connect(db) as conn:
        # labelled by one reviewer under double review: no final label (pending code 5)
        assert conn.execute("SELECT review_state, final_code FROM edges WHERE pk = 5").fetchone() == ("labelled", 5)
    with ReviewStore(db) as store, pytest.raises(Exception, match="policy 'triple'"):
        store.accounts.set_setting("root", "policy", "triple")


def test_passages_come_from_the_latest_snapshot(tmp_path: Path) -> None:
    db = make_db(tmp_path / "s.db", many_edges_document())
    with ReviewStore(db) as store:
        assert store.evidence.passages(1) == []  # no quote, title or publisher stored for s0, no snapshot yet
    text = "Tank: 20 L\nOutdoor: yes"
    with sqlite3.connect(db) as conn:  # what `citeaudit resolve` records: a document, its passages, a fetch
        conn.execute(
            "INSERT INTO documents VALUES ('d1', 'text/plain', ?, ?, ?, NULL, NULL, NULL)",
            (len(text), text.encode(), text),
        )
        conn.executemany("INSERT INTO passages VALUES ('d1', ?, ?, ?)", [(0, 0, 10), (1, 11, 23)])
        conn.execute(
            "INSERT INTO fetches (source_pk, requested_url, status, chain, headers, fetched_at, document_sha256) "
            "VALUES (1, 'https://x', 'resolved', '[]', '[]', '2026-11-30', 'd1')"
        )
    with ReviewStore(db) as store:
        assert [(p.origin, p.text) for p in store.evidence.passages(1)] == [
            ("snapshot", "Tank: 20 L"),
            ("snapshot", "Outdoor: yes"),
        ]


@given(
    labels=st.lists(st.sampled_from(list(Label)), min_size=0, max_size=4),
    required=st.integers(1, 3),
)
def test_no_final_label_before_enough_reviews(labels: list[Label], required: int) -> None:
    judgements = [Judgement(label, f"r{i}", created_at="2026") for i, label in enumerate(labels)]
    state, label = review_outcome(judgements, required)
    if label is not None:
        assert len(labels) >= required
        assert set(labels) == {label}
    if len(labels) >= required and len(set(labels)) == 1:
        assert label == labels[0]
    # the policy never changes the state, only whether it carries a final label
    assert state == review_outcome(judgements)[0]


def test_adjudication_decides_under_any_policy() -> None:
    judgements = [
        Judgement(Label.SUPPORTED, "ann", created_at="1"),
        Judgement(Label.PARTIAL, "bob", created_at="2"),
        Judgement(Label.PARTIAL, "ada", stage=Stage.ADJUDICATION, created_at="3"),
    ]
    assert review_outcome(judgements, 2) == (ReviewState.ADJUDICATED, Label.PARTIAL)
    assert review_outcome(judgements[:2], 2) == (ReviewState.DISPUTED, None)
    with pytest.raises(ValueError, match="reviews_required"):
        review_outcome(judgements, 0)


def test_login_limiter_counts_per_key_and_forgets_after_the_window() -> None:
    clock = ManualClock()
    limiter = LoginLimiter(attempts=2, window=0.2, clock=clock)
    limiter.failed("address:1", "account:ann")
    assert not limiter.blocked("address:1", "account:ann")
    limiter.failed("address:1", "account:ann")
    assert limiter.blocked("account:ann")
    assert limiter.blocked("address:1", "account:bob")  # the address is used up too
    assert not limiter.blocked("address:2", "account:bob")
    clock.advance(0.199)  # still inside the 0.2 s window
    assert limiter.blocked("account:ann")
    clock.advance(0.001)  # 0.2 s after both failures: a failure at t counts while t > now - window
    assert not limiter.blocked("address:1", "account:ann")


def test_cursor_round_trip_and_rejects_junk() -> None:
    assert decode_cursor(encode_cursor(1, 12345)) == (1, 12345)
    for junk in ("", None, "2.5", "0.x", f"0.{KEY_SPACE}", "0"):
        assert decode_cursor(junk) is None


def test_imports_into_a_double_review_database_follow_the_policy(tmp_path: Path) -> None:
    db = make_db(tmp_path / "d.db", many_edges_document())
    with ReviewStore(db) as store:
        store.accounts.set_setting("root", "policy", "double")
    doc = document(
        [answer("b1", run="r7")],
        [claim("b1c1", "b1")],
        [{"claim_id": "b1c1", "url": "https://one.example/", "label": "supported", "reviewer": "li"}],
    )
    make_db(db, doc)
    with sqlite3.connect(db) as conn:
        # one human review under double review: labelled, no final label (pending code 5)
        assert conn.execute(
            "SELECT e.review_state, e.final_code FROM edges e JOIN claims c ON c.pk = e.claim_pk WHERE c.id = 'b1c1'"
        ).fetchone() == ("labelled", 5)


judgement_strategy = st.builds(
    lambda label, who, origin, stage: StoredJudgement(
        0, Judgement(label, who, origin, stage if origin is Origin.HUMAN else Stage.REVIEW)
    ),
    st.sampled_from(list(Label)),
    st.sampled_from(["ann", "bob", "ada", "nli-judge"]),
    st.sampled_from(list(Origin)),
    st.sampled_from(list(Stage)),
)


@given(
    judgements=st.lists(judgement_strategy, max_size=6),
    role=st.sampled_from(["reviewer", "adjudicator"]),
    state=st.sampled_from(list(ReviewState)),
    show_models=st.booleans(),
)
def test_blindness_invariants(
    judgements: list[StoredJudgement], role: str, state: ReviewState, show_models: bool
) -> None:
    viewer = reviewer(1, "ann", role)
    shown = visible_judgements(viewer, state, judgements, show_models)
    if role == "admin" or can_adjudicate(viewer, state):
        assert shown == judgements
        return
    for item in shown:
        # only ann's own human judgements, and model suggestions when the project shows them
        if item.judgement.origin is Origin.HUMAN:
            assert item.judgement.reviewer == "ann"
        else:
            assert show_models
    own = [j for j in judgements if j.judgement.origin is Origin.HUMAN and j.judgement.reviewer == "ann"]
    assert all(j in shown for j in own)
    assert not can_adjudicate(reviewer(1, "ann", "reviewer"), state)
