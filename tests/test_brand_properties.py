"""Invariants of the figures beside the scores, over generated audits (hypothesis)."""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from citeaudit import parse_audit_bytes, score
from citeaudit.checks import model_confusion
from citeaudit.core.brand.figures import brand_figures, edge_outcomes
from citeaudit.core.misattribution import CrossKind, CrossPair, claims_at_risk, misattribution
from citeaudit.core.model import Judgement, Label
from test_properties import audit_documents

DECLARED = {
    "brand": {"name": "Brand", "aliases": ["AX"]},
    "competitors": [
        {"name": "Review", "domains": ["review.org"]},
        {"name": "Forum", "domains": ["forum.net"], "aliases": ["the forum"]},
    ],
}


def parse(doc: dict[str, Any]) -> Any:
    return parse_audit_bytes(json.dumps(doc).encode(), "generated.json")


def declared(doc: dict[str, Any]) -> dict[str, Any]:
    changed = copy.deepcopy(doc)
    changed["protocol"].update(copy.deepcopy(DECLARED))
    return changed


def strict_numbers(body: dict[str, Any]) -> dict[str, Any]:
    return {k: body[k] for k in ("precision", "coverage", "official_rate", "edges", "required", "answers")}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(audit_documents())
def test_declaring_a_brand_and_competitors_changes_no_strict_number(doc: dict[str, Any]) -> None:
    before = score(parse(doc), by=("platform",)).to_dict()
    after = score(parse(declared(doc)), by=("platform",)).to_dict()
    assert strict_numbers(after) == strict_numbers(before)
    assert [strict_numbers(g) for g in after["groups"]] == [strict_numbers(g) for g in before["groups"]]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(audit_documents())
def test_owner_shares_partition_the_cited_pairs_and_the_brand_rate_is_the_official_rate(doc: dict[str, Any]) -> None:
    audit = parse(declared(doc))
    figures = brand_figures(audit, model_confusion, by=("platform",))
    for scope, strict in [(figures.overall, score(audit).overall)] + [
        (part, group) for (_, part), group in zip(figures.groups, score(audit, by=("platform",)).groups, strict=True)
    ]:
        shares = scope.competitor_share.sources_by_owner.values()
        denominators = {m.denominator for m in shares}
        assert len(denominators) == 1
        assert sum(m.numerator for m in shares) == denominators.pop()
        brand = scope.mentions.brand
        assert brand is not None
        assert (brand.citation_rate.numerator, brand.citation_rate.denominator) == (
            strict.official_rate.numerator,
            strict.official_rate.denominator,
        )
        retrieved = scope.retrieved_not_cited
        assert retrieved.rate.numerator <= retrieved.retrieved_official == retrieved.rate.denominator
        # every answer is in the rate, or reports nothing retrieved, or retrieved no official page
        assert retrieved.rate.denominator + retrieved.not_reported + retrieved.without_official == strict.answers


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(audit_documents(), st.data())
def test_duplicating_a_citation_location_never_changes_a_figure(doc: dict[str, Any], data: st.DataObject) -> None:
    if not doc["edges"]:
        return
    duplicated = copy.deepcopy(doc)
    duplicated["edges"].append(copy.deepcopy(data.draw(st.sampled_from(doc["edges"]))))
    before = brand_figures(parse(declared(doc)), model_confusion).to_dict()
    after = brand_figures(parse(declared(duplicated)), model_confusion).to_dict()
    assert after == before


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(audit_documents(), st.data())
def test_misattributed_claims_are_claims_at_risk_and_cross_pairs_never_move_them(
    doc: dict[str, Any], data: st.DataObject
) -> None:
    audit = parse(doc)
    keys = [s.key for s in audit.sources]
    if not audit.claims or not keys:
        return
    pairs = [
        CrossPair(
            data.draw(st.sampled_from(audit.claims)).id,
            data.draw(st.sampled_from(keys)),
            CrossKind.CO_CITED,
            (Judgement(data.draw(st.sampled_from(list(Label))), "li"),),
        )
        for _ in range(data.draw(st.integers(0, 6)))
    ]
    report = misattribution(audit, pairs)
    at_risk = claims_at_risk(audit, edge_outcomes(audit))
    # the denominator is the claims at risk whatever cross pairs exist; every case is one of them, once
    assert report.rate.denominator == len(at_risk) == misattribution(audit, []).rate.denominator
    assert {case.claim_id for case in report.cases} <= set(at_risk)
    assert len({case.claim_id for case in report.cases}) == len(report.cases)
