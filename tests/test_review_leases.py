"""Leases, skips and recent labels in a real SQLite file, on a clock the tests move: who may lease an edge under
single and double review, expiry and renewal, one open edge per reviewer, racing threads, and a property over
random sequences of takes, releases, reviews and clock moves."""

from __future__ import annotations

import sqlite3
import tempfile
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import answer, claim, document
from citeaudit.core.clock import ManualClock
from citeaudit.core.model import Judgement, Label, Origin, Stage
from citeaudit.store.review import Reviewer, ReviewStore
from review_support import add_account, make_db, set_policy

EDGES = 6
NAMES = ("ann", "bob", "cy", "dee")


def six_edges() -> dict[str, object]:
    claims = [claim(f"c{i}", "a1") for i in range(1, EDGES + 1)]
    edges = [{"claim_id": f"c{i}", "url": f"https://s{i}.example/"} for i in range(1, EDGES + 1)]
    return document([answer("a1")], claims, edges)


def prepared(path: Path, policy: str = "single") -> Path:
    db = make_db(path, six_edges())  # type: ignore[arg-type]
    for name in NAMES:
        add_account(db, name, "reviewer")
    add_account(db, "ada", "adjudicator")
    set_policy(db, policy)
    return db


@pytest.fixture
def single(tmp_path: Path) -> Path:
    return prepared(tmp_path / "single.db")


@pytest.fixture
def double(tmp_path: Path) -> Path:
    return prepared(tmp_path / "double.db", "double")


def who(store: ReviewStore, name: str) -> Reviewer:
    found = store.accounts.reviewer(name)
    assert found is not None
    return found


def judged_by(store: ReviewStore, edge: int, name: str) -> bool:
    """Whether ``name`` has a human judgement of their own on the edge."""
    return any(
        j.judgement.origin is Origin.HUMAN and j.judgement.reviewer == name for j in store.judgements.of_edge(edge)
    )


def review(store: ReviewStore, edge: int, name: str, label: Label, submission: str) -> None:
    judgement = Judgement(label, name, Origin.HUMAN, Stage.REVIEW, created_at="2026-01-01T00:00:00+00:00")
    store.judgements.record_judgement(edge, judgement, submission)


def test_single_review_leases_an_edge_to_one_reviewer(single: Path) -> None:
    clock = ManualClock()
    with ReviewStore(single) as store:
        leases = store.leases(clock)
        ann, bob = who(store, "ann"), who(store, "bob")
        assert leases.take(ann, [1, 2], Stage.REVIEW, 1) == 1
        # edge 1 is ann's (room 1 - 0 reviews - 1 lease = 0): bob is handed edge 2
        assert leases.take(bob, [1, 2], Stage.REVIEW, 1) == 2
        assert leases.take(bob, [1], Stage.REVIEW, 1) is None
        # ann taking her own edge again renews it rather than counting against her
        assert leases.take(ann, [1], Stage.REVIEW, 1) == 1
        assert leases.holders(1) == 1


def test_double_review_leases_an_edge_to_as_many_as_still_owe_it_a_review(double: Path) -> None:
    clock = ManualClock()
    with ReviewStore(double) as store:
        leases = store.leases(clock)
        ann, bob, cy = (who(store, name) for name in ("ann", "bob", "cy"))
        assert leases.take(ann, [1], Stage.REVIEW, 2) == 1
        assert leases.take(bob, [1], Stage.REVIEW, 2) == 1
        # 2 reviews owed - 0 given - 2 leases = 0 places for cy
        assert leases.take(cy, [1, 2], Stage.REVIEW, 2) == 2
        review(store, 1, "ann", Label.SUPPORTED, "ann-1")
        # 2 owed - 1 given (ann) - 1 lease of someone who has not reviewed (bob) = 0; ann's lease, left behind
        # after her review, holds no place of its own: still no place for cy, and not a negative one
        assert leases.take(cy, [1], Stage.REVIEW, 2) is None
        leases.release(ann, 1)
        assert leases.take(cy, [1], Stage.REVIEW, 2) is None
        leases.release(bob, 1)
        # 2 - 1 - 0 = 1 place
        assert leases.take(cy, [1], Stage.REVIEW, 2) == 1


def test_a_lease_left_behind_after_a_review_holds_no_place(double: Path) -> None:
    with ReviewStore(double) as store:
        leases = store.leases(ManualClock())
        ann, bob, cy = (who(store, name) for name in ("ann", "bob", "cy"))
        assert leases.take(ann, [2], Stage.REVIEW, 2) == 2
        assert leases.take(bob, [2], Stage.REVIEW, 2) == 2
        review(store, 2, "ann", Label.SUPPORTED, "ann-2")
        review(store, 2, "bob", Label.SUPPORTED, "bob-2")
        # both leases are still there (nobody gave them up), but the edge has its 2 reviews: 2 - 2 - 0 = 0 places
        assert leases.holders(2) == 2
        assert leases.take(cy, [2], Stage.REVIEW, 2) is None
        review(store, 3, "ann", Label.SUPPORTED, "ann-3")
        assert leases.take(ann, [3], Stage.REVIEW, 2) == 3  # her own review and lease: 2 - 1 - 0 = 1
        # cy: 2 owed - 1 given (ann) - 0 leases of reviewers who have not reviewed it = 1 place
        assert leases.take(cy, [3], Stage.REVIEW, 2) == 3


def test_a_lease_lapses_unless_renewed(single: Path) -> None:
    clock = ManualClock()
    with ReviewStore(single) as store:
        leases = store.leases(clock, lease_seconds=300)
        ann, bob = who(store, "ann"), who(store, "bob")
        assert leases.take(ann, [1], Stage.REVIEW, 1) == 1
        clock.advance(200)
        assert leases.renew(ann, 1) is not None  # now runs to 200 + 300 = 500 s
        clock.advance(200)  # 400 s: past the first term (300 s), inside the renewed one
        assert leases.take(bob, [1], Stage.REVIEW, 1) is None
        clock.advance(100)  # 500 s: the renewed term is over (a lease lives while expires_at > now)
        assert leases.holds(ann, 1) is None
        assert leases.renew(ann, 1) is None
        assert leases.take(bob, [1], Stage.REVIEW, 1) == 1


def test_a_reviewer_holds_one_lease_and_logging_out_drops_it(single: Path) -> None:
    clock = ManualClock()
    with ReviewStore(single) as store:
        leases = store.leases(clock)
        ann, bob = who(store, "ann"), who(store, "bob")
        assert leases.take(ann, [1], Stage.REVIEW, 1) == 1
        assert leases.take(ann, [2], Stage.REVIEW, 1) == 2
        assert leases.holds(ann, 1) is None  # moving on to edge 2 gave edge 1 up
        assert leases.take(bob, [1], Stage.REVIEW, 1) == 1
        leases.release(bob)
        assert leases.holders(1) == 0


def test_one_adjudicator_leases_a_dispute(double: Path) -> None:
    clock = ManualClock()
    with ReviewStore(double) as store:
        store.accounts.add_reviewer("eve", "adjudicator", "x")
        leases = store.leases(clock)
        ada, eve = who(store, "ada"), who(store, "eve")
        assert leases.take(ada, [3], Stage.ADJUDICATION, 2) == 3
        assert leases.take(eve, [3], Stage.ADJUDICATION, 2) is None


def test_skips_are_kept_counted_listed_and_logged(single: Path) -> None:
    clock = ManualClock()
    with ReviewStore(single) as store:
        leases = store.leases(clock)
        ann = who(store, "ann")
        leases.take(ann, [2], Stage.REVIEW, 1)
        leases.skip(ann, 2, "needs the PDF")
        clock.advance(1)
        leases.skip(ann, 4, None)
        assert leases.holds(ann, 2) is None  # a skip gives the lease up
        assert [(s.edge_pk, s.note) for s in leases.skipped(ann)] == [(2, "needs the PDF"), (4, None)]
        clock.advance(1)
        leases.skip(ann, 2, "still no PDF")  # skipped again: to the back, behind edge 4
        assert [(s.edge_pk, s.note) for s in leases.skipped(ann)] == [(4, None), (2, "still no PDF")]
        assert leases.skip_times(ann, [1, 2, 3, 4]).keys() == {2, 4}
        review(store, 4, "ann", Label.PARTIAL, "ann-4")
        assert leases.skipped_count(ann) == 1  # edge 4 is judged: no longer waiting
        assert leases.skipped_count(who(store, "bob")) == 0
    with sqlite3.connect(single) as conn:
        logged = conn.execute("SELECT actor, target, after FROM audit_log WHERE action = 'edge.skip'").fetchall()
    assert logged == [
        ("ann", "edge:2", '{"note": "needs the PDF"}'),
        ("ann", "edge:4", '{"note": null}'),
        ("ann", "edge:2", '{"note": "still no PDF"}'),
    ]


def test_recent_labels_are_the_reviewers_own_and_say_whether_a_change_decides(double: Path) -> None:
    with ReviewStore(double) as store:
        leases = store.leases(ManualClock())
        ann = who(store, "ann")
        review(store, 1, "ann", Label.SUPPORTED, "a1")
        review(store, 2, "ann", Label.PARTIAL, "a2")
        review(store, 2, "bob", Label.CONFLICTING, "b2")
        review(store, 1, "ann", Label.IRRELEVANT, "a1-again")
        review(store, 3, "bob", Label.SUPPORTED, "b3")
        recent = leases.recent_labels(ann, 2)
        # newest first by her latest review: edge 1 (revised), then edge 2; bob's edge 3 is not hers
        assert [(r.edge_pk, r.label, r.revisions) for r in recent] == [(1, Label.IRRELEVANT, 2), (2, Label.PARTIAL, 1)]
        # edge 1 has one reviewer of 2: her change still decides; edge 2 has both: a change would not
        assert [r.decides for r in recent] == [True, False]
        assert leases.last_label(ann) == 1
        assert leases.last_label(who(store, "cy")) is None


def test_racing_threads_never_lease_an_edge_beyond_its_places(double: Path) -> None:
    clock = ManualClock()
    barrier = threading.Barrier(len(NAMES))
    won: list[str] = []
    errors: list[BaseException] = []

    def grab(name: str) -> None:
        try:
            with ReviewStore(double) as store:
                reviewer = who(store, name)
                barrier.wait()
                if store.leases(clock).take(reviewer, [5], Stage.REVIEW, 2) == 5:
                    won.append(name)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=grab, args=(name,)) for name in NAMES]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    assert len(won) == 2  # 4 reviewers raced for the 2 places double review has on an unreviewed edge


OPERATIONS = st.lists(
    st.tuples(
        st.sampled_from(("take", "release", "review", "advance")),
        st.integers(0, len(NAMES) - 1),
        st.lists(st.integers(1, EDGES), min_size=1, max_size=3),
        st.sampled_from((10.0, 100.0, 400.0)),
    ),
    max_size=25,
)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policy=st.sampled_from(("single", "double")), operations=OPERATIONS)
def test_live_leases_never_exceed_the_reviews_an_edge_still_needs(
    policy: str, operations: list[tuple[str, int, list[int], float]]
) -> None:
    required = 1 if policy == "single" else 2
    clock = ManualClock()
    with tempfile.TemporaryDirectory() as folder:
        db = prepared(Path(folder) / "p.db", policy)
        with ReviewStore(db) as store:
            leases = store.leases(clock, lease_seconds=300)
            people = [who(store, name) for name in NAMES]
            for step, (kind, person, edges, seconds) in enumerate(operations):
                reviewer = people[person]
                if kind == "take":
                    taken = leases.take(reviewer, edges, Stage.REVIEW, required)
                    assert taken is None or taken in edges
                elif kind == "release":
                    leases.release(reviewer, edges[0])
                elif (
                    kind == "review"
                    and leases.holds(reviewer, edges[0])
                    and not judged_by(store, edges[0], reviewer.name)
                ):
                    # as the queue hands edges out: a reviewer judges the edge they hold
                    review(store, edges[0], reviewer.name, Label.SUPPORTED, f"s{step}")
                elif kind == "advance":
                    clock.advance(seconds)
                for edge in range(1, EDGES + 1):
                    reviewed = {
                        j.judgement.reviewer
                        for j in store.judgements.of_edge(edge)
                        if j.judgement.origin is Origin.HUMAN
                    }
                    holders = [p for p in people if leases.holds(p, edge) is not None]
                    # a lease is taken only with room, and a holder's review uses up the holder's own place
                    assert len(reviewed) + len([p for p in holders if p.name not in reviewed]) <= required
                for p in people:
                    assert sum(leases.holds(p, edge) is not None for edge in range(1, EDGES + 1)) <= 1


def test_a_lease_needs_a_positive_term(single: Path) -> None:
    with ReviewStore(single) as store, pytest.raises(ValueError, match="more than 0 s"):
        store.leases(ManualClock(), lease_seconds=0)
