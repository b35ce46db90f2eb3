"""Agreement of two raters: hand-derived cases, the kappa paradox, undefined values, properties, and the
coefficients checked against independent formulas and the ``krippendorff`` package."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Sequence

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citeaudit.core.agreement import _STATISTICS, LABELS, Agreement, agreement
from citeaudit.core.model import Label
from citeaudit.core.raters import FINAL, LabelPairs, RatedJudgement, Rater, RaterKind, pair_latest
from citeaudit.core.stats import cluster_bootstrap_counts, cluster_bootstrap_ratio

# R for irrelevant ("I" reads as a digit)
S, P, C, R, U = Label.SUPPORTED, Label.PARTIAL, Label.CONFLICTING, Label.IRRELEVANT, Label.UNKNOWN


def pairs(rows: list[tuple[Label, Label, str]]) -> LabelPairs:
    return LabelPairs(tuple(a for a, _, _ in rows), tuple(b for _, b, _ in rows), tuple(c for _, _, c in rows))


# (A, B, answer): six edges in three answers
SIX = [(S, S, "a1"), (S, S, "a1"), (S, P, "a2"), (P, P, "a2"), (C, R, "a3"), (U, U, "a3")]


def test_six_edges_by_hand() -> None:
    result = agreement(pairs(SIX), resamples=0)
    # diagonal SS 2 + PP 1 + UU 1 = 4 of 6
    assert result.observed.value == pytest.approx(4 / 6)
    # row marginals A: S3 P1 C1 I0 U1; columns B: S2 P2 C0 I1 U1
    # p_e = (3·2 + 1·2 + 1·0 + 0·1 + 1·1) / 36 = 9/36 = 1/4;  κ = (2/3 - 1/4) / (3/4) = 5/9
    assert result.cohen_kappa.value == pytest.approx(5 / 9)
    # n_k = r + c: S5 P3 C1 I1 U2 (12 values); Σ n_k(n_k-1) = 20 + 6 + 0 + 0 + 2 = 28; A_e = 28/132 = 7/33
    # α = (2/3 - 7/33) / (1 - 7/33) = (15/33) / (26/33) = 15/26
    assert result.krippendorff_alpha.value == pytest.approx(15 / 26)
    # π = n_k/12; Σ π(1-π) = (5·7 + 3·9 + 1·11 + 1·11 + 2·10)/144 = 104/144; p_e = (104/144)/4 = 13/72
    # AC1 = (48/72 - 13/72) / (59/72) = 35/59
    assert result.gwet_ac1.value == pytest.approx(35 / 59)
    assert result.confusion == (
        (2, 1, 0, 0, 0),
        (0, 1, 0, 0, 0),
        (0, 0, 0, 1, 0),
        (0, 0, 0, 0, 0),
        (0, 0, 0, 0, 1),
    )
    specific = {c.label: c.specific for c in result.per_class}
    # 2·both / (A + B): S 4/5, P 2/3, C 0/1, R 0/1, U 2/2
    assert specific == {S: pytest.approx(4 / 5), P: pytest.approx(2 / 3), C: 0.0, R: 0.0, U: 1.0}
    prevalence = {c.label: (c.prevalence_a, c.prevalence_b, c.prevalence) for c in result.per_class}
    assert prevalence[S] == (pytest.approx(3 / 6), pytest.approx(2 / 6), pytest.approx(5 / 12))
    supported = result.supported
    # tp = SS 2; fp = B's S column 2 - 2 = 0; fn = A's S row 3 - 2 = 1; tn = 6 - 3 = 3
    assert (supported.tp, supported.fp, supported.fn, supported.tn) == (2, 0, 1, 3)
    assert supported.precision.value == 1.0  # 2/2
    assert supported.recall.value == pytest.approx(2 / 3)
    assert supported.f1.value == pytest.approx(4 / 5)  # 2·2 / (4 + 0 + 1)
    assert supported.accuracy.value == pytest.approx(5 / 6)  # (2 + 3) / 6
    assert (result.n, result.clusters) == (6, 3)
    assert result.kappa_paradox is None  # observed 0.667 < 0.80


def test_kappa_paradox_of_stats_md_is_flagged() -> None:
    # 100 edges, each rater says supported 95 times, they agree on 90 and never on partial:
    # SS 90, SP 5, PS 5, PP 0
    rows = [(S, S, f"a{i}") for i in range(90)] + [(S, P, "b1")] * 5 + [(P, S, "b2")] * 5
    result = agreement(pairs(rows), resamples=0)
    assert result.observed.value == pytest.approx(0.90)
    # p_e = .95² + .05² = .905; κ = (.90 - .905) / .095 = -1/19
    assert result.cohen_kappa.value == pytest.approx(-0.005 / 0.095)
    # the two labels in use (q = 2): p_e = (.95·.05 + .05·.95) / 1 = .095; AC1 = (.90 - .095) / .905 ≈ 0.89
    assert result.gwet_ac1.value == pytest.approx(0.805 / 0.905)
    assert result.ac1_categories == (S, P)
    # five labels declared (q = 5): p_e = .095 / 4 = .02375; AC1 = (.90 - .02375) / .97625
    five = agreement(pairs(rows), resamples=0, ac1_categories=LABELS)
    assert five.gwet_ac1.value == pytest.approx(0.87625 / 0.97625)
    assert five.to_dict()["gwet_ac1"]["categories_from"] == "declared"  # type: ignore[index]
    assert result.kappa_paradox is not None
    assert "95%" in result.kappa_paradox
    assert "'supported'" in result.kappa_paradox
    body = result.to_dict()["kappa_paradox"]
    assert isinstance(body, dict)
    assert body["flagged"] is True


def test_one_label_throughout_leaves_kappa_and_alpha_undefined() -> None:
    rows = [(S, S, "a1"), (S, S, "a2"), (S, S, "a2")]
    result = agreement(pairs(rows), resamples=200)
    # p_e = 3·3/9 = 1 → κ = 0/0; every one of the 6 values is supported → A_e = 1 → α = 0/0
    assert result.cohen_kappa.value is None
    assert result.krippendorff_alpha.value is None
    assert result.cohen_kappa.ci is not None
    assert (result.cohen_kappa.ci.low, result.cohen_kappa.ci.high, result.cohen_kappa.ci.method) == (
        None,
        None,
        "none",
    )
    # AC1 over the labels in use: q = 1, so p_e = Σπ(1-π)/(q - 1) is 0/0 and AC1 is undefined
    assert result.gwet_ac1.value is None
    # over five declared labels: π_S = 1 → p_e = 0 → AC1 = p_o = 1
    assert agreement(pairs(rows), resamples=0, ac1_categories=LABELS).gwet_ac1.value == 1.0
    assert result.observed.value == 1.0
    assert result.kappa_paradox is not None
    assert "undefined" in result.kappa_paradox
    # B never says anything but supported, so precision, recall, F1 are all 3/3; no edge is negative
    assert (result.supported.tn, result.supported.accuracy.value) == (0, 1.0)


def test_no_pairs_is_all_null_and_valid_json() -> None:
    result = agreement(LabelPairs((), (), ()), resamples=100)
    body = json.loads(json.dumps(result.to_dict(), allow_nan=False))  # never NaN
    assert body["n"] == 0
    for name in ("observed", "cohen_kappa", "krippendorff_alpha", "gwet_ac1"):
        assert body[name]["value"] is None
        assert (body[name]["ci"]["low"], body[name]["ci"]["high"], body[name]["ci"]["method"]) == (None, None, "none")
    supported = body["supported"]
    assert isinstance(supported, dict)
    assert all(supported[k]["value"] is None for k in ("precision", "recall", "f1", "accuracy"))


def test_no_supported_from_b_leaves_precision_undefined_only() -> None:
    rows = [(S, P, "a1"), (P, P, "a2")]
    result = agreement(pairs(rows), resamples=0)
    # tp 0, fp 0 → precision 0/0; recall 0/1 = 0; F1 0/(0 + 0 + 1) = 0; accuracy 1/2
    assert result.supported.precision.value is None
    assert (result.supported.recall.value, result.supported.f1.value, result.supported.accuracy.value) == (
        0.0,
        0.0,
        0.5,
    )


def test_json_has_the_top_level_keys_and_declares_all_labels() -> None:
    body = agreement(pairs(SIX), resamples=200, seed=3).to_dict()
    assert {"n", "observed", "cohen_kappa", "krippendorff_alpha", "gwet_ac1", "confusion", "supported"} <= set(body)
    confusion = body["confusion"]
    assert isinstance(confusion, dict)
    assert confusion["labels"] == ["supported", "partial", "conflicting", "irrelevant", "unknown"]
    assert sum(map(sum, confusion["counts"])) == 6
    ci = body["cohen_kappa"]["ci"]  # type: ignore[index]
    assert (ci["clusters"], ci["resamples"], ci["level"]) == (3, 200, 0.95)
    assert ci["low"] <= body["cohen_kappa"]["value"] <= ci["high"]  # type: ignore[index]


def test_same_seed_same_interval_and_seed_changes_it() -> None:
    rows = [(LABELS[i % 5], LABELS[(i * 7) % 5 if i % 3 else i % 5], f"a{i % 9}") for i in range(60)]
    first = agreement(pairs(rows), resamples=500, seed=11)
    again = agreement(pairs(rows), resamples=500, seed=11)
    other = agreement(pairs(rows), resamples=500, seed=12)
    assert first.cohen_kappa.ci == again.cohen_kappa.ci
    assert first.cohen_kappa.ci != other.cohen_kappa.ci


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="equally long"):
        LabelPairs((S,), (), ("a",))
    with pytest.raises(ValueError, match="resamples"):
        agreement(pairs(SIX), resamples=1)
    with pytest.raises(ValueError, match="level"):
        agreement(pairs(SIX), level=1.5)
    with pytest.raises(ValueError, match="must differ"):
        pair_latest([], Rater("li"), Rater("li"))


# -- pairing --------------------------------------------------------------------------------------------------


def test_rater_parse() -> None:
    assert Rater.parse("li") == Rater("li", RaterKind.HUMAN)
    assert Rater.parse("human:li") == Rater("li", RaterKind.HUMAN)
    assert Rater.parse("model:gpt-4") == Rater("gpt-4", RaterKind.MODEL)
    assert str(Rater.parse("model:gpt-4")) == "model:gpt-4"
    assert Rater.parse("team:li") == Rater("team:li")  # only human:, model: are prefixes
    assert Rater.parse("final") == FINAL
    # a reviewer who happens to be called "final" is written human:final, and reads back as that reviewer
    assert Rater.parse("human:final") == Rater("final")
    assert str(Rater("final")) == "human:final"
    assert Rater.parse(str(Rater("final"))) == Rater("final")
    assert str(Rater("model:x")) == "human:model:x"
    with pytest.raises(ValueError, match="needs a name"):
        Rater.parse("model:")


def test_pairing_takes_each_raters_latest_and_counts_the_rest() -> None:
    li, judge, other = Rater("li"), Rater("j", RaterKind.MODEL), Rater("mo")
    rated = [
        RatedJudgement("e1", "a1", li, S, "2026-01-01"),
        RatedJudgement("e1", "a1", li, P, "2026-01-02"),  # li's latest on e1: partial
        RatedJudgement("e1", "a1", judge, P, "2026-01-01"),
        RatedJudgement("e2", "a1", li, S),
        RatedJudgement("e2", "a1", other, C),  # another rater: ignored
        RatedJudgement("e3", "a2", judge, R),
        RatedJudgement("e4", "a2", li, S, "2026-01-03"),
        RatedJudgement("e4", "a2", li, C, "2026-01-03"),  # tie on time, different labels: ambiguous
        RatedJudgement("e4", "a2", judge, S),
        RatedJudgement("e5", "a3", li, U, "2026-01-03"),
        RatedJudgement("e5", "a3", li, U, "2026-01-03"),  # tie, same label: fine
        RatedJudgement("e5", "a3", judge, U),
    ]
    result = pair_latest(rated, li, judge, edges_total=7)
    assert (result.a, result.b, result.answers) == ((P, U), (P, U), ("a1", "a3"))
    # e2 only li, e3 only the judge, e4 ambiguous; 7 - 2 paired - 1 - 1 - 1 = 2 neither
    assert (result.a_only, result.b_only, result.ambiguous, result.neither) == (1, 1, 1, 2)
    assert (result.rater_a, result.rater_b) == ("li", "model:j")


# -- independent checks and properties ------------------------------------------------------------------------

label_rows = st.lists(
    st.tuples(st.sampled_from(LABELS), st.sampled_from(LABELS), st.sampled_from(["a1", "a2", "a3", "a4", "a5"])),
    min_size=1,
    max_size=60,
)


def kappa_by_definition(a: list[Label], b: list[Label]) -> float | None:
    """Cohen's kappa straight from its definition, item by item (no matrices)."""
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    count_a, count_b = Counter(a), Counter(b)
    chance = sum((count_a[k] / n) * (count_b[k] / n) for k in LABELS)
    return None if chance == 1 else (observed - chance) / (1 - chance)


@settings(max_examples=150, deadline=None)
@given(label_rows)
def test_cohen_kappa_matches_the_definition(rows: list[tuple[Label, Label, str]]) -> None:
    expected = kappa_by_definition([a for a, _, _ in rows], [b for _, b, _ in rows])
    value = agreement(pairs(rows), resamples=0).cohen_kappa.value
    if expected is None:
        assert value is None
    else:
        assert value == pytest.approx(expected, abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(label_rows)
def test_alpha_closed_form_used_by_the_bootstrap_equals_the_krippendorff_package(
    rows: list[tuple[Label, Label, str]],
) -> None:
    code = {label: i for i, label in enumerate(LABELS)}
    reliability = np.array([[code[a] for a, _, _ in rows], [code[b] for _, b, _ in rows]], dtype=float)
    matrix = np.zeros((5, 5))
    for a, b, _ in rows:
        matrix[code[a], code[b]] += 1
    closed = _STATISTICS["krippendorff_alpha"](matrix.reshape(1, -1))[0]
    if len({*reliability.ravel()}) == 1:
        assert np.isnan(closed)  # one value throughout: D_e = 0 (the package would divide by zero)
        assert agreement(pairs(rows), resamples=0).krippendorff_alpha.value is None
        return
    package = krippendorff.alpha(
        reliability_data=reliability, value_domain=list(range(5)), level_of_measurement="nominal"
    )
    assert closed == pytest.approx(package, abs=1e-12)
    assert agreement(pairs(rows), resamples=0).krippendorff_alpha.value == pytest.approx(package, abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(label_rows)
def test_invariants(rows: list[tuple[Label, Label, str]]) -> None:
    result = agreement(pairs(rows), resamples=0)
    n = len(rows)
    assert sum(map(sum, result.confusion)) == n == result.n
    assert result.observed.value is not None
    assert 0 <= result.observed.value <= 1
    for coefficient in (result.cohen_kappa, result.krippendorff_alpha, result.gwet_ac1):
        assert coefficient.value is None or coefficient.value <= 1 + 1e-12
    # defined exactly when the raters used at least two labels between them
    assert (result.gwet_ac1.value is not None) == (len({x for row in rows for x in row[:2]}) >= 2)
    s = result.supported
    assert s.tp + s.fp + s.fn + s.tn == n
    json.dumps(result.to_dict(), allow_nan=False)


@settings(max_examples=150, deadline=None)
@given(label_rows)
def test_symmetric_coefficients_do_not_depend_on_who_is_a(rows: list[tuple[Label, Label, str]]) -> None:
    forward = agreement(pairs(rows), resamples=0)
    backward = agreement(pairs([(b, a, c) for a, b, c in rows]), resamples=0)
    for name in ("observed", "cohen_kappa", "krippendorff_alpha", "gwet_ac1"):
        x, y = getattr(forward, name).value, getattr(backward, name).value
        assert (x is None and y is None) or x == pytest.approx(y, abs=1e-12)
    assert backward.confusion == tuple(zip(*forward.confusion, strict=True))
    # gold swaps: precision and recall trade places, F1 and accuracy stay
    assert backward.supported.precision.value == forward.supported.recall.value
    assert backward.supported.recall.value == forward.supported.precision.value
    assert backward.supported.f1.value == forward.supported.f1.value


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(LABELS), st.sampled_from(["a1", "a2", "a3"])), min_size=1, max_size=40))
def test_identical_labelings_agree_perfectly(rows: list[tuple[Label, str]]) -> None:
    result = agreement(pairs([(label, label, answer) for label, answer in rows]), resamples=0)
    assert result.observed.value == 1.0
    if len({label for label, _ in rows}) > 1:  # defined exactly when more than one label is used
        assert result.gwet_ac1.value == pytest.approx(1.0)
        assert result.cohen_kappa.value == pytest.approx(1.0)
        assert result.krippendorff_alpha.value == pytest.approx(1.0)
    else:
        assert result.gwet_ac1.value is None
        assert result.cohen_kappa.value is None
        assert result.krippendorff_alpha.value is None
    assert all(c.specific in (None, 1.0) for c in result.per_class)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(1, 30)), min_size=3, max_size=40), st.integers(0, 2**32))
def test_counts_bootstrap_draws_the_same_resamples_as_the_ratio_bootstrap(
    clusters: list[tuple[int, int]], seed: int
) -> None:
    counts = np.array([(min(s, e), e) for s, e in clusters], dtype=float)

    def ratio(pooled: np.ndarray) -> np.ndarray:
        return pooled[:, 0] / pooled[:, 1]  # type: ignore[no-any-return]

    mine = cluster_bootstrap_counts(counts, {"ratio": ratio}, resamples=999, batch=250, seed=seed)["ratio"]
    reference = cluster_bootstrap_ratio(counts[:, 0], counts[:, 1], resamples=999, batch=250, seed=seed)
    assert (mine.low, mine.high, mine.method) == (reference.low, reference.high, reference.method)


def test_bootstrap_interval_covers_the_estimate_and_is_by_answer() -> None:
    rng = np.random.default_rng(5)
    a = rng.choice(5, 400, p=[0.5, 0.2, 0.1, 0.1, 0.1])
    b = np.where(rng.random(400) < 0.7, a, rng.choice(5, 400))
    rows = [(LABELS[x], LABELS[y], f"a{i // 4}") for i, (x, y) in enumerate(zip(a, b, strict=True))]
    result: Agreement = agreement(pairs(rows), resamples=2000, seed=1)
    for coefficient in (result.observed, result.cohen_kappa, result.krippendorff_alpha, result.gwet_ac1):
        assert coefficient.ci is not None
        assert coefficient.value is not None
        assert coefficient.ci.low is not None
        assert coefficient.ci.high is not None
        assert coefficient.ci.low < coefficient.value < coefficient.ci.high
        assert (coefficient.ci.method, coefficient.ci.clusters) == ("bca", 100)  # 400 edges, 4 per answer


def ac1_by_definition(a: list[Label], b: list[Label], categories: Sequence[Label]) -> float | None:
    """Gwet's AC1 for two raters as Gwet writes it: p_a, π_k over both raters' ratings, p_e = Σπ(1-π)/(q-1)."""
    n, q = len(a), len(categories)
    if q < 2:
        return None
    p_a = sum(x == y for x, y in zip(a, b, strict=True)) / n
    pooled = Counter(a) + Counter(b)
    p_e = sum((pooled[k] / (2 * n)) * (1 - pooled[k] / (2 * n)) for k in categories) / (q - 1)
    return (p_a - p_e) / (1 - p_e)


@settings(max_examples=150, deadline=None)
@given(label_rows)
def test_gwet_ac1_matches_the_definition(rows: list[tuple[Label, Label, str]]) -> None:
    a, b = [x for x, _, _ in rows], [y for _, y, _ in rows]
    used = [label for label in LABELS if label in set(a) | set(b)]
    expected = ac1_by_definition(a, b, used)
    value = agreement(pairs(rows), resamples=0).gwet_ac1.value
    assert value == (None if expected is None else pytest.approx(expected, abs=1e-12))
    five = ac1_by_definition(a, b, LABELS)
    assert agreement(pairs(rows), resamples=0, ac1_categories=LABELS).gwet_ac1.value == pytest.approx(five, abs=1e-12)


def test_ac1_counts_only_the_labels_in_use() -> None:
    # A constant judge (always supported) against balanced binary gold: 50 supported, 50 irrelevant.
    # p_o = 50/100 = .5; pooled π_S = (50 + 100)/200 = .75, π_I = .25; Cohen's κ: p_e = .5·1 + .5·0 = .5 → 0.
    rows = [(S, S, f"a{i}") for i in range(50)] + [(R, S, f"b{i}") for i in range(50)]
    result = agreement(pairs(rows), resamples=0)
    assert result.cohen_kappa.value == pytest.approx(0.0)
    # q = 2 in use: p_e = (.75·.25 + .25·.75)/1 = .375; AC1 = (.5 - .375)/.625 = 0.2
    assert result.ac1_categories == (S, R)
    assert result.gwet_ac1.value == pytest.approx(0.2)
    body = result.to_dict()["gwet_ac1"]
    assert body["categories"] == ["supported", "irrelevant"]  # type: ignore[index]
    assert body["categories_from"] == "used by either rater"  # type: ignore[index]
    # five labels: p_e = .375/4 = .09375; AC1 = (.5 - .09375)/.90625 ≈ 0.448 — the inflated figure
    five = agreement(pairs(rows), resamples=0, ac1_categories=LABELS)
    assert five.gwet_ac1.value == pytest.approx(0.40625 / 0.90625)
    with pytest.raises(ValueError, match="'irrelevant'"):
        agreement(pairs(rows), resamples=0, ac1_categories=[S, P])


judgement_rows = st.lists(
    st.tuples(
        st.sampled_from(["e1", "e2", "e3", "e4", "e5", "e6"]),
        st.sampled_from(["li", "mo", "zed"]),
        st.sampled_from(LABELS),
        st.sampled_from([None, "2026-01-01", "2026-01-02"]),
    ),
    max_size=40,
)


@settings(max_examples=150, deadline=None)
@given(judgement_rows, st.randoms(use_true_random=False))
def test_pairing_does_not_depend_on_the_order_judgements_are_listed(
    rows: list[tuple[str, str, Label, str | None]], shuffler: random.Random
) -> None:
    rated = [RatedJudgement(e, f"answer-{e}", Rater(r), label, at) for e, r, label, at in rows]
    shuffled = list(rated)
    shuffler.shuffle(shuffled)
    first = pair_latest(rated, Rater("li"), Rater("mo"), edges_total=6)
    second = pair_latest(shuffled, Rater("li"), Rater("mo"), edges_total=6)
    assert sorted(zip(first.answers, first.a, first.b, strict=True)) == sorted(
        zip(second.answers, second.a, second.b, strict=True)
    )
    assert (first.a_only, first.b_only, first.ambiguous) == (second.a_only, second.b_only, second.ambiguous)
    # every edge either rater labelled is counted exactly once
    touched = {e for e, r, _, _ in rows if r in ("li", "mo")}
    assert len(first.a) + first.a_only + first.b_only + first.ambiguous == len(touched)
    assert first.neither == 6 - len(touched)


def test_an_unknown_label_is_refused_naming_it() -> None:
    with pytest.raises(ValueError, match="'maybe' is not a label; labels are supported, partial"):
        agreement(LabelPairs((S, "maybe"), (S, S), ("a1", "a2")), resamples=0)  # type: ignore[arg-type]


def test_listing_order_does_not_change_the_intervals() -> None:
    rows = [(LABELS[i % 5], LABELS[(i * 3) % 5 if i % 4 else i % 5], f"a{i % 13}") for i in range(80)]
    forward = agreement(pairs(rows), resamples=300, seed=5)
    backward = agreement(pairs(rows[::-1]), resamples=300, seed=5)
    assert forward.to_dict() == backward.to_dict()


def test_progress_reports_every_resample_once() -> None:
    done: list[int] = []
    agreement(pairs(SIX), resamples=2500, batch=1000, progress=done.append)
    assert done == [1000, 1000, 500]  # batches of 1 000, then the rest
