"""Saved event streams: one parser for Server-Sent Events and one event per line, one reassembly per protocol.

A streamed response and the same response not streamed read as the same answer, whatever the pieces the text
came in (property-tested: the text split at any set of character boundaries, characters of one to four UTF-8
bytes among them); a stream cut before its final event gives what it holds, marked incomplete and counted.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import Result

from citeaudit import InvalidValue, MalformedInput
from citeaudit.core.model import AnswerStatus, CitationKind
from citeaudit.ingest import READERS, detect_reader
from citeaudit.ingest.base import ParsedAnswer
from citeaudit.ingest.events import Events
from citeaudit.ingest.shape import shape_of_file

PROTOCOL = Path(__file__).parent / "fixtures" / "protocol.yaml"
Cli = Callable[..., Result]


# -- writing streams ----------------------------------------------------------------------------------------


def sse(events: list[dict[str, Any]], *, named: bool = True, newline: str = "\n", done: bool = False) -> bytes:
    """An event-stream body: ``event:`` (the event's ``type``) when ``named``, ``data:``, a blank line."""
    blocks = []
    for event in events:
        name = f"event: {event['type']}{newline}" if named and "type" in event else ""
        blocks.append(f"{name}data: {json.dumps(event, ensure_ascii=False)}{newline}{newline}")
    if done:
        blocks.append(f"data: [DONE]{newline}{newline}")
    return "".join(blocks).encode("utf-8")


def json_lines(events: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(event, ensure_ascii=False) + "\n" for event in events).encode("utf-8")


def pieces(text: str, cuts: set[int]) -> list[str]:
    """``text`` split at the character positions ``cuts`` (empty pieces left out)."""
    bounds = [0, *sorted(c for c in cuts if 0 < c < len(text)), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds) if b > a]


def read(fmt: str, data: bytes) -> list[ParsedAnswer]:
    reader = READERS[fmt]
    assert reader.read_answers is not None
    return list(reader.read_answers(data, "payload"))


# -- the event parser ---------------------------------------------------------------------------------------


def test_sse_fields_comments_line_ends_and_done() -> None:
    body = (
        b": keep-alive comment\r\n\r\n"
        b'id: 7\r\nretry: 1000\r\nevent: first\r\ndata: {"a":\r\ndata: 1}\r\n\r\n'  # two data lines: one JSON
        b'data: {"b": 2}\r\r'  # CR line ends
        b'data:{"c": 3}\n\n'  # no space after the colon
        b"data: [DONE]\n\n"
    )
    events = Events(body, "s.sse")
    found = list(events)
    assert [(e.location, e.name, e.value) for e in found] == [
        ("line 6", "first", {"a": 1}),  # lines 1-2 the comment block, 3-5 id/retry/event, data on 6 and 7
        ("line 9", None, {"b": 2}),
        ("line 11", None, {"c": 3}),
    ]
    assert (events.done, events.cut, events.count) == (True, None, 3)


def test_json_lines_events() -> None:
    events = Events(b'{"type": "a"}\n\n{"type": "b"}\n', "s.txt")
    assert [(e.location, e.value) for e in events] == [("line 1", {"type": "a"}), ("line 3", {"type": "b"})]
    assert not events.sse


def test_a_broken_event_before_the_end_names_its_line() -> None:
    body = b'data: {"type": "ping"}\n\ndata: {"type": nope}\n\ndata: {"type": "ping"}\n\n'
    with pytest.raises(MalformedInput) as raised:
        list(Events(body, "s.sse"))
    assert (raised.value.source, raised.value.location) == ("s.sse", "line 3 column 10")


def test_a_last_event_broken_at_a_wrong_character_is_an_error_not_a_cut() -> None:
    with pytest.raises(MalformedInput):
        list(Events(b'data: {"type": "ping"}\n\ndata: {"type": ]}\n\n', "s.sse"))


@pytest.mark.parametrize("tail", [b'data: {"type": "pi', b'data: {"type": "ping", "n": [1, 2', b"data: {"])
def test_a_last_event_cut_off_is_left_out_and_said(tail: bytes) -> None:
    events = Events(b'data: {"type": "ping"}\n\n' + tail, "s.sse")
    assert [e.value for e in events] == [{"type": "ping"}]
    assert events.cut == "line 3"


# -- generated answers, whole and streamed ----------------------------------------------------------------

WORDS = st.sampled_from(["AX220", "tank", "holds", "20 L", "café", "naïve", "—", "日本", "😀", "𝔘nit", "a", "is"])
SENTENCES = st.lists(st.lists(WORDS, min_size=1, max_size=5).map(" ".join), min_size=1, max_size=4)
SITES = ["https://www.maker.example/ax220", "https://shop.example.org/p?id=4", "https://news.example.net/é"]


def responses_document(sentences: list[str]) -> tuple[dict[str, Any], str]:
    text, annotations = "", []
    for k, sentence in enumerate(sentences):
        url = SITES[k % len(SITES)]
        text += sentence + ". "
        chip = f"([site{k}]({url}))"
        annotations.append(
            {"type": "url_citation", "start_index": len(text), "end_index": len(text) + len(chip), "url": url}
        )
        text += chip + " "
    search = {"type": "web_search_call", "id": "ws_1", "status": "completed"}
    search["action"] = {"type": "search", "query": "ax220", "sources": [{"type": "url", "url": u} for u in SITES]}
    part = {"type": "output_text", "text": text, "annotations": annotations}
    message = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": [part]}
    document = {"id": "resp_1", "object": "response", "status": "completed", "model": "gpt-5"}
    return {**document, "output": [search, message]}, text


def responses_stream(document: dict[str, Any], text: str, cuts: set[int], *, final: bool = True) -> list[Any]:
    search, message = document["output"]
    envelope = {k: v for k, v in document.items() if k != "output"}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {**envelope, "status": "in_progress", "output": []}},
        {"type": "response.output_item.added", "output_index": 0, "item": {**search, "status": "in_progress"}},
        {"type": "response.output_item.done", "output_index": 0, "item": search},
        {"type": "response.output_item.added", "output_index": 1, "item": {**message, "content": []}},
        {"type": "response.content_part.added", "output_index": 1, "content_index": 0, "part": {"type": "output_text"}},
    ]
    annotations = message["content"][0]["annotations"]
    written = 0
    for piece in pieces(text, cuts):
        events.append({"type": "response.output_text.delta", "output_index": 1, "content_index": 0, "delta": piece})
        written += len(piece)
        for i, note in enumerate(annotations):  # each annotation once the text holds its chip
            if written >= note.get("end_index", len(text) + 1) and not note.get("sent"):  # no position: sent later
                note["sent"] = True
                events.append(
                    {
                        "type": "response.output_text.annotation.added",
                        "output_index": 1,
                        "content_index": 0,
                        "annotation_index": i,
                        "annotation": {k: v for k, v in note.items() if k != "sent"},
                    }
                )
    for note in annotations:
        note.pop("sent", None)
    if final:  # the final event without its output, so the items come from the events before it
        events.append({"type": "response.completed", "response": {**envelope, "output": []}})
    return events


def chat_document(sentences: list[str], sonar: bool) -> tuple[dict[str, Any], str]:
    text, annotations = "", []
    for k, sentence in enumerate(sentences):
        url = SITES[k % len(SITES)]
        if sonar:
            text += f"{sentence}[{k % len(SITES) + 1}]. "
            continue
        text += sentence + " "
        chip = f"([site{k}]({url}))"
        annotations.append(
            {
                "type": "url_citation",
                "url_citation": {"start_index": len(text), "end_index": len(text) + len(chip), "url": url},
            }
        )
        text += chip + ". "
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if not sonar:
        message["annotations"] = annotations
    document: dict[str, Any] = {
        "id": "c1",
        "object": "chat.completion",
        "model": "sonar" if sonar else "gpt-4o-search-preview",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    }
    if sonar:
        document["citations"] = SITES
        document["search_results"] = [{"title": f"Site {i}", "url": url} for i, url in enumerate(SITES)]
    return document, text


def chat_stream(document: dict[str, Any], text: str, cuts: set[int], *, final: bool = True) -> list[Any]:
    extras = {k: v for k, v in document.items() if k not in ("choices", "object")}
    chunk = {**extras, "object": "chat.completion.chunk"}
    message = document["choices"][0]["message"]
    events = [
        {**chunk, "choices": [{"index": 0, "delta": {"role": "assistant", "content": piece}, "finish_reason": None}]}
        for piece in pieces(text, cuts)
    ]
    if final:
        delta: dict[str, Any] = {"content": ""}
        if "annotations" in message:
            delta["annotations"] = message["annotations"]
        events.append({**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": "stop"}]})
    return events


def anthropic_document(sentences: list[str]) -> tuple[dict[str, Any], str]:
    content: list[dict[str, Any]] = [
        {"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {"query": "ax220 tank"}},
        {
            "type": "web_search_tool_result",
            "tool_use_id": "srv_1",
            "content": [{"type": "web_search_result", "url": u, "title": f"Site {i}"} for i, u in enumerate(SITES)],
        },
    ]
    for k, sentence in enumerate(sentences):
        citation = {"type": "web_search_result_location", "url": SITES[k % 3], "title": "t", "cited_text": sentence}
        content.append({"type": "text", "text": sentence + ". ", "citations": [citation]})
        content.append({"type": "text", "text": "Then "})
    body = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x", "stop_reason": "end_turn"}
    return {**body, "content": content}, "".join(b.get("text", "") for b in content)


def anthropic_stream(document: dict[str, Any], text: str, cuts: set[int], *, final: bool = True) -> list[Any]:
    head = {k: v for k, v in document.items() if k not in ("content", "stop_reason")}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": {**head, "content": [], "stop_reason": None}}]
    position = 0
    for index, block in enumerate(document["content"]):
        if block["type"] == "server_tool_use":
            events.append({"type": "content_block_start", "index": index, "content_block": {**block, "input": {}}})
            raw = json.dumps(block["input"])
            for piece in pieces(raw, {len(raw) // 2}):
                events.append(
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": piece},
                    }
                )
        elif block["type"] == "text":
            events.append(
                {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
            )
            for citation in block.get("citations", []):
                events.append(
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "citations_delta", "citation": citation},
                    }
                )
            # the text of this block, split where the whole text is cut
            own = {c - position for c in cuts if position < c < position + len(block["text"])}
            for piece in pieces(block["text"], own):
                events.append(
                    {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}
                )
            position += len(block["text"])
        else:
            events.append({"type": "content_block_start", "index": index, "content_block": block})
        events.append({"type": "content_block_stop", "index": index})
    if final:
        events.append({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}})
        events.append({"type": "message_stop"})
    return events


def gemini_document(sentences: list[str]) -> tuple[dict[str, Any], str]:
    text, supports = "", []
    for k, sentence in enumerate(sentences):
        start = len(text.encode("utf-8"))
        text += sentence + ". "
        end = len(text.encode("utf-8")) - 1
        supports.append({"segment": {"startIndex": start, "endIndex": end}, "groundingChunkIndices": [k % 3]})
    metadata = {
        "webSearchQueries": ["ax220"],
        "groundingChunks": [{"web": {"uri": url, "title": "maker.example"}} for url in SITES],
        "groundingSupports": supports,
    }
    candidate = {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}
    document = {
        "candidates": [{**candidate, "groundingMetadata": metadata}],
        "modelVersion": "gemini-3",
        "responseId": "r1",
    }
    return document, text


def gemini_stream(document: dict[str, Any], text: str, cuts: set[int], *, final: bool = True) -> list[Any]:
    candidate = document["candidates"][0]
    chunks = [
        {
            "candidates": [{"content": {"role": "model", "parts": [{"text": piece}]}}],
            "modelVersion": "gemini-3",
            "responseId": "r1",
        }
        for piece in pieces(text, cuts)
    ]
    if final:
        last = {"content": {"role": "model", "parts": [{"text": ""}]}, "finishReason": "STOP"}
        last["groundingMetadata"] = candidate["groundingMetadata"]
        chunks.append({"candidates": [last], "modelVersion": "gemini-3", "responseId": "r1"})
    return chunks


FORMS: dict[str, tuple[str, Callable[..., Any], Callable[..., Any]]] = {
    "openai-responses": ("openai-responses", responses_document, responses_stream),
    "openai-chat": ("openai-chat", lambda s: chat_document(s, sonar=False), chat_stream),
    "perplexity": ("perplexity", lambda s: chat_document(s, sonar=True), chat_stream),
    "anthropic": ("anthropic", anthropic_document, anthropic_stream),
    "gemini": ("gemini", gemini_document, gemini_stream),
}


def serialised(name: str, events: list[Any], form: str) -> bytes:
    if form == "sse":
        return sse(events, named=name in ("anthropic", "openai-responses"), done=name in ("openai-chat", "perplexity"))
    if form == "crlf":
        return sse(events, newline="\r\n")
    if form == "array":
        return json.dumps(events, ensure_ascii=False).encode("utf-8")
    return json_lines(events)


@settings(max_examples=25, deadline=None)
@given(
    name=st.sampled_from(sorted(FORMS)),
    sentences=SENTENCES,
    cut_at=st.sets(st.integers(min_value=1, max_value=200), max_size=30),
    form=st.sampled_from(["sse", "crlf", "lines", "array"]),
)
def test_a_streamed_answer_reads_as_the_same_answer_not_streamed(
    name: str, sentences: list[str], cut_at: set[int], form: str
) -> None:
    fmt, make_document, make_stream = FORMS[name]
    document, text = make_document(sentences)
    events = make_stream(document, text, cut_at)
    streamed = serialised(name, events, form)
    assert detect_reader(streamed, "s").name == fmt  # recognised without --format
    expected = read(fmt, json.dumps(document, ensure_ascii=False).encode("utf-8"))
    assert read(fmt, streamed) == expected
    assert expected[0].status is AnswerStatus.COMPLETE
    assert any(c.kind is CitationKind.CITED and c.start is not None for c in expected[0].citations)


@pytest.mark.parametrize("name", sorted(FORMS))
def test_one_character_a_delta_reads_as_the_whole(name: str) -> None:
    """Every character boundary a cut: characters of 1, 2, 3 and 4 UTF-8 bytes each in a delta of their own."""
    fmt, make_document, make_stream = FORMS[name]
    document, text = make_document(["AX220 café — 日本 😀 𝔘nit holds 20 L", "naïve tank"])
    streamed = sse(make_stream(document, text, set(range(len(text)))))
    assert read(fmt, streamed) == read(fmt, json.dumps(document).encode("utf-8"))


@pytest.mark.parametrize("name", sorted(FORMS))
def test_a_stream_cut_before_its_final_event_gives_what_it_holds_marked_incomplete(name: str) -> None:
    fmt, make_document, make_stream = FORMS[name]
    document, text = make_document(["AX220 holds 20 L", "café tank"])
    events = make_stream(document, text, {5, 9}, final=False)
    (answer,) = read(fmt, sse(events))
    assert answer.status is AnswerStatus.INCOMPLETE
    assert answer.failure is not None
    assert answer.failure.startswith("stream cut off before ")
    assert answer.failure.endswith(f"(after {len(events)} events)")
    assert answer.text == text  # the text was complete; only the final event is missing


def test_a_stream_cut_inside_an_event_keeps_the_events_before_it(tmp_path: Path, cli: Cli) -> None:
    document, text = responses_document(["AX220 holds 20 L", "café tank"])
    events = responses_stream(document, text, {3, 7})
    whole = json_lines(events)
    # the connection cut 10 bytes into the final response.completed line
    cut = whole[: whole.rindex(b'{"type": "response.completed"') + 10]
    (answer,) = read("openai-responses", cut)
    assert answer.status is AnswerStatus.INCOMPLETE
    assert answer.failure == f"stream cut off before response.completed (inside the event at line {len(events)})"
    assert answer.text == text
    path = tmp_path / "cut.chunks.txt"
    path.write_bytes(cut)
    result = cli("ingest", path, "--db", tmp_path / "c.db", "--questions", PROTOCOL, "--question-id", "q01")
    assert result.exit_code == 0, result.output
    # counted, never silently: no answer stored, one incomplete answer recorded
    assert f"{path} (openai-responses): 0 answers" in result.stdout
    assert "1 failed or incomplete answer(s) recorded" in result.stdout


def test_a_stream_cut_before_any_text_is_a_failed_answer() -> None:
    document, text = anthropic_document(["AX220 holds 20 L"])
    events = anthropic_stream(document, text, set())[:1]  # message_start only
    (answer,) = read("anthropic", sse(events))
    assert (answer.status, answer.text) == (AnswerStatus.FAILED, "")
    assert answer.failure == "stream cut off before message_stop (after 1 events)"


def test_a_delta_for_a_block_never_started_names_its_line() -> None:
    body = sse(
        [
            {"type": "message_start", "message": {"type": "message", "model": "claude-x", "content": []}},
            {"type": "content_block_delta", "index": 3, "delta": {"type": "text_delta", "text": "x"}},
        ]
    )
    with pytest.raises(InvalidValue) as raised:
        read("anthropic", body)
    assert str(raised.value) == "payload: line 5: a delta for content block 3, which no content_block_start opened"


def test_gemini_chunks_in_a_json_array_sharing_a_response_id_are_one_answer() -> None:
    document, text = gemini_document(["AX220 holds 20 L", "café tank"])
    chunks = gemini_stream(document, text, {4, 11})
    (answer,) = read("gemini", json.dumps(chunks).encode("utf-8"))
    assert answer == read("gemini", json.dumps(document).encode("utf-8"))[0]
    # two responses (their own ids) in a JSON list stay two answers
    other = {**document, "responseId": "r2"}
    assert len(read("gemini", json.dumps([document, other]).encode("utf-8"))) == 2


# -- Gemini Interactions ------------------------------------------------------------------------------------


def interaction(text: str, annotations: list[dict[str, Any]], status: str = "completed") -> dict[str, Any]:
    return {
        "id": "v1_x",
        "object": "interaction",
        "status": status,
        "model": "gemini-2.5-flash",
        "steps": [
            {"type": "thought"},
            {"type": "model_output", "content": [{"type": "text", "text": text, "annotations": annotations}]},
            {"type": "google_search_call", "id": "s1", "arguments": {"queries": ["ax220 tank"]}},
            {"type": "google_search_result", "call_id": "s1", "result": [{"search_suggestions": "<div/>"}]},
        ],
    }


def test_interaction_offsets_are_bytes_when_they_fit_else_characters() -> None:
    text = "Le café AX220 holds 20 L. Its tank is steel."
    second = text.index("Its")
    # UTF-8 bytes: "é" is two bytes, so the second sentence starts one byte later than its character index
    as_bytes = {"type": "url_citation", "url": SITES[0], "start_index": second + 1, "end_index": len(text) + 1}
    (answer,) = read("gemini-interactions", json.dumps(interaction(text, [as_bytes])).encode("utf-8"))
    (claim,) = answer.claims
    assert text[claim.start : claim.end] == "Its tank is steel."
    # offsets that cut "é" in two as bytes (7 is inside it: "Le caf" is 6 bytes, "é" bytes 6-7) are characters
    as_characters = {"type": "url_citation", "url": SITES[1], "start_index": 0, "end_index": 7}
    (answer,) = read("gemini-interactions", json.dumps(interaction(text, [as_characters])).encode("utf-8"))
    (claim,) = answer.claims
    assert text[claim.start : claim.end] == "Le café"


def test_interaction_annotation_without_offsets_is_answer_level_and_status_counts() -> None:
    text = "AX220 holds 20 L."
    note = {"type": "url_citation", "url": SITES[2], "title": "news.example.net"}
    (answer,) = read("gemini-interactions", json.dumps(interaction(text, [note], "incomplete")).encode("utf-8"))
    assert answer.claims == ()
    assert [(c.url, c.kind, c.start) for c in answer.citations] == [(SITES[2], CitationKind.CITED, None)]
    assert (answer.status, answer.failure) == (AnswerStatus.INCOMPLETE, "status 'incomplete'")
    assert answer.queries == ("ax220 tank",)


def test_interaction_stream_reads_as_the_interaction() -> None:
    text = "AX220 holds 20 L. Café tank."
    notes = [{"type": "url_citation", "url": SITES[0], "start_index": 0, "end_index": 17}]
    whole = interaction(text, notes)
    steps = whole.pop("steps")
    events = [
        {"event_type": "interaction.start", "interaction": {**whole, "status": "in_progress"}},
        {"event_type": "content.start", "index": 0, "content": {"type": "text"}},
        *(
            {"event_type": "content.delta", "index": 0, "delta": {"type": "text", "text": p}}
            for p in pieces(text, {4, 20})
        ),
        {"event_type": "content.delta", "index": 0, "delta": {"type": "text", "text": "", "annotations": notes}},
        {"event_type": "content.stop", "index": 0},
        {"event_type": "interaction.complete", "interaction": whole},
    ]
    expected = read("gemini-interactions", json.dumps({**whole, "steps": steps[1:2]}).encode("utf-8"))
    streamed = sse(events, named=False)
    assert detect_reader(streamed, "s").name == "gemini-interactions"
    assert read("gemini-interactions", streamed) == expected


def test_formats_lists_the_stream_forms_of_every_engine(cli: Cli) -> None:
    listing = cli("formats", env={"COLUMNS": "600"}).stdout
    assert "event streams" in listing
    for name in (*FORMS, "gemini-interactions"):
        streams = READERS[name].streams
        assert streams, name
        assert streams[:12] in listing, name  # the listing wraps and cuts long cells; their start is there
    page = (Path(__file__).parent.parent / "docs" / "formats.md").read_text(encoding="utf-8")
    section = page[page.index("## Saved event streams") :]
    for name in (*FORMS, "gemini-interactions"):
        assert f"| `{name}` |" in section, name


def test_malformed_events_are_refused_naming_where() -> None:
    opened = {"type": "response.created", "response": {"object": "response", "status": "in_progress", "output": []}}
    stray = {"type": "response.output_text.delta", "output_index": 4, "content_index": 0, "delta": "x"}
    with pytest.raises(InvalidValue) as raised:
        read("openai-responses", json_lines([opened, stray]))
    assert str(raised.value) == (
        "payload: line 2: a response.output_text.delta event for output item 4, content part 0, which no "
        "response.output_item.added opened"
    )
    chunk = {"id": "c1", "object": "chat.completion.chunk", "model": "gpt-4o-search-preview", "choices": 3}
    with pytest.raises(InvalidValue) as raised:
        read("openai-chat", sse([chunk], named=False))
    assert str(raised.value) == "payload: line 1: choices: expected list (got 3)"


def test_a_first_line_nested_past_the_limits_is_refused_not_crashed() -> None:
    deep = b'{"a":' * 100_000 + b"1" + b"}" * 100_000 + b"\n" + b'{"type": "response.created"}\n'
    with pytest.raises(MalformedInput):
        read("openai-responses", deep)


def test_an_event_stream_is_recognised_from_its_first_event_with_data(tmp_path: Path) -> None:
    document, text = anthropic_document(["AX220 holds 20 L"])
    events = anthropic_stream(document, text, set())
    # a byte-order mark, a comment and an event without data first; a first event with data larger than the
    # 64 KiB the shape is read in
    events[0]["message"]["padding"] = "x" * 200_000
    body = b"\xef\xbb\xbf: open\r\n\r\nevent: ping\r\n\r\n" + sse(events, newline="\r\n")
    path = tmp_path / "stream.sse"
    path.write_bytes(body)
    shape = shape_of_file(path)
    assert (shape.stream, shape.complete) == (True, True)
    assert shape.value_is("type", "message_start")
    assert detect_reader(shape, str(path)).name == "anthropic"
    (answer,) = read("anthropic", body)
    assert (answer.text, answer.status) == (text, AnswerStatus.COMPLETE)


def test_a_responses_stream_with_annotations_without_positions_reads_as_its_response() -> None:
    """xAI streams url_citation annotations with no start_index/end_index: answer-level, streamed or not."""
    document, text = responses_document(["AX220 holds 20 L", "café tank"])
    for note in document["output"][1]["content"][0]["annotations"]:
        del note["start_index"], note["end_index"]
    events = responses_stream(document, text, {2, 30})
    annotations = document["output"][1]["content"][0]["annotations"]
    events[-1:-1] = [
        {
            "type": "response.output_text.annotation.added",
            "output_index": 1,
            "content_index": 0,
            "annotation_index": i,
            "annotation": note,
        }
        for i, note in enumerate(annotations)
    ]
    (answer,) = read("openai-responses", sse(events))
    assert answer == read("openai-responses", json.dumps(document).encode("utf-8"))[0]
    # two annotations without positions, each placed at the markdown link to its URL written in the text
    cited = [c for c in answer.citations if c.kind is CitationKind.CITED]
    assert [text[c.start : c.end] for c in cited if c.start is not None] == [
        f"([site0]({SITES[0]}))",
        f"([site1]({SITES[1]}))",
    ]


@pytest.mark.parametrize(
    ("tool_input", "error", "says"),
    [
        # 101 nested objects: one past the loaders' depth limit of 100
        ('{"q":' * 101 + "1" + "}" * 101, MalformedInput, "nested deeper than 100 levels"),
        ('{"query": "ax220", "query": "ax300"}', InvalidValue, "given twice in one object"),
        ('{"query": ', MalformedInput, "invalid JSON"),
    ],
    ids=["nested", "duplicate key", "cut"],
)
def test_a_streamed_tool_input_is_read_by_the_bounded_loader(
    tool_input: str, error: type[Exception], says: str
) -> None:
    """The pieces of a server tool's input, joined, go through the same limits as any payload: refused in one
    line naming the block, never parsed past them."""
    document, text = anthropic_document(["The AX220 has a 20 L tank"])
    events = anthropic_stream(document, text, set())
    start = next(i for i, e in enumerate(events) if e["type"] == "content_block_start")
    # the tool's input as pieces, replacing those of the valid input
    events = [e for e in events if not (e.get("index") == 0 and e["type"] == "content_block_delta")]
    delta = {"type": "input_json_delta", "partial_json": tool_input}
    events.insert(start + 1, {"type": "content_block_delta", "index": 0, "delta": delta})
    with pytest.raises(error) as raised:
        read("anthropic", sse(events))
    assert says in str(raised.value)
    assert "the tool input of block 0" in str(raised.value)
