"""Misattribution: cross pairs proposed for claims at risk, judged apart from edges, counted over claims at risk.

Expected values are derived by hand in comments from the audits below.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from builders import answer, claim, document, protocol
from citeaudit.core.identity import OfficialMatcher
from citeaudit.core.misattribution import CrossKind, CrossPair, cross_candidates, misattribution
from citeaudit.core.model import Audit, Judgement, Label, Origin
from citeaudit.interchange import parse_audit_bytes
from citeaudit.judges import make_judge
from citeaudit.review.app import ReviewConfig
from citeaudit.sources import ResolveSettings, resolve_sources
from citeaudit.store import Store
from citeaudit.suggest import suggest_cross_pairs
from review_support import ReviewClient, add_account, serve

HOSTS = (("site.test", "127.0.0.1"),)

BLOG, SPEC, OTHER, MANUAL, FORUM = (
    "https://blog.example/a",
    "https://brand.com/spec",
    "https://other.example/b",
    "https://brand.com/manual",
    "https://blog.example/c",
)


def hand_built() -> Audit:
    """a1 cites BLOG, SPEC and OTHER; a2 cites FORUM.

    c1 (a1): edge BLOG conflicting → at risk, all edges labelled.
    c2 (a1): edge SPEC supported → not at risk.
    c3 (a1): edge OTHER pending → at risk, but an edge may still turn out supported.
    c4 (a1): no edge → attributes nothing, not at risk.
    c5 (a2): edge FORUM irrelevant → at risk.
    """
    a1 = answer("a1", citations=[BLOG, SPEC, OTHER])
    a2 = answer("a2", question="q1", citations=[FORUM])
    claims = [claim(c, a) for c, a in (("c1", "a1"), ("c2", "a1"), ("c3", "a1"), ("c4", "a1"), ("c5", "a2"))]
    edges = [
        {"claim_id": "c1", "url": BLOG, "label": "conflicting", "reviewer": "li"},
        {"claim_id": "c2", "url": SPEC, "label": "supported", "reviewer": "li"},
        {"claim_id": "c3", "url": OTHER},
        {"claim_id": "c5", "url": FORUM, "label": "irrelevant", "reviewer": "li"},
    ]
    doc = document([a1, a2], claims, edges, sources=[{"key": MANUAL, "url": MANUAL}])
    return parse_audit_bytes(json.dumps(doc).encode(), "hand-built.json")


def human(label: Label, passage: str | None = None) -> Judgement:
    return Judgement(label, "li", passage=passage, created_at="2026-03-01T00:00:00Z")


def test_cross_candidates_pair_claims_at_risk_with_co_cited_and_official_pages() -> None:
    audit = hand_built()
    official = OfficialMatcher(audit.protocol.official_domains)
    found = cross_candidates(audit, official, {SPEC, MANUAL})
    # c1 (at risk, labelled): the other sources of a1, SPEC and OTHER (co-cited), then official pages with a
    # snapshot not already taken: MANUAL (SPEC is taken as co-cited). c3 is at risk with a pending edge: none yet.
    # c5: a2 cites nothing else; official pages MANUAL and SPEC. c2 is supported, c4 has no edge: none.
    assert [(c.claim_id, c.source_key, c.kind) for c in found] == [
        ("c1", SPEC, CrossKind.CO_CITED),
        ("c1", OTHER, CrossKind.CO_CITED),
        ("c1", MANUAL, CrossKind.OFFICIAL),
        ("c5", MANUAL, CrossKind.OFFICIAL),
        ("c5", SPEC, CrossKind.OFFICIAL),
    ]


def test_misattributed_claims_are_counted_over_claims_at_risk() -> None:
    audit = hand_built()
    pairs = [
        CrossPair("c1", SPEC, CrossKind.CO_CITED, (human(Label.SUPPORTED, "Tank: 20 L"),)),
        CrossPair("c1", OTHER, CrossKind.CO_CITED, (human(Label.IRRELEVANT),)),
        # a model's "supported" is a suggestion: no final label, pending
        CrossPair("c5", MANUAL, CrossKind.OFFICIAL, (Judgement(Label.SUPPORTED, "checks", Origin.MODEL),)),
        # FORUM is c5's own edge: not a cross pair (a merge of sources can make one), left out
        CrossPair("c5", FORUM, CrossKind.OFFICIAL, (human(Label.SUPPORTED),)),
        # c2 is not at risk: its cross pairs never count
        CrossPair("c2", BLOG, CrossKind.CO_CITED, (human(Label.SUPPORTED),)),
    ]
    report = misattribution(audit, pairs)
    # Claims at risk: c1, c3, c5 = 3. Misattributed: c1 (SPEC supported) = 1.
    assert (report.rate.numerator, report.rate.denominator) == (1, 3)
    # Cross pairs of claims at risk: c1×SPEC, c1×OTHER, c5×MANUAL = 3; c5×MANUAL has no final label.
    assert (report.cross_pairs, report.cross_pairs_pending) == (3, 1)
    # c3 has a pending edge and no cross pair.
    assert (report.at_risk_with_pending_edges, report.at_risk_without_cross_pairs) == (1, 1)
    assert report.provisional
    (case,) = report.cases
    assert (case.claim_id, case.cited, case.supporting_source, case.passage) == (
        "c1",
        ((BLOG, "conflicting"),),
        SPEC,
        "Tank: 20 L",
    )


def test_no_claim_at_risk_leaves_the_rate_undefined() -> None:
    doc = document(
        [answer("a1", citations=[SPEC])], [claim("c1", "a1")], [{"claim_id": "c1", "url": SPEC, "label": "supported"}]
    )
    report = misattribution(parse_audit_bytes(json.dumps(doc).encode(), "one.json"), [])
    # c1 is supported: 0 claims at risk, the rate is undefined (null), never 0.
    assert (report.rate.numerator, report.rate.denominator, report.rate.value) == (0, 0, None)


def test_double_review_needs_two_agreeing_reviewers() -> None:
    pair = CrossPair("c1", SPEC, CrossKind.CO_CITED, (human(Label.SUPPORTED),))
    # One review is final under single review, not under double review.
    assert misattribution(hand_built(), [pair]).rate.numerator == 1
    assert misattribution(hand_built(), [pair], reviews_required=2).rate.numerator == 0


# --- end to end: a database, suggest, review over HTTP, the report -------------------------------------------------

PUMP = "The AX220 pump delivers 12 bar of pressure."  # /manual.txt: "Its pump delivers 12 bar of pressure"


def cross_db(db_path: Path, site: str) -> Path:
    """One answer citing /missing (404) and /manual.txt; its claim c1 (PUMP) has an edge to /missing only,
    labelled unknown by li: c1 is at risk, and /manual.txt is co-cited (and official: the protocol's host)."""
    a1 = answer("a1", citations=[f"{site}/missing", f"{site}/manual.txt"])
    c1 = claim("c1", "a1", text=PUMP)
    c2 = claim("c2", "a1", text="The AX220 has a 20 L tank.")
    edges = [
        {"claim_id": "c1", "url": f"{site}/missing", "label": "unknown", "reviewer": "li"},
        {"claim_id": "c2", "url": f"{site}/manual.txt", "label": "supported", "reviewer": "li"},
    ]
    doc = document([a1], [c1, c2], edges, protocol(official=[{"host": "site.test"}]))
    payload = json.dumps(doc).encode()
    with Store(db_path) as store:
        store.import_audit(parse_audit_bytes(payload, "cross.json"), payload, "cross.json")
    resolve_sources(db_path, ResolveSettings(host_map=HOSTS, timeout=2.0, backoff=0.05))
    return db_path


def rows(db_path: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db_path) as db:
        return db.execute(sql).fetchall()


@pytest.fixture
def reviewed(db_path: Path, site: str) -> Iterator[tuple[Path, str]]:
    cross_db(db_path, site)
    add_account(db_path, "ann", "reviewer")
    with serve(ReviewConfig(db=db_path)) as base:
        yield db_path, base


def test_suggest_review_and_report_leave_every_edge_count_alone(
    reviewed: tuple[Path, str], cli: Callable[..., Result], site: str
) -> None:
    db_path, base = reviewed
    before = json.loads(cli("score", db_path, "--format", "json").stdout)
    report = suggest_cross_pairs(db_path, make_judge("checks"))
    # c1 is at risk (its one edge is unknown): one co-cited page, /manual.txt, which is also the only official
    # page with a snapshot (taken once). c2 is supported: no cross pair.
    assert (report.proposed, report.cross_pairs, report.suggested) == (1, 1, 1)
    again = suggest_cross_pairs(db_path, make_judge("checks"))
    assert (again.proposed, again.already_suggested, again.suggested) == (0, 1, 0)
    assert rows(db_path, "SELECT kind FROM cross_pairs") == [("co_cited",)]
    # ranked as reviewers get edges ranked unless told otherwise: trimmed windows
    assert rows(db_path, "SELECT method FROM cross_judgements WHERE origin = 'model'") == [("window",)]
    ((pair_pk,),) = rows(db_path, "SELECT pk FROM cross_pairs")

    ann = ReviewClient(base)
    try:
        assert ann.login("ann").status_code == 303
        listing = ann.get("/cross-pairs")
        assert listing.status_code == 200
        assert PUMP in listing.text
        page = ann.get(f"/cross-pairs/{pair_pk}")
        assert page.status_code == 200
        assert "Its pump delivers 12 bar" in page.text  # the source's passages are shown
        # a reviewer does not see the model's label unless the project shows suggestions
        assert 'id="suggestions"' not in page.text
        submission = re.search(r'name="submission" value="([^"]+)"', page.text)
        assert submission is not None
        form = {"label": "supported", "submission": submission.group(1), "passage": "Its pump delivers 12 bar"}
        assert ann.post(f"/cross-pairs/{pair_pk}/judgements", form).status_code == 303
        # the same form sent twice stores one judgement
        assert ann.post(f"/cross-pairs/{pair_pk}/judgements", form).status_code == 303
        assert ann.post(f"/cross-pairs/{pair_pk}/judgements", {**form, "label": "maybe"}).status_code == 400
    finally:
        ann.close()
    # one model suggestion (checks) and ann's one review, however often the form was sent
    assert rows(db_path, "SELECT origin, reviewer, judge FROM cross_judgements ORDER BY pk") == [
        ("model", "checks", "checks"),
        ("human", "ann", None),
    ]

    found = json.loads(cli("misattribution", db_path, "--format", "json").stdout)
    # claims at risk: c1 = 1; its cross pair is supported by ann: 1 of 1.
    assert found["rate"] == {"value": 1.0, "numerator": 1, "denominator": 1}
    (case,) = found["cases"]
    assert case["cited"] == [{"source_key": f"{site}/missing", "label": "unknown"}]
    assert case["supported_by"] == {"source_key": f"{site}/manual.txt", "kind": "co_cited"}
    assert case["passage"] == "Its pump delivers 12 bar"

    after = json.loads(cli("score", db_path, "--format", "json").stdout)
    for name in ("precision", "coverage", "official_rate", "edges", "required", "provisional"):
        assert after[name] == before[name], name
    assert after["misattribution"]["rate"]["numerator"] == 1
    assert rows(db_path, "SELECT count(*) FROM judgements") == [(2,)]  # the two imported labels only

    table = cli("misattribution", db_path)
    assert "misattributed claims / claims at risk: 1/1  1.000" in table.stdout
    lines = cli("misattribution", db_path, "--format", "csv").stdout.splitlines()
    assert lines[0] == "claim_id,answer_id,claim,cited,supported_by,kind,passage,reviewer"
    assert lines[1].startswith("c1,a1,")
    assert lines[1].endswith(",co_cited,Its pump delivers 12 bar,ann")

    out = db_path.with_name("report.html")
    assert cli("report", db_path, "--out", out, "--resamples", "100").exit_code == 0
    html = out.read_text(encoding="utf-8")
    section = html[html.index('id="misattribution"') :]
    # the case row: the claim, its own source with its label, the supporting page and the reviewer's passage
    assert PUMP in section
    assert "(unknown)" in section
    assert "Its pump delivers 12 bar" in section


def test_suggest_cross_pairs_from_the_command_line(db_path: Path, site: str, cli: Callable[..., Result]) -> None:
    cross_db(db_path, site)
    result = cli("suggest", "--db", db_path, "--cross-pairs", "--format", "json")
    assert result.exit_code == 0, result.stderr
    body = json.loads(result.stdout)
    # one cross pair proposed (c1 × /manual.txt) and suggested for; every pair accounted for
    assert (body["proposed"], body["cross_pairs"], body["suggested"]) == (1, 1, 1)
    assert sum(body["labels"].values()) == 1
    assert rows(db_path, "SELECT count(*) FROM judgements WHERE origin = 'model'") == [(0,)]  # no edge touched
    unknown_run = cli("suggest", "--db", db_path, "--cross-pairs", "--run", "nope")
    assert unknown_run.exit_code == 2
    assert "nope" in unknown_run.stderr


def test_an_audit_file_has_claims_at_risk_and_no_cross_pairs(
    write_json: Callable[[Any, str], Path], cli: Callable[..., Result]
) -> None:
    doc = document(
        [answer("a1", citations=[BLOG])], [claim("c1", "a1")], [{"claim_id": "c1", "url": BLOG, "label": "partial"}]
    )
    body = json.loads(cli("misattribution", write_json(doc, "a.json"), "--format", "json").stdout)
    # c1 (partial) is at risk; no cross pair exists in a file: 0 of 1, and c1 is counted as without cross pairs.
    assert (body["rate"]["numerator"], body["rate"]["denominator"], body["at_risk_without_cross_pairs"]) == (0, 1, 1)


def test_misattribution_of_a_missing_file_is_a_clean_error(tmp_path: Path, cli: Callable[..., Result]) -> None:
    result = cli("misattribution", tmp_path / "nope.json")
    assert result.exit_code == 2
    assert "nope.json" in result.stderr


def test_a_claim_found_supported_later_is_no_longer_suggested_for(db_path: Path, site: str) -> None:
    from citeaudit.store.review import ReviewStore

    cross_db(db_path, site)
    assert suggest_cross_pairs(db_path, make_judge("checks"), limit=0).cross_pairs == 1
    ((edge,),) = rows(db_path, "SELECT e.pk FROM edges e JOIN claims c ON c.pk = e.claim_pk WHERE c.id = 'c1'")
    ReviewStore.prepare(db_path)
    with ReviewStore(db_path) as store:
        store.accounts.add_reviewer("li", "reviewer", "no password: labels recorded through the library")
        # li, its one reviewer (single review), revises unknown to supported: c1 now has a supported edge and is
        # not at risk
        store.judgements.record_judgement(
            int(edge), Judgement(Label.SUPPORTED, "li", reasoning="found it", created_at="2027"), "s-1"
        )
    report = suggest_cross_pairs(db_path, make_judge("checks"))
    assert (report.cross_pairs, report.suggested) == (0, 0)
