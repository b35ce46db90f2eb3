"""Gemini API answers grounded with Google Search (``gemini``).

Fixtures are hand-written from the documented shapes. ``grounded.json`` has one ASCII part (bytes = characters):

    0..63     "The Axtorp AX220 is a portable compressor with a 20-litre tank."   chunks 0, 1 (no startIndex)
    64..110   "It delivers up to 8 bar and is rated at 68 dB."                     chunks 1, 2, 5 (5 > 3: dangling)
    111..180  "For workshops, the AX300 with its 50-litre tank is the larger option."  chunk 0, in two supports

and four chunks, of which chunk 3 (workshoptalk.net) no support cites.

``umlaut-cjk.json`` has two parts whose segment offsets are UTF-8 bytes. Part 0 is
"Der Axtorp AX220 hat einen 20-Liter-Tank und ist mit 68 dB angenehm leise. Für größere Werkstätten eignet
sich der AX300.\\n\\n": the first sentence is ASCII (74 bytes = 74 characters); the second has ü, ö, ß and ä,
two bytes each, so it is 46 characters but 50 bytes (bytes 75..125 → characters 75..121). Part 0 is
74 + 1 + 46 + 2 = 123 characters. In part 1 every Chinese character and the full-width 。 and ，are three
bytes: "AX300 的储气罐容量为 50 升。" is 6 + 7·3 + 4 + 2·3 = 37 bytes and 19 characters (123..142 in the
answer), "最大工作压力为 10 巴，适合连续使用。" is 7·3 + 4 + 9·3 = 52 bytes (37..89) and 20 characters (142..162).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import citeaudit
from citeaudit import InvalidValue, MalformedInput
from citeaudit.core.model import AnswerStatus, CitationKind, RetrievalStatus
from citeaudit.ingest import Attachment, perplexity, read_file, serpapi, store_prepared
from citeaudit.ingest.base import ParsedAnswer
from citeaudit.ingest.gemini import READER
from payloads import read_one_with, read_with, write_payload

FIXTURES = Path(__file__).parent / "fixtures"
GEMINI = FIXTURES / "gemini"
PROTOCOL = citeaudit.Protocol(id="p", version="1", questions=(citeaudit.Question("q1", "Tank size?"),))
REDIRECT = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/"
SUPPORTS = "candidates[0].groundingMetadata.groundingSupports"


def read(path: Path) -> list[ParsedAnswer]:
    return read_with(READER, path)


def read_one(path: Path) -> ParsedAnswer:
    return read_one_with(READER, path)


def grounded(parts: list[dict[str, Any]], chunks: list[dict[str, Any]], supports: list[dict[str, Any]]) -> Any:
    """A minimal grounded response."""
    metadata = {"groundingChunks": chunks, "groundingSupports": supports, "webSearchQueries": ["ax220"]}
    return {"candidates": [{"content": {"parts": parts, "role": "model"}, "groundingMetadata": metadata}]}


def web(domain: str) -> dict[str, Any]:
    return {"web": {"uri": f"{REDIRECT}{domain}", "title": domain}}


def score(path: Path, tmp_path: Path) -> citeaudit.ScoreResult:
    db = tmp_path / "a.db"
    with citeaudit.Store(db) as store:
        store_prepared(store, read_file(path, READER, Attachment(PROTOCOL)))
    return citeaudit.score_path(db).result


def test_each_support_is_a_claim_with_one_citation_per_chunk() -> None:
    answer = read_one(GEMINI / "grounded.json")
    assert [(c.start, c.end, c.text, c.citations) for c in answer.claims] == [
        (0, 63, "The Axtorp AX220 is a portable compressor with a 20-litre tank.", (0, 1)),
        (64, 110, "It delivers up to 8 bar and is rated at 68 dB.", (2, 3, 4)),
        # Two supports with the same segment make one claim that lists chunk 0 twice.
        (111, 180, "For workshops, the AX300 with its 50-litre tank is the larger option.", (5, 6)),
    ]


def test_chunks_become_cited_dangling_and_retrieved_citations() -> None:
    answer = read_one(GEMINI / "grounded.json")
    rows = [(c.kind, c.start, c.end, c.title, c.publisher, c.marker) for c in answer.citations]
    cited = CitationKind.CITED
    assert rows == [
        (cited, 0, 63, "axtorp-machines.com", "axtorp-machines.com", None),
        (cited, 0, 63, "toolreviewhub.co.uk", "toolreviewhub.co.uk", None),
        (cited, 64, 110, "toolreviewhub.co.uk", "toolreviewhub.co.uk", None),
        (cited, 64, 110, "protooldirect.com", "protooldirect.com", None),
        (CitationKind.DANGLING, 64, 110, None, None, None),  # chunk index 5 of 4 chunks
        (cited, 111, 180, "axtorp-machines.com", "axtorp-machines.com", None),
        (cited, 111, 180, "axtorp-machines.com", "axtorp-machines.com", None),
        (CitationKind.RETRIEVED, None, None, "workshoptalk.net", "workshoptalk.net", None),
    ]
    # The grounding redirect is kept as given; resolving it is a later step.
    assert answer.citations[0].url == f"{REDIRECT}AUZIYQE7sJ2kP9wX1mV4bT6nR3yC8dF0hL5qA"
    assert answer.citations[4].url is None
    assert answer.queries == ("Axtorp AX220 tank size", "Axtorp AX220 specifications")
    assert (answer.model, answer.retrieval) == ("gemini-2.5-flash", RetrievalStatus.USED)


def test_grounded_end_to_end(tmp_path: Path) -> None:
    result = score(GEMINI / "grounded.json", tmp_path)
    # Claim 1: 2 sources; claim 2: 2 sources (the dangling index makes none); claim 3: chunk 0 twice → 1 edge
    # with 2 locations. 5 unique edges from 6 locations.
    assert (result.overall.edges.unique, result.overall.edges.locations) == (5, 6)
    assert result.provisional is True


def test_byte_offsets_are_converted_to_character_offsets() -> None:
    answer = read_one(GEMINI / "umlaut-cjk.json")
    assert [(c.start, c.end, c.text, c.citations) for c in answer.claims] == [
        (0, 74, "Der Axtorp AX220 hat einen 20-Liter-Tank und ist mit 68 dB angenehm leise.", (0, 1)),
        (75, 121, "Für größere Werkstätten eignet sich der AX300.", (2,)),
        (123, 142, "AX300 的储气罐容量为 50 升。", (3,)),
        (142, 162, "最大工作压力为 10 巴，适合连续使用。", (4, 5)),  # this segment has no text to fall back on
    ]
    # Read as characters, the byte offsets 75..125 would run into the next part.
    assert answer.text[75:125] != "Für größere Werkstätten eignet sich der AX300."
    assert [c.title for c in answer.citations if c.kind is CitationKind.CITED] == [
        "axtorp-machines.com",
        "werkzeug-test.de",
        "axtorp-machines.com",
        "gongju-pingce.cn",
        "axtorp-machines.com",
        "gongju-pingce.cn",
    ]


def test_non_ascii_end_to_end(tmp_path: Path) -> None:
    # Claims cite 2 + 1 + 1 + 2 distinct chunks: 6 edges, 6 locations.
    result = score(GEMINI / "umlaut-cjk.json", tmp_path)
    assert (result.overall.edges.unique, result.overall.edges.locations, result.provisional) == (6, 6, True)


def test_offsets_that_do_not_fit_fall_back_to_the_segment_text() -> None:
    answer = read_one(GEMINI / "fallback.json")
    # Support 2 gives character offsets 23..66 (the bytes end at 68), which slice out "…Einsät", not its text;
    # support 3 points past the part (500..539 of 108 bytes). Both are found by their text.
    assert [(c.start, c.end, c.text) for c in answer.claims] == [
        (0, 22, "Der AX150 wiegt 14 kg."),
        (23, 66, "Sein Tank fasst 6 Liter für kurze Einsätze."),
        (67, 106, "Ersatzfilter gibt es direkt bei Axtorp."),
    ]


def test_offsets_inside_a_character_without_text_are_refused() -> None:
    path = GEMINI / "bad-offsets.json"
    with pytest.raises(InvalidValue) as caught:
        read(path)
    # "Größe…": ö is bytes 2..4, so byte 3 is inside it; with no segment text there is nothing to search for.
    assert caught.value.source == str(path)
    assert caught.value.location == f"{SUPPORTS}[0].segment"
    assert caught.value.message == "byte offsets 3..9 do not fit part 0 (28 bytes), and it has no text to find it by"


def test_segment_text_not_in_the_answer_is_refused(tmp_path: Path) -> None:
    document = grounded(
        [{"text": "The AX220 has a 20-litre tank."}],
        [web("axtorp-machines.com")],
        [{"segment": {"startIndex": 4, "endIndex": 90, "text": "The AX300"}, "groundingChunkIndices": [0]}],
    )
    with pytest.raises(InvalidValue) as caught:
        read(write_payload(tmp_path, document))
    assert caught.value.location == f"{SUPPORTS}[0].segment"
    assert "'The AX300' is not in the answer after character 0" in caught.value.message


@pytest.mark.parametrize(
    ("parts", "part_index", "message"),
    [
        ([{"text": "The AX220 has a 20-litre tank."}], 1, "no answer text part 1 (text parts: [0])"),
        ([{"thought": True, "text": "Check the tank."}, {"text": "It has 20 l."}], 0, "no answer text part 0"),
    ],
)
def test_part_index_must_name_an_answer_part(
    tmp_path: Path, parts: list[dict[str, Any]], part_index: int, message: str
) -> None:
    support = {"segment": {"partIndex": part_index, "endIndex": 5}, "groundingChunkIndices": [0]}
    with pytest.raises(InvalidValue) as caught:
        read(write_payload(tmp_path, grounded(parts, [web("axtorp-machines.com")], [support])))
    assert caught.value.location == f"{SUPPORTS}[0].segment.partIndex"
    assert caught.value.message.startswith(message)


def test_chunk_of_an_unknown_kind_is_read_and_noted(tmp_path: Path) -> None:
    chunks = [{"image": {"uri": "https://a.example/x.png"}}, {"hologram": {"id": 7}}]
    support = {"segment": {"endIndex": 11, "text": "Tank: 20 l."}, "groundingChunkIndices": [0, 1]}
    (answer,) = read(write_payload(tmp_path, grounded([{"text": "Tank: 20 l."}], chunks, [support])))
    # the image chunk names a page: a cited source; the other names nothing: no citation, but noted
    assert [(c.url, c.kind) for c in answer.citations] == [("https://a.example/x.png", CitationKind.CITED)]
    assert answer.notes == ("grounding chunk of kind image", "grounding chunk of kind hologram")


def test_retrieved_context_chunks_keep_their_title_without_publisher(tmp_path: Path) -> None:
    chunks = [{"retrievedContext": {"uri": "gs://axtorp-docs/ax220-manual.pdf", "title": "AX220 manual"}}]
    supports = [{"segment": {"endIndex": 11, "text": "Tank: 20 l."}, "groundingChunkIndices": [0]}]
    answer = read_one(write_payload(tmp_path, grounded([{"text": "Tank: 20 l."}], chunks, supports)))
    (citation,) = answer.citations
    assert (citation.url, citation.title, citation.publisher) == (
        "gs://axtorp-docs/ax220-manual.pdf",
        "AX220 manual",
        None,
    )


def test_missing_grounding_with_tool_use_is_unknown_not_zero() -> None:
    searched, plain = read(GEMINI / "retrieval.json")
    # Both answers have no groundingMetadata; only the first spent tool-use tokens (a search ran).
    assert (searched.retrieval, plain.retrieval) == (RetrievalStatus.UNKNOWN, RetrievalStatus.NOT_USED)
    assert searched.citations == plain.citations == ()
    assert searched.status is AnswerStatus.COMPLETE


def test_blocked_and_empty_answers_fail() -> None:
    blocked, safety, empty = read(GEMINI / "failed.json")
    assert [(a.status, a.failure) for a in (blocked, safety, empty)] == [
        (AnswerStatus.FAILED, "prompt blocked: SAFETY"),
        (AnswerStatus.FAILED, "finishReason SAFETY"),
        (AnswerStatus.FAILED, "empty answer (finishReason STOP)"),
    ]


def test_python_sdk_dump_with_thought_part(tmp_path: Path) -> None:
    answer = read_one(GEMINI / "snake-case.json")
    # The thought part is left out, so the answer part (partIndex 1) starts at character 0.
    assert answer.text == "The AX220 has a 20-litre tank."
    assert [(c.start, c.end, c.text) for c in answer.claims] == [(0, 30, "The AX220 has a 20-litre tank.")]
    assert [c.kind for c in answer.citations] == [CitationKind.CITED, CitationKind.RETRIEVED]
    assert (answer.model, answer.retrieval, answer.queries) == (
        "gemini-2.5-flash",
        RetrievalStatus.USED,
        ("Axtorp AX220 tank size",),
    )


def test_malformed_json_names_file_and_position() -> None:
    path = GEMINI / "malformed.json"
    with pytest.raises(MalformedInput) as caught:
        read(path)
    assert (caught.value.source, caught.value.location) == (str(path), "line 1 column 342")


def test_wrong_type_names_its_path(tmp_path: Path) -> None:
    supports = [{"segment": {"endIndex": 5}, "groundingChunkIndices": ["0"]}]
    with pytest.raises(InvalidValue) as caught:
        read(write_payload(tmp_path, grounded([{"text": "Tank."}], [web("a.example")], supports)))
    assert (
        str(caught.value)
        == f"{tmp_path / 'payload.json'}: {SUPPORTS}[0].groundingChunkIndices[0]: expected int (got '0')"
    )


@pytest.mark.parametrize("path", sorted(GEMINI.iterdir()), ids=lambda p: p.name)
def test_can_read_every_gemini_fixture(path: Path) -> None:
    assert READER.can_read(path.read_bytes()[:8192])


@pytest.mark.parametrize(
    "path",
    sorted((FIXTURES / "perplexity").iterdir()) + sorted((FIXTURES / "serpapi-ai-overview").iterdir()),
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_cannot_read_other_engines_fixtures(path: Path) -> None:
    head = path.read_bytes()[:8192]
    assert not READER.can_read(head)
    assert perplexity.can_read(head) or serpapi.can_read(head)


def test_cannot_read_openai_chat_completions() -> None:
    chat = {"object": "chat.completion", "choices": [{"message": {"content": "x", "annotations": []}}]}
    assert not READER.can_read(json.dumps(chat).encode())


def test_an_answer_cut_off_at_the_token_limit_is_incomplete(tmp_path: Path) -> None:
    # the same rule for every engine: text cut at the token limit is recorded, not scored
    body = json.loads((GEMINI / "grounded.json").read_text(encoding="utf-8"))
    body["candidates"][0]["finishReason"] = "MAX_TOKENS"
    path = tmp_path / "cut.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    (answer,) = read_with(READER, path)
    assert (answer.status, answer.failure) == (
        AnswerStatus.INCOMPLETE,
        "finishReason MAX_TOKENS: cut off at the token limit",
    )
