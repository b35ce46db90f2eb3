"""Payload variants the readers must read rather than refuse: Gemini 3 tool parts, File Search chunks, web fetch,
citations without a position, file search, an uncited Sonar answer, and what a reader does not know."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from citeaudit.core.model import CitationKind, RetrievalStatus
from citeaudit.ingest import READERS, Attachment, read_file, read_files
from citeaudit.ingest.base import ParsedAnswer
from citeaudit.interchange import load_protocol

FIXTURES = Path(__file__).parent / "fixtures"
PROTOCOL = FIXTURES / "protocol.yaml"
Write = Callable[[Any, str], Path]
Cli = Callable[..., Result]


def parse(reader: str, path: Path) -> list[ParsedAnswer]:
    read = READERS[reader].read_answers
    assert read is not None
    return list(read(path.read_bytes(), str(path)))


def attachment() -> Attachment:
    protocol = load_protocol(PROTOCOL)
    return Attachment(protocol, question_id=protocol.questions[0].id)


# -- Gemini ---------------------------------------------------------------------------------------------------


def test_gemini_3_tool_parts_before_the_text_and_supports_without_part_index() -> None:
    path = FIXTURES / "gemini" / "gemini3-tool-parts.json"
    (answer,) = parse("gemini", path)
    text = "The AX220 has a 20 L tank. It weighs 41 kg and runs on 230 V."
    assert answer.text == text  # toolCall / toolResponse parts hold no answer text
    # bytes 0..26 and 27..61 of the only text part (ASCII: bytes are characters)
    assert [(c.text, c.start, c.end) for c in answer.claims] == [
        ("The AX220 has a 20 L tank.", 0, 26),
        ("It weighs 41 kg and runs on 230 V.", 27, 61),
    ]
    # 1 + 2 chunk indices: three cited locations, no chunk left only retrieved
    assert [c.kind for c in answer.citations] == [CitationKind.CITED] * 3
    assert answer.retrieval is RetrievalStatus.USED


def _file_search(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    text = "The AX220 has a 20 L tank."
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": text}]},
                "finishReason": "STOP",
                "groundingMetadata": {
                    "groundingChunks": [{"retrievedContext": chunk} for chunk in chunks],
                    "groundingSupports": [
                        {"segment": {"endIndex": 26, "text": text}, "groundingChunkIndices": list(range(len(chunks)))}
                    ],
                },
            }
        ],
        "modelVersion": "gemini-2.5-flash",
    }


def test_file_search_chunks_are_document_sources_keyed_by_what_identifies_them(write_json: Write) -> None:
    store = "fileSearchStores/ax-manuals-1"
    chunks = [
        {"fileSearchStore": store, "text": "Tank: 20 L."},  # nothing but its position
        {"fileSearchStore": store, "title": "ax220-manual.pdf", "text": "Detergent tank 20 L"},
        {"documentName": "projects/p/locations/l/ragCorpora/c/ragFiles/f-9", "text": "20 L tank"},
        {"fileSearchStore": store, "customMetadata": [{"key": "lang", "stringValue": "en"}], "text": "Tank 20 L"},
    ]
    path = write_json(_file_search(chunks), "file-search.json")
    audit = read_file(path, None, attachment()).audit
    (answer,) = audit.answers
    keys = [c.source_key for c in answer.citations]
    assert keys == [
        f"document:{answer.id}:chunk0",
        f"document:{store}/ax220-manual.pdf",
        "document:projects/p/locations/l/ragCorpora/c/ragFiles/f-9",
        f"document:{answer.id}:chunk3",
    ]
    # the retrieved passage is kept as the citation's quote; one claim, four edges (one per document)
    assert answer.citations[0].quote == "Tank: 20 L."
    assert (len(audit.claims), len(audit.edges)) == (1, 4)
    assert all(source.url is None for source in audit.sources)


def test_a_file_search_answer_does_not_refuse_its_batch(tmp_path: Path) -> None:
    web = json.loads((FIXTURES / "gemini" / "grounded.json").read_text(encoding="utf-8"))
    web = web[0] if isinstance(web, list) else web
    lines = [web, _file_search([{"fileSearchStore": "fileSearchStores/s", "text": "Tank: 20 L."}])]
    path = tmp_path / "batch.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    audit = read_file(path, None, attachment()).audit
    assert len(audit.answers) == 2


# -- Anthropic ------------------------------------------------------------------------------------------------


def _message(*content: dict[str, Any], stop: str = "end_turn") -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": list(content),
        "stop_reason": stop,
    }


FETCH_USE = {
    "type": "server_tool_use",
    "id": "srv_1",
    "name": "web_fetch",
    "input": {"url": "https://axtorp.com/ax220"},
}


@pytest.mark.parametrize("tool", ["web_fetch_20250910", "web_fetch_20260209"])
def test_web_fetch_result_is_retrieved_and_retrieval_used(write_json: Write, tool: str) -> None:
    # the tool version names the request's tool; both answer with the same result block
    fetched = {
        "type": "web_fetch_tool_result",
        "tool_use_id": "srv_1",
        "content": {
            "type": "web_fetch_result",
            "url": "https://axtorp.com/ax220",
            "content": {"type": "document", "title": "AX220", "source": {"type": "text", "data": "Tank 20 L"}},
            "retrieved_at": "2026-11-30T10:00:00Z",
        },
    }
    body = _message(FETCH_USE, fetched, {"type": "text", "text": f"The AX220 has a 20 L tank ({tool})."})
    (answer,) = parse("anthropic", write_json(body, "fetch.json"))
    assert [(c.url, c.title, c.kind) for c in answer.citations] == [
        ("https://axtorp.com/ax220", "AX220", CitationKind.RETRIEVED)
    ]
    assert answer.retrieval is RetrievalStatus.USED
    assert answer.notes == ()


def test_web_fetch_error_is_a_retrieval_failure(write_json: Write) -> None:
    failed = {
        "type": "web_fetch_tool_result",
        "tool_use_id": "srv_1",
        "content": {"type": "web_fetch_tool_error", "error_code": "url_not_accessible"},
    }
    (answer,) = parse("anthropic", write_json(_message(FETCH_USE, failed, {"type": "text", "text": "x"}), "e.json"))
    assert answer.retrieval is RetrievalStatus.FAILED
    assert answer.retrieval_reason == "web_fetch_tool_error: url_not_accessible"


def test_unknown_block_makes_the_answer_partly_understood_and_the_summary_says_so(
    write_json: Write, cli: Cli, tmp_path: Path
) -> None:
    body = _message({"type": "text", "text": "The AX220 has a 20 L tank."}, {"type": "hologram", "data": "?"})
    path = write_json(body, "odd.json")
    (answer,) = parse("anthropic", path)
    assert answer.notes == ("content block of type 'hologram'",)
    (prepared,) = read_files([path], attachment=attachment())
    assert prepared.partial == 1
    result = cli("ingest", path, "--db", tmp_path / "a.db", "--questions", PROTOCOL, "--question-id", "q01")
    assert result.exit_code == 0, result.output
    assert "1 answer(s) only partly understood" in result.stdout


# -- OpenAI ---------------------------------------------------------------------------------------------------


def _response(text: str, annotations: list[dict[str, Any]], *items: dict[str, Any]) -> dict[str, Any]:
    message = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": annotations}],
    }
    return {"object": "response", "status": "completed", "model": "gpt-5", "output": [*items, message]}


def test_a_position_less_citation_is_located_by_its_markdown_chip_when_written(write_json: Write) -> None:
    url = "https://axtorp-machines.com/ax220"
    text = f"The AX220 has a 20 L tank. ([axtorp-machines.com]({url})) It runs on 230 V."
    notes = [{"type": "url_citation", "url": url}, {"type": "url_citation", "url": "https://other.example/x"}]
    (answer,) = parse("openai-responses", write_json(_response(text, notes), "r.json"))
    chip = text.index("([")
    # the first is written as a chip: located there, it closes the sentence before it; the second is written
    # nowhere: cited by the answer as a whole, without a position and without a claim
    assert [(c.url, c.start) for c in answer.citations] == [(url, chip), ("https://other.example/x", None)]
    assert [(c.text, c.citations) for c in answer.claims] == [("The AX220 has a 20 L tank.", (0,))]


def test_openrouter_zero_offsets_are_no_position(write_json: Write) -> None:
    chat = {
        "object": "chat.completion",
        "model": "openai/gpt-4o",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {
                    "role": "assistant",
                    "content": "The AX220 has a 20 L tank.",
                    "annotations": [
                        {
                            "type": "url_citation",
                            "url_citation": {"url": "https://a.example/", "start_index": 0, "end_index": 0},
                        }
                    ],
                },
            }
        ],
    }
    (answer,) = parse("openai-chat", write_json(chat, "c.json"))
    assert [(c.url, c.kind, c.start) for c in answer.citations] == [("https://a.example/", CitationKind.CITED, None)]
    assert answer.claims == ()


def test_file_search_results_are_retrieved_documents_and_retrieval_used(write_json: Write) -> None:
    call = {
        "type": "file_search_call",
        "status": "completed",
        "queries": ["AX220 tank"],
        "results": [
            {"file_id": "file-1", "filename": "manual.pdf", "score": 0.9, "text": "Tank 20 L"},
            {"file_id": "file-2", "filename": "brochure.pdf", "score": 0.5, "text": "AX220"},
        ],
    }
    note = {"type": "file_citation", "file_id": "file-1", "filename": "manual.pdf", "index": 26}
    (answer,) = parse("openai-responses", write_json(_response("The AX220 has a 20 L tank.", [note], call), "f.json"))
    # file-1 is cited (answer-level); file-2 was only retrieved
    assert [(c.document, c.kind, c.start) for c in answer.citations] == [
        ("file-1", CitationKind.CITED, None),
        ("file-2", CitationKind.RETRIEVED, None),
    ]
    assert answer.retrieval is RetrievalStatus.USED
    assert answer.queries == ("AX220 tank",)


# -- Perplexity -----------------------------------------------------------------------------------------------


def test_uncited_sonar_answer_is_recognised_and_read() -> None:
    path = FIXTURES / "perplexity" / "sonar-uncited.json"
    prepared = read_file(path, None, attachment())
    assert prepared.reader.name == "perplexity"
    (answer,) = prepared.audit.answers
    assert answer.text == "The AX220 pressure washer has a 20 L detergent tank."
    assert answer.citations == ()
    assert prepared.audit.claims == ()


# -- documentation --------------------------------------------------------------------------------------------


def test_every_answer_reader_says_what_it_reads_and_does_with_position_less_citations(cli: Cli) -> None:
    listing = cli("formats", env={"COLUMNS": "400"}).stdout
    for name, reader in READERS.items():
        assert reader.reads, name
        assert reader.positionless, name
        assert name in listing
    assert "answer-level" in listing


def test_the_formats_page_covers_every_reader() -> None:
    page = (Path(__file__).parent.parent / "docs" / "formats.md").read_text(encoding="utf-8")
    for name in READERS:
        assert f"| `{name}` |" in page, name


def test_an_agent_output_item_not_known_yet_is_noted(write_json: Write) -> None:
    agent = json.loads((FIXTURES / "perplexity" / "agent.json").read_text(encoding="utf-8"))
    agent["output"].insert(0, {"type": "map_results", "places": []})
    agent["output"].insert(0, {"type": "reasoning", "summary": []})  # holds no text and no sources: not noted
    (answer,) = parse("perplexity", write_json(agent, "agent.json"))
    assert answer.notes == ("output item of type 'map_results'",)
    assert answer.text  # the rest is read as before


def test_an_agent_annotation_without_a_position_is_answer_level(write_json: Write) -> None:
    agent = json.loads((FIXTURES / "perplexity" / "agent.json").read_text(encoding="utf-8"))
    message = next(item for item in agent["output"] if item["type"] == "message")
    part = next(p for p in message["content"] if p["type"] == "output_text")
    part["annotations"] = [{"type": "url_citation", "url": "https://unlisted.example/ax220", "title": "AX220"}]
    (answer,) = parse("perplexity", write_json(agent, "agent.json"))
    unplaced = [c for c in answer.citations if c.url == "https://unlisted.example/ax220"]
    assert [(c.kind, c.start, c.title) for c in unplaced] == [(CitationKind.CITED, None, "AX220")]
    assert all(unplaced[0] is not answer.citations[i] for claim in answer.claims for i in claim.citations)


def test_an_x_search_call_is_a_search(write_json: Write) -> None:
    # xAI's X search: a function-call-shaped item whose arguments hold the query; its citations have no offsets
    call = {
        "type": "x_search_call",
        "name": "x_semantic_search",
        "arguments": '{"query": "AX220 reviews", "limit": 20}',
        "call_id": "",
        "status": "completed",
    }
    notes = [{"type": "url_citation", "url": "https://x.com/i/status/1"}]
    (answer,) = parse("openai-responses", write_json(_response("People like the AX220.", notes, call), "x.json"))
    assert answer.retrieval is RetrievalStatus.USED
    assert answer.queries == ("AX220 reviews",)
    assert answer.notes == ()
    assert [(c.url, c.start) for c in answer.citations] == [("https://x.com/i/status/1", None)]


def test_searches_counted_only_in_usage_make_retrieval_unknown(write_json: Write) -> None:
    body = {
        "object": "response",
        "model": "grok-4",
        "status": "completed",
        "output": [],
        "usage": {"total_tokens": 15, "server_side_tool_usage_details": {"web_search_calls": 1, "x_search_calls": 0}},
    }
    (answer,) = parse("openai-responses", write_json(body, "empty.json"))
    # one web search counted, none listed: unknown, never "not used"
    assert answer.retrieval is RetrievalStatus.UNKNOWN
    assert answer.retrieval_reason is not None


def test_url_context_pages_are_retrieved_and_offsets_count_across_text_parts() -> None:
    (answer,) = parse("gemini", FIXTURES / "gemini" / "url-context.json")
    lead = '\nThe first sentence of the AX220 page is "The AX220 has a 20 L tank.".'
    # the support has no partIndex and offsets 70..96: bytes of the two text parts joined (part 0 is 70 bytes),
    # so the claim is part 1, not the same words quoted inside part 0
    assert [(c.text, c.start, c.end) for c in answer.claims] == [
        ("The AX220 has a 20 L tank.", len(lead), len(lead) + 26)
    ]
    assert [(c.url, c.kind) for c in answer.citations] == [
        ("https://axtorp-machines.com/ax220", CitationKind.CITED),
        ("https://axtorp-machines.com/manual", CitationKind.RETRIEVED),  # fetched, not cited; the cited page once
    ]
    assert answer.retrieval is RetrievalStatus.USED
