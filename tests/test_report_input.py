"""The report's evidence read from a database as rows (``store.report_input``) is the evidence built from the whole
audit with every judgement history (``report.evidence.edge_rows``): same rows, same sets, same JSON blob."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders import answer, claim, document, edge, protocol
from citeaudit.cli.report import _with_official
from citeaudit.core.model import Audit, RunKind
from citeaudit.core.scope import Scope, select_audit
from citeaudit.core.scored import ScoredPath
from citeaudit.interchange.reader import audit_from_document
from citeaudit.interchange.schema import AuditDocument
from citeaudit.report.evidence import EvidenceIndex, build_index, edge_rows, mark_official
from citeaudit.scoring.paths import score_path
from citeaudit.store import Store
from citeaudit.store.pipeline import BackgroundRead
from citeaudit.store.reading import read_audit
from citeaudit.store.report_input import (
    SHOWN,
    STATES,
    ReportRows,
    read_edge_reads,
    read_judged_texts,
    read_report_input,
    with_official,
)
from citeaudit.store.review_rules import policy_reviews_required

LABELS = ("supported", "partial", "conflicting", "irrelevant", "unknown")

# The judgement histories an edge can have (reviewer, origin, stage, label index, minute); labels are offsets into
# LABELS drawn per edge, so two reviewers may agree or not.
_SHAPES: tuple[tuple[tuple[str, str, str, int, int], ...], ...] = (
    (),
    (("ann", "model", "review", 0, 0),),
    (("ann", "human", "review", 0, 1),),
    (("ann", "model", "review", 1, 0), ("ann", "human", "review", 0, 1)),
    (("ann", "human", "review", 0, 1), ("ann", "model", "review", 1, 2)),
    (("ann", "human", "review", 0, 1), ("bo", "human", "review", 1, 2)),
    (("ann", "human", "review", 0, 1), ("ann", "human", "review", 1, 1)),
    (("ann", "human", "review", 0, 1), ("bo", "human", "review", 1, 2), ("cy", "human", "adjudication", 2, 3)),
)
_EDGE = st.tuples(st.integers(0, len(_SHAPES) - 1), st.lists(st.sampled_from(LABELS), min_size=3, max_size=3))


def _judgement(reviewer: str, origin: str, stage: str, label: str, minute: int, n: int) -> dict[str, Any]:
    found: dict[str, Any] = {
        "label": label,
        "origin": origin,
        "stage": "review" if origin == "model" else stage,
        "passage": f"passage {n}",
        "reasoning": f"because {n}",
        "period": "2026" if n % 2 else None,
        "created_at": f"2026-01-01T00:0{minute}:00Z",
    }
    if origin == "human":
        found["reviewer"] = reviewer
    else:
        found.update(judge="rules", judge_model="m", judge_version="1")
    return found


def _history(shape: int, labels: list[str]) -> list[tuple[str, str, str, str, int]]:
    if any(stage == "adjudication" for _, _, stage, _, _ in _SHAPES[shape]) and labels[0] == labels[1]:
        # only a dispute is adjudicated: the second reviewer takes the next label
        labels = [labels[0], LABELS[(LABELS.index(labels[0]) + 1) % len(LABELS)], labels[2]]
    return [(who, origin, stage, labels[k], minute) for who, origin, stage, k, minute in _SHAPES[shape]]


def _document(histories: list[list[tuple[str, str, str, str, int]]], prefix: str = "") -> dict[str, Any]:
    """Two answers on two engines; edge i is claim c{i} (of answer a{i % 2}) citing page i, judged as
    ``histories[i]`` says (an empty history: an edge nobody judged). ``prefix``: before every id and host."""
    answers = [
        answer(f"{prefix}a0", platform="p0", run=f"{prefix}r1", citations=[]),
        answer(f"{prefix}a1", platform="p1", run=f"{prefix}r2", citations=[]),
    ]
    claims, edges = [], []
    for i, history in enumerate(histories):
        claims.append(claim(f"{prefix}c{i}", f"{prefix}a{i % 2}", "q1f1" if i % 3 else None))
        judgements = [_judgement(*j, n=10 * i + k) for k, j in enumerate(history)]
        edges.append(edge(f"{prefix}c{i}", f"https://{prefix}s{i}.example/page", judgements=judgements))
    return document(answers, claims, edges, protocol(official=["s1.example"]))


def _rows(read: ReportRows) -> list[tuple[str, ...]]:
    """Each edge read as (claim id, source key, shown label, passage, period, reasoning, review), its texts parsed."""
    rows = []
    for i, (claim_pk, source_pk) in enumerate(zip(read.claim_pks.tolist(), read.source_pks.tolist(), strict=True)):
        shown, state = SHOWN[int(read.codes[i])], STATES[int(read.states[i])]
        texts = json.loads(f"[{read.texts[i]}]")
        review = state + json.loads(read.reviewers[i])
        rows.append((read.claim_ids[claim_pk], read.source_keys[source_pk], shown, *texts, review))
    return rows


def _database(path: Path, doc: dict[str, Any], policy: str) -> None:
    audit = audit_from_document(AuditDocument.model_validate(doc), "generated")
    with Store(path) as store:
        store.import_audit(audit, json.dumps(doc).encode(), "generated.json")
    if policy != "single":
        from citeaudit.store.review import ReviewStore

        ReviewStore.prepare(path)
        with ReviewStore(path) as review:
            review.accounts.set_setting("test", "policy", policy)


def _blobs(path: Path) -> tuple[str, str]:
    """The evidence blob built the old way (the whole audit with its edges) and the new way (rows from SQL).

    The edges' columns and texts read on a thread of their own (``BackgroundRead``, as the report reads them) are
    checked to give the rows read with the rest."""
    every = Scope(run_kinds=frozenset(RunKind))
    with Store(path) as store:
        pk = store.choose_protocol(None, every)
        whole = store.load_audit(pk)
        without, rows = read_report_input(store, pk)
        ahead = BackgroundRead(path, lambda db: read_edge_reads(db, pk), name="test-edges")
        judged = ahead.result().judged
        assert (judged is not None) == (policy_reviews_required(store.connection) == 1)
        if judged is not None:
            assert judged == read_judged_texts(store.connection, pk)
        again = read_report_input(store, pk, ahead)[1]
        assert _rows(again) == _rows(rows)
        assert again.codes.tolist() == rows.codes.tolist()
        assert again.official == rows.official
    old = build_index(select_audit(whole, every)[0], str, {}, None)
    new = build_index(select_audit(without, every)[0], str, {}, None, rows)
    return old.to_json(), new.to_json()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(_EDGE, min_size=1, max_size=6),
    st.sampled_from(["single", "double"]),
)
def test_rows_read_from_the_ledger_build_the_same_evidence_as_the_whole_audit(
    tmp_path_factory: Any, shapes: list[tuple[int, list[str]]], policy: str
) -> None:
    path = tmp_path_factory.mktemp("db") / "audit.db"
    _database(path, _document([_history(shape, labels) for shape, labels in shapes]), policy)
    old, new = _blobs(path)
    assert new == old


_ODD = st.one_of(
    st.none(),
    st.sampled_from(['"', "\\", "</script>", "<!--", "\u2028", "\u2029", "\x00", "\x1f\t\n\r\b\f", "\x7f", "é ✓ 𝄞"]),
    st.text(st.characters(exclude_categories=("Cs",)), max_size=12),
)
"""A judgement's free text as a person may type it (no lone surrogate: that is no UTF-8, and SQLite keeps UTF-8),
or nothing (NULL in the ledger)."""


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.tuples(st.integers(1, len(_SHAPES) - 1), _ODD, _ODD, _ODD, _ODD), min_size=1, max_size=4),
    st.sampled_from(["single", "double"]),
)
def test_the_rows_sqlite_writes_are_the_rows_python_writes_for_any_text(
    tmp_path_factory: Any, edges: list[tuple[int, str | None, str | None, str | None, str | None]], policy: str
) -> None:
    # each edge's judgements carry the drawn passage, period, reasoning and (for a person) reviewer name: SQLite
    # quotes them as JSON (json_quote) where the audit read whole has Python write them; both blobs must be the
    # same text, and no "<" may be left in it (the blob sits inside a <script> element)
    doc = _document([_history(shape, list(LABELS[:3])) for shape, *_ in edges])
    for found, (_, passage, period, reasoning, reviewer) in zip(doc["edges"], edges, strict=True):
        for judgement in found["judgements"]:
            judgement.update(passage=passage, period=period, reasoning=reasoning)
            if judgement["origin"] == "human" and reviewer:
                judgement["reviewer"] = judgement["reviewer"] + reviewer
    path = tmp_path_factory.mktemp("db") / "audit.db"
    _database(path, doc, policy)
    old, new = _blobs(path)
    assert new == old
    assert "<" not in new
    assert json.loads(new)["edges"] == json.loads(old)["edges"]


def test_an_edge_row_carries_the_latest_human_judgement_and_the_outcome(tmp_path: Path) -> None:
    # c0: ann says partial at minute 1, bo supported at minute 2 → two reviewers disagree: disputed, no label; the
    # latest human judgement (by row order) is bo's. c1: a model only → pending, its judgement is the one shown.
    # c2: nobody judged it → pending with nothing shown.
    histories = [
        [("ann", "human", "review", "partial", 1), ("bo", "human", "review", "supported", 2)],
        [("ann", "model", "review", "supported", 0)],
        [],
    ]
    path = tmp_path / "audit.db"
    _database(path, _document(histories), "single")
    with Store(path) as store:
        _, read = read_report_input(store, store.choose_protocol(None, Scope(run_kinds=frozenset(RunKind))))
    rows = _rows(read)
    # the protocol's one official domain is s1.example: of the three pages cited, only c1's
    assert read.official == {"https://s1.example/page"}
    # judgement n = 10 * edge + position: c0's second is n = 1 (odd: period 2026), c1's first n = 10 (no period)
    assert rows == [
        ("c0", "https://s0.example/page", "disputed", "passage 1", "2026", "because 1", "disputed · bo"),
        ("c1", "https://s1.example/page", "pending", "passage 10", "", "because 10", "pending"),
        ("c2", "https://s2.example/page", "pending", "", "", "", "pending"),
    ]


def test_the_whole_audit_gives_the_same_rows(tmp_path: Path) -> None:
    histories = [
        [("ann", "human", "review", "supported", 0)],
        [
            ("ann", "human", "review", "partial", 1),
            ("bo", "human", "review", "supported", 2),
            ("cy", "human", "adjudication", "conflicting", 3),
        ],
    ]
    path = tmp_path / "audit.db"
    _database(path, _document(histories), "single")
    with Store(path) as store:
        pk = store.choose_protocol(None, Scope(run_kinds=frozenset(RunKind)))
        whole = read_audit(store.connection, store.load_audit(pk).protocol, pk)
        rows = _rows(read_report_input(store, pk)[1])
    # c0: one reviewer → labelled supported; c1: ann and bo disagree, cy's adjudication decides → conflicting
    assert rows == edge_rows(whole)
    assert [r[2] for r in rows] == ["supported", "conflicting"]
    assert [r[6] for r in rows] == ["labelled · ann", "adjudicated · cy"]


def test_a_database_of_two_protocols_gives_each_its_own_edges_and_judgements(tmp_path: Path) -> None:
    path = tmp_path / "audit.db"
    first = _document([_history(5, ["supported", "partial", "unknown"]), _history(1, list(LABELS[:3]))])
    second = _document([_history(2, ["conflicting", "unknown", "unknown"]), _history(3, list(LABELS[:3]))], "o")
    second["protocol"] = protocol(official=["os1.example"], id="other-protocol")
    _database(path, first, "single")
    _database(path, second, "single")
    every = Scope(run_kinds=frozenset(RunKind))
    with Store(path) as store:
        for selector, shown in (
            ("test-protocol", ["disputed", "pending"]),
            ("other-protocol", ["conflicting", "supported"]),
        ):
            pk = store.choose_protocol(selector, every)
            without, read = read_report_input(store, pk)
            rows = _rows(read)
            # first: c0 ann supported, bo partial → disputed; c1 a model's label only → pending. second: c0 ann
            # conflicting → labelled; c1 a model's partial, then ann's supported → labelled supported
            assert [r[2] for r in rows] == shown
            old = build_index(select_audit(store.load_audit(pk), every)[0], str, {}).to_json()
            assert build_index(select_audit(without, every)[0], str, {}, None, read).to_json() == old


def _dumped(index: EvidenceIndex) -> str:
    """The blob as the standard library writes it (what the report has always carried)."""
    body = {
        "answers": index.answers,
        "claims": index.claims,
        "sources": index.sources,
        "edges": {
            "K": SHOWN,
            "R": STATES,
            "c": index.edge_claim,
            "s": index.edge_source,
            "k": [] if index.edge_codes is None else index.edge_codes.tolist(),
            "r": [] if index.edge_states is None else index.edge_states.tolist(),
            "t": [value for text in index.edge_texts for value in json.loads(f"[{text}]")],
            "v": [json.loads(text) for text in index.edge_reviewers],
            "l": [json.loads(text) for text in index.edge_link_texts],
        },
        "pairs": index.pairs,
        "official": {str(a): rows for a, rows in index.official_answers.items()},
        "sets": index.packed_sets(),
    }
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.text(), max_size=5),
    st.lists(st.one_of(st.none(), st.booleans(), st.integers()), min_size=3, max_size=3),
)
def test_the_blob_is_the_text_the_standard_library_writes(texts: list[str], values: list[Any]) -> None:
    edge = json.dumps(values, ensure_ascii=False, separators=(",", ":"))[1:-1]  # three values, as a row holds them
    reviewer = json.dumps(" · " + (texts[0] if texts else "x </script>"), ensure_ascii=False)
    index = EvidenceIndex(
        claims=[[text, n, None] for n, text in enumerate(texts)],
        edge_texts=[edge, edge],
        edge_reviewers=['""', reviewer],
        edge_claim=[0, 1],
        edge_source=[1, 0],
        edge_codes=np.array([0, 6]),
        edge_states=np.array([1, 0]),
        edge_link_texts=['""', json.dumps(texts[-1] if texts else "x", ensure_ascii=False)],
    )
    index.add("k", "title </script>", "e", [3, 1, 3], [2])
    assert index.to_json() == _dumped(index)


def test_a_lone_surrogate_is_written_as_the_standard_library_writes_it() -> None:
    # a string with half a surrogate pair is no UTF-8: the Rust writer refuses it and json writes the blob
    index = EvidenceIndex(claims=[["half \ud800 pair", 0, None]])
    assert index.to_json() == _dumped(index)
    assert "half \ud800 pair" in index.to_json()


def test_the_scores_by_question_read_beside_the_others_are_those_read_apart(
    four_claim_path: Path, tmp_path: Path
) -> None:
    from citeaudit.scoring.paths import score_path

    path = tmp_path / "audit.db"
    _database(path, _document([_history(2, list(LABELS[:3])), _history(5, list(LABELS[:3])), []]), "single")
    every = Scope(run_kinds=frozenset(RunKind))
    for source in (path, four_claim_path):
        both = score_path(source, scope=every, by=("platform",), also_by=("question",))
        apart = score_path(source, scope=every, by=("question",))
        assert both.also == apart.result
        assert score_path(source, scope=every, by=("platform",)).also is None
    # the database: one question (q1) answered twice, so one group of two answers
    assert [g.answers for g in score_path(path, scope=every, also_by=("question",)).also.groups] == [2]


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), st.sampled_from(['a"b', "a\\b", "\x00", "\x7f", "\u2028", "</script>", "https://x/é?a=1"])))
def test_a_link_is_quoted_as_the_standard_library_quotes_it(text: str) -> None:
    # links with no character JSON escapes are quoted as they are, the others written by the JSON writer
    from citeaudit.report.evidence import _json_string

    assert _json_string(text) == json.dumps(text, ensure_ascii=False)


def _official_case(tmp_path: Path) -> tuple[Path, Scope, ScoredPath, Audit, ReportRows, ReportRows]:
    """Three edges citing s0, s1 and s2.example, the protocol's official domain s1.example: the database, the scope,
    its scores, and the audit with its rows read with the official sources decided and undecided."""
    path = tmp_path / "audit.db"
    _database(path, _document([_history(shape, list(LABELS[:3])) for shape in (1, 2, 0)]), "single")
    every = Scope(run_kinds=frozenset(RunKind))
    scored = score_path(path, scope=every)
    assert scored.source_official is not None
    with Store(path) as store:
        pk = store.choose_protocol(None, every)
        whole, decided = read_report_input(store, pk)
        _, undecided = read_report_input(store, pk, official=False)
    return path, every, scored, whole, decided, undecided


def test_the_scores_official_sources_mark_the_index_as_the_rows_own_decision_does(tmp_path: Path) -> None:
    _, every, scored, whole, decided, undecided = _official_case(tmp_path)
    assert scored.source_official is not None
    # the one page on the protocol's official domain, s1.example
    assert decided.official == {key for key in decided.source_keys.values() if "//s1.example/" in key}
    assert len(decided.official) == 1
    assert undecided.official is None
    audit = select_audit(whole, every)[0]
    index = build_index(audit, str, {}, None, undecided)
    assert not any(row[4] for row in index.sources)  # left for mark_official
    assert not index.official_answers
    marked = with_official(undecided, scored.source_official)
    assert marked.official == decided.official
    mark_official(index, audit, marked.official)
    assert index.to_json() == build_index(audit, str, {}, None, decided).to_json()
    # c1 of answer a1 has the one edge to the official page; no answer cites it otherwise
    (official,) = decided.official
    assert index.official_answers == {index.answer_of["a1"]: [index.source_row[official]]}
    with pytest.raises(ValueError, match="covers 1 source keys"):
        with_official(undecided, scored.source_official[:1])  # a mask made before the other sources were written


def test_the_report_decides_the_official_sources_itself_when_the_scores_cannot_tell_them(tmp_path: Path) -> None:
    path, _, scored, whole, decided, undecided = _official_case(tmp_path)
    assert scored.source_official is not None
    nothing = np.zeros(len(scored.source_official), dtype=np.bool_)
    for cannot in (
        dataclasses.replace(scored, source_official=None),  # an audit file's scores, or an SQL engine's
        dataclasses.replace(scored, source_official=scored.source_official[:1]),  # an earlier state of the ledger
        # another protocol's official domains: its mask (nothing official) is not the report's
        dataclasses.replace(
            scored, protocol=dataclasses.replace(scored.protocol, official_domains=()), source_official=nothing
        ),
    ):
        assert _with_official(path, whole.protocol, undecided, cannot).official == decided.official
    # the scores' own mask is taken as it is (here one that marks nothing, under the same domains)
    taken = dataclasses.replace(scored, source_official=nothing)
    assert _with_official(path, whole.protocol, undecided, taken).official == frozenset()


def test_an_answer_citing_an_official_page_without_an_edge_to_it_is_listed_with_it(tmp_path: Path) -> None:
    # a0 cites the official page in its citations only; its one claim's edge goes to s0.example (not official)
    doc = document(
        [answer("a0", citations=["https://s1.example/cited"])],
        [claim("c0", "a0", "q1f1")],
        [edge("c0", "https://s0.example/page", judgements=[_judgement("ann", "human", "review", "supported", 1, 0)])],
        protocol(official=["s1.example"]),
    )
    path = tmp_path / "audit.db"
    _database(path, doc, "single")
    every = Scope(run_kinds=frozenset(RunKind))
    scored = score_path(path, scope=every)
    assert scored.source_official is not None
    assert scored.result.overall.official_rate.value == 1.0  # 1/1: the one answer cites an official page
    with Store(path) as store:
        whole, undecided = read_report_input(store, store.choose_protocol(None, every), official=False)
    audit = select_audit(whole, every)[0]
    from_file = build_index(audit, str, {})  # decided by the matcher, from each source's URL
    from_rows = build_index(audit, str, {}, None, undecided)
    mark_official(from_rows, audit, with_official(undecided, scored.source_official).official)
    for index in (from_file, from_rows):
        cited = index.source_row["https://s1.example/cited"]
        assert index.official_answers == {index.answer_of["a0"]: [cited]}
        assert [row[4] for row in index.sources] == [row == cited for row in range(len(index.sources))]
