"""Real engine recordings, streams among them (../shared/data/engine-recordings-2): every file reads right.

Each file is a live API response recorded by a public SDK or framework test suite: raw ``text/event-stream``
bodies, one stream event per line, the Gemini Interactions API, and single responses whose citations are placed by
markers or by UTF-8 byte offsets. As in ``test_engine_recordings.py``, the figures are first derived from the bytes
by the rules of the folder's SOURCES.md (answers, citation locations, distinct cited URLs, retrieved-only sources),
with code here that shares nothing with the readers (its own event-stream split, no reassembled documents), and
checked against the figures SOURCES.md lists; then the files are read through the library and ingested through the
CLI into a real SQLite file, with ``--format`` and without it; every claim span slices its text out of its answer.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from citeaudit.core.model import Audit, CitationKind
from citeaudit.ingest import Attachment, plan_imports, read_file, read_files
from citeaudit.interchange import load_protocol
from conftest import SHARED
from test_engine_recordings import PROTOCOL, claim_of, observed, openai, perplexity, url_key

DATA = SHARED / "data" / "engine-recordings-2"


def _data() -> Path:
    if not DATA.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"the engine recordings are missing at {DATA}: CI must have ../shared/data")
        pytest.skip(f"engine recordings not found at {DATA} (see ../shared/data/engine-recordings-2/SOURCES.md)")
    return DATA


# What SOURCES.md lists per file: (answers, locations, distinct cited URLs, retrieved only); None is a blank cell.
TABLE: dict[str, tuple[int, int, int, int | None]] = {
    "anthropic/pydantic-pause-turn-stream-continued.sse": (1, 19, 15, 36),
    "anthropic/pydantic-pause-turn-stream-first.sse": (0, 0, 0, 90),
    "anthropic/rubyllm-haiku45-websearch-stream.sse": (1, 2, 2, 8),
    "gemini-interactions/vercel-interactions-google-search.json": (1, 18, 4, None),
    "gemini/rubyllm-35flash-websearch-20260819.json": (1, 10, 5, 0),
    "openai-chat/rubyllm-openrouter-sonar-markers.json": (1, 10, 10, None),
    "openai-chat/rubyllm-search-preview-ruby-20260819.json": (1, 3, 2, None),
    "openai-responses/vercel-openai-web-search-tool.1.chunks.txt": (1, 12, 7, 14),
    "perplexity/rubyllm-sonar-ruby-citations-stream.sse": (1, 11, 5, 2),
    "perplexity/rubyllm-sonar-ruby-citations.json": (1, 10, 4, 2),
}
FILES = sorted(TABLE)
MARKER = re.compile(r"\[(\d+)\]")


# -- the bytes, split into events here -----------------------------------------------------------------------


def sse_events(raw: bytes) -> Iterator[Any]:
    """The JSON of every ``data:`` block of an event-stream body (blocks end at a blank line; ``[DONE]`` is no
    event)."""
    text = raw.decode("utf-8").replace("\r\n", "\n")
    for block in text.split("\n\n"):
        data = "\n".join(line[5:].lstrip(" ") for line in block.split("\n") if line.startswith("data:"))
        if data.strip() and data.strip() != "[DONE]":
            yield json.loads(data)


def line_events(raw: bytes) -> Iterator[Any]:
    return (json.loads(line) for line in raw.decode("utf-8").splitlines() if line.strip())


# -- expected figures, per kind of file ----------------------------------------------------------------------


@dataclass
class Expected:
    answers: int = 0
    not_answered: int = 0
    locations: int = 0
    """Citation locations as SOURCES.md counts them."""
    cited: set[str] = field(default_factory=set)
    retrieved: set[str] = field(default_factory=set)
    placed: int | None = None
    """Cited citations located in the text, when it differs from ``locations`` (markers placing a list)."""
    claims: list[str] | None = None
    """Claim texts, where the rule derives them exactly (``None``: only counted through ``edges``)."""
    edges: list[tuple[str, str]] | None = None
    edge_count: int | None = None

    def row(self) -> tuple[int, int, int, int]:
        return (self.answers, self.locations, len(self.cited), len(self.retrieved))


def anthropic_stream(events: list[Any]) -> Expected:
    """Text blocks with their ``citations_delta`` events; search results from the ``web_search_tool_result``
    blocks; a message whose ``message_delta`` says ``pause_turn`` is no answer yet."""
    stop = next(e["delta"]["stop_reason"] for e in events if e["type"] == "message_delta")
    texts: dict[int, list[str]] = {}
    citations: dict[int, list[dict[str, Any]]] = {}
    results: set[str] = set()
    for event in events:
        if event["type"] == "content_block_start":
            block = event["content_block"]
            if block["type"] == "text":
                texts[event["index"]], citations[event["index"]] = [block["text"]], []
            elif block["type"] == "web_search_tool_result" and isinstance(block["content"], list):
                results |= {url_key(r["url"]) for r in block["content"]}
        elif event["type"] == "content_block_delta":
            delta = event["delta"]
            if delta["type"] == "text_delta":
                texts[event["index"]].append(delta["text"])
            elif delta["type"] == "citations_delta":
                citations[event["index"]].append(delta["citation"])
    found = Expected(answers=0 if stop == "pause_turn" else 1, not_answered=1 if stop == "pause_turn" else 0)
    found.claims, found.edges = [], []
    for index, cited in citations.items():
        if not cited:
            continue
        claim = "".join(texts[index]).strip()
        urls = {url_key(c["url"]) for c in cited}
        found.locations += len(cited)
        found.cited |= urls
        found.claims.append(claim)
        found.edges += [(claim, url) for url in urls]
    found.edges.sort()
    found.retrieved = results - found.cited
    if stop == "pause_turn":  # nothing of it is stored on its own: no claims, no edges, no sources
        found.claims, found.edges = [], []
    return found


def responses_stream(events: list[Any]) -> Expected:
    """The text from ``response.output_text.delta``, annotations from ``…annotation.added``, searched pages from
    the ``web_search_call`` items of ``response.output_item.done``."""
    text = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
    annotations = [e["annotation"] for e in events if e["type"] == "response.output_text.annotation.added"]
    searched = [
        source["url"]
        for e in events
        if e["type"] == "response.output_item.done" and e["item"]["type"] == "web_search_call"
        for source in (e["item"].get("action") or {}).get("sources") or []
    ]
    return openai(text, annotations, searched)


def sonar_stream(events: list[Any]) -> Expected:
    """The text from the chunks' ``delta.content``; the numbered sources of the last chunk (repeated in every
    chunk)."""
    text = "".join(e["choices"][0]["delta"].get("content") or "" for e in events)
    last = events[-1]
    listed = [r["url"] for r in last.get("search_results") or []] or last.get("citations") or []
    return perplexity(text, dict(enumerate(listed, start=1)))


def gemini_bytes(body: dict[str, Any]) -> Expected:
    """Supports located by UTF-8 byte offsets (a missing ``startIndex`` is 0); the spans are those offsets decoded
    and trimmed of white space."""
    candidate = body["candidates"][0]
    text = "".join(p["text"] for p in candidate["content"]["parts"] if "text" in p and not p.get("thought"))
    encoded = text.encode("utf-8")
    metadata = candidate["groundingMetadata"]
    uris = [url_key(chunk["web"]["uri"]) for chunk in metadata["groundingChunks"]]
    found = Expected(answers=1)
    spans: set[tuple[int, int]] = set()
    pairs: set[tuple[tuple[int, int], str]] = set()
    for support in metadata["groundingSupports"]:
        segment = support["segment"]
        first = len(encoded[: segment.get("startIndex", 0)].decode("utf-8"))
        last = len(encoded[: segment["endIndex"]].decode("utf-8"))
        assert text[first:last] == segment["text"]  # the byte offsets slice out the segment's own text
        piece = text[first:last]
        span = (first + len(piece) - len(piece.lstrip()), last - (len(piece) - len(piece.rstrip())))
        spans.add(span)
        for index in support["groundingChunkIndices"]:
            found.locations += 1
            found.cited.add(uris[index])
            pairs.add((span, uris[index]))
    found.retrieved = set(uris) - found.cited
    found.edge_count = len(pairs)
    found.spans = spans  # type: ignore[attr-defined]
    return found


def interactions(body: dict[str, Any]) -> Expected:
    """``url_citation`` annotations of the ``model_output`` steps' text: each a located span (the text is ASCII
    here, so characters and bytes agree)."""
    found = Expected(answers=1)
    pairs: set[tuple[int, int, str]] = set()
    for step in body["steps"]:
        for content in step.get("content") or [] if step["type"] == "model_output" else []:
            assert content["text"].isascii()
            for note in content.get("annotations") or []:
                found.locations += 1
                found.cited.add(url_key(note["url"]))
                pairs.add((note["start_index"], note["end_index"], url_key(note["url"])))
    found.edge_count = len(pairs)
    return found


def sonar_markers_in_chat(body: dict[str, Any]) -> Expected:
    """OpenRouter's Sonar: every annotation at 0/0 (SOURCES.md counts them: the locations and cited URLs); the
    ``[n]`` markers in the text place annotation ``n`` (the list is Sonar's, in order)."""
    message = body["choices"][0]["message"]
    notes = [a["url_citation"] for a in message["annotations"]]
    assert all((n["start_index"], n["end_index"]) == (0, 0) for n in notes)
    by_markers = perplexity(message["content"], {i: n["url"] for i, n in enumerate(notes, start=1)})
    found = Expected(answers=1, locations=len(notes), cited={url_key(n["url"]) for n in notes})
    referenced = {int(m.group(1)) for m in MARKER.finditer(message["content"])}
    # every marker placed, and one answer-level citation for each annotation no marker names
    found.placed = by_markers.locations + len(notes) - len(referenced)
    found.claims, found.edges = by_markers.claims, by_markers.edges
    return found


def expected_for(relative: str) -> Expected:
    raw = (_data() / relative).read_bytes()
    folder = relative.split("/")[0]
    if relative.endswith(".sse"):
        events = list(sse_events(raw))
        return anthropic_stream(events) if folder == "anthropic" else sonar_stream(events)
    if relative.endswith(".chunks.txt"):
        return responses_stream(list(line_events(raw)))
    body = json.loads(raw)
    if folder == "gemini":
        return gemini_bytes(body)
    if folder == "gemini-interactions":
        return interactions(body)
    if folder == "perplexity":
        listed = [r["url"] for r in body.get("search_results") or []] or body.get("citations") or []
        return perplexity(body["choices"][0]["message"]["content"], dict(enumerate(listed, start=1)))
    if "perplexity/" in body["model"]:
        return sonar_markers_in_chat(body)
    message = body["choices"][0]["message"]
    return openai(message["content"], message.get("annotations") or [], ())


def _adapted(found: Any) -> Expected:
    """An expectation of ``test_engine_recordings`` (same rules) as one of this file."""
    if isinstance(found, Expected):
        return found
    return Expected(
        answers=found.answers,
        not_answered=found.not_answered,
        locations=found.locations,
        cited=found.cited,
        retrieved=found.retrieved,
        claims=found.claims,
        edges=found.edges,
    )


def expected(relative: str) -> Expected:
    return _adapted(expected_for(relative))


# -- what citeaudit reads -----------------------------------------------------------------------------------


def _attachment() -> Attachment:
    protocol = load_protocol(PROTOCOL)
    return Attachment(protocol, question_id=protocol.questions[0].id)


def _read(relative: str, given_format: bool) -> Audit:
    folder = relative.split("/")[0]
    prepared = read_file(_data() / relative, folder if given_format else None, _attachment())
    assert prepared.reader.name == folder
    return prepared.audit


def check_spans(audit: Audit) -> None:
    """Every claim span slices its text out of its answer (markers and chips inside it removed, runs of white
    space read as one space)."""
    texts = {answer.id: answer.text for answer in audit.answers}
    for claim in audit.claims:
        assert claim.start is not None
        assert claim.end is not None
        sliced = re.sub(r"^#{1,6}\s+", "", texts[claim.answer_id][claim.start : claim.end])  # a heading's marks
        assert claim.text in (" ".join(sliced.split()), " ".join(claim_of(sliced).split())), (sliced, claim.text)


def _cited_locations(audit: Audit) -> int:
    return sum(1 for answer in audit.answers for c in answer.citations if c.kind is CitationKind.CITED)


def test_every_recording_is_covered() -> None:
    present = {str(p.relative_to(_data())) for p in _data().glob("*/*") if p.name != "SOURCES.md"}
    assert present == set(TABLE)


@pytest.mark.parametrize("relative", FILES)
def test_derivation_matches_the_figures_sources_md_lists(relative: str) -> None:
    derived = expected(relative).row()
    listed = TABLE[relative]
    # a blank "retrieved only" cell is not compared
    assert all(want is None or got == want for got, want in zip(derived, listed, strict=True)), (derived, listed)


@pytest.mark.parametrize("relative", FILES)
@pytest.mark.parametrize("given_format", [True, False], ids=["--format", "detected"])
def test_recording_reads_right(relative: str, given_format: bool) -> None:
    audit = _read(relative, given_format)
    want = expected(relative)
    got = observed(audit)
    assert (got.answers, got.not_answered) == (want.answers, want.not_answered)
    if want.answers:
        assert got.cited == want.cited
        assert got.retrieved == want.retrieved
        assert _cited_locations(audit) == (want.placed if want.placed is not None else want.locations)
    if want.claims is not None:
        assert got.claims == want.claims
    if want.edges is not None:
        assert got.edges == want.edges
    if want.edge_count is not None:
        assert len(got.edges) == want.edge_count
    check_spans(audit)


def test_gemini_byte_offsets_land_on_the_characters_they_count() -> None:
    """Gemini 3.5: an em-dash (3 UTF-8 bytes) before later segments, and a first support without ``startIndex``."""
    relative = "gemini/rubyllm-35flash-websearch-20260819.json"
    audit = _read(relative, given_format=False)
    (answer,) = audit.answers
    spans: set[tuple[int, int]] = expected_for(relative).spans  # type: ignore[attr-defined]
    # each claim starts where a segment starts and ends within it (a markdown link closing a segment is the
    # citation chip, not part of the claim); every segment is a claim
    assert {claim.start for claim in audit.claims} == {start for start, _ in spans}
    assert len(audit.claims) == len(spans)
    for claim in audit.claims:
        assert claim.end is not None
        rests = [answer.text[claim.end : end] for start, end in spans if start == claim.start and end >= claim.end]
        assert any(not re.search(r"\w", re.sub(r"\[[^\]]*\]\([^)]*\)", "", rest)) for rest in rests)
    first = min(audit.claims, key=lambda claim: claim.start or 0)
    # the first support starts at the text's first character (no startIndex given)
    assert first.start == 0
    assert answer.text[first.start : first.end].startswith("The latest stable version of Ruby")
    after_dash = [c for c in audit.claims if "—" in answer.text[: c.start or 0]]
    assert after_dash  # some segments start after the em-dash, where bytes and characters differ by 2 per dash
    for claim in after_dash:
        assert answer.text[claim.start : claim.end].strip() == answer.text[claim.start : claim.end]


def test_paused_stream_and_its_continuation_are_one_answer() -> None:
    first = _data() / "anthropic" / "pydantic-pause-turn-stream-first.sse"
    continued = _data() / "anthropic" / "pydantic-pause-turn-stream-continued.sse"
    (planned,) = plan_imports([first, continued])
    assert planned.files == (str(first), str(continued))
    (prepared,) = read_files([planned], attachment=_attachment())
    events = [*sse_events(first.read_bytes()), *sse_events(continued.read_bytes())]
    paused, answer = anthropic_stream(list(sse_events(first.read_bytes()))), expected(str(continued.relative_to(DATA)))
    got = observed(prepared.audit)
    # one answer, none incomplete: the continuation's claims and edges; the retrieved set holds the paused turn's
    # searches too, those also cited left out
    assert (got.answers, got.not_answered) == (1, 0)
    assert got.claims == answer.claims
    assert got.edges == answer.edges
    assert got.retrieved == (paused.retrieved | answer.retrieved) - answer.cited
    (stored,) = prepared.audit.answers
    assert set(stored.queries) == stream_queries(events)
    check_spans(prepared.audit)


def stream_queries(events: list[Any]) -> set[str]:
    """The ``query`` of every ``server_tool_use`` block: its ``input_json_delta`` pieces joined, per message."""
    pieces: dict[tuple[int, int], list[str]] = {}
    message = -1
    for event in events:
        if event["type"] == "message_start":
            message += 1
        elif event["type"] == "content_block_start" and event["content_block"]["type"] == "server_tool_use":
            pieces[(message, event["index"])] = []
        elif event["type"] == "content_block_delta" and event["delta"]["type"] == "input_json_delta":
            pieces[(message, event["index"])].append(event["delta"]["partial_json"])
    return {json.loads("".join(parts))["query"] for parts in pieces.values()}


Cli = Callable[..., Result]


@pytest.mark.parametrize("given_format", [True, False], ids=["--format", "detected"])
def test_cli_ingests_every_recording(cli: Cli, tmp_path: Path, given_format: bool) -> None:
    db = tmp_path / "recordings.db"
    answers = not_answered = 0
    for relative in FILES:
        want = expected(relative)
        answers, not_answered = answers + want.answers, not_answered + want.not_answered
        args = ["ingest", _data() / relative, "--db", db, "--questions", PROTOCOL, "--question-id", "q01"]
        if given_format:
            args += ["--format", relative.split("/")[0]]
        result = cli(*args)
        assert result.exit_code == 0, result.output
        assert f"({relative.split('/')[0]}): {want.answers} answers" in result.stdout
    with sqlite3.connect(db) as connection:
        stored = connection.execute("SELECT count(*) FROM answers").fetchone()[0]
        failures = connection.execute("SELECT count(*) FROM ingest_failures").fetchone()[0]
    # 10 files: the paused stream alone is no answer yet (incomplete), the 9 others one answer each
    assert (stored, failures) == (answers, not_answered) == (9, 1)


def test_a_file_given_the_wrong_format_is_refused_naming_the_one_it_looks_like(cli: Cli, tmp_path: Path) -> None:
    path = _data() / "gemini-interactions" / "vercel-interactions-google-search.json"
    db = tmp_path / "wrong.db"
    result = cli("ingest", path, "--format", "gemini", "--db", db, "--questions", PROTOCOL, "--question-id", "q01")
    assert result.exit_code == 2
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line == (
        f"error: {path}: --format: this is not gemini content: it looks like gemini-interactions "
        "(pass --format gemini-interactions, or leave --format out to have the format recognised)"
    )
    assert "Traceback" not in result.output
    assert not db.exists()


def test_cli_summary_says_the_markers_placed_position_less_citations(cli: Cli, tmp_path: Path) -> None:
    path = _data() / "openai-chat" / "rubyllm-openrouter-sonar-markers.json"
    result = cli("ingest", path, "--db", tmp_path / "m.db", "--questions", PROTOCOL, "--question-id", "q01")
    assert result.exit_code == 0, result.output
    # 17 markers ([1][3][4] twice, [2][5][8], [2][3][5], [3][4], [1][4], [3]: 3+3+3+3+2+2+1) place annotations 1, 2,
    # 3, 4, 5 and 8 (all at 0/0); annotations 6, 7, 9 and 10 no marker names stay answer-level
    assert "17 citation(s) given without a position placed by the answer's [n] markers" in result.stdout
    assert "4 cited source(s) without a position in the text" in result.stdout
    # one claim per marked sentence: 7 sentences carry markers
    assert "(openai-chat): 1 answers, 7 claims" in result.stdout


def test_a_saved_event_stream_is_archived_as_one(cli: Cli, tmp_path: Path) -> None:
    db = tmp_path / "media.db"
    for relative in ("anthropic/rubyllm-haiku45-websearch-stream.sse", "perplexity/rubyllm-sonar-ruby-citations.json"):
        result = cli("ingest", _data() / relative, "--db", db, "--questions", PROTOCOL, "--question-id", "q01")
        assert result.exit_code == 0, result.output
    with sqlite3.connect(db) as connection:
        stored = dict(connection.execute("SELECT size, media_type FROM payloads").fetchall())
    files = [(_data() / r).stat().st_size for r in ("anthropic/rubyllm-haiku45-websearch-stream.sse",)]
    assert stored[files[0]] == "text/event-stream"
    assert sorted(stored.values()) == ["application/json", "text/event-stream"]
