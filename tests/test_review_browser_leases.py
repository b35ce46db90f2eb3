"""Leases, skip, undo and refusals in a real headless Chromium: two reviewers in two browser contexts are never on
the same edge while a lease holds, a label is revised from the recent labels within the policy, a skipped edge
comes back at the end, a refused label returns to the filtered queue with the typed text, and the open page
renews its lease."""

from __future__ import annotations

import re
import sqlite3
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from builders import answer, claim, document
from citeaudit.core.clock import ManualClock, iso
from citeaudit.review.app import ReviewConfig
from review_support import add_account, make_db, serve, sign_in

pytest.importorskip("playwright.sync_api")

from playwright.sync_api import Browser, Page

SCREEN = {"width": 1366, "height": 768}


def three_answers() -> dict[str, Any]:
    """Run r1 on perplexity (answers a1, a2) and r2 on gemini (a3); one claim per answer citing two sources: six
    edges, four of them on perplexity."""
    answers = [answer(aid, run=run, platform=None) for aid, run in (("a1", "r1"), ("a2", "r1"), ("a3", "r2"))]
    claims = [claim(f"c-{aid}", aid) for aid in ("a1", "a2", "a3")]
    edges = [
        {"claim_id": f"c-{aid}", "url": f"https://{host}/{aid}"}
        for aid in ("a1", "a2", "a3")
        for host in ("brand.com", "shop.example")
    ]
    runs = [
        {"id": "r1", "kind": "platform", "platform": "perplexity"},
        {"id": "r2", "kind": "platform", "platform": "gemini"},
    ]
    return document(answers, claims, edges, runs=runs)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    made = make_db(tmp_path / "leases.db", three_answers())
    for name in ("ann", "bob"):
        add_account(made, name, "reviewer")
    return made


def log_in(browser: Browser, base: str, name: str) -> Page:
    page = browser.new_context(viewport=SCREEN).new_page()
    return sign_in(page, base, name)


def open_edge(page: Page) -> int | None:
    """The edge whose page is open (``None`` on the queue)."""
    found = re.search(r"/edges/(\d+)", page.url)
    return int(found.group(1)) if found else None


def label(page: Page, value: str) -> None:
    """Click a label button and wait for the page it leads to."""
    with page.expect_navigation():
        page.click(f"#label-form button[value={value}]")


def labels(db: Path) -> list[tuple[int, str, str]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT edge_pk, reviewer, label FROM judgements WHERE origin = 'human' ORDER BY pk"
        ).fetchall()


def test_two_reviewers_never_share_an_edge_while_it_is_leased(browser: Browser, db: Path) -> None:
    with serve(ReviewConfig(db=db)) as base:
        ann, bob = log_in(browser, base, "ann"), log_in(browser, base, "bob")
        for page in (ann, bob):
            with page.expect_navigation():
                page.click("#start")
        seen: list[tuple[int | None, int | None]] = [(open_edge(ann), open_edge(bob))]
        # they take turns labelling: whoever labels is handed an edge the other does not hold
        for turn in range(6):
            page = (ann, bob)[turn % 2]
            if open_edge(page) is None:
                continue
            label(page, "supported")
            seen.append((open_edge(ann), open_edge(bob)))
        assert all(a is None or a != b for a, b in seen), seen
        # 6 edges, each labelled once under single review, none refused
        assert sorted(edge for edge, _, _ in labels(db)) == [1, 2, 3, 4, 5, 6]
        assert ann.locator("#refused").count() == 0
        assert bob.locator("#refused").count() == 0


def test_a_label_is_revised_from_the_recent_labels(browser: Browser, db: Path) -> None:
    with serve(ReviewConfig(db=db)) as base:
        ann = log_in(browser, base, "ann")
        with ann.expect_navigation():
            ann.click("#start")
        first = open_edge(ann)
        label(ann, "supported")
        assert open_edge(ann) != first
        # the edge page links her last label; the recent labels page lists it with its own link
        assert ann.get_attribute("#undo-link", "href") == f"/edges/{first}?revise=1"
        ann.click("#nav-mine")
        ann.wait_for_url(f"{base}/mine")
        assert ann.locator("#mine tbody tr").count() == 1
        assert ann.text_content("#mine tbody td.label") == "supported"
        with ann.expect_navigation():
            ann.click(".undo-link")
        assert ann.url == f"{base}/edges/{first}?revise=1"
        assert "Revise your label" in (ann.text_content("#label-form h2") or "")
        label(ann, "partial")
        # single review: her revision counts (final code 1 = partial), and both judgements are kept
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT final_code FROM edges WHERE pk = ?", (first,)).fetchone() == (1,)
        assert [row for row in labels(db) if row[0] == first] == [
            (first, "ann", "supported"),
            (first, "ann", "partial"),
        ]


def test_a_skipped_edge_comes_back_last(browser: Browser, db: Path) -> None:
    with serve(ReviewConfig(db=db)) as base:
        ann = log_in(browser, base, "ann")
        ann.goto(f"{base}/queue?platform=perplexity")
        with ann.expect_navigation():
            ann.click("#start")
        skipped = open_edge(ann)
        ann.fill("#skip-note", "the brand page is down")
        with ann.expect_navigation():
            ann.click("#skip-button")
        assert "platform=perplexity" in ann.url  # the filter is kept
        assert open_edge(ann) not in (None, skipped)
        ann.goto(f"{base}/queue?platform=perplexity")
        assert ann.text_content("#count-skipped") == "1"
        assert ann.text_content("#skipped .skip-note") == "the brand page is down"
        with ann.expect_navigation():
            ann.click("#start")
        # perplexity has 4 edges: the 3 not skipped come first, then the skipped one
        order = []
        while open_edge(ann) is not None:
            order.append(open_edge(ann))
            label(ann, "irrelevant")
        assert len(order) == 4
        assert order[-1] == skipped
        assert skipped not in order[:-1]
        assert ann.text_content("#count-skipped") == "0"


def test_a_refused_label_returns_to_the_filtered_queue_with_the_typed_text(browser: Browser, db: Path) -> None:
    with serve(ReviewConfig(db=db)) as base:
        ann, bob = log_in(browser, base, "ann"), log_in(browser, base, "bob")
        ann.goto(f"{base}/queue?platform=perplexity")
        with ann.expect_navigation():
            ann.click("#start")
        edge = open_edge(ann)
        # bob opens ann's edge by its address (as from a list): it is reserved for her, but nothing stops him typing
        bob.goto(f"{base}/edges/{edge}?platform=perplexity")
        assert bob.locator("#reserved").count() == 1
        bob.fill("#reasoning", "Only the 2024 model has the 20 L tank.")
        bob.fill("#period", "2024")
        label(ann, "supported")
        label(bob, "partial")
        # refused under single review: the reason in one line, his text kept, the perplexity queue around it
        reason = bob.text_content("#refused-reason") or ""
        assert f"edge #{edge} was not recorded" in reason
        assert "\n" not in reason.strip()
        assert bob.input_value("#kept-reasoning") == "Only the 2024 model has the 20 L tank."
        assert bob.input_value("#kept-period") == "2024"
        assert bob.input_value("#kept-label") == "partial"
        assert bob.input_value("select[name=platform]") == "perplexity"
        assert bob.get_attribute("#start", "href") == "/queue/next?platform=perplexity"
        assert [row for row in labels(db) if row[0] == edge] == [(edge, "ann", "supported")]


def test_the_open_page_renews_its_lease_every_minute(browser: Browser, db: Path) -> None:
    clock = ManualClock()
    with serve(ReviewConfig(db=db, clock=clock, lease_seconds=300)) as base:
        ann = log_in(browser, base, "ann")
        ann.clock.install()  # the page's timers run when the test moves them, not by waiting
        with ann.expect_navigation():
            ann.click("#start")
        edge = open_edge(ann)
        taken = lease_expiry(db, edge)
        assert taken == iso(clock() + timedelta(seconds=300))
        clock.advance(100)
        with ann.expect_response(f"**/edges/{edge}/lease") as renewal:
            ann.clock.run_for(60_000)  # one minute of the page's time
        assert renewal.value.status == 204
        # renewed at 100 s on the server's clock: it now runs to 100 + 300 = 400 s
        assert lease_expiry(db, edge) == iso(clock() + timedelta(seconds=300))


def lease_expiry(db: Path, edge: int | None) -> str:
    with sqlite3.connect(db) as conn:
        (expires,) = conn.execute("SELECT expires_at FROM review_leases WHERE edge_pk = ?", (edge,)).fetchone()
    return str(expires)
