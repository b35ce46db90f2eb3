"""Each strict-v1 rule (DESIGN §2) with its expected value derived by hand in a comment.

Every case runs through both the vectorized path (``score``) and the reference walk (``score_reference``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from builders import answer, claim, document, edge, protocol
from citeaudit import Audit, Label, ScoreResult, parse_audit_bytes, score, score_reference
from citeaudit.core.scope import Scope, select_audit

Scorer = Callable[..., ScoreResult]


@pytest.fixture(params=[score, score_reference], ids=["vectorized", "reference"])
def scorer(request: pytest.FixtureRequest) -> Scorer:
    return request.param  # type: ignore[no-any-return]


def audit_of(doc: dict[str, Any]) -> Audit:
    return parse_audit_bytes(json.dumps(doc).encode(), "test.json")


def test_four_claim_fixture(scorer: Scorer, four_claim_path: Path) -> None:
    result = scorer(audit_of(json.loads(four_claim_path.read_text())))
    # c1–s1 cited twice collapses to one supported edge; c2–s2 conflicting; c3–s3 unknown → 3 edges, 1 supported.
    assert (result.precision.numerator, result.precision.denominator) == (1, 3)
    # f1 covered by c1; f2 (conflicting), f3 (unknown), f4 (c4 has no edge) not → 1 of 4 pairs.
    assert (result.coverage.numerator, result.coverage.denominator) == (1, 4)
    edges = result.overall.edges
    assert (edges.unique, edges.locations, edges.collapsed, edges.pending) == (3, 4, 1, 0)
    assert dict(edges.by_label) == {
        Label.SUPPORTED: 1,
        Label.PARTIAL: 0,
        Label.CONFLICTING: 1,
        Label.IRRELEVANT: 0,
        Label.UNKNOWN: 1,
    }
    # c4 has a claim but no edge: it adds to the coverage denominator and to nothing else.
    required = result.overall.required
    assert (required.pairs, required.covered, required.without_claim, required.without_edge) == (4, 1, 0, 1)
    assert result.provisional is False


def test_partial_is_never_support(scorer: Scorer) -> None:
    doc = document([answer("a1")], [claim("c1", "a1", "q1f1")], [edge("c1", "https://x.org/p", "partial")])
    result = scorer(audit_of(doc))
    # one partial edge: in the denominator (1), not the numerator (0); it covers no fact (0 of 1 pair)
    assert (result.precision.numerator, result.precision.denominator) == (0, 1)
    assert (result.coverage.numerator, result.coverage.denominator) == (0, 1)
    assert result.overall.edges.by_label[Label.PARTIAL] == 1


def test_unknown_stays_in_denominator_and_is_counted(scorer: Scorer) -> None:
    doc = document(
        [answer("a1")],
        [claim("c1", "a1"), claim("c2", "a1")],
        [edge("c1", "https://x.org/1", "supported"), edge("c2", "https://x.org/2", "unknown")],
    )
    result = scorer(audit_of(doc))
    # 1 supported of 2 edges (the unknown one is not dropped): 1/2
    assert (result.precision.numerator, result.precision.denominator) == (1, 2)
    assert result.overall.edges.by_label[Label.UNKNOWN] == 1


def test_pending_edge_scored_as_unknown_and_marks_result_provisional(scorer: Scorer) -> None:
    doc = document(
        [answer("a1")],
        [claim("c1", "a1", "q1f1"), claim("c2", "a1")],
        [edge("c1", "https://x.org/1"), edge("c2", "https://x.org/2", "supported")],
    )
    result = scorer(audit_of(doc))
    # the unlabelled edge stays in the denominator: 1 supported of 2 edges; it is counted as pending
    assert (result.precision.numerator, result.precision.denominator) == (1, 2)
    assert result.overall.edges.pending == 1
    assert result.provisional is True
    # c1 (mapped to the fact) has only a pending edge → the pair is not covered: 0/1
    assert (result.coverage.numerator, result.coverage.denominator) == (0, 1)


def test_disagreeing_reviewers_make_a_disputed_pending_edge_until_adjudicated(scorer: Scorer) -> None:
    row = edge("c1", "https://x.org/1", "supported", reviewer="li")
    row["judgements"] = [{"label": "partial", "reviewer": "marta"}]
    doc = document([answer("a1")], [claim("c1", "a1")], [row])
    result = scorer(audit_of(doc))
    # li says supported, marta partial: no final label → 0 supported of 1 edge, 1 pending, 1 disputed
    assert (result.precision.numerator, result.precision.denominator) == (0, 1)
    assert (result.overall.edges.pending, result.overall.edges.disputed) == (1, 1)
    row["judgements"].append({"label": "supported", "reviewer": "sam", "stage": "adjudication"})
    adjudicated = scorer(audit_of(doc))
    # the adjudicator's label is final: 1 supported of 1
    assert (adjudicated.precision.numerator, adjudicated.precision.denominator) == (1, 1)
    assert adjudicated.provisional is False


def test_model_judgement_alone_is_not_a_final_label(scorer: Scorer) -> None:
    row = edge("c1", "https://x.org/1", "supported", origin="model", reviewer="nli-judge")
    result = scorer(audit_of(document([answer("a1")], [claim("c1", "a1")], [row])))
    # a model suggestion leaves the edge pending: 0 supported of 1, pending 1
    assert (result.precision.numerator, result.overall.edges.pending) == (0, 1)


def test_required_fact_without_claim_adds_only_to_coverage_denominator(scorer: Scorer) -> None:
    proto = protocol(facts=[("f1", "high"), ("f2", "low")])
    doc = document([answer("a1")], [claim("c1", "a1", "q1f1")], [edge("c1", "https://x.org/1", "supported")], proto)
    result = scorer(audit_of(doc))
    # f1 covered, f2 has no claim: coverage 1/2; edges unchanged at 1 (precision 1/1)
    assert (result.coverage.numerator, result.coverage.denominator) == (1, 2)
    assert (result.precision.numerator, result.precision.denominator) == (1, 1)
    assert (result.overall.required.without_claim, result.overall.required.without_edge) == (1, 0)


def test_duplicate_citations_collapse_and_are_reported(scorer: Scorer) -> None:
    url = "https://x.org/1"
    doc = document(
        [answer("a1")],
        [claim("c1", "a1")],
        # the same (claim, source) three times, once with tracking parameters and a fragment
        [edge("c1", url, "supported"), edge("c1", url, "supported"), edge("c1", url + "?utm_source=openai#top")],
    )
    result = scorer(audit_of(doc))
    # 3 locations → 1 edge, 2 collapsed; precision 1/1 (not 3/3, not 2/3)
    assert (result.overall.edges.unique, result.overall.edges.locations, result.overall.edges.collapsed) == (1, 3, 2)
    assert (result.precision.numerator, result.precision.denominator) == (1, 1)


@pytest.mark.parametrize(
    ("doc", "expect_null"),
    [
        # no answers at all: every denominator is 0
        (document([], [], []), {"precision", "coverage", "official_rate"}),
        # one answer, no claims, a question without required facts: no edges, no pairs
        (document([answer("a1")], [], [], protocol(facts=[])), {"precision", "coverage"}),
        # one claim with an edge, no required facts: coverage undefined only
        (
            document(
                [answer("a1")], [claim("c1", "a1")], [edge("c1", "https://x.org", "supported")], protocol(facts=[])
            ),
            {"coverage"},
        ),
    ],
    ids=["no-answers", "no-edges-no-facts", "no-facts"],
)
def test_null_exactly_when_denominator_is_zero(scorer: Scorer, doc: dict[str, Any], expect_null: set[str]) -> None:
    result = scorer(audit_of(doc))
    for name in ("precision", "coverage", "official_rate"):
        metric = getattr(result, name)
        assert (metric.value is None) == (name in expect_null)
        assert (metric.denominator == 0) == (name in expect_null)
        assert metric.to_dict()["value"] is None if name in expect_null else metric.to_dict()["value"] is not None


def test_coverage_is_over_answer_fact_pairs(scorer: Scorer) -> None:
    # Two answers to q1 (which requires f1 and f2); a1 covers f1 only, a2 covers both.
    proto = protocol(facts=[("f1", "high"), ("f2", "low")])
    doc = document(
        [answer("a1"), answer("a2")],
        [claim("c1", "a1", "q1f1"), claim("c2", "a2", "q1f1"), claim("c3", "a2", "q1f2")],
        [edge(c, f"https://x.org/{c}", "supported") for c in ("c1", "c2", "c3")],
        proto,
    )
    result = scorer(audit_of(doc))
    # pairs: (a1,f1) (a1,f2) (a2,f1) (a2,f2) = 4; covered: (a1,f1) (a2,f1) (a2,f2) = 3 → 3/4
    assert (result.coverage.numerator, result.coverage.denominator) == (3, 4)


def test_official_rate_counts_answers_citing_official_sources_only(scorer: Scorer) -> None:
    doc = document(
        [
            answer("a1", citations=["https://www.brand.com/ax220"]),  # official via a cited citation
            answer("a2", citations=["https://brand.com.evil.net/ax220", "https://notbrand.com/"]),  # look-alikes
            answer("a3"),  # official only through an edge of its claim
            answer("a4"),  # official only as a retrieved (not cited) source
        ],
        [claim("c3", "a3")],
        [edge("c3", "https://shop.brand.com/x", "supported")],
    )
    doc["answers"][3]["citations"] = [{"url": "https://brand.com/", "kind": "retrieved"}]
    result = scorer(audit_of(doc))
    # a1 and a3 cite brand.com; a2's hosts are evil.net / notbrand.com; a4's source was only retrieved → 2/4
    assert (result.official_rate.numerator, result.official_rate.denominator) == (2, 4)


def test_grouping_by_platform_keeps_counts_apart(scorer: Scorer) -> None:
    doc = document(
        [answer("a1", platform="perplexity"), answer("a2", platform="gemini")],
        [claim("c1", "a1", "q1f1"), claim("c2", "a2", "q1f1")],
        [edge("c1", "https://x.org/1", "supported"), edge("c2", "https://x.org/1", "irrelevant")],
    )
    result = scorer(audit_of(doc), by=["platform"])
    groups = {dict(g.by)["platform"]: g for g in result.groups}
    # gemini: 0 supported of 1; perplexity: 1 of 1; overall 1 of 2. Groups come sorted by value.
    assert [dict(g.by)["platform"] for g in result.groups] == ["gemini", "perplexity"]
    assert (groups["gemini"].precision.numerator, groups["gemini"].precision.denominator) == (0, 1)
    assert (groups["perplexity"].precision.numerator, groups["perplexity"].precision.denominator) == (1, 1)
    assert (result.precision.numerator, result.precision.denominator) == (1, 2)


def test_macro_is_mean_of_per_answer_values_with_exclusions(scorer: Scorer) -> None:
    doc = document(
        [answer("a1"), answer("a2"), answer("a3")],
        [claim("c1", "a1", "q1f1"), claim("c2", "a1"), claim("c3", "a2", "q1f1")],
        [
            edge("c1", "https://x.org/1", "supported"),
            edge("c2", "https://x.org/2", "irrelevant"),
            edge("c3", "https://x.org/3", "supported"),
        ],
    )
    result = scorer(audit_of(doc), macro=True)
    macro = result.overall.macro_precision
    assert macro is not None
    # per answer: a1 1/2, a2 1/1, a3 no edges (excluded) → mean (0.5 + 1) / 2 = 0.75, micro is 2/3
    assert (macro.answers, macro.excluded) == (2, 1)
    assert macro.value == pytest.approx(0.75)
    assert (result.precision.numerator, result.precision.denominator) == (2, 3)
    coverage = result.overall.macro_coverage
    assert coverage is not None
    # every answer has one (answer, fact) pair: a1 1/1, a2 1/1, a3 0/1 → mean 2/3, none excluded
    assert (coverage.answers, coverage.excluded) == (3, 0)
    assert coverage.value == pytest.approx(2 / 3)


def test_severity_breakdown_is_reported_separately(scorer: Scorer) -> None:
    proto = protocol(facts=[("f1", "critical"), ("f2", "low")])
    doc = document(
        [answer("a1")],
        [claim("c1", "a1", "q1f1"), claim("c2", "a1", "q1f2"), claim("c3", "a1", severity="low")],
        [
            edge("c1", "https://x.org/1", "conflicting"),
            edge("c2", "https://x.org/2", "supported"),
            edge("c3", "https://x.org/3", "supported"),
        ],
        proto,
    )
    result = scorer(audit_of(doc))
    severity = result.overall.severity
    # critical: c1's edge is conflicting → precision 0/1, coverage (a1,f1) 0/1
    assert (severity["critical"].precision.numerator, severity["critical"].precision.denominator) == (0, 1)
    assert (severity["critical"].coverage.numerator, severity["critical"].coverage.denominator) == (0, 1)
    # low: c2 (via its fact) and c3 (its own severity) both supported → 2/2; (a1,f2) covered → 1/1
    assert (severity["low"].precision.numerator, severity["low"].precision.denominator) == (2, 2)
    assert (severity["low"].coverage.numerator, severity["low"].coverage.denominator) == (1, 1)
    assert set(severity) == {"critical", "low"}
    # the unweighted headline is unchanged by severities: coverage 1/2
    assert (result.coverage.numerator, result.coverage.denominator) == (1, 2)
    assert result.overall.weighted_coverage is None


def test_weighted_coverage_only_when_protocol_declares_weights(scorer: Scorer) -> None:
    proto = protocol(facts=[("f1", "critical"), ("f2", "low")], weights={"critical": 3, "low": 1})
    doc = document(
        [answer("a1")],
        [claim("c1", "a1", "q1f1"), claim("c2", "a1", "q1f2")],
        [edge("c1", "https://x.org/1", "unknown"), edge("c2", "https://x.org/2", "supported")],
        proto,
    )
    result = scorer(audit_of(doc))
    weighted = result.overall.weighted_coverage
    assert weighted is not None
    # covered f2 (weight 1) of f1 + f2 (3 + 1) → 1/4; unweighted stays 1/2
    assert (weighted.numerator, weighted.denominator) == (1, 4)
    assert weighted.to_dict()["weighted"] is True
    assert (result.coverage.numerator, result.coverage.denominator) == (1, 2)


def test_fixture_runs_are_left_out_of_platform_scopes(scorer: Scorer) -> None:
    doc = document(
        [answer("a1", run="fx"), answer("a2", run="live")],
        [claim("c1", "a1"), claim("c2", "a2")],
        [edge("c1", "https://x.org/1", "supported"), edge("c2", "https://x.org/2", "conflicting")],
        runs=[{"id": "fx", "kind": "fixture"}, {"id": "live"}],
    )
    selected, excluded = select_audit(audit_of(doc), Scope())
    result = scorer(selected)
    # only a2 (platform run) is in scope: 0 supported of 1 edge; a1 is counted as excluded
    assert excluded == 1
    assert (result.precision.numerator, result.precision.denominator) == (0, 1)


def test_repeats_report_within_and_between_question_variance(scorer: Scorer) -> None:
    proto = protocol(facts=[], questions=2)
    runs = [{"id": f"s{n}", "platform": "p1", "sample": n} for n in (1, 2, 3)]
    answers = [answer(f"a{n}", run=f"s{n}") for n in (1, 2, 3)] + [
        answer(f"b{n}", question="q2", run=f"s{n}") for n in (1, 2)
    ]
    claims = [claim(f"c{i}", a) for i, a in enumerate(["a1", "a1", "a2", "a3", "b1", "b2"])]
    edges = [
        edge("c0", "https://x.org/0", "supported"),
        edge("c1", "https://x.org/1", "irrelevant"),  # a1: 1/2
        edge("c2", "https://x.org/2", "supported"),  # a2: 1/1
        edge("c3", "https://x.org/3", "conflicting"),  # a3: 0/1
        edge("c4", "https://x.org/4", "supported"),  # b1: 1/1
        edge("c5", "https://x.org/5", "supported"),  # b2: 1/1
    ]
    for a in answers:
        a.pop("platform")
    result = scorer(audit_of(document(answers, claims, edges, proto, runs=runs)), by=["sample"])
    repeats = result.repeats["precision"]
    # cell (q1, p1): 0.5, 1, 0 → mean 0.5, variance (0 + 0.25 + 0.25) / 2 = 0.25
    # cell (q2, p1): 1, 1 → variance 0; within = (0.25 + 0) / 2 = 0.125
    # cell means 0.5 and 1 → between = ((0.5 − 0.75)² + (1 − 0.75)²) / 1 = 0.125
    assert repeats.cells_with_repeats == 2
    assert repeats.within == pytest.approx(0.125)
    assert repeats.between == pytest.approx(0.125)
    assert [dict(g.by)["sample"] for g in result.groups] == ["1", "2", "3"]
    assert "coverage" not in result.repeats  # no required facts, nothing to vary
