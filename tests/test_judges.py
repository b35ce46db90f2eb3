"""The three judges behind one protocol: checks, a local NLI model built here, and a chat-completions server."""

from __future__ import annotations

import importlib.util
import json
import math
import os
from pathlib import Path

import pytest

from citeaudit.core.errors import InvalidValue, JudgeError
from citeaudit.core.model import Label, Origin, review_outcome
from citeaudit.judges import (
    LABEL_ORDER,
    ChecksJudge,
    Judge,
    JudgeRequest,
    OpenAIJudge,
    make_judge,
    map_nli_label,
    prompt_sha256,
)
from judge_servers import chat_server
from nli_models import build_nli_model

HAS_MODELS = importlib.util.find_spec("transformers") is not None and importlib.util.find_spec("torch") is not None
# Locally the model tests may skip without the extra; in CI (CI=true) they run, and fail if the extra is missing.
needs_models = pytest.mark.skipif(
    not HAS_MODELS and not os.environ.get("CI"), reason="needs pip install 'citeaudit[models]'"
)

CLAIM = "The AX220 has a 20 L tank"


# --- checks -----------------------------------------------------------------------------------------------------


def test_checks_judge_refutes_but_never_confirms() -> None:
    judge = ChecksJudge()
    assert isinstance(judge, Judge)
    wrong = judge.judge(JudgeRequest(CLAIM, ("AX220 tank capacity: 20 mL",)))
    assert wrong.label is Label.CONFLICTING
    assert wrong.quote == "20 mL"
    assert wrong.reasoning is not None
    assert "thousandfold" in wrong.reasoning
    right = judge.judge(JudgeRequest(CLAIM, ("AX220 tank capacity: 20 000 mL",)))
    assert right.label is Label.UNKNOWN  # agreement on the number is not support
    assert right.failure is None


def test_checks_judge_finds_the_conflict_in_any_passage() -> None:
    request = JudgeRequest(CLAIM, ("Colour: red", "The AX320 has a 20 L tank"))
    assert ChecksJudge().judge(request).label is Label.CONFLICTING


def test_suggestion_becomes_a_model_judgement_with_provenance_and_never_a_final_label() -> None:
    suggestion = ChecksJudge().judge(JudgeRequest(CLAIM, ("AX220 tank capacity: 20 mL",)))
    judgement = suggestion.to_judgement("2026-11-30T05:00:00Z")
    assert judgement.origin is Origin.MODEL
    assert (judgement.judge, judgement.judge_version, judgement.judge_model) == ("checks", "checks-v2", None)
    assert judgement.label is Label.CONFLICTING
    # a model judgement alone leaves the edge pending
    assert review_outcome([judgement]) == (review_outcome([])[0], None)


def test_make_judge_names_the_judges_that_exist() -> None:
    assert make_judge("checks").name == "checks"
    with pytest.raises(InvalidValue, match="unknown judge 'oracle'; judges: checks, nli, openai"):
        make_judge("oracle")
    with pytest.raises(InvalidValue, match="needs the folder of a local model"):
        make_judge("nli")


# --- nli --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "label"),
    [
        ("entailment", Label.SUPPORTED),
        ("ENTAILMENT", Label.SUPPORTED),
        ("neutral", Label.IRRELEVANT),
        ("contradiction", Label.CONFLICTING),
        ("attributable", Label.SUPPORTED),
        ("not attributable", Label.IRRELEVANT),
        ("not_entailment", Label.IRRELEVANT),
        ("supported", Label.SUPPORTED),
        ("LABEL_0", None),
    ],
)
def test_nli_class_names_map_to_labels(name: str, label: Label | None) -> None:
    assert map_nli_label(name) is label


@needs_models
@pytest.mark.parametrize(
    ("bias", "label"),
    [
        ((5.0, 0.0, 0.0), Label.SUPPORTED),  # entailment logit 5, the others 0
        ((0.0, 5.0, 0.0), Label.IRRELEVANT),  # neutral
        ((0.0, 0.0, 5.0), Label.CONFLICTING),  # contradiction
    ],
)
def test_nli_judge_loads_a_local_model_and_reports_its_probability(
    tmp_path: Path, bias: tuple[float, float, float], label: Label
) -> None:
    from citeaudit.judges import NliJudge

    folder = build_nli_model(tmp_path / "nli", ["entailment", "neutral", "contradiction"], bias)
    judge = NliJudge(folder)
    suggestion = judge.judge(JudgeRequest(CLAIM, ("the ax220 has a 20 l tank",)))
    assert suggestion.label is label
    # softmax of (5, 0, 0): e^5 / (e^5 + 1 + 1) = 148.41 / 150.41 = 0.98670
    assert suggestion.confidence == pytest.approx(math.exp(5) / (math.exp(5) + 2), rel=1e-5)
    assert suggestion.judge == "nli"
    assert suggestion.model is not None
    assert suggestion.model.startswith(str(folder.resolve()))
    assert suggestion.to_judgement().confidence == suggestion.confidence


@needs_models
def test_nli_judge_refuses_unmappable_classes_unless_told(tmp_path: Path) -> None:
    from citeaudit.judges import NliJudge

    folder = build_nli_model(tmp_path / "nli", ["LABEL_0", "LABEL_1"], (0.0, 3.0))
    with pytest.raises(JudgeError, match=r"cannot map the NLI class 'LABEL_0'"):
        NliJudge(folder)
    judge = NliJudge(folder, label_map={"LABEL_0": Label.IRRELEVANT, "LABEL_1": Label.SUPPORTED})
    suggestion = judge.judge(JudgeRequest(CLAIM, ("a", "b")))
    assert suggestion.label is Label.SUPPORTED
    # softmax of (0, 3): e^3 / (1 + e^3) = 20.09 / 21.09 = 0.95257
    assert suggestion.confidence == pytest.approx(math.exp(3) / (1 + math.exp(3)), rel=1e-5)


@needs_models
def test_nli_judge_refuses_a_folder_without_a_model(tmp_path: Path) -> None:
    from citeaudit.judges import NliJudge

    with pytest.raises(JudgeError, match="no transformers model"):
        NliJudge(tmp_path)


# --- openai -----------------------------------------------------------------------------------------------------


def _openai(base_url: str) -> OpenAIJudge:
    return OpenAIJudge(base_url=base_url, model="test-model", api_key="sk-test", max_retries=0, timeout=10)


def test_openai_judge_speaks_chat_completions_with_a_hashed_prompt() -> None:
    with chat_server() as server:
        server.reply_label("supported", quote="Tank capacity: 20 L", reasoning="the spec table says so")
        judge = _openai(server.base_url)
        suggestion = judge.judge(JudgeRequest(CLAIM, ("AX220. Tank capacity: 20 L.",)))
    assert suggestion.label is Label.SUPPORTED
    assert suggestion.quote == "Tank capacity: 20 L"
    assert suggestion.prompt_sha256 == prompt_sha256()
    assert suggestion.prompt_sha256.startswith("sha256:")
    (body,) = server.requests
    assert body["model"] == "test-model"
    assert body["temperature"] == 0
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["required"] == ["label", "quote", "reasoning"]
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "[1] AX220. Tank capacity: 20 L." in body["messages"][1]["content"]
    assert server.headers[0]["authorization"] == "Bearer sk-test"
    judgement = suggestion.to_judgement()
    assert (judgement.judge, judgement.judge_model, judgement.judge_version) == (
        "openai",
        "test-model",
        "edge-label-v1",
    )
    assert judgement.reviewer == "openai:test-model"


def test_openai_prompt_lists_labels_in_the_requested_order() -> None:
    reversed_order = tuple(reversed(LABEL_ORDER))
    with chat_server() as server:
        server.reply_label("irrelevant")
        _openai(server.base_url).judge(JudgeRequest(CLAIM, ("Colour: red",), label_order=reversed_order))
    prompt = server.requests[0]["messages"][1]["content"]
    positions = [prompt.index(f"- {label}:") for label in reversed_order]
    assert positions == sorted(positions)


@pytest.mark.parametrize(
    ("reply", "failure"),
    [
        ({"content": "Supported, clearly."}, "malformed: content is not JSON"),
        # a reply nested far past the limit: a RecursionError once, now an unusable reply like any other
        ({"content": "[" * 100_000}, "malformed: content is not JSON citeaudit can read (nested deeper than 100"),
        (
            {"content": '{"label": "supported", "quote": "", "reasoning": "\\ud800"}'},
            "malformed: content is not JSON citeaudit can read (lone surrogate",
        ),
        ({"content": json.dumps({"label": "supported"})}, "malformed: expected an object with label, quote"),
        ({"content": json.dumps({"label": "yes", "quote": "", "reasoning": "x"})}, "malformed: unknown label 'yes'"),
        ({"content": json.dumps({"label": 1, "quote": "", "reasoning": "x"})}, "malformed: label, quote and reasoning"),
        ({"content": None, "refusal": "I can't help with that."}, "refused: I can't help with that."),
        ({"content": "", "finish": "length"}, "malformed: empty content (finish_reason 'length')"),
        (
            {"content": json.dumps({"label": "supported", "quote": "Tank: 25 L", "reasoning": "x"})},
            "quote not found in the passages",
        ),
    ],
)
def test_openai_unusable_answers_become_unknown_with_a_reason(reply: dict[str, str | None], failure: str) -> None:
    with chat_server() as server:
        server.reply_message(reply["content"], refusal=reply.get("refusal"), finish=reply.get("finish") or "stop")
        suggestion = _openai(server.base_url).judge(JudgeRequest(CLAIM, ("AX220. Tank capacity: 20 L.",)))
    assert suggestion.label is Label.UNKNOWN
    assert suggestion.failure is not None
    assert suggestion.failure.startswith(failure)
    assert suggestion.to_judgement().reasoning is not None


def test_openai_http_errors_raise_so_nothing_is_stored() -> None:
    with chat_server() as server:
        server.replies.append((500, {"error": {"message": "overloaded", "type": "server_error"}}))
        judge = _openai(server.base_url)
        with pytest.raises(JudgeError, match="the openai judge at"):
            judge.judge(JudgeRequest(CLAIM, ("x",)))


def test_openai_judge_reads_its_configuration_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("CITEAUDIT_OPENAI_BASE_URL", raising=False)
    with pytest.raises(JudgeError, match="CITEAUDIT_OPENAI_BASE_URL"):
        OpenAIJudge(model="m")
    with chat_server() as server:
        monkeypatch.setenv("CITEAUDIT_OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("CITEAUDIT_OPENAI_MODEL", "env-model")
        monkeypatch.setenv("CITEAUDIT_OPENAI_API_KEY", "sk-env")
        server.reply_label("irrelevant")
        judge = make_judge("openai", max_retries=0)
        assert judge.model == "env-model"
        assert judge.judge(JudgeRequest(CLAIM, ("Colour: red",))).label is Label.IRRELEVANT
    assert server.requests[0]["model"] == "env-model"
    assert server.headers[0]["authorization"] == "Bearer sk-env"


PINNED_PROMPT = ("edge-label-v1", "sha256:4945a15bab9d5b2bb5dbe19c2f68a9cc4f1f6d19fc92522a457ce93c0ff6eab0")
"""The judge's prompt version and the hash recorded for it. Changing the prompt, the label definitions or the
response schema changes the hash: bump ``PROMPT_VERSION`` and record the new pair here, together."""


def test_prompt_hash_is_pinned_to_its_version() -> None:
    from citeaudit.judges import _openai

    assert (_openai.PROMPT_VERSION, prompt_sha256()) == PINNED_PROMPT


@pytest.mark.parametrize(
    ("name", "changed"),
    [
        ("SYSTEM_PROMPT", "You check citations."),
        ("USER_TEMPLATE", "Claim: {claim} Sources: {sources} Labels: {labels}"),
        ("LABEL_DEFINITIONS", {Label.SUPPORTED: "the sources state the claim"}),
        ("RESPONSE_SCHEMA", {"type": "object"}),
        ("PROMPT_VERSION", "edge-label-v2"),
    ],
)
def test_every_part_of_the_prompt_moves_its_hash(monkeypatch: pytest.MonkeyPatch, name: str, changed: object) -> None:
    # So the pin above catches a prompt edited without a new version.
    from citeaudit.judges import _openai

    monkeypatch.setattr(_openai, name, changed)
    assert prompt_sha256() != PINNED_PROMPT[1]


# --- one edge end to end ------------------------------------------------------------------------------------------


def test_suggest_for_edge_ranks_then_judges_the_top_passages() -> None:
    from citeaudit.judges import suggest_for_edge

    document = "AX220 overview. The AX220 tank capacity is 20 mL. Colour: red. Delivery in two days."
    result = suggest_for_edge(ChecksJudge(), CLAIM, document, k=2, method="bm25")  # single sentences
    # "tank" and "ax220" make "The AX220 tank capacity is 20 mL." the best sentence; it starts at 16
    assert result.passages[0].text == "The AX220 tank capacity is 20 mL."
    assert document[result.passages[0].start : result.passages[0].end] == result.passages[0].text
    assert len(result.passages) == 2
    assert result.suggestion.label is Label.CONFLICTING  # 20 L vs 20 mL


def test_suggest_for_edge_shows_the_judge_trimmed_windows_by_default() -> None:
    from citeaudit.judges import suggest_for_edge

    document = "AX220 overview. The AX220 tank capacity is 20 mL. Colour: red. Delivery in two days."
    seen: list[tuple[str, ...]] = []

    class Records:
        name, version, model = "records", "1", None

        def judge(self, request: JudgeRequest) -> object:
            seen.append(request.passages)
            return ChecksJudge().judge(request)

    result = suggest_for_edge(Records(), CLAIM, document, k=2)  # type: ignore[arg-type]
    # Sentences S0–S3 have 2, 7, 2 and 4 words; the claim's terms are ax220, 20, l, tank. Windows of 3:
    # W0 = S0–S2 (11 words: ax220 ×2, tank, 20), W1 = S1–S3 (13: ax220, tank, 20), W2 = S2–S3 and W3 = S3 (none).
    # Mean 8.5 words, every matched term in 2 windows (idf ln 2): W0 = 0.905 + 0.612 + 0.612 = 2.129 beats
    # W1 = 3 × 0.560 = 1.679. W0 is trimmed at 0.2 × its best sentence S1 (BM25 2.23 over the sentences): S0
    # (0.88, ax220) stays, S2 (0) goes, so unit 1 is S0–S1 = characters 0–49. W1 trims to S1, which overlaps;
    # W2 (score 0, before W3 by position) trims its unmatched S2 and keeps S3: unit 2 is 63–84 (16 + 34 + 13).
    assert [(p.start, p.end, p.rank) for p in result.passages] == [(0, 49, 1), (63, 84, 2)]
    assert document[63:84] == "Delivery in two days."
    # the judge reads exactly the units (the sentences of a unit joined by a line break)
    assert seen == [("AX220 overview.\nThe AX220 tank capacity is 20 mL.", "Delivery in two days.")]
    assert result.suggestion.label is Label.CONFLICTING  # 20 L vs 20 mL


def test_suggest_for_edge_without_text_is_unknown_without_asking() -> None:
    from citeaudit.judges import suggest_for_edge

    class Refuses:
        name, version, model = "refuses", "1", None

        def judge(self, request: JudgeRequest) -> object:
            raise AssertionError("must not be asked")

    result = suggest_for_edge(Refuses(), CLAIM, "")  # type: ignore[arg-type]
    assert result.passages == ()
    assert result.suggestion.label is Label.UNKNOWN
    assert result.suggestion.failure == "the source has no text to rank"
