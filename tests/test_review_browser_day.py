"""A reviewer's day in a real headless Chromium at 1366×768: the platform filter reads the run and survives each
judgement, the edge page fits one screen with the claim scrolled into view and the labels defined, a selected
passage is quoted with its offsets, typed reasoning survives an expired session, and the double-review rules hold
in the browser (no other reviewer's groups, no third review, a revision does not end a dispute)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from builders import answer, claim, document
from citeaudit.review.app import ReviewConfig
from review_support import PASSWORD, add_account, make_db, serve, set_policy, sign_in

pytest.importorskip("playwright.sync_api")

from playwright.sync_api import Browser, Page

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
SCREEN = {"width": 1366, "height": 768}
CLAIM = "The AX220 has a 20 L tank."
QUOTE = "Tank capacity: 20 litres, with a steel frame."
# A long answer: the claim comes after 60 lines of other text, far below the answer box's first screen.
LONG_ANSWER = "".join(f"Line {i}: the AX220 is a pressure washer for outdoor use.\n" for i in range(60)) + CLAIM


def day_document() -> dict[str, Any]:
    """Two platform runs whose answers carry no platform of their own (as imported engine answers do): r1 on
    perplexity (answers a1, a2), r2 on gemini (a3). Each answer has one claim citing two sources."""
    answers = []
    for aid, run in (("a1", "r1"), ("a2", "r1"), ("a3", "r2")):
        made = answer(aid, run=run, platform=None, text=LONG_ANSWER)
        made["citations"] = [
            {"url": f"https://brand.com/{aid}", "quote": QUOTE},
            {"url": f"https://shop.example/{aid}", "quote": "Shipping takes two days."},
        ]
        answers.append(made)
    claims = []
    for aid in ("a1", "a2", "a3"):
        made = claim(f"c-{aid}", aid, start=len(LONG_ANSWER) - len(CLAIM), end=len(LONG_ANSWER))
        made["text"] = CLAIM
        claims.append(made)
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


def log_in(browser: Browser, base: str, name: str) -> Page:
    page = browser.new_context(viewport=SCREEN).new_page()
    return sign_in(page, base, name)


def on_screen(page: Page, selector: str) -> bool:
    """Whether the element's box lies inside the 1366×768 window as it is (no scrolling)."""
    box = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    return box["y"] >= 0 and box["x"] >= 0 and box["y"] + box["height"] <= 768 and box["x"] + box["width"] <= 1366


def edge_platform(db: Path, edge: int) -> str:
    with sqlite3.connect(db) as conn:
        (platform,) = conn.execute(
            "SELECT r.platform FROM edges e JOIN claims c ON c.pk = e.claim_pk JOIN answers a ON a.pk = c.answer_pk "
            "JOIN runs r ON r.pk = a.run_pk WHERE e.pk = ?",
            (edge,),
        ).fetchone()
    return str(platform)


def test_a_filtered_day_on_one_screen(browser: Browser, tmp_path: Path) -> None:
    db = make_db(tmp_path / "day.db", day_document())
    add_account(db, "ann", "reviewer")
    with serve(ReviewConfig(db=db)) as base:
        ann = log_in(browser, base, "ann")
        ann.goto(f"{base}/queue?platform=perplexity")
        # r1's answers a1 and a2: 2 answers x 2 sources = 4 edges, each showing the run's platform
        rows = ann.locator("#queue tbody tr")
        assert rows.count() == 4
        assert ann.locator("#queue tbody td:nth-child(5)").all_text_contents() == ["perplexity"] * 4
        ann.locator("#queue tbody a").first.click()
        ann.wait_for_load_state()
        assert "platform=perplexity" in ann.url

        # one screen: claim, claim in the answer, candidate passages, label buttons and definitions, no scrolling
        assert ann.evaluate("window.scrollY") == 0
        for selector in (
            "#claim",
            "#passages li",
            "#label-form button[value=supported]",
            "#label-form button[value=unknown]",
            "#label-definitions",
            "#progress",
        ):
            assert on_screen(ann, selector), selector
        # the claim at the end of the long answer is scrolled into view inside the answer box
        answer_box = ann.locator("#answer").bounding_box()
        mark = ann.locator("#claim-in-answer").bounding_box()
        assert answer_box is not None
        assert mark is not None
        assert answer_box["y"] <= mark["y"]
        assert mark["y"] + mark["height"] <= answer_box["y"] + answer_box["height"]
        assert "contradicts" in (ann.text_content("#label-definitions") or "")
        # 0 reviewed of the 6 edges waiting for her
        assert (ann.text_content("#progress") or "").strip() == "your progress: 0 / 6 done"
        ARTIFACTS.mkdir(exist_ok=True)
        ann.screenshot(path=str(ARTIFACTS / "review-edge-1366x768.png"))

        # claim terms are marked in the passages: "Tank" and "20" of QUOTE (from the claim's "tank" and "20")
        first_quote = ann.locator(f'#passages .passage-text:has-text("{QUOTE[:13]}")').first
        assert first_quote.locator("mark.term").all_text_contents() == ["Tank", "20"]

        # selecting "20 litres" with the mouse quotes it, with its place: characters 15..24 of the passage
        box = ann.evaluate(
            """(span) => {
                const text = span.textContent;
                const at = text.indexOf("20 litres");
                const walker = document.createTreeWalker(span, NodeFilter.SHOW_TEXT);
                let seen = 0, node, start = null, end = null;
                while ((node = walker.nextNode())) {
                    const len = node.textContent.length;
                    if (start === null && at < seen + len) start = [node, at - seen];
                    if (end === null && at + 9 <= seen + len) end = [node, at + 9 - seen];
                    seen += len;
                }
                const first = document.createRange();
                first.setStart(start[0], start[1]); first.setEnd(start[0], start[1] + 1);
                const last = document.createRange();
                last.setStart(end[0], end[1] - 1); last.setEnd(end[0], end[1]);
                const a = first.getBoundingClientRect(), b = last.getBoundingClientRect();
                return {x1: a.left + 1, y1: a.top + a.height / 2, x2: b.right - 1, y2: b.top + b.height / 2};
            }""",
            first_quote.element_handle(),
        )
        ann.mouse.move(box["x1"], box["y1"])
        ann.mouse.down()
        ann.mouse.move(box["x2"], box["y2"], steps=5)
        ann.mouse.up()
        assert ann.input_value("#passage") == "20 litres"
        index = first_quote.get_attribute("data-passage")
        # QUOTE.index("20 litres") = len("Tank capacity: ") = 15; 15 + 9 = 24
        assert ann.input_value("#passage-offsets") == f"passage {index}, characters 15-24"

        # label by keyboard: the next edge comes from the same filtered queue
        first_edge = int(ann.url.split("/edges/")[1].split("?")[0])
        with ann.expect_navigation():
            ann.keyboard.press("1")
        ann.wait_for_load_state()
        assert "/edges/" in ann.url
        assert "platform=perplexity" in ann.url
        next_edge = int(ann.url.split("/edges/")[1].split("?")[0])
        assert next_edge != first_edge
        assert edge_platform(db, next_edge) == "perplexity"
        assert (ann.text_content("#platform") or "").strip() == "perplexity"
    with sqlite3.connect(db) as conn:
        passage, reasoning = conn.execute(
            "SELECT passage, reasoning FROM judgements WHERE edge_pk = ? AND reviewer = 'ann'", (first_edge,)
        ).fetchone()
        (after,) = conn.execute("SELECT after FROM audit_log WHERE action = 'judgement'").fetchone()
    assert passage == "20 litres"
    assert reasoning is None
    assert f"passage {index}, characters 15-24" in after


def test_typed_reasoning_survives_an_expired_session(browser: Browser, tmp_path: Path) -> None:
    db = make_db(tmp_path / "expiry.db", day_document())
    add_account(db, "ann", "reviewer")
    with serve(ReviewConfig(db=db)) as base:
        ann = log_in(browser, base, "ann")
        ann.goto(f"{base}/edges/1")
        ann.fill("#reasoning", "the spec sheet names 20 L for this model")
        ann.fill("#period", "2026")
        # the session ends on the server (as at expiry) while she is typing
        with sqlite3.connect(db) as conn:
            conn.execute("DELETE FROM review_sessions")
        ann.click("#label-form button[value=supported]")
        ann.wait_for_load_state()
        assert (ann.text_content("#error-title") or "") == "Logged out"
        ann.click("#log-in-again")
        ann.fill("input[name=name]", "ann")
        ann.fill("input[name=password]", PASSWORD)
        ann.click("button[type=submit]")
        ann.wait_for_url(f"{base}/edges/1?draft=1")
        assert ann.input_value("#reasoning") == "the spec sheet names 20 L for this model"
        assert ann.input_value("#period") == "2026"
        with sqlite3.connect(db) as conn:
            assert conn.execute("SELECT count(*) FROM judgements WHERE origin = 'human'").fetchone() == (0,)
        with ann.expect_navigation():
            ann.click("#label-form button[value=supported]")
        ann.wait_for_load_state()
        # recorded with the kept text; the draft is gone once the next page loaded
        assert ann.evaluate("window.localStorage.getItem('citeaudit-draft:edge-1-review')") is None
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT reasoning, period FROM judgements WHERE origin = 'human'").fetchall() == [
            ("the spec sheet names 20 L for this model", "2026")
        ]


def test_double_review_rules_hold_in_the_browser(browser: Browser, tmp_path: Path) -> None:
    db = make_db(tmp_path / "double.db", day_document())
    for name, role in (("ann", "reviewer"), ("bob", "reviewer"), ("cat", "reviewer"), ("ada", "adjudicator")):
        add_account(db, name, role)
    set_policy(db, "double")
    with serve(ReviewConfig(db=db)) as base:
        ann = log_in(browser, base, "ann")
        ann.goto(f"{base}/edges/1")
        # ann records an evidence group for the claim (both its sources together)
        ann.check("#group-form input[name=sources] >> nth=0")
        ann.check("#group-form input[name=sources] >> nth=1")
        ann.fill("#group-form textarea[name=reasoning_steps]", "ANN-JOINT-ARGUMENT")
        ann.click("#group-form button[type=submit]")
        ann.wait_for_load_state()
        assert "ANN-JOINT-ARGUMENT" in ann.content()
        with ann.expect_navigation():
            ann.click("#label-form button[value=supported]")

        bob = log_in(browser, base, "bob")
        bob.goto(f"{base}/edges/1")
        assert "ANN-JOINT-ARGUMENT" not in bob.content()
        assert "by ann" not in bob.content()
        with bob.expect_navigation():
            bob.click("#label-form button[value=conflicting]")

        # ann changes her mind to bob's label: recorded, the edge stays disputed for an adjudicator
        ann.goto(f"{base}/edges/1")
        assert "Revise your label" in (ann.text_content("#label-form h2") or "")
        with ann.expect_navigation():
            ann.click("#label-form button[value=conflicting]")
        ada = log_in(browser, base, "ada")
        ada.goto(f"{base}/edges/1")
        assert (ada.text_content("#state") or "").strip() == "disputed"
        assert "ANN-JOINT-ARGUMENT" in ada.content()

        # a third reviewer opening the edge by its URL gets no label form
        cat = log_in(browser, base, "cat")
        cat.goto(f"{base}/edges/1")
        assert cat.locator("#label-form").count() == 0
        assert "independent review(s)" in (cat.text_content("#refusal") or "")
    with sqlite3.connect(db) as conn:
        assert conn.execute(
            "SELECT reviewer, label FROM judgements WHERE edge_pk = 1 AND origin = 'human' ORDER BY pk"
        ).fetchall() == [("ann", "supported"), ("bob", "conflicting"), ("ann", "conflicting")]
