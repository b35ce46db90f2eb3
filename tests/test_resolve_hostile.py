"""The resolver against hostile links and documents: malformed ports and IPv6 literals, pages that never finish
extracting, a killed resolver. Real server on 127.0.0.1 (tests/site.py), real processes."""

from __future__ import annotations

from pathlib import Path

from tests.site import Site
from tests.test_resolve import make_db, settings, source

from citeaudit.sources import resolve_sources, source_snapshots


def test_malformed_ports_and_ipv6_literals_fail_their_source_and_the_run_goes_on(db_path: Path, site: str) -> None:
    bad_port = f"http://site.test:{Site.port + 70000}/article"  # any test port + 70000 is past 65535
    urls = {
        bad_port: ("failed", "bad_url"),
        "http://site.test:99999999999999999999/": ("failed", "bad_url"),
        f"{site}/to-bad-port": ("failed", "bad_url"),  # the redirect leads past 65535
        f"{site}/to-bad-ipv6": ("failed", "bad_url"),  # Location: http://[::1/article
        # a canonical link that cannot be requested is ignored: the page keeps its own URL
        f"{site}/bad-canonical-header": ("resolved", None),
        f"{site}/bad-canonical-html": ("resolved", None),
        f"{site}/article": ("resolved", None),
        f"{site}/manual.txt": ("resolved", None),
    }
    make_db(db_path, [{"claim_id": "c1", "url": url} for url in urls])
    report = resolve_sources(db_path, settings())
    # 8 selected: 4 resolved, 4 failed as bad_url; nothing left pending
    assert (report.selected, report.resolved, report.failed) == (8, 4, {"bad_url": 4})
    for url, (status, reason) in urls.items():
        found = source(db_path, url)
        assert (found["status"], found["reason"]) == (status, reason), url
    for route in ("/bad-canonical-header", "/bad-canonical-html"):
        found = source(db_path, f"{site}{route}")
        assert found["key"] == f"{site}{route}"
        (snapshot,) = source_snapshots(db_path, found["key"])
        assert snapshot.canonical_url is None
        assert "20 L tank" in snapshot.text
