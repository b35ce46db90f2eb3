"""A reviewer's day over HTTP against a real server on a clock the test moves: the next edge is leased (and the
lease renewed, lapsed and given up), a refused review comes back to its filtered queue with the typed text, a
skipped edge waits at the back of the queue with its note, the queue page counts, and the recent labels list
shows a reviewer their own labels only, each with a link to revise it."""

from __future__ import annotations

import html
import re
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from citeaudit.core.clock import ManualClock
from citeaudit.review.app import ReviewConfig
from review_support import ReviewClient, add_account, edge_pk, make_db, serve, set_policy

LEASE = 300.0


@pytest.fixture
def review_db(tmp_path: Path) -> Path:
    db = make_db(tmp_path / "day.db")
    for name in ("ann", "bob", "cy"):
        add_account(db, name, "reviewer")
    return db


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def client(review_db: Path, clock: ManualClock) -> Iterator[Callable[[str], ReviewClient]]:
    opened: list[ReviewClient] = []
    with serve(ReviewConfig(db=review_db, clock=clock, lease_seconds=LEASE)) as base:

        def login(name: str) -> ReviewClient:
            person = ReviewClient(base)
            assert person.login(name).status_code == 303
            opened.append(person)
            return person

        yield login
        for person in opened:
            person.close()


def next_edge(person: ReviewClient, query: str = "") -> int | None:
    """Where ``/queue/next`` sends the person: an edge's row id, or ``None`` for the queue."""
    response = person.get(f"/queue/next?{query}" if query else "/queue/next")
    assert response.status_code == 303
    found = re.match(r"/edges/(\d+)", response.headers["location"])
    return int(found.group(1)) if found else None


def human_judgements(db: Path) -> list[tuple[int, str, str]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT edge_pk, reviewer, label FROM judgements WHERE origin = 'human' ORDER BY pk"
        ).fetchall()


def test_two_reviewers_are_handed_different_edges_until_the_lease_lapses(
    client: Callable[[str], ReviewClient], clock: ManualClock
) -> None:
    ann, bob = client("ann"), client("bob")
    # the review document's 5 edges: each handed to one reviewer at a time under single review
    taken = next_edge(ann)
    assert taken is not None
    handed = {next_edge(bob) for _ in range(3)}
    assert taken not in handed
    assert len(handed) == 1  # bob asking again keeps his one edge: a reviewer holds one lease at a time
    # renewed at 200 s, ann's lease runs to 500 s: it holds at 499 s and has lapsed at 500 s
    assert ann.get(f"/edges/{taken}").status_code == 200
    clock.advance(200)
    assert ann.post(f"/edges/{taken}/lease", {}).status_code == 204
    clock.advance(LEASE - 1)
    assert bob.post(f"/edges/{taken}/lease", {}).status_code == 409
    clock.advance(1)
    assert bob.post(f"/edges/{taken}/lease", {}).status_code == 204  # lapsed: bob may take it now
    assert ann.post(f"/edges/{taken}/lease", {}).status_code == 409


def test_logging_out_gives_the_lease_up(client: Callable[[str], ReviewClient]) -> None:
    ann, bob = client("ann"), client("bob")
    taken = next_edge(ann)
    assert ann.get(f"/edges/{taken}").status_code == 200
    assert bob.post(f"/edges/{taken}/lease", {}).status_code == 409
    assert ann.post("/logout", {}).status_code == 303
    assert bob.post(f"/edges/{taken}/lease", {}).status_code == 204


def test_a_refused_review_comes_back_to_its_filtered_queue_with_the_typed_text(
    client: Callable[[str], ReviewClient], review_db: Path
) -> None:
    edge = edge_pk(review_db, "c3", "https://brand.com/ax220")  # the one edge of platform p2
    ann, bob = client("ann"), client("bob")
    assert ann.judge(edge, "supported").status_code == 303
    typed = {
        "label": "partial",
        "submission": "bob-late",
        "reasoning": "The page lists 20 L <b>only</b> for the 2024 model.",
        "passage": "Tank: 20 L",
        "period": "2024",
        "queue": "platform=p2&run=r2",
    }
    refused = bob.post(f"/edges/{edge}/judgements", typed)
    assert refused.status_code == 409
    page = html.unescape(refused.text)
    reason = re.search(r'id="refused-reason">([^<]*)<', page)
    assert reason is not None
    assert f"edge #{edge} was not recorded" in reason.group(1)
    assert "independent review(s)" in reason.group(1)
    for field in ("reasoning", "passage", "period", "label"):
        kept = re.search(rf'id="kept-{field}">(.*?)</textarea>', page, re.S)
        assert kept is not None, field
        assert kept.group(1) == typed[field]
    # the queue it came from: its filters selected and kept in the start link
    assert 'id="start" href="/queue/next?run=r2&platform=p2"' in page
    assert re.search(r"<option selected>p2</option>", page)
    assert human_judgements(review_db) == [(edge, "ann", "supported")]


def test_a_skipped_edge_waits_at_the_back_of_the_queue_with_its_note(
    client: Callable[[str], ReviewClient], review_db: Path
) -> None:
    ann = client("ann")
    first = next_edge(ann)
    assert first is not None
    skipped = ann.post(f"/edges/{first}/skip", {"note": "needs the PDF", "queue": ""})
    assert skipped.status_code == 303
    assert skipped.headers["location"] == "/queue/next"
    queue = html.unescape(ann.get("/queue").text)
    # 5 edges assigned, none done, 1 skipped: listed apart with the note, not among the 4 still to do
    assert re.search(r'id="count-assigned">5<', queue)
    assert re.search(r'id="count-done">0<', queue)
    assert re.search(r'id="count-skipped">1<', queue)
    assert "needs the PDF" in queue
    assert len(re.findall(r'<tr data-edge="\d+"><td><a href="/edges/\d+">#', queue)) == 5  # 4 to do + 1 skipped
    seen = []
    for _ in range(4):  # the other 4 edges come first, then the skipped one
        edge = next_edge(ann)
        assert edge is not None
        assert edge != first
        seen.append(edge)
        assert ann.judge(edge, "supported").status_code == 303
    assert len(set(seen)) == 4
    assert next_edge(ann) == first
    assert ann.judge(first, "unknown").status_code == 303
    assert next_edge(ann) is None
    assert re.search(r'id="count-skipped">0<', ann.get("/queue").text)


def test_recent_labels_are_the_reviewers_own_and_a_revision_stays_within_the_policy(
    client: Callable[[str], ReviewClient], review_db: Path
) -> None:
    set_policy(review_db, "double")
    edge = edge_pk(review_db, "c3", "https://brand.com/ax220")
    other = edge_pk(review_db, "c1", "https://shop.example/ax")
    ann, bob = client("ann"), client("bob")
    assert ann.judge(edge, "supported").status_code == 303
    assert bob.judge(other, "conflicting").status_code == 303
    mine = ann.get("/mine").text
    assert f'<a class="undo-link" href="/edges/{edge}?revise=1">' in mine
    assert f"/edges/{other}?revise=1" not in mine  # bob's label is not hers
    # the list of labels (not the key help every page carries, which names all five) holds no other reviewer's
    listed = mine[mine.index('id="mine"') : mine.index("</table>", mine.index('id="mine"'))]
    assert "supported" in listed
    assert "conflicting" not in listed
    # her edge page links her last label
    assert f'id="undo-link" href="/edges/{edge}?revise=1"' in ann.get(f"/edges/{other}").text
    # a revision before bob's review counts; after it, it is recorded as a change and decides nothing
    assert ann.judge(edge, "partial").status_code == 303
    assert bob.judge(edge, "conflicting").status_code == 303
    with sqlite3.connect(review_db) as conn:
        # ann's counted label is her revision (partial), bob's is conflicting: they disagree
        assert conn.execute("SELECT review_state FROM edges WHERE pk = ?", (edge,)).fetchone() == ("disputed",)
    revising = html.unescape(ann.get(f"/edges/{edge}?revise=1").text)
    assert "recorded as a change and does not decide" in revising
    assert "a change is recorded, not counted" in ann.get("/mine").text
    assert ann.judge(edge, "conflicting").status_code == 303
    with sqlite3.connect(review_db) as conn:
        # ann now says what bob said, but a change after both reviews never closes the dispute
        assert conn.execute("SELECT review_state FROM edges WHERE pk = ?", (edge,)).fetchone() == ("disputed",)
    assert [row for row in human_judgements(review_db) if row[0] == edge] == [
        (edge, "ann", "supported"),
        (edge, "ann", "partial"),
        (edge, "bob", "conflicting"),
        (edge, "ann", "conflicting"),
    ]
