"""OpenAI answers: the Responses API (``openai-responses``) and Chat Completions search models (``openai-chat``).

Fixtures are hand-written from the documented shapes. A chip such as
``([axtorp-machines.com](https://axtorp-machines.com/products/ax220?utm_source=openai))`` is 85 characters:
``([`` 2 + host 19 + ``](`` 2 + URL 60 (``https://`` 8 + host 19 + ``/products/ax220`` 15 + ``?utm_source=openai``
18) + ``))`` 2.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import citeaudit
from citeaudit import InvalidValue, MalformedInput
from citeaudit.core.model import AnswerStatus, CitationKind, RetrievalStatus
from citeaudit.ingest import Attachment, read_file, store_prepared
from citeaudit.ingest.base import ParsedAnswer, Reader
from citeaudit.ingest.openai import CHAT_READER, RESPONSES_READER

FIXTURES = Path(__file__).parent / "fixtures"
RESPONSES = FIXTURES / "openai-responses"
CHAT = FIXTURES / "openai-chat"
PROTOCOL = citeaudit.Protocol(id="p", version="1", questions=(citeaudit.Question("q1", "Tank size?"),))
AX220 = "https://axtorp-machines.com/products/ax220?utm_source=openai"
SHEET = "https://axtorp-machines.com/downloads/ax220-datasheet.pdf?utm_source=openai"
KTEST = "https://www.kompressor-test.de/axtorp-ax220?utm_source=openai"
Write = Callable[[Any, str], Path]


def read(reader: Reader, path: Path) -> list[ParsedAnswer]:
    assert reader.read_answers is not None
    return list(reader.read_answers(path.read_bytes(), str(path)))


def chip(host: str, url: str) -> str:
    return f"([{host}]({url}))"


def response(text: str, annotations: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """A minimal Responses payload with one message part."""
    return {
        "object": "response",
        "status": "completed",
        "model": "gpt-4.1",
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": annotations}],
            }
        ],
        **extra,
    }


def completion(text: str | None, annotations: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """A minimal Chat Completions payload with one choice."""
    return {
        "object": "chat.completion",
        "model": "gpt-4o-search-preview",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text, "annotations": annotations},
                "finish_reason": "stop",
            }
        ],
        **extra,
    }


def flat(start: int, end: int, url: str, title: str | None = "t") -> dict[str, Any]:
    return {"type": "url_citation", "start_index": start, "end_index": end, "url": url, "title": title}


def nested(start: int, end: int, url: str, title: str | None = "t") -> dict[str, Any]:
    return {
        "type": "url_citation",
        "url_citation": {"start_index": start, "end_index": end, "url": url, "title": title},
    }


def store_and_score(path: Path, reader: Reader, db: Path) -> tuple[citeaudit.ImportReport, citeaudit.ScoreResult]:
    prepared = read_file(path, reader, Attachment(PROTOCOL))
    with citeaudit.Store(db) as store:
        report = store_prepared(store, prepared)
    return report, citeaudit.score_path(db).result


# -- Responses API ---------------------------------------------------------------------------------------------


def test_responses_claims_are_the_text_before_each_chip() -> None:
    (answer,) = read(RESPONSES_READER, RESPONSES / "search.json")
    raw = json.loads((RESPONSES / "search.json").read_text(encoding="utf-8"))
    assert answer.text == raw["output"][1]["content"][0]["text"]  # stored exactly as returned
    claims = [(c.text, c.start, c.end, c.citations) for c in answer.claims]
    assert claims == [
        # "The Axtorp AX220 has a 20 L tank" is 32 characters; chip 0 starts at 33, chip 1 right after it (119)
        ("The Axtorp AX220 has a 20 L tank", 0, 32, (0, 1)),
        # chip 1 ends at 204, then ". " → the next sentence starts at 206; chips 2 and 3 are separated by a space
        ("It delivers 220 L/min at 8 bar and weighs 38 kg", 206, 253, (2, 3)),
        # list items: the "- " marker is not part of the claim (item starts at 470, text at 472)
        ("The AX150 has a 10 L tank", 472, 497, (4,)),
        ("The AX300 has a 50 L tank and suits small workshops", 587, 638, (5,)),
    ]
    for claim in answer.claims:
        assert answer.text[claim.start : claim.end] == claim.text
    assert "Other models in the range" not in " ".join(c.text for c in answer.claims)  # uncited: no claim


def test_responses_chips_are_the_citation_locations() -> None:
    (answer,) = read(RESPONSES_READER, RESPONSES / "search.json")
    cited = [c for c in answer.citations if c.kind is CitationKind.CITED]
    # 33 + 85 = 118; the second chip of the same URL follows after one space: 119..204
    assert [(c.start, c.end) for c in cited[:2]] == [(33, 118), (119, 204)]
    assert cited[0].marker == chip("axtorp-machines.com", AX220)
    assert all(c.marker == answer.text[c.start : c.end] for c in cited)
    assert cited[0].title == "AX220 piston compressor – 20 L, 220 L/min | Axtorp"


def test_responses_retrieved_sources_and_queries_are_kept_apart() -> None:
    (answer,) = read(RESPONSES_READER, RESPONSES / "search.json")
    assert answer.model == "gpt-4.1-2025-04-14"
    assert answer.retrieval is RetrievalStatus.USED
    # "query" repeats queries[0] → listed once
    assert answer.queries == ("Axtorp AX220 tank size", "Axtorp AX220 specifications litres weight")
    kinds = [c.kind for c in answer.citations]
    assert kinds.count(CitationKind.CITED) == 6
    # 7 sources; the 5 also cited (with ?utm_source=openai) are left out → forum and reddit only
    retrieved = [c.url for c in answer.citations if c.kind is CitationKind.RETRIEVED]
    assert retrieved == [
        "https://www.druckluft-forum.de/thread/axtorp-ax220-erfahrungen",
        "https://www.reddit.com/r/Compressors/comments/1c8x2q/axtorp_ax220_vs_ax300/",
    ]
    assert all(c.start is None and c.marker is None for c in answer.citations if c.kind is CitationKind.RETRIEVED)


def test_responses_assembled_duplicates_collapse_and_urls_normalize() -> None:
    audit = read_file(RESPONSES / "search.json", RESPONSES_READER, Attachment(PROTOCOL)).audit
    (answer,) = audit.answers
    assert answer.platform == "openai"
    first = answer.citations[0]
    assert first.url == AX220  # raw, tracking parameter kept
    assert first.source_key == "https://axtorp-machines.com/products/ax220"  # normalized: utm_* dropped
    # claim 1: 2 chips of one URL → 1 edge; claim 2: 2 URLs → 2 edges; claims 3 and 4: 1 each → 5 edges
    assert len(audit.edges) == 5
    by_claim = {(e.claim_id.rsplit("-", 1)[1], e.source_key): len(e.locations) for e in audit.edges}
    assert by_claim[("c1", "https://axtorp-machines.com/products/ax220")] == 2
    assert sum(by_claim.values()) == 6
    retrieved = [c for c in answer.citations if c.kind is CitationKind.RETRIEVED]
    assert [c.source_key for c in retrieved] == [
        "https://www.druckluft-forum.de/thread/axtorp-ax220-erfahrungen",
        "https://www.reddit.com/r/Compressors/comments/1c8x2q/axtorp_ax220_vs_ax300/",
    ]


def test_responses_end_to_end_pending_edges(tmp_path: Path) -> None:
    report, scored = store_and_score(RESPONSES / "search.json", RESPONSES_READER, tmp_path / "a.db")
    # 4 claims, 5 unique edges over 6 locations, 2 retrieved-only sources
    assert (report.answers, report.claims, report.edges, report.locations, report.retrieved) == (1, 4, 5, 6, 2)
    assert (scored.overall.edges.unique, scored.overall.edges.locations, scored.overall.edges.pending) == (5, 6, 5)
    assert scored.provisional is True
    # nothing is labelled: 0 supported of 5 unique edges
    assert (scored.precision.numerator, scored.precision.denominator) == (0, 5)


def test_responses_german_offsets_are_code_points() -> None:
    (answer,) = read(RESPONSES_READER, RESPONSES / "german.json")
    # "Der Axtorp AX220 hat einen 20-Liter-Behälter und wiegt 38 kg" is 60 code points (ä counts once; 61 in
    # UTF-8); the chip starts after a space at 61 and is 88 long (URL path /de/produkte/ax220 is 18) → 149
    first, second = answer.citations
    assert (first.start, first.end) == (61, 149)
    assert first.marker == answer.text[61:149]
    assert answer.text[61:149].startswith("([axtorp-machines.com](")
    # ". " after the chip → "Für größere …" starts at 151 and runs to the space before the second chip (213)
    assert [(c.text, c.start, c.end) for c in answer.claims] == [
        ("Der Axtorp AX220 hat einen 20-Liter-Behälter und wiegt 38 kg", 0, 60),
        ("Für größere Werkstätten empfiehlt sich der AX300 mit 50 Litern", 151, 213),
    ]
    assert second.marker == answer.text[214:320]
    assert answer.queries == ("Axtorp AX220 Behältergröße",)  # the older single "query" field


def test_responses_utf8_byte_offsets_are_refused(tmp_path: Path) -> None:
    document = json.loads((RESPONSES / "german.json").read_text(encoding="utf-8"))
    part = document["output"][1]["content"][0]
    text = part["text"]
    for annotation in part["annotations"]:
        # the same offsets counted in UTF-8 bytes: the first chip moves by 1 (ä), the second by 5 (ä, ü, ö, ß, ä)
        annotation["start_index"] = len(text[: annotation["start_index"]].encode())
        annotation["end_index"] = len(text[: annotation["end_index"]].encode())
    path = tmp_path / "bytes.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(InvalidValue) as caught:
        read(RESPONSES_READER, path)
    assert caught.value.source == str(path)
    # text[62:150] starts inside the chip ("[axtorp…") and ends after it (")."): not a chip
    assert caught.value.location == "output[1].content[0].annotations[0]"
    assert "text[62:150]" in caught.value.message


def test_responses_empty_answer_is_an_answer() -> None:
    (answer,) = read(RESPONSES_READER, RESPONSES / "empty.json")
    assert (answer.text, answer.claims, answer.citations) == ("", (), ())
    assert answer.status is AnswerStatus.COMPLETE
    assert answer.retrieval is RetrievalStatus.USED  # the search ran; the model said nothing


def test_responses_failed_status_is_a_failed_answer(tmp_path: Path) -> None:
    (answer,) = read(RESPONSES_READER, RESPONSES / "failed.json")
    assert answer.status is AnswerStatus.FAILED
    assert answer.failure == "server_error: The server had an error while processing your request. Sorry about that!"
    prepared = read_file(RESPONSES / "failed.json", RESPONSES_READER, Attachment(PROTOCOL))
    assert prepared.audit.answers == ()
    assert [(f.status, f.question_id) for f in prepared.audit.failed_answers] == [(AnswerStatus.FAILED, "q1")]


def test_responses_incomplete_status_keeps_the_reason(write_json: Write) -> None:
    path = write_json(
        response("The AX220", [], status="incomplete", incomplete_details={"reason": "max_output_tokens"}), "r.json"
    )
    (answer,) = read(RESPONSES_READER, path)
    assert (answer.status, answer.failure) == (AnswerStatus.INCOMPLETE, "max_output_tokens")


def test_responses_unknown_status_is_refused(write_json: Write) -> None:
    path = write_json(response("x", [], status="exploded"), "r.json")
    with pytest.raises(InvalidValue, match=r"status: unknown response status 'exploded'"):
        read(RESPONSES_READER, path)


def test_responses_malformed_annotation_names_file_and_path() -> None:
    path = RESPONSES / "malformed.json"
    with pytest.raises(InvalidValue) as caught:
        read(RESPONSES_READER, path)
    # the text is 26 + 85 (chip) + 18 (" and weighs 38 kg ") + 85 (chip) + 1 = 215; end_index is 215 + 40
    assert caught.value.source == str(path)
    assert caught.value.location == "output[1].content[0].annotations[1].end_index"
    assert "255 is outside the text" in caught.value.message


@pytest.mark.parametrize(
    ("calls", "expected"),
    [
        ([], RetrievalStatus.NOT_USED),
        ([{"type": "web_search_call", "status": "failed", "action": {"type": "search", "query": "ax220"}}], "failed"),
        ([{"type": "web_search_call", "status": "in_progress"}], RetrievalStatus.UNKNOWN),
        (
            [
                {"type": "web_search_call", "status": "failed"},
                {
                    "type": "web_search_call",
                    "status": "completed",
                    "action": {"type": "open_page", "url": "https://a.de/x"},
                },
            ],
            RetrievalStatus.USED,
        ),
    ],
    ids=["no search call", "failed", "in progress", "one of two completed"],
)
def test_responses_retrieval_status(write_json: Write, calls: list[dict[str, Any]], expected: str) -> None:
    document = response("The AX220 has a 20 L tank.", [])
    document["output"][0:0] = calls
    (answer,) = read(RESPONSES_READER, write_json(document, "r.json"))
    assert answer.retrieval == expected


def test_responses_opened_pages_are_retrieved(write_json: Write) -> None:
    calls = [
        {"type": "web_search_call", "status": "completed", "action": {"type": "open_page", "url": "https://a.de/x"}}
    ]
    document = response("Nothing cited.", [])
    document["output"][0:0] = calls
    (answer,) = read(RESPONSES_READER, write_json(document, "r.json"))
    assert [(c.url, c.kind) for c in answer.citations] == [("https://a.de/x", CitationKind.RETRIEVED)]


def test_responses_parts_join_without_separator_and_claims_stay_in_their_part(write_json: Write) -> None:
    first = "The AX220 has a 20 L tank " + chip("axtorp-machines.com", AX220) + "."
    second = "and weighs 38 kg " + chip("kompressor-test.de", KTEST) + "."
    document = response(first, [flat(26, 111, AX220)])
    document["output"].append(
        {
            "type": "message",
            "content": [
                {"type": "reasoning_summary"},  # not answer text: skipped
                {"type": "output_text", "text": second, "annotations": [flat(17, 102, KTEST)]},
            ],
        }
    )
    (answer,) = read(RESPONSES_READER, write_json(document, "r.json"))
    # 26 + 85 + "." = 112 and 17 + 85 (kompressor-test chip: host 18, URL 61) + "." = 103, no separator
    assert answer.text == first + second
    # the second chip is at 17..102 in its part → 129..214; its claim starts at its part (112), although the
    # joined text has no sentence break there ("tank (…).and weighs")
    assert [(c.start, c.end) for c in answer.citations] == [(26, 111), (129, 214)]
    assert [(c.text, c.start, c.end) for c in answer.claims] == [
        ("The AX220 has a 20 L tank", 0, 25),
        ("and weighs 38 kg", 112, 128),
    ]


def test_responses_file_citation_is_an_answer_level_document_and_urlless_citation_dangles(
    write_json: Write,
) -> None:
    text = "The AX220 has a 20 L tank [1]. See the manual [2]."
    annotations = [
        {"type": "file_citation", "file_id": "file-abc", "filename": "manual.pdf", "index": 3},
        # "[1]" at 26..29; "[2]" at 46..49
        {"type": "url_citation", "start_index": 26, "end_index": 29, "url": None, "title": None},
        {"type": "url_citation", "start_index": 46, "end_index": 49, "url": None, "title": "AX220 manual"},
    ]
    (answer,) = read(RESPONSES_READER, write_json(response(text, annotations), "r.json"))
    assert [(c.kind, c.marker, c.title, c.document, c.start) for c in answer.citations] == [
        (CitationKind.DANGLING, "[1]", None, None, 26),
        (CitationKind.CITED, "[2]", "AX220 manual", None, 46),  # a title-only card is still a citation
        # the uploaded file: a document source, cited by the answer as a whole (its index is a point, no chip)
        (CitationKind.CITED, None, "manual.pdf", "file-abc", None),
    ]
    assert [(c.text, c.citations) for c in answer.claims] == [
        ("The AX220 has a 20 L tank", (0,)),
        ("See the manual", (1,)),
    ]


def test_responses_chip_without_words_before_it_makes_no_claim(write_json: Write) -> None:
    text = chip("axtorp-machines.com", AX220) + " The AX220 has a 20 L tank."
    (answer,) = read(RESPONSES_READER, write_json(response(text, [flat(0, 85, AX220)]), "r.json"))
    assert answer.claims == ()
    assert [c.marker for c in answer.citations] == [text[:85]]  # the citation itself is kept


def test_responses_recognised_from_the_head() -> None:
    assert RESPONSES_READER.can_read((RESPONSES / "search.json").read_bytes()[:8192])
    # an output list with an output_text message is enough without "object"
    assert RESPONSES_READER.can_read(b'{"output": [{"type": "message", "content": [{"type": "output_text"')
    # a saved stream of its events is this format; a Perplexity Agent API response looks alike but is not
    assert RESPONSES_READER.can_read(b'{"type": "response.created", "response": {"object": "response"}}')
    assert not RESPONSES_READER.can_read(b'{"type": "response.created", "response": {"model": "openai/gpt-5"}}')
    agent = b'{"object": "response", "output": [{"type": "search_results", "results": []}, {"type": "message"}]}'
    assert not RESPONSES_READER.can_read(agent)
    # a failed Agent API response has no search_results item; its vendor/model name gives it away
    assert not RESPONSES_READER.can_read(b'{"object": "response", "model": "openai/gpt-5-mini", "output": []}')


# -- Chat Completions ------------------------------------------------------------------------------------------


def test_chat_claims_and_nested_annotations() -> None:
    (answer,) = read(CHAT_READER, CHAT / "search-preview.json")
    assert answer.model == "gpt-4o-search-preview-2025-03-11"
    assert answer.retrieval is RetrievalStatus.USED
    assert [(c.text, c.start, c.end, c.citations) for c in answer.claims] == [
        # 51 characters; chips at 52..137 and 138..223 (same URL twice)
        ("The Axtorp AX220 comes with a 20-litre air receiver", 0, 51, (0, 1)),
        # after ". " at 223..225; the datasheet chip (100 long) at 269..369
        ("Its free air delivery is 220 L/min at 8 bar", 225, 268, (2,)),
        # after the chip comes ", " (369..371): the clause starts at "and"
        ("and independent tests measured 71 dB(A) at 1 m", 371, 417, (3,)),
        # a new paragraph after ".\n\n" (503..506)
        ("The AX220 datasheet lists a weight of 38 kg", 506, 549, (4,)),
    ]
    assert [c.url for c in answer.citations] == [AX220, AX220, SHEET, KTEST, SHEET]


def test_chat_same_url_on_two_claims_is_two_edges(tmp_path: Path) -> None:
    report, scored = store_and_score(CHAT / "search-preview.json", CHAT_READER, tmp_path / "a.db")
    # c1 → ax220 (2 chips: 1 edge, 2 locations); c2 → datasheet; c3 → kompressor-test; c4 → datasheet again
    assert (report.claims, report.edges, report.locations) == (4, 4, 5)
    assert (scored.overall.edges.unique, scored.overall.edges.locations, scored.overall.edges.collapsed) == (4, 5, 1)
    assert scored.provisional is True


def test_chat_chinese_offsets() -> None:
    (answer,) = read(CHAT_READER, CHAT / "chinese.json")
    # "Axtorp AX220 空压机配备 20 升储气罐，排气量为每分钟 220 升" is 40 code points (94 UTF-8 bytes)
    assert [(c.text, c.start, c.end) for c in answer.claims] == [
        ("Axtorp AX220 空压机配备 20 升储气罐，排气量为每分钟 220 升", 0, 40),
        # chip 41..129 then "。" → the next sentence starts at 130 (no space after CJK punctuation)
        ("AX300 的储气罐容量为 50 升，适合小型车间", 130, 155),
    ]
    assert [(c.start, c.end) for c in answer.citations] == [(41, 129), (156, 244)]
    assert answer.text[129] == "。"


def test_chat_utf16_offsets_are_recognised(write_json: Write) -> None:
    # "🔧" is one code point but two UTF-16 units: offsets counted in UTF-16 are one too high after it
    text = "🔧 The AX220 has a 20 L tank " + chip("axtorp-machines.com", AX220) + "."
    start = text.index("(")  # 28 code points
    (answer,) = read(CHAT_READER, write_json(completion(text, [nested(start + 1, start + 86, AX220)]), "c.json"))
    (citation,) = answer.citations
    assert (citation.start, citation.end) == (28, 113)  # read as UTF-16: text[29:114] would not be a chip
    assert citation.marker == chip("axtorp-machines.com", AX220)
    assert [c.text for c in answer.claims] == ["🔧 The AX220 has a 20 L tank"]


def test_chat_json_lines_one_answer_per_line(tmp_path: Path) -> None:
    answers = read(CHAT_READER, CHAT / "batch.jsonl")
    assert [len(a.claims) for a in answers] == [1, 2, 0]
    # line 3 cites nothing: whether a search ran is not in the payload
    assert [a.retrieval for a in answers] == [RetrievalStatus.USED, RetrievalStatus.USED, RetrievalStatus.UNKNOWN]
    report, scored = store_and_score(CHAT / "batch.jsonl", CHAT_READER, tmp_path / "a.db")
    # line 1: 1 edge; line 2: the same review URL on two claims → 2 edges; line 3: none
    assert (report.answers, report.edges, report.locations) == (3, 3, 3)
    assert (scored.overall.answers, scored.overall.edges.unique, scored.overall.edges.pending) == (3, 3, 3)


def test_chat_every_choice_is_an_answer(write_json: Write) -> None:
    document = completion("The AX220 has a 20 L tank.", [], question_id="q1", answer_id="run7-q1")
    second = {"index": 1, "message": {"role": "assistant", "content": "It has 20 litres."}, "finish_reason": "length"}
    document["choices"].append(second)
    first, other = read(CHAT_READER, write_json(document, "c.json"))
    assert (first.text, other.text) == ("The AX220 has a 20 L tank.", "It has 20 litres.")
    assert (first.answer_id, other.answer_id) == ("run7-q1-0", "run7-q1-1")  # one id per choice
    assert (first.question_id, other.question_id) == ("q1", "q1")
    assert (other.status, other.failure) == (
        AnswerStatus.INCOMPLETE,
        "finish_reason 'length': cut off at the token limit",
    )


def test_chat_null_content_takes_the_refusal(write_json: Write) -> None:
    document = completion(None, [])
    document["choices"][0]["message"]["refusal"] = "I can't help with that."
    (answer,) = read(CHAT_READER, write_json(document, "c.json"))
    assert (answer.text, answer.status) == ("I can't help with that.", AnswerStatus.COMPLETE)


def test_chat_error_body_is_a_failed_answer(write_json: Write) -> None:
    body = {
        "error": {
            "message": "Rate limit reached for gpt-4o-search-preview",
            "type": "requests",
            "code": "rate_limit_exceeded",
        }
    }
    (answer,) = read(CHAT_READER, write_json(body, "c.json"))
    assert (answer.status, answer.failure) == (
        AnswerStatus.FAILED,
        "rate_limit_exceeded: Rate limit reached for gpt-4o-search-preview",
    )


def test_chat_empty_answer_is_an_answer() -> None:
    (answer,) = read(CHAT_READER, CHAT / "empty.json")
    assert (answer.text, answer.claims, answer.citations, answer.status) == ("", (), (), AnswerStatus.COMPLETE)


def test_chat_truncated_file_is_malformed() -> None:
    path = CHAT / "malformed.json"
    with pytest.raises(MalformedInput) as caught:
        read(CHAT_READER, path)
    # the file stops after 400 characters, inside the content string that opens at column 200
    assert caught.value.source == str(path)
    assert caught.value.location == "line 1 column 200"


def test_chat_bad_offset_names_the_nested_path(write_json: Write) -> None:
    lines = [completion("The AX220 has a 20 L tank.", []), completion("x", [nested(0, 1, AX220)])]
    lines[1]["choices"][0]["message"]["annotations"][0]["url_citation"]["start_index"] = "0"
    path = write_json(lines, "c.json")
    with pytest.raises(InvalidValue) as caught:
        read(CHAT_READER, path)
    assert caught.value.location == "[1].choices[0].message.annotations[0].url_citation.start_index"
    assert "'0'" in caught.value.message


def test_chat_recognised_from_the_head_but_not_perplexity() -> None:
    assert CHAT_READER.can_read((CHAT / "search-preview.json").read_bytes()[:8192])
    assert CHAT_READER.can_read((CHAT / "batch.jsonl").read_bytes()[:8192])
    plain = b'{"object": "chat.completion", "model": "gpt-4o", "choices": []}'
    assert not CHAT_READER.can_read(plain)  # no search model and no url_citation: could be anything
    sonar = b'{"object": "chat.completion", "model": "sonar", "search_results": [], "choices": [], "url_citation": 1}'
    assert not CHAT_READER.can_read(sonar)
    # a saved stream of chunks is this format, unless it is Sonar's (citations in every chunk)
    assert CHAT_READER.can_read(b'{"object": "chat.completion.chunk", "model": "gpt-4o-search-preview"}')
    assert not CHAT_READER.can_read(b'{"object": "chat.completion.chunk", "model": "sonar", "citations": []}')


# -- detection across formats ----------------------------------------------------------------------------------


def _fixture_files() -> list[Path]:
    return sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.parent.name != "__pycache__")


@pytest.mark.parametrize("path", _fixture_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_reader_claims_only_its_own_fixtures(path: Path) -> None:
    head = path.read_bytes()[:8192]
    expected = {
        "openai-responses": RESPONSES_READER,
        "openai-chat": CHAT_READER,
    }.get(path.parent.name)
    for reader in (RESPONSES_READER, CHAT_READER):
        if path.name.startswith("malformed") and reader is expected:
            continue  # may or may not be recognised; reading it fails either way
        assert reader.can_read(head) is (reader is expected), reader.name
