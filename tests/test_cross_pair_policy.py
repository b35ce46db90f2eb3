"""Cross pairs follow the edges' review policy, over real HTTP: under ``single`` one reviewer, under ``double``
exactly two, a disputed pair leaves dispute only by an adjudication (a reviewer's later change is recorded and
decides nothing, in the review pages and in the misattribution report alike), an adjudicator who reviewed the pair
does not adjudicate it, and admins never adjudicate. A refusal is a 409 page and records nothing."""

from __future__ import annotations

import re
import secrets
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from builders import answer, claim, document
from citeaudit.core.errors import ReviewRefused
from citeaudit.core.misattribution import CrossCandidate, CrossKind
from citeaudit.core.model import Judgement, Label, Stage
from citeaudit.review.app import ReviewConfig
from citeaudit.scoring.paths import misattribution_path
from citeaudit.store import Store
from citeaudit.store.cross_pairs import cross_pair, propose_cross_pairs, record_cross_judgement
from citeaudit.store.review import ReviewStore, code_label
from review_support import ReviewClient, add_account, edge_pk, make_db, serve, set_policy

pytest.importorskip("fastapi")

PAIR = 1  # the one cross pair proposed below


def cross_db(path: Path, policy: str) -> Path:
    """c1 cites shop.example only, labelled irrelevant: at risk; brand.com/ax220, cited by the same answer, is its
    one cross pair. Accounts: three reviewers, two adjudicators, one admin."""
    a1 = answer("a1", citations=["https://brand.com/ax220", "https://shop.example/ax"])
    c1 = claim("c1", "a1", text="The AX220 has a 20 L tank.")
    doc = document([a1], [c1], [{"claim_id": "c1", "url": "https://shop.example/ax", "label": "irrelevant"}])
    db = make_db(path, doc)
    with Store(db) as store, store.transaction() as tx:
        assert propose_cross_pairs(tx, 1, [CrossCandidate("c1", "https://brand.com/ax220", CrossKind.CO_CITED)]) == 1
    for name, role in (
        ("ann", "reviewer"),
        ("bob", "reviewer"),
        ("cat", "reviewer"),
        ("ada", "adjudicator"),
        ("eve", "adjudicator"),
        ("root", "admin"),
    ):
        add_account(db, name, role)
    set_policy(db, policy)
    return db


class People:
    """Logged-in clients by name, closed at the end."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.clients: dict[str, ReviewClient] = {}

    def __getitem__(self, name: str) -> ReviewClient:
        if name not in self.clients:
            client = ReviewClient(self.base)
            assert client.login(name).status_code == 303
            self.clients[name] = client
        return self.clients[name]

    def judge(self, name: str, label: str, **fields: str) -> httpx.Response:
        """Open the cross pair's page as ``name`` and post a label with a fresh submission token (the page's own,
        or, when the page offers no form, a new one: a stale page or a forged post sends one too)."""
        client = self[name]
        page = client.get(f"/cross-pairs/{PAIR}")
        assert page.status_code == 200, page.text
        found = re.search(r'name="submission" value="([^"]+)"', page.text)
        submission = found.group(1) if found else secrets.token_urlsafe(16)
        return client.post(f"/cross-pairs/{PAIR}/judgements", {"label": label, "submission": submission, **fields})

    def state(self) -> str:
        """The pair's state as the admin's page shows it (an adjudicator sees it only once the pair is disputed)."""
        found = re.search(r'id="state"[^>]*>([^<]*)<', self["root"].get(f"/cross-pairs/{PAIR}").text)
        assert found is not None
        return found.group(1).strip()

    def close(self) -> None:
        for client in self.clients.values():
            client.close()


def served(db: Path) -> Iterator[tuple[Path, People]]:
    with serve(ReviewConfig(db=db)) as base:
        people = People(base)
        try:
            yield db, people
        finally:
            people.close()


@pytest.fixture
def single(tmp_path: Path) -> Iterator[tuple[Path, People]]:
    yield from served(cross_db(tmp_path / "single.db", "single"))


@pytest.fixture
def double(tmp_path: Path) -> Iterator[tuple[Path, People]]:
    yield from served(cross_db(tmp_path / "double.db", "double"))


def human_rows(db: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(db) as con:
        return [
            (str(r), str(s), str(lab))
            for r, s, lab in con.execute(
                "SELECT reviewer, stage, label FROM cross_judgements WHERE origin = 'human' ORDER BY pk"
            )
        ]


def refused(response: httpx.Response, why: str) -> None:
    """A refusal: 409, an HTML page naming the rule."""
    assert response.status_code == 409, response.text
    assert response.headers["content-type"].startswith("text/html")
    assert why in response.text


def test_single_review_takes_one_reviewer(single: tuple[Path, People]) -> None:
    db, people = single
    assert people.judge("ann", "supported").status_code == 303
    refused(people.judge("bob", "irrelevant"), "already has its 1 independent review(s) under the single policy")
    # ann is the pair's one reviewer: her revision is recorded and counts (single review)
    assert people.judge("ann", "partial").status_code == 303
    assert human_rows(db) == [("ann", "review", "supported"), ("ann", "review", "partial")]
    assert people.state() == "labelled: partial"
    # bob's page offers no form and says why
    page = people["bob"].get(f"/cross-pairs/{PAIR}")
    assert 'id="label-form"' not in page.text
    assert 'id="refusal"' in page.text


def test_double_review_takes_exactly_two_reviewers(double: tuple[Path, People]) -> None:
    db, people = double
    assert people.judge("ann", "supported").status_code == 303
    assert people.judge("bob", "supported").status_code == 303
    refused(people.judge("cat", "irrelevant"), "already has its 2 independent review(s) under the double policy")
    # an adjudicator is a reviewer like any other while the pair is not disputed: the limit holds for them too
    refused(people.judge("ada", "irrelevant"), "not yours to review")
    assert [r for r, _, _ in human_rows(db)] == ["ann", "bob"]
    assert people.state() == "agreed: supported"


def test_a_later_change_never_closes_a_dispute_only_an_adjudication_does(double: tuple[Path, People]) -> None:
    db, people = double
    assert people.judge("ann", "supported").status_code == 303
    assert people.judge("bob", "irrelevant").status_code == 303
    assert people.state() == "disputed"
    # bob comes round to ann's label: recorded, but the two independent labels stay supported vs irrelevant
    assert people.judge("bob", "supported").status_code == 303
    assert human_rows(db)[-1] == ("bob", "review", "supported")
    assert people.state() == "disputed"
    report, _ = misattribution_path(db)
    # c1 is the one claim at risk; its one cross pair is still disputed, so without a final label: 0 of 1,
    # with 1 cross pair pending (the old all-judgements count made it agreed-supported: 1 of 1)
    assert (report.rate.numerator, report.rate.denominator, report.cross_pairs_pending) == (0, 1, 1)
    # eve, who reviewed nothing, settles it
    assert people.judge("eve", "supported", reasoning="the spec page gives 20 L").status_code == 303
    assert human_rows(db)[-1] == ("eve", "adjudication", "supported")
    assert people.state() == "adjudicated: supported"
    report, _ = misattribution_path(db)
    # now supported by adjudication: 1 of 1, none pending
    assert (report.rate.numerator, report.rate.denominator, report.cross_pairs_pending) == (1, 1, 0)


def test_an_adjudicator_who_reviewed_the_pair_does_not_adjudicate_it(double: tuple[Path, People]) -> None:
    db, people = double
    assert people.judge("ada", "supported").status_code == 303
    assert people.judge("bob", "irrelevant").status_code == 303
    assert people.state() == "disputed"
    refused(
        people.judge("ada", "supported", stage="adjudication", reasoning="mine"),
        "you reviewed this cross pair: another adjudicator settles its dispute",
    )
    assert [s for _, s, _ in human_rows(db)] == ["review", "review"]
    assert people.state() == "disputed"
    # her page offers her own review again, never the adjudication form
    page = people["ada"].get(f"/cross-pairs/{PAIR}")
    assert "Adjudicate" not in page.text
    assert 'name="stage" value="review"' in page.text


def test_admins_never_adjudicate_or_review_a_cross_pair(double: tuple[Path, People]) -> None:
    db, people = double
    assert people.judge("ann", "supported").status_code == 303
    assert people.judge("bob", "irrelevant").status_code == 303
    # disputed: the admin's post is refused whichever stage it names
    refused(people.judge("root", "supported", reasoning="settled"), "admins manage the project")
    refused(
        people.judge("root", "supported", stage="adjudication", reasoning="settled"),
        "only adjudicator accounts adjudicate",
    )
    assert [r for r, _, _ in human_rows(db)] == ["ann", "bob"]
    assert people.state() == "disputed"
    page = people["root"].get(f"/cross-pairs/{PAIR}")
    assert 'id="label-form"' not in page.text


def test_only_disputed_pairs_are_adjudicated_and_disputed_ones_only_so(double: tuple[Path, People]) -> None:
    db, people = double
    refused(
        people.judge("eve", "supported", stage="adjudication", reasoning="early"),
        "only disputed cross pairs are adjudicated; this one is pending",
    )
    assert people.judge("ann", "supported").status_code == 303
    assert people.judge("bob", "irrelevant").status_code == 303
    # a disputed pair takes no review from an adjudicator who did not review it: they adjudicate or nothing
    refused(people.judge("eve", "supported", stage="review"), "record an adjudication instead of a review")
    assert [r for r, _, _ in human_rows(db)] == ["ann", "bob"]


def test_the_store_refuses_in_the_write_transaction_and_keeps_nothing(tmp_path: Path) -> None:
    db = cross_db(tmp_path / "store.db", "single")
    with Store(db) as store:
        with store.transaction() as tx:
            record_cross_judgement(tx, PAIR, Judgement(Label.SUPPORTED, "ann"), submission="s-1")
        # a second reviewer under single review (the role is the account's, never the caller's)
        refusal = pytest.raises(ReviewRefused, match="cross pair 1: this cross pair already has its 1")
        with refusal, store.transaction() as tx:
            record_cross_judgement(tx, PAIR, Judgement(Label.PARTIAL, "bob"), submission="s-2")
        # an adjudication of a pair that is only labelled, by an adjudicator
        refusal = pytest.raises(ReviewRefused, match="only disputed cross pairs are adjudicated; this one is labelled")
        with refusal, store.transaction() as tx:
            adjudication = Judgement(Label.PARTIAL, "eve", stage=Stage.ADJUDICATION, reasoning="x")
            record_cross_judgement(tx, PAIR, adjudication, submission="s-3")
    # ann's one review and its one audit-log row; nothing of the refused ones
    assert human_rows(db) == [("ann", "review", "supported")]
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT count(*) FROM audit_log WHERE action = 'cross_judgement'").fetchone() == (1,)


ROLES = {"ann": "reviewer", "bob": "reviewer", "cat": "reviewer", "ada": "adjudicator", "eve": "adjudicator"}
ROLES["root"] = "admin"
Attempt = tuple[str, Stage, Label]


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["single", "double"]),
    st.lists(
        st.tuples(st.sampled_from(sorted(ROLES)), st.sampled_from(list(Stage)), st.sampled_from(list(Label))),
        max_size=8,
    ),
)
def test_a_cross_pair_and_an_edge_given_the_same_attempts_end_alike(policy: str, attempts: list[Attempt]) -> None:
    """Whatever people try, in whatever order, a cross pair refuses exactly what an edge refuses and ends in the
    same state with the same final label: one policy, not two."""
    a1 = answer("a1", citations=["https://brand.com/ax220", "https://shop.example/ax"])
    doc = document([a1], [claim("c1", "a1")], [{"claim_id": "c1", "url": "https://shop.example/ax"}])
    with tempfile.TemporaryDirectory() as folder:
        db = make_db(Path(folder) / "same.db", doc)
        with Store(db) as store, store.transaction() as tx:
            propose_cross_pairs(tx, 1, [CrossCandidate("c1", "https://brand.com/ax220", CrossKind.CO_CITED)])
        ReviewStore.prepare(db)
        set_policy(db, policy)
        with ReviewStore(db) as review:
            for name, role in ROLES.items():
                review.accounts.add_reviewer(name, role, "no password: judgements recorded through the library")
        edge = edge_pk(db, "c1", "https://shop.example/ax")
        with ReviewStore(db) as reviews, Store(db) as store:
            for step, (name, stage, label) in enumerate(attempts):
                # distinct, increasing times: the latest adjudication is the latest by time
                judgement = Judgement(
                    label, name, stage=stage, reasoning="why", created_at=f"2026-01-01T00:00:{step:02d}Z"
                )
                try:
                    reviews.judgements.record_judgement(edge, judgement, f"e-{step}")
                    edge_refused = False
                except ReviewRefused:
                    edge_refused = True
                try:
                    with store.transaction() as tx:
                        record_cross_judgement(tx, PAIR, judgement, submission=f"x-{step}")
                    pair_refused = False
                except ReviewRefused:
                    pair_refused = True
                assert pair_refused == edge_refused, (step, name, stage, label)
            view = reviews.judgements.edge(edge)
            assert view is not None
            pair = cross_pair(store.connection, PAIR)
            assert pair is not None
            assert (pair.state, pair.final_label) == (view.review_state, code_label(view.final_code))
