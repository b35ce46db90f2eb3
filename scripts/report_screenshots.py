"""Screenshots of the HTML report for the documentation: the demo database's report, and a synthetic audit of two
collections answered by four engines (with engine labels, a brand and a competitor in its protocol).

Each report is written by `citeaudit report`, opened in headless Chromium (/usr/bin/chromium, through Playwright)
and photographed: the top of the page (headline and problems), the fact matrix and the trend, then one drill-down
opened (the precision card's edges). The PNGs go to docs/images/.

Run: python scripts/report_screenshots.py [--out docs/images]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
ENGINES = {"openai": "chatgpt", "perplexity": "perplexity", "anthropic": "claude", "gemini": "gemini"}
COLLECTIONS = (("2026-10", "2026-10-06"), ("2026-11", "2026-11-03"))
LABELS = ("supported", "supported", "supported", "partial", "conflicting", "irrelevant", "unknown")


def _cli(*args: str, cwd: Path | None = None) -> None:
    subprocess.run(
        [sys.executable, "-c", "import sys; from citeaudit.cli import main; sys.exit(main())", *args],
        check=True,
        capture_output=True,
        cwd=cwd,
    )


def _protocol() -> dict[str, Any]:
    """The bundled exporter protocol, with a brand, a competitor and the four engines named."""
    import yaml

    body = yaml.safe_load((REPO / "src/citeaudit/examples/exporter.protocol.yaml").read_text(encoding="utf-8"))
    body["brand"] = {"name": "Axtorp", "aliases": ["Axtorp Machines"]}
    body["competitors"] = [{"name": "Kompressa", "domains": ["kompressa.example"]}]
    body["engines"] = {
        "openai": {"platform": "chatgpt", "label": "ChatGPT search"},
        "perplexity": {"label": "Perplexity Sonar"},
        "anthropic": {"platform": "claude"},
        "gemini": {"platform": "gemini"},
    }
    return dict(body)


def _collection_document(protocol: dict[str, Any], collection: str, seed: int) -> dict[str, Any]:
    """One collection's answers: each engine answers each question once, with a claim per required fact it
    states (most of them), each citing one or two pages judged by a reviewer."""
    rng = random.Random(seed)
    pages = [
        ("https://www.axtorp-machines.com/products/{q}", "Axtorp – product page"),
        ("https://www.axtorp-machines.com/legacy/{q}", "Axtorp – old product page"),
        ("https://www.industrial-supply.co.uk/brands/axtorp/{q}", "Industrial Supply UK"),
        ("https://kompressa.example/compare/{q}", "Kompressa comparison"),
        ("https://www.compressor-reviews.net/{q}", "Compressor reviews"),
    ]
    answers, claims, edges, runs = [], [], [], []
    for platform in ENGINES.values():
        run = f"{collection}-{platform}"
        runs.append({"id": run, "platform": platform, "collected_at": f"{collection}-05T09:00:00Z"})
        for question in protocol["questions"]:
            answer_id = f"{run}-{question['id']}"
            cited = rng.sample(pages, 2)
            answers.append(
                {
                    "id": answer_id,
                    "question_id": question["id"],
                    "run_id": run,
                    "platform": platform,
                    "text": "An answer. " * 30,
                    "citations": [{"url": url.format(q=question["id"]), "title": title} for url, title in cited],
                }
            )
            for n, fact in enumerate(question["required_facts"]):
                if rng.random() < 0.2:
                    continue  # the fact is not stated
                claim_id = f"{answer_id}-c{n}"
                claims.append(
                    {"id": claim_id, "answer_id": answer_id, "text": fact["text"], "required_fact_id": fact["id"]}
                )
                for url, _ in cited[: rng.choice((1, 2))]:
                    label = rng.choice(LABELS)
                    edges.append(
                        {
                            "claim_id": claim_id,
                            "url": url.format(q=question["id"]),
                            "label": label,
                            "reviewer": "marta",
                            "passage": fact["text"] if label == "supported" else None,
                            "reasoning": f"judged {label} against the page",
                        }
                    )
    extra = {"sources": [{"key": "axtorp-machines.com/legacy/q04", "url": "https://www.axtorp-machines.com/legacy/q04",
                          "status": "failed", "reason": "http 404"}]}  # fmt: skip
    document = {"format": "citeaudit.audit/v1", "protocol": protocol, "runs": runs, "answers": answers}
    return {**document, "claims": claims, "edges": edges, **extra}


def four_engine_database(folder: Path) -> Path:
    """A database of two collections, each of 4 engines × 12 questions, linked to their collections."""
    from citeaudit.store import Store
    from citeaudit.store.answers import date_collection
    from citeaudit.store.collections import open_collection

    db = folder / "four-engines.db"
    protocol = _protocol()
    for seed, (name, _) in enumerate(COLLECTIONS):
        path = folder / f"{name}.audit.json"
        path.write_text(json.dumps(_collection_document(protocol, name, seed)), encoding="utf-8")
        _cli("ingest", str(path), "--db", str(db))
    with Store(db) as store:
        protocol_pk = int(store.connection.execute("SELECT max(pk) FROM protocols").fetchone()[0])
        for name, day in COLLECTIONS:
            collection = open_collection(store, name, protocol_pk)
            date_collection(store, collection.pk, day)
            with store.transaction() as write:
                write.execute(
                    "INSERT INTO collection_tasks (collection_pk, question_id, engine, locale, repeat, state, outcome, "
                    "answer_id, updated_at) SELECT ?, q.id, a.platform, 'en-GB', 1, 'done', 'answered', a.id, ? "
                    "FROM answers a JOIN questions q ON q.pk = a.question_pk WHERE a.id LIKE ?",
                    (collection.pk, f"{day}T00:00:00+00:00", f"{name}-%"),
                )
    return db


def photograph(report: Path, out: Path, stem: str) -> list[Path]:
    """The report's top, fact matrix, trend (when there is one) and an opened drill-down, as PNGs."""
    from playwright.sync_api import sync_playwright

    shots = []
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"], headless=True)
        page = browser.new_page(viewport={"width": 1200, "height": 1400})
        page.goto(report.as_uri())
        # every section laid out at once, so that each photograph holds the whole section
        page.add_style_tag(content="main > section { content-visibility: visible !important; }")
        shots.append(out / f"{stem}-top.png")
        page.screenshot(path=str(shots[-1]))
        for section in ("fact-matrix", "trend-section"):
            if page.locator(f"#{section}").count():
                shots.append(out / f"{stem}-{section.removesuffix('-section')}.png")
                page.locator(f"#{section}").screenshot(path=str(shots[-1]))
        page.locator('.card[data-metric="precision"] a.ev').first.click()
        page.wait_for_selector("#evidence-list .row")
        shots.append(out / f"{stem}-drill-down.png")
        page.screenshot(path=str(shots[-1]))
        browser.close()
    return shots


def main() -> None:
    """Build both reports and write their screenshots."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "images")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="report-shots-") as temp:
        folder = Path(temp)
        demo = folder / "citeaudit-demo.db"
        _cli("demo", "--db", str(demo))
        _cli("report", demo.name, "--out", "demo.html", "--resamples", "999", cwd=folder)
        four = four_engine_database(folder)
        _cli("report", four.name, "--out", "four.html", "--resamples", "999", cwd=folder)
        for report, stem in ((folder / "demo.html", "report-demo"), (folder / "four.html", "report-four-engines")):
            for shot in photograph(report, args.out, stem):
                print(f"wrote {shot.relative_to(REPO) if shot.is_relative_to(REPO) else shot}")


if __name__ == "__main__":
    main()
