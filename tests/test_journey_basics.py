"""The basics an analyst meets first: a fixture file scores, re-segmenting keeps ingested claims, batch
confirmations are all or nothing, a missing database is refused, and the report reads right."""

from __future__ import annotations

import json
import re
import stat
from collections.abc import Callable
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from builders import add_reviewer

Cli = Callable[..., Result]

S1 = "https://s1.example.org/ax220"


def one_claim_audit(claim_text: str) -> dict[str, Any]:
    """One answer "The AX220 has a 20 L tank [1]." with one claim (given by the engine) and one supported edge."""
    text = "The AX220 has a 20 L tank [1]."
    return {
        "format": "citeaudit.audit/v1",
        "protocol": {
            "id": "p",
            "version": "1",
            "official_domains": ["axtorp-machines.com"],
            "questions": [
                {
                    "id": "q1",
                    "text": "Describe the AX220.",
                    "required_facts": [{"id": "f1", "text": "AX220 has a 20 L tank", "severity": "high"}],
                }
            ],
        },
        "runs": [{"id": "r1", "kind": "platform", "platform": "perplexity"}],
        "answers": [
            {
                "id": "a1",
                "question_id": "q1",
                "run_id": "r1",
                "text": text,
                "citations": [{"url": S1, "marker": "[1]", "start": 26, "end": 29}],
            }
        ],
        "claims": [{"id": "c1", "answer_id": "a1", "text": claim_text, "start": 0, "end": len(claim_text)}],
        "edges": [
            {
                "claim_id": "c1",
                "url": S1,
                "marker": "[1]",
                "start": 26,
                "end": 29,
                "label": "supported",
                "reviewer": "r",
            },
        ],
    }


def test_score_of_a_fixture_only_file_scores_the_fixture_and_says_so(cli: Cli, four_claim_path: Path) -> None:
    result = cli("score", four_claim_path, "--format", "json")
    assert result.exit_code == 0, result.stderr
    body = json.loads(result.stdout)
    # The four-claim fixture: edges (c1,s1) supported, (c2,s2) conflicting, (c3,s3) unknown → 1/3;
    # facts f1..f4, only f1 has a claim with a supported edge → 1/4.
    assert (body["precision"]["numerator"], body["precision"]["denominator"]) == (1, 3)
    assert (body["coverage"]["numerator"], body["coverage"]["denominator"]) == (1, 4)
    assert body["run_kinds"] == ["fixture"]
    assert "only fixture runs" in result.stderr
    table = cli("score", four_claim_path)
    assert "(fixture runs)" in " ".join(table.stdout.split())  # the title wraps with the table's width
    assert "excluded" not in table.stdout


def test_platform_runs_stay_the_default_when_there_are_any(cli: Cli, exporter_path: Path) -> None:
    result = cli("score", exporter_path, "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert "run_kinds" not in json.loads(result.stdout)
    assert "only fixture runs" not in result.stderr


@pytest.mark.parametrize("claim_text", ["The AX220 has a 20 L tank.", "The AX220 has a 20 L tank"])
def test_segment_keeps_an_ingested_claim_equal_up_to_trailing_punctuation(
    cli: Cli, write_json: Callable[..., Path], tmp_path: Path, claim_text: str
) -> None:
    db = tmp_path / "a.db"
    assert cli("ingest", write_json(one_claim_audit(claim_text)), "--db", db).exit_code == 0
    result = cli("segment", "--db", db)
    assert result.exit_code == 0, result.stderr
    # one sentence, one claim: it is the engine's claim (with or without its full stop), so it stays
    assert "claims: 1 kept" in result.stdout
    assert "0 new with 0 pending edges" in result.stdout
    score = json.loads(cli("score", db, "--format", "json").stdout)
    # the one edge keeps its "supported" label: precision 1/1, nothing pending
    assert (score["precision"]["numerator"], score["precision"]["denominator"]) == (1, 1)
    assert score["edges"]["pending"] == 0


def test_facts_confirm_is_all_or_nothing(cli: Cli, write_json: Callable[..., Path], tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    assert cli("ingest", write_json(one_claim_audit("The AX220 has a 20 L tank")), "--db", db).exit_code == 0
    assert cli("facts", "map", "--db", db, "--dense", "off").exit_code == 0
    add_reviewer(db, "ann")
    proposals = json.loads(cli("facts", "list", "--db", db, "--format", "json").stdout)
    assert [(p["id"], p["claim"], p["fact"]) for p in proposals] == [(1, "c1", "f1")]
    result = cli("facts", "confirm", "1", "999", "--reviewer", "ann", "--db", db)
    assert result.exit_code == 2
    assert "999" in result.stderr
    assert "confirmed:" not in result.stdout
    # proposal 1 was valid but is still only proposed: nothing was written
    after = json.loads(cli("facts", "list", "--db", db, "--state", "all", "--format", "json").stdout)
    assert [p["state"] for p in after] == ["proposed"]
    assert cli("facts", "confirm", "1", "--reviewer", "ann", "--db", db).exit_code == 0


def test_review_serve_refuses_a_database_that_does_not_exist(cli: Cli, tmp_path: Path) -> None:
    missing = tmp_path / "typo.db"
    result = cli("review", "serve", "--db", missing)
    assert result.exit_code == 2
    assert "no such database" in result.stderr
    assert not missing.exists()


def test_report_reads_right(cli: Cli, four_claim_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    result = cli("report", four_claim_path, "--out", out, "--kind", "fixture", "--by", "", "--resamples", "200")
    assert result.exit_code == 0, result.stderr
    assert stat.S_IMODE(out.stat().st_mode) == 0o644
    html = out.read_text(encoding="utf-8")
    # one question in the fixture: every interval has zero width, and says so with "1 question"
    assert "1 questions" not in html
    assert "not informative (1 question, all at" in html
    assert "`" not in html
    # the conflicting and the unknown claims list their sources as links
    assert f'<a href="{S1.replace("s1", "s2")}"' in html
    assert f'<a href="{S1.replace("s1", "s3")}"' in html
    # label columns: edges 3 = supported 1 + partial 0 + conflicting 1 + irrelevant 0 + unknown 1 + pending 0
    table = html.split("<h2>Edges by final label</h2>")[1].split("</table>")[0]
    header = re.findall(r"<th[^>]*>([^<]*)</th>", table)
    assert header == ["edges", "locations", "supported", "partial", "conflicting", "irrelevant", "unknown", "pending"]
    # each count links to its edges: the number is the link's text
    cells = [int(c) for c in re.findall(r'<td class="num">(?:<a [^>]*>)?(\d+)(?:</a>)?</td>', table)]
    assert cells == [3, 4, 1, 0, 1, 0, 1, 0]
    assert cells[0] == sum(cells[2:])
    assert "its review policy is not recorded there" in html


def test_report_states_the_review_policy_of_a_database(cli: Cli, exporter_path: Path, tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    assert cli("ingest", exporter_path, "--db", db).exit_code == 0
    out = tmp_path / "report.html"
    assert cli("report", db, "--out", out, "--resamples", "200").exit_code == 0
    html = out.read_text(encoding="utf-8")
    assert "Review policy: single review" in html
    assert "Reviewer agreement" in html


def test_the_default_install_has_the_tour_and_the_heavy_parts_stay_extras() -> None:
    import tomllib

    from conftest import REPO

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = {re.split(r"[<>=\[ ]", spec, maxsplit=1)[0].lower() for spec in project["dependencies"]}
    # review (web UI and its password hashing), resolve (HTML and PDF pages): in the default install
    assert {"fastapi", "uvicorn", "argon2-cffi", "python-multipart", "trafilatura", "pypdf", "httpx"} <= names
    # models, engine SQL, Parquet and plotting: never in it
    assert not names & {"torch", "transformers", "sentence-transformers", "duckdb", "pyspark", "pyarrow", "matplotlib"}


def test_report_needs_no_plotting_library(
    cli: Cli, exporter_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # any import of it now fails
    out = tmp_path / "report.html"
    result = cli("report", exporter_path, "--out", out, "--resamples", "200")
    assert result.exit_code == 0, result.stderr
    assert "<svg" in out.read_text(encoding="utf-8")


def test_demo_ends_with_next_commands_that_work_as_printed(cli: Cli, tmp_path: Path) -> None:
    import shlex

    db = tmp_path / "demo.db"
    result = cli("demo", "--db", db)
    assert result.exit_code == 0, result.stderr
    tail = result.stdout.split("Next, each command as it can be typed here:")[1].strip().splitlines()
    commands = [shlex.split(line.split("#")[0]) for line in tail]
    assert [c[1:3] for c in commands] == [
        ["score", str(db)],
        ["reviewer", "add"],
        ["review", "serve"],
        ["report", str(db)],
    ]
    env = {"CITEAUDIT_REVIEWER_PASSWORD": "correct horse"}
    for command in (commands[0], commands[1], commands[3]):
        # the printed lines name the program first; the rest is what the command line gets
        args = [a.replace("demo-report.html", str(tmp_path / "demo-report.html")) for a in command[1:]]
        done = cli(*args, env=env)
        assert done.exit_code == 0, (command, done.stderr)
    assert (tmp_path / "demo-report.html").exists()


def test_report_states_the_agreement_of_two_reviewers(
    cli: Cli, four_claim_path: Path, write_json: Callable[..., Path], tmp_path: Path
) -> None:
    document = json.loads(four_claim_path.read_text(encoding="utf-8"))
    # ann labels the three edges supported, conflicting, unknown; bob supported, conflicting, supported
    bob = {"fx-c1": "supported", "fx-c2": "conflicting", "fx-c3": "supported"}
    for edge in document["edges"]:
        ann = edge.pop("label")
        for field in ("reviewer", "passage", "reasoning"):
            edge.pop(field, None)
        edge["judgements"] = [
            {"label": ann, "reviewer": "ann", "created_at": "2026-11-01T10:00:00+00:00"},
            {"label": bob[edge["claim_id"]], "reviewer": "bob", "created_at": "2026-11-01T11:00:00+00:00"},
        ]
    db = tmp_path / "a.db"
    assert cli("ingest", write_json(document), "--db", db).exit_code == 0
    out = tmp_path / "r.html"
    assert cli("report", db, "--kind", "fixture", "--out", out, "--resamples", "200").exit_code == 0
    note = unescape(out.read_text(encoding="utf-8").split('<p id="review-policy">')[1].split("</p>")[0])
    assert "2 human reviewer(s)" in note
    # 3 edges both labelled, 2 agree: observed 2/3. Krippendorff's alpha (nominal): the 6 values are
    # supported 3, conflicting 2, unknown 1, so expected agreement (3·2 + 2·1 + 1·0) / (6·5) = 8/30 and
    # alpha = (2/3 − 8/30) / (1 − 8/30) = 12/22 = 0.545
    assert "Krippendorff's alpha 0.545 on 3 edge(s) both labelled, observed agreement 0.667" in note
