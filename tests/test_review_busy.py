"""Reviewers submitting while an import writes the database: a real uvicorn server on 127.0.0.1, real
``citeaudit ingest`` processes, one SQLite file. A submission the database cannot take in time is refused with a
page that keeps everything the reviewer entered; submitted again, it is recorded once. None is lost."""

from __future__ import annotations

import contextlib
import os
import random
import sqlite3
import threading
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

from tests.test_concurrent_writers import Command, audit_bytes, audit_file, held_in_transaction

from builders import answer, claim, document
from citeaudit.core.model import Label
from citeaudit.review.app import ReviewConfig
from review_support import ReviewClient, add_account, make_db, serve

REVIEWERS = 8
EDGES = 1000  # each of the 8 reviewers takes 125 of them: 1 000 judgements (single review: one reviewer an edge)


class _Form(HTMLParser):
    """The values a browser would send from the page's ``label-form``."""

    def __init__(self) -> None:
        super().__init__()
        self.values: dict[str, str] = {}
        self._inside = False
        self._field: str | None = None
        self._select: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "form":
            self._inside = found.get("id") == "label-form"
        elif not self._inside:
            return
        elif tag == "input" and found.get("name"):
            self.values[str(found["name"])] = found.get("value") or ""
        elif tag == "textarea":
            self._field = found.get("name")
            self.values[str(self._field)] = ""
        elif tag == "select":
            self._select = found.get("name")
        elif tag == "option" and self._select and "selected" in found:
            self._field = self._select
            self.values[self._select] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag in ("textarea", "option"):
            self._field = None
        elif tag == "select":
            self._select = None
        elif tag == "form":
            self._inside = False

    def handle_data(self, data: str) -> None:
        if self._field is not None:
            self.values[self._field] += data


def kept_form(page: str) -> dict[str, str]:
    """What the refusal page's form would submit, CSRF token aside."""
    parser = _Form()
    parser.feed(page)
    parser.values.pop("csrf", None)
    return parser.values


def judgements(db: Path) -> list[tuple[int, str, str, str, str | None, str | None, str | None]]:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return conn.execute(
            "SELECT edge_pk, reviewer, submission, label, passage, period, reasoning FROM judgements "
            "WHERE origin = 'human'"
        ).fetchall()


def test_a_judgement_sent_while_the_database_is_locked_is_refused_with_everything_kept(tmp_path: Path) -> None:
    doc = document([answer("a1")], [claim("c1", "a1")], [{"claim_id": "c1", "url": "https://s.example/"}])
    db = make_db(tmp_path / "busy.db", doc)
    add_account(db, "rev", "reviewer")
    with serve(ReviewConfig(db=db, busy_timeout=0.05)) as base:
        person = ReviewClient(base)
        try:
            assert person.login("rev").status_code == 303
            person.get("/edges/1")
            typed = {
                "label": "partial",
                "submission": "rev-edge-1",
                "passage": 'Tank: <b>20 L</b> & "more"',
                "period": "2026",
                "reasoning": "spec table\nsecond line",
                "severity": "high",
            }
            writer = sqlite3.connect(db, isolation_level=None)
            try:
                writer.execute("BEGIN IMMEDIATE")  # as an import does, for as long as it runs
                refused = person.post("/edges/1/judgements", typed)
                assert judgements(db) == []
            finally:
                writer.execute("ROLLBACK")
                writer.close()
            assert refused.status_code == 503
            assert "not recorded yet" in refused.text
            assert refused.headers["retry-after"] == "5"
            assert kept_form(refused.text) == typed  # every field as typed, the submission id included
            again = person.post("/edges/1/judgements", kept_form(refused.text))
            twice = person.post("/edges/1/judgements", kept_form(refused.text))  # a second click
        finally:
            person.close()
    assert (again.status_code, twice.status_code) == (303, 303)
    assert judgements(db) == [(1, "rev", "rev-edge-1", "partial", typed["passage"], "2026", typed["reasoning"])]


def test_an_import_and_eight_reviewers_together_lose_no_judgement(tmp_path: Path) -> None:
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
    pipe = tmp_path / "held.json"
    os.mkfifo(pipe)
    failures: list[str] = []
    refusals = Counter[str]()
    counted = threading.Lock()
    everyone_refused = threading.Event()
    released = threading.Event()

    def work(name: str, person: ReviewClient) -> None:
        try:
            rng = random.Random(name)
            # under single review an edge takes one reviewer: each reviewer has a share of its own
            share = names.index(name)
            edges = [edge for edge in range(1, EDGES + 1) if (edge - 1) % REVIEWERS == share]
            rng.shuffle(edges)
            for edge in edges:
                form = {"label": rng.choice(list(Label)).value, "submission": f"{name}-{edge}", "passage": name}
                while (response := person.post(f"/edges/{edge}/judgements", form)).status_code == 503:
                    kept = kept_form(response.text)
                    if {key: kept.get(key) for key in form} != form:
                        failures.append(f"{name} edge {edge}: the refusal page lost the input: {kept}")
                        return
                    with counted:
                        refusals[name] += 1
                        if len(refusals) == REVIEWERS:
                            everyone_refused.set()
                    released.wait(300)
                    form = {key: kept[key] for key in form}  # submitted again from the page
                if response.status_code != 303:
                    failures.append(f"{name} edge {edge}: {response.status_code}")
        except Exception as exc:  # reported below; a thread's exception would otherwise be lost
            failures.append(f"{name}: {exc!r}")
        finally:
            if failures:  # no waiting for a refusal that will not come
                everyone_refused.set()
            person.close()

    with serve(ReviewConfig(db=db, busy_timeout=0.05)) as base:
        people = {name: ReviewClient(base) for name in names}
        for name, person in people.items():  # logging in writes a session: done before the import starts
            assert person.login(name).status_code == 303
        importing = Command("ingest", audit_file(tmp_path, "x", answers=200), pipe, "--db", db)
        threads = [threading.Thread(target=work, args=item) for item in people.items()]
        with held_in_transaction(pipe, audit_bytes("y"), importing, db):
            # the import holds the write lock until every reviewer has been refused at least once
            for thread in threads:
                thread.start()
            assert everyone_refused.wait(300)
        released.set()
        for thread in threads:
            thread.join(300)
    status, _, err = importing.finish()
    assert status == 0, err
    assert failures == []
    assert sorted(refusals) == names  # each reviewer was refused and submitted again
    rows = judgements(db)
    assert len(rows) == EDGES == 1000  # 8 reviewers x 125 edges each
    assert len({(edge, name) for edge, name, *_ in rows}) == 1000
    assert len({submission for _, _, submission, *_ in rows}) == 1000
    with contextlib.closing(sqlite3.connect(db)) as conn:
        # the import is whole too: 5 answers before, 200 from x.json, 1 from the pipe
        assert conn.execute("SELECT count(*) FROM answers").fetchone()[0] == 5 + 200 + 1
