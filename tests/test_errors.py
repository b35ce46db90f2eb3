"""Bad input: a message naming file, JSON path and value; exit code 2; the database exactly as it was."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from builders import answer, claim, document, edge
from citeaudit import CiteauditError, DuplicateId, InvalidValue, MalformedInput, UnknownReference
from citeaudit.core.errors import UNNAMED, InputError, UnknownFormat, naming
from citeaudit.interchange import parse_audit_bytes


def database_state(path: Path) -> str:
    """Every row of every table, in order: equal states mean an unchanged database."""
    with sqlite3.connect(path) as db:
        return hashlib.sha256("\n".join(db.iterdump()).encode()).hexdigest()


def valid() -> dict[str, Any]:
    return document(
        [answer("a1")],
        [claim("c1", "a1", "q1f1"), claim("c2", "a1"), claim("c3", "a1")],
        [
            edge("c1", "https://x.org/1", "supported"),
            edge("c2", "https://x.org/2", "partial"),
            edge("c3", "https://x.org/3", "unknown"),
            edge("c3", "https://x.org/4", "irrelevant"),
        ],
    )


def mutate(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    doc = valid()
    change(doc)
    return doc


CASES = [
    pytest.param(
        lambda d: d["edges"][3].update(label="supportd"),
        InvalidValue,
        "edges[3].label",
        "'supportd'",
        id="unknown-label",
    ),
    pytest.param(
        lambda d: d["edges"][1].update(claim_id="c99"),
        UnknownReference,
        "edges[1].claim_id",
        "'c99'",
        id="edge-without-claim",
    ),
    pytest.param(
        lambda d: d["claims"][2].update(answer_id="a9"),
        UnknownReference,
        "claims[2].answer_id",
        "'a9'",
        id="claim-without-answer",
    ),
    pytest.param(
        lambda d: d["claims"][0].update(required_fact_id="f-missing"),
        UnknownReference,
        "claims[0].required_fact_id",
        "'f-missing'",
        id="fact-not-in-protocol",
    ),
    pytest.param(
        lambda d: d["claims"][2].update(id="c1"),
        DuplicateId,
        "claims[2].id",
        "'c1'",
        id="duplicate-claim-id",
    ),
    pytest.param(
        lambda d: d.update(format="citeaudit.audit/v9"),
        InvalidValue,
        "format",
        "'citeaudit.audit/v9'",
        id="wrong-format",
    ),
    pytest.param(
        lambda d: d["answers"][0].update(question_id="q7"),
        UnknownReference,
        "answers[0].question_id",
        "'q7'",
        id="answer-without-question",
    ),
    pytest.param(
        lambda d: d["edges"][0].update(lable="supported"),
        InvalidValue,
        "edges[0].lable",
        "'supported'",
        id="misspelt-key",
    ),
    pytest.param(
        lambda d: d["claims"][0].update(start=5, end=500),
        InvalidValue,
        "claims[0]",
        "5..500",
        id="span-outside",
    ),
    pytest.param(
        lambda d: d["protocol"].update(official_domains=["github.io"]),
        InvalidValue,
        "protocol.official_domains[0]",
        "'github.io'",
        id="public-suffix-as-official",
    ),
    pytest.param(
        lambda d: d["protocol"].update(scoring="lenient"),
        InvalidValue,
        "protocol.scoring",
        "'lenient'",
        id="unknown-scoring",
    ),
]


@pytest.mark.parametrize(("change", "error", "path", "value"), CASES)
def test_library_error_names_file_path_and_value(
    write_json: Callable[[Any, str], Path],
    change: Callable[[dict[str, Any]], None],
    error: type[InputError],
    path: str,
    value: str,
) -> None:
    from citeaudit.ingest import read_file

    file = write_json(mutate(change), "bad.json")
    with pytest.raises(error) as raised:
        read_file(file)
    assert isinstance(raised.value, CiteauditError)
    message = str(raised.value)
    assert str(file) in message
    assert raised.value.location == path
    assert value in message


@pytest.mark.parametrize(("change", "error", "path", "value"), CASES)
def test_cli_exits_2_and_leaves_the_database_unchanged(
    cli: Callable[..., Result],
    write_json: Callable[[Any, str], Path],
    exporter_path: Path,
    db_path: Path,
    change: Callable[[dict[str, Any]], None],
    error: type[InputError],
    path: str,
    value: str,
) -> None:
    assert cli("ingest", exporter_path, "--db", db_path).exit_code == 0
    before = database_state(db_path)
    bad = write_json(mutate(change), "bad.json")
    result = cli("ingest", bad, "--db", db_path)
    assert result.exit_code == 2
    assert f"{bad}: {path}" in result.stderr
    assert value in result.stderr
    assert "Traceback" not in result.stderr
    assert database_state(db_path) == before


def test_malformed_json_names_line_and_column(cli: Callable[..., Result], tmp_path: Path, db_path: Path) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text('{"format": "citeaudit.audit/v1",\n  "protocol": {,}\n}', encoding="utf-8")
    result = cli("ingest", bad, "--db", db_path)
    assert result.exit_code == 2
    # the stray comma sits on line 2, column 16
    assert f"{bad}: line 2 column 16: invalid JSON" in result.stderr
    assert not db_path.exists(), "a rejected first import must not even create the database"
    from citeaudit.ingest import read_file

    with pytest.raises(MalformedInput):
        read_file(bad)


def test_unknown_content_lists_known_formats(cli: Callable[..., Result], tmp_path: Path, db_path: Path) -> None:
    bad = tmp_path / "answers.json"
    bad.write_text('{"format": "some-other-tool/v2", "items": []}', encoding="utf-8")
    result = cli("ingest", bad, "--db", db_path)
    assert result.exit_code == 2
    assert "'some-other-tool/v2'" in result.stderr
    assert "audit-json" in result.stderr
    from citeaudit.ingest import read_file

    with pytest.raises(UnknownFormat):
        read_file(bad)


def test_duplicate_answer_against_the_database_rolls_back_everything(
    cli: Callable[..., Result], write_json: Callable[[Any, str], Path], db_path: Path
) -> None:
    first = write_json(valid(), "first.json")
    assert cli("ingest", first, "--db", db_path).exit_code == 0
    before = database_state(db_path)
    # a different file that reuses answer id a1 (new claims and edges would be written before the clash)
    second = valid()
    second["claims"] = [claim("c10", "a1")]
    second["edges"] = [edge("c10", "https://y.org/1", "supported")]
    second["answers"].insert(0, answer("a0"))
    result = cli("ingest", write_json(second, "second.json"), "--db", db_path)
    assert result.exit_code == 2
    assert "answers[1].id" in result.stderr
    assert "'a1'" in result.stderr
    assert database_state(db_path) == before


def test_bad_file_in_a_batch_writes_nothing(
    cli: Callable[..., Result], write_json: Callable[[Any, str], Path], exporter_path: Path, db_path: Path
) -> None:
    bad = write_json(mutate(lambda d: d["edges"][0].update(label="yes")), "bad.json")
    result = cli("ingest", exporter_path, bad, "--db", db_path)
    assert result.exit_code == 2
    assert not db_path.exists()


def test_score_of_a_missing_file_is_a_clean_error(cli: Callable[..., Result], tmp_path: Path) -> None:
    result = cli("score", tmp_path / "nope.db")
    assert result.exit_code == 2
    assert "nope.db" in result.stderr
    assert "cannot read" in result.stderr
    assert not (tmp_path / "nope.db").exists()


def test_unknown_group_dimension_is_refused(cli: Callable[..., Result], four_claim_path: Path) -> None:
    result = cli("score", four_claim_path, "--by", "platfrom")
    assert result.exit_code == 2
    assert "'platfrom'" in result.stderr
    assert "platform" in result.stderr


def test_malformed_protocol_yaml(cli: Callable[..., Result], tmp_path: Path) -> None:
    bad = tmp_path / "protocol.yaml"
    bad.write_text("id: p\nversion: 1\nquestions:\n  - id: q1\n    text: [unclosed\n", encoding="utf-8")
    result = cli("protocol", "fingerprint", bad)
    assert result.exit_code == 2
    assert f"{bad}: line" in result.stderr
    assert "invalid YAML" in result.stderr


def test_edge_judgement_fields_without_label_are_not_dropped(write_json: Callable[[Any, str], Path]) -> None:
    from citeaudit.ingest import read_file

    doc = mutate(lambda d: d["edges"].append(edge("c1", "https://x.org/9", passage="Tank: 20 L")))
    with pytest.raises(InvalidValue) as raised:
        read_file(write_json(doc, "bad.json"))
    # a passage with no label would otherwise be silently lost
    assert raised.value.location == "edges[4].passage"


def test_json_path_for_nested_union_entries(write_json: Callable[[Any, str], Path]) -> None:
    from citeaudit.ingest import read_file

    doc = mutate(lambda d: d["protocol"].update(official_domains=["brand.com", {"host": 7}]))
    with pytest.raises(InvalidValue) as raised:
        read_file(write_json(doc, "bad.json"))
    assert raised.value.location.startswith("protocol.official_domains[1]")
    assert json.dumps(7) in str(raised.value)


# --- the tree of errors -------------------------------------------------------------------------------------------


def _drawn_tree() -> dict[str, str | None]:
    """Each class in the drawing in ``core/errors.py``'s docstring and the class drawn above it (None at the root)."""
    from citeaudit.core import errors

    assert errors.__doc__ is not None
    drawing = errors.__doc__.split("::", 1)[1].strip("\n").split("\n\n")[0].splitlines()
    parents: dict[str, str | None] = {}
    path: list[str] = []
    for line in drawing:
        name = line.lstrip(" │├└─")
        name = name.split()[0]
        # Four columns a level: "├── " under the root, "│   ├── " a level down.
        depth = (len(line) - len(line.lstrip(" │├└─"))) // 4 - 1
        assert name not in parents, f"{name} drawn twice"
        del path[depth:]
        parents[name] = path[-1] if path else None
        path.append(name)
    return parents


def _defined_tree() -> dict[str, str | None]:
    """Every subclass of CiteauditError defined in any citeaudit module, and its base."""
    import importlib
    import pkgutil

    import citeaudit

    for found in pkgutil.walk_packages(citeaudit.__path__, "citeaudit."):
        importlib.import_module(found.name)
    parents: dict[str, str | None] = {CiteauditError.__name__: None}
    waiting: list[type[CiteauditError]] = [CiteauditError]
    while waiting:
        base = waiting.pop()
        for cls in base.__subclasses__():
            if cls.__module__.startswith("citeaudit."):
                parents[cls.__name__] = base.__name__
                waiting.append(cls)
    return parents


def test_the_docstring_draws_every_error_under_its_base() -> None:
    drawn, defined = _drawn_tree(), _defined_tree()
    assert set(drawn) - set(defined) == set(), "drawn but not defined"
    assert set(defined) - set(drawn) == set(), "defined but not drawn"
    assert drawn == defined


def test_the_drawing_is_read_as_drawn() -> None:
    # The reader above on the drawing itself: the root, a first level, a second level, and back up a level.
    parents = _drawn_tree()
    assert parents["CiteauditError"] is None
    assert parents["InputError"] == "CiteauditError"
    assert parents["MalformedInput"] == "InputError"
    assert parents["SchemaVersionMismatch"] == "StoreError"
    assert parents["ProtocolError"] == "CiteauditError"


def test_naming_gives_an_unnamed_input_error_the_file_and_leaves_a_named_one_alone() -> None:
    with pytest.raises(DuplicateId) as caught, naming("audit.json"):
        raise DuplicateId(UNNAMED, "answers[1].id", "duplicate answer id 'a1'")
    assert str(caught.value) == "audit.json: answers[1].id: duplicate answer id 'a1'"
    with pytest.raises(InvalidValue) as kept, naming("outer.json"):
        raise InvalidValue("inner.json", "format", "expected x")
    assert str(kept.value) == "inner.json: format: expected x"


def test_a_reader_error_names_the_file_it_was_given(four_claim_path: Path) -> None:
    # The checks below the reader's boundary speak in locations; the boundary adds the name it was handed.
    document = json.loads(four_claim_path.read_text(encoding="utf-8"))
    document["protocol"]["questions"].append(document["protocol"]["questions"][0])
    with pytest.raises(DuplicateId) as caught:
        parse_audit_bytes(json.dumps(document).encode(), "named.json")
    assert str(caught.value) == "named.json: protocol.questions[1].id: duplicate question id 'fx-q1'"
