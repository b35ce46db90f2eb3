"""``citeaudit suggest --triage`` and the review UI's triage page: offers stored as model judgements, confirmed
only by a person's post (a human judgement through the store's one recording path), and hidden from the second
reviewer under double review."""

from __future__ import annotations

import html
import json
import re
import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.test_judges import needs_models
from tests.test_suggest import OUTDOOR, PUMP, TANK, edge_pk, resolved_db
from typer.testing import Result

from citeaudit.core.scoring import PENDING_CODE
from citeaudit.judges.triage import CONFLICT_OFF, TriageThresholds
from citeaudit.review.app import ReviewConfig
from citeaudit.suggest import triage_edges
from conftest import chromium_path
from review_support import PASSWORD, ReviewClient, add_account, serve, set_policy

pytest.importorskip("fastapi")

_SUBMISSION = re.compile(
    r'action="/triage/(\d+)/confirm".*?name="submission" value="([^"]+)".*?name="suggestion" value="(\d+)"', re.S
)


class _Same:
    """Every text on one unit vector: every passage has similarity 1 to every claim."""

    path = None

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.tile(np.array([[1.0, 0.0]], dtype=np.float32), (len(texts), 1))


class _Apart:
    """Claims on x, passages on y: every passage has similarity 0 to every claim."""

    path = None

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        claims = {PUMP, TANK, OUTDOOR}
        return np.array([(1.0, 0.0) if t in claims else (0.0, 1.0) for t in texts], dtype=np.float32)


def rows(db: Path, sql: str, *params: object) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as connection:
        return connection.execute(sql, params).fetchall()


def human_judgements(db: Path) -> list[tuple[Any, ...]]:
    return rows(db, "SELECT edge_pk, reviewer, label, reasoning FROM judgements WHERE origin = 'human' ORDER BY pk")


# -- the library and the command ----------------------------------------------------------------------------------


ON_AT_070 = TriageThresholds(conflict_min=0.70, irrelevant_below=0.28)


def test_conflicts_are_not_offered_by_default(db_path: Path, site: str) -> None:
    resolved_db(db_path, site)
    report = triage_edges(db_path, encoder=_Same())
    # Similarity 1 everywhere: c1 (20 bar vs 12 bar) and c2 (30 L vs 20 L) would be offered only as conflicts, a
    # reason off by default; a conflict keeps them out of "irrelevant" too, and c3 (1 >= 0.28) is not irrelevant:
    # nothing offered, 3 of the 4 edges left to the reviewer (c4 has no snapshot).
    assert sum(report.offered.values()) == 0
    assert (report.edges, report.no_snapshot, report.left_to_reviewer) == (4, 1, 3)
    assert report.to_dict()["off"] == {"check_conflict": CONFLICT_OFF}
    assert rows(db_path, "SELECT count(*) FROM judgements") == [(0,)]


def test_conflicts_in_on_topic_passages_are_offered(db_path: Path, site: str) -> None:
    resolved_db(db_path, site)
    before = rows(db_path, "SELECT pk, review_state, final_code FROM edges ORDER BY pk")
    report = triage_edges(db_path, thresholds=ON_AT_070, encoder=_Same())
    # 4 edges without a final label: c4's source has no snapshot. Similarity 1 everywhere (>= conflict_min 0.70):
    # c1 (20 bar vs 12 bar) and c2 (30 L vs 20 L) conflict; c3 has nothing to compare and 1 >= irrelevant_below
    # 0.28, so it is left to the reviewer.
    assert (report.edges, report.no_snapshot, report.left_to_reviewer) == (4, 1, 1)
    assert dict(report.offered) == {"check_conflict": 2}
    stored = rows(
        db_path,
        "SELECT c.id, j.label, j.origin, j.judge, substr(j.reasoning, 1, 15) FROM judgements j "
        "JOIN edges e ON e.pk = j.edge_pk JOIN claims c ON c.pk = e.claim_pk ORDER BY c.id",
    )
    assert stored == [
        ("c1", "conflicting", "model", "triage", "check_conflict:"),
        ("c2", "conflicting", "model", "triage", "check_conflict:"),
    ]
    # a suggestion is not a label: no human judgement, no edge changed state
    assert human_judgements(db_path) == []
    assert rows(db_path, "SELECT pk, review_state, final_code FROM edges ORDER BY pk") == before
    # a rerun offers nothing new
    again = triage_edges(db_path, thresholds=ON_AT_070, encoder=_Same())
    assert (again.already_offered, sum(again.offered.values()), again.left_to_reviewer) == (2, 0, 1)


def test_passages_off_the_claims_topic(db_path: Path, site: str) -> None:
    resolved_db(db_path, site)
    report = triage_edges(db_path, encoder=_Apart())
    # Similarity 0 everywhere: c1's and c2's conflicts are in passages below conflict_min 0.70, so neither reason is
    # sure; c3 has no conflict and 0 < irrelevant_below 0.28: offered as irrelevant.
    assert dict(report.offered) == {"irrelevant": 1}
    assert report.left_to_reviewer == 2
    stored = rows(db_path, "SELECT j.label, j.reasoning FROM judgements j WHERE j.judge = 'triage'")
    assert stored == [("irrelevant", "irrelevant: best passage similarity 0.000 < 0.28")]


@needs_models
def test_cli_offers_conflicts_only_when_asked(db_path: Path, site: str, cli: Callable[..., Result]) -> None:
    resolved_db(db_path, site)
    default = cli("suggest", "--db", db_path, "--triage")
    assert default.exit_code == 0, default.output
    # the tank claim's 30 L against the manual's 20 L would be a conflict: not offered by default, and the output
    # says the reason is off and why
    assert "0 edge(s) offered for triage" in default.stdout
    assert "conflicts not offered" in default.stdout
    assert "offered 1/2 correctly" in " ".join(default.stdout.split())
    assert rows(db_path, "SELECT count(*) FROM judgements") == [(0,)]
    on = cli("suggest", "--db", db_path, "--triage", "--conflict-min", "0.7", "--format", "json")
    assert on.exit_code == 0, on.output
    body = json.loads(on.stdout)
    # with the packaged model the tank claim's passage is at least 0.70 similar, the pump claim's (12 bar) is not
    # (docs/review.md, "Triage"): 1 conflict offered
    assert body["offered"]["check_conflict"] == 1
    assert body["off"] == {}
    stored = rows(
        db_path, "SELECT c.id FROM judgements j JOIN edges e ON e.pk = j.edge_pk JOIN claims c ON c.pk = e.claim_pk"
    )
    assert stored == [("c2",)]


@needs_models
def test_cli_triage_with_the_packaged_model(db_path: Path, site: str, cli: Callable[..., Result]) -> None:
    resolved_db(db_path, site)
    # -1 and -1: every conflict counts whatever the similarity, nothing is below -1; so c1 and c2 (conflicts) are
    # offered and c3 is left, whatever the model's similarities are.
    done = cli(
        "suggest", "--db", db_path, "--triage", "--conflict-min", "-1", "--irrelevant-below", "-1", "--format", "json"
    )
    assert done.exit_code == 0, done.output
    body = json.loads(done.stdout)
    assert body["offered"] == {"check_conflict": 2, "irrelevant": 0}
    assert (body["edges"], body["left_to_reviewer"], body["no_snapshot"]) == (4, 1, 1)
    assert human_judgements(db_path) == []


def test_cli_threshold_without_triage_is_refused(db_path: Path, site: str, cli: Callable[..., Result]) -> None:
    resolved_db(db_path, site)
    done = cli("suggest", "--db", db_path, "--conflict-min", "0.5")
    assert done.exit_code == 2
    assert "needs --triage" in done.stderr
    assert "Traceback" not in done.output
    assert rows(db_path, "SELECT count(*) FROM judgements") == [(0,)]


@pytest.mark.parametrize(
    ("options", "named"),
    [
        (("--judge", "openai"), "--judge 'openai'"),
        (("--limit", "3"), "--limit 3"),
        (("--refresh",), "suggest: --refresh: does not apply"),
        (("--cross-pairs",), "--triage"),
    ],
)
def test_cli_options_that_do_not_apply_to_the_triage(
    db_path: Path, site: str, cli: Callable[..., Result], options: tuple[str, ...], named: str
) -> None:
    resolved_db(db_path, site)
    done = cli("suggest", "--db", db_path, "--triage", *options)
    assert done.exit_code == 2
    assert done.stderr.count("\n") == 1
    assert named in done.stderr
    assert rows(db_path, "SELECT count(*) FROM judgements") == [(0,)]


# -- the triage page ----------------------------------------------------------------------------------------------


@pytest.fixture
def offered_db(tmp_path: Path, site: str) -> Path:
    db = resolved_db(tmp_path / "triage.db", site)
    triage_edges(db, thresholds=TriageThresholds(conflict_min=0.6, irrelevant_below=0.3), encoder=_Same())
    for name, role in (("bob", "reviewer"), ("carol", "reviewer"), ("root", "admin")):
        add_account(db, name, role)
    return db


def _show_suggestions(base: str) -> None:
    root = ReviewClient(base)
    try:
        assert root.login("root").status_code == 303
        page = root.get("/settings").text
        current = "double" if 'value="double" selected' in page else "single"
        assert root.post("/settings", {"policy": current, "show_model_suggestions": "true"}).status_code == 200
    finally:
        root.close()


def test_viewing_the_triage_records_nothing(offered_db: Path) -> None:
    log_before = rows(offered_db, "SELECT count(*) FROM audit_log WHERE action = 'judgement'")
    with serve(ReviewConfig(db=offered_db)) as base:
        bob = ReviewClient(base)
        try:
            assert bob.login("bob").status_code == 303
            off = bob.get("/triage")
            # the project hides model suggestions by default: the triage is off and shows no offer
            assert off.status_code == 200
            assert 'id="triage-off"' in off.text
            assert PUMP not in html.unescape(off.text)
            _show_suggestions(base)
            page = html.unescape(bob.get("/triage").text)
            assert PUMP in page
            assert TANK in page
            assert "check_conflict" in page
            # the filter by reason: both offers are conflicts, so none is irrelevant; an unknown reason is refused
            only_irrelevant = html.unescape(bob.get("/triage?reason=irrelevant").text)
            assert PUMP not in only_irrelevant
            assert 'id="empty"' in only_irrelevant
            assert PUMP in html.unescape(bob.get("/triage?reason=check_conflict").text)
            assert bob.get("/triage?reason=check%25").status_code == 400
            for edge in (edge_pk(offered_db, "c1"), edge_pk(offered_db, "c2")):
                assert bob.get(f"/edges/{edge}").status_code == 200
            # a confirmation without the session's CSRF token is refused and records nothing
            found = _SUBMISSION.search(bob.get("/triage").text)
            assert found is not None
            refused = bob.post(
                f"/triage/{found.group(1)}/confirm",
                {"submission": found.group(2), "suggestion": found.group(3)},
                csrf=False,
            )
            assert refused.status_code == 403
        finally:
            bob.close()
    # pages seen, one refused post: not one human judgement, not one judgement in the audit log
    assert human_judgements(offered_db) == []
    assert rows(offered_db, "SELECT count(*) FROM audit_log WHERE action = 'judgement'") == log_before
    assert rows(offered_db, "SELECT DISTINCT review_state FROM edges") == [("pending",)]


def test_a_confirmation_is_the_reviewers_judgement(offered_db: Path) -> None:
    c1 = edge_pk(offered_db, "c1")
    ((suggestion,),) = rows(offered_db, "SELECT pk FROM judgements WHERE edge_pk = ? AND judge = 'triage'", c1)
    with serve(ReviewConfig(db=offered_db)) as base:
        _show_suggestions(base)
        bob = ReviewClient(base)
        try:
            assert bob.login("bob").status_code == 303
            page = bob.get("/triage").text
            forms = {int(m.group(1)): (m.group(2), int(m.group(3))) for m in _SUBMISSION.finditer(page)}
            assert set(forms) == {c1, edge_pk(offered_db, "c2")}
            submission, shown = forms[c1]
            assert shown == suggestion
            done = bob.post(f"/triage/{c1}/confirm", {"submission": submission, "suggestion": shown})
            assert done.status_code == 303
            # the same form posted again: the edge is judged, so it is no longer offered, and nothing more is recorded
            again = bob.post(f"/triage/{c1}/confirm", {"submission": submission, "suggestion": shown})
            assert again.status_code == 409
            after = html.unescape(bob.get("/triage").text)
            assert PUMP not in after  # judged: no longer offered
            assert TANK in after
        finally:
            bob.close()
    assert human_judgements(offered_db) == [
        (
            c1,
            "bob",
            "conflicting",
            f"confirmed triage suggestion #{suggestion} (check_conflict: " + _detail(offered_db, suggestion),
        )
    ]
    # single review: bob's review is the edge's label
    assert rows(offered_db, "SELECT review_state FROM edges WHERE pk = ?", c1) == [("labelled",)]
    ((after,),) = rows(
        offered_db, "SELECT after FROM audit_log WHERE action = 'judgement' AND target = ?", f"edge:{c1}"
    )
    logged = json.loads(after)
    assert (logged["confirmed_suggestion"], logged["triage_reason"]) == (suggestion, "check_conflict")


def _detail(db: Path, suggestion: int) -> str:
    ((reasoning,),) = rows(db, "SELECT reasoning FROM judgements WHERE pk = ?", suggestion)
    return str(reasoning).partition(": ")[2] + ")"


def _login(page: Any, base: str, name: str) -> None:
    page.goto(f"{base}/login")
    page.fill("input[name=name]", name)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/queue")


def test_second_reviewer_never_sees_the_suggestion_in_chromium(offered_db: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    executable = chromium_path()
    set_policy(offered_db, "double")
    c1, c2 = edge_pk(offered_db, "c1"), edge_pk(offered_db, "c2")
    with serve(ReviewConfig(db=offered_db)) as base, sync_api.sync_playwright() as driver:
        _show_suggestions(base)
        browser = driver.chromium.launch(executable_path=executable, args=["--no-sandbox"], headless=True)
        try:
            bob = browser.new_context().new_page()
            _login(bob, base, "bob")
            bob.goto(f"{base}/triage")
            bob.click(f'li[data-edge="{c1}"] button.confirm')
            bob.wait_for_url(f"{base}/triage")
            assert bob.locator(f'li[data-edge="{c1}"]').count() == 0
            carol = browser.new_context().new_page()
            _login(carol, base, "carol")
            carol.goto(f"{base}/triage")
            # c1 has bob's review: carol, its second reviewer, is not offered it; c2 (no review yet) still is
            assert carol.locator(f'li[data-edge="{c1}"]').count() == 0
            assert carol.locator(f'li[data-edge="{c2}"]').count() == 1
            carol.goto(f"{base}/edges/{c1}")
            assert carol.locator("#claim").text_content() == PUMP
            assert carol.locator("#suggestions").count() == 0
            body = str(carol.locator("main").text_content())
            # the label form lists every label; what the triage said (reason, finding) is nowhere on the page
            assert "check_conflict" not in body
            assert "12 bar" not in str(carol.locator("main .suggestion, main #suggestions").all_text_contents())
            # the control: on c2, which no one has reviewed, carol sees the suggestion with its provenance
            carol.goto(f"{base}/edges/{c2}")
            assert carol.locator("#suggestions").count() == 1
            assert "conflicting" in str(carol.locator("#suggestions").text_content())
        finally:
            browser.close()
    # double review: bob's one review leaves c1 without a final label until a second person reviews it
    assert rows(offered_db, "SELECT review_state, final_code FROM edges WHERE pk = ?", c1) == [
        ("labelled", PENDING_CODE)
    ]
    assert [r[:3] for r in human_judgements(offered_db)] == [(c1, "bob", "conflicting")]
