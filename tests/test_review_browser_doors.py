"""The review UI in a real headless Chromium: nothing a reviewer did not choose is recorded, and the pages follow
the one set of rules. A pending cross pair is blind to an adjudicator; a retired claim's edge takes no label (its
page says why, a forged post is refused); drafts belong to one account and go at logout; Enter in a text field
never submits a label."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from builders import answer, claim, document
from citeaudit.review.app import ReviewConfig
from review_support import ReviewClient, add_account, edge_pk, make_db, serve, set_policy, sign_in
from test_cross_pair_policy import PAIR, cross_db

pytest.importorskip("playwright.sync_api")

from playwright.sync_api import Browser, BrowserContext, Page

Cli = Callable[..., Result]
URL = "https://brand.com/ax220"


def log_in(context: BrowserContext | Page, base: str, name: str) -> Page:
    """Log in through the form, in a new page of ``context`` (or on ``page``, the same browser profile)."""
    page = context if isinstance(context, Page) else context.new_page()
    return sign_in(page, base, name)


def human_labels(db: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(db) as con:
        return [
            (str(r), str(lab))
            for r, lab in con.execute("SELECT reviewer, label FROM judgements WHERE origin = 'human' ORDER BY pk")
        ]


def test_a_pending_cross_pair_is_blind_to_an_adjudicator(browser: Browser, tmp_path: Path) -> None:
    db = cross_db(tmp_path / "cross.db", "double")
    with serve(ReviewConfig(db=db)) as base:
        ann = log_in(browser.new_context(), base, "ann")
        ann.goto(f"{base}/cross-pairs/{PAIR}")
        ann.fill("#reasoning", "ANN-REASONING")
        with ann.expect_navigation():
            ann.click("#label-form button[value=supported]")
        # ada, an adjudicator, has not been asked to adjudicate: the pair is pending for her like for anyone
        ada = log_in(browser.new_context(), base, "ada")
        ada.goto(f"{base}/cross-pairs/{PAIR}")
        body = ada.content()
        assert "ANN-REASONING" not in body
        assert "by ann" not in body
        assert ada.locator("#state").count() == 0
        assert ada.locator("#all-judgements").count() == 0
        assert ada.input_value('#label-form input[name="stage"]') == "review"
        # the list page shows her no state of it either
        ada.goto(f"{base}/cross-pairs")
        row = ada.text_content(f'#cross-pairs tr[data-pk="{PAIR}"]') or ""
        assert "labelled" not in row
        assert "pending" not in row
        # she reviews it as the second reviewer, and disagrees: now disputed
        ada.goto(f"{base}/cross-pairs/{PAIR}")
        with ada.expect_navigation():
            ada.click("#label-form button[value=irrelevant]")
        # eve, who reviewed nothing, is asked to adjudicate: she sees both reviews and the state
        eve = log_in(browser.new_context(), base, "eve")
        eve.goto(f"{base}/cross-pairs/{PAIR}")
        assert "ANN-REASONING" in eve.content()
        assert (eve.text_content("#state") or "").strip() == "disputed"
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT reviewer, stage, label FROM cross_judgements WHERE origin = 'human'").fetchall()
    assert rows == [("ann", "review", "supported"), ("ada", "review", "irrelevant")]


def test_a_retired_claims_edge_offers_no_form_and_refuses_a_post(browser: Browser, tmp_path: Path, cli: Cli) -> None:
    doc = document(
        [answer("a1", citations=[URL])], [claim("c1", "a1", start=0, end=20)], [{"claim_id": "c1", "url": URL}]
    )
    db = make_db(tmp_path / "retired.db", doc)
    add_account(db, "ann", "reviewer")
    edge = edge_pk(db, "c1", URL)
    # li shortens c1's span: a new claim set in which c1 is replaced (retired) by a new claim
    add_account(db, "li", "reviewer")
    edited = cli("claim", "edit", "c1", "--end", "10", "--reviewer", "li", "--db", db)
    assert edited.exit_code == 0, edited.stderr
    with serve(ReviewConfig(db=db)) as base:
        ann = log_in(browser.new_context(), base, "ann")
        ann.goto(f"{base}/edges/{edge}")
        assert ann.locator("#label-form").count() == 0
        refusal = ann.text_content("#refusal") or ""
        assert "claim 'c1' was retired by claim set" in refusal
        assert "edit" in refusal
        assert "by li" in refusal
        # a post made by hand (the form's fields, a fresh submission id) is refused and records nothing
        client = ReviewClient(base)
        try:
            assert client.login("ann").status_code == 303
            client.get(f"/edges/{edge}")
            posted = client.post(f"/edges/{edge}/judgements", {"label": "supported", "submission": "forged-1"})
            assert posted.status_code == 409
            assert "was retired by claim set" in posted.text
        finally:
            client.close()
    assert human_labels(db) == []


def test_drafts_belong_to_one_account_and_go_at_logout(browser: Browser, tmp_path: Path) -> None:
    db = make_db(tmp_path / "drafts.db")
    for name in ("ann", "bob"):
        add_account(db, name, "reviewer")
    edge = edge_pk(db, "c1", URL)
    with serve(ReviewConfig(db=db)) as base:
        shared = browser.new_context()  # one browser profile, two people one after the other
        page = log_in(shared, base, "ann")
        page.goto(f"{base}/edges/{edge}")
        page.fill("#reasoning", "ANN-DRAFT")
        page.select_option("#severity", "critical")
        # her session ends on the server (as at expiry), and bob logs in at the same browser: not his draft
        with sqlite3.connect(db) as con:
            con.execute("DELETE FROM review_sessions")
        log_in(page, base, "bob")
        page.goto(f"{base}/edges/{edge}")
        assert page.input_value("#reasoning") == ""
        assert page.input_value("#severity") == ""
        # ann comes back: her draft is there; she logs out, and it is gone for whoever comes next
        with sqlite3.connect(db) as con:
            con.execute("DELETE FROM review_sessions")
        log_in(page, base, "ann")
        page.goto(f"{base}/edges/{edge}")
        assert page.input_value("#reasoning") == "ANN-DRAFT"
        with page.expect_navigation():
            page.click("form[action='/logout'] button[type=submit]")
        assert page.evaluate("Object.keys(localStorage).filter(k => k.startsWith('citeaudit-draft:')).length") == 0
        log_in(page, base, "ann")
        page.goto(f"{base}/edges/{edge}")
        assert page.input_value("#reasoning") == ""
    assert human_labels(db) == []


def test_enter_in_a_text_field_never_submits_a_label(browser: Browser, tmp_path: Path) -> None:
    db = make_db(tmp_path / "enter.db")
    add_account(db, "ann", "reviewer")
    set_policy(db, "single")
    edge = edge_pk(db, "c1", URL)
    with serve(ReviewConfig(db=db)) as base:
        page = log_in(browser.new_context(), base, "ann")
        page.goto(f"{base}/edges/{edge}")
        # count submissions without letting one leave the page: the submit event of an implicit submission is
        # fired while the key is handled, so it is counted before press() returns
        page.evaluate(
            "window.submits = 0; window.countSubmit = e => { window.submits += 1; e.preventDefault(); };"
            "document.getElementById('label-form').addEventListener('submit', window.countSubmit)"
        )
        page.fill("#period", "2024")
        page.press("#period", "Enter")
        assert page.evaluate("window.submits") == 0
        page.evaluate("document.getElementById('label-form').removeEventListener('submit', window.countSubmit)")
        # the label buttons still submit: partial, with the period typed
        with page.expect_navigation():
            page.click("#label-form button[value=partial]")
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT reviewer, label, period FROM judgements WHERE origin = 'human'").fetchall()
    assert rows == [("ann", "partial", "2024")]
