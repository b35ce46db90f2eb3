"""The HTML report in a real headless Chromium: readable chart labels at any number of groups, A4 printing with
the headline on page 1, and the demo database's report with its fact matrix and a drill-down that opens."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from playwright.sync_api import Browser, expect, sync_playwright
from typer.testing import Result

from citeaudit.core.results import Metric
from citeaudit.report.charts import NAMED_AT_MOST, Bar, bar_chart, wrap
from conftest import chromium_path

Cli = Callable[..., Result]
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One headless Chromium for the module."""
    with sync_playwright() as driver:
        found = driver.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"], headless=True)
        yield found
        found.close()


ENGINES = ["ChatGPT (OpenAI)", "Perplexity", "Claude (Anthropic)", "Gemini (Google)", "Google AI Overviews"]


def _bars(n: int, long: bool = True) -> list[Bar]:
    # realistic group names: an engine alone, or an engine, a collection and a locale
    return [
        Bar(
            f"{ENGINES[i % len(ENGINES)]} · collection 2026-{i + 1:02d} · en-GB" if long else ENGINES[i % len(ENGINES)],
            [Metric(i % 5, 5)] * 3,
        )
        for i in range(n)
    ]


def _overlaps(boxes: list[dict[str, float]]) -> list[tuple[int, int]]:
    found = []
    for i, a in enumerate(boxes):
        for j in range(i + 1, len(boxes)):
            b = boxes[j]
            apart = (
                a["right"] <= b["left"] or b["right"] <= a["left"] or a["bottom"] <= b["top"] or b["bottom"] <= a["top"]
            )
            if not apart:
                found.append((i, j))
    return found


@pytest.mark.parametrize("long", [True, False])
@pytest.mark.parametrize("groups", [2, 8, 24])
def test_no_two_x_axis_labels_overlap(browser: Browser, groups: int, long: bool) -> None:
    page = browser.new_page(viewport={"width": 1000, "height": 600})
    page.set_content(f"<!DOCTYPE html><html><body>{bar_chart(_bars(groups, long))}</body></html>")
    boxes = page.eval_on_selector_all(
        "text.xlabel",
        "els => els.map(e => { const r = e.getBoundingClientRect();"
        " return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; })",
    )
    svg = page.eval_on_selector("svg", "e => { const r = e.getBoundingClientRect(); return [r.left, r.right]; }")
    page.close()
    assert len(boxes) == groups
    assert _overlaps(boxes) == []
    # every label is drawn inside the chart, none cut off at its edges
    assert all(svg[0] <= box["left"] and box["right"] <= svg[1] for box in boxes)


def test_short_names_are_written_out_and_long_ones_numbered_at_eight_groups() -> None:
    short = re.findall(r'<text class="xlabel"[^>]*><title>[^<]*</title>(.*?)</text>', bar_chart(_bars(8, False)))
    # 8 slots of 662/8 = 82.75 px: 10 characters a line; "Google AI Overviews" wraps to "Google AI" / "Overviews"
    assert re.sub(r"<[^>]+>", "|", short[4]).strip("|") == "Google AI||Overviews"
    long = re.findall(r'<text class="xlabel"[^>]*><title>[^<]*</title>(.*?)</text>', bar_chart(_bars(8)))
    # "ChatGPT (OpenAI) · collection 2026-01 · en-GB" does not fit three such lines: numbered instead
    assert long[:3] == ["1", "2", "3"]


def test_many_groups_are_numbered_and_named_in_the_tooltip() -> None:
    many = bar_chart(_bars(NAMED_AT_MOST + 1))
    labels = re.findall(r'<text class="xlabel"[^>]*><title>([^<]*)</title>([^<]*)</text>', many)
    # 9 groups: numbered 1..9, each with its full name as the tooltip
    assert [number for _, number in labels] == [str(i) for i in range(1, 10)]
    assert labels[0][0] == "ChatGPT (OpenAI) · collection 2026-01 · en-GB"


@given(st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=80), st.integers(2, 40))
def test_wrapped_lines_fit_their_width(label: str, width: int) -> None:
    lines = wrap(label, width)
    assert 1 <= len(lines) <= 3
    assert all(len(line) <= width for line in lines)
    if len(lines) < 3 and " ".join(label.split()) and all(len(w) < width for w in label.split()):
        # nothing cut: the words read as they were written
        assert " ".join(lines) == " ".join(label.split())


def test_patterns_carry_the_metric_beside_the_colour() -> None:
    chart = bar_chart(_bars(2))
    # the three metrics fill with a solid colour, a hatch and dots, in the bars and in the legend alike
    for fill in ("#3b6fb6", "url(#hatch-1)", "url(#dots-2)"):
        assert chart.count(f'fill="{fill}"') >= 3  # two bars and the legend swatch


def _report(cli: Cli, source: Path, out: Path, *extra: str) -> Path:
    result = cli("report", source, "--out", out, "--resamples", "200", *extra)
    assert result.exit_code == 0, result.stderr
    return out


def _pages(pdf: bytes) -> tuple[int, str, str]:
    """Page count, the first page's text and the whole text."""
    import io

    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(pdf))
    return len(reader.pages), reader.pages[0].extract_text(), "\n".join(p.extract_text() for p in reader.pages)


def test_print_gives_a4_pages_with_the_headline_first(
    browser: Browser, cli: Cli, exporter_path: Path, tmp_path: Path
) -> None:
    out = _report(cli, exporter_path, tmp_path / "r.html")
    page = browser.new_page()
    page.goto(out.as_uri())
    pdf = page.pdf(format="A4", print_background=True)
    page.close()
    pages, first, everything = _pages(pdf)
    # 36 answers, 15 facts × 3 engines, 27 listed problems: more than a page, and far fewer pages than rows
    assert 3 <= pages <= 30
    assert "Citation audit" in first
    for name in ("Official-domain rate", "Citation precision", "Fact coverage"):
        assert name.upper() in first.upper()
    assert "26/68" in first  # the precision card's fraction
    # every section is printed, the ones laid out only when scrolled to on screen included
    for section in ("Problems to act on", "Required facts by engine", "How these numbers were measured"):
        assert section in everything


@pytest.fixture
def demo_db(cli: Cli, tmp_path: Path) -> Path:
    """The demo database, built by `citeaudit demo`."""
    db = tmp_path / "citeaudit-demo.db"
    result = cli("demo", "--db", db)
    assert result.exit_code == 0, result.stderr
    return db


@pytest.mark.parametrize("source", ["demo", "exporter", "four-claim"])
def test_reports_render_with_questions_fact_matrix_and_drill_down(
    browser: Browser, cli: Cli, demo_db: Path, exporter_path: Path, four_claim_path: Path, tmp_path: Path, source: str
) -> None:
    path, extra = {
        "demo": (demo_db, ()),
        "exporter": (exporter_path, ()),
        "four-claim": (four_claim_path, ("--kind", "fixture")),
    }[source]
    out = _report(cli, path, tmp_path / f"{source}.html", *extra)
    page = browser.new_page(viewport={"width": 1200, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(out.as_uri())
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / f"report-{source}.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the sections below the first screen are laid out when scrolled to (content-visibility): their text is in
    # the document, and each shows once scrolled into view
    text = page.text_content("body") or ""
    if source == "four-claim":
        assert "fx-q1 · Describe the AX220." in text
    else:
        assert "q01 · What tank size does the AX220 have?" in text
        assert "q12 · Are spare parts available for discontinued AX models?" in text
        assert "ChatGPT (OpenAI)" in text
    assert "Required facts by engine" in text
    assert page.locator("table.matrix td").count() > 0
    page.locator("table.matrix").scroll_into_view_if_needed()
    # laid out once in view (the browser does so at its next frame: waited for, never slept)
    expect(page.locator("#fact-matrix")).to_contain_text("Required facts by engine", use_inner_text=True)
    assert page.locator("table.matrix").is_visible()
    # the precision card opens its edges: as many rows as its denominator, the supported ones marked
    card = page.locator('.card[data-metric="precision"] a.ev').first
    fraction = re.match(r"(\d+)(?:/| of )(\d+)", page.inner_text('.card[data-metric="precision"] .fraction') or "")
    assert fraction is not None
    numerator, denominator = int(fraction[1]), int(fraction[2])
    card.click()
    page.wait_for_selector("#evidence-list .row")
    title = page.inner_text("#evidence-title")
    assert f"{numerator} in the numerator, {denominator} in the denominator" in title
    rows = page.locator("#evidence-list .row.num, #evidence-list .row.den")
    assert rows.count() == min(denominator, 200)
    assert page.locator("#evidence-list .row.num").count() == min(numerator, 200)
    assert page.locator("#evidence-list .row").first.is_visible()
    assert errors == []
    page.close()


def test_a_long_evidence_list_is_paged(
    browser: Browser, cli: Cli, write_json: Callable[..., Path], tmp_path: Path
) -> None:
    from builders import answer, claim, document, edge

    # 2 answers × 30 claims × 4 sources = 240 edges, every fourth one supported: precision 60/240
    claims = [claim(f"c{a}-{i}", f"a{a}") for a in range(2) for i in range(30)]
    edges = [
        edge(c["id"], f"https://s{j}.example/{c['id']}", "supported" if j == 0 else "irrelevant")
        for c in claims
        for j in range(4)
    ]
    source = write_json(document([answer("a0"), answer("a1", run="r2")], claims, edges), "long.json")
    out = _report(cli, source, tmp_path / "long.html")
    page = browser.new_page()
    page.goto(out.as_uri())
    page.locator('.card[data-metric="precision"] a.ev').first.click()
    page.wait_for_selector("#evidence-list .row")
    # the first page of 200 rows: the 60 supported first, then 140 of the 180 others
    assert page.locator("#evidence-list > .row").count() == 200
    assert page.locator("#evidence-list > .row.num").count() == 60
    # each row is its edge's, read from the blob's columns: the first supported edge is c0-0's on s0
    first = page.locator("#evidence-list > .row").first.inner_text()
    assert "supported" in first
    assert "https://s0.example/c0-0" in first
    assert "https://s1.example/c0-0" not in first
    assert page.locator("#evidence-more").is_visible()
    page.click("#evidence-more")
    assert page.locator("#evidence-list > .row").count() == 240
    assert page.locator("#evidence-more").is_hidden()
    page.close()
