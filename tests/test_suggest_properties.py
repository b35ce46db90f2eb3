"""Invariants of ``suggest`` on any snapshot text hypothesis finds (snapshots recorded straight into the store, no
network): stored passages point into the snapshot, ranks run 1..min(k, passages), human labels and states stay
as they were, and a rerun writes nothing; the default window units are runs of at most three stored passages that
never overlap."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from citeaudit.core.model import SourceStatus
from citeaudit.interchange import parse_audit_bytes
from citeaudit.judges import ChecksJudge
from citeaudit.store import Store
from citeaudit.store.records import Document, FetchOutcome
from citeaudit.suggest import suggest_edges

_WORDS = st.sampled_from(["AX220", "tank", "20 L", "30 L", "12 bar", "pump", "outdoor", "the", "has", "is", "."])
_PARAGRAPH = st.lists(_WORDS, min_size=1, max_size=30).map(" ".join)
_TEXT = st.lists(_PARAGRAPH, min_size=1, max_size=8).map("\n\n".join)
_CLAIM = st.lists(_WORDS, min_size=1, max_size=8).map(" ".join)


def _database(path: Path, text: str, claims: list[str], labels: list[str | None]) -> None:
    url = "https://brand.com/ax220"
    doc = {
        "format": "citeaudit.audit/v1",
        "protocol": {
            "id": "p",
            "version": "1",
            "official_domains": ["brand.com"],
            "questions": [{"id": "q1", "text": "?", "required_facts": []}],
        },
        "answers": [{"id": "a1", "question_id": "q1", "run_id": "r1", "text": "x"}],
        "claims": [{"id": f"c{i}", "answer_id": "a1", "text": claim} for i, claim in enumerate(claims)],
        "edges": [
            {"claim_id": f"c{i}", "url": url, **({"label": label, "reviewer": "li"} if label else {})}
            for i, label in enumerate(labels)
        ],
    }
    payload = json.dumps(doc).encode()
    body = text.encode()
    document = Document(hashlib.sha256(body).hexdigest(), "text/plain", body, text)
    outcome = FetchOutcome(
        url, SourceStatus.RESOLVED, None, (), "2026-11-30T00:00:00+00:00", final_url=url, document=document
    )
    with Store(path) as store:
        store.import_audit(parse_audit_bytes(payload, "p.json"), payload, "p.json")
        store.sources.record_fetch(store.sources.pk(url), outcome)


@settings(max_examples=60, deadline=None)
@given(
    text=_TEXT,
    claims=st.lists(_CLAIM, min_size=1, max_size=4),
    k=st.integers(min_value=1, max_value=5),
    data=st.data(),
)
def test_stored_passages_point_into_the_snapshot(text: str, claims: list[str], k: int, data: st.DataObject) -> None:
    labels = data.draw(
        st.lists(st.sampled_from([None, "supported", "conflicting"]), min_size=len(claims), max_size=len(claims))
    )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "p.db"
        _database(path, text, claims, labels)
        with sqlite3.connect(path) as db:
            states = db.execute("SELECT pk, review_state, final_code FROM edges ORDER BY pk").fetchall()
            (passages,) = db.execute("SELECT count(*) FROM passages").fetchone()
        report = suggest_edges(path, ChecksJudge(), k=k, method="bm25")  # single passages
        unlabelled = sum(label is None for label in labels)
        assert (report.edges, report.suggested) == (unlabelled, unlabelled)
        with sqlite3.connect(path) as db:
            assert db.execute("SELECT pk, review_state, final_code FROM edges ORDER BY pk").fetchall() == states
            for (suggestion_pk,) in db.execute("SELECT pk FROM suggestions").fetchall():
                rows = db.execute(
                    'SELECT sp.rank, sp.start, sp."end", p.start, p."end", sp.score FROM suggested_passages sp '
                    "JOIN suggestions s ON s.pk = sp.suggestion_pk JOIN passages p "
                    "ON p.document_sha256 = s.document_sha256 AND p.ordinal = sp.ordinal "
                    "WHERE sp.suggestion_pk = ? ORDER BY sp.rank",
                    (suggestion_pk,),
                ).fetchall()
                assert [r[0] for r in rows] == list(range(1, min(k, passages) + 1))
                assert all((r[1], r[2]) == (r[3], r[4]) and 0 <= r[1] < r[2] <= len(text) for r in rows)
                assert [r[5] for r in rows] == sorted((r[5] for r in rows), reverse=True)
            counts = db.execute(
                "SELECT (SELECT count(*) FROM judgements), (SELECT count(*) FROM suggested_passages)"
            ).fetchone()
        assert suggest_edges(path, ChecksJudge(), k=k).suggested == 0
        with sqlite3.connect(path) as db:
            assert (
                db.execute(
                    "SELECT (SELECT count(*) FROM judgements), (SELECT count(*) FROM suggested_passages)"
                ).fetchone()
                == counts
            )


@settings(max_examples=40, deadline=None)
@given(text=_TEXT, claims=st.lists(_CLAIM, min_size=1, max_size=3), k=st.integers(min_value=1, max_value=5))
def test_default_window_units_are_disjoint_runs_of_stored_passages(text: str, claims: list[str], k: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "w.db"
        _database(path, text, claims, [None] * len(claims))
        assert suggest_edges(path, ChecksJudge(), k=k).suggested == len(claims)
        with sqlite3.connect(path) as db:
            passages = db.execute('SELECT ordinal, start, "end" FROM passages ORDER BY ordinal').fetchall()
            starts = {ordinal: start for ordinal, start, _ in passages}
            ends = {end: ordinal for ordinal, _, end in passages}
            assert {m for (m,) in db.execute("SELECT method FROM suggestions")} == {"window"}
            for (suggestion_pk,) in db.execute("SELECT pk FROM suggestions").fetchall():
                units = db.execute(
                    'SELECT rank, ordinal, start, "end", score FROM suggested_passages WHERE suggestion_pk = ? '
                    "ORDER BY rank",
                    (suggestion_pk,),
                ).fetchall()
                # at least one unit, at most k and at most one per passage, ranked 1..n with falling scores
                assert 1 <= len(units) <= min(k, len(passages))
                assert [u[0] for u in units] == list(range(1, len(units) + 1))
                assert [u[4] for u in units] == sorted((u[4] for u in units), reverse=True)
                spans = []
                for _, ordinal, start, end, _ in units:
                    # a unit starts at its first passage and ends at the end of that one or of one of the next two
                    assert start == starts[ordinal]
                    assert ordinal <= ends[end] <= ordinal + 2
                    spans.append((ordinal, ends[end]))
                # no passage is shown twice
                covered = [i for first, last in spans for i in range(first, last + 1)]
                assert len(covered) == len(set(covered))
