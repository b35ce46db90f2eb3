"""The judge-bias battery on a deterministic fake judge whose every flip is derived by hand."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citeaudit.core.model import Label
from citeaudit.judges import ChecksJudge, JudgeRequest, JudgeTraits, Suggestion
from citeaudit.judges.battery import (
    BatteryEdge,
    BatteryReport,
    Perturbation,
    Verdict,
    change_first_number,
    run_battery,
)

_NUMBERS = re.compile(r"\d+")


class BiasedJudge:
    """A fake judge with three planted biases, all decided by the first passage it is shown:

    - authority: a passage framed as peer-reviewed is always ``supported``;
    - label order: a passage containing "maybe" gets whichever label is offered first, when ``supported`` is not;
    - position: ``supported`` when every number of the claim is in the first passage, else ``irrelevant``
      (claims without numbers are ``irrelevant``). Confidence is always 0.8.
    """

    name = "biased"
    version = "1"
    model: str | None = None

    def judge(self, request: JudgeRequest) -> Suggestion:
        first = request.passages[0]
        if "peer-reviewed" in first.lower():
            label = Label.SUPPORTED
        elif "maybe" in first and request.label_order[0] is not Label.SUPPORTED:
            label = request.label_order[0]
        else:
            claimed = set(_NUMBERS.findall(request.claim))
            label = Label.SUPPORTED if claimed and claimed <= set(_NUMBERS.findall(first)) else Label.IRRELEVANT
        return Suggestion(label, self.name, self.version, confidence=0.8)


class CoinJudge:
    """Alternates supported / irrelevant on every call: pure nondeterminism, no bias."""

    name = "coin"
    version = "1"
    model: str | None = None

    def __init__(self) -> None:
        self.calls = 0

    def judge(self, request: JudgeRequest) -> Suggestion:
        self.calls += 1
        return Suggestion(Label.SUPPORTED if self.calls % 2 else Label.IRRELEVANT, self.name, self.version)


EDGES = (
    BatteryEdge("e1", "The tank holds 20 L", ("Tank: 20 L",), Label.SUPPORTED),
    BatteryEdge("e2", "The pump gives 12 bar", ("Colour red", "Pump: 12 bar"), Label.SUPPORTED),
    BatteryEdge("e3", "Weight is 35 kg", ("maybe weight 50 kg",), Label.CONFLICTING),
    BatteryEdge("e4", "It is red", ("Colour: red",), Label.SUPPORTED),
)
# Baseline by hand: e1 supported (20 in "Tank: 20 L"); e2 irrelevant (12 not in "Colour red"); e3 irrelevant
# (35 not in "maybe weight 50 kg"; canonical label order starts with supported); e4 irrelevant (no number).


@pytest.fixture(scope="module")
def report() -> BatteryReport:
    return run_battery(BiasedJudge(), EDGES, resamples=999, seed=1)


def test_baseline_and_repeat(report: BatteryReport) -> None:
    assert [s.label for s in report.baseline] == [
        Label.SUPPORTED,
        Label.IRRELEVANT,
        Label.IRRELEVANT,
        Label.IRRELEVANT,
    ]
    repeat = report.result(Perturbation.REPEAT)
    assert (repeat.edges, repeat.flips, repeat.flip_rate) == (4, 0, 0.0)  # deterministic: nothing flips


def test_order_swap_only_applies_to_several_passages(report: BatteryReport) -> None:
    swap = report.result(Perturbation.ORDER_SWAP)
    # only e2 has two passages; reversed, its first passage is "Pump: 12 bar": irrelevant → supported
    assert (swap.edges, swap.flips, swap.flip_rate) == (1, 1, 1.0)
    assert swap.supported_delta == 1.0
    assert swap.excess_over_repeat == 1.0  # 1 flip − 0 repeat flips over 1 edge
    # one cluster only: every resample is the same, so the interval is the point itself (percentile fallback)
    assert (swap.flip_ci.low, swap.flip_ci.high, swap.flip_ci.method) == (1.0, 1.0, "percentile")


def test_label_permutation(report: BatteryReport) -> None:
    permuted = report.result(Perturbation.LABEL_PERMUTATION)
    # reversed options start with "unknown": e3 ("maybe") becomes unknown; the other three keep their labels
    assert (permuted.edges, permuted.flips, permuted.flip_rate) == (4, 1, 0.25)
    assert permuted.supported_delta == 0.0
    assert permuted.flip_ci.low is not None
    assert permuted.flip_ci.high is not None
    assert permuted.flip_ci.low <= 0.25 <= permuted.flip_ci.high


def test_verbosity_padding_moves_nothing(report: BatteryReport) -> None:
    padded = report.result(Perturbation.VERBOSITY_PADDING)
    # the padding holds no number and no "maybe"/"peer-reviewed": 0 of 4 flip
    assert (padded.flips, padded.flip_rate, padded.supported_delta) == (0, 0.0, 0.0)


def test_fake_authority_makes_everything_supported(report: BatteryReport) -> None:
    authority = report.result(Perturbation.FAKE_AUTHORITY)
    # e2, e3, e4 go from irrelevant to supported: 3 of 4 flip, P(supported) rises from 1/4 to 4/4
    assert (authority.flips, authority.flip_rate, authority.supported_delta) == (3, 0.75, 0.75)
    # gold-unsupported edges: e3 only (conflicting); false-supported 0/1 before, 1/1 after
    assert authority.target == {
        "gold_unsupported_edges": 1,
        "false_supported_before": 0.0,
        "false_supported_after": 1.0,
    }


def test_counterfactual_number_change(report: BatteryReport) -> None:
    counterfactual = report.result(Perturbation.COUNTERFACTUAL_NUMBER)
    # claims with a number: e1 (20 → 200), e2 (12 → 120), e3 (35 → 350). e1 flips to irrelevant (200 not in
    # "Tank: 20 L"); e2 and e3 stay irrelevant. 1 of 3 flip; of the 1 edge supported before, 0 stay supported.
    assert (counterfactual.edges, counterfactual.flips) == (3, 1)
    assert counterfactual.flip_rate == pytest.approx(1 / 3)
    assert counterfactual.target == {"supported_before": 1, "still_supported": 0, "stayed_rate": 0.0}


def test_agreement_and_calibration(report: BatteryReport) -> None:
    agreement = report.agreement
    # gold S, S, C, S against S, I, I, I: agree on e1 only, p_o = 1/4.
    # chance: gold S 3/4 × judge S 1/4 = 3/16 (no other label is on both sides); kappa = (1/4 − 3/16)/(1 − 3/16) = 1/13
    assert agreement.edges == 4
    assert agreement.observed == 0.25
    assert agreement.kappa == pytest.approx(1 / 13)
    assert agreement.confusion["supported"]["irrelevant"] == 2
    assert agreement.confusion["conflicting"]["irrelevant"] == 1
    calibration = report.calibration
    # all four in bin [0.8, 0.9): accuracy 1/4, confidence 0.8 → ECE = |0.25 − 0.8| = 0.55
    # Brier = (1/4)(0.8 − 1)² + (3/4)(0.8 − 0)² = 0.01 + 0.48 = 0.49
    assert calibration.ece == pytest.approx(0.55)
    assert calibration.brier == pytest.approx(0.49)


def test_excess_over_repeat_subtracts_nondeterminism() -> None:
    # CoinJudge alternates: baseline calls 1-4 give S, I, S, I; the repeat (calls 5-8) gives S, I, S, I again: 0 flips.
    # Label permutation (calls 9-12) gives S, I, S, I: 0 flips. Only the call order matters, never the request.
    edges = [BatteryEdge(f"e{i}", "claim", ("p",)) for i in range(4)]
    report = run_battery(CoinJudge(), edges, perturbations=[Perturbation.LABEL_PERMUTATION], resamples=999)
    assert report.result(Perturbation.REPEAT).flips == 0
    assert report.result(Perturbation.LABEL_PERMUTATION).excess_over_repeat == 0.0
    # three edges: baseline S, I, S; repeat I, S, I (calls 4-6): all flip; permutation S, I, S (calls 7-9): none flip
    edges3 = edges[:3]
    report3 = run_battery(CoinJudge(), edges3, perturbations=[Perturbation.LABEL_PERMUTATION], resamples=999)
    assert report3.result(Perturbation.REPEAT).flip_rate == 1.0
    permutation = report3.result(Perturbation.LABEL_PERMUTATION)
    assert permutation.flip_rate == 0.0
    assert permutation.excess_over_repeat == -1.0  # (0 − 3)/3: fewer flips than a plain repeat


def test_clusters_are_resampled_whole() -> None:
    # two questions with two edges each: the interval is built from two clusters, not four edges
    edges = [BatteryEdge(f"e{i}", "x", ("y",), cluster=f"q{i // 2}") for i in range(4)]
    report = run_battery(BiasedJudge(), edges, resamples=999)
    assert report.result(Perturbation.REPEAT).flip_ci.clusters == 2


def test_change_first_number() -> None:
    assert change_first_number("The AX220 has a 20 L tank") == "The AX220 has a 200 L tank"  # model id untouched
    assert change_first_number("costs 1.5 EUR") == "costs 15 EUR"
    assert change_first_number("12,5 bar") == "125 bar"
    assert change_first_number("no number") is None


def test_duplicate_edge_ids_are_refused() -> None:
    with pytest.raises(ValueError, match="unique"):
        run_battery(BiasedJudge(), [EDGES[0], EDGES[0]])


_claims = st.sampled_from(["The tank holds 20 L", "Weighs 35 kg", "Model AX220", "Pressure 12 MPa"])
_passages = st.sampled_from(["Tank 20 mL", "Weight 35 000 g", "The AX320", "Pressure 120 bar", "Colour red"])


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(_claims, st.lists(_passages, min_size=1, max_size=3)), min_size=1, max_size=5))
def test_property_the_checks_judge_has_no_order_or_label_option_bias(rows: list[tuple[str, list[str]]]) -> None:
    edges = [BatteryEdge(f"e{i}", claim, tuple(passages)) for i, (claim, passages) in enumerate(rows)]
    report = run_battery(
        ChecksJudge(),
        edges,
        perturbations=[Perturbation.ORDER_SWAP, Perturbation.LABEL_PERMUTATION, Perturbation.VERBOSITY_PADDING],
        resamples=200,
    )
    for perturbation in (Perturbation.ORDER_SWAP, Perturbation.LABEL_PERMUTATION, Perturbation.VERBOSITY_PADDING):
        assert report.result(perturbation).flips == 0


def test_no_edges_gives_undefined_rates_not_a_crash() -> None:
    report = run_battery(ChecksJudge(), [])
    assert report.edges == 0
    # every perturbation ran on 0 edges: no flips, and a rate of 0/0 is undefined (None), never 0
    assert {r.perturbation for r in report.results} == set(Perturbation)
    assert all(r.edges == 0 and r.flips == 0 and r.flip_rate is None for r in report.results)
    assert all(r.flip_ci.low is None for r in report.results)
    assert report.agreement.observed is None


class ConstantJudge:
    """Always ``supported``, whatever it is shown, and declares itself deterministic and blind to both orders."""

    name = "constant"
    version = "1"
    model: str | None = None
    battery_traits = JudgeTraits(deterministic=True, reads_passage_order=False, reads_label_order=False)

    def judge(self, request: JudgeRequest) -> Suggestion:
        return Suggestion(Label.SUPPORTED, self.name, self.version)


# Balanced gold over two clusters per label: half supported, half irrelevant, each edge with two passages.
BALANCED = tuple(
    BatteryEdge(f"e{i}", f"Claim {i}", ("first passage", "second passage"), gold, cluster=f"q{i}")
    for i, gold in enumerate([Label.SUPPORTED, Label.IRRELEVANT] * 10)
)


def test_rows_that_cannot_move_are_not_applicable_and_a_constant_judge_fails() -> None:
    report = run_battery(ConstantJudge(), BALANCED, resamples=999, seed=2)
    verdicts = {r.perturbation: r.verdict for r in report.results}
    for perturbation in (Perturbation.REPEAT, Perturbation.ORDER_SWAP, Perturbation.LABEL_PERMUTATION):
        assert verdicts[perturbation] is Verdict.NOT_APPLICABLE
        assert report.result(perturbation).reading.startswith("not applicable (")
    assert verdicts[Perturbation.SELF_PREFERENCE] is Verdict.NOT_APPLICABLE  # writes no text
    # "Claim 3" has a number; every such claim is called supported and stays so: 10 → 100 still supported, a fail
    assert verdicts[Perturbation.COUNTERFACTUAL_NUMBER] is Verdict.FAIL
    # judge always supported, gold half supported: p_o = .5, p_e = .5·1 + .5·0 = .5, kappa = 0 → cannot lie above 0
    assert report.agreement.kappa == pytest.approx(0.0)
    assert report.agreement.verdict is Verdict.FAIL
    every = [*verdicts.values(), report.agreement.verdict]
    assert not all(v in (Verdict.PASS, Verdict.NOT_APPLICABLE, Verdict.REPORTED) for v in every)


def test_a_declared_trait_the_measurement_contradicts_is_a_fail() -> None:
    class Liar(CoinJudge):
        battery_traits = JudgeTraits(deterministic=True)

    report = run_battery(Liar(), BALANCED[:3], resamples=200)
    # the coin alternates: baseline calls 1-3 give S I S, the repeat's calls 4-6 give I S I, so all 3 flip
    assert report.result(Perturbation.REPEAT).flips == 3
    assert report.result(Perturbation.REPEAT).verdict is Verdict.FAIL


class SelfLovingJudge:
    """Supported exactly when a passage is in its own house style (starts with "In summary,"); it rewrites
    passages into that style."""

    name = "writer"
    version = "1"
    model: str | None = "writer-1"

    def judge(self, request: JudgeRequest) -> Suggestion:
        own = any(p.startswith("In summary,") for p in request.passages)
        return Suggestion(Label.SUPPORTED if own else Label.IRRELEVANT, self.name, self.version)

    def rewrite(self, passage: str) -> str:
        return f"In summary, {passage}"


def test_self_preference_is_measured_for_a_judge_that_writes() -> None:
    report = run_battery(SelfLovingJudge(), BALANCED, resamples=999, seed=3)
    row = report.result(Perturbation.SELF_PREFERENCE)
    # baseline: nothing in its style → all 20 irrelevant; rewritten: all 20 supported → Δ P(supported) = 20/20 = 1
    assert (row.edges, row.flips, row.supported_delta) == (20, 20, 1.0)
    assert row.verdict is Verdict.FAIL
    plain = run_battery(BiasedJudge(), EDGES, resamples=200, rewrite=lambda p: p)
    # an identity rewrite changes nothing: Δ = 0 with a [0, 0] interval, which includes 0
    assert plain.result(Perturbation.SELF_PREFERENCE).verdict is Verdict.PASS
