"""``citeaudit suggest`` end to end: sources resolved from a real site on 127.0.0.1 (tests/site.py), passages ranked
from the stored snapshots, suggestions stored as model judgements that never move a final label."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tests.builders import answer, claim, document
from tests.judge_servers import chat_server
from tests.test_judges import needs_models
from typer.testing import Result

from citeaudit.interchange import parse_audit_bytes
from citeaudit.judges import ChecksJudge, OpenAIJudge
from citeaudit.sources import ResolveSettings, resolve_sources
from citeaudit.store import Store
from citeaudit.store.resolution import merge_sources
from citeaudit.store.suggestions import latest_passages
from citeaudit.suggest import suggest_edges

HOSTS = (("site.test", "127.0.0.1"),)

# Claims about tests/site.py's /manual.txt (four paragraphs, four passages): "The AX220 has a 20 L tank" and
# "Its pump delivers 12 bar of pressure".
PUMP = "The AX220 pump delivers 20 bar of pressure."  # 20 bar against the page's 12 bar: conflicting
TANK = "The AX220 has a 30 L tank."  # 30 L against the page's 20 L: conflicting
OUTDOOR = "The AX220 is rated for outdoor use."  # no quantity to compare: the checks decide nothing (unknown)
MISSING = "The AX220 weighs 9 kg."  # cites /missing (404): no snapshot, counted


def rows(db_path: Path, sql: str, *params: object) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db_path) as db:
        return db.execute(sql, params).fetchall()


def resolved_db(
    db_path: Path, site: str, labels: dict[str, str] | None = None, more: dict[str, str] | None = None
) -> Path:
    """Four claims of one answer: c1–c3 cite /manual.txt, c4 cites /missing; ``more`` adds claims (id → text) that
    cite /manual.txt; ``labels`` gives some edges a human label (reviewer li)."""
    labels = labels or {}
    texts = {"c1": PUMP, "c2": TANK, "c3": OUTDOOR, "c4": MISSING, **(more or {})}
    urls = {cid: "/missing" if cid == "c4" else "/manual.txt" for cid in texts}
    edges = [
        {
            "claim_id": cid,
            "url": f"{site}{urls[cid]}",
            **({"label": labels[cid], "reviewer": "li"} if cid in labels else {}),
        }
        for cid in texts
    ]
    doc = document([answer("a1")], [claim(cid, "a1", text=text) for cid, text in texts.items()], edges)
    payload = json.dumps(doc).encode()
    with Store(db_path) as store:
        store.import_audit(parse_audit_bytes(payload, "test.json"), payload, "test.json")
    resolve_sources(db_path, ResolveSettings(host_map=HOSTS, timeout=2.0, backoff=0.05))
    return db_path


def edge_pk(db_path: Path, claim_id: str) -> int:
    ((pk,),) = rows(db_path, "SELECT e.pk FROM edges e JOIN claims c ON c.pk = e.claim_pk WHERE c.id = ?", claim_id)
    return int(pk)


def test_checks_judge_suggestions_are_stored_with_passages_and_provenance(db_path: Path, site: str) -> None:
    resolved_db(db_path, site)
    before = rows(db_path, "SELECT pk, review_state, final_code FROM edges ORDER BY pk")
    # Single passages ranked by BM25 (not the default), so each stored passage is exactly one paragraph.
    report = suggest_edges(db_path, ChecksJudge(), k=2, method="bm25")
    # 4 edges without a final label: c1–c3 have the /manual.txt snapshot, c4's source failed (404, no snapshot).
    assert (report.edges, report.suggested, report.no_snapshot, report.already_suggested) == (4, 3, 1, 0)
    # c1 (20 bar vs 12 bar) and c2 (30 L vs 20 L) conflict; c3 has nothing to compare: unknown.
    assert dict(report.labels) == {"conflicting": 2, "unknown": 1}
    labels = dict(
        rows(
            db_path,
            "SELECT c.id, j.label FROM judgements j JOIN edges e ON e.pk = j.edge_pk "
            "JOIN claims c ON c.pk = e.claim_pk",
        )
    )
    assert labels == {"c1": "conflicting", "c2": "conflicting", "c3": "unknown"}
    judgements = rows(
        db_path,
        "SELECT origin, stage, reviewer, judge, judge_model, judge_version, prompt_sha256 FROM judgements",
    )
    version = ChecksJudge.version
    assert judgements == [("model", "review", "checks", "checks", None, version, None)] * 3
    # Model judgements never move an edge's review state or final code.
    assert rows(db_path, "SELECT pk, review_state, final_code FROM edges ORDER BY pk") == before

    # The stored passages are the snapshot's text at the stored offsets, ranked 1..k with falling scores.
    ((text,),) = rows(db_path, "SELECT d.text FROM documents d")
    stored = rows(
        db_path,
        'SELECT sp.rank, sp.ordinal, sp.start, sp."end", sp.score, s.method, p.start, p."end" '
        "FROM suggested_passages sp JOIN suggestions s ON s.pk = sp.suggestion_pk "
        "JOIN passages p ON p.document_sha256 = s.document_sha256 AND p.ordinal = sp.ordinal "
        "WHERE s.edge_pk = ? ORDER BY sp.rank",
        edge_pk(db_path, "c1"),
    )
    assert [r[0] for r in stored] == [1, 2]  # --top 2
    # Passages 0–3 are the manual's paragraphs (intro, tank, pump, outdoor). Of the claim's terms, only the pump
    # paragraph has pump/delivers/bar/pressure; the tank paragraph shares "ax220" and "20": pump first, tank second.
    assert [r[1] for r in stored] == [2, 1]
    assert all(r[5] == "bm25" for r in stored)
    assert all((r[2], r[3]) == (r[6], r[7]) for r in stored)  # offsets are the passage's own
    assert stored[0][4] >= stored[1][4]
    # The best passage for the pump claim is the page's pump sentence, read back from the snapshot text.
    best = text[stored[0][2] : stored[0][3]]
    assert best.startswith("Pump. Its pump delivers 12 bar of pressure")
    # The conflicting judgement quotes that passage's "12 bar".
    ((quote,),) = rows(db_path, "SELECT passage FROM judgements WHERE edge_pk = ?", edge_pk(db_path, "c1"))
    assert quote is not None
    assert quote in best


def test_rerun_is_a_no_op_and_refresh_adds_a_new_suggestion(db_path: Path, site: str) -> None:
    resolved_db(db_path, site)
    suggest_edges(db_path, ChecksJudge())
    counts = rows(
        db_path,
        "SELECT (SELECT count(*) FROM judgements), (SELECT count(*) FROM suggestions), "
        "(SELECT count(*) FROM suggested_passages), (SELECT count(*) FROM audit_log)",
    )
    again = suggest_edges(db_path, ChecksJudge())
    # 3 edges suggested before are skipped, c4 still has no snapshot, nothing is written.
    assert (again.suggested, again.already_suggested, again.no_snapshot) == (0, 3, 1)
    assert (
        rows(
            db_path,
            "SELECT (SELECT count(*) FROM judgements), (SELECT count(*) FROM suggestions), "
            "(SELECT count(*) FROM suggested_passages), (SELECT count(*) FROM audit_log)",
        )
        == counts
    )
    refreshed = suggest_edges(db_path, ChecksJudge(), refresh=True)
    assert refreshed.suggested == 3
    assert rows(db_path, "SELECT count(*) FROM judgements") == [(6,)]  # 3 + 3: judgements are never replaced


def test_limit_leaves_edges_for_the_next_run(db_path: Path, site: str) -> None:
    resolved_db(db_path, site)
    first = suggest_edges(db_path, ChecksJudge(), limit=2)
    # 4 edges: 1 without snapshot, 2 suggested, 1 left by the limit (4 = 2 + 0 + 1 + 1).
    assert (first.suggested, first.over_limit, first.no_snapshot) == (2, 1, 1)
    second = suggest_edges(db_path, ChecksJudge(), limit=2)
    assert (second.suggested, second.already_suggested, second.over_limit) == (1, 2, 0)


def test_labelled_edges_are_not_suggested_for(db_path: Path, site: str) -> None:
    resolved_db(db_path, site, labels={"c1": "supported"})
    report = suggest_edges(db_path, ChecksJudge())
    # c1 has a final label (li's): 3 edges in scope, c2 and c3 suggested, c4 without snapshot.
    assert (report.edges, report.suggested, report.no_snapshot) == (3, 2, 1)


def test_cli_suggest_leaves_scores_unchanged(db_path: Path, site: str, cli: Callable[..., Result]) -> None:
    resolved_db(db_path, site, labels={"c3": "supported"})
    before = cli("score", db_path, "--format", "json")
    assert before.exit_code == 0, before.stderr
    result = cli("suggest", "--db", db_path, "--judge", "checks", "--top", "2", "--format", "json")
    assert result.exit_code == 0, result.stderr
    body = json.loads(result.stdout)
    # c3 is labelled: c1 and c2 conflict, c4 has no snapshot.
    assert (body["edges"], body["suggested"], body["no_snapshot"]) == (3, 2, 1)
    assert body["labels"] == {"supported": 0, "partial": 0, "conflicting": 2, "irrelevant": 0, "unknown": 0}
    assert body["judge"]["name"] == "checks"
    after = cli("score", db_path, "--format", "json")
    assert after.stdout == before.stdout
    table = cli("suggest", "--db", db_path)
    assert table.exit_code == 0, table.stderr
    assert "2 already suggested" in table.stdout
    assert "1 without a snapshot" in table.stdout


def test_cli_suggest_without_database(tmp_path: Path, cli: Callable[..., Result]) -> None:
    result = cli("suggest", "--db", tmp_path / "none.db")
    assert result.exit_code == 2
    assert "no such database" in result.stderr
    assert not (tmp_path / "none.db").exists()


def test_openai_judge_against_a_local_server(db_path: Path, site: str, cli: Callable[..., Result]) -> None:
    resolved_db(db_path, site)
    with chat_server() as server:
        server.reply_label("conflicting", quote="12 bar", reasoning="the page says 12 bar")
        server.reply_label("conflicting", quote="20 L", reasoning="the page says 20 L")
        server.reply_label("supported", quote="rated for outdoor use", reasoning="stated")
        judge = OpenAIJudge(base_url=server.base_url, model="test-model", api_key="sk-test", max_retries=0)
        report = suggest_edges(db_path, judge, k=1)
        # the claim and the top passage went over the wire, once per edge with a snapshot
        assert len(server.requests) == 3
        assert PUMP in server.requests[0]["messages"][-1]["content"]
        assert "12 bar" in server.requests[0]["messages"][-1]["content"]
    assert dict(report.labels) == {"conflicting": 2, "supported": 1}
    stored = rows(
        db_path,
        "SELECT reviewer, judge, judge_model, judge_version, prompt_sha256, label FROM judgements ORDER BY pk",
    )
    assert stored[2] == ("openai:test-model", "openai", "test-model", judge.version, judge.prompt_sha256, "supported")
    # A model "supported" is still no final label: the edge stays pending.
    assert rows(db_path, "SELECT review_state FROM edges WHERE pk = ?", edge_pk(db_path, "c3")) == [("pending",)]


def test_openai_failure_stops_with_exit_2_and_nothing_half_written(
    db_path: Path, site: str, cli: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    resolved_db(db_path, site)
    with chat_server() as server:
        server.reply_label("conflicting", quote="12 bar")
        server.replies.append((500, {"error": {"message": "overloaded", "type": "server_error"}}))
        monkeypatch.setenv("CITEAUDIT_OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("CITEAUDIT_OPENAI_API_KEY", "sk-test")
        result = cli("suggest", "--db", db_path, "--judge", "openai", "--model", "test-model")
    assert result.exit_code == 2
    assert "rerun to continue" in result.stderr
    # The first edge's suggestion is kept whole; the failed edge has nothing: no judgement, suggestion or passage.
    assert rows(db_path, "SELECT count(*) FROM judgements") == [(1,)]
    assert rows(db_path, "SELECT count(*) FROM suggestions") == [(1,)]
    # Default --top 3 of the default window ranking: the pump claim gets 2 units, paragraphs 0–2 and paragraph 3;
    # every other window overlaps the first (see test_suggest_defaults_to_window_units).
    assert rows(
        db_path, "SELECT count(*) FROM suggested_passages sp JOIN suggestions s ON s.pk = sp.suggestion_pk"
    ) == [(2,)]


def test_run_filter_and_unknown_run(db_path: Path, site: str, cli: Callable[..., Result]) -> None:
    resolved_db(db_path, site)
    result = cli("suggest", "--db", db_path, "--run", "r9")
    assert result.exit_code == 2
    assert "no run 'r9'" in result.stderr
    assert rows(db_path, "SELECT count(*) FROM judgements") == [(0,)]
    # every answer of the fixture is in run r1: the same 3 suggestions and 1 edge without snapshot as without --run
    result = cli("suggest", "--db", db_path, "--run", "r1", "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert (json.loads(result.stdout)["suggested"], json.loads(result.stdout)["no_snapshot"]) == (3, 1)


@needs_models
def test_hybrid_ranking_stores_both_scores_and_their_fusion(db_path: Path, site: str) -> None:
    resolved_db(db_path, site)
    report = suggest_edges(db_path, ChecksJudge(), k=4, method="hybrid")
    assert report.suggested == 3
    stored = rows(
        db_path,
        "SELECT sp.rank, sp.score, sp.bm25, sp.dense, s.method FROM suggested_passages sp "
        "JOIN suggestions s ON s.pk = sp.suggestion_pk WHERE s.edge_pk = ? ORDER BY sp.rank",
        edge_pk(db_path, "c1"),
    )
    # k = 4 keeps all four passages, so each one's BM25 and dense ranks can be read from the stored scores;
    # all four match BM25 and are among its best 20, so each hybrid score is the reciprocal-rank fusion
    # 1/(60 + BM25 rank) + 1/(60 + dense rank).
    assert all(r[2] > 0 and r[3] is not None for r in stored)
    assert [r[0] for r in stored] == [1, 2, 3, 4]
    assert {r[4] for r in stored} == {"hybrid"}
    bm25_order = sorted(range(4), key=lambda i: (-stored[i][2], i))
    dense_order = sorted(range(4), key=lambda i: (-stored[i][3], i))
    for i, row in enumerate(stored):
        fused = 1 / (60 + bm25_order.index(i) + 1) + 1 / (60 + dense_order.index(i) + 1)
        assert row[1] == pytest.approx(fused)
    # the pump paragraph is first by both scores, so it leads the fusion: 2/61
    assert stored[0][1] == pytest.approx(2 / 61)


def test_a_suggestion_follows_its_edge_into_a_merge(db_path: Path, site: str) -> None:
    # c1 cites the manual and /missing: two edges. After suggest, the manual's source is merged into the other
    # (as resolve does when two links turn out to be one page): the edges of c1 merge, and the suggestion, its
    # judgement and its passages move to the surviving edge.
    doc = document(
        [answer("a1")],
        [claim("c1", "a1", text=PUMP)],
        [{"claim_id": "c1", "url": f"{site}/manual.txt"}, {"claim_id": "c1", "url": f"{site}/missing"}],
    )
    payload = json.dumps(doc).encode()
    with Store(db_path) as store:
        store.import_audit(parse_audit_bytes(payload, "test.json"), payload, "test.json")
    resolve_sources(db_path, ResolveSettings(host_map=HOSTS, timeout=2.0, backoff=0.05))
    assert suggest_edges(db_path, ChecksJudge(), k=2).suggested == 1
    ((manual,),) = rows(db_path, "SELECT pk FROM sources WHERE url LIKE '%manual.txt'")
    ((missing,),) = rows(db_path, "SELECT pk FROM sources WHERE url LIKE '%missing'")
    with Store(db_path) as store, store.transaction() as tx:
        merge_sources(tx, manual, missing)
        (survivor,) = tx.execute("SELECT pk FROM edges").fetchone()
        ranked = latest_passages(tx, survivor)
    # the default window units for the pump claim: paragraphs 0–2, then paragraph 3 (as in
    # test_suggest_defaults_to_window_units)
    assert [p.text.split(".")[0] for p in ranked] == ["AX220 user manual", "Outdoor use"]
    assert rows(db_path, "SELECT edge_pk FROM suggestions") == [(survivor,)]
    assert rows(db_path, "SELECT edge_pk, origin FROM judgements") == [(survivor, "model")]
    assert rows(db_path, "SELECT review_state FROM edges") == [("pending",)]


def test_window_units_are_stored_with_their_span_and_method(db_path: Path, site: str) -> None:
    resolved_db(db_path, site)
    report = suggest_edges(db_path, ChecksJudge(), k=3, method="window")
    assert report.suggested == 3
    stored = rows(
        db_path,
        'SELECT sp.ordinal, sp.start, sp."end", s.method, s.document_sha256 FROM suggested_passages sp '
        "JOIN suggestions s ON s.pk = sp.suggestion_pk ORDER BY s.pk, sp.rank",
    )
    assert {r[3] for r in stored} == {"window"}
    for ordinal, start, end, _, sha in stored:
        # a unit starts where its first passage starts and ends at the end of a passage at or after it
        ((first_start,),) = rows(
            db_path, "SELECT start FROM passages WHERE document_sha256 = ? AND ordinal = ?", sha, ordinal
        )
        assert start == first_start
        assert rows(
            db_path, 'SELECT count(*) FROM passages WHERE document_sha256 = ? AND "end" = ? AND ordinal >= ?',
            sha, end, ordinal,
        ) == [(1,)]  # fmt: skip


def test_suggest_defaults_to_window_units(db_path: Path, site: str, cli: Callable[..., Result]) -> None:
    resolved_db(db_path, site)
    result = cli("suggest", "--db", db_path, "--top", "2", "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["method"] == "window"
    assert rows(db_path, "SELECT DISTINCT method FROM suggestions") == [("window",)]
    stored = rows(
        db_path,
        'SELECT sp.rank, sp.ordinal, sp.start, sp."end" FROM suggested_passages sp '
        "JOIN suggestions s ON s.pk = sp.suggestion_pk WHERE s.edge_pk = ? ORDER BY sp.rank",
        edge_pk(db_path, "c1"),
    )
    # The manual's paragraphs P0–P3 span 0–107, 109–217, 219–323, 325–433 (two line breaks between them); their
    # words: P0 18 (ax220 ×2, pressure), P1 22 (ax220, 20), P2 19 (pump ×2, delivers, bar, pressure), P3 20 (ax220).
    # The pump claim's terms: ax220 pump delivers 20 bar pressure. Windows W0 = P0–P2 (59 words), W1 = P1–P3 (61),
    # W2 = P2–P3 (39), W3 = P3 (20), mean 44.75; BM25 (k1 1.5, b 0.75, idf ln(1 + (4 - n + 0.5)/(n + 0.5))):
    # W0 0.163 ax220 + 0.462 pump + 0.312 delivers + 0.312 bar + 0.462 pressure + 0.606 "20" = 2.317,
    # W1 2.107, W2 1.779, W3 0.140: W0 first. Trimmed at 0.2 × the best passage in it (P2's own BM25, 4.90):
    # P0 scores 1.25 > 0.98 and stays, so unit 1 is P0–P2 = 0–323. W1 trims P3 (0.35) to P1–P2 and W2 to P2,
    # both overlapping unit 1; W3 = P3 does not: unit 2 is 325–433.
    assert stored == [(1, 0, 0, 323), (2, 3, 325, 433)]
