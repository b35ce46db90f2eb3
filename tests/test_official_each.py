"""Official matching of a table of sources at once decides every row as the matcher decides it alone."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from citeaudit.core.identity import OfficialMatcher, host_codes
from citeaudit.core.model import OfficialDomain

_HOSTS = ["brand.com", "shop.brand.com", "github.com", "x.net", "notbrand.com", None]
_PATHS = ["/", "", "/brand", "/brand/x", "/brandx", "/docs/a", None]
_DECLARED = [
    OfficialDomain(domain="brand.com"),
    OfficialDomain(host="github.com", path_prefix="/brand"),
    OfficialDomain(host="x.net", path_prefix="/docs/"),
    OfficialDomain(host="notbrand.com"),
]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(_HOSTS), st.sampled_from(_PATHS)), max_size=30),
    st.sets(st.integers(0, len(_DECLARED) - 1)),
)
def test_each_row_is_decided_as_the_matcher_decides_its_location(
    rows: list[tuple[str | None, str | None]], declared: set[int]
) -> None:
    matcher = OfficialMatcher([_DECLARED[i] for i in sorted(declared)])
    asked: list[int] = []

    def paths(at: np.ndarray) -> list[str | None]:
        asked.extend(at.tolist())
        return [rows[i][1] for i in at.tolist()]

    hosts, rows_on = host_codes(host for host, _ in rows)
    got = matcher.official_each(hosts, rows_on, paths, len(rows)).tolist()
    assert got == [matcher.match_location(host, path or "/") for host, path in rows]
    # paths are read only on hosts whose decision depends on them
    assert all(matcher.match_host(rows[i][0]) is None for i in asked)


def test_a_host_declared_with_a_prefix_reads_paths_only_there() -> None:
    # brand.com is official as a whole; github.com only under /brand; x.net not at all
    matcher = OfficialMatcher(
        [OfficialDomain(domain="brand.com"), OfficialDomain(host="github.com", path_prefix="/brand")]
    )
    rows = [
        ("shop.brand.com", "/a"),
        ("github.com", "/brand/x"),
        ("github.com", "/other"),
        ("x.net", "/brand"),
        (None, "/"),
    ]
    asked: list[int] = []

    def paths(at: np.ndarray) -> list[str | None]:
        asked.extend(at.tolist())
        return [rows[i][1] for i in at.tolist()]

    hosts, rows_on = host_codes(host for host, _ in rows)
    assert matcher.official_each(hosts, rows_on, paths, len(rows)).tolist() == [True, True, False, False, False]
    assert sorted(asked) == [1, 2]  # the two github.com rows, nothing else


def test_an_empty_table_reads_nothing() -> None:
    matcher = OfficialMatcher([OfficialDomain(domain="brand.com")])
    hosts, rows_on = host_codes([])
    assert matcher.official_each(hosts, rows_on, lambda at: [], 0).tolist() == []
