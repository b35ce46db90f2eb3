"""``answers list`` and ``answers show`` on a real database: ids, platform, run, question, claims, edges, pending."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from typer.testing import Result

Cli = Callable[..., Result]


def _listed(cli: Cli, db: Path, *filters: str) -> list[dict[str, object]]:
    result = cli("answers", "list", "--db", db, "--format", "json", *filters)
    assert result.exit_code == 0, result.stderr
    return list(json.loads(result.stdout))


def test_answers_list_counts_claims_edges_and_pending(cli: Cli, four_claim_path: Path, tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    assert cli("ingest", four_claim_path, "--db", db).exit_code == 0
    (row,) = _listed(cli, db)
    # the four-claim fixture: 4 claims; edges (c1,s1), (c2,s2), (c3,s3) = 3, all labelled → 0 pending
    assert row == {
        "id": "fx-a1",
        "platform": "fixture",
        "run": "fixture-four-claim",
        "question": "fx-q1",
        "collection": None,
        "response_id": None,
        "claims": 4,
        "edges": 3,
        "pending": 0,
        "state": "reviewed",
    }
    assert _listed(cli, db, "--state", "pending") == []
    assert _listed(cli, db, "--platform", "chatgpt") == []
    assert [r["id"] for r in _listed(cli, db, "--question", "fx-q1", "--run", "fixture-four-claim")] == ["fx-a1"]
    table = cli("answers", "list", "--db", db)
    assert "fx-a1" in table.stdout
    assert "1 answer(s), 3 edge(s), 0 pending" in table.stdout


def test_answers_filters_combine(cli: Cli, exporter_path: Path, tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    assert cli("ingest", exporter_path, "--db", db).exit_code == 0
    everything = _listed(cli, db)
    # each filter keeps exactly the rows whose field matches, and --state splits the rows in three
    chatgpt = _listed(cli, db, "--platform", "chatgpt")
    assert chatgpt
    assert chatgpt == [r for r in everything if r["platform"] == "chatgpt"]
    states = {s: _listed(cli, db, "--state", s) for s in ("pending", "reviewed", "no-edges")}
    assert sum(len(rows) for rows in states.values()) == len(everything)
    assert all(r["pending"] > 0 for r in states["pending"])
    assert all(r["pending"] == 0 and r["edges"] > 0 for r in states["reviewed"])
    assert all(r["edges"] == 0 for r in states["no-edges"])
    both = _listed(cli, db, "--platform", "chatgpt", "--platform", "gemini", "--state", "pending")
    assert both == [r for r in states["pending"] if r["platform"] in ("chatgpt", "gemini")]
    bad = cli("answers", "list", "--db", db, "--state", "done")
    assert bad.exit_code == 2
    assert "'done' is not one of pending, reviewed, no-edges" in bad.stderr


def test_answers_show_gives_the_claims_and_their_edges(cli: Cli, four_claim_path: Path, tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    assert cli("ingest", four_claim_path, "--db", db).exit_code == 0
    result = cli("answers", "show", "fx-a1", "--db", db, "--format", "json")
    assert result.exit_code == 0, result.stderr
    body = json.loads(result.stdout)
    assert body["text"].startswith("The AX220 has a 20 L tank [1][1].")
    assert [(c["id"], c["fact"], [e["label"] for e in c["edges"]]) for c in body["claims"]] == [
        ("fx-c1", "fx-f1", ["supported"]),
        ("fx-c2", "fx-f2", ["conflicting"]),
        ("fx-c3", "fx-f3", ["unknown"]),
        ("fx-c4", "fx-f4", []),
    ]
    table = cli("answers", "show", "fx-a1", "--db", db)
    assert "4 claim(s), 3 edge(s), 0 pending (reviewed)" in table.stdout
    missing = cli("answers", "show", "nope", "--db", db)
    assert missing.exit_code == 2
    assert "no answer 'nope'" in missing.stderr
    nodb = cli("answers", "list", "--db", tmp_path / "typo.db")
    assert nodb.exit_code == 2
    assert not (tmp_path / "typo.db").exists()
