"""Eight reviewers submitting at once to a real uvicorn server over real sockets, under double review: no judgement
lost, none doubled, and never more than two reviewers on an edge however the submissions race."""

from __future__ import annotations

import random
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from builders import answer, claim, document
from citeaudit.core.model import Judgement, Label, Origin, Stage
from citeaudit.core.scoring import edge_code
from citeaudit.review.app import ReviewConfig
from review_support import ReviewClient, add_account, make_db, serve, set_policy

REVIEWERS = 8
EDGES = 250  # each edge is raced for by 4 reviewers: 8 reviewers x 125 edges = 1 000 submissions


def _double_review_db(path: Path, edges: int) -> tuple[Path, list[str]]:
    """A database of ``edges`` edges (one claim each, over 5 answers) under double review, with the reviewers'
    accounts."""
    claims = [claim(f"c{i}", f"a{i % 5}") for i in range(edges)]
    doc = document(
        [answer(f"a{i}") for i in range(5)],
        claims,
        [{"claim_id": c["id"], "url": f"https://s{i}.example/"} for i, c in enumerate(claims)],
    )
    db = make_db(path, doc)
    names = [f"rev{i}" for i in range(REVIEWERS)]
    for name in names:
        add_account(db, name, "reviewer")
    set_policy(db, "double")
    return db, names


def _run_together(db: Path, names: list[str], work: Callable[[str, str], None], timeout: float) -> None:
    """Serve ``db`` and run ``work(name, base)`` for every reviewer at once, each on a thread of its own."""
    with serve(ReviewConfig(db=db)) as base:
        threads = [threading.Thread(target=work, args=(name, base)) for name in names]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout)


def test_eight_sessions_submit_1000_judgements(tmp_path: Path) -> None:
    db, names = _double_review_db(tmp_path / "busy.db", EDGES)
    failures: list[str] = []
    retried = Counter[str]()
    refused = Counter[str]()

    def work(name: str, base: str) -> None:
        person = ReviewClient(base)
        try:
            assert person.login(name).status_code == 303
            rng = random.Random(name)
            # the edges of this reviewer's parity: every edge is raced for by the 4 reviewers of its parity
            edges = [edge for edge in range(1, EDGES + 1) if edge % 2 == int(name[3:]) % 2]
            rng.shuffle(edges)
            for edge in edges:
                form = {"label": rng.choice(list(Label)).value, "submission": f"{name}-{edge}"}
                response = person.post(f"/edges/{edge}/judgements", form)
                if response.status_code == 409:  # the edge already has its two reviewers
                    refused[name] += 1
                elif response.status_code != 303:
                    failures.append(f"{name} edge {edge}: {response.status_code}")
                if edge % 10 == 0:  # a double-clicked form: the same submission again, answered the same way
                    retried[name] += 1
                    again = person.post(f"/edges/{edge}/judgements", form)
                    if again.status_code != response.status_code:
                        failures.append(f"{name} edge {edge} retry: {again.status_code}")
        except Exception as exc:  # reported below; a thread's exception would otherwise be lost
            failures.append(f"{name}: {exc!r}")
        finally:
            person.close()

    _run_together(db, names, work, 300)
    assert failures == []
    # edges 10, 20, ..., 250 (25 edges, all even) were posted twice by each of the 4 even reviewers
    assert retried == Counter({name: 25 for name in names if int(name[3:]) % 2 == 0})
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT edge_pk, reviewer, submission, label, created_at FROM judgements WHERE origin = 'human'"
        ).fetchall()
        logged = conn.execute("SELECT count(*) FROM audit_log WHERE action = 'judgement'").fetchone()[0]
        states = dict(conn.execute("SELECT pk, final_code FROM edges").fetchall())
    # 250 edges x 2 reviewers = 500 judgements; the other 2 of the 4 submissions per edge were refused
    assert len(rows) == 2 * EDGES == 500
    assert sum(refused.values()) == 2 * EDGES
    assert Counter(edge for edge, *_ in rows) == Counter(dict.fromkeys(range(1, EDGES + 1), 2))
    assert len({submission for _, _, submission, *_ in rows}) == 500
    assert logged == 500
    # every edge's stored final code is what its two judgements give under double review
    by_edge: dict[int, list[Judgement]] = {}
    for edge, name, _, label, created_at in rows:
        by_edge.setdefault(edge, []).append(
            Judgement(Label(label), name, Origin.HUMAN, Stage.REVIEW, None, None, None, created_at)
        )
    assert all(states[edge] == edge_code(judgements, 2)[1] for edge, judgements in by_edge.items())


LEASED_EDGES = 520


def test_eight_reviewers_taking_leased_edges_from_the_queue_are_not_refused(tmp_path: Path) -> None:
    """Each reviewer works as the page does: the queue's next edge, its page, a label; until the queue has nothing
    left for them. Under double review every edge ends with exactly two reviews, and the leases keep a third
    reviewer off an edge, so (almost) no submission is refused: the target is at most 0.5 %."""
    db, names = _double_review_db(tmp_path / "leased.db", LEASED_EDGES)
    failures: list[str] = []
    submitted = Counter[str]()
    refused = Counter[str]()

    def work(name: str, base: str) -> None:
        person = ReviewClient(base)
        rng = random.Random(name)
        try:
            assert person.login(name).status_code == 303
            for _ in range(LEASED_EDGES + 1):
                handed = person.get("/queue/next").headers["location"]
                if not handed.startswith("/edges/"):  # nothing left, or all left is leased to those who owe it
                    return
                edge = int(handed.removeprefix("/edges/"))
                response = person.judge(edge, rng.choice(list(Label)).value)
                submitted[name] += 1
                if response.status_code == 409:
                    refused[name] += 1
                elif response.status_code != 303:
                    failures.append(f"{name} edge {edge}: {response.status_code}")
            failures.append(f"{name}: the queue never ran out")
        except Exception as exc:  # reported below; a thread's exception would otherwise be lost
            failures.append(f"{name}: {exc!r}")
        finally:
            person.close()

    _run_together(db, names, work, 600)
    assert failures == []
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT edge_pk, reviewer, submission FROM judgements WHERE origin = 'human'").fetchall()
        logged = conn.execute("SELECT count(*) FROM audit_log WHERE action = 'judgement'").fetchone()[0]
        pending = conn.execute("SELECT count(*) FROM edges WHERE review_state = 'pending'").fetchone()[0]
    # 520 edges x 2 reviews = 1 040 judgements, each edge by two different reviewers, each logged once
    assert len(rows) == 2 * LEASED_EDGES == 1040
    assert Counter(edge for edge, *_ in rows) == Counter(dict.fromkeys(range(1, LEASED_EDGES + 1), 2))
    assert len({(edge, name) for edge, name, _ in rows}) == 1040
    assert len({submission for *_, submission in rows}) == 1040
    assert logged == 1040
    assert pending == 0
    # every submission was recorded or refused: 1 040 recorded + the refused ones
    assert sum(submitted.values()) == 1040 + sum(refused.values())
    assert sum(refused.values()) <= 0.005 * sum(submitted.values())
