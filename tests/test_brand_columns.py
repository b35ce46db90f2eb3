"""The brand figures and misattribution of a database, read as columns, against the construction they replace: the
whole audit read as model objects, an outcome per edge, and the per-object figures over them (kept below as the
reference), on generated audits stored in a database with cross pairs judged."""

from __future__ import annotations

import dataclasses
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citeaudit import parse_audit_bytes
from citeaudit.checks import model_confusion
from citeaudit.checks._identifiers import certificates_in, entities_in
from citeaudit.core.brand.columns import identified_texts
from citeaudit.core.brand.figures import brand_figures
from citeaudit.core.identity import OfficialMatcher
from citeaudit.core.misattribution import cross_candidates, misattribution
from citeaudit.core.model import Judgement, Label
from citeaudit.core.scope import Scope, select_audit
from citeaudit.core.scoring import IntervalSettings
from citeaudit.scoring.paths import ScoredPath, score_path
from citeaudit.store import Store
from citeaudit.store.brand_input import page_snapshots, read_outcomes, source_locations
from citeaudit.store.cross_pairs import cross_pairs_of, propose_cross_pairs, record_cross_judgement, reviews_required
from citeaudit.store.review import ReviewStore
from test_brand_properties import DECLARED
from test_properties import audit_documents

ANSWER_TEXTS = ["t" * 50, "Brand makes the AX220.", "the forum and Review say so", "REVIEW of brandt"]
# A claim's text: with ASCII digits, with another script's digit only ("AX٢" names a model), with none.
CLAIM_TEXTS = ["claim {c}", "The AX220 has a 20 L tank", "The V5 weighs 3 kg", "It costs 30 euros", "AX220 is quiet"]
CLAIM_TEXTS += ["The AX\u0662 is quiet", "The product is quiet"]
PASSAGES = [None, "The AX221 has a 22 L tank", "The V7 weighs 3 kg", "The AX220 has a 20 L tank", "", "AX\u0663 page"]
TIMES = [None, "2026-03-05T00:00:00Z", "2026-02-01T10:00:00Z"]


@st.composite
def brand_documents(draw: st.DrawFn) -> dict[str, Any]:
    """A generated audit with a brand and competitors declared, texts that name them and model identifiers,
    passages and judgement times on the labels, and (sometimes) runs with collection dates."""
    doc = draw(audit_documents())
    doc["protocol"].update(json.loads(json.dumps(DECLARED)))
    for answer in doc["answers"]:
        answer["text"] = draw(st.sampled_from(ANSWER_TEXTS))
        if draw(st.integers(0, 3)) == 0:  # a title-only card: a source without a URL, its owner unknown
            answer["citations"].append({"title": "A card", "kind": "cited"})
    for c, claim in enumerate(doc["claims"]):
        claim["text"] = draw(st.sampled_from(CLAIM_TEXTS)).format(c=c)
        if draw(st.integers(0, 4)) == 0:
            claim["entity"] = "AX220"
    for edge in doc["edges"]:
        if "label" in edge:
            if passage := draw(st.sampled_from(PASSAGES)):
                edge["passage"] = passage
            if created := draw(st.sampled_from(TIMES)):
                edge["created_at"] = created
    if draw(st.booleans()):
        doc["runs"] = [
            {"id": run, "platform": "p1", "collected_at": draw(st.sampled_from([None, "2026-03-01"]))}
            for run in ("r1", "r2", "r3")
        ]
    return doc


def reference(db: Path, scope: Scope, by: tuple[str, ...], ci: IntervalSettings | None, new: ScoredPath) -> str:
    """The JSON as the database path built it before: the audit and an outcome per edge, then the figures."""
    with Store(db) as store:
        protocol_pk = store.choose_protocol(None, scope)
        chosen = store.effective_protocol(protocol_pk, scope)
        audit, outcomes = read_outcomes(store, chosen, protocol_pk)
        whole = select_audit(audit, scope)[0]
        claims = {c.id for c in whole.claims}
        outcomes = [e for e in outcomes if e.claim_id in claims]
        brand = brand_figures(
            whole,
            model_confusion,
            edges=outcomes,
            snapshots=page_snapshots(store, protocol_pk),
            locations=source_locations(store, protocol_pk),
            by=by,
            ci=None if ci is None else (ci.level, ci.resamples, ci.seed),
        )
        pairs = cross_pairs_of(store, protocol_pk)
        cross = misattribution(whole, pairs, edges=outcomes, reviews_required=reviews_required(store))
    return dataclasses.replace(new, brand=brand, misattribution=cross).to_json()


def stored(doc: dict[str, Any], folder: str, labels: list[Label | None]) -> Path:
    """The audit in a new database, every cross pair of its claims at risk proposed and judged in turn with
    ``labels`` (``None``: left pending)."""
    path = Path(folder) / "audit.db"
    payload = json.dumps(doc).encode()
    with Store(path) as store:
        store.import_audit(parse_audit_bytes(payload, "generated.json"), payload, "generated.json")
        protocol_pk = store.choose_protocol(None, Scope())
        protocol = store.effective_protocol(protocol_pk, Scope())
        audit, outcomes = read_outcomes(store, protocol, protocol_pk)
        official = OfficialMatcher(protocol.official_domains)
        db = store.connection
        with ReviewStore(path) as reviews:
            reviews.accounts.add_reviewer("li", "reviewer", "no password: labels recorded through the library")
        with db:
            propose_cross_pairs(db, protocol_pk, cross_candidates(audit, official, set(), edges=outcomes))
            pairs = [int(pk) for (pk,) in db.execute("SELECT pk FROM cross_pairs ORDER BY pk")]
            for pair, label in zip(pairs, labels, strict=False):
                if label is not None:
                    judgement = Judgement(label, "li", passage="It says so", created_at="2026-03-06T00:00:00Z")
                    record_cross_judgement(db, pair, judgement)
    return path


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    brand_documents(),
    st.lists(st.sampled_from([None, Label.SUPPORTED, Label.SUPPORTED, Label.IRRELEVANT]), min_size=12, max_size=12),
    st.sampled_from([(), ("platform",), ("question", "model")]),
    st.sampled_from([Scope(), Scope(where={"platform": frozenset({"p1"})})]),
    st.booleans(),
)
def test_the_columns_give_the_json_of_the_object_construction(
    doc: dict[str, Any],
    labels: list[Label | None],
    by: tuple[str, ...],
    scope: Scope,
    with_ci: bool,
) -> None:
    ci = IntervalSettings(resamples=200, seed=3) if with_ci else None
    with tempfile.TemporaryDirectory() as folder:
        db = stored(doc, folder, labels)
        new = score_path(db, scope=scope, by=by, ci=ci, figures=True)
        assert new.to_json() == reference(db, scope, by, ci, new)


def test_each_distinct_claim_text_is_read_once() -> None:
    read: list[str] = []

    def check(text: str, passage: str) -> tuple[tuple[str, ...], tuple[str, str] | None]:
        read.append(text)
        return model_confusion(text, passage)

    texts = ["The AX220 is quiet", "It is quiet", "The AX220 is quiet", "It is quiet", "The V5 weighs 3 kg"]
    assert identified_texts(enumerate(texts), check) == {0: texts[0], 2: texts[0], 4: texts[4]}
    assert read == ["The AX220 is quiet", "It is quiet", "The V5 weighs 3 kg"]


def reference_confusion(claim: str, passage: str) -> tuple[tuple[str, ...], tuple[str, str] | None]:
    """The identifier check as written before its texts were screened and kept: every pattern run on both texts."""
    claimed = [m for m in entities_in(claim, certificates_in(claim)) if m.slot.startswith("model:")]
    if not claimed or not passage:
        return tuple(m.text for m in claimed), None
    found = [m for m in entities_in(passage, certificates_in(passage)) if m.slot.startswith("model:")]
    for mention in claimed:
        same_family = [p for p in found if p.slot == mention.slot]
        if same_family and all(p.value != mention.value for p in same_family):
            return tuple(m.text for m in claimed), (mention.text, same_family[0].text)
    return tuple(m.text for m in claimed), None


PIECES = [
    "AX220",
    "ax220",
    "s24",
    "iPhone 15",
    "V5",
    "Q3",
    "ISO 9001",
    "E123456",
    "20 m2",
    "part no. AB-123",
    "٢٢",
    "x",
]
PIECES += [" ", "-", "The ", "tank", "20 L", "FCC ID: 2AB-X1", "UL Listed", "2014/35/EU", "iPad", "M", "7"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=8), st.lists(st.sampled_from(PIECES), max_size=8))
def test_the_screened_identifier_check_answers_as_before(claim: list[str], passage: list[str]) -> None:
    for a, b in [("".join(claim), "".join(passage)), ("".join(claim), ""), ("".join(passage), "".join(claim))]:
        assert model_confusion(a, b) == reference_confusion(a, b)


def test_a_text_without_a_digit_names_no_model_identifier() -> None:
    # Every model pattern needs a digit; the check answers at once for text without one, as it did before.
    for text in ["The quiet one", "iPhone Pro", "ISO standard", "Model X is fast", "AX is the brand"]:
        assert model_confusion(text, "") == ((), None)
        assert model_confusion(text, "The AX221 is loud") == ((), None)
    assert model_confusion("The AX220 is quiet", "")[0] == ("AX220",)


def test_edges_read_by_claim_are_listed_in_the_order_of_their_keys(tmp_path: Path, cli: Callable[..., Result]) -> None:
    # One answer of p1 among eight of p2: scored alone, its claims are a small share of the table, so its edges are
    # read through the (claim, source) index, by claim; the cases must still come in the edges' own order (c1's
    # first edge was stored before c0's).
    answers = [
        {"id": f"a{i}", "question_id": "q0", "run_id": "r1", "platform": "p1" if i == 0 else "p2", "text": "Brand"}
        for i in range(9)
    ]
    claims = [{"id": f"c{i}", "answer_id": f"a{i // 2}", "text": f"The AX22{i} has a 20 L tank"} for i in range(18)]
    urls = ["https://review.org/b", "https://brand.com/a", "https://forum.net/c"]
    edges = [
        {"claim_id": claim, "url": url, "label": "irrelevant", "reviewer": "li", "passage": "The AX299 has 22 L"}
        for claim, url in [("c1", urls[2]), ("c0", urls[1]), ("c1", urls[0]), ("c0", urls[2]), ("c0", urls[0])]
    ]
    edges += [{"claim_id": f"c{i}", "url": urls[i % 3], "label": "supported", "reviewer": "li"} for i in range(2, 18)]
    doc = {
        "format": "citeaudit.audit/v1",
        "protocol": {
            "id": "p",
            "version": "1",
            "official_domains": ["brand.com"],
            "questions": [{"id": "q0", "text": "Q?", "locale": "en-GB", "required_facts": []}],
            **json.loads(json.dumps(DECLARED)),
        },
        "answers": answers,
        "claims": claims,
        "edges": edges,
    }
    db = stored(doc, str(tmp_path), [Label.SUPPORTED, None, Label.SUPPORTED, Label.SUPPORTED])
    scope = Scope(where={"platform": frozenset({"p1"})})
    new = score_path(db, scope=scope, figures=True)
    body = json.loads(new.to_json())
    assert [(case["claim_id"], case["source_key"]) for case in body["entity_confusion"]["cases"]] == [
        ("c1", "https://forum.net/c"),
        ("c0", "https://brand.com/a"),
        ("c1", "https://review.org/b"),
        ("c0", "https://forum.net/c"),
        ("c0", "https://review.org/b"),
    ]
    assert body["misattribution"]["cases"]
    assert new.to_json() == reference(db, scope, (), None, new)
    # the command prints that JSON as it is, one newline after it
    assert cli("score", db, "--where", "platform=p1", "--format", "json").stdout == new.to_json() + "\n"
