"""Model judgements keep their provenance (judge, model, version, prompt hash, confidence) everywhere they go."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from builders import answer, claim, document, edge
from citeaudit import Store, audit_to_document, load_audit
from citeaudit.core.errors import InvalidValue, StoreError
from citeaudit.core.model import Audit, Label, Origin, Severity
from citeaudit.ingest import ingest_file
from citeaudit.store import migrations

PROVENANCE = {
    "judge": "openai",
    "judge_model": "test-model",
    "judge_version": "edge-label-v1",
    "prompt_sha256": "sha256:" + "ab" * 32,
    "confidence": 0.75,
}


def _audit_with(judgement: dict[str, object]) -> dict[str, object]:
    return document(
        [answer("a1", citations=["https://brand.com/ax220"])],
        [claim("c1", "a1")],
        [edge("c1", "https://brand.com/ax220", judgements=[judgement])],
    )


def _audit_with_a_model_judgement() -> dict[str, object]:
    return _audit_with({"label": "supported", "origin": "model", "reviewer": "openai:test-model", **PROVENANCE})


def _stored(tmp_path: Path, path: Path) -> Audit:
    """The audit in file ``path`` as a new database stores it."""
    with Store(tmp_path / "audit.db") as store:
        ingest_file(store, path)
        (protocol_pk,) = store._db.execute("SELECT pk FROM protocols").fetchone()
        return store.load_audit(protocol_pk)


def test_provenance_survives_file_database_and_export(tmp_path: Path) -> None:
    path = tmp_path / "audit.json"
    path.write_text(json.dumps(_audit_with_a_model_judgement()), encoding="utf-8")
    audit = load_audit(path)
    (judgement,) = audit.edges[0].judgements
    assert judgement.origin is Origin.MODEL
    assert (judgement.judge, judgement.judge_model, judgement.judge_version) == (
        "openai",
        "test-model",
        "edge-label-v1",
    )
    assert judgement.confidence == 0.75
    # a model judgement alone leaves the edge pending: no final label
    assert audit.edges[0].final_label is None
    stored = _stored(tmp_path, path)
    (again,) = stored.edges[0].judgements
    assert again == judgement
    exported = audit_to_document(stored)
    (row,) = exported["edges"][0]["judgements"]  # type: ignore[index]
    assert {k: row[k] for k in PROVENANCE} == PROVENANCE
    assert row["label"] == str(Label.SUPPORTED)


def test_confidence_outside_zero_one_is_refused(tmp_path: Path) -> None:
    doc = _audit_with_a_model_judgement()
    doc["edges"][0]["judgements"][0]["confidence"] = 1.5  # type: ignore[index]
    path = tmp_path / "audit.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InvalidValue, match="confidence"):
        load_audit(path)


def test_a_database_of_the_first_schema_gains_the_provenance_columns(db_path: Path, four_claim_path: Path) -> None:
    # a database as the first release wrote it: schema version 1, judgements without provenance columns
    with sqlite3.connect(db_path) as db:
        db.executescript(migrations.MIGRATIONS[0])
        db.execute("PRAGMA user_version = 1")
    with Store(db_path) as store:
        assert store.schema_version == len(migrations.MIGRATIONS)
        columns = {row[1] for row in store._db.execute("PRAGMA table_info(judgements)")}
        ingest_file(store, four_claim_path)
        (protocol_pk,) = store._db.execute("SELECT pk FROM protocols").fetchone()
        audit = store.load_audit(protocol_pk)
    assert {"judge", "judge_model", "judge_version", "prompt_sha256", "confidence"} <= columns
    # the four-claim fixture's three judged edges keep their labels; their provenance is empty
    assert sorted(str(e.final_label) for e in audit.edges) == ["conflicting", "supported", "unknown"]
    assert all(j.judge is None for e in audit.edges for j in e.judgements)


def test_the_database_refuses_a_confidence_above_one(db_path: Path, four_claim_path: Path) -> None:
    with Store(db_path) as store:
        ingest_file(store, four_claim_path)
        with pytest.raises(sqlite3.IntegrityError):
            store._db.execute(
                "INSERT INTO judgements (edge_pk, label, origin, stage, confidence) "
                "SELECT pk, 'supported', 'model', 'review', 1.5 FROM edges LIMIT 1"
            )


def test_a_judgements_severity_survives_file_database_and_export(tmp_path: Path) -> None:
    human = {"label": "conflicting", "reviewer": "li", "severity": "critical", "reasoning": "wrong pressure"}
    path = tmp_path / "audit.json"
    path.write_text(json.dumps(_audit_with(human)), encoding="utf-8")
    (judgement,) = load_audit(path).edges[0].judgements
    assert judgement.severity is Severity.CRITICAL
    stored = _stored(tmp_path, path)
    (again,) = stored.edges[0].judgements
    assert again == judgement
    (row,) = audit_to_document(stored)["edges"][0]["judgements"]  # type: ignore[index]
    assert row["severity"] == "critical"


def test_a_severity_that_is_none_of_the_four_is_refused(tmp_path: Path) -> None:
    doc = _audit_with_a_model_judgement()
    doc["edges"][0]["judgements"][0]["severity"] = "extreme"  # type: ignore[index]
    path = tmp_path / "audit.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InvalidValue, match=r"edges\[0\]\.judgements\[0\]\.severity"):
        load_audit(path)


def test_a_stored_severity_that_is_none_of_the_four_is_named(db_path: Path, four_claim_path: Path) -> None:
    with Store(db_path) as store:
        ingest_file(store, four_claim_path)
    with sqlite3.connect(db_path) as db:
        (pk,) = db.execute("SELECT min(pk) FROM judgements").fetchone()
        # written by hand, as no citeaudit writer can: reading it back names the row and the value
        db.execute("DROP TRIGGER judgements_immutable")
        db.execute("UPDATE judgements SET severity = 'extreme' WHERE pk = ?", (pk,))
    with Store(db_path) as store, pytest.raises(StoreError, match=f"judgement {pk} has severity 'extreme'"):
        store.load_audit(store.choose_protocol(None))
