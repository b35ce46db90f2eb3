"""The HTML report: self-contained, inert against markup in answers, and rendered by a real headless Chromium."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

from typer.testing import Result

from builders import blob_edge_rows
from conftest import chromium_path
from test_display import pending_pairs

Cli = Callable[..., Result]
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"


def render(cli: Cli, source: Path, out: Path, *extra: str) -> str:
    result = cli("report", source, "--out", out, "--resamples", "300", *extra)
    assert result.exit_code == 0, result.stderr
    return out.read_text(encoding="utf-8")


def test_report_is_one_self_contained_file(cli: Cli, exporter_path: Path, tmp_path: Path) -> None:
    html = render(cli, exporter_path, tmp_path / "report.html")
    # nothing is loaded from anywhere: no external scripts, no linked styles, no external images or fonts; the
    # two script elements are inline: the evidence (JSON data) and the few lines that list it on a click
    scripts = re.findall(r"<script[^>]*>", html)
    assert scripts == ['<script type="application/json" id="evidence-data">', "<script>"]
    assert "<link" not in html
    assert not re.search(r"""src\s*=\s*["']?https?:""", html)
    # the only outward references are links the reader may follow: every href belongs to an <a> element
    assert not re.search(r"""<(?!a\s)[a-z]+[^>]*\shref\s*=""", html)
    assert "@import" not in html
    assert "<svg" in html  # the chart is inline
    # the headline numbers are those of `score`: precision 26 of 68, coverage 23 of 45, both provisional with
    # what is pending in the card itself (10 edges; the pairs they may still cover, counted by hand)
    assert "26/68 · 10 pending" in html
    assert f"23/45 · {pending_pairs(exporter_path)} pending" in html
    for section in (
        "By question",
        "Edges by final label",
        "Joint support",
        "Required facts not covered",
        "Unsupported and conflicting claims",
        "Official-domain citations",
        "How these numbers were measured",
    ):
        assert section in html


def test_markup_in_answers_stays_text(cli: Cli, exporter_path: Path, tmp_path: Path) -> None:
    doc = json.loads(exporter_path.read_text())
    doc["claims"][0]["text"] = '<script>alert("x")</script><img src=x onerror="alert(1)">'
    doc["edges"][0]["reasoning"] = "<a href='javascript:alert(1)'>click</a>"
    doc["edges"][0]["label"] = "conflicting"
    for edge in doc["edges"]:  # every source of the claim conflicts: it is listed among the problems
        if edge["claim_id"] == doc["claims"][0]["id"]:
            edge["label"] = "conflicting"
            edge.pop("judgements", None)
    source = tmp_path / "hostile.json"
    source.write_text(json.dumps(doc), encoding="utf-8")
    html = render(cli, source, tmp_path / "report.html")
    # the only script elements are the report's own two; the claim's markup is text in the page and in the
    # evidence data (where no "<" is left to end or open an element)
    assert re.findall(r"<script[^>]*>", html) == ['<script type="application/json" id="evidence-data">', "<script>"]
    assert "<script>alert" not in html
    assert "<img src=x" not in html
    assert "<a href='javascript:" not in html
    assert "&lt;script&gt;" in html
    assert "\\u003cscript>alert" in html


def test_report_with_comparison(cli: Cli, exporter_path: Path, tmp_path: Path) -> None:
    html = render(cli, exporter_path, tmp_path / "report.html", "--compare", str(exporter_path))
    assert "Comparison:" in html
    # the same scope on both sides: every difference is exactly zero and not distinguishable from noise
    assert "+0.000" in html
    assert "not distinguishable from noise" in html


def test_chromium_renders_the_report(cli: Cli, exporter_path: Path, tmp_path: Path) -> None:
    browser = chromium_path()
    page = tmp_path / "report.html"
    render(cli, exporter_path, page)
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--window-size=1200,2400",
    ]
    dom = subprocess.run(
        [browser, *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    # the browser built the page: cards, chart and tables are in its DOM
    assert 'data-metric="precision"' in dom
    assert "<svg" in dom
    assert "26/68 · 10 pending" in dom
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "report.png"
    shot.unlink(missing_ok=True)
    subprocess.run(
        [browser, *flags, f"--screenshot={shot}", page.as_uri()], capture_output=True, timeout=120, check=True
    )
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 10_000


def test_each_citation_shows_its_own_link_beside_the_shared_page(
    cli: Cli, write_json: Callable[..., Path], tmp_path: Path
) -> None:
    from builders import document

    # ChatGPT and Claude cite one distributor page; ChatGPT's link carries its tracking parameter. Both normalise
    # to the same source, judged conflicting for both claims.
    links = {"chatgpt": "https://dist.example/ax220?utm_source=openai", "claude": "https://dist.example/ax220"}
    answers = [
        {"id": f"a-{name}", "question_id": "q1", "run_id": "r1", "platform": name, "text": "The AX220 tank is 30 L.",
         "citations": [{"url": url}]}
        for name, url in links.items()
    ]  # fmt: skip
    claims = [{"id": f"c-{name}", "answer_id": f"a-{name}", "text": "The AX220 tank is 30 L"} for name in links]
    edges = [
        {"claim_id": f"c-{name}", "url": url, "label": "conflicting", "reviewer": "li"} for name, url in links.items()
    ]
    html = render(cli, write_json(document(answers, claims, edges), "shared.json"), tmp_path / "r.html")
    blob = json.loads(re.search(r'<script type="application/json" id="evidence-data">(.*?)</script>', html, re.S)[1])
    links = {}
    for edge in blob_edge_rows(blob["edges"]):
        answer = blob["answers"][blob["claims"][edge[0]][1]]
        source = blob["sources"][edge[1]]
        links[answer[0]] = (edge[7], source[1], source[2])
    # each answer's evidence row shows its own link as cited: Claude's is never ChatGPT's tracking URL
    assert links["a-claude"][0] == "https://dist.example/ax220"
    assert links["a-chatgpt"][0] == "https://dist.example/ax220?utm_source=openai"
    # beside it, the one shared source both normalise to
    assert links["a-claude"][1] == links["a-chatgpt"][1]
