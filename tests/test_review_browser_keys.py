"""The review keys in a real headless Chromium, from the keyboard alone: u undo, s skip and n next act through the
page's elements (#undo-link or a.undo-link, #skip-form, #next-link) and do nothing on a page without them;
? shows the list of every key; no key acts while a text field has the focus.

Each test puts the undo, skip and next elements into the real edge page (replacing any it has), with the ids, form
method and actions the pages use for them, so the keys are tested apart from the routes behind those elements.
Whether a key acted is read from the event itself: the bindings prevent the default of exactly the keys they act
on, which a listener on the window (after the page's own on the document) records."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from citeaudit.review.app import ReviewConfig
from review_support import add_account, make_db, serve, sign_in
from test_review_browser_day import day_document

pytest.importorskip("playwright.sync_api")

from playwright.sync_api import Browser, Page, Request

SCREEN = {"width": 1366, "height": 768}
RECORD_KEYS = (
    "() => { window.keysSeen = [];"
    " window.addEventListener('keydown', (e) => window.keysSeen.push([e.key, e.defaultPrevented])); }"
)
AGREED_ELEMENTS = """([edge, next, undo]) => {
    for (const id of ["skip-form", "next-link", "undo-link"]) {
        document.querySelectorAll("#" + id).forEach((found) => found.remove());
    }
    const csrf = document.querySelector("input[name=csrf]").value;
    const skip = document.createElement("form");
    skip.id = "skip-form"; skip.method = "post"; skip.action = "/edges/" + edge + "/skip";
    skip.innerHTML = '<input type="hidden" name="csrf"><button type="submit">skip</button>';
    skip.querySelector("input").value = csrf;
    const nextLink = document.createElement("a");
    nextLink.id = "next-link"; nextLink.href = next; nextLink.textContent = "next";
    const undoLink = document.createElement("a");
    undoLink.id = "undo-link"; undoLink.href = undo; undoLink.textContent = "undo";
    document.querySelector("main").append(skip, nextLink, undoLink);
}"""


def log_in(browser: Browser, base: str, name: str, errors: list[str]) -> Page:
    page = browser.new_context(viewport=SCREEN).new_page()
    page.on("pageerror", lambda error: errors.append(str(error)))
    return sign_in(page, base, name)


def seen(page: Page) -> list[list[Any]]:
    found: list[list[Any]] = page.evaluate("window.keysSeen")
    return found


def dialog_open(page: Page) -> bool:
    return bool(page.evaluate("document.getElementById('key-help').open"))


def navigation_to(path: str, method: str = "GET") -> Any:
    def matches(request: Request) -> bool:
        return request.is_navigation_request() and request.method == method and request.url.endswith(path)

    return matches


def test_u_s_n_act_through_the_page_elements_and_never_while_typing(browser: Browser, tmp_path: Path) -> None:
    db = make_db(tmp_path / "keys.db", day_document())
    add_account(db, "ann", "reviewer")
    errors: list[str] = []
    with serve(ReviewConfig(db=db)) as base:
        ann = log_in(browser, base, "ann", errors)
        edge_url = f"{base}/edges/1?platform=perplexity"
        ann.goto(edge_url)
        ann.evaluate(AGREED_ELEMENTS, [1, "/queue/next?platform=perplexity", "/edges/2"])
        ann.evaluate(RECORD_KEYS)

        # typed into the reasoning and the passage search, the keys are text: none acted, the page stayed
        ann.focus("#reasoning")
        ann.keyboard.type("usn?")
        ann.keyboard.press("Escape")
        ann.keyboard.press("/")
        assert ann.evaluate("document.activeElement.id") == "passage-search"
        ann.keyboard.type("nus")
        assert ann.input_value("#reasoning") == "usn?"
        assert ann.input_value("#passage-search") == "nus"
        assert seen(ann) == [[key, False] for key in "usn?"] + [["Escape", False], ["/", True]] + [
            [key, False] for key in "nus"
        ]
        assert not dialog_open(ann)
        assert ann.url == edge_url

        # out of the text field: n goes to the next edge of the same filtered queue
        ann.keyboard.press("Escape")
        # (the next edge may be this one again: the navigation is waited for, not a change of address)
        with ann.expect_navigation(), ann.expect_request(navigation_to("/queue/next?platform=perplexity")):
            ann.keyboard.press("n")
        assert ann.url.startswith(f"{base}/edges/")
        assert "platform=perplexity" in ann.url

        # s posts the skip form
        ann.goto(edge_url)
        ann.evaluate(AGREED_ELEMENTS, [1, "/queue/next?platform=perplexity", "/edges/2"])
        with ann.expect_navigation(), ann.expect_request(navigation_to("/edges/1/skip", "POST")):
            ann.keyboard.press("s")

        # u follows the undo link
        ann.goto(edge_url)
        ann.evaluate(AGREED_ELEMENTS, [1, "/queue/next?platform=perplexity", "/edges/2"])
        ann.keyboard.press("u")
        ann.wait_for_url(f"{base}/edges/2")

        # on a page without the elements the three keys do nothing (no default prevented, no script error): the
        # page's own undo link, skip form and next link are taken out first
        ann.goto(edge_url)
        ann.evaluate(
            "() => document.querySelectorAll('#skip-form, #next-link, #undo-link, a.undo-link')"
            ".forEach((element) => element.remove())"
        )
        ann.evaluate(RECORD_KEYS)
        for key in "usn":
            ann.keyboard.press(key)
        assert seen(ann) == [["u", False], ["s", False], ["n", False]]
        assert ann.url == edge_url

        # on a list of recent labels, u follows the first a.undo-link
        ann.goto(f"{base}/queue")
        ann.evaluate(
            "() => { for (const href of ['/edges/3', '/edges/4']) { const a = document.createElement('a');"
            " a.className = 'undo-link'; a.href = href; a.textContent = 'undo';"
            " document.querySelector('main').append(a); } }"
        )
        ann.keyboard.press("u")
        ann.wait_for_url(f"{base}/edges/3")
    assert errors == []
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM judgements WHERE origin = 'human'").fetchone() == (0,)


EVERY_KEY = ["1-5", "Enter", "Tab", "Escape", "/", "u", "s", "n", "?"]


def test_question_mark_lists_every_key(browser: Browser, tmp_path: Path) -> None:
    db = make_db(tmp_path / "help.db", day_document())
    add_account(db, "ann", "reviewer")
    errors: list[str] = []
    with serve(ReviewConfig(db=db)) as base:
        ann = log_in(browser, base, "ann", errors)
        ann.goto(f"{base}/edges/1")
        # the edge page names its keys beside the form
        assert ann.locator("#key-hint kbd").all_text_contents() == ["1", "5", "Esc", "/", "u", "s", "n", "?"]
        assert not ann.locator("#key-help").is_visible()

        ann.keyboard.press("?")
        assert dialog_open(ann)
        assert ann.locator("#key-help").is_visible()
        rows = ann.locator("#key-table tr")
        assert [rows.nth(i).get_attribute("data-key") for i in range(rows.count())] == EVERY_KEY
        assert "Enter in a text field never submits" in (ann.text_content("#key-help") or "")

        # while the list is open, a label key records nothing; ? hides it again
        ann.keyboard.press("1")
        assert dialog_open(ann)
        ann.keyboard.press("?")
        assert not dialog_open(ann)
        # Esc closes it too
        ann.keyboard.press("?")
        assert dialog_open(ann)
        ann.keyboard.press("Escape")
        assert not dialog_open(ann)

        # typed into a text field, ? is a character and the list stays shut
        ann.focus("#reasoning")
        ann.keyboard.type("why?")
        assert ann.input_value("#reasoning") == "why?"
        assert not dialog_open(ann)
        # Enter in the period field still submits nothing; 2 after Esc labels (partial) and goes on
        ann.focus("#period")
        ann.keyboard.type("2026")
        ann.keyboard.press("Enter")
        ann.keyboard.press("Escape")
        with ann.expect_navigation():
            ann.keyboard.press("2")
    assert errors == []
    with sqlite3.connect(db) as conn:
        # one judgement: the 2 (partial) pressed last, with the typed reasoning and period
        assert conn.execute("SELECT label, reasoning, period FROM judgements WHERE origin = 'human'").fetchall() == [
            ("partial", "why?", "2026")
        ]
