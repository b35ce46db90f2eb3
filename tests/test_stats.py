"""Cluster-bootstrap intervals: the same interval as SciPy's BCa for the same draws, honest fallbacks."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import Result

from citeaudit.core.stats import cluster_bootstrap_ratio


def ratio(numerators: np.ndarray, denominators: np.ndarray, axis: int = -1) -> np.ndarray:
    return numerators.sum(axis=axis) / denominators.sum(axis=axis)  # type: ignore[no-any-return]


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 30), st.integers(1, 30)), min_size=3, max_size=40),
    st.integers(0, 2**32 - 1),
)
def test_same_interval_as_scipy_bca_for_the_same_draws(clusters: list[tuple[int, int]], seed: int) -> None:
    denominators = np.array([d for _, d in clusters], dtype=float)
    numerators = np.minimum(np.array([n for n, _ in clusters], dtype=float), denominators)
    mine = cluster_bootstrap_ratio(numerators, denominators, resamples=999, batch=250, seed=seed)
    if mine.method != "bca":
        return  # degenerate draws: SciPy warns and returns NaN, compared in the next test
    reference = scipy.stats.bootstrap(
        (numerators, denominators),
        ratio,
        paired=True,
        vectorized=True,
        n_resamples=999,
        batch=250,
        method="BCa",
        rng=np.random.default_rng(seed),
    ).confidence_interval
    assert mine.low == pytest.approx(reference.low, abs=1e-12)
    assert mine.high == pytest.approx(reference.high, abs=1e-12)
    assert mine.clusters == len(clusters)


def test_all_supported_gives_a_finite_interval_and_says_why() -> None:
    # every cluster 5/5: every resample is 1.0, BCa is undefined (SciPy returns NaN) → percentile [1, 1]
    interval = cluster_bootstrap_ratio([5, 5, 5, 5], [5, 5, 5, 5], resamples=500)
    assert (interval.low, interval.high, interval.method) == (1.0, 1.0, "percentile")
    assert interval.note is not None
    assert "degenerate" in interval.note


def test_undefined_ratio_has_no_interval() -> None:
    interval = cluster_bootstrap_ratio([0, 0], [0, 0], resamples=100)
    assert (interval.low, interval.high, interval.method, interval.clusters) == (None, None, "none", 0)


def test_empty_clusters_are_left_out() -> None:
    # clusters with no units say nothing about the ratio: 3 informative clusters of 5
    with_empty = cluster_bootstrap_ratio([1, 0, 2, 0, 3], [2, 0, 4, 0, 5], resamples=400, seed=3)
    without = cluster_bootstrap_ratio([1, 2, 3], [2, 4, 5], resamples=400, seed=3)
    assert with_empty == without
    assert with_empty.clusters == 3


def test_same_seed_same_interval_and_bounds_bracket_the_estimate() -> None:
    rng = np.random.default_rng(1)
    denominators = rng.integers(1, 20, 50)
    numerators = rng.binomial(denominators, 0.4)
    first = cluster_bootstrap_ratio(numerators, denominators, seed=7, resamples=2000)
    again = cluster_bootstrap_ratio(numerators, denominators, seed=7, resamples=2000)
    assert first == again
    estimate = numerators.sum() / denominators.sum()
    assert first.low is not None
    assert first.high is not None
    assert first.low < estimate < first.high


@pytest.mark.parametrize(("level", "resamples"), [(1.0, 100), (0.0, 100), (0.95, 1)])
def test_arguments_are_checked(level: float, resamples: int) -> None:
    with pytest.raises(ValueError, match="must be"):
        cluster_bootstrap_ratio([1], [2], level=level, resamples=resamples)


def test_score_ci_in_json_and_table(cli: Callable[..., Result], exporter_path: Path) -> None:
    body = json.loads(cli("score", exporter_path, "--ci", "--resamples", "500", "--format", "json").stdout)
    for name in ("precision", "coverage", "official_rate"):
        interval = body[name]["ci"]
        # 12 questions, each answered by 3 engines: 12 clusters
        assert interval["clusters"] == 12
        assert (interval["level"], interval["resamples"]) == (0.95, 500)
        assert interval["low"] <= body[name]["value"] <= interval["high"]
    table = cli("score", exporter_path, "--ci", "--resamples", "500").stdout
    assert "cluster bootstrap over questions" in table
    plain = json.loads(cli("score", exporter_path, "--format", "json").stdout)
    assert "ci" not in plain["precision"]


def test_identical_runs_differ_by_nothing() -> None:
    from citeaudit.core.stats import paired_ratio_difference

    s, e = [3, 5, 2, 7], [10, 8, 4, 9]
    difference = paired_ratio_difference((s, e), (s, e), resamples=300)
    # every resample and every sign flip gives 0: delta 0, interval [0, 0], p = 1
    assert (difference.delta, difference.low, difference.high, difference.p_value) == (0.0, 0.0, 0.0, 1.0)
    assert difference.wording == "not distinguishable from noise"


def test_a_consistent_gain_is_associated_not_caused() -> None:
    from citeaudit.core.stats import paired_ratio_difference

    # 20 questions, A supports 1 of 10 edges on each, B 9 of 10: delta = 0.9 − 0.1 = 0.8
    a = ([1] * 20, [10] * 20)
    b = ([9] * 20, [10] * 20)
    difference = paired_ratio_difference(a, b, resamples=999, seed=1)
    assert difference.delta == pytest.approx(0.8)
    assert difference.low is not None
    assert difference.low > 0
    # only "no flip" and "flip all" reach |δ*| ≥ 0.8: probability 2 / 2**20, so p is at most a few / 1000
    assert difference.p_value is not None
    assert difference.p_value < 0.01
    assert difference.wording.startswith("associated")


def test_permutation_p_value_matches_exact_enumeration() -> None:
    import itertools

    from citeaudit.core.stats import paired_ratio_difference

    sa, ea, sb, eb = [1, 4, 2], [5, 6, 4], [3, 3, 4], [5, 5, 4]
    observed = sum(sb) / sum(eb) - sum(sa) / sum(ea)
    hits = 0
    for flips in itertools.product([False, True], repeat=3):
        xa = [b if f else a for a, b, f in zip(sa, sb, flips, strict=True)]
        xe = [b if f else a for a, b, f in zip(ea, eb, flips, strict=True)]
        ya = [a if f else b for a, b, f in zip(sa, sb, flips, strict=True)]
        ye = [a if f else b for a, b, f in zip(ea, eb, flips, strict=True)]
        hits += abs(sum(ya) / sum(ye) - sum(xa) / sum(xe)) >= abs(observed) - 1e-12
    exact = hits / 8
    difference = paired_ratio_difference((sa, ea), (sb, eb), resamples=20000, seed=4)
    # a Monte Carlo estimate of the exact share of sign patterns at least as extreme (SE ≈ 0.0035)
    assert difference.p_value == pytest.approx(exact, abs=0.02)


def test_holm_adjustment() -> None:
    from citeaudit.core.stats import holm

    # sorted 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04 → kept monotone at 0.06
    assert holm([0.01, 0.04, 0.03, None]) == pytest.approx([0.03, 0.06, 0.06, None])


def test_all_supported_run_has_a_finite_interval_end_to_end(
    cli: Callable[..., Result], write_json: Callable[..., Path]
) -> None:
    from builders import answer, claim, document, edge, protocol

    doc = document(
        [answer(f"a{q}", question=f"q{q}") for q in (1, 2, 3)],
        [claim(f"c{q}", f"a{q}", f"q{q}f1") for q in (1, 2, 3)],
        [edge(f"c{q}", f"https://brand.com/{q}", "supported") for q in (1, 2, 3)],
        protocol(questions=3),
    )
    body = json.loads(
        cli("score", write_json(doc, "all.json"), "--ci", "--resamples", "200", "--format", "json").stdout
    )
    interval = body["precision"]["ci"]
    # 3 of 3 supported in every question: every resample is 1.0 → percentile interval [1, 1], said so, no NaN
    assert (interval["low"], interval["high"], interval["method"]) == (1.0, 1.0, "percentile")
    assert "degenerate" in interval["note"]


def test_intervals_over_few_clusters_carry_a_caution(cli: Callable[..., Result], exporter_path: Path) -> None:
    from citeaudit.core.stats import FEW_CLUSTERS, cluster_bootstrap_ratio

    # 49 clusters: below the 50 where simulated 95 % coverage holds, so the interval says so; 50: no caution
    few = cluster_bootstrap_ratio([1] * 25 + [2] * 24, [3] * 49, resamples=200)
    enough = cluster_bootstrap_ratio([1] * 25 + [2] * 25, [3] * 50, resamples=200)
    assert FEW_CLUSTERS == 50
    assert few.caution is not None
    assert "only 49 clusters" in few.caution
    assert "caution" in few.to_dict()
    assert enough.caution is None
    assert "caution" not in enough.to_dict()
    # the bundled exporter audit has 12 questions: every printed interval is cautioned, in JSON and in the table
    body = json.loads(cli("score", exporter_path, "--ci", "--resamples", "200", "--format", "json").stdout)
    assert "only 12 clusters" in body["precision"]["ci"]["caution"]
    table = " ".join(cli("score", exporter_path, "--ci", "--resamples", "200").stdout.split())
    assert "caution: only 12 clusters" in table
    compared = " ".join(cli("compare", exporter_path, exporter_path, "--resamples", "200").stdout.split())
    assert "caution: only 12 clusters" in compared
