"""Eight reviewers submitting at once to a real uvicorn server over real sockets: no judgement lost, none doubled."""

from __future__ import annotations

import random
import sqlite3
import threading
from collections import Counter
from pathlib import Path

from builders import answer, claim, document
from citeaudit.model import Judgement, Label, Origin, Stage
from citeaudit.review.app import ReviewConfig
from citeaudit.store.review import edge_code
from review_support import ReviewClient, add_account, make_db, serve

REVIEWERS = 8
EDGES = 125  # 8 reviewers x 125 edges = 1 000 judgements


def test_eight_sessions_submit_1000_judgements(tmp_path: Path) -> None:
    claims = [claim(f"c{i}", f"a{i % 5}") for i in range(EDGES)]
    doc = document(
        [answer(f"a{i}") for i in range(5)],
        claims,
        [{"claim_id": c["id"], "url": f"https://s{i}.example/"} for i, c in enumerate(claims)],
    )
    db = make_db(tmp_path / "busy.db", doc)
    names = [f"rev{i}" for i in range(REVIEWERS)]
    for name in names:
        add_account(db, name, "reviewer")
    failures: list[str] = []
    retried = Counter[str]()

    def work(name: str, base: str) -> None:
        person = ReviewClient(base)
        try:
            assert person.login(name).status_code == 303
            rng = random.Random(name)
            edges = list(range(1, EDGES + 1))
            rng.shuffle(edges)
            for edge in edges:
                form = {"label": rng.choice(list(Label)).value, "submission": f"{name}-{edge}"}
                response = person.post(f"/edges/{edge}/judgements", form)
                if response.status_code != 303:
                    failures.append(f"{name} edge {edge}: {response.status_code}")
                if edge % 10 == 0:  # a double-clicked form: the same submission again
                    retried[name] += 1
                    again = person.post(f"/edges/{edge}/judgements", form)
                    if again.status_code != 303:
                        failures.append(f"{name} edge {edge} retry: {again.status_code}")
        except Exception as exc:  # reported below; a thread's exception would otherwise be lost
            failures.append(f"{name}: {exc!r}")
        finally:
            person.close()

    with serve(ReviewConfig(db=db)) as base:
        threads = [threading.Thread(target=work, args=(name, base)) for name in names]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(300)
    assert failures == []
    # edges 10, 20, ..., 120 were posted twice by each reviewer: 12 retries each
    assert all(retried[name] == 12 for name in names)
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT edge_pk, reviewer, submission, label, created_at FROM judgements WHERE origin = 'human'"
        ).fetchall()
        logged = conn.execute("SELECT count(*) FROM audit_log WHERE action = 'judgement'").fetchone()[0]
        states = dict(conn.execute("SELECT pk, final_code FROM edges").fetchall())
    assert len(rows) == REVIEWERS * EDGES == 1000
    assert len({(edge, name) for edge, name, *_ in rows}) == 1000
    assert len({submission for _, _, submission, *_ in rows}) == 1000
    assert logged == 1000
    # every edge's stored final code is what its eight judgements give
    by_edge: dict[int, list[Judgement]] = {}
    for edge, name, _, label, created_at in rows:
        by_edge.setdefault(edge, []).append(
            Judgement(Label(label), name, Origin.HUMAN, Stage.REVIEW, None, None, None, created_at)
        )
    assert all(states[edge] == edge_code(judgements, 1)[1] for edge, judgements in by_edge.items())
