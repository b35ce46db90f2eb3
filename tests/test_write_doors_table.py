"""One table of attempts walked through every door a person's judgement can come in by — the library, the edge
form and the cross-pair form over real HTTP, ``judgements import`` and ``ingest`` of an audit file — each on a
fresh database under double review, with the same outcome expected from each door: the rules are one, not five.

The attempts: an adjudicator settling a dispute on an edge she reviewed, a third reviewer, an admin reviewing,
a name with no account, a review of a retired claim's edge, an adjudication of an edge that is not disputed;
and two that the rules allow (a first review, an adjudication of a dispute by an adjudicator who did not review).
Where a door cannot say a thing at all, the table says so: ``judgements import`` carries reviews only (an
adjudication is refused as such), and an audit file brings its own claims, never a retired one."""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import Result

from builders import answer, claim, document
from citeaudit.core.errors import InvalidValue, ReviewRefused, UnknownReference
from citeaudit.core.misattribution import CrossCandidate, CrossKind
from citeaudit.core.model import Judgement, Label, Stage
from citeaudit.interchange import parse_audit_bytes
from citeaudit.review.app import ReviewConfig
from citeaudit.store import Store
from citeaudit.store.cross_pairs import cross_pair, propose_cross_pairs, record_cross_judgement
from citeaudit.store.review import ReviewStore, code_label
from citeaudit.store.review_records import FileJudgement
from review_support import ReviewClient, add_account, edge_pk, make_db, serve, set_policy

pytest.importorskip("fastapi")

Cli = Callable[..., Result]
SHOP = "https://shop.example/ax"
BRAND = "https://brand.com/ax220"
PAIR = 1
ACCOUNTS = {
    "ann": "reviewer",
    "bob": "reviewer",
    "cat": "reviewer",
    "li": "reviewer",
    "ada": "adjudicator",
    "eve": "adjudicator",
    "root": "admin",
}
DOORS = ("api", "web", "cross-pair web", "judgements import", "ingest")

Step = tuple[str, Stage, Label]


@dataclass(frozen=True)
class Case:
    """Judgements made first (allowed by the rules), then the attempt, and whether the rules allow it."""

    before: tuple[Step, ...]
    attempt: Step
    allowed: bool
    retire: bool = False


REVIEW, ADJUDICATION = Stage.REVIEW, Stage.ADJUDICATION
S, IRR = Label.SUPPORTED, Label.IRRELEVANT
CASES = {
    # ann and ada disagree; ada, who reviewed it, may not settle it
    "self-adjudication": Case((("ann", REVIEW, S), ("ada", REVIEW, IRR)), ("ada", ADJUDICATION, S), False),
    "third reviewer": Case((("ann", REVIEW, S), ("bob", REVIEW, S)), ("cat", REVIEW, IRR), False),
    "admin": Case((), ("root", REVIEW, S), False),
    "unknown name": Case((), ("nobody", REVIEW, S), False),
    "retired edge": Case((), ("ann", REVIEW, S), False, retire=True),
    "adjudication without dispute": Case((("ann", REVIEW, S),), ("eve", ADJUDICATION, S), False),
    "first review": Case((), ("ann", REVIEW, S), True),
    "adjudication of a dispute": Case((("ann", REVIEW, S), ("bob", REVIEW, IRR)), ("eve", ADJUDICATION, IRR), True),
}


def _document(judgements: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """a1 cites the shop page and brand.com; its claim c1 ([0, 20)) cites the shop page (the edge judged)."""
    a1 = answer("a1", citations=[BRAND, SHOP])
    row: dict[str, Any] = {"claim_id": "c1", "url": SHOP}
    if judgements:
        row["judgements"] = judgements
    return document([a1], [claim("c1", "a1", start=0, end=20)], [row])


def _accounts(db: Path) -> None:
    for name, role in ACCOUNTS.items():
        add_account(db, name, role)
    set_policy(db, "double")


def _database(path: Path) -> Path:
    """The document with its one cross pair (c1 against brand.com), the accounts, double review."""
    db = make_db(path, _document())
    with Store(db) as store, store.transaction() as tx:
        propose_cross_pairs(tx, 1, [CrossCandidate("c1", BRAND, CrossKind.CO_CITED)])
    _accounts(db)
    return db


def _judgement(step: Step, number: int) -> Judgement:
    name, stage, label = step
    # distinct reasoning per step: each import file's bytes are its own person's
    return Judgement(
        label, name, stage=stage, reasoning=f"{name} step {number}", created_at=f"2026-12-01T00:{number:02d}Z"
    )


def _retire(cli: Cli, db: Path) -> None:
    # li shortens c1: a new claim set in which c1 is retired
    result = cli("claim", "edit", "c1", "--end", "10", "--reviewer", "li", "--db", db)
    assert result.exit_code == 0, result.stderr


def _post(base: str, name: str, path: str, step: Step, number: int) -> bool:
    """Log in as ``name`` and post the attempt like a person's form (any page's fields, a fresh submission id);
    ``True`` when it was recorded (the redirect after a judgement)."""
    client = ReviewClient(base)
    try:
        if client.login(name).status_code != 303:
            return False  # a name with no account does not get in
        client.get("/queue")
        _, stage, label = step
        form = {"label": str(label), "submission": secrets.token_urlsafe(12), "reasoning": f"{name} step {number}"}
        if path.startswith("/cross-pairs"):
            form["stage"] = str(stage)
            target = path + "/judgements"
        else:
            target = path + ("/adjudication" if stage is ADJUDICATION else "/judgements")
        return client.post(target, form).status_code == 303
    finally:
        client.close()


def _edge_before_the_attempt(db: Path, case: Case, cli: Cli) -> int:
    """The edge the attempts are made on, with the case's earlier judgements recorded (and its claim retired
    when the case asks)."""
    edge = edge_pk(db, "c1", SHOP)
    with ReviewStore(db) as store:
        for number, step in enumerate(case.before):
            store.judgements.record_judgement(edge, _judgement(step, number), f"before-{number}")
    if case.retire:
        _retire(cli, db)
    return edge


def _through_api(db: Path, case: Case, cli: Cli) -> bool:
    edge = _edge_before_the_attempt(db, case, cli)
    try:
        with ReviewStore(db) as store:
            store.judgements.record_judgement(edge, _judgement(case.attempt, 9), "attempt")
    except ReviewRefused:
        return False
    return True


def _through_web(db: Path, case: Case, cli: Cli) -> bool:
    edge = _edge_before_the_attempt(db, case, cli)
    with serve(ReviewConfig(db=db)) as base:
        return _post(base, case.attempt[0], f"/edges/{edge}", case.attempt, 9)


def _through_cross_pair_web(db: Path, case: Case, cli: Cli) -> bool:
    with Store(db) as store:
        for number, step in enumerate(case.before):
            with store.transaction() as tx:
                record_cross_judgement(tx, PAIR, _judgement(step, number), submission=f"before-{number}")
    if case.retire:
        _retire(cli, db)
    with serve(ReviewConfig(db=db)) as base:
        return _post(base, case.attempt[0], f"/cross-pairs/{PAIR}", case.attempt, 9)


def _through_import(db: Path, case: Case, cli: Cli) -> bool:
    _edge_before_the_attempt(db, case, cli)
    name, stage, label = case.attempt
    sheet = db.parent / f"{name}.jsonl"
    row = {"claim_id": "c1", "source": SHOP, "label": str(label), "reasoning": f"{name} step 9", "stage": str(stage)}
    sheet.write_text(json.dumps(row) + "\n")
    result = cli("judgements", "import", sheet, "--reviewer", name, "--db", db)
    assert result.exit_code in (0, 2), result.stderr
    return result.exit_code == 0 and "1 judgement(s) recorded" in result.stderr


def _through_ingest(db: Path, case: Case, cli: Cli) -> bool:
    steps = [*case.before, case.attempt]
    judgements = [
        {
            "reviewer": name,
            "stage": str(stage),
            "label": str(label),
            "reasoning": f"{name} step {number}",
            "created_at": f"2026-12-01T00:{number:02d}Z",
        }
        for number, (name, stage, label) in enumerate(steps)
    ]
    path = db.parent / "audit.json"
    path.write_text(json.dumps(_document(judgements)))
    result = cli("ingest", path, "--db", db)
    assert result.exit_code in (0, 2), result.stderr
    if result.exit_code == 2:
        # refused for the attempt, the last judgement, never for what came before it
        assert f"judgement {len(steps)} of {len(steps)}" in result.stderr.replace("\n", "")
    return result.exit_code == 0


def _human_rows(db: Path, table: str) -> int:
    with sqlite3.connect(db) as con:
        return int(con.execute(f"SELECT count(*) FROM {table} WHERE origin = 'human'").fetchone()[0])


@pytest.mark.parametrize("door", DOORS)
@pytest.mark.parametrize("name", list(CASES))
def test_every_door_gives_the_same_outcome(door: str, name: str, tmp_path: Path, cli: Cli) -> None:
    case = CASES[name]
    if door == "ingest" and case.retire:
        pytest.skip("an audit file brings its own claims: none of them is retired")
    expected = case.allowed
    if door == "judgements import" and case.attempt[1] is ADJUDICATION:
        expected = False  # a spreadsheet carries reviews only: adjudications are made in the review UI
    if door == "ingest":
        db = tmp_path / "ingest.db"
        ReviewStore.prepare(db)
        _accounts(db)
        recorded = _through_ingest(db, case, cli)
        # all or nothing: a refused file writes none of its judgements
        assert _human_rows(db, "judgements") == (len(case.before) + 1 if recorded else 0)
    else:
        db = _database(tmp_path / "doors.db")
        walk = {
            "api": _through_api,
            "web": _through_web,
            "cross-pair web": _through_cross_pair_web,
            "judgements import": _through_import,
        }[door]
        recorded = walk(db, case, cli)
        table = "cross_judgements" if door == "cross-pair web" else "judgements"
        assert _human_rows(db, table) == len(case.before) + (1 if recorded else 0)
    assert recorded is expected, (door, name)


def test_the_audit_log_says_who_recorded_a_label_through_which_door_from_which_file(tmp_path: Path, cli: Cli) -> None:
    db = _database(tmp_path / "log.db")
    edge = edge_pk(db, "c1", SHOP)
    with ReviewStore(db) as store:
        store.judgements.record_judgement(edge, _judgement(("ann", REVIEW, S), 0), "api-1")
    sheet = tmp_path / "bob.csv"
    sheet.write_text(f"claim_id,source,label\nc1,{SHOP},irrelevant\n")
    assert cli("judgements", "import", sheet, "--reviewer", "bob", "--db", db).exit_code == 0
    with serve(ReviewConfig(db=db)) as base:
        assert _post(base, "eve", f"/edges/{edge}", ("eve", ADJUDICATION, S), 2)
    with sqlite3.connect(db) as con:
        rows = [
            (actor, action, json.loads(after))
            for actor, action, after in con.execute(
                "SELECT actor, action, after FROM audit_log WHERE target = ? ORDER BY pk", (f"edge:{edge}",)
            )
        ]
    assert [(actor, action, after["door"], after.get("file")) for actor, action, after in rows] == [
        ("ann", "judgement", "api", None),
        ("bob", "judgement", "judgements import", str(sheet)),
        ("eve", "adjudication", "web", None),
    ]


NAMES = sorted([*ACCOUNTS, "nobody"])


def _final(db: Path) -> tuple[str, Label | None]:
    """The one edge's state and final label."""
    with sqlite3.connect(db) as con:
        row = con.execute("SELECT review_state, final_code FROM edges").fetchone()
    return str(row[0]), code_label(int(row[1]))


@settings(max_examples=25, deadline=None)
@given(
    st.sampled_from(["single", "double"]),
    st.lists(
        st.tuples(st.sampled_from(NAMES), st.sampled_from(list(Stage)), st.sampled_from([S, IRR, Label.PARTIAL])),
        max_size=6,
    ),
)
def test_any_attempts_end_alike_through_every_door(policy: str, attempts: list[Step]) -> None:
    """Whatever people try, in whatever order: the library refuses on an edge exactly what it refuses on a cross
    pair, what ``judgements import`` refuses (a spreadsheet's reviews; adjudications go through the library as
    the review UI makes them) and, under double review, what ``ingest`` refuses of an audit file carrying the
    attempts accepted so far and this one; and every door ends in the same state."""
    with tempfile.TemporaryDirectory() as folder:
        here = Path(folder)
        library, imported = _database(here / "library.db"), _database(here / "import.db")
        set_policy(library, policy)
        set_policy(imported, policy)
        ingested = here / "ingest.db"
        ReviewStore.prepare(ingested)
        _accounts(ingested)
        accepted: list[Step] = []
        for number, step in enumerate(attempts):
            judgement = _judgement(step, number)
            edge_ok = _api_ok(library, judgement, f"e-{number}")
            try:
                with Store(library) as store, store.transaction() as tx:
                    record_cross_judgement(tx, PAIR, judgement, submission=f"x-{number}")
                pair_ok = True
            except ReviewRefused:
                pair_ok = False
            assert pair_ok == edge_ok, (number, step)
            assert _import_ok(imported, judgement, number) == edge_ok, (number, step)
            if edge_ok:
                accepted.append(step)
            elif policy == "double":
                # the file with this attempt after the accepted ones is refused at this attempt, writing nothing
                doc = _document(_file_judgements([*accepted, step], [*range(len(accepted)), number]))
                with pytest.raises(InvalidValue, match=f"judgement {len(accepted) + 1} of {len(accepted) + 1}"):
                    _ingest(ingested, doc)
        states = {_final(library), _final(imported)}
        with Store(library) as store:
            pair = cross_pair(store.connection, PAIR)
        assert pair is not None
        states.add((str(pair.state), pair.final_label))
        if policy == "double":
            numbers = [n for n, step in enumerate(attempts) if step in accepted]
            _ingest(ingested, _document(_file_judgements(accepted, numbers[: len(accepted)])))
            states.add(_final(ingested))
        assert len(states) == 1, states


def _api_ok(db: Path, judgement: Judgement, submission: str) -> bool:
    try:
        with ReviewStore(db) as store:
            store.judgements.record_judgement(edge_pk(db, "c1", SHOP), judgement, submission)
    except ReviewRefused:
        return False
    return True


def _import_ok(db: Path, judgement: Judgement, number: int) -> bool:
    if judgement.stage is ADJUDICATION:
        return _api_ok(db, judgement, f"i-{number}")
    name = judgement.reviewer or ""
    row = FileJudgement(2, "c1", SHOP, judgement.label, None, None, judgement.reasoning, None)
    digest = hashlib.sha256(f"{name} {number}".encode()).hexdigest()
    try:
        with ReviewStore(db) as store:
            store.judgements.import_judgements(f"{name}-{number}.csv", name, [row], digest)
    except (InvalidValue, UnknownReference):
        return False
    return True


def _file_judgements(steps: list[Step], numbers: list[int]) -> list[dict[str, Any]]:
    return [
        {
            "reviewer": name,
            "stage": str(stage),
            "label": str(label),
            "reasoning": f"{name} step {number}",
            "created_at": f"2026-12-01T00:{number:02d}Z",
        }
        for (name, stage, label), number in zip(steps, numbers, strict=True)
    ]


def _ingest(db: Path, doc: dict[str, Any]) -> None:
    payload = json.dumps(doc).encode()
    with Store(db) as store:
        store.import_audit(parse_audit_bytes(payload, "attempts.json"), payload, "attempts.json")
