"""The review protocol cannot be bypassed, over real HTTP: groups stay blind, an adjudicator never settles a dispute
they were part of, a double-reviewed edge has exactly two reviewers whose labels a later change does not undo,
only current claims are queued, a policy change asks first, logins are throttled per account and address and
recorded, and errors are pages."""

from __future__ import annotations

import html
import json
import re
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import Result

from citeaudit.review.app import ReviewConfig
from review_support import PASSWORD, ReviewClient, add_account, edge_pk, make_db, serve, set_policy

pytest.importorskip("fastapi")

Cli = Callable[..., Result]


@pytest.fixture
def review_db(tmp_path: Path) -> Path:
    db = make_db(tmp_path / "review.db")
    for name, role in (
        ("ann", "reviewer"),
        ("bob", "reviewer"),
        ("cat", "reviewer"),
        ("ada", "adjudicator"),
        ("eve", "adjudicator"),
        ("root", "admin"),
    ):
        add_account(db, name, role)
    return db


@pytest.fixture
def client(review_db: Path) -> Iterator[Callable[[str], ReviewClient]]:
    opened: list[ReviewClient] = []
    with serve(ReviewConfig(db=review_db)) as base:

        def login(name: str) -> ReviewClient:
            person = ReviewClient(base)
            assert person.login(name).status_code == 303
            opened.append(person)
            return person

        yield login
        for person in opened:
            person.close()


def human_judgements(db: Path, edge: int) -> list[tuple[str, str, str]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT reviewer, label, stage FROM judgements WHERE edge_pk = ? AND origin = 'human' ORDER BY pk", (edge,)
        ).fetchall()


def state(db: Path, edge: int) -> str:
    with sqlite3.connect(db) as conn:
        return str(conn.execute("SELECT review_state FROM edges WHERE pk = ?", (edge,)).fetchone()[0])


def audit_actions(db: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT actor, action FROM audit_log ORDER BY pk").fetchall()


def test_another_reviewers_evidence_groups_are_not_shown_before_judging(
    client: Callable[[str], ReviewClient], review_db: Path
) -> None:
    set_policy(review_db, "double")
    edge = edge_pk(review_db, "c1", "https://brand.com/ax220")
    ann = client("ann")
    ann.get(f"/edges/{edge}")
    created = ann.post(
        "/claims/1/groups",
        {"sources": ["1", "2"], "reasoning_steps": "ANN-GROUP-STEP", "decision": "supported", "back": "/queue"},
    )
    assert created.status_code == 303
    assert "ANN-GROUP-STEP" in ann.get(f"/edges/{edge}").text
    bob_page = html.unescape(client("bob").get(f"/edges/{edge}").text)
    assert "ANN-GROUP-STEP" not in bob_page
    assert "by ann" not in bob_page


def test_an_adjudicator_who_reviewed_cannot_adjudicate_and_admins_never_do(
    client: Callable[[str], ReviewClient], review_db: Path
) -> None:
    set_policy(review_db, "double")
    edge = edge_pk(review_db, "c1", "https://brand.com/ax220")
    ada, ann = client("ada"), client("ann")
    assert ada.judge(edge, "supported").status_code == 303
    assert ann.judge(edge, "conflicting").status_code == 303
    assert state(review_db, edge) == "disputed"
    # ada reviewed the edge: her page offers no adjudication, and a forged post is refused
    page = ada.get(f"/edges/{edge}")
    assert "/adjudication" not in page.text
    forged = ada.post(f"/edges/{edge}/adjudication", {"label": "supported", "submission": "f1", "reasoning": "mine"})
    assert forged.status_code == 409
    assert "another adjudicator" in html.unescape(forged.text)
    root = client("root")
    by_admin = root.post(f"/edges/{edge}/adjudication", {"label": "supported", "submission": "f2", "reasoning": "x"})
    assert by_admin.status_code == 403
    assert state(review_db, edge) == "disputed"
    # eve did not review it: she settles it
    assert client("eve").judge(edge, "supported", reasoning="spec table").status_code == 303
    assert state(review_db, edge) == "adjudicated"
    assert human_judgements(review_db, edge) == [
        ("ada", "supported", "review"),
        ("ann", "conflicting", "review"),
        ("eve", "supported", "adjudication"),
    ]


def test_double_review_takes_exactly_two_reviews_and_a_dispute_ends_only_by_adjudication(
    client: Callable[[str], ReviewClient], review_db: Path
) -> None:
    set_policy(review_db, "double")
    disputed = edge_pk(review_db, "c1", "https://brand.com/ax220")
    agreed = edge_pk(review_db, "c1", "https://shop.example/ax")
    ann, bob, cat = client("ann"), client("bob"), client("cat")
    assert ann.judge(disputed, "supported").status_code == 303
    assert bob.judge(disputed, "conflicting").status_code == 303
    assert ann.judge(agreed, "partial").status_code == 303
    assert bob.judge(agreed, "partial").status_code == 303
    assert (state(review_db, disputed), state(review_db, agreed)) == ("disputed", "agreed")
    # ann changes her mind to bob's label: recorded, but the dispute stays for an adjudicator
    assert ann.judge(disputed, "conflicting").status_code == 303
    assert state(review_db, disputed) == "disputed"
    assert len(human_judgements(review_db, disputed)) == 3
    # a third reviewer opening either edge by URL gets no form, and a forged post changes nothing
    for edge in (disputed, agreed):
        page = cat.get(f"/edges/{edge}")
        assert page.status_code == 200
        assert 'name="submission"' not in page.text
        assert "independent review(s)" in html.unescape(page.text)
        forged = cat.post(f"/edges/{edge}/judgements", {"label": "irrelevant", "submission": f"cat-{edge}"})
        assert forged.status_code == 409
    assert (state(review_db, disputed), state(review_db, agreed)) == ("disputed", "agreed")
    assert [who for who, *_ in human_judgements(review_db, agreed)] == ["ann", "bob"]
    # and neither edge is in cat's queue
    queue = cat.get("/queue").text
    assert f'data-edge="{disputed}"' not in queue
    assert f'data-edge="{agreed}"' not in queue


def test_single_review_takes_one_reviewer(client: Callable[[str], ReviewClient], review_db: Path) -> None:
    edge = edge_pk(review_db, "c3", "https://brand.com/ax220")
    ann, bob = client("ann"), client("bob")
    assert ann.judge(edge, "supported").status_code == 303
    assert bob.post(f"/edges/{edge}/judgements", {"label": "irrelevant", "submission": "b-1"}).status_code == 409
    # the reviewer's own revision counts under single review
    assert ann.judge(edge, "partial").status_code == 303
    with sqlite3.connect(review_db) as conn:
        # final code 1 = partial (supported, partial, conflicting, irrelevant, unknown)
        assert conn.execute("SELECT review_state, final_code FROM edges WHERE pk = ?", (edge,)).fetchone() == (
            "labelled",
            1,
        )


def test_the_state_filter_reveals_nothing_of_other_reviewers(
    client: Callable[[str], ReviewClient], review_db: Path
) -> None:
    set_policy(review_db, "double")
    edge = edge_pk(review_db, "c1", "https://brand.com/ax220")
    bob = client("bob")
    before = {state: bob.get(f"/queue?state={state}").text for state in ("pending", "labelled")}
    assert client("ann").judge(edge, "supported").status_code == 303
    after = {state: bob.get(f"/queue?state={state}").text for state in ("pending", "labelled")}
    # ann's label (edge now "labelled" by one of two) moves nothing in bob's lists
    assert f'data-edge="{edge}"' in before["pending"]
    assert f'data-edge="{edge}"' in after["pending"]
    assert f'data-edge="{edge}"' not in after["labelled"]
    assert 'id="empty"' in before["labelled"]
    assert 'id="empty"' in after["labelled"]


def test_the_queue_lists_current_claims_only_and_counts_the_retired(
    client: Callable[[str], ReviewClient], review_db: Path, cli: Cli
) -> None:
    ann = client("ann")
    assert set(re.findall(r'data-edge="(\d+)"', ann.get("/queue").text)) == {"1", "2", "3", "4", "5"}
    segmented = cli("segment", "--db", review_db, "--format", "json")
    assert segmented.exit_code == 0, segmented.stderr
    # Re-segmenting keeps c1 ("The AX220 has a 20 L tank.", characters 45..71, the sentence exactly as the rules
    # make it) with its two edges 1 and 2, and replaces c2 and c3, whose texts are not a1's sentences: their
    # edges 3, 4 (c2) and 5 (c3) belong to retired claims.
    with sqlite3.connect(review_db) as conn:
        current = {
            pk
            for (pk,) in conn.execute("SELECT e.pk FROM edges e JOIN claims c ON c.pk = e.claim_pk WHERE c.current = 1")
        }
    assert current == {1, 2}
    page = ann.get("/queue").text
    assert set(re.findall(r'data-edge="(\d+)"', page)) == {"1", "2"}
    assert "3 edge(s) of retired claims" in page
    # an edge page's progress counts current edges only: 0 done of 2
    assert "0 / 2 done" in ann.get("/edges/1").text


def test_changing_the_policy_of_a_judged_database_asks_first(
    client: Callable[[str], ReviewClient], review_db: Path
) -> None:
    ann = client("ann")
    assert ann.judge(edge_pk(review_db, "c1", "https://brand.com/ax220"), "supported").status_code == 303
    assert ann.judge(edge_pk(review_db, "c3", "https://brand.com/ax220"), "supported").status_code == 303
    root = client("root")
    root.get("/settings")
    asked = root.post("/settings", {"policy": "double", "show_model_suggestions": "false"})
    assert asked.status_code == 200
    text = html.unescape(asked.text)
    # two edges labelled supported by one reviewer lose their final label under double review
    assert "2 edge(s): labelled: supported → labelled" in text
    with sqlite3.connect(review_db) as conn:
        assert conn.execute("SELECT value FROM review_settings WHERE key = 'policy'").fetchone() in (None, ("single",))
        assert (
            conn.execute("SELECT count(*) FROM edges WHERE review_state = 'labelled' AND final_code = 0").fetchone()[0]
            == 2
        )
    done = root.post("/settings", {"policy": "double", "show_model_suggestions": "false", "confirm": "double"})
    assert "2 edge(s) changed state" in html.unescape(done.text)


def test_serve_asks_before_changing_the_policy_of_a_judged_database(review_db: Path) -> None:
    with serve(ReviewConfig(db=review_db)) as base:
        ann = ReviewClient(base)
        ann.login("ann")
        assert ann.judge(edge_pk(review_db, "c3", "https://brand.com/ax220"), "supported").status_code == 303
        ann.close()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # a real process with no terminal: it must refuse, not serve (a server that started would time out here)
    command = [Path(sys.executable).with_name("citeaudit"), "review", "serve", "--db", review_db, "--policy", "double"]
    command += ["--port", str(port)]
    refused = subprocess.run(
        command,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert refused.returncode == 2, refused.stderr
    assert "1 edge(s): labelled: supported -> labelled" in refused.stderr
    assert "confirm with --yes" in refused.stderr
    with sqlite3.connect(review_db) as conn:
        assert conn.execute("SELECT value FROM review_settings WHERE key = 'policy'").fetchone() in (None, ("single",))


def test_login_throttle_is_per_account_and_address_and_failures_are_logged(
    review_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from citeaudit.review.routers import auth as auth_routes

    checks: list[str] = []
    real_verify = auth_routes.verify_password

    def counted(password_hash: str, password: str) -> bool:
        checks.append(password)
        return real_verify(password_hash, password)

    monkeypatch.setattr(auth_routes, "verify_password", counted)
    with serve(ReviewConfig(db=review_db, login_attempts=3, login_window=60)) as base:
        ann, bob, nobody = ReviewClient(base), ReviewClient(base), ReviewClient(base)
        for _ in range(3):
            assert ann.login("ann", "typo").status_code == 401
        assert ann.login("ann", PASSWORD).status_code == 429
        # bob, behind the same address, is not locked out by ann's typos
        assert bob.login("bob", PASSWORD).status_code == 303
        # a name that is no account costs one password check, as a wrong password does
        checks.clear()
        assert nobody.login("mallory", "guess").status_code == 401
        assert checks == ["guess"]
        # a form without its CSRF token is refused and recorded
        assert bob.post("/logout", {}, csrf=False).status_code == 403
        for person in (ann, bob, nobody):
            person.close()
    actions = audit_actions(review_db)
    assert actions.count(("ann", "login.failed")) == 3
    assert ("ann", "login.throttled") in actions
    assert ("mallory", "login.failed") in actions
    assert ("bob", "csrf.refused") in actions


def test_errors_are_pages_with_the_navigation(client: Callable[[str], ReviewClient]) -> None:
    ann = client("ann")
    for path in ("/no-such-page", "/edges/not-a-number", "/edges/99999"):
        response = ann.get(path)
        assert response.status_code == 404, path
        assert response.headers["content-type"].startswith("text/html"), path
        assert '<h1 id="error-title">Not found</h1>' in response.text, path
        assert "Refused" not in response.text, path
        assert 'href="/queue"' in response.text, path
        assert "ann (reviewer)" in response.text, path
    missing_field = ann.post("/edges/1/judgements", {"submission": "x"})
    assert missing_field.status_code == 400
    assert missing_field.headers["content-type"].startswith("text/html")
    assert "label" in missing_field.text


def test_serving_beyond_loopback_without_tls_warns_about_the_secure_cookies(review_db: Path) -> None:
    # 192.0.2.1 is a documentation address that is on no interface here: the server cannot bind it and stops
    # right after its start-up checks, having sent nothing anywhere.
    command = [Path(sys.executable).with_name("citeaudit"), "review", "serve", "--db", review_db]
    command += ["--host", "192.0.2.1", "--port", "8999"]
    done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120, check=False)
    warning = " ".join(done.stderr.split())
    assert "warning: serving on 192.0.2.1 without TLS" in warning
    assert "fails with a CSRF refusal" in warning
    assert done.returncode != 0
    loopback = subprocess.run(
        [Path(sys.executable).with_name("citeaudit"), "review", "serve", "--db", review_db, "--ssl-certfile", "x.pem"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    # a certificate without its key is refused before anything starts
    assert loopback.returncode == 2
    assert "give both files or neither" in loopback.stderr


def test_suggest_leaves_out_the_edges_of_retired_claims_and_says_how_many(review_db: Path, cli: Cli) -> None:
    from citeaudit.judges import ChecksJudge
    from citeaudit.suggest import suggest_edges

    before = suggest_edges(review_db, ChecksJudge())
    # 5 imported edges; edge c1 → brand.com/ax220 has only a model judgement: all 5 lack a final label
    assert (before.edges, before.retired) == (5, 0)
    assert cli("segment", "--db", review_db).exit_code == 0
    after = suggest_edges(review_db, ChecksJudge())
    # c1 is kept with its 2 edges (see the queue test), the only ones left to suggest for; c2's 2 edges and c3's
    # 1 belong to retired claims: 3
    assert (after.edges, after.retired) == (2, 3)
    assert after.to_dict()["retired"] == 3


def test_agreement_compares_current_claims_and_counts_the_retired(
    client: Callable[[str], ReviewClient], review_db: Path, cli: Cli
) -> None:
    set_policy(review_db, "double")
    ann, bob = client("ann"), client("bob")
    # both judge two edges whose claims segmenting retires (c2's link, c3's page; see the queue test)
    for edge in (
        edge_pk(review_db, "c2", "javascript:alert('link')"),
        edge_pk(review_db, "c3", "https://brand.com/ax220"),
    ):
        assert ann.judge(edge, "supported").status_code == 303
        assert bob.judge(edge, "supported").status_code == 303
    assert cli("segment", "--db", review_db).exit_code == 0
    # c1 is kept with its edges 1 and 2: ann and bob judge them, disagreeing on 2
    first, second = (
        edge_pk(review_db, "c1", "https://brand.com/ax220"),
        edge_pk(review_db, "c1", "https://shop.example/ax"),
    )
    assert ann.judge(first, "supported").status_code == 303
    assert bob.judge(first, "supported").status_code == 303
    assert ann.judge(second, "supported").status_code == 303
    assert bob.judge(second, "partial").status_code == 303
    result = cli("agreement", review_db, "--between", "ann", "bob", "--format", "json", "--resamples", "0")
    assert result.exit_code == 0, result.stderr
    body = json.loads(result.stdout)
    # 2 current edges paired (c1's), of the 2 current edges in all; the 2 judged edges of c2 and c3 are retired
    # and left out
    assert (body["edges"]["paired"], body["edges"]["total"]) == (2, 2)
    assert "2 edge(s) of retired claims left out" in result.stderr
    ada = client("ada")
    page = html.unescape(ada.get("/agreement?a=ann&b=bob&resamples=0").text)
    assert "2 edge(s) of retired claims left out" in page
