"""The review UI in a real headless Chromium driven by Playwright: two reviewers label one edge blind and disagree,
the adjudicator resolves it and the score moves; labelling by keyboard alone; markup in answers stays inert."""

from __future__ import annotations

from pathlib import Path

import pytest

from citeaudit.review.app import ReviewConfig
from review_support import add_account, edge_pk, make_db, serve, set_policy, sign_in

pytest.importorskip("playwright.sync_api")

from playwright.sync_api import Browser, Page

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"


def log_in(browser: Browser, base: str, name: str, dialogs: list[str]) -> Page:
    """A fresh browser context (its own cookies) logged in through the form."""
    context = browser.new_context()
    page = context.new_page()
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    return sign_in(page, base, name)


def precision_cell(page: Page, base: str) -> str:
    page.goto(f"{base}/score")
    return str(page.text_content('tr[data-metric="precision"] td.fraction'))


def test_blind_double_review_adjudication_and_score(browser: Browser, tmp_path: Path) -> None:
    db = make_db(tmp_path / "ui.db")
    for name, role in (("ann", "reviewer"), ("bob", "reviewer"), ("ada", "adjudicator")):
        add_account(db, name, role)
    set_policy(db, "double")
    edge = edge_pk(db, "c1", "https://brand.com/ax220")
    dialogs: list[str] = []
    with serve(ReviewConfig(db=db)) as base:
        ada = log_in(browser, base, "ada", dialogs)
        # 5 edges, none with a final label yet
        assert precision_cell(ada, base) == "0/5"

        ann = log_in(browser, base, "ann", dialogs)
        ann.goto(f"{base}/edges/{edge}")
        assert ann.text_content("#claim-in-answer") == "The AX220 has a 20 L tank."
        ann.fill("#reasoning", "spec table says 20 L")
        ann.click("button[value=supported]")
        ann.wait_for_load_state()

        # bob labels with the keyboard alone: Tab to the passage field, type, Esc, then "3" (conflicting)
        bob = log_in(browser, base, "bob", dialogs)
        bob.goto(f"{base}/edges/{edge}")
        body = bob.content()
        assert "spec table says 20 L" not in body
        assert "by ann" not in body
        ARTIFACTS.mkdir(exist_ok=True)
        bob.screenshot(path=str(ARTIFACTS / "review-edge-page.png"), full_page=True)
        for _ in range(60):
            if bob.evaluate("document.activeElement && document.activeElement.id") == "passage":
                break
            bob.keyboard.press("Tab")
        assert bob.evaluate("document.activeElement.id") == "passage"
        bob.keyboard.type("Tank capacity: 18 L")
        bob.keyboard.press("Escape")
        with bob.expect_navigation():
            bob.keyboard.press("3")

        # disputed: still no final label, precision unchanged
        assert precision_cell(ada, base) == "0/5"
        ada.goto(f"{base}/queue?needs=adjudicate")
        ada.click(f'tr[data-edge="{edge}"] a')
        assert (ada.text_content("#state") or "").startswith("disputed")
        judgements = ada.text_content("#all-judgements")
        assert judgements is not None
        for expected in ("supported", "by ann", "conflicting", "by bob", "Tank capacity: 18 L"):
            assert expected in judgements
        ada.fill("#reasoning", "the spec table is the current edition")
        ada.click("button[value=supported]")
        ada.wait_for_load_state()
        assert (ada.text_content("#state") or "").strip() == "adjudicated: supported"
        # 1 supported of 5 unique edges
        assert precision_cell(ada, base) == "1/5"

        # the markup in the answer, the title-only source and the javascript: link never ran
        for claim_id, key in (
            ("c2", "<script>alert('title')</script> Outdoor use guide"),
            ("c2", "javascript:alert('link')"),
        ):
            bob.goto(f"{base}/edges/{edge_pk(db, claim_id, key)}")
            assert bob.locator("#answer img").count() == 0
            assert bob.locator('a[href^="javascript"]').count() == 0
        assert dialogs == []


def test_cross_pair_double_review_dispute_and_adjudication(browser: Browser, tmp_path: Path) -> None:
    from builders import answer, claim, document
    from citeaudit.core.misattribution import CrossCandidate, CrossKind
    from citeaudit.scoring.paths import misattribution_path
    from citeaudit.store import Store
    from citeaudit.store.cross_pairs import propose_cross_pairs

    # c1 cites shop.example only, labelled irrelevant: at risk; brand.com/ax220 is cited by the same answer.
    a1 = answer("a1", citations=["https://brand.com/ax220", "https://shop.example/ax"])
    c1 = claim("c1", "a1", text="The AX220 has a 20 L tank.")
    doc = document([a1], [c1], [{"claim_id": "c1", "url": "https://shop.example/ax", "label": "irrelevant"}])
    db = make_db(tmp_path / "cross.db", doc)
    with Store(db) as store, store.transaction() as tx:
        added = propose_cross_pairs(tx, 1, [CrossCandidate("c1", "https://brand.com/ax220", CrossKind.CO_CITED)])
    assert added == 1
    for name, role in (("ann", "reviewer"), ("bob", "reviewer"), ("ada", "adjudicator")):
        add_account(db, name, role)
    set_policy(db, "double")
    dialogs: list[str] = []
    with serve(ReviewConfig(db=db)) as base:
        ann = log_in(browser, base, "ann", dialogs)
        ann.goto(f"{base}/cross-pairs")
        ann.click("#cross-pairs a")
        assert ann.text_content("#claim") == "The AX220 has a 20 L tank."
        ann.fill("#passage", "Tank: 20 L")
        ann.click("button[value=supported]")
        ann.wait_for_url(f"{base}/cross-pairs")

        bob = log_in(browser, base, "bob", dialogs)
        bob.goto(f"{base}/cross-pairs/1")
        assert "Tank: 20 L" not in bob.content()  # blind: ann's label and passage are not shown
        bob.click("button[value=irrelevant]")
        bob.wait_for_url(f"{base}/cross-pairs")

        ada = log_in(browser, base, "ada", dialogs)
        ada.goto(f"{base}/cross-pairs/1")
        assert ada.text_content("#state") == "disputed"
        ada.fill("#reasoning", "the spec page states the tank size")
        ada.click("button[value=supported]")
        ada.wait_for_url(f"{base}/cross-pairs")
        ada.goto(f"{base}/cross-pairs/1")
        assert ada.text_content("#state") == "adjudicated: supported"
    assert dialogs == []
    report, _ = misattribution_path(db)
    # one claim at risk (c1), its cross pair adjudicated supported: 1 of 1, with ann's passage
    assert (report.rate.numerator, report.rate.denominator) == (1, 1)
    assert report.cases[0].passage == "Tank: 20 L"
