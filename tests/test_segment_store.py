"""Re-segmentation and manual edits on a real SQLite file: claim sets, the judgement rule, the fingerprint.

The answer (offsets counted by hand):

    "The AX220 has a 20 L tank and can operate outdoors.[1] It is CE certified [2]. Is it loud?"
     0                        25   30                  50 51 54 55              73 74 77 79        90

As ingested it has two claims: c1 = [0, 51) "...outdoors." (edge to s1, judged supported) and
c2 = [55, 73) "It is CE certified" (edge to s2, judged conflicting).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import Result

from builders import add_reviewer, answer, document, protocol
from citeaudit.ingest import read_files, store_prepared
from citeaudit.segment import Rules
from citeaudit.segment.resegment import merge_claims, resegment, split_claim
from citeaudit.store import Store

Cli = Callable[..., Result]
TEXT = "The AX220 has a 20 L tank and can operate outdoors.[1] It is CE certified [2]. Is it loud?"
S1 = "https://brand.com/ax220"
S2 = "https://example.org/ce"


def _audit() -> dict[str, Any]:
    assert TEXT[51:54] == "[1]"
    assert TEXT[55:73] == "It is CE certified"
    assert TEXT[74:77] == "[2]"
    ans = answer("a1", text=TEXT, citations=[S1, S2])
    claims = [
        {"id": "c1", "answer_id": "a1", "text": TEXT[0:51], "start": 0, "end": 51},
        {"id": "c2", "answer_id": "a1", "text": TEXT[55:73], "start": 55, "end": 73},
    ]
    edges = [
        {"claim_id": "c1", "url": S1, "label": "supported", "reviewer": "li", "marker": "[1]", "start": 51, "end": 54},
        {
            "claim_id": "c2",
            "url": S2,
            "label": "conflicting",
            "reviewer": "li",
            "marker": "[2]",
            "start": 74,
            "end": 77,
        },
    ]
    return document([ans], claims, edges, proto=protocol(facts=[("f1", "high")]))


@pytest.fixture
def db(tmp_path: Path, cli: Cli, write_json: Callable[[Any, str], Path]) -> Path:
    path = tmp_path / "seg.db"
    result = cli("ingest", write_json(_audit(), "a.json"), "--db", path)
    assert result.exit_code == 0, result.stderr
    add_reviewer(path, "li")
    return path


def _score(cli: Cli, db: Path) -> dict[str, Any]:
    result = cli("score", db, "--format", "json")
    assert result.exit_code == 0, result.stderr
    return dict(json.loads(result.stdout))


def _segment(cli: Cli, db: Path, *extra: str, method: str = "rules-v1") -> dict[str, Any]:
    # these tests pin rules-v1 (its claims, names and fingerprint); rules-v2 has tests of its own below
    result = cli("segment", "--db", db, "--format", "json", "--method", method, *extra)
    assert result.exit_code == 0, result.stderr
    return dict(json.loads(result.stdout))


def _current(db: Path) -> list[tuple[str, int, int]]:
    with Store(db) as store:
        state = store.claims.of_answer(store.claims.answer_pk("a1"))
    return [(c.text, c.start or 0, c.end or 0) for c in state.claims]


def test_resegmenting_keeps_unchanged_claims_and_sends_the_others_back_to_pending(cli: Cli, db: Path) -> None:
    before = _score(cli, db)
    # as ingested: 1 supported (c1-s1) of 2 edges
    assert before["precision"] == {"value": 0.5, "numerator": 1, "denominator": 2}

    report = _segment(cli, db)
    # c1 becomes two claims (coordinated predicates): both new, each with a pending edge to s1 (the marker
    # after the full stop belongs to the whole sentence); c2 is unchanged in text and span: kept with its
    # edge and judgement; "Is it loud?" is a question
    assert report == {
        "answers": 1,
        "already": 0,
        "sets": 1,
        "kept": 1,
        "new": 2,
        "retired": 1,
        "edges_kept": 1,
        "edges_pending": 2,
        "judgements_kept": 1,
        "judgements_not_transferred": 1,
        "facts_not_transferred": 0,
        "unattached": 0,
        "skipped": {"question": 1},
        "method": "rules-v1",
        # one answer segmented, into 3 claims
        "claims_per_answer": {"3": 1},
        # no model asked (these count for atomic-v1 only)
        "asked": 0,
        "cached": 0,
        "malformed": 0,
        "unanchored": [],
    }
    assert _current(db) == [
        ("The AX220 has a 20 L tank", 0, 25),
        ("The AX220 can operate outdoors", 30, 50),
        ("It is CE certified", 55, 73),
    ]
    after = _score(cli, db)
    # edges: two pending (scored unknown) + c2-s2 conflicting: 0 supported of 3, provisional with 2 pending
    assert after["precision"] == {
        "value": 0.0,
        "numerator": 0,
        "denominator": 3,
        "state": "provisional",
        "pending": 2,
        "shown": "0/3 · 2 pending",
    }
    assert after["provisional"] is True
    assert after["edges"]["pending"] == 2
    assert after["fingerprint"] != before["fingerprint"]

    # resumable: the same method again changes nothing
    again = _segment(cli, db)
    assert again["already"] == 1
    assert again["sets"] == 0
    assert _score(cli, db)["fingerprint"] == after["fingerprint"]
    # --force segments again: the same claims come out, all kept with their edges
    forced = _segment(cli, db, "--force")
    assert (forced["sets"], forced["kept"], forced["new"], forced["retired"]) == (1, 3, 0, 0)


def test_rules_v2_is_the_default_and_rules_v1_stays_reproducible(cli: Cli, db: Path) -> None:
    result = cli("segment", "--db", db)
    assert result.exit_code == 0, result.stderr
    # one answer, 3 claims: "The AX220 has a 20 L tank" / "The AX220 can operate outdoors" / "It is CE certified"
    assert "1 answers (rules-v2): 1 new claim sets" in result.stdout
    assert "claims per answer (rules-v2): mean 3.00, median 3, min 3, max 3 over 1 answers segmented" in result.stdout
    v2 = _current(db)
    # c2 "It is CE certified" [55, 73) is unchanged: it keeps its conflicting judgement
    assert ("It is CE certified", 55, 73) in v2
    v1 = _segment(cli, db)
    # rules-v1 makes the same three claims here: every one is kept, with its edges and judgements
    assert (v1["method"], v1["kept"], v1["new"], v1["judgements_kept"]) == ("rules-v1", 3, 0, 1)
    assert _current(db) == v2
    with sqlite3.connect(db) as raw:
        sets = raw.execute("SELECT method, version FROM claim_sets ORDER BY pk").fetchall()
    # rules-v2 is at version 3 (version 2: lists with a shared head, "such as" examples, "an actor best
    # known for"; version 3: the shared sentence splitter keeps "c." before a number inside a sentence)
    assert sets == [("external", None), ("rules-v2", "3"), ("rules-v1", "1")]
    mixed = cli("segment", "--db", db, "--method", "rules-v2", "--no-split-coordination")
    assert mixed.exit_code == 2
    assert "applies to rules-v1 only" in mixed.stderr


def test_compare_lists_claims_per_answer_for_each_method_and_writes_nothing(cli: Cli, db: Path) -> None:
    result = cli("segment", "--db", db, "--compare", "--format", "json")
    assert result.exit_code == 0, result.stderr
    # as ingested a1 has 2 claims; both rule sets split the first sentence in two and skip the question: 3
    assert json.loads(result.stdout) == [{"answer": "a1", "current": 2, "rules-v1": 3, "rules-v2": 3}]
    assert _current(db) == [(TEXT[0:51], 0, 51), ("It is CE certified", 55, 73)]
    table = cli("segment", "--db", db, "--compare")
    assert "claims per answer" in table.stdout
    assert "mean" in table.stdout


def test_the_judgement_history_is_kept_and_never_moves_to_other_text(cli: Cli, db: Path) -> None:
    _segment(cli, db)
    with sqlite3.connect(db) as raw:
        # the retired claim c1 still holds its supported judgement; the new claims hold none
        rows = raw.execute(
            "SELECT c.id, j.label FROM claims c JOIN edges e ON e.claim_pk = c.pk "
            "LEFT JOIN judgements j ON j.edge_pk = e.pk ORDER BY c.pk"
        ).fetchall()
        assert rows == [("c1", "supported"), ("c2", "conflicting"), ("a1-s1c1", None), ("a1-s1c2", None)]
        # set 0 (as ingested) and set 1 (rules-v1) are both recorded
        sets = raw.execute("SELECT ordinal, method, action FROM claim_sets ORDER BY pk").fetchall()
        assert sets == [(0, "external", "ingest"), (1, "rules-v1", "segment")]
        with pytest.raises(sqlite3.IntegrityError, match="immutable"):
            raw.execute("UPDATE judgements SET label = 'supported'")
        with pytest.raises(sqlite3.IntegrityError, match="keeps its text"):
            raw.execute("UPDATE claims SET text = 'other' WHERE id = 'c2'")
        with pytest.raises(sqlite3.IntegrityError, match="history"):
            raw.execute("DELETE FROM claim_sets")


def test_going_back_to_an_earlier_segmentation_restores_its_claims_and_judgements(cli: Cli, db: Path) -> None:
    _segment(cli, db)
    with sqlite3.connect(db) as raw:
        # a reviewer labels the new claim "The AX220 has a 20 L tank" against s1
        (edge_pk,) = raw.execute(
            "SELECT e.pk FROM edges e JOIN claims c ON c.pk = e.claim_pk WHERE c.id = 'a1-s1c1'"
        ).fetchone()
        raw.execute(
            "INSERT INTO judgements (edge_pk, label, reviewer, origin, stage) VALUES (?, 'supported', 'li', "
            "'human', 'review')",
            (edge_pk,),
        )
        raw.execute("UPDATE edges SET review_state = 'labelled', final_code = 0 WHERE pk = ?", (edge_pk,))
    # without coordination splitting the sentence is one claim [0, 50): new text, pending
    unsplit = _segment(cli, db, "--no-split-coordination")
    assert (unsplit["kept"], unsplit["new"], unsplit["judgements_not_transferred"]) == (1, 1, 1)
    # back to the default parameters: both split claims come back from the history with their edges
    back = _segment(cli, db)
    assert (back["kept"], back["new"], back["judgements_kept"]) == (3, 0, 2)
    score = _score(cli, db)
    # a1-s1c1-s1 supported, a1-s1c2-s1 pending, c2-s2 conflicting: 1 of 3, provisional with 1 pending
    assert score["precision"] == {
        "value": 1 / 3,
        "numerator": 1,
        "denominator": 3,
        "state": "provisional",
        "pending": 1,
        "shown": "1/3 · 1 pending",
    }


def test_manual_split_merge_and_edit_are_recorded_with_who_and_when(cli: Cli, db: Path) -> None:
    _segment(cli, db, "--no-split-coordination")
    # the segmenter's one sentence is c1 as ingested up to its full stop: c1 stays, [0, 51) with the stop
    assert _current(db)[0] == ("The AX220 has a 20 L tank and can operate outdoors.", 0, 51)
    claim_id = "c1"
    # split at 30 (where "can operate outdoors" starts): the first part [0, 30) without its trailing space is
    # "The AX220 has a 20 L tank and" [0, 29); the second is [30, 51)
    result = cli("claim", "split", claim_id, "--at", "30", "--reviewer", "li", "--db", db)
    assert result.exit_code == 0, result.stderr
    assert _current(db)[:2] == [("The AX220 has a 20 L tank and", 0, 29), ("can operate outdoors.", 30, 51)]
    result = cli("claim", "edit", "a1-s2c1", "--end", "25", "--reviewer", "li", "--db", db)
    assert result.exit_code == 0, result.stderr
    result = cli("claim", "edit", "a1-s2c2", "--text", "The AX220 can operate outdoors", "--reviewer", "li", "--db", db)
    assert result.exit_code == 0, result.stderr
    assert _current(db)[:2] == [("The AX220 has a 20 L tank", 0, 25), ("The AX220 can operate outdoors", 30, 51)]
    with sqlite3.connect(db) as raw:
        actions = raw.execute("SELECT action, actor, created_at IS NOT NULL FROM claim_sets ORDER BY pk").fetchall()
        # every claim kept its edge to s1 through split and edits: two pending edges now
        pending = raw.execute(
            "SELECT count(*) FROM edges e JOIN claims c ON c.pk = e.claim_pk WHERE c.id IN ('a1-s4c1', 'a1-s3c1')"
        ).fetchone()
    assert actions == [
        ("ingest", None, 1),
        ("segment", None, 1),
        ("split", "li", 1),
        ("edit", "li", 1),
        ("edit", "li", 1),
    ]
    assert pending == (2,)
    merged = cli("claim", "merge", "a1-s3c1", "a1-s4c1", "--reviewer", "li", "--db", db)
    assert merged.exit_code == 0, merged.stderr
    # merged back to [0, 51): the same text and span as c1 as ingested, which returns with its edge
    assert _current(db)[0] == ("The AX220 has a 20 L tank and can operate outdoors.", 0, 51)
    # kept: c2 and c1; the two edited claims retire
    assert "claims: 2 kept" in merged.stdout
    assert "0 new" in merged.stdout


def test_bad_manual_edits_are_refused_with_a_clear_message(cli: Cli, db: Path) -> None:
    _segment(cli, db)
    outside = cli("claim", "split", "a1-s1c1", "--at", "60", "--reviewer", "li", "--db", db)
    assert outside.exit_code == 2
    assert "split offset 60 is not inside its span [0, 25)" in outside.stderr
    unknown = cli("claim", "edit", "nope", "--text", "x", "--reviewer", "li", "--db", db)
    assert unknown.exit_code == 2
    assert "no claim 'nope'" in unknown.stderr
    retired = cli("claim", "edit", "c1", "--text", "x", "--reviewer", "li", "--db", db)
    assert retired.exit_code == 2
    assert "not a current claim" in retired.stderr
    bad_run = cli("segment", "--db", db, "--run", "r9")
    assert bad_run.exit_code == 2
    assert "no run 'r9'" in bad_run.stderr
    bad_method = cli("segment", "--db", db, "--method", "llm-v9")
    assert bad_method.exit_code == 2
    assert "unknown segmentation method 'llm-v9'" in bad_method.stderr


def test_export_after_segmentation_round_trips_through_the_interchange_format(
    cli: Cli, db: Path, tmp_path: Path
) -> None:
    _segment(cli, db)
    out = tmp_path / "export.json"
    exported = cli("export", "--db", db, "--out", out)
    assert exported.exit_code == 0, exported.stderr
    body = json.loads(out.read_text(encoding="utf-8"))
    # the export holds the current claims only, under the segmentation they were made with
    assert body["protocol"]["segmentation"]["method"] == "rules-v1"
    assert [c["text"] for c in body["claims"]] == [
        "It is CE certified",
        "The AX220 has a 20 L tank",
        "The AX220 can operate outdoors",
    ]
    again = tmp_path / "again.db"
    assert cli("ingest", out, "--db", again).exit_code == 0
    # same protocol fingerprint and the same numbers read back from the exported file
    assert _score(cli, again)["fingerprint"] == _score(cli, db)["fingerprint"]
    assert _score(cli, again)["precision"] == _score(cli, db)["precision"]


def test_answers_segmented_differently_are_not_scored_together(
    cli: Cli, db: Path, write_json: Callable[[Any, str], Path]
) -> None:
    other = _audit()
    other["answers"][0]["id"] = "a2"
    other["answers"][0]["run_id"] = "r2"
    for claim in other["claims"]:
        claim["id"] += "-2"
        claim["answer_id"] = "a2"
    for edge in other["edges"]:
        edge["claim_id"] += "-2"
    assert cli("ingest", write_json(other, "b.json"), "--db", db).exit_code == 0
    _segment(cli, db, "--run", "r1")
    mixed = cli("score", db, "--format", "json")
    assert mixed.exit_code == 2
    assert "segmented in 2 different ways" in mixed.stderr
    assert "rules-v1@1" in mixed.stderr
    only_r1 = cli("score", db, "--format", "json", "--where", "run=r1")
    assert only_r1.exit_code == 0, only_r1.stderr


def _invariants(db: Path) -> tuple[int, set[tuple[int, int]]]:
    """Check that claims.current matches the newest claim sets; return the judgement count and judged edges."""
    with sqlite3.connect(db) as raw:
        mismatched = raw.execute(
            "SELECT count(*) FROM claims c WHERE c.current != (CASE "
            "WHEN NOT EXISTS (SELECT 1 FROM claim_sets s WHERE s.answer_pk = c.answer_pk) THEN 1 "
            "WHEN c.pk IN (SELECT m.claim_pk FROM claim_set_members m JOIN current_claim_sets s "
            "ON s.set_pk = m.set_pk) THEN 1 ELSE 0 END)"
        ).fetchone()
        assert mismatched == (0,)
        (judged,) = raw.execute("SELECT count(*) FROM judgements").fetchone()
        edges = set(raw.execute("SELECT DISTINCT e.pk, e.claim_pk FROM edges e JOIN judgements j ON j.edge_pk = e.pk"))
    return int(judged), edges


_OPERATIONS = st.lists(st.sampled_from(["split-rules", "sentence-rules", "split", "merge"]), max_size=6)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations=_OPERATIONS)
def test_any_sequence_of_changes_keeps_the_history_and_the_current_flag(
    operations: list[str], tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("ops")
    db = folder / "ops.db"
    path = folder / "a.json"
    path.write_text(json.dumps(_audit()), encoding="utf-8")
    with Store(db) as store:
        for item in read_files([path], None, None):
            store_prepared(store, item)
    add_reviewer(db, "li")
    judged, edges = _invariants(db)
    for operation in operations:
        with Store(db) as store:
            claims = store.claims.of_answer(store.claims.answer_pk("a1")).claims
            if operation == "split-rules":
                resegment(store, rules=Rules())
            elif operation == "sentence-rules":
                resegment(store, rules=Rules(split_coordination=False))
            elif operation == "split" and claims[0].start is not None and claims[0].end is not None:
                if claims[0].end - claims[0].start > 2:
                    split_claim(store, claims[0].id, (claims[0].start + claims[0].end) // 2, "li")
            elif operation == "merge" and len(claims) >= 2:
                merge_claims(store, [claims[0].id, claims[1].id], "li")
        # judgements are never added, removed or moved to another claim by re-segmenting or editing
        assert _invariants(db) == (judged, edges)
