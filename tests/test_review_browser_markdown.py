"""Claims and answers as Markdown in a real headless Chromium: bold, lists and code render; links show their
address as text and are never anchors; raw HTML, javascript: links, entities and autolinks stay inert on the
edge, cross-pair and triage pages; the claim stays highlighted inside its rendered answer and scrolled into view."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from builders import answer, claim, document
from citeaudit.core.misattribution import CrossCandidate, CrossKind
from citeaudit.review.app import ReviewConfig
from citeaudit.store import Store
from citeaudit.store.cross_pairs import propose_cross_pairs
from citeaudit.store.review import ReviewStore
from review_support import add_account, edge_pk, make_db, serve, sign_in

pytest.importorskip("playwright.sync_api")

from playwright.sync_api import Browser, Page

SCREEN = {"width": 1366, "height": 768}
CLAIM = "The AX220 has a **20 L** tank, see [x](javascript:alert('claim')) <img src=x onerror=\"alert('claim')\">."
# What the claim reads as once rendered: the bold markers gone, the rest (not a link, not HTML) kept as text.
CLAIM_SHOWN = "The AX220 has a 20 L tank, see [x](javascript:alert('claim')) <img src=x onerror=\"alert('claim')\">."
PAYLOADS = (
    "# Overview\n\n"
    "Click [x](javascript:alert('link')) or [the spec](https://brand.com/ax220) or <https://brand.com/auto>.\n\n"
    "<img src=x onerror=\"alert('img')\">\n\n"
    "**<script>alert('bold')</script>** and &lt;b&gt;entity&lt;/b&gt; &#60;script&#62;\n\n"
    "- level one\n  - level two\n    - level three\n\n"
    "Use `<i>code</i>` here.\n\n"
)
# 60 lines of filler first, so the claim sits far below the answer box's first screen.
FILLER = "".join(f"Line {i}: the AX220 is a pressure washer.\n" for i in range(60)) + "\n"
ANSWER = PAYLOADS + FILLER + CLAIM + "\n\nThe end."


def markdown_document() -> dict[str, Any]:
    """Answers a1 and a2 with the same Markdown text and the claim at the same span. c1 (a1) cites shop.example,
    labelled irrelevant, so brand.com (cited by a1) is its cross pair; c2 (a2) has a triage suggestion."""
    start = ANSWER.index(CLAIM)
    cited = ["https://brand.com/ax220", "https://shop.example/ax"]
    answers = [answer(aid, text=ANSWER, citations=cited) for aid in ("a1", "a2")]
    claims = [
        claim(cid, aid, text=CLAIM, start=start, end=start + len(CLAIM)) for cid, aid in (("c1", "a1"), ("c2", "a2"))
    ]
    triage = {
        "label": "irrelevant",
        "origin": "model",
        "reviewer": "triage",
        "judge": "triage",
        "reasoning": "irrelevant: similarity 0.100 < 0.280",
    }
    edges = [
        {"claim_id": "c1", "url": "https://shop.example/ax", "label": "irrelevant"},
        {"claim_id": "c2", "url": "https://shop.example/ax", "judgements": [triage]},
    ]
    return document(answers, claims, edges)


def log_in(browser: Browser, base: str, name: str, dialogs: list[str]) -> Page:
    page = browser.new_context(viewport=SCREEN).new_page()
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    return sign_in(page, base, name)


def assert_inert(page: Page) -> None:
    """No anchor, image or script came from the claim or the answer."""
    for selector in ("main img", "main script", "#claim a", "#answer a", "main b", "main i"):
        assert page.locator(selector).count() == 0, selector


def assert_claim_rendered(page: Page, selector: str) -> None:
    assert page.locator(f"{selector} strong").all_text_contents() == ["20 L"]
    assert (page.text_content(selector) or "").strip().endswith(CLAIM_SHOWN)


@pytest.fixture
def markdown_db(tmp_path: Path) -> Path:
    db = make_db(tmp_path / "md.db", markdown_document())
    with Store(db) as store, store.transaction() as tx:
        assert propose_cross_pairs(tx, 1, [CrossCandidate("c1", "https://brand.com/ax220", CrossKind.CO_CITED)]) == 1
    add_account(db, "ann", "reviewer")
    with ReviewStore(db) as store:
        store.accounts.set_setting("test", "show_model_suggestions", "true")
    return db


def test_the_edge_page_renders_markdown_inert_with_the_claim_highlighted(browser: Browser, markdown_db: Path) -> None:
    dialogs: list[str] = []
    with serve(ReviewConfig(db=markdown_db)) as base:
        ann = log_in(browser, base, "ann", dialogs)
        ann.goto(f"{base}/edges/{edge_pk(markdown_db, 'c2', 'https://shop.example/ax')}")
        assert_inert(ann)
        assert_claim_rendered(ann, "#claim")
        answer_text = ann.text_content("#answer") or ""
        # links: their text, then the address as text; the javascript: link is no link, its source stays text
        assert ann.locator("#answer .md-link").all_text_contents() == ["the spec", "https://brand.com/auto"]
        assert ann.locator("#answer .md-url").all_text_contents() == ["(https://brand.com/ax220)"]
        assert "[x](javascript:alert('link'))" in answer_text
        # raw HTML and entities are text
        assert "<img src=x onerror=\"alert('img')\">" in answer_text
        assert ann.locator("#answer strong").first.text_content() == "<script>alert('bold')</script>"
        assert "<b>entity</b> <script>" in answer_text
        # three nested list levels, inline code as code, the heading as a heading
        assert ann.locator("#answer ul ul ul li").all_text_contents() == ["level three"]
        assert ann.locator("#answer code").all_text_contents() == ["<i>code</i>"]
        assert ann.locator("#answer h1").all_text_contents() == ["Overview"]
        # the claim is marked in three runs (before the bold, the bold, after it) that read as the claim
        marks = ann.locator("#answer mark#claim-in-answer, #answer mark.claim-part").all_text_contents()
        assert marks == ["The AX220 has a ", "20 L", CLAIM_SHOWN.split("20 L")[1]]
        # ... and is scrolled into view inside the answer box, with the page itself unscrolled
        assert ann.evaluate("window.scrollY") == 0
        box = ann.locator("#answer").bounding_box()
        mark = ann.locator("#claim-in-answer").bounding_box()
        assert box is not None
        assert mark is not None
        assert box["y"] <= mark["y"]
        assert mark["y"] + mark["height"] <= box["y"] + box["height"]
    assert dialogs == []


def test_the_cross_pair_and_triage_pages_render_the_claim_inert(browser: Browser, markdown_db: Path) -> None:
    dialogs: list[str] = []
    with serve(ReviewConfig(db=markdown_db)) as base:
        ann = log_in(browser, base, "ann", dialogs)
        ann.goto(f"{base}/cross-pairs/1")
        assert_inert(ann)
        assert_claim_rendered(ann, "#claim")
        assert ann.locator("#answer ul ul ul li").all_text_contents() == ["level three"]
        assert ann.locator("#answer .md-url").all_text_contents() == ["(https://brand.com/ax220)"]

        ann.goto(f"{base}/triage")
        # one offer: c2's edge (c1's edge carries a person's label, so it is not offered)
        assert ann.locator("#triage li").count() == 1
        assert_claim_rendered(ann, "#triage .claim .md")
        assert ann.locator("#triage .claim a, main img, main script").count() == 0
    assert dialogs == []
