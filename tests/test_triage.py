"""The triage's rules and the Factcheck-Bench reader its thresholds are measured on."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import ClassVar

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from citeaudit.core.model import Label
from citeaudit.judges import JudgeRequest
from citeaudit.judges.triage import RelevanceJudge, TriageReason, TriageThresholds, triage_call

REPO = Path(__file__).resolve().parent.parent
STANCES = REPO.parent / "shared" / "data" / "factcheck-bench" / "subtasks" / "subtask3_claim_evidence_stance.jsonl"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_judges", REPO / "benchmarks" / "bench_judges.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_judges"] = module
    spec.loader.exec_module(module)
    return module


bench = _bench()

THRESHOLDS = TriageThresholds(conflict_min=0.5, irrelevant_below=0.2)


# -- the stance mapping -------------------------------------------------------------------------------------------


def test_each_stance_maps_to_its_label() -> None:
    assert bench.STANCE_LABELS == {
        "completely-support": Label.SUPPORTED,
        "partially-support": Label.PARTIAL,
        "refute": Label.CONFLICTING,
        "irrelevant": Label.IRRELEVANT,
    }


def test_reader_maps_each_line(tmp_path: Path) -> None:
    path = tmp_path / "stances.jsonl"
    rows = [
        {"claim": "c1", "evidence": "e1", "stance": "completely-support"},
        {"claim": "c1", "evidence": "e2", "stance": "partially-support"},
        {"claim": "c2", "evidence": "e3", "stance": "refute"},
        {"claim": "c2", "evidence": "e4", "stance": "irrelevant"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    pairs = bench.read_stance_pairs(path)
    assert [(p.claim, p.evidence, p.label, p.line) for p in pairs] == [
        ("c1", "e1", Label.SUPPORTED, 1),
        ("c1", "e2", Label.PARTIAL, 2),
        ("c2", "e3", Label.CONFLICTING, 3),
        ("c2", "e4", Label.IRRELEVANT, 4),
    ]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"claim": "c", "evidence": "e", "stance": "supports"}', "unknown stance 'supports'"),
        ('{"claim": "c", "evidence": "e"}', "'stance' must be a string, got None"),
        ("[1, 2]", "expected an object, got list"),
        ("{not json", "not JSON"),
    ],
)
def test_reader_names_file_line_and_value(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "stances.jsonl"
    path.write_text('{"claim": "c", "evidence": "e", "stance": "refute"}\n' + line + "\n")
    with pytest.raises(bench.StanceFileError) as raised:
        bench.read_stance_pairs(path)
    assert str(raised.value).startswith(f"{path}:2: ")
    assert message in str(raised.value)


@pytest.mark.skipif(not STANCES.exists(), reason="../shared/data/factcheck-bench is absent")
def test_real_file_has_the_published_counts() -> None:
    pairs = bench.read_stance_pairs(STANCES)
    # SOURCES.md: completely supports 696, partially supports 391, refutes 161, irrelevant 2 057; 3 305 pairs
    # (696 + 391 + 161 + 2057 = 3305).
    counts = {label: sum(1 for p in pairs if p.label is label) for label in Label}
    assert counts == {
        Label.SUPPORTED: 696,
        Label.PARTIAL: 391,
        Label.CONFLICTING: 161,
        Label.IRRELEVANT: 2057,
        Label.UNKNOWN: 0,
    }
    assert len(pairs) == 3305


def test_halves_keep_a_claims_pairs_together() -> None:
    assert {bench.half_of("the same claim") for _ in range(3)} == {bench.half_of("the same claim")}
    # Over many claims both halves are used.
    assert {bench.half_of(f"claim {i}") for i in range(50)} == {0, 1}


# -- the triage's rules -------------------------------------------------------------------------------------------


def test_conflict_in_an_on_topic_passage_is_offered_as_conflicting() -> None:
    call = triage_call(
        "c", ["off topic", "on topic"], [0.1, 0.7], [None, "quantity_mismatch: 20 L vs 20 mL"], THRESHOLDS
    )
    assert call is not None
    assert (call.reason, call.label, call.passage, call.similarity) == (
        TriageReason.CHECK_CONFLICT,
        Label.CONFLICTING,
        "on topic",
        0.7,
    )


def test_conflict_in_an_off_topic_passage_offers_nothing() -> None:
    # 0.3 < conflict_min 0.5, and the conflict keeps the edge out of "irrelevant" too (0.3 >= 0.2 anyway).
    assert triage_call("c", ["p"], [0.3], ["date_mismatch: 2019 vs 2020"], THRESHOLDS) is None
    # Even below irrelevant_below: a check fired, so neither reason is sure.
    assert triage_call("c", ["p"], [0.1], ["date_mismatch: 2019 vs 2020"], THRESHOLDS) is None


def test_all_passages_below_the_threshold_are_offered_as_irrelevant() -> None:
    call = triage_call("c", ["a", "b"], [0.05, 0.15], [None, None], THRESHOLDS)
    assert call is not None
    # The best passage (0.15) is shown; 0.15 < 0.2.
    assert (call.reason, call.label, call.passage) == (TriageReason.IRRELEVANT, Label.IRRELEVANT, "b")


def test_one_relevant_passage_keeps_the_edge_for_the_reviewer() -> None:
    # 0.2 is not below 0.2: the threshold is strict.
    assert triage_call("c", ["a", "b"], [0.05, 0.2], [None, None], THRESHOLDS) is None


def test_no_passage_is_never_offered() -> None:
    assert triage_call("c", [], [], [], THRESHOLDS) is None


def test_lengths_must_agree() -> None:
    with pytest.raises(ValueError, match="equally long"):
        triage_call("c", ["a"], [0.1, 0.2], [None], THRESHOLDS)


def test_thresholds_are_similarities() -> None:
    with pytest.raises(ValueError, match="conflict_min"):
        TriageThresholds(conflict_min=1.5, irrelevant_below=0.2)


@given(
    st.lists(st.tuples(st.floats(-1, 1), st.one_of(st.none(), st.just("quantity_mismatch: x"))), min_size=1, max_size=6)
)
def test_a_call_rests_on_a_passage_that_justifies_it(rows: list[tuple[float, str | None]]) -> None:
    passages = [f"p{i}" for i in range(len(rows))]
    similarities = [s for s, _ in rows]
    conflicts = [c for _, c in rows]
    call = triage_call("claim", passages, similarities, conflicts, THRESHOLDS)
    if call is None:
        return
    i = passages.index(call.passage)
    if call.reason is TriageReason.CHECK_CONFLICT:
        assert conflicts[i] is not None
        assert similarities[i] >= THRESHOLDS.conflict_min
    else:
        # irrelevant: no check fired anywhere and every passage is below the threshold
        assert all(c is None for c in conflicts)
        assert max(similarities) < THRESHOLDS.irrelevant_below


class _Encoder:
    """Unit vectors chosen per text: the claim on x, 'near' close to it, 'far' orthogonal."""

    rows: ClassVar[dict[str, tuple[float, float]]] = {"claim": (1.0, 0.0), "near": (0.8, 0.6), "far": (0.0, 1.0)}

    def encode(self, texts: list[str]) -> np.ndarray:
        return np.array([self.rows[t] for t in texts], dtype=np.float32)


def test_relevance_judge_says_irrelevant_only_below_the_threshold() -> None:
    judge = RelevanceJudge(_Encoder(), threshold=0.5)
    # cos(claim, far) = 0 < 0.5; cos(claim, near) = 0.8 >= 0.5
    assert judge.judge(JudgeRequest("claim", ("far",))).label is Label.IRRELEVANT
    near = judge.judge(JudgeRequest("claim", ("far", "near")))
    assert (near.label, near.quote) == (Label.UNKNOWN, "near")
    assert judge.judge(JudgeRequest("claim", ())).label is Label.UNKNOWN


# -- thresholds chosen on data ------------------------------------------------------------------------------------


def _edges(rows: list[tuple[float, str | None, Label]]) -> list[object]:
    return [
        bench.Edge(bench.StancePair(f"claim {i}", f"passage {i}", label, i + 1), similarity, conflict)
        for i, (similarity, conflict, label) in enumerate(rows)
    ]


def test_irrelevant_threshold_offers_the_most_edges_at_the_target_precision() -> None:
    edges = _edges(
        [
            (0.10, None, Label.IRRELEVANT),
            (0.20, None, Label.IRRELEVANT),
            (0.30, None, Label.SUPPORTED),
            (0.40, None, Label.IRRELEVANT),
        ]
    )
    # Below t = 0.21 (the first grid step above 0.20): the 0.10 and 0.20 edges, both irrelevant, 2/2 = 1.0. From
    # 0.31 the supported edge comes in: 2/3 = 0.667, then 3/4 = 0.75 from 0.41; both under 0.95. So 0.21, 2 of 2.
    assert bench.choose(edges, TriageReason.IRRELEVANT) == (0.21, 2, 2)


def test_conflict_threshold_keeps_only_on_topic_conflicts() -> None:
    edges = _edges(
        [
            (0.15, "date_mismatch: 1980 vs 1990", Label.IRRELEVANT),
            (0.55, "date_mismatch: 1980 vs 1990", Label.CONFLICTING),
            (0.70, "quantity_mismatch: 20 L vs 30 L", Label.CONFLICTING),
            (0.90, None, Label.SUPPORTED),
        ]
    )
    # conflict_min <= 0.15 offers the three conflicts, 2/3 = 0.667; from 0.16 to 0.55 the two on-topic ones, 2/2.
    # The smallest threshold offering those two is 0.16.
    assert bench.choose(edges, TriageReason.CHECK_CONFLICT) == (0.16, 2, 2)


def test_no_threshold_reaching_the_target_falls_back_to_the_most_precise() -> None:
    edges = _edges([(0.10, None, Label.SUPPORTED), (0.20, None, Label.IRRELEVANT)])
    # t in (0.10, 0.20]: 0/1; t > 0.20: 1/2 = 0.5, the most precise, first reached at 0.21.
    assert bench.choose(edges, TriageReason.IRRELEVANT) == (0.21, 1, 2)
