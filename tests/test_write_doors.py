"""Every writer of a person's judgement goes through the one gate (:mod:`citeaudit.core.review_policy`): the
library without a role, ``ingest`` of an audit file carrying judgements, ``judgements import`` and the commands
that record who decided something. Real SQLite files, the real CLI in-process."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from builders import add_reviewer, answer, claim, document
from citeaudit.core.errors import ReviewRefused, UnknownReference
from citeaudit.core.model import Judgement, Label, Origin, Stage
from citeaudit.store.review import ReviewStore
from review_support import edge_pk, make_db, set_policy

Cli = Callable[..., Result]
WriteJson = Callable[[Any, str], Path]
URL = "https://brand.com/ax220"
SONAR = {
    "id": "x",
    "model": "sonar",
    "object": "chat.completion",
    "search_results": [{"title": "Result 1", "url": URL}],
    "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "AX220 tank: 20 L [1]."}}
    ],
}
"""One Sonar response whose answer the re-import tests move between questions and platforms."""
HEADER = "claim_id,source,label,passage,period,reasoning,severity\n"
ACCOUNTS = {"rev-a": "reviewer", "rev-b": "reviewer", "rev-c": "reviewer", "adj": "adjudicator", "root": "admin"}


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """The review document (c1 and c3 cite brand.com/ax220), the accounts above, double review."""
    made = make_db(tmp_path / "doors.db")
    for name, role in ACCOUNTS.items():
        add_reviewer(made, name, role)
    set_policy(made, "double")
    return made


def human(db: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(db) as con:
        return [
            (str(r), str(s), str(lab))
            for r, s, lab in con.execute(
                "SELECT reviewer, stage, label FROM judgements WHERE origin = 'human' ORDER BY pk"
            )
        ]


def state(db: Path, claim_id: str) -> tuple[str, int]:
    with sqlite3.connect(db) as con:
        row = con.execute(
            "SELECT e.review_state, e.final_code FROM edges e JOIN claims c ON c.pk = e.claim_pk "
            "JOIN sources s ON s.pk = e.source_pk WHERE c.id = ? AND s.url = ?",
            (claim_id, URL),
        ).fetchone()
    return str(row[0]), int(row[1])


# -- the library: the rules hold with no role given ------------------------------------------------------------


def test_the_library_refuses_a_self_adjudication_without_being_given_a_role(db: Path) -> None:
    edge = edge_pk(db, "c1", URL)
    with ReviewStore(db) as store:
        store.judgements.record_judgement(
            edge, Judgement(Label.SUPPORTED, "rev-a", created_at="2026-12-01T00:00:01Z"), "s1"
        )
        store.judgements.record_judgement(
            edge, Judgement(Label.IRRELEVANT, "rev-b", created_at="2026-12-01T00:00:02Z"), "s2"
        )
        # disputed now; rev-a reviewed it and may not settle it, whatever the call leaves out
        adjudication = Judgement(Label.SUPPORTED, "rev-a", stage=Stage.ADJUDICATION, reasoning="mine")
        with pytest.raises(ReviewRefused, match="only adjudicator accounts adjudicate"):
            store.judgements.record_judgement(edge, adjudication, "s3")
    assert human(db) == [("rev-a", "review", "supported"), ("rev-b", "review", "irrelevant")]
    assert state(db, "c1")[0] == "disputed"


@pytest.mark.parametrize(
    ("judgement", "why"),
    [
        (Judgement(Label.SUPPORTED, "nobody"), "'nobody' is no review account"),
        (Judgement(Label.SUPPORTED, None), "a judgement names its reviewer"),
        (Judgement(Label.SUPPORTED, "root"), "admins manage the project; they do not review"),
        (Judgement(Label.SUPPORTED, "adj", stage=Stage.ADJUDICATION, reasoning="x"), "only disputed edges"),
        (Judgement(Label.SUPPORTED, "rev-a", Origin.MODEL), "model suggestions come from `citeaudit suggest`"),
    ],
)
def test_the_library_refuses_what_the_web_form_refuses(db: Path, judgement: Judgement, why: str) -> None:
    with ReviewStore(db) as store, pytest.raises(ReviewRefused, match=why.replace("(", r"\(")):
        store.judgements.record_judgement(edge_pk(db, "c1", URL), judgement, "s1")
    assert human(db) == []


def test_the_suggestion_writer_takes_no_persons_label(db: Path) -> None:
    from citeaudit.store import Store
    from citeaudit.store.suggestions import record_suggestion

    refused = pytest.raises(ReviewRefused, match="a suggestion is a model's judgement, not 'rev-a''s")
    with Store(db) as store, refused, store.transaction() as tx:
        record_suggestion(tx, edge_pk(db, "c1", URL), "0" * 64, "bm25", [], Judgement(Label.SUPPORTED, "rev-a"))
    assert human(db) == []


# -- ingest of an audit file ------------------------------------------------------------------------------------


def _hostile(judgements: list[dict[str, Any]]) -> dict[str, Any]:
    """One answer a9 whose claim c9 cites brand.com/ax220, with these judgements on that edge."""
    a9 = answer("a9", run="r9", citations=[URL])
    return document([a9], [claim("c9", "a9")], [{"claim_id": "c9", "url": URL, "judgements": judgements}])


def _review(name: str, label: str, second: int) -> dict[str, Any]:
    return {"reviewer": name, "label": label, "created_at": f"2026-12-01T00:00:{second:02d}Z"}


@pytest.mark.parametrize(
    ("judgements", "place", "why"),
    [
        # rev-a reviews, rev-b disagrees, then rev-a settles the dispute herself
        (
            [
                _review("rev-a", "supported", 1),
                _review("rev-b", "irrelevant", 2),
                {**_review("rev-a", "supported", 3), "stage": "adjudication", "reasoning": "mine"},
            ],
            "judgement 3 of 3",
            "only adjudicator accounts adjudicate",
        ),
        # four reviewers on one edge under double review: the third is refused
        (
            [_review(n, "supported", i) for i, n in enumerate(["rev-a", "rev-b", "rev-c", "adj"], start=1)],
            "judgement 3 of 4",
            "already has its 2 independent review(s) under the double policy",
        ),
        ([_review("root", "supported", 1)], "judgement 1 of 1", "admins manage the project; they do not review"),
        ([_review("someone-new", "supported", 1)], "judgement 1 of 1", "'someone-new' is no review account"),
        (
            [{**_review("adj", "supported", 1), "stage": "adjudication", "reasoning": "early"}],
            "judgement 1 of 1",
            "only disputed edges are adjudicated; this one is pending",
        ),
    ],
)
def test_ingest_refuses_judgements_that_break_the_rules_and_writes_nothing(
    cli: Cli, db: Path, write_json: WriteJson, judgements: list[dict[str, Any]], place: str, why: str
) -> None:
    with sqlite3.connect(db) as con:
        before = con.execute("SELECT (SELECT count(*) FROM answers), (SELECT count(*) FROM judgements)").fetchone()
    result = cli("ingest", write_json(_hostile(judgements), "hostile.json"), "--db", db)
    assert result.exit_code == 2, result.stdout
    message = result.stderr.replace("\n", "")
    assert "hostile.json" in message
    assert f"claim 'c9', source '{URL}', {place}" in message
    assert why in message
    assert "Traceback" not in result.stderr
    with sqlite3.connect(db) as con:
        after = con.execute("SELECT (SELECT count(*) FROM answers), (SELECT count(*) FROM judgements)").fetchone()
    assert after == before


def test_ingest_stores_the_state_the_policy_gives(cli: Cli, db: Path, write_json: WriteJson) -> None:
    # rev-a supported, rev-b irrelevant: the two independent reviews disagree. rev-b's later "supported" is
    # recorded and never used (double review), so the edge is disputed, not agreed as all labels' latest say.
    judgements = [_review("rev-a", "supported", 1), _review("rev-b", "irrelevant", 2), _review("rev-b", "supported", 3)]
    result = cli("ingest", write_json(_hostile(judgements), "late.json"), "--db", db)
    assert result.exit_code == 0, result.stderr
    assert state(db, "c9")[0] == "disputed"
    assert human(db) == [
        ("rev-a", "review", "supported"),
        ("rev-b", "review", "irrelevant"),
        ("rev-b", "review", "supported"),
    ]
    # the audit log says who brought these labels, through which door and from which file
    with sqlite3.connect(db) as con:
        (actor, after) = con.execute("SELECT actor, after FROM audit_log WHERE action = 'judgements.ingest'").fetchone()
    record = json.loads(after)
    assert actor == "rev-a, rev-b"
    assert (record["door"], record["file"], record["judgements"]) == ("ingest", str(db.parent / "late.json"), 3)


def test_ingest_into_a_database_without_accounts_takes_the_files_names(
    cli: Cli, tmp_path: Path, write_json: WriteJson
) -> None:
    # no accounts yet: the file's names are taken as given. Two reviewers who disagree (the format's double
    # review) are read as a dispute even under single review, as `citeaudit score FILE` reads them.
    fresh = tmp_path / "fresh.db"
    two = _hostile([_review("li", "supported", 1), _review("marta", "partial", 2)])
    result = cli("ingest", write_json(two, "two.json"), "--db", fresh)
    assert result.exit_code == 0, result.stderr
    assert state(fresh, "c9")[0] == "disputed"
    # every other rule holds: a third reviewer, or an adjudication by one of the two, is refused
    for extra, why in (
        (_review("ola", "supported", 3), "already has its 2 independent review(s)"),
        ({**_review("li", "supported", 3), "stage": "adjudication", "reasoning": "x"}, "you reviewed this edge"),
    ):
        more = _hostile([_review("li", "supported", 1), _review("marta", "partial", 2), extra])
        more["answers"][0]["id"], more["claims"][0]["id"], more["claims"][0]["answer_id"] = "a8", "c8", "a8"
        more["edges"][0]["claim_id"] = "c8"
        refused = cli("ingest", write_json(more, "more.json"), "--db", fresh)
        assert refused.exit_code == 2
        assert why in refused.stderr.replace("\n", "")


# -- judgements import ------------------------------------------------------------------------------------------


def _sheet(tmp_path: Path, name: str, *rows: str) -> Path:
    path = tmp_path / name
    path.write_text(HEADER + "".join(row + "\n" for row in rows))
    return path


def test_one_file_is_one_persons_labels(cli: Cli, db: Path, tmp_path: Path) -> None:
    sheet = _sheet(tmp_path, "labels.csv", f"c1,{URL},supported,,,,")
    first = cli("judgements", "import", sheet, "--reviewer", "rev-c", "--db", db)
    assert first.exit_code == 0, first.stderr
    second = cli("judgements", "import", sheet, "--reviewer", "rev-b", "--db", db)
    assert second.exit_code == 2
    message = second.stderr.replace("\n", "")
    assert "was imported as 'rev-c'" in message
    assert "the same labels under 'rev-b' would count as a second, independent review" in message
    assert "Traceback" not in second.stderr
    # one review, so under double review the edge waits for a second reviewer: labelled, no final label
    assert human(db) == [("rev-c", "review", "supported")]
    assert state(db, "c1")[0] == "labelled"


def test_the_import_is_in_the_audit_log_with_hash_account_and_user(cli: Cli, db: Path, tmp_path: Path) -> None:
    import getpass
    import hashlib

    sheet = _sheet(tmp_path, "labels.csv", f"c1,{URL},supported,,,,", f"c3,{URL},partial,,,,")
    assert cli("judgements", "import", sheet, "--reviewer", "rev-a", "--db", db).exit_code == 0
    sha = hashlib.sha256(sheet.read_bytes()).hexdigest()
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT actor, action, after FROM audit_log ORDER BY pk").fetchall()
    imports = [(a, json.loads(after)) for a, action, after in rows if action == "judgements.import"]
    assert len(imports) == 1
    actor, record = imports[0]
    assert actor == "rev-a"
    assert (record["sha256"], record["file"], record["os_user"]) == (sha, str(sheet), getpass.getuser())
    assert (record["rows"], record["recorded"]) == (2, 2)
    # each judgement's own row names the door, the file, its hash and the line
    judged = [json.loads(after) for a, action, after in rows if action == "judgement"]
    assert [(j["door"], j["file"], j["sha256"], j["line"]) for j in judged] == [
        ("judgements import", str(sheet), sha, 2),
        ("judgements import", str(sheet), sha, 3),
    ]


@pytest.mark.parametrize(
    ("who", "why"),
    [("root", "'root' is an admin account: admins do not review"), ("someone-new", "no review account")],
)
def test_import_needs_an_account_that_reviews(cli: Cli, db: Path, tmp_path: Path, who: str, why: str) -> None:
    sheet = _sheet(tmp_path, "labels.csv", f"c1,{URL},supported,,,,")
    result = cli("judgements", "import", sheet, "--reviewer", who, "--db", db)
    assert result.exit_code == 2
    assert why in result.stderr.replace("\n", "")
    assert human(db) == []


def test_reimporting_an_earlier_label_makes_it_the_latest_again(cli: Cli, db: Path, tmp_path: Path) -> None:
    set_policy(db, "single")
    first = _sheet(tmp_path, "first.csv", f"c1,{URL},supported,,,,high", f"c3,{URL},partial,,,,")
    second = _sheet(tmp_path, "second.csv", f"c1,{URL},conflicting,,,,low", f"c3,{URL},partial,,,,")
    assert "2 judgement(s) recorded" in cli("judgements", "import", first, "--reviewer", "rev-a", "--db", db).stderr
    # c1 changes (label and severity); c3 says what rev-a's latest says already
    again = cli("judgements", "import", second, "--reviewer", "rev-a", "--db", db)
    assert "1 judgement(s) recorded for rev-a; 1 already recorded" in again.stderr
    back = cli("judgements", "import", first, "--reviewer", "rev-a", "--db", db)
    assert back.exit_code == 0, back.stderr
    # c1's latest is conflicting/low, so the first file's supported/high is new again; c3 is the same
    assert "1 judgement(s) recorded for rev-a; 1 already recorded" in back.stderr
    with sqlite3.connect(db) as con:
        c1 = con.execute(
            "SELECT j.label, j.severity FROM judgements j JOIN edges e ON e.pk = j.edge_pk JOIN claims c "
            "ON c.pk = e.claim_pk WHERE c.id = 'c1' AND j.origin = 'human' ORDER BY j.pk"
        ).fetchall()
    assert c1 == [("supported", "high"), ("conflicting", "low"), ("supported", "high")]
    # single review: the latest label is final (supported is code 0)
    assert state(db, "c1") == ("labelled", 0)


# -- commands that record who decided something -----------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ("facts", "confirm", "--claim", "c1", "--fact", "q1f1"),
        ("facts", "reject", "1"),
        ("claim", "edit", "c1", "--text", "The AX220 has a 20 L tank"),
        ("segment",),
    ],
)
def test_a_decision_by_a_name_with_no_account_is_refused(cli: Cli, db: Path, command: tuple[str, ...]) -> None:
    with sqlite3.connect(db) as con:
        before = con.execute(
            "SELECT (SELECT count(*) FROM fact_mappings), (SELECT count(*) FROM claim_sets)"
        ).fetchone()
    result = cli(*command, "--reviewer", "someone-new", "--db", db)
    assert result.exit_code == 2
    assert "'someone-new' is no review account" in result.stderr.replace("\n", "")
    assert "Traceback" not in result.stderr
    with sqlite3.connect(db) as con:
        after = con.execute("SELECT (SELECT count(*) FROM fact_mappings), (SELECT count(*) FROM claim_sets)").fetchone()
    assert after == before


# -- the same payload again with other metadata -----------------------------------------------------------------

PROTOCOL = Path(__file__).parent / "fixtures" / "protocol.yaml"


def _answers(db: Path) -> list[tuple[str, str, str | None, str]]:
    with sqlite3.connect(db) as con:
        return [
            (str(a), str(q), p, str(r))
            for a, q, p, r in con.execute(
                "SELECT a.id, q.id, a.platform, r.id FROM answers a JOIN questions q ON q.pk = a.question_pk "
                "JOIN runs r ON r.pk = a.run_pk ORDER BY a.pk"
            )
        ]


def test_a_reimport_with_a_corrected_question_is_refused_then_moved_with_replace(
    cli: Cli, tmp_path: Path, write_json: WriteJson
) -> None:
    payload = write_json(SONAR, "sonar.json")
    db = tmp_path / "answers.db"
    common = ("--db", db, "--questions", PROTOCOL, "--run", "r1")
    assert cli("ingest", payload, *common, "--question-id", "q02").exit_code == 0
    ((answer_id, question, platform, run),) = _answers(db)
    assert (question, platform, run) == ("q02", "perplexity", "r1")
    add_reviewer(db, "rev-a")
    with sqlite3.connect(db) as con:
        (edge,) = con.execute("SELECT pk FROM edges").fetchone()
    with ReviewStore(db) as store:
        store.judgements.record_judgement(int(edge), Judgement(Label.SUPPORTED, "rev-a"), "s1")
    # the same bytes, the same metadata: a no-op
    same = cli("ingest", payload, *common, "--question-id", "q02")
    assert same.exit_code == 0
    assert "already imported" in same.stdout
    assert "nothing written" in same.stdout
    # the manifest said q02 by mistake: the corrected question is refused, naming what differs and the way out
    corrected = cli("ingest", payload, *common, "--question-id", "q01")
    assert corrected.exit_code == 2
    message = corrected.stderr.replace("\n", "")
    assert "question 'q02' → 'q01' (1 answer)" in message
    assert "--replace" in message
    assert "Traceback" not in corrected.stderr
    assert _answers(db) == [(answer_id, "q02", "perplexity", "r1")]
    # with --replace the answer moves, its claims, edges and judgements with it, and the audit log says so
    moved = cli("ingest", payload, *common, "--question-id", "q01", "--replace")
    assert moved.exit_code == 0, moved.stderr
    assert "1 answer(s) moved" in moved.stdout
    assert _answers(db) == [(answer_id, "q01", "perplexity", "r1")]
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT count(*) FROM edges").fetchone() == (1,)
        assert con.execute("SELECT reviewer, label FROM judgements").fetchall() == [("rev-a", "supported")]
        (before, after) = con.execute("SELECT before, after FROM audit_log WHERE action = 'answers.move'").fetchone()
    assert json.loads(before) == {answer_id: {"question": "q02"}}
    assert json.loads(after) == {"file": str(payload), "answers": {answer_id: {"question": "q01"}}}
    # and now the corrected metadata is the stored one: importing it again is a no-op
    assert "nothing written" in cli("ingest", payload, *common, "--question-id", "q01").stdout


def test_a_corrected_manifest_is_refused_then_applied_with_replace(cli: Cli, tmp_path: Path) -> None:
    fixtures = Path(__file__).resolve().parent / "fixtures"
    folder = tmp_path / "collection"
    folder.mkdir()
    (folder / "gemini.json").write_bytes((fixtures / "gemini" / "grounded.json").read_bytes())
    manifest = tmp_path / "collection.csv"
    db = tmp_path / "manifest.db"

    def ingest(question: str, *extra: str) -> Result:
        manifest.write_text(f"file,question,engine\ngemini.json,{question},gemini\n", encoding="utf-8")
        return cli("ingest", folder, "--manifest", manifest, "--questions", PROTOCOL, "--db", db, *extra)

    assert ingest("q02").exit_code == 0
    assert ingest("q02").exit_code == 0  # the same manifest again: a no-op
    refused = ingest("q01")
    assert refused.exit_code == 2
    assert "question 'q02' → 'q01' (1 answer)" in refused.stderr.replace("\n", "")
    assert [q for _, q, _, _ in _answers(db)] == ["q02"]
    applied = ingest("q01", "--replace")
    assert applied.exit_code == 0, applied.stderr
    assert [q for _, q, _, _ in _answers(db)] == ["q01"]
    with sqlite3.connect(db) as con:
        tasks = con.execute(
            "SELECT question_id, state, answer_id IS NOT NULL FROM collection_tasks ORDER BY question_id"
        ).fetchall()
    # the q02 task the wrong manifest filled is pending again; the q01 task has the answer
    assert tasks == [("q01", "done", 1), ("q02", "pending", 0)]
    # the same bytes under another collection name: refused, naming the collection
    other = cli("ingest", folder, "--manifest", manifest, "--questions", PROTOCOL, "--db", db, "--collection", "nov")
    assert other.exit_code == 2
    assert "collection 'collection' → 'nov'" in other.stderr.replace("\n", "")
    # and a manifest row that names its run, in another collection: refused the same way
    manifest.write_text("file,question,engine,run\ngemini.json,q01,gemini,collection-gemini\n", encoding="utf-8")
    named = cli("ingest", folder, "--manifest", manifest, "--questions", PROTOCOL, "--db", db, "--collection", "nov")
    assert named.exit_code == 2
    assert "collection 'collection' → 'nov'" in named.stderr.replace("\n", "")
    assert [q for _, q, _, _ in _answers(db)] == ["q01"]


def _collected(db: Path) -> list[tuple[str, str, str, str, int]]:
    """``(answer, collection, day, task's question, claims)`` per task of every collection."""
    with sqlite3.connect(db) as con:
        return [
            (str(a), str(k), str(d), str(q), int(n))
            for a, k, d, q, n in con.execute(
                "SELECT coalesce(t.answer_id, '-'), k.name, substr(k.created_at, 1, 10), t.question_id, "
                "(SELECT count(*) FROM claims c JOIN answers a ON a.pk = c.answer_pk WHERE a.id = t.answer_id) "
                "FROM collection_tasks t JOIN collections k ON k.pk = t.collection_pk ORDER BY k.name"
            )
        ]


def _audit(db: Path, action: str) -> list[tuple[str, Any, Any]]:
    with sqlite3.connect(db) as con:
        return [
            (str(target), json.loads(before), json.loads(after))
            for target, before, after in con.execute(
                "SELECT target, before, after FROM audit_log WHERE action = ? ORDER BY pk", (action,)
            )
        ]


@pytest.fixture
def collected(tmp_path: Path) -> Path:
    """A folder of one saved Gemini response named for q01's task."""
    fixtures = Path(__file__).resolve().parent / "fixtures"
    folder = tmp_path / "oct"
    folder.mkdir()
    (folder / "q01__gemini__en__1.json").write_bytes((fixtures / "gemini" / "grounded.json").read_bytes())
    return folder


def _judge_first_edge(db: Path) -> None:
    add_reviewer(db, "rev-a")
    with sqlite3.connect(db) as con:
        (edge,) = con.execute("SELECT min(pk) FROM edges").fetchone()
    with ReviewStore(db) as store:
        store.judgements.record_judgement(int(edge), Judgement(Label.SUPPORTED, "rev-a"), "s1")


def _kept(db: Path) -> tuple[int, int, list[tuple[str, str]]]:
    with sqlite3.connect(db) as con:
        (claims,) = con.execute("SELECT count(*) FROM claims").fetchone()
        (edges,) = con.execute("SELECT count(*) FROM edges").fetchone()
        judged = con.execute("SELECT reviewer, label FROM judgements WHERE origin = 'human'").fetchall()
    return int(claims), int(edges), [(str(r), str(lab)) for r, lab in judged]


def test_a_collection_date_corrected_is_refused_then_applied_with_replace(
    cli: Cli, tmp_path: Path, collected: Path
) -> None:
    db = tmp_path / "dated.db"
    pattern = ("--pattern", "{question}__{engine}__{locale}__{repeat}.json", "--questions", PROTOCOL, "--db", db)

    def ingest(day: str, *extra: str) -> Result:
        return cli("ingest", collected, *pattern, "--collected-on", day, *extra)

    assert ingest("2026-10-01").exit_code == 0
    _judge_first_edge(db)
    kept = _kept(db)
    assert kept[0] > 0
    assert kept[1] > 0
    assert kept[2] == [("rev-a", "supported")]
    ((answer_id, *_),) = _collected(db)
    assert _collected(db) == [(answer_id, "oct", "2026-10-01", "q01", kept[0])]
    again = ingest("2026-10-01")  # the same bytes and the same day: a no-op
    assert again.exit_code == 0, again.stderr
    assert "nothing written" in again.stdout
    # the day was wrong: refused, naming both days and the way to apply the new one
    refused = ingest("2026-10-02")
    assert refused.exit_code == 2
    message = refused.stderr.replace("\n", "")
    assert "collection 'oct' is already dated '2026-10-01' (not '2026-10-02')" in message
    assert "--replace" in message
    assert "Traceback" not in refused.stderr
    assert _collected(db) == [(answer_id, "oct", "2026-10-01", "q01", kept[0])]
    assert _audit(db, "collections.redate") == []
    # with --replace the collection (so its one answer) is dated 2 October, the answer's rows untouched
    applied = ingest("2026-10-02", "--replace")
    assert applied.exit_code == 0, applied.stderr
    assert _collected(db) == [(answer_id, "oct", "2026-10-02", "q01", kept[0])]
    assert _kept(db) == kept
    assert _audit(db, "collections.redate") == [
        ("collection:oct", {"date": "2026-10-01", "answers": 1}, {"file": str(collected), "date": "2026-10-02"})
    ]
    # the day now stored is the one given: the same command again is a no-op and logs nothing more
    assert ingest("2026-10-02").exit_code == 0
    assert len(_audit(db, "collections.redate")) == 1


def test_a_file_in_another_collection_is_refused_then_moved_with_replace(
    cli: Cli, tmp_path: Path, collected: Path
) -> None:
    db = tmp_path / "moved.db"
    pattern = ("--pattern", "{question}__{engine}__{locale}__{repeat}.json", "--questions", PROTOCOL, "--db", db)
    assert cli("ingest", collected, *pattern, "--collected-on", "2026-10-01").exit_code == 0
    _judge_first_edge(db)
    kept = _kept(db)
    ((answer_id, *_),) = _collected(db)
    # the same bytes named as collection "nov": refused, naming both collections and the way to move it
    refused = cli("ingest", collected, *pattern, "--collection", "nov", "--collected-on", "2026-11-01")
    assert refused.exit_code == 2
    message = refused.stderr.replace("\n", "")
    assert "collection 'oct' → 'nov'" in message
    assert "--replace" in message
    assert "Traceback" not in refused.stderr
    assert _collected(db) == [(answer_id, "oct", "2026-10-01", "q01", kept[0])]
    # with --replace the answer (the same row, its claims, edges and judgement) is nov's; oct's task is pending
    moved = cli("ingest", collected, *pattern, "--collection", "nov", "--collected-on", "2026-11-01", "--replace")
    assert moved.exit_code == 0, moved.stderr
    assert _collected(db) == [(answer_id, "nov", "2026-11-01", "q01", kept[0]), ("-", "oct", "2026-10-01", "q01", 0)]
    assert _kept(db) == kept
    # its run was the collection's name and the engine: moved too, and both moves are in the audit log
    assert _answers(db) == [(answer_id, "q01", "gemini", "nov-gemini")]
    assert [(t, b) for t, b, _ in _audit(db, "answers.move")] == [
        (f"import:{_sha256(collected)}", {answer_id: {"run": "oct-gemini"}})
    ]
    assert [b for _, b, _ in _audit(db, "collection_tasks.release")] == [[["oct", "q01", "gemini", "en", 1]]]
    # and the same command again is a no-op
    again = cli("ingest", collected, *pattern, "--collection", "nov", "--collected-on", "2026-11-01")
    assert again.exit_code == 0, again.stderr
    assert "nothing written" in again.stdout


def _sha256(folder: Path) -> str:
    return hashlib.sha256((folder / "q01__gemini__en__1.json").read_bytes()).hexdigest()


# -- who decides something without a label: a source's link, an evidence group ------------------------------------


def _links(db: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(db) as con:
        return [(str(u), str(b)) for u, b in con.execute("SELECT url, set_by FROM source_links ORDER BY pk")]


def test_source_set_url_refuses_a_name_with_no_account(cli: Cli, db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    new = "https://brand.com/ax220-sheet"
    for by in (("--by", "someone-new"), ()):  # named, or the login name (the default) when --by is not given
        monkeypatch.setenv("LOGNAME", "someone-new")
        result = cli("source", "set-url", URL, new, "--db", db, "--no-resolve", *by)
        assert result.exit_code == 2
        message = result.stderr.replace("\n", "")
        assert "--by: 'someone-new' is no review account; add it with `citeaudit reviewer add` first" in message
        assert "Traceback" not in result.stderr
        assert _links(db) == []
    accepted = cli("source", "set-url", URL, new, "--db", db, "--no-resolve", "--by", "rev-a")
    assert accepted.exit_code == 0, accepted.stderr
    assert _links(db) == [(new, "rev-a")]


def _groups(db: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(db) as con:
        return [(str(g), str(r)) for g, r in con.execute("SELECT id, reviewer FROM evidence_groups ORDER BY pk")]


def test_an_evidence_group_through_the_library_needs_an_account_that_reviews(db: Path) -> None:
    with sqlite3.connect(db) as con:
        (claim_pk,) = con.execute("SELECT pk FROM claims WHERE id = 'c1'").fetchone()
    with ReviewStore(db) as store:
        sources = [pk for pk, _, _ in store.evidence.claim_sources(int(claim_pk))]
        assert len(sources) >= 2
        with pytest.raises(UnknownReference, match="'nobody' is no review account"):
            store.evidence.create_group(int(claim_pk), sources, (), (), Label.SUPPORTED, "nobody")
        with pytest.raises(ReviewRefused, match="admins manage the project"):
            store.evidence.create_group(int(claim_pk), sources, (), (), Label.SUPPORTED, "root")
        # a link found for a source is recorded with an account too
        with pytest.raises(UnknownReference, match="'nobody' is no review account"):
            store.evidence.attach_url(sources[0], "https://brand.com/found", "nobody")
        assert _groups(db) == []
        made = store.evidence.create_group(int(claim_pk), sources, (), (), Label.SUPPORTED, "rev-a")
    assert _groups(db) == [(made, "rev-a")]


def _grouped(reviewer: str) -> dict[str, Any]:
    """Answer a9, whose claim c9 cites two pages, and an evidence group of the two by ``reviewer``."""
    other = "https://brand.com/ax220-manual"
    a9 = answer("a9", run="r9", citations=[URL, other])
    made = document([a9], [claim("c9", "a9")], [{"claim_id": "c9", "url": u} for u in (URL, other)])
    made["evidence_groups"] = [
        {"id": "c9/g1", "claim_id": "c9", "sources": [URL, other], "label": "supported", "reviewer": reviewer}
    ]
    return made


@pytest.mark.parametrize(
    ("reviewer", "why"),
    [
        ("someone-new", "reviewer 'someone-new' is no review account; add it with `citeaudit reviewer add` first"),
        ("root", "reviewer 'root' is an admin"),
    ],
)
def test_ingest_refuses_an_evidence_group_by_a_name_with_no_account(
    cli: Cli, db: Path, write_json: WriteJson, reviewer: str, why: str
) -> None:
    with sqlite3.connect(db) as con:
        (answers,) = con.execute("SELECT count(*) FROM answers").fetchone()
    result = cli("ingest", write_json(_grouped(reviewer), "grouped.json"), "--db", db)
    assert result.exit_code == 2
    message = result.stderr.replace("\n", "")
    assert "grouped.json: evidence group 'c9/g1'" in message
    assert why in message
    assert "Traceback" not in result.stderr
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT count(*) FROM answers").fetchone() == (answers,)
    assert _groups(db) == []
    # an account that reviews is taken; so is any name in a database with no accounts at all
    assert cli("ingest", write_json(_grouped("rev-a"), "by-rev-a.json"), "--db", db).exit_code == 0
    assert _groups(db) == [("c9/g1", "rev-a")]


def test_ingest_into_a_database_without_accounts_takes_an_evidence_groups_name(
    cli: Cli, tmp_path: Path, write_json: WriteJson
) -> None:
    fresh = tmp_path / "fresh.db"
    result = cli("ingest", write_json(_grouped("li"), "grouped.json"), "--db", fresh)
    assert result.exit_code == 0, result.stderr
    assert _groups(fresh) == [("c9/g1", "li")]


def test_a_platform_move_keeps_the_answer_id_made_from_the_old_platform(
    cli: Cli, tmp_path: Path, write_json: WriteJson
) -> None:
    payload = write_json(SONAR, "sonar.json")
    # no id of its own in the payload: the answer is named after its platform and the file's SHA-256
    named = f"perplexity-{hashlib.sha256(payload.read_bytes()).hexdigest()[:12]}"
    db = tmp_path / "platform.db"
    common = ("--db", db, "--questions", PROTOCOL, "--run", "r1", "--question-id", "q01")
    assert cli("ingest", payload, *common).exit_code == 0
    assert _answers(db) == [(named, "q01", "perplexity", "r1")]
    with sqlite3.connect(db) as con:
        claims = con.execute("SELECT id FROM claims ORDER BY pk").fetchall()
    assert claims[0] == (f"{named}-c1",)
    moved = cli("ingest", payload, *common, "--platform", "gemini", "--replace")
    assert moved.exit_code == 0, moved.stderr
    # the platform is the stored one; the id, and every id made from it, stay as references
    assert _answers(db) == [(named, "q01", "gemini", "r1")]
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT id FROM claims ORDER BY pk").fetchall() == claims
    listed = json.loads(cli("answers", "list", "--db", db, "--format", "json").stdout)
    assert [(a["id"], a["platform"]) for a in listed] == [(named, "gemini")]
    assert [t for t, _, _ in _audit(db, "answers.move")] == [
        f"import:{hashlib.sha256(payload.read_bytes()).hexdigest()}"
    ]
