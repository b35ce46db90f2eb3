"""The adjudication page in a real headless Chromium at 1366×768: the two reviews in dispute (label, passage,
reasoning) side by side at the top with the decision form beside them, all within the first screen (measured from
the elements' getBoundingClientRect), the evidence below; a reviewer's revision shows as their current review."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from citeaudit.review.app import ReviewConfig
from review_support import ReviewClient, add_account, make_db, serve, set_policy, sign_in
from test_review_browser_day import CLAIM, LONG_ANSWER, day_document

pytest.importorskip("playwright.sync_api")

from playwright.sync_api import Browser, Page

SCREEN = {"width": 1366, "height": 768}
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
# Long texts, as real reviews have: each card scrolls within itself rather than pushing the form off the screen.
ANN_PASSAGE = "Tank capacity: 20 litres, with a steel frame. " * 6
ANN_REASONING = "The spec sheet of the current edition names 20 L for this model; the shop page agrees. " * 15
BOB_PASSAGE = "Tank capacity: 18 L (2019 edition)."
BOB_REASONING = "The 2019 edition says 18 L."


def long_document() -> dict[str, Any]:
    """:func:`day_document` with a long question and long claims (the answer's last six filler lines, then the
    tank sentence: 6 x 57 + 26 = 368 characters), so the top of the page takes more room."""
    doc = day_document()
    doc["protocol"]["questions"][0]["text"] = "Which pressure washer suits a terrace, and why? " * 5
    lines = LONG_ANSWER.split("\n")
    text = "\n".join(lines[-7:])
    assert text.endswith(CLAIM)
    for made in doc["claims"]:
        made["text"] = text
        made["start"], made["end"] = len(LONG_ANSWER) - len(text), len(LONG_ANSWER)
    return doc


def log_in(browser: Browser, base: str, name: str) -> Page:
    page = browser.new_context(viewport=SCREEN).new_page()
    return sign_in(page, base, name)


def rect(page: Page, selector: str) -> dict[str, Any]:
    """The element's box in the viewport, as the browser lays it out."""
    found: dict[str, Any] = page.evaluate(
        "(s) => { const r = document.querySelector(s).getBoundingClientRect();"
        " return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, height: r.height}; }",
        selector,
    )
    return found


def above_the_fold(page: Page, box: dict[str, Any]) -> bool:
    size = page.evaluate("[window.innerWidth, window.innerHeight]")
    return box["top"] >= 0 and box["left"] >= 0 and box["bottom"] <= size[1] and box["right"] <= size[0]


@pytest.mark.parametrize("long_texts", [False, True], ids=["short-claim", "long-claim-and-question"])
def test_the_two_reviews_and_the_decision_form_fit_the_first_screen(
    browser: Browser, tmp_path: Path, long_texts: bool
) -> None:
    db = make_db(tmp_path / "adjudicate.db", long_document() if long_texts else day_document())
    for name, role in (("ann", "reviewer"), ("bob", "reviewer"), ("ada", "adjudicator")):
        add_account(db, name, role)
    set_policy(db, "double")
    with serve(ReviewConfig(db=db)) as base:
        people = {name: ReviewClient(base) for name in ("ann", "bob")}
        for name, client in people.items():
            assert client.login(name).status_code == 303
        done = people["ann"].judge(1, "supported", passage="first try", reasoning="first reasoning")
        assert done.status_code == 303
        assert people["bob"].judge(1, "conflicting", passage=BOB_PASSAGE, reasoning=BOB_REASONING).status_code == 303
        # ann revises: her current review is the revision (partial), still in dispute with bob's conflicting
        assert people["ann"].judge(1, "partial", passage=ANN_PASSAGE, reasoning=ANN_REASONING).status_code == 303
        for client in people.values():
            client.close()

        ada = log_in(browser, base, "ada")
        ada.goto(f"{base}/edges/1")
        assert (ada.text_content("#state") or "").strip() == "disputed"
        ARTIFACTS.mkdir(exist_ok=True)
        ada.screenshot(path=str(ARTIFACTS / f"review-adjudication-1366x768{'-long' if long_texts else ''}.png"))
        assert ada.evaluate("window.scrollY") == 0
        # the two current reviews, in the order the reviewers first labelled: ann (revised), then bob
        assert ada.locator(".dispute-label").count() == 2
        assert ada.locator(".dispute-label .label").all_text_contents() == ["partial", "conflicting"]
        assert [ada.get_attribute(f"#review-{i}", "data-reviewer") for i in (1, 2)] == ["ann", "bob"]
        assert (ada.text_content("#review-1 .passage") or "") == ANN_PASSAGE.strip()
        assert (ada.text_content("#review-2 .reasoning") or "") == BOB_REASONING
        assert "first reasoning" not in (ada.text_content("#adjudication") or "")

        first, second, form = rect(ada, "#review-1"), rect(ada, "#review-2"), rect(ada, "#label-form")
        for box in (first, second, form):
            assert above_the_fold(ada, box), box
        for selector in ("#review-1 .label", "#review-2 .label", "#label-form button[value=unknown]", "#reasoning"):
            assert above_the_fold(ada, rect(ada, selector)), selector
        # side by side: the cards share their top edge, then the form to their right
        assert first["top"] == second["top"]
        assert first["right"] <= second["left"]
        assert second["right"] <= form["left"]
        # the long reasoning scrolls inside ann's card; the evidence starts below the cards
        assert ada.evaluate("(() => { const c = document.querySelector('#review-1'); "
                            "return c.scrollHeight > c.clientHeight; })()")  # fmt: skip
        assert rect(ada, "#workbench")["top"] >= max(first["bottom"], second["bottom"], form["bottom"])
        assert ada.locator("#workbench #answer #claim-in-answer").count() == 1

        # the decision, from the keyboard: the rationale, Esc, then 1 (supported)
        ada.fill("#reasoning", "the current edition is the one sold")
        ada.keyboard.press("Escape")
        with ada.expect_navigation():
            ada.keyboard.press("1")
        assert (ada.text_content("#state") or "").strip() == "adjudicated: supported"
    with sqlite3.connect(db) as conn:
        assert conn.execute(
            "SELECT reviewer, label, stage FROM judgements WHERE edge_pk = 1 AND origin = 'human' ORDER BY pk"
        ).fetchall() == [
            ("ann", "supported", "review"),
            ("bob", "conflicting", "review"),
            ("ann", "partial", "review"),
            ("ada", "supported", "adjudication"),
        ]
