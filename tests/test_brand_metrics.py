"""Competitor share, mentions, retrieved-but-not-cited, entity confusion and version drift on one hand-built audit.

Every expected value is derived by hand in a comment from the audit below.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import Result

from builders import document, protocol
from citeaudit.checks import model_confusion
from citeaudit.core.brand.figures import (
    brand_figures,
    competitor_share,
    entity_confusion,
    mentions,
    names_in,
    retrieved_not_cited,
    version_drift,
)
from citeaudit.core.drift import PageSnapshot
from citeaudit.core.model import Audit, SourceStatus
from citeaudit.core.protocol import differing_components, fingerprint
from citeaudit.core.scoring import score
from citeaudit.interchange import audit_to_document, load_audit, parse_audit_bytes
from citeaudit.interchange.reader import load_protocol
from citeaudit.store import Store
from citeaudit.store.brand_input import page_snapshots
from citeaudit.store.records import Document, FetchOutcome, Hop
from citeaudit.store.resolution import record_fetch, source_pk_of

REPO = Path(__file__).resolve().parent.parent
SCHEMA = REPO / "src" / "citeaudit" / "schemas" / "audit-v1.schema.json"

BRAND = {"name": "Acme", "aliases": ["Acme Tools"]}
COMPETITORS = [
    {"name": "Rival", "domains": ["rival.com"], "aliases": ["RivalCo"]},
    {"name": "Zeta", "domains": [{"host": "shop.example.net", "path_prefix": "/zeta/"}]},
]


def cite(url: str, kind: str = "cited") -> dict[str, Any]:
    return {"url": url, "kind": kind}


def labelled(
    cid: str, url: str, label: str | None, passage: str | None = None, at: str | None = None
) -> dict[str, Any]:
    row: dict[str, Any] = {"claim_id": cid, "url": url}
    if label:
        row.update(label=label, reviewer="li", created_at=at or "2026-03-05T10:00:00Z")
    if passage:
        row["passage"] = passage
    return row


def hand_built(**protocol_extra: Any) -> dict[str, Any]:
    """Four answers over two questions and two platforms.

    a1 (q1, p1) names Acme and Rival; cites brand.com/ax220 and rival.com/x; retrieved brand.com/manual.
    a2 (q1, p2) names RivalCo (and "Acmeville", not Acme); cites rival.com/y and blog.example/z; retrieved
        brand.com/ax220 without citing it.
    a3 (q2, p1) names "acme" in lower case; cites shop.example.net/zeta/a (Zeta) and a title-only card;
        reports no retrieved sources.
    a4 (q2, p2) names nobody; cites brand.com/faq and also retrieved it.
    """
    answers = [
        {
            "id": "a1", "question_id": "q1", "run_id": "r1", "platform": "p1",
            "text": "Acme makes the AX220; Rival makes another.",
            "citations": [
                cite("https://brand.com/ax220"), cite("https://rival.com/x"),
                cite("https://brand.com/manual", "retrieved"),
            ],
        },
        {
            "id": "a2", "question_id": "q1", "run_id": "r1", "platform": "p2",
            "text": "Shops in Acmeville sell the RivalCo model.",
            "citations": [
                cite("https://rival.com/y"), cite("https://blog.example/z"),
                cite("https://brand.com/ax220", "retrieved"),
            ],
        },
        {
            "id": "a3", "question_id": "q2", "run_id": "r1", "platform": "p1",
            "text": "acme is waterproof.",
            "citations": [cite("https://shop.example.net/zeta/a"), {"title": "A card without a link"}],
        },
        {
            "id": "a4", "question_id": "q2", "run_id": "r2", "platform": "p2",
            "text": "Nothing to name here.",
            "citations": [cite("https://brand.com/faq"), cite("https://brand.com/faq", "retrieved")],
        },
    ]  # fmt: skip
    claims = [
        {"id": "c1", "answer_id": "a1", "text": "The AX220 has a 20 L tank"},
        {"id": "c2", "answer_id": "a1", "text": "The V5 weighs 3 kg"},
        {"id": "c3", "answer_id": "a2", "text": "The s24 has 8 GB"},
        {"id": "c4", "answer_id": "a2", "text": "The iPhone 15 has USB-C"},
        {"id": "c5", "answer_id": "a3", "text": "It is waterproof"},
        {"id": "c6", "answer_id": "a4", "text": "The X5 is quiet"},
    ]
    edges = [
        labelled("c1", "https://brand.com/ax220", "conflicting", "The AX320 has a 30 L tank"),
        labelled("c2", "https://rival.com/x", "supported", "V5 weighs 3 kg"),
        labelled("c3", "https://rival.com/y", "irrelevant", "The S23 has 8 GB"),
        labelled("c4", "https://blog.example/z", None),
        labelled("c5", "https://shop.example.net/zeta/a", "supported", "Waterproof"),
        labelled("c6", "https://brand.com/faq", "partial", None, at="2026-03-02T09:00:00Z"),
    ]
    proto = protocol(questions=2, **protocol_extra)
    runs = [{"id": "r1", "collected_at": "2026-03-01"}, {"id": "r2"}]
    return document(answers, claims, edges, proto, runs=runs)


def audit_of(doc: dict[str, Any]) -> Audit:
    return parse_audit_bytes(json.dumps(doc).encode(), "hand-built.json")


@pytest.fixture
def audit() -> Audit:
    return audit_of(hand_built(brand=BRAND, competitors=COMPETITORS))


def fraction(metric: Any) -> tuple[int, int]:
    return metric.numerator, metric.denominator


def test_competitor_share_counts_answers_and_cited_pairs_by_owner(audit: Audit) -> None:
    share = competitor_share(audit)
    # Rival's domain is cited by a1 (rival.com/x) and a2 (rival.com/y): 2 of 4 answers.
    # Zeta's path-scoped presence is cited by a3 only: 1 of 4.
    assert {name: fraction(m) for name, m in share.answers_citing.items()} == {"Rival": (2, 4), "Zeta": (1, 4)}
    # Cited (answer, source) pairs: a1 ax220 + rival/x, a2 rival/y + blog, a3 zeta + card, a4 faq = 7.
    # official: a1 ax220, a4 faq = 2; Rival 2; Zeta 1; third party: blog = 1; unknown: the card without a link = 1.
    # Retrieved-only pages (brand.com/manual) are not cited and count for no owner.
    assert {owner: fraction(m) for owner, m in share.sources_by_owner.items()} == {
        "official": (2, 7),
        "competitor:Rival": (2, 7),
        "competitor:Zeta": (1, 7),
        "third_party": (1, 7),
        "unknown": (1, 7),
    }


def test_mentions_sit_beside_citations(audit: Audit) -> None:
    found = mentions(audit)
    assert found.brand is not None
    # Named "Acme": a1, and a3 in lower case; "Acmeville" in a2 is another word: 2 of 4.
    assert fraction(found.brand.mention_rate) == (2, 4)
    # Citing an official page: a1 (ax220) and a4 (faq): 2 of 4 — the official-domain rate.
    assert fraction(found.brand.citation_rate) == (2, 4)
    assert fraction(found.brand.citation_rate) == fraction(score(audit).official_rate)
    # a3 names the brand without citing it; a4 cites it without naming it.
    assert (found.brand.mentioned_not_cited, found.brand.cited_not_mentioned) == (1, 1)
    rival = found.competitors["Rival"]
    # "Rival" in a1 and the alias "RivalCo" in a2: 2 of 4, both also cite rival.com.
    assert (fraction(rival.mention_rate), rival.mentioned_not_cited, rival.cited_not_mentioned) == ((2, 4), 0, 0)
    zeta = found.competitors["Zeta"]
    # Nobody names Zeta; a3 cites it: mentioned 0 of 4, cited without a mention once.
    assert (fraction(zeta.mention_rate), zeta.cited_not_mentioned) == ((0, 4), 1)


def test_brand_names_match_whole_words_in_any_case() -> None:
    assert names_in("ACME TOOLS rock", ["Acme Tools"])
    assert not names_in("Acmeville", ["Acme"])
    assert not names_in("anything", [])


def test_no_brand_declared_means_no_mention_rate() -> None:
    assert mentions(audit_of(hand_built())).brand is None


def test_retrieved_but_not_cited_per_platform(audit: Audit) -> None:
    found = retrieved_not_cited(audit)
    # Answers reporting retrieved sources: a1, a2, a4 (a3 reports none), each retrieved an official page: 3.
    # a1 retrieved brand.com/manual and cited only ax220 → counts; a2 retrieved ax220 and cited no official page
    # → counts; a4 retrieved faq and cited it → does not. 2 of 3; all three retrieved an official page.
    assert (fraction(found.rate), found.retrieved_official, found.not_reported) == ((2, 3), 3, 1)
    figures = brand_figures(audit, model_confusion)
    per_platform = {p: (fraction(f.rate), f.not_reported) for p, f in figures.retrieved_by_platform}
    # p1: a1 counts (1 of 1), a3 not reported; p2: a2 counts, a4 not: 1 of 2.
    assert per_platform == {"p1": ((1, 1), 1), "p2": ((1, 2), 0)}


def test_retrieved_not_cited_counts_an_answer_that_cited_what_it_retrieved(
    write_json: Callable[[Any, str], Path], cli: Callable[..., Result], tmp_path: Path
) -> None:
    # The brand figures (retrieved-not-cited among them) are computed for a protocol that names a brand.
    doc = hand_built(brand=BRAND)
    # b1 retrieved brand.com/ax220 and cited it (the engine lists it once, as cited); b2 retrieved it and left it
    # out; both engines report what they retrieved (retrieval: used)
    doc["answers"] = [
        {"id": "b1", "question_id": "q1", "run_id": "r1", "platform": "p1", "text": "The AX220.",
         "retrieval": "used", "citations": [cite("https://brand.com/ax220")]},
        {"id": "b2", "question_id": "q1", "run_id": "r1", "platform": "p1", "text": "The AX220.",
         "retrieval": "used",
         "citations": [cite("https://blog.example/z"), cite("https://brand.com/ax220", "retrieved")]},
    ]  # fmt: skip
    doc["claims"], doc["edges"] = [], []
    path = write_json(doc, "retrieved.json")
    found = retrieved_not_cited(load_audit(path))
    # both retrieved an official page: denominator 2; only b2 left it uncited: 1 of 2 (the old rule gave 1 of 1)
    assert (fraction(found.rate), found.retrieved_official, found.not_reported, found.without_official) == (
        (1, 2),
        2,
        0,
        0,
    )
    db = tmp_path / "retrieved.db"
    assert cli("ingest", path, "--db", db).exit_code == 0
    body = json.loads(cli("score", db, "--format", "json").stdout)["retrieved_not_cited"]
    assert (body["rate"]["numerator"], body["rate"]["denominator"], body["retrieved_official"]) == (1, 2, 2)


def test_entity_confusion_over_edges_whose_claim_names_an_identifier(audit: Audit) -> None:
    found = entity_confusion(audit, model_confusion)
    # Claims naming an identifier: c1 AX220, c2 V5, c3 s24, c4 iPhone 15, c6 X5 (c5 names none): 5 edges.
    # Confused: c1 (conflicting; passage about AX320) and c3 (irrelevant; passage about S23) = 2.
    # c2's passage names V5 itself; c4 is pending; c6 is labelled but quotes no passage.
    assert fraction(found.rate) == (2, 5)
    assert (found.pending, found.without_passage) == (1, 1)
    assert [(c.claim_id, c.claim_identifier, c.passage_identifier) for c in found.cases] == [
        ("c1", "AX220", "AX320"),
        ("c3", "s24", "S23"),
    ]


def test_a_supported_edge_is_never_confused() -> None:
    doc = hand_built()
    doc["edges"][0]["label"] = "supported"  # the reviewer overruled the AX320 page: a comparison table, say
    found = entity_confusion(audit_of(doc), model_confusion)
    # c1 no longer counts: 1 (c3) of the same 5 edges.
    assert fraction(found.rate) == (1, 5)


def test_version_drift_lists_stale_and_changed_pages(audit: Audit) -> None:
    snapshots = [
        PageSnapshot("https://brand.com/ax220", "2026-02-20T00:00:00Z", "sha256:h1"),
        PageSnapshot("https://brand.com/ax220", "2026-03-04T00:00:00Z", "sha256:h1"),
        PageSnapshot("https://brand.com/ax220", "2026-04-01T00:00:00Z", "sha256:h2", "2026-03-28"),
        PageSnapshot("https://brand.com/faq", "2026-02-01T00:00:00Z", "sha256:h3", "2026-01-10"),
        PageSnapshot("https://brand.com/manual", "2026-05-01T00:00:00Z", "sha256:h4", "2026-04-30"),
    ]
    drift = version_drift(audit, snapshots)
    # Cited official pages: ax220 (a1) and faq (a4); manual is only retrieved. Both have a human judgement
    # and a snapshot: 2 judged pages. ax220 was judged on 2026-03-05 on the 03-04 snapshot (h1); the 04-01
    # snapshot holds h2: stale. faq has one snapshot: not stale. 1 of 2.
    assert drift.judged_pages == 2
    assert [(s.source_key, s.judged_fetched_at, s.newest_fetched_at) for s in drift.stale] == [
        ("https://brand.com/ax220", "2026-03-04T00:00:00Z", "2026-04-01T00:00:00Z")
    ]
    # (answer, official page) pairs: (a1, ax220) collected 2026-03-01 (run r1) → dated; (a4, faq) in run r2
    # without a date → undated. ax220 states 2026-03-28, after the collection: changed. 1 of 1.
    assert (drift.dated_pairs, drift.undated_pairs) == (1, 1)
    assert [(c.answer_id, c.collected_at, c.changed_at) for c in drift.changed_after_collection] == [
        ("a1", "2026-03-01", "2026-03-28")
    ]


def test_version_drift_counts_a_page_judged_without_a_time() -> None:
    doc = hand_built()
    # c6's judgement of brand.com/faq records no time (as in an imported file without created_at)
    del doc["edges"][5]["created_at"]
    snapshots = [
        PageSnapshot("https://brand.com/ax220", "2026-02-20T00:00:00Z", "sha256:h1"),
        PageSnapshot("https://brand.com/ax220", "2026-04-01T00:00:00Z", "sha256:h2"),
        PageSnapshot("https://brand.com/faq", "2026-02-01T00:00:00Z", "sha256:h3"),
        PageSnapshot("https://brand.com/faq", "2026-04-01T00:00:00Z", "sha256:h4"),
    ]
    drift = version_drift(audit_of(doc), snapshots)
    # ax220 (judged 03-05 on the 02-20 snapshot, revised 04-01): judged and stale. faq: judged, time unknown, so
    # in the denominator (2 judged pages) but never counted stale: which of its two snapshots was read is unknown.
    assert (drift.judged_pages, len(drift.stale), drift.judged_time_unknown) == (2, 1, 1)
    stale = drift.to_dict()["stale"]
    assert isinstance(stale, dict)
    assert (stale["numerator"], stale["denominator"], stale["time_unknown"]) == (1, 2, 1)


def test_a_page_changed_after_collection_by_its_snapshots_alone(audit: Audit) -> None:
    snapshots = [
        PageSnapshot("https://brand.com/ax220", "2026-02-27T00:00:00Z", "sha256:h1"),
        PageSnapshot("https://brand.com/ax220", "2026-03-10T00:00:00Z", "sha256:h2"),
    ]
    drift = version_drift(audit, snapshots)
    # No page dates; the snapshot before 03-01 holds h1, the one on 03-10 holds h2: changed at 03-10.
    assert [(c.answer_id, c.changed_at) for c in drift.changed_after_collection] == [("a1", "2026-03-10T00:00:00Z")]
    # ax220 judged 03-05 on the 02-27 snapshot; 03-10 holds other content: stale. faq has no snapshot: 1 judged.
    assert (drift.judged_pages, len(drift.stale)) == (1, 1)


# --- protocol keys ------------------------------------------------------------------------------------------------


def test_protocols_without_the_new_keys_keep_their_fingerprints(exporter_path: Path, four_claim_path: Path) -> None:
    # Fingerprints of the bundled examples as computed before brand and competitors existed.
    assert fingerprint(load_audit(exporter_path).protocol) == (
        "sha256:29823ed5624a1db7cb0d65f7851b276f7de71273a803415568c711561e4aedc4"
    )
    assert fingerprint(load_audit(four_claim_path).protocol) == (
        "sha256:a4ac2f5efe2bfa38093be62af54cef0a7f9ea2c2afcf359ca6336a5399d35255"
    )


def test_brand_and_competitors_are_fingerprinted_components() -> None:
    plain = audit_of(hand_built()).protocol
    with_brand = audit_of(hand_built(brand=BRAND)).protocol
    with_both = audit_of(hand_built(brand=BRAND, competitors=COMPETITORS)).protocol
    assert set(differing_components(plain, with_brand)) == {"brand"}
    assert set(differing_components(with_brand, with_both)) == {"competitors"}
    other_domain = [{**COMPETITORS[0], "domains": ["rival.net"]}, COMPETITORS[1]]
    changed = audit_of(hand_built(brand=BRAND, competitors=other_domain)).protocol
    assert set(differing_components(with_both, changed)) == {"competitors"}


def test_the_schema_accepts_the_new_keys() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.validate(hand_built(brand=BRAND, competitors=COMPETITORS), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(hand_built(competitors=[{"name": "Rival", "domain": ["rival.com"]}]), schema)


def test_yaml_protocol_with_competitors(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(
        "id: ax\nversion: 1\nofficial_domains: [brand.com]\nbrand: {name: Acme, aliases: [Acme Tools]}\n"
        "competitors:\n  - {name: Rival, domains: [rival.com, {host: shop.example.net, path_prefix: /rival/}]}\n"
        "questions: []\n",
        encoding="utf-8",
    )
    loaded = load_protocol(path)
    assert loaded.brand is not None
    assert loaded.brand.names == ("Acme", "Acme Tools")
    assert [d.host or d.domain for d in loaded.competitors[0].domains] == ["rival.com", "shop.example.net"]


@pytest.mark.parametrize(
    ("competitors", "where"),
    [
        ([{"name": "Rival", "domains": ["www.rival.com"]}], "protocol.competitors[0].domains[0]"),
        ([{"name": "Rival"}, {"name": "rival"}], "protocol.competitors[1].name"),
        ([{"name": "Rival", "aliases": [" "]}], "protocol.competitors[0].aliases[0]"),
    ],
)
def test_bad_competitor_entries_name_their_path(
    write_json: Callable[[Any, str], Path], cli: Callable[..., Result], competitors: list[Any], where: str
) -> None:
    path = write_json(hand_built(competitors=competitors), "bad.json")
    result = cli("score", path)
    assert result.exit_code == 2
    assert where in result.stderr


# --- score --format json -----------------------------------------------------------------------------------------


def test_score_json_has_each_figure_under_its_own_key(
    write_json: Callable[[Any, str], Path], cli: Callable[..., Result]
) -> None:
    plain = json.loads(cli("score", write_json(hand_built(), "plain.json"), "--format", "json").stdout)
    path = write_json(hand_built(brand=BRAND, competitors=COMPETITORS), "brand.json")
    body = json.loads(cli("score", path, "--format", "json", "--by", "platform").stdout)
    # Declaring brand and competitors changes no existing number.
    for name in ("precision", "coverage", "official_rate", "edges", "required"):
        assert body[name] == plain[name]
    assert body["competitor_share"]["answers_citing"]["Rival"] == {"value": 0.5, "numerator": 2, "denominator": 4}
    assert body["mentions"]["brand"]["mention_rate"]["numerator"] == 2
    assert body["retrieved_not_cited"]["rate"] == {"value": 2 / 3, "numerator": 2, "denominator": 3}
    assert body["entity_confusion"]["rate"] == {"value": 0.4, "numerator": 2, "denominator": 5}
    assert body["version_drift"]["stale"]["denominator"] == 0  # an audit file records no snapshots here
    p1, p2 = body["groups"]
    # p1 answers: a1 (cites rival.com/x) and a3; p2: a2 (cites rival.com/y) and a4 → 1 of 2 each.
    assert p1["competitor_share"]["answers_citing"]["Rival"]["numerator"] == 1
    assert p2["competitor_share"]["answers_citing"]["Rival"]["denominator"] == 2
    # p1 edges with an identifier: c1, c2 → 1 (c1) of 2; p2: c3, c4, c6 → 1 (c3) of 3.
    assert (p1["entity_confusion"]["rate"]["numerator"], p1["entity_confusion"]["rate"]["denominator"]) == (1, 2)
    assert (p2["entity_confusion"]["rate"]["numerator"], p2["entity_confusion"]["rate"]["denominator"]) == (1, 3)


def test_score_json_with_ci_gives_each_share_an_interval(
    write_json: Callable[[Any, str], Path], cli: Callable[..., Result]
) -> None:
    path = write_json(hand_built(brand=BRAND, competitors=COMPETITORS), "brand.json")
    body = json.loads(cli("score", path, "--format", "json", "--ci", "--resamples", "200").stdout)
    rival = body["competitor_share"]["answers_citing"]["Rival"]
    # Both questions have Rival's citation in q1 only (a1, a2): per question 2/2 and 0/2, so the interval spans
    # resamples of 0, 0.5 and 1 and always contains the estimate 0.5.
    assert rival["ci"]["clusters"] == 2
    assert rival["ci"]["low"] <= 0.5 <= rival["ci"]["high"]
    assert "ci" in body["mentions"]["brand"]["mention_rate"]


# --- a database: the page history comes from its fetches ---------------------------------------------------------


def fetched(url: str, at: str, text: str, updated: str | None = None) -> FetchOutcome:
    body = text.encode()
    document = Document(hashlib.sha256(body).hexdigest(), "text/plain", body, text, updated=updated)
    return FetchOutcome(url, SourceStatus.RESOLVED, None, (Hop(url, 200),), at, url, http_status=200, document=document)


def test_score_of_a_database_reads_version_drift_from_its_fetches(db_path: Path, cli: Callable[..., Result]) -> None:
    doc = hand_built(brand=BRAND, competitors=COMPETITORS)
    payload = json.dumps(doc).encode()
    with Store(db_path) as store:
        store.import_audit(parse_audit_bytes(payload, "hand-built.json"), payload, "hand-built.json")
        db = store.connection
        with db:
            for outcome in (
                fetched("https://brand.com/ax220", "2026-03-04T00:00:00Z", "AX220 tank: 20 L"),
                fetched("https://brand.com/ax220", "2026-04-01T00:00:00Z", "AX220 tank: 22 L", "2026-03-28"),
            ):
                record_fetch(db, source_pk_of(db, "https://brand.com/ax220"), outcome)
        assert [s.content_sha256 for s in page_snapshots(store, 1)] == [
            "sha256:" + hashlib.sha256(b"AX220 tank: 20 L").hexdigest(),
            "sha256:" + hashlib.sha256(b"AX220 tank: 22 L").hexdigest(),
        ]
    body = json.loads(cli("score", db_path, "--format", "json").stdout)
    drift = body["version_drift"]
    # As in the file test: ax220 judged 2026-03-05 on the 03-04 snapshot, revised on 04-01 → stale; faq has no
    # snapshot in this database, so ax220 is the only judged page: 1 of 1.
    assert (drift["stale"]["numerator"], drift["stale"]["denominator"]) == (1, 1)
    # (a1, ax220) collected 2026-03-01; the page states 2026-03-28: changed. (a4, faq): undated.
    assert drift["changed_after_collection"]["cases"] == [
        {
            "answer_id": "a1",
            "source_key": "https://brand.com/ax220",
            "collected_at": "2026-03-01",
            "changed_at": "2026-03-28",
        }
    ]
    # The per-scope figures read the same from the database as from the file.
    assert body["competitor_share"]["sources_by_owner"]["official"]["numerator"] == 2
    assert body["entity_confusion"]["rate"]["denominator"] == 5


def test_brand_and_competitors_survive_export_and_the_database(
    db_path: Path, write_json: Callable[[Any, str], Path], cli: Callable[..., Result]
) -> None:
    doc = hand_built(brand=BRAND, competitors=COMPETITORS)
    audit = audit_of(doc)
    exported = audit_to_document(audit)
    # export, then read back: the same protocol, the same fingerprint
    assert fingerprint(audit_of(exported).protocol) == fingerprint(audit.protocol)
    payload = json.dumps(doc).encode()
    with Store(db_path) as store:
        store.import_audit(parse_audit_bytes(payload, "hand-built.json"), payload, "hand-built.json")
        (info,) = store.protocols()
        assert info.fingerprint == fingerprint(audit.protocol)
        assert store.protocol(info.pk).competitors == audit.protocol.competitors


# --- identifiers the entity confusion rate relies on ------------------------------------------------------------


@pytest.mark.parametrize(
    ("claim", "passage", "expected"),
    [
        ("The V5 weighs 3 kg", "The V7 weighs 3 kg", ("V5", "V7")),
        ("The X5 is quiet", "Spec sheet of the X3", ("X5", "X3")),
        ("The iPhone 15 has USB-C", "The iPhone 14 has Lightning", ("iPhone 15", "iPhone 14")),
        ("The s24 has 8 GB", "The Galaxy S23 has 8 GB", ("s24", "S23")),
        ("The s24 has 8 GB", "The S24 has 8 GB", None),  # the same model in capitals
        ("The V5 weighs 3 kg", "Compare the V5 and V7", None),  # the claim's model is on the page
    ],
)
def test_short_and_lower_case_identifiers_are_compared(
    claim: str, passage: str, expected: tuple[str, str] | None
) -> None:
    assert model_confusion(claim, passage)[1] == expected


@pytest.mark.parametrize(
    "text",
    ["Results for Q3 2026", "A floor of 20 m2 and 3 m3 of storage", "It is 5 x2 faster", "Report H1 2025"],
)
def test_quarters_units_and_multipliers_are_not_identifiers(text: str) -> None:
    assert model_confusion(text, "")[0] == ()


def test_protocol_check_summarises_brand_and_competitors(tmp_path: Path, cli: Callable[..., Result]) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(
        "id: ax\nversion: 1\nofficial_domains: [brand.com]\nbrand: {name: Acme, aliases: [Acme Tools]}\n"
        "competitors: [{name: Rival, domains: [rival.com]}]\nquestions: []\n",
        encoding="utf-8",
    )
    result = cli("protocol", "check", path)
    assert result.exit_code == 0
    assert "brand 'Acme' (2 name(s)), 1 competitor(s)" in result.stdout
