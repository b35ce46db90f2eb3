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

from citeaudit.stats import cluster_bootstrap_ratio


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
