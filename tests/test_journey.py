"""An audit from scratch, as an analyst runs it: a project file, then ten commands from collecting the answers
to the report, against a fake Perplexity on 127.0.0.1 (its real wire format), a local site for the cited pages
and a real Chromium for the labels. The commands are counted.

The brand's protocol (official domain site.test) asks two questions; q1 requires f1 (20 L tank) and f2
(12 bar pump), q2 requires f3 (outdoor use). Every answer is the same text with three claims:

    c1 "The AX220 has a 20 L tank." [1] -> site.test/article (states it)       -> labelled supported
    c2 "The AX220 pump delivers 12 bar." [2] -> other.test/missing (HTTP 404)         -> labelled unknown
    c3 "The AX220 is rated for outdoor use." [1] -> site.test/article (states it)     -> labelled supported

Two collections × two questions × one engine = 4 answers, 12 edges (3 each).
"""

from __future__ import annotations

import itertools
import json
import os
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
import yaml
from typer.testing import Result

from conftest import chromium_path
from engine_server import EngineServer, Reply, engine_server

pytest.importorskip("playwright.sync_api")

from playwright.sync_api import sync_playwright

Cli = Callable[..., Result]

PASSWORD = "correct horse battery"
TEXT = "The AX220 has a 20 L tank.[1] The AX220 pump delivers 12 bar.[2] The AX220 is rated for outdoor use.[1]"


def perplexity_reply(site: str) -> Reply:
    """Perplexity's chat-completions body citing the article and a missing page, a fresh id per request."""
    ids = itertools.count(1)
    other = site.replace("site.test", "other.test")

    def body() -> bytes:
        document = {
            "id": f"pplx-journey-{next(ids)}",
            "model": "sonar-pro",
            "object": "chat.completion",
            "citations": [f"{site}/article", f"{other}/missing"],
            "search_results": [
                {"title": "AX220 specification", "url": f"{site}/article"},
                {"title": "AX220 forum", "url": f"{other}/missing"},
            ],
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": TEXT}}],
        }
        return json.dumps(document).encode()

    return Reply(200, body, {"Content-Type": "application/json"})


@pytest.fixture
def server() -> Iterator[EngineServer]:
    with engine_server() as running:
        yield running


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Journey:
    """The analyst's commands, each run as typed and counted."""

    def __init__(self, cli: Cli, env: dict[str, str]) -> None:
        self.cli = cli
        self.env = env
        self.typed: list[str] = []

    def run(self, line: str) -> Result:
        self.typed.append(line)
        words = shlex.split(line)
        assert words[0] == "citeaudit"
        result = self.cli(*words[1:], env=self.env)
        assert result.exit_code == 0, (line, result.stderr)
        return result


def label_everything_in_chromium(base: str) -> dict[str, int]:
    """Log in as ann and label every edge of the queue: the article supports its claims; a missing page is
    unknown. Returns how many of each were given."""
    given = {"supported": 0, "unknown": 0}
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"], headless=True)
        page = browser.new_page()
        page.goto(f"{base}/login")
        page.fill("input[name=name]", "ann")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(f"{base}/queue")
        for _ in range(50):  # at most: the queue empties after 12
            page.goto(f"{base}/queue")
            rows = page.locator("tr[data-edge]")
            if rows.count() == 0:
                break
            source = rows.first.locator("td").nth(2).text_content() or ""
            # the queue names a source by its title: the article's is "AX220 specification"
            label = "supported" if "AX220 specification" in source else "unknown"
            rows.first.locator("a").click()
            page.wait_for_load_state()
            with page.expect_navigation():
                page.click(f"button[value={label}]")
            given[label] += 1
        browser.close()
    return given


def test_an_audit_from_scratch_in_ten_commands(
    cli: Cli, server: EngineServer, site: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.default("perplexity", perplexity_reply(site))
    protocol = {
        "id": "ax-journey",
        "version": "1",
        "official_domains": ["site.test"],
        "questions": [
            {
                "id": "q1",
                "text": "What tank and pump does the AX220 have?",
                "locale": "en-GB",
                "required_facts": [
                    {"id": "f1", "text": "The AX220 has a 20 L tank", "severity": "high"},
                    {"id": "f2", "text": "The AX220 pump delivers 12 bar", "severity": "medium"},
                ],
            },
            {
                "id": "q2",
                "text": "Can the AX220 be used outdoors?",
                "locale": "en-GB",
                "required_facts": [{"id": "f3", "text": "The AX220 is rated for outdoor use", "severity": "high"}],
            },
        ],
        "engines": [{"name": "perplexity", "base_url": server.url}],
    }
    project = tmp_path / "project"
    project.mkdir()
    (project / "protocol.yaml").write_text(yaml.safe_dump(protocol), encoding="utf-8")
    # The project file: written once, read by every command.
    (project / "citeaudit.toml").write_text(
        'db = "audit.db"\nprotocol = "protocol.yaml"\n\n[resolve]\n'
        'map_host = ["site.test=127.0.0.1", "other.test=127.0.0.1"]\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(project)
    monkeypatch.delenv("CITEAUDIT_DB", raising=False)
    env = {"PERPLEXITY_API_KEY": "pplx-test", "CITEAUDIT_REVIEWER_PASSWORD": PASSWORD}
    journey = Journey(cli, env)

    # 1-2: two collections a month apart (here: one after the other)
    journey.run("citeaudit collect --collection 2026-10")
    journey.run("citeaudit collect --collection 2026-11")
    # 3: every cited page read (the host mappings come from citeaudit.toml)
    resolved = journey.run("citeaudit resolve --format json")
    # 4-5: required facts proposed and listed
    journey.run("citeaudit facts map --dense off")
    listed = json.loads(journey.run("citeaudit facts list --format json").stdout)
    # per answer: q1 answers map f1 -> c1 and f2 -> c2; q2 answers map f3 -> c3: 2 + 2 + 1 + 1 = 6 proposals
    assert sorted((p["fact"], p["claim_text"]) for p in listed) == sorted(
        [("f1", "The AX220 has a 20 L tank.")] * 2
        + [("f2", "The AX220 pump delivers 12 bar.")] * 2
        + [("f3", "The AX220 is rated for outdoor use.")] * 2
    )
    # 6-7: a reviewer account (every name that decides something is one), who confirms the mappings
    journey.run("citeaudit reviewer add ann")
    journey.run("citeaudit facts confirm " + " ".join(str(p["id"]) for p in listed) + " --reviewer ann")
    # 8: the review UI as its own process, labelled in Chromium
    port = free_port()
    line = f"citeaudit review serve --port {port}"
    journey.typed.append(line)
    serving = subprocess.Popen(
        [str(Path(sys.executable).with_name("citeaudit")), *shlex.split(line)[1:]],
        cwd=project,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:  # ready when it answers: polled, never a fixed wait
            assert serving.poll() is None, serving.stderr.read() if serving.stderr else ""
            try:
                if httpx.get(f"{base}/login", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the review server did not come up"
            time.sleep(0.1)
        given = label_everything_in_chromium(base)
    finally:
        serving.terminate()
        serving.communicate(timeout=30)  # waits, and reads and closes its pipes
    # c1 and c3 of 4 answers cite the article (8 edges), c2 of 4 answers the missing page (4)
    assert given == {"supported": 8, "unknown": 4}
    # 9: the trend across the two collections
    trend = json.loads(journey.run("citeaudit trend --resamples 200 --format json").stdout)
    # 10: the report
    journey.run("citeaudit report --out report.html --resamples 200")

    assert len(journey.typed) <= 10, journey.typed
    assert len(journey.typed) == 10

    counts = json.loads(resolved.stdout)
    # two distinct pages cited: the article read, the missing page failed with its 404
    assert (counts["selected"], counts["resolved"], counts["failed"]) == (2, 1, {"http_404": 1})
    points = trend["collections"]
    assert [p["collection"] for p in points] == ["2026-10", "2026-11"]
    for point in points:
        # per collection: 2 answers, both citing site.test (official): 2/2; edges 3 + 3 = 6, c1 and c3 of each
        # supported: 4/6; pairs: q1 answer (f1, f2) + q2 answer (f3) = 3, covered f1 and f3: 2/3
        assert (point["official_rate"]["numerator"], point["official_rate"]["denominator"]) == (2, 2)
        assert (point["precision"]["numerator"], point["precision"]["denominator"]) == (4, 6)
        assert (point["coverage"]["numerator"], point["coverage"]["denominator"]) == (2, 3)
        assert point["provisional"] is False
        assert point["comparable_with_previous"] is True
    score = json.loads(cli("score", "--format", "json").stdout)
    # the whole audit: 4/4 official, 8/12 precision, 4/6 coverage; every link followed: nothing provisional
    assert (score["official_rate"]["numerator"], score["official_rate"]["denominator"]) == (4, 4)
    assert (score["precision"]["numerator"], score["precision"]["denominator"]) == (8, 12)
    assert (score["coverage"]["numerator"], score["coverage"]["denominator"]) == (4, 6)
    assert score["official_rate_provisional"] is False
    html = (project / "report.html").read_text(encoding="utf-8")
    assert "Trend across collections" in html
    assert "Review policy: single review" in html
    assert "8 of 12" in html
