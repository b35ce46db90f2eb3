"""Anthropic Messages API answers with the web search tool (``anthropic``).

Fixtures are hand-written from the documented shapes. The answer text is every ``text`` block joined with "";
in ``web-search.json`` the blocks are:

    0..45     "I'll look up the Axtorp AX220 specifications."   (45 characters)
    45..74    "Based on the search results, "                    (29)
    74..110   "the Axtorp AX220 has a 20-litre tank"             (36)  2 citations, same URL
    110..115  " and "                                            (5)
    115..127  "weighs 38 kg"                                     (12)  2 citations, 2 URLs
    127..200  ". For larger workshops, Axtorp recommends the AX300 with a 50-litre tank."  (73)
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

import citeaudit
from citeaudit import InvalidValue
from citeaudit.core.model import AnswerStatus, CitationKind, RetrievalStatus
from citeaudit.ingest import Attachment, read_file, store_prepared
from citeaudit.ingest.anthropic import READER
from citeaudit.ingest.base import ParsedAnswer

Cli = Callable[..., Result]

FIXTURES = Path(__file__).parent / "fixtures"
ANTHROPIC = FIXTURES / "anthropic"
PROTOCOL = citeaudit.Protocol(id="p", version="1", questions=(citeaudit.Question("q1", "Tank size?"),))
AX220 = "https://axtorp-machines.com/products/ax220"
Write = Callable[[Any, str], Path]


def read(path: Path) -> list[ParsedAnswer]:
    assert READER.read_answers is not None
    return list(READER.read_answers(path.read_bytes(), str(path)))


def message(*blocks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": list(blocks),
        "stop_reason": "end_turn",
        **extra,
    }


def search(query: str, tool_id: str = "srvtoolu_1") -> dict[str, Any]:
    return {"type": "server_tool_use", "id": tool_id, "name": "web_search", "input": {"query": query}}


def results(*urls: str, tool_id: str = "srvtoolu_1") -> dict[str, Any]:
    content = [{"type": "web_search_result", "url": url, "title": url, "encrypted_content": "x"} for url in urls]
    return {"type": "web_search_tool_result", "tool_use_id": tool_id, "content": content}


def failure(code: str, tool_id: str = "srvtoolu_1") -> dict[str, Any]:
    content = {"type": "web_search_tool_result_error", "error_code": code}
    return {"type": "web_search_tool_result", "tool_use_id": tool_id, "content": content}


def test_cited_blocks_are_the_claims() -> None:
    (answer,) = read(ANTHROPIC / "web-search.json")
    assert answer.text == (
        "I'll look up the Axtorp AX220 specifications.Based on the search results, the Axtorp AX220 has a "
        "20-litre tank and weighs 38 kg. For larger workshops, Axtorp recommends the AX300 with a 50-litre tank."
    )
    assert len(answer.text) == 200  # 45 + 29 + 36 + 5 + 12 + 73
    assert [(c.text, c.start, c.end, c.citations) for c in answer.claims] == [
        ("the Axtorp AX220 has a 20-litre tank", 74, 110, (0, 1)),
        ("weighs 38 kg", 115, 127, (2, 3)),
    ]
    cited = [c for c in answer.citations if c.kind is CitationKind.CITED]
    # no markers in Anthropic answers: each citation's location is its block
    assert [(c.marker, c.start, c.end) for c in cited] == [
        (None, 74, 110),
        (None, 74, 110),
        (None, 115, 127),
        (None, 115, 127),
    ]
    assert cited[0].quote == "AX220 · Tank: 20 l · Free air delivery: 220 l/min · Max. pressure: 10 bar"
    assert cited[1].quote == "The AX220 pairs a 20-litre receiver with a 2.2 kW motor."
    assert cited[3].url == "https://axtorp-machines.com/downloads/ax220-datasheet.pdf"
    assert cited[2].title == "Axtorp AX220 im Test: leise und kompakt | kompressor-test.de"


def test_retrieved_results_are_kept_apart_from_citations() -> None:
    (answer,) = read(ANTHROPIC / "web-search.json")
    assert (answer.model, answer.retrieval, answer.queries) == (
        "claude-sonnet-4-5-20250929",
        RetrievalStatus.USED,
        ("Axtorp AX220 tank size",),
    )
    # 4 results; ax220, kompressor-test and the datasheet are cited → only the forum thread is retrieved-only
    retrieved = [(c.url, c.title) for c in answer.citations if c.kind is CitationKind.RETRIEVED]
    assert retrieved == [
        (
            "https://www.druckluft-forum.de/thread/axtorp-ax220-erfahrungen",
            "Erfahrungen mit dem Axtorp AX220? - Druckluft-Forum",
        )
    ]


def test_duplicate_citations_collapse_into_one_edge(tmp_path: Path) -> None:
    prepared = read_file(ANTHROPIC / "web-search.json", READER, Attachment(PROTOCOL))
    audit = prepared.audit
    assert audit.answers[0].platform == "anthropic"
    # claim 1 cites ax220 twice → 1 edge with 2 locations; claim 2 cites two URLs → 2 edges
    assert sorted((e.claim_id[-2:], e.source_key, len(e.locations)) for e in audit.edges) == [
        ("c1", AX220, 2),
        ("c2", "https://axtorp-machines.com/downloads/ax220-datasheet.pdf", 1),
        ("c2", "https://www.kompressor-test.de/axtorp-ax220", 1),
    ]
    with citeaudit.Store(tmp_path / "a.db") as store:
        report = store_prepared(store, prepared)
    assert (report.answers, report.claims, report.edges, report.locations, report.retrieved) == (1, 2, 3, 4, 1)
    scored = citeaudit.score_path(tmp_path / "a.db").result
    # 3 unique edges over 4 locations, none labelled yet
    assert (scored.overall.edges.unique, scored.overall.edges.locations, scored.overall.edges.pending) == (3, 4, 3)
    assert scored.provisional is True


def test_tracking_parameters_stay_raw_but_the_source_key_is_normalized(write_json: Write) -> None:
    url = AX220 + "?utm_source=newsletter&utm_medium=email"
    cited = {"type": "web_search_result_location", "url": url, "title": "AX220", "cited_text": "Tank: 20 l"}
    path = write_json(
        message(search("ax220"), results(AX220), {"type": "text", "text": "It has a 20 l tank.", "citations": [cited]}),
        "m.json",
    )
    audit = read_file(path, READER, Attachment(PROTOCOL)).audit
    (answer,) = audit.answers
    assert [(c.url, c.source_key, c.kind) for c in answer.citations] == [(url, AX220, CitationKind.CITED)]
    # the retrieved result is the cited page (same key once the utm_* parameters go) → no retrieved-only entry


def test_german_offsets_are_code_points() -> None:
    (answer,) = read(ANTHROPIC / "german.json")
    # "Laut Hersteller gilt: " is 22; the cited block "Der AX220 fasst 20 Liter und wiegt 38 kg." is 41 → 22..63;
    # " Für größere Werkstätten " is 25 code points (29 UTF-8 bytes: ü, ö, ß, ä) → the next block starts at 88
    assert [(c.text, c.start, c.end) for c in answer.claims] == [
        ("Der AX220 fasst 20 Liter und wiegt 38 kg.", 22, 63),
        ("empfiehlt sich der AX300 mit 50 Litern.", 88, 127),
    ]
    for claim in answer.claims:
        assert answer.text[claim.start : claim.end] == claim.text
    assert answer.citations[1].quote == "Der AX300 ist mit seinem 50-Liter-Kessel für größere Werkstätten gedacht."


def test_block_white_space_is_not_part_of_the_claim(write_json: Write) -> None:
    cited = {"type": "web_search_result_location", "url": AX220, "title": "AX220", "cited_text": "20 l"}
    blocks: list[dict[str, Any]] = [
        {"type": "text", "text": "Axtorp says"},
        {"type": "text", "text": " the AX220 holds 20 l ", "citations": [cited]},
    ]
    (answer,) = read(write_json(message(*blocks), "m.json"))
    # the cited block is 11..33 (22 characters); the claim drops its leading and trailing space: 12..32
    assert [(c.text, c.start, c.end) for c in answer.claims] == [("the AX220 holds 20 l", 12, 32)]
    assert [(c.start, c.end) for c in answer.citations] == [(11, 33)]


def test_search_tool_error_is_a_retrieval_failure() -> None:
    (answer,) = read(ANTHROPIC / "tool-error.json")
    assert answer.retrieval is RetrievalStatus.FAILED
    assert answer.status is AnswerStatus.COMPLETE  # the model still answered
    assert (answer.claims, answer.citations) == ((), ())
    assert answer.queries == ("Axtorp AX220 tank capacity",)
    # the tool's error_code in the fixture is kept as the reason
    assert answer.retrieval_reason == "web_search_tool_result_error: unavailable"


def test_retrieval_reason_survives_the_database_and_the_export(cli: Cli, tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    protocol = tmp_path / "p.yaml"
    protocol.write_text("id: p\nversion: '1'\nquestions: [{id: q1, text: 'Tank size'}]\n", encoding="utf-8")
    assert cli("ingest", ANTHROPIC / "tool-error.json", "--db", db, "--questions", protocol).exit_code == 0
    exported = json.loads(cli("export", "--db", db, "--format", "audit-json").stdout)
    (answer,) = exported["answers"]
    assert (answer["retrieval"], answer["retrieval_reason"]) == ("failed", "web_search_tool_result_error: unavailable")


@pytest.mark.parametrize(
    ("blocks", "expected"),
    [
        ([{"type": "text", "text": "From memory: 20 l."}], RetrievalStatus.NOT_USED),
        ([search("ax220"), failure("max_uses_exceeded")], RetrievalStatus.FAILED),
        # a later search hit the use limit but the first one returned results: retrieval ran
        (
            [search("a", "s1"), results(AX220, tool_id="s1"), search("b", "s2"), failure("max_uses_exceeded", "s2")],
            "used",
        ),
        ([search("ax220")], RetrievalStatus.UNKNOWN),  # the search was issued, its result is not in the payload
        ([search("ax220"), results()], RetrievalStatus.USED),  # it ran and found nothing
    ],
    ids=["no search", "error only", "error after results", "no result block", "empty results"],
)
def test_retrieval_status(write_json: Write, blocks: list[dict[str, Any]], expected: str) -> None:
    (answer,) = read(write_json(message(*blocks), "m.json"))
    assert answer.retrieval == expected


def test_no_search_is_not_used() -> None:
    (answer,) = read(ANTHROPIC / "no-search.json")
    assert (answer.retrieval, answer.queries, answer.claims) == (RetrievalStatus.NOT_USED, (), ())


def test_refusal_is_a_complete_answer_recorded_as_is() -> None:
    (answer,) = read(ANTHROPIC / "refusal.json")
    assert (answer.status, answer.failure) == (AnswerStatus.COMPLETE, None)
    assert answer.text == "I can't help with bypassing the AX220's pressure relief valve."


@pytest.mark.parametrize(
    ("stop", "failure"),
    [
        ("max_tokens", "stop_reason 'max_tokens': cut off at the token limit"),
        ("pause_turn", "stop_reason 'pause_turn'"),
    ],
)
def test_cut_off_answers_are_incomplete(write_json: Write, stop: str, failure: str) -> None:
    (answer,) = read(write_json(message({"type": "text", "text": "The AX220 has"}, stop_reason=stop), "m.json"))
    assert (answer.status, answer.failure) == (AnswerStatus.INCOMPLETE, failure)


def test_error_body_is_a_failed_answer(write_json: Write) -> None:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    (answer,) = read(write_json(body, "m.json"))
    assert (answer.status, answer.failure, answer.text) == (AnswerStatus.FAILED, "overloaded_error: Overloaded", "")


def test_empty_answer_is_an_answer() -> None:
    (answer,) = read(ANTHROPIC / "empty.json")
    assert (answer.text, answer.claims, answer.citations, answer.status) == ("", (), (), AnswerStatus.COMPLETE)


def test_empty_answer_end_to_end(tmp_path: Path) -> None:
    prepared = read_file(ANTHROPIC / "empty.json", READER, Attachment(PROTOCOL))
    with citeaudit.Store(tmp_path / "a.db") as store:
        report = store_prepared(store, prepared)
    assert (report.answers, report.claims, report.edges) == (1, 0, 0)
    scored = citeaudit.score_path(tmp_path / "a.db").result
    # one answer, no edges: precision is 0/0 (undefined), the answer is still counted
    assert (scored.overall.answers, scored.overall.edges.unique) == (1, 0)
    assert scored.precision.denominator == 0


def test_malformed_citations_name_file_and_path() -> None:
    path = ANTHROPIC / "malformed.json"
    with pytest.raises(InvalidValue) as caught:
        read(path)
    assert caught.value.source == str(path)
    assert caught.value.location == "content[0].citations"
    assert caught.value.message.startswith("expected list (got {'type': 'web_search_result_location'")


def test_json_lines_locations_name_the_line(tmp_path: Path) -> None:
    good = message({"type": "text", "text": "The AX220 has a 20 l tank."})
    bad = message({"type": "text", "text": 20})
    path = tmp_path / "m.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(InvalidValue) as caught:
        read(path)
    assert (caught.value.location, caught.value.message) == ("line 2: content[0].text", "expected str (got 20)")


def test_document_and_unknown_citations(write_json: Write) -> None:
    citations = [
        {
            "type": "char_location",
            "cited_text": "Tank: 20 l",
            "document_index": 0,
            "document_title": "AX220 fact sheet",
        },
        {"type": "page_location", "cited_text": "20 l", "document_index": 1, "start_page_number": 2},
        {"type": "some_future_location", "url": "https://example.org"},
        {"type": "web_search_result_location", "url": None, "title": None, "cited_text": "?"},
    ]
    (answer,) = read(
        write_json(message({"type": "text", "text": "The tank holds 20 l.", "citations": citations}), "m.json")
    )
    # the unknown type is skipped; a web citation naming no page dangles; documents are title-only sources
    assert [(c.kind, c.url, c.title) for c in answer.citations] == [
        (CitationKind.CITED, None, "AX220 fact sheet"),
        (CitationKind.CITED, None, "document 1"),
        (CitationKind.DANGLING, None, None),
    ]
    assert [c.citations for c in answer.claims] == [(0, 1, 2)]


def _fixture_files() -> list[Path]:
    return sorted(p for p in FIXTURES.rglob("*") if p.is_file())


@pytest.mark.parametrize("path", _fixture_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_recognised_only_on_anthropic_payloads(path: Path) -> None:
    head = path.read_bytes()[:8192]
    assert READER.can_read(head) is (path.parent.name == "anthropic")


def test_an_openai_message_item_is_not_anthropic() -> None:
    # Responses message items share "type": "message" and "msg_" ids; a gateway may serve a Claude model in it
    item = (
        b'{"object": "response", "model": "claude-sonnet-4-5", "output": [{"id": "msg_1", "type": "message", '
        b'"content": [{"type": "output_text", "text": "x"}]}]}'
    )
    assert not READER.can_read(item)
    assert READER.can_read(b'{"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-opus-4-1"')
