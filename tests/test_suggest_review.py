"""The review edge page after ``citeaudit suggest``: the stored top passages, ranked with scores, above the full
snapshot passages for every viewer; the model suggestion itself only under the project's blind-review setting."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from tests.test_suggest import PUMP, edge_pk, resolved_db

from citeaudit.judges import ChecksJudge
from citeaudit.review.app import ReviewConfig
from citeaudit.suggest import suggest_edges
from conftest import chromium_path
from review_support import PASSWORD, ReviewClient, add_account, serve

pytest.importorskip("fastapi")

_RANKED = re.compile(r'<li data-rank="(\d+)" data-start="(\d+)" data-end="(\d+)"><small>#\d+ · score ([0-9.]+)')


@pytest.fixture
def suggested_db(tmp_path: Path, site: str) -> Path:
    db = resolved_db(tmp_path / "suggest-review.db", site)
    suggest_edges(db, ChecksJudge(), k=2)
    for name, role in (("bob", "reviewer"), ("root", "admin")):
        add_account(db, name, role)
    return db


def _section(page: str, section_id: str) -> str:
    """The list's markup, without the marks of the claim's terms (text reads as the snapshot has it)."""
    found = page.split(f'id="{section_id}"')[1].split("</ol>")[0] if f'id="{section_id}"' in page else ""
    return re.sub(r"</?mark[^>]*>", "", found)


def test_ranked_passages_for_everyone_suggestions_only_when_shown(suggested_db: Path) -> None:
    edge = edge_pk(suggested_db, "c1")
    with serve(ReviewConfig(db=suggested_db)) as base:
        bob = ReviewClient(base)
        root = ReviewClient(base)
        try:
            assert bob.login("bob").status_code == 303
            page = html.unescape(bob.get(f"/edges/{edge}").text)
            ranked = _RANKED.findall(_section(page, "ranked-passages"))
            # --top 2 of the default window ranking for the pump claim (derived in
            # tests/test_suggest.py::test_suggest_defaults_to_window_units): the manual's first three paragraphs
            # as one unit (chars 0–323), then the outdoor paragraph (325–433), best score first; the text shown
            # is the snapshot's.
            assert [(r[0], r[1], r[2]) for r in ranked] == [("1", "0", "323"), ("2", "325", "433")]
            assert float(ranked[0][3]) >= float(ranked[1][3])
            ranked_text = _section(page, "ranked-passages")
            assert (
                ranked_text.index("AX220 user manual.")
                < ranked_text.index("Tank. The AX220 has")
                < ranked_text.index("Pump. Its pump delivers 12 bar")
                < ranked_text.index("Outdoor use. The AX220")
            )
            # ranked passages come above the full snapshot passages, which are all still there
            assert page.index('id="ranked-passages"') < page.index('id="passages"')
            assert _section(page, "passages").count("<li") == 4
            # blind: the checks' "conflicting" is not shown while the project hides model suggestions
            assert 'id="suggestions"' not in page
            assert root.login("root").status_code == 303
            assert root.post("/settings", {"policy": "single", "show_model_suggestions": "true"}).status_code == 200
            shown = html.unescape(bob.get(f"/edges/{edge}").text)
            suggestions = shown.split('id="suggestions"')[1].split("</section>")[0]
            assert "conflicting" in suggestions
            assert f"judge checks {ChecksJudge.version}" in suggestions  # provenance
            # a ranked passage is evidence, not a label: the edge itself is still pending
            assert "pending" not in _section(shown, "ranked-passages")
        finally:
            bob.close()
            root.close()


def test_edge_without_suggestion_has_no_ranked_list(suggested_db: Path) -> None:
    edge = edge_pk(suggested_db, "c4")  # its source failed: no snapshot, no suggestion
    with serve(ReviewConfig(db=suggested_db)) as base:
        bob = ReviewClient(base)
        try:
            assert bob.login("bob").status_code == 303
            page = bob.get(f"/edges/{edge}").text
            assert 'id="ranked-passages"' not in page
            assert 'id="passages"' in page
        finally:
            bob.close()


def test_ranked_passages_in_chromium(suggested_db: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    executable = chromium_path()
    edge = edge_pk(suggested_db, "c1")
    with serve(ReviewConfig(db=suggested_db)) as base, sync_api.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=executable, args=["--no-sandbox"], headless=True)
        try:
            page = browser.new_context().new_page()
            page.goto(f"{base}/login")
            page.fill("input[name=name]", "bob")
            page.fill("input[name=password]", PASSWORD)
            page.click("button[type=submit]")
            page.wait_for_url(f"{base}/queue")
            page.goto(f"{base}/edges/{edge}")
            assert page.text_content("#claim") == PUMP
            items = page.locator("#ranked-passages li")
            assert items.count() == 2
            assert "Pump. Its pump delivers 12 bar" in str(items.nth(0).text_content())
            assert page.locator("#ranked-passages").is_visible()
        finally:
            browser.close()
