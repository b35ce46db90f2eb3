"""The official-domain rate is provisional, with the count, while a cited link in scope is unresolved."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from typer.testing import Result

Cli = Callable[..., Result]


def _fixture(four_claim_path: Path, resolved: tuple[str, ...]) -> dict[str, Any]:
    """The four-claim fixture with the sources in ``resolved`` marked as followed."""
    document = json.loads(four_claim_path.read_text(encoding="utf-8"))
    document["sources"] = [
        {"key": url.removeprefix("https://"), "url": url, "resolved_url": url, "status": "resolved"} for url in resolved
    ]
    return document


def test_an_unresolved_file_has_a_provisional_official_rate(cli: Cli, four_claim_path: Path) -> None:
    result = cli("score", four_claim_path, "--kind", "fixture", "--format", "json")
    assert result.exit_code == 0, result.stderr
    body = json.loads(result.stdout)
    # cited: s1 (twice), s2, s3 → 3 distinct sources, none followed yet
    assert body["unresolved_links"] == 3
    assert body["official_rate_provisional"] is True
    table = cli("score", four_claim_path, "--kind", "fixture")
    assert "official rate*" in table.stdout
    assert "official rate PROVISIONAL: 3 cited link(s) in scope not resolved yet" in table.stdout


def test_resolved_links_no_longer_count(cli: Cli, four_claim_path: Path, write_json: Any, tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    path = write_json(_fixture(four_claim_path, ("https://s1.example.org/ax220", "https://s2.example.org/ax220")))
    ingested = cli("ingest", path, "--db", db)
    assert ingested.exit_code == 0, ingested.stderr
    for source in (path, db):
        body = json.loads(cli("score", source, "--kind", "fixture", "--format", "json").stdout)
        # s1 and s2 followed, s3 not: 1 unresolved
        assert body["unresolved_links"] == 1, source
        assert body["official_rate_provisional"] is True
    every = write_json(
        _fixture(
            four_claim_path,
            ("https://s1.example.org/ax220", "https://s2.example.org/ax220", "https://s3.example.org/ax220"),
        ),
        "all.json",
    )
    body = json.loads(cli("score", every, "--kind", "fixture", "--format", "json").stdout)
    assert body["unresolved_links"] == 0
    assert body["official_rate_provisional"] is False
    assert "official rate*" not in cli("score", every, "--kind", "fixture").stdout


def test_the_report_marks_the_official_rate(cli: Cli, four_claim_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    assert cli("report", four_claim_path, "--kind", "fixture", "--out", out, "--resamples", "200").exit_code == 0
    assert "provisional: 3 cited link(s) not resolved yet" in out.read_text(encoding="utf-8")


def test_unresolved_sources_counts_distinct_pending_sources_among_the_arrays(
    cli: Cli, four_claim_path: Path, write_json: Any, tmp_path: Path
) -> None:
    """The count over arrays of source pks (as scoring a database hands them over) against the definition
    evaluated row by row: distinct pks among the arrays whose source is still pending."""
    import numpy as np
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from citeaudit.store import Store
    from citeaudit.store.answers import unresolved_sources

    db = tmp_path / "a.db"
    path = write_json(_fixture(four_claim_path, ("https://s2.example.org/ax220",)))
    assert cli("ingest", path, "--db", db).exit_code == 0
    with Store(db) as store:
        rows = store.connection.execute("SELECT pk, status FROM sources").fetchall()
        pending = {pk for pk, status in rows if status == "pending"}
        # s1 and s3 still pending, s2 followed
        assert len(pending) == 2
        known = [pk for pk, _ in rows]

        pks = st.lists(st.sampled_from([*known, max(known) + 5, 10**6]), max_size=12)

        @settings(max_examples=60, deadline=None)
        @given(pks, pks)
        def check(citations: list[int], edges: list[int]) -> None:
            expected = len(pending & (set(citations) | set(edges)))
            found = unresolved_sources(store, np.array(citations, dtype=np.int64), np.array(edges, dtype=np.int64))
            assert found == expected

        check()
