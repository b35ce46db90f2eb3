"""Perplexity answers: Sonar chat completions and Agent API responses (``perplexity``).

Fixtures are hand-written from the documented shapes. The answer of ``sonar.json`` is, with offsets counted by
hand (each marker is 3 characters):

    0..62     "The Axtorp AX220 has a 20-litre tank and delivers up to 8 bar."   [1] 62..65, [1] 65..68
    69..147   "Reviewers describe it as quiet at 68 dB[2], although one retailer lists 70 dB."
              ([2] at 69 + 39 = 108..111, [3] 147..150)
    151..212  "For heavier use, the AX300 (50 L) is the usual step up[4][9]."  ([4] 205..208, [9] 208..211)
    214..264  "- The AX150 is the compact option with a 6 L tank."   (after "\\n\\n"; [4] 264..267)
    268..357  "- All three models carry a 3-year warranty, e.g. via registration at axtorp-machines.com."
              ([1] 357..360, [2] 360..363; "e.g." is an abbreviation, not a sentence end)

with five search results, of which [5] (the AX300 datasheet) is never cited and [9] points past the list.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

import citeaudit
from citeaudit import InvalidValue, MalformedInput
from citeaudit.core.model import AnswerStatus, CitationKind, RetrievalStatus
from citeaudit.ingest import Attachment, gemini, read_file, serpapi, store_prepared
from citeaudit.ingest.base import ParsedAnswer
from citeaudit.ingest.perplexity import READER
from payloads import read_one_with, read_with, write_payload

FIXTURES = Path(__file__).parent / "fixtures"
PERPLEXITY = FIXTURES / "perplexity"
PROTOCOL = citeaudit.Protocol(id="p", version="1", questions=(citeaudit.Question("q1", "Tank size?"),))
AXTORP_AX220 = "https://www.axtorp-machines.com/en/compressors/ax220?utm_source=perplexity"
REVIEW = "https://www.toolreviewhub.co.uk/reviews/axtorp-ax220/"
RETAILER = "https://www.protooldirect.com/axtorp-ax220-20l.html?ref=pplx&utm_medium=referral"
FORUM = "https://forum.workshoptalk.net/t/axtorp-ax150-vs-ax220/4821"
DATASHEET = "https://www.axtorp-machines.com/downloads/ax300-datasheet.pdf"


def read(path: Path) -> list[ParsedAnswer]:
    return read_with(READER, path)


def read_one(path: Path) -> ParsedAnswer:
    return read_one_with(READER, path)


def sonar(content: str, urls: list[str], **extra: Any) -> dict[str, Any]:
    """A minimal Sonar response citing ``urls`` as search results."""
    return {
        "id": "x",
        "model": "sonar",
        "object": "chat.completion",
        "search_results": [{"title": f"Result {i}", "url": url} for i, url in enumerate(urls, 1)],
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
        **extra,
    }


def score(path: Path, tmp_path: Path) -> citeaudit.ScoreResult:
    """Import ``path`` into a fresh database and score it."""
    db = tmp_path / "a.db"
    with citeaudit.Store(db) as store:
        store_prepared(store, read_file(path, READER, Attachment(PROTOCOL)))
    return citeaudit.score_path(db).result


# -- Sonar ----------------------------------------------------------------------------------------------------


def test_sonar_claims_are_the_marked_sentences_without_markers() -> None:
    answer = read_one(PERPLEXITY / "sonar.json")
    spans = [(c.start, c.end, c.text, c.citations) for c in answer.claims]
    # Citation locations are numbered in text order: [1][1] → 0, 1; [2][3] → 2, 3; [4][9] → 4, 5; [4] → 6;
    # [1][2] → 7, 8. Markers leave the claim text; a list bullet ("- " at 214..216 and at 268..270) is outside
    # the span too.
    assert spans == [
        (0, 62, "The Axtorp AX220 has a 20-litre tank and delivers up to 8 bar.", (0, 1)),
        (69, 147, "Reviewers describe it as quiet at 68 dB, although one retailer lists 70 dB.", (2, 3)),
        (151, 212, "For heavier use, the AX300 (50 L) is the usual step up.", (4, 5)),
        (216, 264, "The AX150 is the compact option with a 6 L tank.", (6,)),
        (270, 357, "All three models carry a 3-year warranty, e.g. via registration at axtorp-machines.com.", (7, 8)),
    ]
    assert answer.text[151:212] == "For heavier use, the AX300 (50 L) is the usual step up[4][9]."
    assert answer.text[214:264] == "- The AX150 is the compact option with a 6 L tank."


def test_sonar_citations_cited_dangling_and_retrieved() -> None:
    answer = read_one(PERPLEXITY / "sonar.json")
    rows = [(c.kind, c.marker, c.start, c.end, c.url) for c in answer.citations]
    cited, dangling, retrieved = CitationKind.CITED, CitationKind.DANGLING, CitationKind.RETRIEVED
    assert rows == [
        (cited, "[1]", 62, 65, AXTORP_AX220),  # URL kept raw, tracking parameter included
        (cited, "[1]", 65, 68, AXTORP_AX220),
        (cited, "[2]", 108, 111, REVIEW),
        (cited, "[3]", 147, 150, RETAILER),
        (cited, "[4]", 205, 208, FORUM),
        (dangling, "[9]", 208, 211, None),  # 9 > 5 search results: counted, no guessed source
        (cited, "[4]", 264, 267, FORUM),
        (cited, "[1]", 357, 360, AXTORP_AX220),
        (cited, "[2]", 360, 363, REVIEW),
        (retrieved, None, None, None, DATASHEET),  # result 5 is never marked
    ]
    assert answer.citations[0].title == "AX220 Portable Air Compressor – Axtorp"
    assert (answer.model, answer.retrieval, answer.status) == ("sonar-pro", RetrievalStatus.USED, AnswerStatus.COMPLETE)


def test_sonar_end_to_end_collapses_duplicate_markers(tmp_path: Path) -> None:
    prepared = read_file(PERPLEXITY / "sonar.json", READER, Attachment(PROTOCOL))
    (first_claim_edge,) = [e for e in prepared.audit.edges if e.claim_id.endswith("-c1")]
    assert [loc.marker for loc in first_claim_edge.locations] == ["[1]", "[1]"]
    result = score(PERPLEXITY / "sonar.json", tmp_path)
    # Unique (claim, source) pairs: c1 axtorp; c2 review, retailer; c3 forum ([9] makes none); c4 forum;
    # c5 axtorp, review → 1 + 2 + 1 + 1 + 2 = 7 edges from 8 locations (c1's [1][1] is one edge).
    assert (result.overall.edges.unique, result.overall.edges.locations) == (7, 8)
    assert result.provisional is True


def test_citations_list_is_the_fallback_without_search_results() -> None:
    answer = read_one(PERPLEXITY / "sonar-citations-only.json")
    assert [(c.marker, c.url, c.title) for c in answer.citations] == [
        ("[1]", "https://www.axtorp-machines.com/en/compressors/ax150", None),
        ("[2]", "https://www.toolreviewhub.co.uk/reviews/axtorp-ax150/?utm_source=perplexity", None),
        ("[3]", "https://shop.axtorp-machines.com/spare-parts/filters", None),
    ]
    # "online [3]." keeps the marker inside the span (it sits before the full stop) but not in the claim text.
    assert [(c.start, c.end, c.text) for c in answer.claims] == [
        (0, 52, "The AX150 weighs 14 kg and has a 6-litre tank."),
        (53, 91, "Axtorp sells spare filters online."),
    ]


def test_markers_in_the_reasoning_block_are_not_citations() -> None:
    answer = read_one(PERPLEXITY / "sonar-reasoning.json")
    # "<think>…</think>\n\n" is 114 characters; the only shown marker is [1] at 114 + 37 = 151.
    assert answer.text.startswith("<think>")
    assert [(c.kind, c.marker, c.start) for c in answer.citations] == [
        (CitationKind.CITED, "[1]", 151),
        (CitationKind.RETRIEVED, None, None),  # the review, named only inside <think>
    ]
    assert [(c.start, c.end, c.text) for c in answer.claims] == [(114, 151, "The Axtorp AX300 has a 50-litre tank.")]


def test_json_lines_batch_keeps_ids_and_records_failures(tmp_path: Path) -> None:
    answers = read(PERPLEXITY / "sonar-batch.jsonl")
    assert [(a.status, a.failure) for a in answers] == [
        (AnswerStatus.COMPLETE, None),
        (AnswerStatus.COMPLETE, None),
        (AnswerStatus.FAILED, "empty answer (finish_reason 'stop')"),
        (AnswerStatus.FAILED, "error: 429: rate_limit_error: Rate limit exceeded, retry after 20s"),
    ]
    assert (answers[0].question_id, answers[0].answer_id) == ("q1", "pplx-ax220-tank-1")
    assert [(c.start, c.end, c.text) for c in answers[1].claims] == [
        (0, 21, "Its tank is 20 L."),
        (22, 46, "A review calls it quiet."),
    ]
    prepared = read_file(PERPLEXITY / "sonar-batch.jsonl", READER, Attachment(PROTOCOL))
    first, second = prepared.audit.answers
    # Line 1 names its answer; line 2 gets "<platform>-<sha256 prefix>-<position in the file>".
    assert first.id == "pplx-ax220-tank-1"
    sha = hashlib.sha256((PERPLEXITY / "sonar-batch.jsonl").read_bytes()).hexdigest()
    assert second.id == f"perplexity-{sha[:12]}-1"
    assert [(f.ordinal, f.status) for f in prepared.audit.failed_answers] == [
        (2, AnswerStatus.FAILED),
        (3, AnswerStatus.FAILED),
    ]
    # Line 1: one claim citing two sources (2 edges); line 2: two claims with one source each (2 edges).
    result = score(PERPLEXITY / "sonar-batch.jsonl", tmp_path)
    assert (result.overall.answers, result.overall.edges.unique, result.provisional) == (2, 4, True)


def test_marker_zero_is_dangling_and_no_sources_means_retrieval_unknown(tmp_path: Path) -> None:
    path = write_payload(tmp_path, sonar("The AX220 has a 20 L tank [0]. It is quiet [1].", []))
    answer = read_one(path)
    # No search results at all: both markers dangle, and nothing says whether a search ran.
    assert [(c.kind, c.marker) for c in answer.citations] == [
        (CitationKind.DANGLING, "[0]"),
        (CitationKind.DANGLING, "[1]"),
    ]
    assert answer.retrieval is RetrievalStatus.UNKNOWN
    assert [c.text for c in answer.claims] == ["The AX220 has a 20 L tank.", "It is quiet."]


# -- Agent API ------------------------------------------------------------------------------------------------


def test_agent_markers_map_to_result_ids_and_annotations_add_the_rest() -> None:
    answer = read_one(PERPLEXITY / "agent.json")
    # Part 1 is 104 characters, so the warranty annotation (9..22 in part 2) sits at 113..126; the annotation
    # at 53..56 is the [2] marker itself and adds nothing.
    rows = [(c.kind, c.marker, c.start, c.end, c.url) for c in answer.citations]
    assert rows == [
        (CitationKind.CITED, "[1]", 29, 32, "https://www.axtorp-machines.com/en/compressors/ax220"),
        (CitationKind.CITED, "[1]", 32, 35, "https://www.axtorp-machines.com/en/compressors/ax220"),
        (
            CitationKind.CITED,
            "[2]",
            53,
            56,
            "https://www.toolreviewhub.co.uk/reviews/axtorp-ax220/?utm_source=perplexity",
        ),
        (CitationKind.DANGLING, "[7]", 100, 103, None),  # no result has id 7
        (CitationKind.CITED, "warranty page", 113, 126, "https://www.axtorp-machines.com/en/support/warranty"),
        # Result 3 was never cited; the fetched pages are both cited, so they are not repeated.
        (CitationKind.RETRIEVED, None, None, None, "https://www.protooldirect.com/axtorp-ax220-20l.html"),
    ]
    assert [(c.start, c.end, c.text, c.citations) for c in answer.claims] == [
        (0, 53, "The AX220 has a 20-litre tank and weighs 23 kg.", (0, 1, 2)),
        (57, 104, "Axtorp rates it for 8 bar maximum pressure.", (3,)),
        (105, 152, "See the warranty page for registration details.", (4,)),
    ]
    assert answer.queries == ("Axtorp AX220 tank size", "Axtorp AX220 weight specifications")
    assert (answer.model, answer.retrieval) == ("openai/gpt-5-mini", RetrievalStatus.USED)


def test_agent_failed_status_is_a_failure_not_an_empty_answer(tmp_path: Path) -> None:
    answer = read_one(PERPLEXITY / "agent-failed.json")
    assert answer.status is AnswerStatus.FAILED
    assert answer.failure == "failed: search_unavailable: The search backend did not respond in time."
    prepared = read_file(PERPLEXITY / "agent-failed.json", READER, Attachment(PROTOCOL))
    assert prepared.audit.answers == ()
    assert [(f.status, f.reason, f.question_id) for f in prepared.audit.failed_answers] == [
        (AnswerStatus.FAILED, "failed: search_unavailable: The search backend did not respond in time.", "q1")
    ]


def test_agent_incomplete_keeps_text_and_records_missing_text() -> None:
    with_text, without_text = read(PERPLEXITY / "agent-incomplete.json")
    # Cut off mid-sentence: the text is what the engine showed, so it is kept as the answer.
    assert with_text.status is AnswerStatus.COMPLETE
    assert [(c.start, c.end, c.text) for c in with_text.claims] == [(0, 36, "The AX300 has a 50-litre tank and")]
    assert (without_text.status, without_text.failure) == (AnswerStatus.INCOMPLETE, "incomplete: max_output_tokens")


def test_agent_result_ids_written_as_text_still_match_markers(tmp_path: Path) -> None:
    agent = {
        "object": "response",
        "status": "completed",
        "model": "perplexity/sonar",
        "output": [
            {"type": "search_results", "queries": [], "results": [{"id": " 2 ", "url": "https://a.example/x"}]},
            {"type": "message", "content": [{"type": "output_text", "text": "Tank: 20 L.[2][1]"}]},
        ],
    }
    answer = read_one(write_payload(tmp_path, agent))
    assert [(c.kind, c.url) for c in answer.citations] == [
        (CitationKind.CITED, "https://a.example/x"),
        (CitationKind.DANGLING, None),
    ]


# -- errors ---------------------------------------------------------------------------------------------------


def test_malformed_json_lines_names_file_and_line() -> None:
    path = PERPLEXITY / "sonar-malformed.jsonl"
    with pytest.raises(MalformedInput) as caught:
        read(path)
    assert caught.value.source == str(path)
    assert caught.value.location == "line 2 column 332"
    assert "invalid JSON" in caught.value.message


def test_wrong_value_names_line_path_and_value() -> None:
    path = PERPLEXITY / "sonar-bad-value.jsonl"
    with pytest.raises(InvalidValue) as caught:
        read(path)
    assert str(caught.value) == f"{path}: line 2: search_results[1].url: expected str (got None)"


@pytest.mark.parametrize(
    ("document", "location", "message"),
    [
        ({"object": "chat.completion", "choices": []}, "choices", "expected at least one choice (got [])"),
        ({"choices": [{"message": {"content": 7}}]}, "choices[0].message.content", "expected str (got 7)"),
        (
            {"citations": ["https://a.example", 3], "choices": [{"message": {"content": "Tank: 20 L.[2]"}}]},
            "citations[1]",
            "expected str (got 3)",
        ),
        (["not", "an", "answer"], "[0]", "expected dict (got 'not')"),
        (
            {
                "object": "response",
                "output": [
                    {
                        "type": "message",
                        "content": [
                            {
                                "type": "output_text",
                                "text": "Short.",
                                "annotations": [
                                    {
                                        "type": "url_citation",
                                        "url": "https://a.example",
                                        "start_index": 2,
                                        "end_index": 9,
                                    }
                                ],
                            }
                        ],
                    }
                ],
            },
            "output[0].content[0].annotations[0]",
            "span 2..9 is outside its text (0..6)",
        ),
    ],
)
def test_invalid_payloads_are_refused_with_their_location(
    tmp_path: Path, document: Any, location: str, message: str
) -> None:
    with pytest.raises(InvalidValue) as caught:
        read(write_payload(tmp_path, document))
    assert (caught.value.location, caught.value.message) == (location, message)


# -- detection ------------------------------------------------------------------------------------------------

OPENAI_CHAT = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "model": "gpt-4o-search-preview",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "The AX220 has a 20 L tank ([axtorp-machines.com](https://axtorp-machines.com/ax220)).",
                "annotations": [
                    {
                        "type": "url_citation",
                        "url_citation": {"start_index": 26, "end_index": 84, "title": "AX220", "url": "https://x"},
                    }
                ],
            },
        }
    ],
}
OPENAI_RESPONSE = {
    "object": "response",
    "model": "gpt-4.1",
    "output": [
        {"type": "web_search_call", "status": "completed", "action": {"type": "search", "queries": ["ax220"]}},
        {"type": "message", "content": [{"type": "output_text", "text": "x", "annotations": []}]},
    ],
}


@pytest.mark.parametrize("path", sorted(PERPLEXITY.iterdir()), ids=lambda p: p.name)
def test_can_read_every_perplexity_fixture(path: Path) -> None:
    assert READER.can_read(path.read_bytes()[:8192])


@pytest.mark.parametrize(
    "path",
    sorted((FIXTURES / "gemini").iterdir()) + sorted((FIXTURES / "serpapi-ai-overview").iterdir()),
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_cannot_read_other_engines_fixtures(path: Path) -> None:
    head = path.read_bytes()[:8192]
    assert not READER.can_read(head)
    assert gemini.can_read(head) or serpapi.can_read(head)


@pytest.mark.parametrize("document", [OPENAI_CHAT, OPENAI_RESPONSE], ids=["openai-chat", "openai-responses"])
def test_cannot_read_openai_shapes(document: dict[str, Any]) -> None:
    assert not READER.can_read(json.dumps(document, indent=2).encode())


# -- fast claim spans agree with the shared helpers -----------------------------------------------------------


def test_sonar_answer_cut_off_at_the_token_limit_is_incomplete(tmp_path: Path) -> None:
    body = json.loads((PERPLEXITY / "sonar.json").read_text(encoding="utf-8"))
    body["choices"][0]["finish_reason"] = "length"
    path = tmp_path / "cut.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    (answer,) = read_with(READER, path)
    assert (answer.status, answer.failure) == (
        AnswerStatus.INCOMPLETE,
        "finish_reason 'length': cut off at the token limit",
    )
