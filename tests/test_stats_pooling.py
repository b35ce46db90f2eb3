"""Pooling clusters of equal count vectors together gives the intervals of pooling them one by one."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from citeaudit.core.stats import _bca, cluster_bootstrap_counts


def _share(pooled: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return pooled[:, 0] / pooled.sum(axis=1)


def _one_by_one(table: np.ndarray, resamples: int, seed: int, batch: int) -> object:
    """The interval with every resample pooled cluster by cluster in a Python loop (the definition)."""
    clusters = len(table)
    rng = np.random.default_rng(seed)
    values = np.empty(resamples)
    step = max(1, min(batch, (1 << 24) // clusters))
    for start in range(0, resamples, step):
        size = min(step, resamples - start)
        for r, drawn in enumerate(rng.integers(0, clusters, (size, clusters))):
            pooled = np.zeros(table.shape[1])
            for c in drawn:
                pooled += table[c]
            values[start + r] = _share(pooled[None, :])[0]
    total = table.sum(axis=0)
    defined = np.isfinite(values)
    note = (
        None
        if defined.all()
        else f"{int((~defined).sum())} of {resamples} resamples left out (statistic undefined on them)"
    )
    return _bca(
        values[defined],
        float(_share(total[None, :])[0]),
        _share(total[None, :] - table),
        0.9,
        clusters,
        resamples,
        note,
    )


@settings(max_examples=40, deadline=None)
@given(
    hnp.arrays(np.int64, st.tuples(st.integers(2, 12), st.integers(2, 3)), elements=st.integers(0, 3)),
    st.integers(0, 2**16),
    st.sampled_from([1, 7, 1000]),
)
def test_pooled_by_kind_equals_one_by_one(table: np.ndarray, seed: int, batch: int) -> None:
    table = table.astype(np.float64)
    if not np.isfinite(_share(table.sum(axis=0)[None, :])[0]):
        return  # undefined on the sample: no resampling happens
    found = cluster_bootstrap_counts(table, {"share": _share}, level=0.9, resamples=50, seed=seed, batch=batch)
    assert found["share"] == _one_by_one(table, 50, seed, batch)
