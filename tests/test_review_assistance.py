"""Whether model suggestions were on the page a person judged from: stored with each judgement of the web doors,
and part of the protocol fingerprint of a scope only when some judgement in it was made with suggestions shown
(a database without one keeps the fingerprint it always had)."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.test_suggest import edge_pk, resolved_db
from tests.test_triage_review import _SUBMISSION, _Same, _show_suggestions
from typer.testing import Result

from citeaudit.core.model import Judgement, Label, Origin, RunKind, Stage
from citeaudit.core.protocol import differing_components, disclosure, fingerprint, fingerprint_components
from citeaudit.core.scope import Scope
from citeaudit.judges.triage import TriageThresholds
from citeaudit.review.app import ReviewConfig
from citeaudit.store import Store
from citeaudit.store.review import ReviewStore
from citeaudit.suggest import triage_edges
from review_support import ReviewClient, add_account, serve, set_policy

pytest.importorskip("fastapi")

EVERY_RUN = Scope(run_kinds=frozenset(RunKind))

# The component's hash by hand: the canonical JSON of the string "suggestions shown" is the string in double quotes.
ASSISTED = "sha256:" + hashlib.sha256(b'"suggestions shown"').hexdigest()


@pytest.fixture
def offered_db(tmp_path: Path, site: str) -> Path:
    """c1 and c2 carry a triage suggestion (a check conflict at similarity 1); c3 carries none."""
    db = resolved_db(tmp_path / "assist.db", site)
    triage_edges(db, thresholds=TriageThresholds(conflict_min=0.6, irrelevant_below=0.3), encoder=_Same())
    for name, role in (("bob", "reviewer"), ("carol", "reviewer"), ("root", "admin")):
        add_account(db, name, role)
    return db


def shown_column(db: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as connection:
        return connection.execute(
            "SELECT c.id, j.reviewer, j.suggestions_shown FROM judgements j JOIN edges e ON e.pk = j.edge_pk "
            "JOIN claims c ON c.pk = e.claim_pk WHERE j.origin = 'human' ORDER BY j.pk"
        ).fetchall()


def protocols(db: Path) -> tuple[Any, Any]:
    """The protocol as declared, and as the answers in scope were measured (what `score` fingerprints)."""
    with Store(db) as store:
        pk = store.choose_protocol(None)
        return store.protocol(pk), store.effective_protocol(pk, EVERY_RUN)


def test_no_judgement_with_suggestions_shown_keeps_the_fingerprint(offered_db: Path) -> None:
    declared, before = protocols(offered_db)
    assert fingerprint(before) == fingerprint(declared)
    with serve(ReviewConfig(db=offered_db)) as base:
        bob = ReviewClient(base)
        try:
            assert bob.login("bob").status_code == 303
            # the project hides model suggestions (the default): c1's suggestion is not on bob's page
            assert bob.judge(edge_pk(offered_db, "c1"), "conflicting").status_code == 303
            _show_suggestions(base)
            # shown by the project, but c3 has no suggestion: none on the page either
            assert bob.judge(edge_pk(offered_db, "c3"), "unknown").status_code == 303
        finally:
            bob.close()
    # a door without a page (the library) stores no value at all
    with ReviewStore(offered_db) as review:
        judgement = Judgement(Label.CONFLICTING, "carol", Origin.HUMAN, Stage.REVIEW)
        review.judgements.record_judgement(edge_pk(offered_db, "c2"), judgement, "library-1")
    assert shown_column(offered_db) == [("c1", "bob", 0), ("c3", "bob", 0), ("c2", "carol", None)]
    _, after = protocols(offered_db)
    assert after.review_assistance is None
    assert fingerprint(after) == fingerprint(declared)
    assert "review_assistance" not in fingerprint_components(after)
    assert "review_assistance" not in disclosure(after)


def _assisted(db: Path) -> None:
    declared, effective = protocols(db)
    assert effective.review_assistance == "suggestions shown"
    assert fingerprint(effective) != fingerprint(declared)
    # exactly one component differs, absent from the declared protocol
    assert differing_components(declared, effective) == {"review_assistance": ("absent", ASSISTED)}
    assert disclosure(effective)["review_assistance"] == "suggestions shown"


def test_a_judgement_made_with_the_suggestion_on_the_page_changes_the_fingerprint(offered_db: Path) -> None:
    c1 = edge_pk(offered_db, "c1")
    with serve(ReviewConfig(db=offered_db)) as base:
        _show_suggestions(base)
        bob = ReviewClient(base)
        try:
            assert bob.login("bob").status_code == 303
            page = bob.get(f"/edges/{c1}").text
            assert 'id="suggestions"' in page
            assert bob.judge(c1, "partial").status_code == 303
        finally:
            bob.close()
    assert shown_column(offered_db) == [("c1", "bob", 1)]
    _assisted(offered_db)
    with sqlite3.connect(offered_db) as connection:
        ((logged,),) = connection.execute(
            "SELECT json_extract(after, '$.suggestions_shown') FROM audit_log WHERE action = 'judgement'"
        ).fetchall()
    assert logged == 1


def test_a_triage_confirmation_is_made_with_suggestions_shown(offered_db: Path) -> None:
    c1 = edge_pk(offered_db, "c1")
    with serve(ReviewConfig(db=offered_db)) as base:
        _show_suggestions(base)
        bob = ReviewClient(base)
        try:
            assert bob.login("bob").status_code == 303
            forms = {int(m.group(1)): m for m in _SUBMISSION.finditer(bob.get("/triage").text)}
            found = forms[c1]
            confirm = {"submission": found.group(2), "suggestion": found.group(3)}
            assert bob.post(f"/triage/{c1}/confirm", confirm).status_code == 303
        finally:
            bob.close()
    assert shown_column(offered_db) == [("c1", "bob", 1)]
    _assisted(offered_db)


def test_the_second_reviewer_under_double_review_judges_without_suggestions(offered_db: Path) -> None:
    set_policy(offered_db, "double")
    c1 = edge_pk(offered_db, "c1")
    with serve(ReviewConfig(db=offered_db)) as base:
        _show_suggestions(base)
        bob, carol = ReviewClient(base), ReviewClient(base)
        try:
            assert bob.login("bob").status_code == 303
            found = next(m for m in _SUBMISSION.finditer(bob.get("/triage").text) if int(m.group(1)) == c1)
            confirm = {"submission": found.group(2), "suggestion": found.group(3)}
            assert bob.post(f"/triage/{c1}/confirm", confirm).status_code == 303
            assert carol.login("carol").status_code == 303
            assert 'id="suggestions"' not in carol.get(f"/edges/{c1}").text
            assert carol.judge(c1, "conflicting").status_code == 303
        finally:
            bob.close()
            carol.close()
    # bob confirmed with the suggestion on his page; carol, the second reviewer, never had it on hers
    assert shown_column(offered_db) == [("c1", "bob", 1), ("c1", "carol", 0)]
    _assisted(offered_db)


def test_compare_refuses_scopes_judged_with_and_without_suggestions(
    offered_db: Path, tmp_path: Path, cli: Callable[..., Result]
) -> None:
    plain = tmp_path / "plain.db"
    with sqlite3.connect(offered_db) as source, sqlite3.connect(plain) as target:
        source.backup(target)
    c1 = edge_pk(offered_db, "c1")
    for db, shown in ((offered_db, True), (plain, False)):
        with ReviewStore(db) as review:
            judgement = Judgement(Label.CONFLICTING, "bob", Origin.HUMAN, Stage.REVIEW)
            review.judgements.record_judgement(c1, judgement, "same-label", door="web", suggestions_shown=shown)
    # the same label on the same edge in both: only how it was made differs
    done = cli("compare", offered_db, plain)
    assert done.exit_code == 2, done.output
    assert "review_assistance" in done.stderr
    assert "Traceback" not in done.output
    same = cli("compare", plain, plain)
    assert same.exit_code == 0, same.output


def test_a_merge_moves_a_judgement_but_never_changes_whether_suggestions_were_shown(offered_db: Path) -> None:
    c1, c2 = edge_pk(offered_db, "c1"), edge_pk(offered_db, "c2")
    with ReviewStore(offered_db) as review:
        judgement = Judgement(Label.CONFLICTING, "bob", Origin.HUMAN, Stage.REVIEW)
        review.judgements.record_judgement(c1, judgement, "moved-1", door="web", suggestions_shown=False)
    with sqlite3.connect(offered_db) as connection:
        ((pk,),) = connection.execute("SELECT pk FROM judgements WHERE submission = 'moved-1'").fetchall()
        with pytest.raises(sqlite3.IntegrityError, match="may only move"):
            connection.execute("UPDATE judgements SET edge_pk = ?, suggestions_shown = 1 WHERE pk = ?", (c2, pk))
        with pytest.raises(sqlite3.IntegrityError, match="immutable"):
            connection.execute("UPDATE judgements SET suggestions_shown = 1 WHERE pk = ?", (pk,))
        # the move alone is what a merge does, and is allowed
        connection.execute("UPDATE judgements SET edge_pk = ? WHERE pk = ?", (c2, pk))
        assert connection.execute(
            "SELECT edge_pk, suggestions_shown FROM judgements WHERE pk = ?", (pk,)
        ).fetchall() == [(c2, 0)]


def test_the_scope_is_asked_from_the_judgements_made_with_suggestions_shown(
    cli: Callable[..., Result], exporter_path: Path, tmp_path: Path
) -> None:
    """Fingerprinting a scope looks for a judgement made with suggestions shown through the partial index that
    holds only those, as the outer loop: never a scan of every judgement or claim (26 s over 7.2 million)."""
    import re

    from citeaudit.store.reading import suggestions_shown_in_scope

    db = tmp_path / "plan.db"
    assert cli("ingest", exporter_path, "--db", db).exit_code == 0
    with Store(db) as store:
        statements: list[str] = []
        store.connection.set_trace_callback(statements.append)  # the statement as run, its values bound
        assert suggestions_shown_in_scope(store.connection, 1, Scope()) is False  # the file's judgements: none
        store.connection.set_trace_callback(None)
        (asked,) = [s for s in statements if "suggestions_shown" in s]
        plan = [row[3] for row in store.connection.execute(f"EXPLAIN QUERY PLAN {asked}")]
    # the first table read is the judgements, through the partial index
    first = next(step for step in plan if re.match(r"(SCAN|SEARCH) ", step))
    assert "judgements_assisted" in first, plan
