"""The review UI over real HTTP: accounts and sessions, CSRF, role checks, blind review, double review with
adjudication, attached URLs, evidence groups, the audit log and a score page that matches `citeaudit score`."""

from __future__ import annotations

import csv
import html
import json
import re
import sqlite3
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from fastapi.routing import APIRoute
from typer.testing import Result

from citeaudit.core.clock import ManualClock
from citeaudit.review.app import ReviewConfig, create_app
from citeaudit.store.review import ReviewStore
from review_support import (
    PASSWORD,
    ReviewClient,
    add_account,
    edge_pk,
    make_db,
    serve,
    set_policy,
)

pytest.importorskip("fastapi")

Cli = Callable[..., Result]


@pytest.fixture
def review_db(tmp_path: Path) -> Path:
    db = make_db(tmp_path / "review.db")
    add_account(db, "ann", "reviewer")
    add_account(db, "bob", "reviewer")
    add_account(db, "ada", "adjudicator")
    add_account(db, "root", "admin")
    return db


@pytest.fixture
def base(review_db: Path) -> Iterator[str]:
    with serve(ReviewConfig(db=review_db)) as url:
        yield url


@pytest.fixture
def client(base: str) -> Iterator[Callable[[str], ReviewClient]]:
    opened: list[ReviewClient] = []

    def login(name: str) -> ReviewClient:
        person = ReviewClient(base)
        assert person.login(name).status_code == 303
        opened.append(person)
        return person

    yield login
    for person in opened:
        person.close()


def judgement_rows(db: Path) -> list[tuple[int, str, str | None, str, str]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT edge_pk, label, reviewer, origin, stage FROM judgements ORDER BY pk").fetchall()


def edge_state(db: Path, pk: int) -> str:
    with sqlite3.connect(db) as conn:
        return str(conn.execute("SELECT review_state FROM edges WHERE pk = ?", (pk,)).fetchone()[0])


def score_json(cli: Cli, db: Path) -> dict[str, object]:
    result = cli("score", db, "--format", "json")
    assert result.exit_code == 0, result.stderr
    document: dict[str, object] = json.loads(result.stdout)
    return document


# -- accounts, sessions, CSRF, roles ------------------------------------------------------------------


def routes() -> list[tuple[str, str]]:
    """``(method, path)`` of every route of the app (new routes are covered by default)."""
    app = create_app(ReviewConfig(db=Path("unused.db")))
    return [
        (
            method,
            route.path.replace("{edge_pk}", "1")
            .replace("{source_pk}", "1")
            .replace("{claim_pk}", "1")
            .replace("{pair_pk}", "1"),
        )
        for route in app.routes
        if isinstance(route, APIRoute)
        for method in sorted(route.methods)
    ]


def test_every_route_but_login_needs_a_session(base: str, review_db: Path) -> None:
    anonymous = ReviewClient(base)
    checked = 0
    for method, path in routes():
        if path == "/login":
            continue
        if method == "GET":
            response = anonymous.get(path)
            assert response.status_code == 303, path
            # back to the page asked for after logging in
            assert response.headers["location"].startswith("/login"), path
        else:
            response = anonymous.post(path, {"label": "supported", "submission": "x", "url": "https://x.example/"})
            assert response.status_code == 401, path
        checked += 1
    # queue, queue/next, /, mine, edge, score, settings, agreement, cross-pairs, cross pair, triage (GET) = 11;
    # logout, judgements, adjudication, skip, lease, url, groups, settings, cross-pair judgements, triage
    # confirmation (POST) = 10; 11 + 10 = 21
    assert checked == 21
    assert [row[3] for row in judgement_rows(review_db)] == ["model"]
    anonymous.close()


def test_session_cookie_is_secure_httponly_samesite(base: str) -> None:
    person = ReviewClient(base)
    response = person.login("ann")
    cookie = next(c for c in response.headers.get_list("set-cookie") if c.startswith("citeaudit_session="))
    flags = {part.strip().lower() for part in cookie.split(";")}
    assert {"secure", "httponly", "samesite=strict"} <= flags
    person.close()


def test_wrong_password_then_rate_limited(review_db: Path) -> None:
    with serve(ReviewConfig(db=review_db, login_attempts=3, login_window=60)) as url:
        person = ReviewClient(url)
        for _ in range(3):
            assert person.login("ann", "wrong password").status_code == 401
        # the fourth try is refused even with the right password: 3 failures used up the window
        assert person.login("ann", PASSWORD).status_code == 429
        assert person.session is None
        person.close()


def test_sessions_expire(review_db: Path) -> None:
    clock = ManualClock()
    with serve(ReviewConfig(db=review_db, session_lifetime=timedelta(seconds=60), clock=clock)) as url:
        person = ReviewClient(url)
        assert person.login("ann").status_code == 303
        clock.advance(59.9)  # 0.1 s of the session's 60 left
        assert person.get("/queue").status_code == 200
        clock.advance(0.1)  # 60 s after the login: expired (a session lives while expires_at > now)
        assert person.get("/queue").status_code == 303
        # the next login drops the expired session row
        other = ReviewClient(url)
        assert other.login("bob").status_code == 303
        with sqlite3.connect(review_db) as conn:
            assert conn.execute("SELECT count(*) FROM review_sessions").fetchone() == (1,)
        person.close()
        other.close()


def test_posts_without_a_valid_csrf_token_are_refused(client: Callable[[str], ReviewClient], review_db: Path) -> None:
    ann = client("ann")
    page = ann.get("/edges/1")
    submission = re.search(r'name="submission" value="([^"]+)"', page.text)
    assert submission is not None
    missing = ann.post("/edges/1/judgements", {"label": "supported", "submission": submission.group(1)}, csrf=False)
    wrong = ann.post(
        "/edges/1/judgements", {"label": "supported", "submission": submission.group(1), "csrf": "forged"}, csrf=False
    )
    assert missing.status_code == 403
    assert wrong.status_code == 403
    assert "CSRF" in html.unescape(missing.text)
    attach = ann.post("/sources/3/url", {"url": "https://x.example/"}, csrf=False)
    group = ann.post("/claims/1/groups", {"sources": ["1", "2"]}, csrf=False)
    assert attach.status_code == 403
    assert group.status_code == 403
    # nothing was written: only the imported model suggestion is there
    assert [row[3] for row in judgement_rows(review_db)] == ["model"]


def test_login_form_needs_its_csrf_token(base: str) -> None:
    person = ReviewClient(base)
    response = person.http.post("/login", data={"name": "ann", "password": PASSWORD})
    assert response.status_code == 403
    person.close()


def test_roles_are_checked(client: Callable[[str], ReviewClient]) -> None:
    ann = client("ann")
    assert ann.get("/score").status_code == 403
    assert ann.get("/settings").status_code == 403
    assert ann.get("/queue?needs=adjudicate").status_code == 403
    assert ann.post("/settings", {"policy": "double"}).status_code == 403
    root = client("root")
    assert root.get("/settings").status_code == 200
    # an admin does not review
    assert root.post("/edges/1/judgements", {"label": "supported", "submission": "s-root"}).status_code == 403


# -- blind review ---------------------------------------------------------------------------------------


def get_paths(edge: int) -> list[str]:
    """Every GET route of the app, with the edge's id for path parameters (new routes are covered by default)."""
    return [path.replace("/edges/1", f"/edges/{edge}") for method, path in routes() if method == "GET"]


def test_before_submitting_a_reviewer_sees_no_other_label(
    client: Callable[[str], ReviewClient], review_db: Path
) -> None:
    edge = edge_pk(review_db, "c1", "https://brand.com/ax220")
    ann = client("ann")
    assert (
        ann.judge(edge, "conflicting", reasoning="ANN-SECRET-REASON", passage="ANN-SECRET-PASSAGE").status_code == 303
    )
    bob = client("bob")
    pages = {path: bob.get(path) for path in [*get_paths(edge), "/queue?state=labelled", f"/edges/{edge}?x=1"]}
    assert f"/edges/{edge}" in pages
    assert "/queue" in pages
    for path, response in pages.items():
        text = html.unescape(response.text)
        assert "ANN-SECRET" not in text, path
        assert "by ann" not in text, path
        assert 'class="label"' not in text, path  # no judgement is listed at all
        assert "MODEL-REASON" not in text, path
        assert "nli-judge-v1" not in text, path
        assert 'id="state"' not in text, path  # nor the edge's review state
    # and ann herself sees her own judgement, never the model's
    own = html.unescape(ann.get(f"/edges/{edge}").text)
    assert "ANN-SECRET-REASON" in own
    assert "MODEL-REASON" not in own


def test_model_suggestions_shown_only_when_the_project_says_so(
    client: Callable[[str], ReviewClient], review_db: Path
) -> None:
    edge = edge_pk(review_db, "c1", "https://brand.com/ax220")
    bob = client("bob")
    assert "MODEL-REASON" not in bob.get(f"/edges/{edge}").text
    root = client("root")
    assert root.post("/settings", {"policy": "single", "show_model_suggestions": "true"}).status_code == 200
    shown = html.unescape(bob.get(f"/edges/{edge}").text)
    suggestions = shown.split('id="suggestions"')[1].split("</section>")[0]
    # with provenance: the model's id, that it is a model and its reasoning
    assert "nli-judge-v1" in suggestions
    assert "model review" in suggestions
    assert "MODEL-REASON" in suggestions


def test_a_reviewer_cannot_adjudicate(client: Callable[[str], ReviewClient], review_db: Path) -> None:
    set_policy(review_db, "double")
    edge = edge_pk(review_db, "c1", "https://brand.com/ax220")
    client("ann").judge(edge, "supported")
    bob = client("bob")
    bob.judge(edge, "conflicting")
    assert edge_state(review_db, edge) == "disputed"
    refused = bob.post(f"/edges/{edge}/adjudication", {"label": "conflicting", "submission": "b1", "reasoning": "x"})
    assert refused.status_code == 403
    # nor may bob see ann's label after submitting his own
    assert 'class="label">supported' not in bob.get(f"/edges/{edge}").text
    assert edge_state(review_db, edge) == "disputed"


# -- double review, adjudication, scores ------------------------------------------------------------------


def test_double_review_then_adjudication_moves_the_score(
    client: Callable[[str], ReviewClient], review_db: Path, cli: Cli
) -> None:
    set_policy(review_db, "double")
    edge = edge_pk(review_db, "c1", "https://brand.com/ax220")
    before = score_json(cli, review_db)
    # 5 unique edges, none with a final label: precision 0/5, provisional, the 5 pending in the figure itself
    pending = {"state": "provisional", "pending": 5, "shown": "0/5 · 5 pending"}
    assert before["precision"] == {"value": 0.0, "numerator": 0, "denominator": 5, **pending}
    assert before["provisional"] is True

    client("ann").judge(edge, "supported", reasoning="spec table")
    # one review under the double policy: labelled, still no final label
    assert edge_state(review_db, edge) == "labelled"
    assert score_json(cli, review_db)["precision"] == {"value": 0.0, "numerator": 0, "denominator": 5, **pending}

    client("bob").judge(edge, "partial", reasoning="only the tank")
    assert edge_state(review_db, edge) == "disputed"

    ada = client("ada")
    page = html.unescape(ada.get(f"/edges/{edge}").text)
    assert "only the tank" in page
    assert "spec table" in page
    assert "by ann" in page
    assert "by bob" in page
    no_rationale = ada.judge(edge, "supported")
    assert no_rationale.status_code == 400
    assert ada.judge(edge, "supported", reasoning="the spec table states 20 L").status_code == 303
    assert edge_state(review_db, edge) == "adjudicated"
    after = score_json(cli, review_db)
    # 1 supported of 5 unique edges, the other 4 still pending
    assert after["precision"] == {
        "value": 0.2,
        "numerator": 1,
        "denominator": 5,
        "state": "provisional",
        "pending": 4,
        "shown": "1/5 · 4 pending",
    }
    # c1 covers q1f1 for a1: 1 of 2 (answer, fact) pairs (a1 and a2 both answer q1); a2's pair waits on c3's
    # pending edge: 1 pending
    assert after["coverage"] == {
        "value": 0.5,
        "numerator": 1,
        "denominator": 2,
        "state": "provisional",
        "pending": 1,
        "shown": "1/2 · 1 pending",
    }


def test_agreeing_reviewers_make_the_edge_agreed(client: Callable[[str], ReviewClient], review_db: Path) -> None:
    set_policy(review_db, "double")
    edge = edge_pk(review_db, "c3", "https://brand.com/ax220")
    client("ann").judge(edge, "irrelevant")
    client("bob").judge(edge, "irrelevant")
    assert edge_state(review_db, edge) == "agreed"
    # an agreed edge is not the adjudicator's: they review it blind like anyone else
    assert "by ann" not in client("ada").get(f"/edges/{edge}").text


def test_single_review_gives_a_final_label_and_leaves_the_queue(
    client: Callable[[str], ReviewClient], review_db: Path
) -> None:
    edge = edge_pk(review_db, "c3", "https://brand.com/ax220")
    ann = client("ann")
    assert f'data-edge="{edge}"' in ann.get("/queue").text
    ann.judge(edge, "supported")
    assert edge_state(review_db, edge) == "labelled"
    assert f'data-edge="{edge}"' not in ann.get("/queue").text
    assert f'data-edge="{edge}"' not in client("bob").get("/queue").text


def test_score_page_matches_the_score_command(client: Callable[[str], ReviewClient], review_db: Path, cli: Cli) -> None:
    ann = client("ann")
    ann.judge(edge_pk(review_db, "c1", "https://brand.com/ax220"), "supported")
    ann.judge(edge_pk(review_db, "c3", "https://brand.com/ax220"), "conflicting")
    page = client("ada").get("/score")
    shown = re.search(r'<pre id="score-json">(.*?)</pre>', page.text, re.S)
    assert shown is not None
    assert json.loads(html.unescape(shown.group(1))) == score_json(cli, review_db)
    # 1 supported of 5 edges, shown as a fraction
    assert '<td class="fraction">1/5</td>' in page.text


def test_progress_keeps_its_total_while_the_reviewer_works(
    client: Callable[[str], ReviewClient], review_db: Path
) -> None:
    with sqlite3.connect(review_db) as conn:
        edges = [pk for (pk,) in conn.execute("SELECT pk FROM edges ORDER BY pk")]
    assert len(edges) == 5
    ann = client("ann")
    # single review: ann has 5 edges to review; each one she labels becomes final. The total stays 5 and the
    # done count rises by one per label (the counts of all waiting edges are kept for a few seconds, which must
    # not show as a growing total: 1 / 6, 2 / 7, …)
    shown = []
    for edge in edges:
        page = ann.get(f"/edges/{edge}").text
        found = re.search(r"your progress: (\d+) / (\d+) done", page)
        assert found is not None
        shown.append((int(found.group(1)), int(found.group(2))))
        assert ann.judge(edge, "supported", reasoning="spec table").status_code == 303
    assert shown == [(0, 5), (1, 5), (2, 5), (3, 5), (4, 5)]


def test_score_page_shows_the_pending_count_in_the_figure(client: Callable[[str], ReviewClient]) -> None:
    page = html.unescape(client("ada").get("/score").text)
    # nothing reviewed: 0 supported of 5 edges, all 5 pending; the figure says so itself, not 0.000
    row = re.search(r'<tr data-metric="precision" data-state="provisional">(.*?)</tr>', page, re.S)
    assert row is not None
    assert '<td class="value">0/5 · 5 pending</td>' in row.group(1)
    assert "0.000" not in row.group(1)


def test_a_retried_submission_records_one_judgement(client: Callable[[str], ReviewClient], review_db: Path) -> None:
    ann = client("ann")
    ann.get("/edges/2")
    for _ in range(3):
        assert ann.post("/edges/2/judgements", {"label": "partial", "submission": "same-form"}).status_code == 303
    assert [row[:3] for row in judgement_rows(review_db) if row[3] == "human"] == [(2, "partial", "ann")]


def test_the_severity_given_with_a_label_is_kept_shown_and_exported(
    client: Callable[[str], ReviewClient], review_db: Path, cli: Cli, tmp_path: Path
) -> None:
    edge = edge_pk(review_db, "c3", "https://brand.com/ax220")
    ann = client("ann")
    assert ann.judge(edge, "conflicting", severity="extreme").status_code == 400  # not a severity: nothing stored
    assert [row for row in judgement_rows(review_db) if row[0] == edge and row[3] == "human"] == []
    assert ann.judge(edge, "conflicting", severity="critical").status_code == 303
    assert "; severity critical" in ann.get(f"/edges/{edge}").text  # her own judgement, on her page
    # the export carries it with the judgement, and importing the export keeps it
    exported = tmp_path / "export.json"
    result = cli("export", "--db", review_db, "--format", "audit-json", "--out", exported)
    assert result.exit_code == 0, result.stderr
    judgements = [
        j
        for e in json.loads(exported.read_text())["edges"]
        for j in e.get("judgements", [e])
        if j.get("reviewer") == "ann"
    ]
    assert [(j["label"], j["severity"]) for j in judgements] == [("conflicting", "critical")]
    tables = tmp_path / "tables"
    assert cli("export", "--db", review_db, "--format", "csv", "--out", tables).exit_code == 0
    with (tables / "judgements.csv").open(encoding="utf-8") as handle:
        assert [(r["label"], r["severity"]) for r in csv.DictReader(handle) if r["reviewer"] == "ann"] == [
            ("conflicting", "critical")
        ]
    again = tmp_path / "again.db"
    assert cli("ingest", exported, "--db", again).exit_code == 0
    with sqlite3.connect(again) as conn:
        assert conn.execute("SELECT label, severity FROM judgements WHERE reviewer = 'ann'").fetchall() == [
            ("conflicting", "critical")
        ]


# -- inert markup -----------------------------------------------------------------------------------------


def test_answer_and_source_markup_is_inert(client: Callable[[str], ReviewClient], review_db: Path) -> None:
    ann = client("ann")
    title_only = edge_pk(review_db, "c2", "<script>alert('title')</script> Outdoor use guide")
    titled = ann.get(f"/edges/{title_only}")
    scripted = edge_pk(review_db, "c2", "javascript:alert('link')")
    linked = ann.get(f"/edges/{scripted}")
    for page in (titled, linked):
        assert page.status_code == 200
        main = page.text.split("<main>")[1]
        assert "<script" not in main
        assert "<img" not in main
        # the answer is Markdown with raw HTML off: its markup is text ("'" needs no escaping outside attributes)
        assert "&lt;script&gt;alert('answer')&lt;/script&gt;" in main
        assert "&lt;img src=x onerror=" in main
        assert "default-src 'none'" in page.headers["content-security-policy"]
    assert "&lt;script&gt;alert(&#39;title&#39;)&lt;/script&gt; Outdoor use guide" in titled.text
    assert 'href="javascript:' not in linked.text.lower()
    assert "javascript:alert(&#39;link&#39;)" in linked.text  # shown as text
    queue = ann.get("/queue").text
    assert "<script>alert" not in queue


# -- sources, evidence groups, audit log ---------------------------------------------------------------


def test_attaching_a_url_to_a_title_only_source(client: Callable[[str], ReviewClient], review_db: Path) -> None:
    title = "<script>alert('title')</script> Outdoor use guide"
    edge = edge_pk(review_db, "c2", title)
    ann = client("ann")
    page = ann.get(f"/edges/{edge}")
    assert 'id="attach-url"' in page.text
    source = int(re.search(r'action="/sources/(\d+)/url"', page.text).group(1))  # type: ignore[union-attr]
    assert ann.post(f"/sources/{source}/url", {"url": "javascript:alert(1)"}).status_code == 400
    done = ann.post(f"/sources/{source}/url", {"url": "https://brand.com/outdoor", "back": f"/edges/{edge}"})
    assert done.status_code == 303
    assert done.headers["location"] == f"/edges/{edge}"
    with sqlite3.connect(review_db) as conn:
        url, status, host = conn.execute("SELECT url, status, host FROM sources WHERE pk = ?", (source,)).fetchone()
        attached = conn.execute("SELECT url, reviewer FROM source_url_attachments").fetchall()
    assert (url, status, host) == ("https://brand.com/outdoor", "pending", "brand.com")
    assert attached == [("https://brand.com/outdoor", "ann")]
    # a source with a URL takes no second one
    assert ann.post(f"/sources/{source}/url", {"url": "https://other.example/"}).status_code == 400
    assert "attached by ann" in ann.get(f"/edges/{edge}").text


def test_evidence_group_is_reported_apart_from_precision(
    client: Callable[[str], ReviewClient], review_db: Path, cli: Cli
) -> None:
    before = score_json(cli, review_db)
    ann = client("ann")
    edge = edge_pk(review_db, "c1", "https://brand.com/ax220")
    page = ann.get(f"/edges/{edge}")
    sources = re.findall(r'name="sources" value="(\d+)"', page.text)
    assert len(sources) == 2  # c1 cites brand.com/ax220 and shop.example/ax
    assert ann.post("/claims/1/groups", {"sources": sources[:1]}).status_code == 400  # one source is no group
    response = ann.post(
        "/claims/1/groups",
        {
            "sources": sources,
            "required_documents": "spec sheet\nretailer listing",
            "reasoning_steps": "spec gives 20 L\nlisting names AX220",
            "decision": "supported",
            "back": f"/edges/{edge}",
        },
    )
    assert response.status_code == 303
    shown = ann.get(f"/edges/{edge}").text
    assert "c1/g1" in shown
    assert "spec gives 20 L" in shown
    score = client("ada").get("/score").text
    assert re.search(r"<tr><th>supported</th><td>1</td></tr>", score)
    # joint support never changes single-edge precision
    assert score_json(cli, review_db)["precision"] == before["precision"]


def test_audit_log_records_every_action_and_exports(
    client: Callable[[str], ReviewClient], review_db: Path, cli: Cli, tmp_path: Path
) -> None:
    edge = edge_pk(review_db, "c3", "https://brand.com/ax220")
    client("ann").judge(edge, "supported", reasoning="r")
    result = cli("audit-log", "export", "--db", review_db)
    assert result.exit_code == 0, result.stderr
    entries = [json.loads(line) for line in result.stdout.splitlines()]
    actions = [(e["actor"], e["action"]) for e in entries]
    # 4 accounts added by the fixture, then ann's login and her judgement
    assert actions == [("cli", "reviewer.add")] * 4 + [("ann", "login"), ("ann", "judgement")]
    judged = entries[-1]
    assert judged["target"] == f"edge:{edge}"
    assert judged["before"] == {"final_label": None, "review_state": "pending"}
    assert judged["after"]["review_state"] == "labelled"
    assert judged["after"]["final_label"] == "supported"
    assert [e["seq"] for e in entries] == sorted(e["seq"] for e in entries)
    out = tmp_path / "log.csv"
    assert cli("audit-log", "export", "--db", review_db, "--format", "csv", "--out", out).exit_code == 0
    assert out.read_text().splitlines()[0] == "seq,at,actor,action,target,before,after"
    with sqlite3.connect(review_db) as conn, pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("UPDATE audit_log SET actor = 'mallory'")


# -- CLI --------------------------------------------------------------------------------------------------


def test_reviewer_add_stores_an_argon2id_hash(cli: Cli, db_path: Path) -> None:
    result = cli("reviewer", "add", "li", "--role", "adjudicator", "--db", db_path, "--password", "s3cret-pass")
    assert result.exit_code == 0, result.stderr
    with ReviewStore(db_path) as store:
        account = store.accounts.reviewer("li")
    assert account is not None
    assert account.role == "adjudicator"
    assert account.password_hash.startswith("$argon2id$")
    assert "s3cret-pass" not in account.password_hash
    again = cli("reviewer", "add", "li", "--db", db_path, "--password", "another-pass")
    assert again.exit_code == 2
    assert "'li' already exists" in again.stderr
    short = cli("reviewer", "add", "mo", "--db", db_path, "--password", "short")
    assert short.exit_code == 2
    assert "8 or more" in short.stderr


def test_reviewer_add_prompts_for_the_password(db_path: Path) -> None:
    from typer.testing import CliRunner

    from citeaudit.cli import app

    result = CliRunner().invoke(
        app, ["reviewer", "add", "kim", "--db", str(db_path)], input="pass-word-1\npass-word-1\n"
    )
    assert result.exit_code == 0, result.output
    with ReviewStore(db_path) as store:
        assert store.accounts.reviewer("kim") is not None


def test_audit_log_export_of_a_missing_database(cli: Cli, tmp_path: Path) -> None:
    result = cli("audit-log", "export", "--db", tmp_path / "none.db")
    assert result.exit_code == 2
    assert "none.db" in result.stderr


@pytest.mark.parametrize(
    ("text", "claim", "start", "end", "expected"),
    [
        # by the span: "tank" is characters 6..10
        ("A big tank. A tank.", "tank", 6, 10, ("A big ", "tank", ". A tank.")),
        # a span that does not hold the claim: the first match instead
        ("A big tank. A tank.", "tank", 0, 4, ("A big ", "tank", ". A tank.")),
        # no span: the first match
        ("A big tank.", "big", None, None, ("A ", "big", " tank.")),
        # not in the answer: no highlight
        ("A big tank.", "pump", None, None, None),
    ],
)
def test_claim_highlight(
    text: str, claim: str, start: int | None, end: int | None, expected: tuple[str, str, str] | None
) -> None:
    from citeaudit.review.app import highlight

    assert highlight(text, claim, start, end) == expected


def test_review_serve_runs_as_a_real_process(review_db: Path) -> None:
    import os
    import socket
    import subprocess
    import sys

    import httpx

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    script = Path(sys.executable).with_name("citeaudit")
    server = subprocess.Popen(
        [script, "review", "serve", "--db", review_db, "--port", str(port), "--policy", "double"],
        env={**os.environ},
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                response = httpx.get(f"http://127.0.0.1:{port}/login", timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "review serve did not start"
                assert server.poll() is None, server.stderr.read() if server.stderr else ""
                time.sleep(0.1)
        assert response.status_code == 200
        assert 'name="password"' in response.text
    finally:
        server.terminate()
        server.wait(10)
        if server.stderr:
            server.stderr.close()
    with ReviewStore(review_db) as store:
        assert store.accounts.settings()["policy"] == "double"
        assert [(e.actor, e.action, e.after) for e in store.audit_log.entries()][-1] == ("serve", "setting", "double")


def test_agreement_page_matches_the_agreement_command(
    client: Callable[[str], ReviewClient], review_db: Path, cli: Cli
) -> None:
    set_policy(review_db, "double")
    first = edge_pk(review_db, "c1", "https://brand.com/ax220")
    second = edge_pk(review_db, "c3", "https://brand.com/ax220")
    ann, bob = client("ann"), client("bob")
    ann.judge(first, "supported")
    bob.judge(first, "supported")
    ann.judge(second, "irrelevant")
    bob.judge(second, "supported")
    # 2 paired edges, 1 agreement: observed 1/2; supported vs rest with ann as gold: tp 1, fp 1 -> precision 1/2
    page = html.unescape(client("ada").get("/agreement?a=ann&b=bob&resamples=0").text)
    assert re.search(r'data-coefficient="observed"><td>observed agreement</td><td class="num">0.500<', page)
    assert re.search(r'data-metric="precision">0.500<', page)
    command = json.loads(
        cli("agreement", review_db, "--between", "ann", "bob", "--format", "json", "--resamples", "0").stdout
    )
    assert command["observed"]["value"] == 0.5
    assert command["supported"]["precision"]["value"] == 0.5
    assert client("ann").get("/agreement").status_code == 403


def test_review_serve_refuses_a_file_that_is_not_a_database(cli: Cli, tmp_path: Path) -> None:
    junk = tmp_path / "notes.txt"
    junk.write_text("not a database\n" * 200)
    result = cli("review", "serve", "--db", junk)
    assert result.exit_code == 2
    assert "notes.txt" in result.stderr
    assert "not a citeaudit database" in result.stderr
