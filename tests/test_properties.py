"""Invariants of strict scoring and of the interchange round trip, over generated audits (hypothesis)."""

from __future__ import annotations

import json
import random
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citeaudit import Store, audit_to_document, parse_audit_bytes, score, score_reference
from citeaudit.core.model import Label

LABELS = ["supported", "partial", "conflicting", "irrelevant", "unknown"]
URLS = [
    "https://brand.com/ax220",
    "https://www.brand.com/ax220?utm_source=openai",
    "https://brand.com.evil.net/ax220",
    "https://notbrand.com/ax",
    "https://review.org/ax220#specs",
    "https://REVIEW.org:443/ax220",
    "http://forum.net/t/1",
    "https://x.github.io/brand",
]
SEVERITIES = [None, "critical", "high", "medium", "low"]


@st.composite
def audit_documents(draw: st.DrawFn) -> dict[str, Any]:
    """An audit document with random questions, facts, answers, claims, citations and labelled edges."""
    n_questions = draw(st.integers(1, 3))
    questions = []
    for q in range(n_questions):
        facts = [
            {
                "id": f"q{q}f{f}",
                "text": f"fact {f}",
                **({"severity": s} if (s := draw(st.sampled_from(SEVERITIES))) else {}),
            }
            for f in range(draw(st.integers(0, 3)))
        ]
        questions.append(
            {
                "id": f"q{q}",
                "text": f"Q{q}?",
                "locale": draw(st.sampled_from(["en-GB", "de-DE"])),
                "required_facts": facts,
            }
        )
    answers = []
    for a in range(draw(st.integers(0, 6))):
        citations: list[dict[str, Any]] = [
            {"url": draw(st.sampled_from(URLS)), "kind": draw(st.sampled_from(["cited", "cited", "retrieved"]))}
            for _ in range(draw(st.integers(0, 3)))
        ]
        if citations and draw(st.booleans()):
            citations[0]["quote"] = draw(st.text(max_size=20))
        if draw(st.booleans()):
            citations.append({"marker": "[9]", "kind": "dangling"})
        retrieval = draw(st.sampled_from([None, "used", "failed"]))
        answers.append(
            {
                "id": f"a{a}",
                "question_id": f"q{draw(st.integers(0, n_questions - 1))}",
                "run_id": draw(st.sampled_from(["r1", "r2"])),
                "platform": draw(st.sampled_from(["p1", "p2"])),
                "model": draw(st.sampled_from(["m1", "m2"])),
                "text": "t" * 50,
                "citations": citations,
                **({"retrieval": retrieval} if retrieval else {}),
                **(
                    {"queries": draw(st.lists(st.text(max_size=12), min_size=1, max_size=2))}
                    if draw(st.booleans())
                    else {}
                ),
            }
        )
    claims = []
    if answers:
        for c in range(draw(st.integers(0, 10))):
            owner = draw(st.sampled_from(answers))
            facts = next(q["required_facts"] for q in questions if q["id"] == owner["question_id"])
            fact = draw(st.sampled_from([None] + [f["id"] for f in facts]))
            claims.append(
                {
                    "id": f"c{c}",
                    "answer_id": owner["id"],
                    "text": f"claim {c}",
                    **({"required_fact_id": fact} if fact else {}),
                }
            )
    edges = []
    if claims:
        for _ in range(draw(st.integers(0, 20))):
            row: dict[str, Any] = {"claim_id": draw(st.sampled_from(claims))["id"], "url": draw(st.sampled_from(URLS))}
            label = draw(st.sampled_from([None, *LABELS]))
            if label:
                row["label"] = label
                row["reviewer"] = draw(st.sampled_from(["li", "marta"]))
            edges.append(row)
    return {
        "format": "citeaudit.audit/v1",
        "protocol": {
            "id": "p",
            "version": "1",
            "official_domains": ["brand.com", "x.github.io"],
            "questions": questions,
        },
        "answers": answers,
        "claims": claims,
        "edges": edges,
        "failed_answers": [
            {
                "run_id": draw(st.sampled_from(["r1", "r3"])),
                "question_id": f"q{draw(st.integers(0, n_questions - 1))}",
                "platform": draw(st.sampled_from(["p1", "p2"])),
                "status": draw(st.sampled_from(["failed", "incomplete"])),
                "reason": draw(st.sampled_from([None, "status: failed", "page_token only"])),
                "ordinal": k,
            }
            for k in range(draw(st.integers(0, 2)))
        ],
    }


def parse(doc: dict[str, Any]) -> Any:
    return parse_audit_bytes(json.dumps(doc).encode(), "generated.json")


def scores(doc: dict[str, Any], by: tuple[str, ...] = ("platform",)) -> dict[str, Any]:
    return score(parse(doc), by=by).to_dict()


def without_location_counts(result: Any) -> Any:
    """The result with the location counts removed (the only fields a duplicated location may change)."""
    if isinstance(result, dict):
        return {k: without_location_counts(v) for k, v in result.items() if k not in ("locations", "collapsed")}
    if isinstance(result, list):
        return [without_location_counts(v) for v in result]
    return result


FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(audit_documents(), st.sampled_from([(), ("platform",), ("run", "question"), ("locale", "model")]))
def test_vectorized_path_equals_reference(doc: dict[str, Any], by: tuple[str, ...]) -> None:
    audit = parse(doc)
    fast = score(audit, by=by, macro=True).to_dict()
    slow = score_reference(audit, by=by, macro=True).to_dict()
    assert_close(fast, slow)


def assert_close(left: Any, right: Any, path: str = "$") -> None:
    """Equal, except that floats (macro means, weighted sums) may differ in the last bits of summation order."""
    if isinstance(left, dict) and isinstance(right, dict):
        assert left.keys() == right.keys(), path
        for key in left:
            assert_close(left[key], right[key], f"{path}.{key}")
    elif isinstance(left, list) and isinstance(right, list):
        assert len(left) == len(right), path
        for i, (a, b) in enumerate(zip(left, right, strict=True)):
            assert_close(a, b, f"{path}[{i}]")
    elif isinstance(left, float) or isinstance(right, float):
        assert left == pytest.approx(right, rel=1e-12, abs=1e-12), path
    else:
        assert left == right, path


@FAST
@given(audit_documents(), st.data())
def test_duplicating_a_citation_location_never_changes_a_score(doc: dict[str, Any], data: st.DataObject) -> None:
    if not doc["edges"]:
        return
    index = data.draw(st.integers(0, len(doc["edges"]) - 1))
    duplicated = json.loads(json.dumps(doc))
    duplicated["edges"].insert(data.draw(st.integers(0, len(doc["edges"]))), dict(doc["edges"][index]))
    before, after = scores(doc), scores(duplicated)
    assert without_location_counts(after) == without_location_counts(before)
    assert after["edges"]["locations"] == before["edges"]["locations"] + 1
    assert after["edges"]["unique"] == before["edges"]["unique"]


@FAST
@given(audit_documents(), st.randoms(use_true_random=False))
def test_row_order_never_matters(doc: dict[str, Any], rng: random.Random) -> None:
    shuffled = json.loads(json.dumps(doc))
    for key in ("answers", "claims", "edges"):
        rng.shuffle(shuffled[key])
    # equal up to float rounding: the repeat variances sum in row order, so the last bits may differ
    assert_close(scores(shuffled, by=("platform", "question")), scores(doc, by=("platform", "question")))


@FAST
@given(audit_documents(), st.data())
def test_adding_an_unsupported_edge_never_raises_precision(doc: dict[str, Any], data: st.DataObject) -> None:
    if not doc["claims"]:
        return
    extended = json.loads(json.dumps(doc))
    row = {"claim_id": data.draw(st.sampled_from(doc["claims"]))["id"], "url": "https://new-source.org/page"}
    label = data.draw(st.sampled_from([None, "partial", "conflicting", "irrelevant", "unknown"]))
    if label:
        row["label"] = label
    extended["edges"].append(row)
    before, after = scores(doc, by=()), scores(extended, by=())
    assert after["precision"]["denominator"] == before["precision"]["denominator"] + 1
    assert after["precision"]["numerator"] == before["precision"]["numerator"]
    if before["precision"]["value"] is not None:
        assert after["precision"]["value"] <= before["precision"]["value"]


def metrics(result: dict[str, Any]) -> list[dict[str, Any]]:
    found = [result[name] for name in ("precision", "coverage", "official_rate")]
    for name in result.get("severity", {}).values():
        found.extend(name.values())
    for group in result.get("groups", []):
        found.extend(metrics(group))
    return found


@FAST
@given(audit_documents())
def test_value_is_null_iff_denominator_is_zero_and_within_unit_interval(doc: dict[str, Any]) -> None:
    for metric in metrics(scores(doc, by=("platform",))):
        assert (metric["value"] is None) == (metric["denominator"] == 0)
        if metric["value"] is not None:
            assert 0 <= metric["value"] <= 1
            assert metric["value"] == metric["numerator"] / metric["denominator"]


@FAST
@given(audit_documents())
def test_export_parses_back_to_the_same_audit(doc: dict[str, Any]) -> None:
    audit = parse(doc)
    exported = audit_to_document(audit)
    assert parse(exported) == audit
    assert audit_to_document(parse(exported)) == exported


@settings(max_examples=40, deadline=None)
@given(audit_documents())
def test_store_round_trip_is_lossless(doc: dict[str, Any]) -> None:
    audit = parse(doc)
    with tempfile.TemporaryDirectory() as folder, Store(Path(folder) / "audit.db") as store:
        store.import_audit(audit, json.dumps(doc).encode(), "generated.json")
        loaded = store.load_audit(store.choose_protocol(None))
    assert loaded == audit
    assert audit_to_document(loaded) == audit_to_document(audit)


@FAST
@given(audit_documents(), st.sampled_from([(), ("platform",)]))
def test_every_breakdown_adds_up_to_its_denominator(doc: dict[str, Any], by: tuple[str, ...]) -> None:
    audit = parse(doc)
    result = score(audit, by=by)
    # the required-fact pairs sorted by hand into the four categories, independently of the scorer
    edges_of: dict[str, list[Any]] = {}
    for edge in audit.edges:
        edges_of.setdefault(edge.claim_id, []).append(edge)
    facts = {q.id: [f.id for f in q.required_facts] for q in audit.protocol.questions}
    counted = {"covered": 0, "without_claim": 0, "without_edge": 0, "not_supported": 0}
    for answer in audit.answers:
        for fact in facts.get(answer.question_id, []):
            mapped = [c for c in audit.claims if c.answer_id == answer.id and c.required_fact_id == fact]
            found = [e for c in mapped for e in edges_of.get(c.id, [])]
            if not mapped:
                counted["without_claim"] += 1
            elif not found:
                counted["without_edge"] += 1
            elif any(e.final_label is Label.SUPPORTED for e in found):
                counted["covered"] += 1
            else:
                counted["not_supported"] += 1
    required = result.overall.required.to_dict()
    assert {k: required[k] for k in counted} == counted
    for scope in (*result.groups, result.overall):
        parts = scope.required.to_dict()
        assert (
            parts["covered"] + parts["without_claim"] + parts["without_edge"] + parts["not_supported"]
            == (parts["pairs"])
        )
        assert min(parts.values()) >= 0
        assert sum(scope.edges.by_label.values()) + scope.edges.pending == scope.edges.unique
        severity_pairs = sum(s.coverage.denominator for s in scope.severity.values())
        assert severity_pairs == scope.required.pairs
