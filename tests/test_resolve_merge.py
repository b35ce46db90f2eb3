"""When resolution shows two sources are one page: edges of one claim merge, labels that differ dispute the
merged edge, no judgement or location is lost; and a resolver killed mid-run loses and duplicates nothing."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.builders import answer, claim, document
from tests.site import Site
from tests.test_resolve import make_db, rows, settings
from typer.testing import Result

from citeaudit.interchange import parse_audit_bytes
from citeaudit.sources import resolve_sources
from citeaudit.store import Store


def test_edges_of_one_claim_merge_when_their_sources_are_one_page(
    db_path: Path, site: str, cli: Callable[..., Result]
) -> None:
    make_db(
        db_path,
        [
            # c1: /track redirects to /article?id=7 (utm/fbclid dropped), which c1 also cites; labels differ.
            {"claim_id": "c1", "url": f"{site}/track", "label": "supported", "reviewer": "li", "marker": "[1]"},
            {
                "claim_id": "c1",
                "url": f"{site}/article?id=7",
                "label": "conflicting",
                "reviewer": "mo",
                "marker": "[2]",
            },
            # c2 cites /track only: its edge just follows the merged source.
            {"claim_id": "c2", "url": f"{site}/track"},
            # c3: /canon?x=1 declares /canonical-page canonical; both cited, both supported.
            {"claim_id": "c3", "url": f"{site}/canon?x=1", "label": "supported", "reviewer": "li"},
            {"claim_id": "c3", "url": f"{site}/canonical-page", "label": "supported", "reviewer": "mo"},
        ],
        claims=3,
    )
    assert rows(db_path, "SELECT count(*) FROM edges") == [(5,)]
    report = resolve_sources(db_path, settings())
    # 4 sources -> 2 pages; c1's and c3's two edges each become one; only c1's labels differed.
    assert (report.resolved, report.merged_sources, report.merged_edges, report.disputed_edges) == (4, 2, 2, 1)
    assert rows(db_path, "SELECT key FROM sources ORDER BY key") == [
        (f"{site}/article?id=7",),
        (f"{site}/canonical-page",),
    ]
    edges = {
        claim: (state, n, markers)
        for claim, state, n, markers in rows(
            db_path,
            "SELECT c.id, e.review_state, e.n_locations, "
            "(SELECT group_concat(coalesce(marker, '-'), ' ') FROM edge_locations WHERE edge_pk = e.pk) "
            "FROM edges e JOIN claims c ON c.pk = e.claim_pk",
        )
    }
    assert set(edges) == {"c1", "c2", "c3"}
    assert edges["c1"][0] == "disputed"
    assert sorted(edges["c1"][2].split()) == ["[1]", "[2]"]  # both locations kept
    assert edges["c1"][1] == 2
    assert edges["c2"][:2] == ("pending", 1)
    assert edges["c3"][:2] == ("agreed", 2)
    # Every judgement is still there, unchanged, on the merged edges.
    assert rows(db_path, "SELECT c.id, j.label, j.reviewer FROM judgements j JOIN edges e ON e.pk = j.edge_pk "
                         "JOIN claims c ON c.pk = e.claim_pk ORDER BY c.id, j.reviewer") == [
        ("c1", "supported", "li"),
        ("c1", "conflicting", "mo"),
        ("c3", "supported", "li"),
        ("c3", "supported", "mo"),
    ]  # fmt: skip
    assert len(rows(db_path, "SELECT * FROM edge_merges")) == 2
    # Former keys still lead to the merged source.
    assert rows(db_path, "SELECT count(*) FROM source_keys") == [(2,)]

    result = cli("score", db_path, "--format", "json")
    assert result.exit_code == 0, result.stderr
    scored = json.loads(result.stdout)
    # 3 unique edges now: c3 supported, c1 disputed (no final label), c2 pending -> precision 1/3.
    assert (scored["precision"]["numerator"], scored["precision"]["denominator"]) == (1, 3)
    assert scored["edges"]["unique"] == 3
    assert scored["provisional"] is True


def test_a_later_import_citing_a_retired_key_reaches_the_source_it_merged_into(db_path: Path, site: str) -> None:
    # /track redirects to /article?id=7, which is cited too: resolving merges the two and retires /track's key.
    make_db(
        db_path,
        [
            {"claim_id": "c1", "url": f"{site}/track", "marker": "[1]"},
            {"claim_id": "c1", "url": f"{site}/article?id=7", "marker": "[2]"},
        ],
    )
    report = resolve_sources(db_path, settings())
    assert report.merged_sources == 1
    [(survivor, survivor_pk)] = rows(db_path, "SELECT key, pk FROM sources")
    assert rows(db_path, "SELECT count(*) FROM source_keys") == [(1,)]
    # A second audit (another answer and claim) cites /track again: the import looks the retired key up and ties
    # the new edge to the merged source instead of adding a source under the old key.
    doc = document([answer("a2")], [claim("c9", "a2")], [{"claim_id": "c9", "url": f"{site}/track"}])
    payload = json.dumps(doc).encode()
    with Store(db_path) as store:
        imported = store.import_audit(parse_audit_bytes(payload, "later.json"), payload, "later.json")
    # 1 source before, 1 after: the cited key was known (retired), none new
    assert (imported.sources_new, imported.sources_known) == (0, 1)
    assert rows(db_path, "SELECT key FROM sources") == [(survivor,)]
    assert rows(db_path, "SELECT e.source_pk FROM edges e JOIN claims c ON c.pk = e.claim_pk WHERE c.id = 'c9'") == [
        (survivor_pk,)
    ]


def test_judgements_stay_immutable_after_the_migration(db_path: Path, site: str) -> None:
    make_db(db_path, [{"claim_id": "c1", "url": f"{site}/article", "label": "supported", "reviewer": "li"}])
    with sqlite3.connect(db_path) as db:
        with pytest.raises(sqlite3.IntegrityError, match="immutable"):
            db.execute("UPDATE judgements SET label = 'partial'")
        with pytest.raises(sqlite3.IntegrityError, match="immutable"):
            db.execute("UPDATE judgements SET edge_pk = edge_pk + 1, label = 'partial'")


def _resolved(db_path: Path) -> set[str]:
    with sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=5) as db:
        return {url for (url,) in db.execute("SELECT url FROM sources WHERE status = 'resolved'")}


def test_kill_and_rerun_neither_loses_nor_duplicates(db_path: Path, site: str) -> None:
    urls = [f"{site}/paced/p{n:02d}" for n in range(20)]
    make_db(db_path, [{"claim_id": "c1", "url": url} for url in urls])
    command = [
        sys.executable, "-c", "from citeaudit.cli import main; main()", "resolve", "--db", str(db_path),
        "--map-host", "site.test=127.0.0.1", "--concurrency", "2", "--per-host", "2",
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while len(_resolved(db_path)) < 4 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
    before = _resolved(db_path)
    # 20 pages at 0.25 s over 2 slots take 2.5 s: killed after 4, the first run cannot have finished.
    assert 4 <= len(before) < 20

    report = resolve_sources(db_path, settings(concurrency=4))
    assert report.selected == 20 - len(before)
    assert report.resolved == report.selected
    assert _resolved(db_path) == set(urls)
    # Nothing lost, nothing twice: 20 sources, one edge each, one recorded fetch each.
    assert rows(db_path, "SELECT count(*) FROM sources") == [(20,)]
    assert rows(db_path, "SELECT count(*) FROM edges") == [(20,)]
    assert rows(db_path, "SELECT count(DISTINCT source_pk), count(*) FROM fetches") == [(20, 20)]
    # A page recorded before the kill was never read again.
    for url in before:
        assert Site.hits[url.removeprefix(site)] == 1
