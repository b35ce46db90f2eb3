"""``sources copies`` and ``conflicts`` on resolved snapshots served by a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from builders import answer, claim, document, protocol
from citeaudit.interchange import parse_audit_bytes
from citeaudit.sources import ResolveSettings, resolve_sources
from citeaudit.sources.copy_groups import conflicts
from citeaudit.store import Store
from citeaudit.store.copies import claim_support

Cli = Callable[..., Result]

SHEET = [
    "Axtorp AX220 portable compressor: technical data sheet.",
    "The AX220 is a belt-driven piston compressor for workshops and building sites with a 20 litre tank.",
    "Maximum working pressure is 10 bar and the free air delivery is 220 litres per minute at 6 bar.",
    "The motor is a 1.5 kW single-phase unit for 230 V mains supply with thermal overload protection.",
    "The housing is rated IP54, so the compressor may be used outdoors when sheltered from heavy rain.",
]
OLD_SHEET = [
    "Axtorp AX220 portable compressor: technical data sheet Rev. 2",
    "Published: 14 May 2024",
    "The AX220 was a direct-drive compressor for hobby use with a 24 litre tank and a plastic shroud.",
    "Maximum working pressure was 8 bar; the unit was sold with a short spiral hose and a quick coupler.",
    "This revision is kept for owners of early units built before the 2025 model year change.",
]
AX320 = [
    "Axtorp AX320 stationary compressor for industrial workshops with a 100 litre vertical tank.",
    "The AX320 needs a 400 V three-phase supply and delivers 480 litres per minute at 8 bar pressure.",
    "A pressure switch, a safety valve and an automatic condensate drain are fitted as standard parts.",
    "The AX320 is not suitable for outdoor use and must be installed on a level concrete floor only.",
]


def html(title: str, lines: list[str], date: str) -> bytes:
    body = "".join(f"<p>{line}</p>" for line in lines)
    return (
        f"<html><head><title>{title}</title><meta name='date' content='{date}'></head>"
        f"<body><article><h1>{title}</h1>{body}</article></body></html>"
    ).encode()


PAGES = {
    "/ax220": html("AX220 data sheet Rev. 3", ["Data sheet Rev. 3", *SHEET], "2026-03-12"),
    "/blog/ax220": html("AX220 news", ["Posted in Tools", *SHEET, "Share this page"], "2026-04-01"),
    "/old/ax220": html("AX220 data sheet Rev. 2", OLD_SHEET, "2024-05-14"),
    "/ax320": html("AX320", AX320, "2026-01-10"),
}
HOSTS = ("axtorp-machines.com", "toolblog.net", "archive-pages.org", "machine-shop.net")
URLS = {
    "official": "axtorp-machines.com/ax220",
    "blog": "toolblog.net/blog/ax220",
    "old": "archive-pages.org/old/ax220",
    "ax320": "machine-shop.net/ax320",
}


class Pages(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        body = PAGES.get(self.path)
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body or b"")))
        self.end_headers()
        self.wfile.write(body or b"")


@pytest.fixture
def port() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Pages)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()
    thread.join()


def resolved_db(db_path: Path, port: int) -> Path:
    url = {name: f"http://{path.replace('/', f':{port}/', 1)}" for name, path in URLS.items()}
    edges: list[dict[str, Any]] = [
        {"claim_id": "c1", "url": url["official"], "label": "supported", "reviewer": "li"},
        {"claim_id": "c1", "url": url["blog"], "label": "supported", "reviewer": "li"},
        {"claim_id": "c1", "url": url["old"], "label": "conflicting", "reviewer": "li"},
        {"claim_id": "c2", "url": url["official"], "label": "supported", "reviewer": "li"},
        {"claim_id": "c2", "url": url["ax320"], "label": "conflicting", "reviewer": "li"},
        {"claim_id": "c3", "url": url["blog"], "label": "supported", "reviewer": "li"},
    ]
    doc = document(
        [answer("a1")],
        [
            claim("c1", "a1", fact="q1f1", text="The AX220 has a 20 L tank"),
            claim("c2", "a1", text="The AX220 runs on 230 V"),
            claim("c3", "a1", text="The AX220 is rated IP54"),
        ],
        edges,
        proto=protocol(official=["axtorp-machines.com"]),
    )
    payload = json.dumps(doc).encode()
    with Store(db_path) as store:
        store.import_audit(parse_audit_bytes(payload, "test.json"), payload, "test.json")
    report = resolve_sources(
        db_path, ResolveSettings(host_map=tuple((h, "127.0.0.1") for h in HOSTS), allow_private=True, timeout=5.0)
    )
    assert report.resolved == 4, report
    return db_path


def test_copies_group_the_official_page_and_its_copy(db_path: Path, port: int, cli: Cli) -> None:
    db = resolved_db(db_path, port)
    result = cli("sources", "copies", "--db", db, "--format", "json")
    assert result.exit_code == 0, result.stderr
    body = json.loads(result.stdout)
    # four pages with text; the blog page copies the official data sheet, the others are distinct
    assert body["pages"] == 4
    assert len(body["groups"]) == 1
    (group,) = body["groups"]
    assert group["reason"] == "official"
    assert group["official_origin"] is True
    assert group["origin"].startswith("http://axtorp-machines.com")
    assert [m.split("/")[2].split(":")[0] for m in group["members"]] == ["axtorp-machines.com", "toolblog.net"]

    with Store(db) as store:
        support = claim_support(store)
    # c1: two supporting sources, one origin -> 1 independent, copies only
    assert (support["c1"].supporting, support["c1"].independent, support["c1"].copies_only) == (2, 1, True)
    # c2: one supporting source; c3: only the copy
    assert (support["c2"].independent, support["c2"].copies_only) == (1, False)
    assert (support["c3"].independent, support["c3"].copies_only) == (1, False)

    table = cli("source", "copies", "--db", db)  # the same group under its singular name
    assert "1 group(s)" in table.stdout


def test_conflicts_list_old_revision_and_other_model(db_path: Path, port: int, cli: Cli) -> None:
    db = resolved_db(db_path, port)
    cli("sources", "copies", "--db", db)
    result = cli("conflicts", "--db", db, "--format", "json")
    assert result.exit_code == 0, result.stderr
    found = {c["subject"]: c for c in json.loads(result.stdout)}
    # c1 (supported by the sheet and its copy, contradicted by Rev. 2) and c2 (contradicted by an AX320 page)
    assert set(found) == {"c1", "c2"}
    assert found["c1"]["reason"] == "newer version"
    old = next(s for s in found["c1"]["sources"] if "archive-pages" in s["key"])
    assert old["facts"]["versions"] == ["rev 2"]
    assert old["facts"]["date"] == "2024-05-14"
    blog = next(s for s in found["c1"]["sources"] if "toolblog" in s["key"])
    assert blog["copy_origin"].startswith("http://axtorp-machines.com")
    assert found["c2"]["reason"] == "other model"
    assert "AX320" in found["c2"]["detail"]
    table = cli("conflicts", "--db", db)
    assert "2 conflict(s)" in table.stdout
    # the edge page's one-claim search finds exactly what the whole-database search finds for that claim
    with Store(db) as store:
        everything = conflicts(store)
        for claim_id in ("c1", "c2", "c3"):
            assert conflicts(store, claim_id) == [c for c in everything if c.kind == "claim" and c.subject == claim_id]
        assert claim_support(store, ["c1"]) == {"c1": claim_support(store)["c1"]}


def test_report_counts_independent_sources(db_path: Path, port: int, cli: Cli, tmp_path: Path) -> None:
    db = resolved_db(db_path, port)
    out = tmp_path / "report.html"
    before = cli("report", db, "--out", out, "--resamples", "200", "--kind", "all")
    assert before.exit_code == 0, before.stderr
    assert "Copy groups have not been computed yet" in out.read_text(encoding="utf-8")
    cli("sources", "copies", "--db", db)
    cli("report", db, "--out", out, "--resamples", "200", "--kind", "all")
    page = out.read_text(encoding="utf-8")
    # c1 rests on the data sheet and its copy: 2 supporting sources, 1 independent, flagged
    row = (
        '<tr><td>The AX220 has a 20 L tank</td><td class="num">2</td><td class="num">1</td>'
        "<td><strong>yes</strong></td></tr>"
    )
    assert row in page
    fact_row = (
        '<tr><td>q1f1: fact f1</td><td class="num">2</td><td class="num">1</td><td><strong>yes</strong></td></tr>'
    )
    assert fact_row in page


def test_review_page_shows_conflict_side_by_side_only_to_those_who_see_every_label(
    db_path: Path, port: int, cli: Cli
) -> None:
    pytest.importorskip("fastapi")
    from citeaudit.review.app import ReviewConfig
    from review_support import ReviewClient, add_account, serve

    db = resolved_db(db_path, port)
    cli("sources", "copies", "--db", db)
    add_account(db, "ann", "reviewer")
    add_account(db, "root", "admin")
    with Store(db) as store:
        (edge,) = store.connection.execute(
            "SELECT e.pk FROM edges e JOIN claims c ON c.pk = e.claim_pk JOIN sources s ON s.pk = e.source_pk "
            "WHERE c.id = 'c1' AND s.key LIKE '%archive-pages%'"
        ).fetchone()
    with serve(ReviewConfig(db=db)) as base:
        admin, reviewer = ReviewClient(base), ReviewClient(base)
        try:
            admin.login("root")
            reviewer.login("ann")
            page = admin.get(f"/edges/{edge}").text
            assert "support rests on copies of one origin only" in page
            # c1 is mapped to required fact q1f1: the fact's support is the same two sources, one origin
            assert (
                "Required fact q1f1 (fact f1), over every claim mapped to it: 2 supporting source(s), 1 independent"
                in page
            )
            assert "suggested: newer version" in page
            assert "rev 2" in page
            blind = reviewer.get(f"/edges/{edge}").text
            assert "Independent support and conflicts" not in blind
        finally:
            admin.close()
            reviewer.close()
