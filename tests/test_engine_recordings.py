"""Real engine payloads (../shared/data/engine-payloads): every recording reads right.

Each file is a live API response recorded by a public SDK or framework test suite (its SOURCES.md says where each
comes from). The expected answers, claims, edges, cited and retrieved URLs are derived here from the JSON itself,
by the rules SOURCES.md states per folder, with code that shares nothing with the readers; those derivations are
first checked against the figures SOURCES.md lists per file (``TABLE``), then against what ``citeaudit`` reads,
with ``--format`` and without it (content detection), through the library and through the CLI into a real SQLite
file.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import pytest
from typer.testing import Result

from citeaudit.core.model import Audit, CitationKind
from citeaudit.ingest import Attachment, plan_imports, read_file, read_files
from citeaudit.interchange import load_protocol
from conftest import SHARED

DATA = SHARED / "data" / "engine-payloads"
PROTOCOL = Path(__file__).parent / "fixtures" / "protocol.yaml"


def _data() -> Path:
    if not DATA.is_dir():
        if os.environ.get("CI"):
            pytest.fail(f"the recorded engine payloads are missing at {DATA}: CI must have ../shared/data")
        pytest.skip(f"recorded engine payloads not found at {DATA} (see ../shared/data/engine-payloads/SOURCES.md)")
    return DATA


# What SOURCES.md lists per file: (locations, unique cited URLs, spans, edges, retrieved-only); None is "–".
TABLE: dict[str, tuple[int, int, int | None, int | None, int | None]] = {
    "anthropic/pydantic-pause-turn-continued.json": (17, 15, 15, 15, 44),
    "anthropic/pydantic-pause-turn-first.json": (0, 0, 0, 0, None),
    "anthropic/pydantic-sf-weather-a.json": (9, 3, 9, 9, 7),
    "anthropic/pydantic-stream-news-reassembled.json": (9, 7, 8, 9, 12),
    "anthropic/pydantic-web-fetch.json": (0, 0, 0, 0, 1),
    "anthropic/vercel-web-search.json": (3, 2, 3, 3, 8),
    "gemini/pydantic-25pro-file-search.json": (2, 1, 2, 2, 0),
    "gemini/pydantic-25pro-sf-weather-a.json": (6, 3, 6, 6, 0),
    "gemini/pydantic-branch-vertex-25flash.json": (4, 2, 4, 4, 0),
    "gemini/pydantic-stream-weather-reassembled.json": (9, 5, 8, 9, 0),
    "openai-chat/pydantic-openrouter-annotations.json": (5, 5, None, None, 0),
    "openai-chat/pydantic-search-preview-time.json": (0, 0, 0, 0, 0),
    "openai-responses/pydantic-gpt5-builtin-search.json": (3, 3, 3, 3, 0),
    "openai-responses/pydantic-gpt52-annotations-a.json": (1, 1, 1, 1, 0),
    "openai-responses/pydantic-stream-annotations-reassembled.json": (1, 1, 1, 1, 0),
    "openai-responses/vercel-file-search-citation.json": (0, 0, 0, 0, 0),
    "openai-responses/vercel-xai-grok-web-search.json": (5, 5, None, None, 0),
    "perplexity/vercel-agent-web-search.json": (1, 1, 1, 1, 9),
    "perplexity/vercel-sonar-population.json": (13, 6, 7, 13, 1),
    "serpapi-ai-overview/serpapi-tutorials-matcha.json": (0, 0, 0, 0, 0),
}


# -- the comparison rule of SOURCES.md ----------------------------------------------------------------------


def url_key(url: str) -> str:
    """``utm_*`` parameters and the fragment dropped, scheme and host lower-cased; nothing else touched."""
    parts = urlsplit(url.strip())
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not k.startswith("utm_")])
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path, query, ""))


# -- the sentence rule of SOURCES.md (OpenAI and Perplexity claims) -----------------------------------------

ABBREVIATIONS = ("U.S.", "St.", "Bros.", "Inc.", "e.g.", "i.e.", "vs.", "No.", "Dr.")
LIST_MARKER = re.compile(r"^\s*(?:[-*•]|\d{1,3}[.)])\s+")
MARKDOWN_CHIP = re.compile(r"\(?\[[^\]\n]*\]\([^)\s]*\)\)?")
NUMBER_MARKER = re.compile(r"\[(\d+)\]")


def _is_boundary(text: str, i: int) -> bool:
    """Whether a sentence ends right before ``text[i]``: a line break, or ``.!?`` then a space, not after one of
    the abbreviations."""
    if i <= 0:
        return False
    if text[i - 1] == "\n":
        return True
    if text[i - 1] == " " and i >= 2 and text[i - 2] in ".!?":
        before = text[: i - 1]
        return not any(
            before.endswith(a) and (len(before) == len(a) or not before[-len(a) - 1].isalnum()) for a in ABBREVIATIONS
        )
    return False


def sentence_start(text: str, anchor: int) -> int:
    """Start of the sentence that holds ``text[anchor]``."""
    i = anchor
    while i > 0 and not _is_boundary(text, i):
        i -= 1
    return i


def claim_of(piece: str) -> str:
    """A claim's text: list marker, markdown chips and ``[n]`` markers removed, surrounding white space off."""
    return NUMBER_MARKER.sub("", MARKDOWN_CHIP.sub("", LIST_MARKER.sub("", piece, count=1))).strip()


# -- expected figures, per folder ---------------------------------------------------------------------------


@dataclass
class Expected:
    answers: int = 0
    not_answered: int = 0
    claims: list[str] = field(default_factory=list)
    edges: list[tuple[str, str]] = field(default_factory=list)
    """Sorted (claim text, source) of each edge; a source is its URL key, or ``#i`` for a chunk without URI.
    Two claims with the same text keep an edge each, so this is a list, not a set."""
    locations: int = 0
    cited: set[str] = field(default_factory=set)
    retrieved: set[str] = field(default_factory=set)
    documents: set[str] = field(default_factory=set)
    """Cited documents without a URL (uploaded files): not in SOURCES.md's URL figures; the reader documents
    them as ``document:<file id>`` sources cited by the answer as a whole."""

    def row(self) -> tuple[int, int, int, int, int]:
        return (self.locations, len(self.cited), len(self.claims), len(self.edges), len(self.retrieved))


def anthropic(bodies: list[dict[str, Any]]) -> Expected:
    """The messages of one answer (a paused turn and its continuation, or one message)."""
    found = Expected()
    if bodies[-1]["stop_reason"] == "pause_turn":
        return Expected(not_answered=1)
    found.answers = 1
    results: list[str] = []
    for body in bodies:
        for block in body["content"]:
            if block["type"] == "text" and block.get("citations"):
                claim = block["text"].strip()
                found.claims.append(claim)
                urls = {url_key(citation["url"]) for citation in block["citations"]}  # distinct (block, URL)
                found.locations += len(block["citations"])
                found.cited |= urls
                found.edges += [(claim, url) for url in urls]
            elif block["type"] == "web_search_tool_result" and isinstance(block["content"], list):
                results += [url_key(r["url"]) for r in block["content"]]
            elif block["type"] == "web_fetch_tool_result":
                results.append(url_key(block["content"]["url"]))
    found.edges.sort()
    found.retrieved = set(results) - found.cited
    return found


def gemini(body: dict[str, Any]) -> Expected:
    candidate = body["candidates"][0]
    metadata = candidate.get("groundingMetadata", {})
    chunks = metadata.get("groundingChunks", [])

    def source(i: int) -> str:
        chunk = chunks[i]
        uri = (chunk.get("web") or chunk.get("retrievedContext") or {}).get("uri")
        return url_key(uri) if uri else f"#{i}"  # a retrievedContext chunk without URI counts by its position

    spans: dict[tuple[int, int, int], str] = {}
    found = Expected(answers=1)
    used: set[str] = set()
    pairs: set[tuple[tuple[int, int, int], str]] = set()
    for support in metadata.get("groundingSupports", []):
        segment = support["segment"]
        span = (segment.get("partIndex", 0), segment.get("startIndex", 0), segment["endIndex"])
        spans.setdefault(span, segment["text"].strip())
        for index in support["groundingChunkIndices"]:
            found.locations += 1
            used.add(source(index))
            pairs.add((span, source(index)))  # distinct (span, source)
    found.claims = list(spans.values())
    found.edges = sorted((spans[span], src) for span, src in pairs)
    found.cited = used
    found.retrieved = {source(i) for i in range(len(chunks))} - used
    return found


def openai(text: str, annotations: list[dict[str, Any]], searched: Iterable[str]) -> Expected:
    """One answer text with its ``url_citation`` annotations (flat or nested)."""
    found = Expected(answers=1)
    located: list[tuple[int, int, str]] = []
    for raw in annotations:
        note = raw.get("url_citation", raw)
        if raw["type"] == "file_citation":
            found.documents.add(f"document:{raw['file_id']}")
        if raw["type"] != "url_citation":
            continue
        found.locations += 1
        found.cited.add(url_key(note["url"]))
        start, end = note.get("start_index"), note.get("end_index")
        if start is None or (start == 0 and end == 0):
            continue  # no position: counted as a cited URL only
        chip = text[start:end]
        # code-point offsets land on chips
        assert chip.startswith(("(", "[")), chip
        assert chip.endswith((")", "]")), chip
        located.append((start, end, url_key(note["url"])))
    located.sort()
    groups: list[list[tuple[int, int, str]]] = []
    for chip in located:
        if groups and not re.search(r"\w", text[groups[-1][-1][1] : chip[0]]):
            groups[-1].append(chip)
        else:
            groups.append([chip])
    for group in groups:
        first = group[0][0]
        anchor = len(text[:first].rstrip()) - 1
        claim = claim_of(text[sentence_start(text, anchor) : first])
        found.claims.append(claim)
        found.edges += sorted({(claim, url) for _, _, url in group})
    found.edges.sort()
    found.retrieved = {url_key(url) for url in searched} - found.cited
    return found


def perplexity(text: str, sources: dict[int, str]) -> Expected:
    """``[n]`` markers against the numbered sources."""
    found = Expected(answers=1)
    spans: dict[int, str] = {}
    pairs: set[tuple[int, str]] = set()
    # markers are not text: ".[1][2] Next" ends a sentence as ". Next" does
    blanked = NUMBER_MARKER.sub(lambda m: " " * len(m.group()), text)
    for match in NUMBER_MARKER.finditer(text):
        found.locations += 1
        url = sources.get(int(match.group(1)))
        if url is None:
            continue  # dangling
        found.cited.add(url_key(url))
        # the marker closes the sentence before it (a marker right after the punctuation belongs to it)
        anchor = len(blanked[: match.start()].rstrip()) - 1
        start = sentence_start(blanked, anchor)
        while blanked[start].isspace():
            start += 1
        claim = claim_of(text[start : match.start()])
        spans.setdefault(start, claim)
        pairs.add((start, url_key(url)))  # distinct (sentence, URL)
    found.claims = list(spans.values())
    found.edges = sorted((spans[start], url) for start, url in pairs)
    found.retrieved = {url_key(url) for url in sources.values()} - found.cited
    return found


def expected_for(relative: str, body: Any) -> Expected:
    folder = relative.split("/")[0]
    if folder == "anthropic":
        return anthropic([body])
    if folder == "gemini":
        return gemini(body)
    if folder == "openai-chat":
        message = body["choices"][0]["message"]
        return openai(message["content"], message.get("annotations") or [], ())
    if folder == "openai-responses":
        texts, annotations, searched = [], [], []
        for item in body["output"]:
            if item["type"] == "message":
                for part in item["content"]:
                    shift = sum(len(t) for t in texts)
                    texts.append(part["text"])
                    for note in part.get("annotations") or []:
                        moved = dict(note)
                        for name in ("start_index", "end_index"):
                            if isinstance(moved.get(name), int) and moved.get("end_index"):
                                moved[name] += shift
                        annotations.append(moved)
            elif item["type"] == "web_search_call":
                searched += [s["url"] for s in (item.get("action") or {}).get("sources") or []]
        return openai("".join(texts), annotations, searched)
    if folder == "perplexity":
        if "output" in body:
            results = next(item for item in body["output"] if item["type"] == "search_results")["results"]
            message = next(item for item in body["output"] if item["type"] == "message")
            text = "".join(part["text"] for part in message["content"] if part["type"] == "output_text")
            return perplexity(text, {r["id"]: r["url"] for r in results})
        listed = [r["url"] for r in body.get("search_results") or []] or body.get("citations") or []
        return perplexity(body["choices"][0]["message"]["content"], dict(enumerate(listed, start=1)))
    if folder == "serpapi-ai-overview":
        assert "ai_overview" not in body  # no top-level AI Overview: 0 answers, 1 failed
        return Expected(not_answered=1)
    raise AssertionError(f"no derivation for {relative}")


# -- what citeaudit reads -----------------------------------------------------------------------------------


def _attachment() -> Attachment:
    protocol = load_protocol(PROTOCOL)
    return Attachment(protocol, question_id=protocol.questions[0].id)


def _source_name(audit: Audit, key: str) -> str:
    """A source as the expectations name it: its URL key, or ``#i`` for a chunk known by its position."""
    source = next(s for s in audit.sources if s.key == key)
    if source.url:
        return url_key(source.url)
    chunk = re.search(r":chunk(\d+)$", key)
    return f"#{chunk.group(1)}" if chunk else key


@dataclass
class Read:
    answers: int
    not_answered: int
    claims: list[str]
    edges: list[tuple[str, str]]
    locations: int
    cited: set[str]
    retrieved: set[str]
    documents: set[str]


def observed(audit: Audit) -> Read:
    claim_text = {claim.id: claim.text for claim in audit.claims}
    cited: set[str] = set()
    retrieved: set[str] = set()
    documents: set[str] = set()
    for answer in audit.answers:
        for citation in answer.citations:
            if citation.source_key is None:
                continue
            name = _source_name(audit, citation.source_key)
            if citation.kind is CitationKind.CITED:
                (documents if name.startswith("document:") and citation.url is None else cited).add(name)
            elif citation.kind is CitationKind.RETRIEVED:
                retrieved.add(name)
    return Read(
        answers=len(audit.answers),
        not_answered=len(audit.failed_answers),
        claims=[claim.text for claim in audit.claims],
        edges=sorted((claim_text[e.claim_id], _source_name(audit, e.source_key)) for e in audit.edges),
        locations=sum(len(e.locations) for e in audit.edges),
        cited=cited,
        retrieved=retrieved,
        documents=documents,
    )


def check_spans(audit: Audit) -> None:
    """Every claim span slices its text out of the answer (markers and chips inside it removed)."""
    texts = {answer.id: answer.text for answer in audit.answers}
    for claim in audit.claims:
        assert claim.start is not None
        assert claim.end is not None
        sliced = texts[claim.answer_id][claim.start : claim.end]
        assert sliced == claim.text or claim_of(sliced) == claim.text, (sliced, claim.text)


FILES = sorted(TABLE)


def _case(relative: str) -> Any:
    return pytest.param(relative, id=relative)


def test_every_recording_is_covered() -> None:
    present = {str(p.relative_to(_data())) for p in _data().glob("*/*.json")}
    assert present == set(TABLE)


@pytest.mark.parametrize("relative", FILES)
def test_derivation_matches_the_figures_sources_md_lists(relative: str) -> None:
    body = json.loads((_data() / relative).read_text(encoding="utf-8"))
    derived = expected_for(relative, body).row()
    listed = TABLE[relative]
    # "–" in the table (no span or edge figure given, or no retrieved set for a paused turn) is not compared
    assert all(want is None or got == want for got, want in zip(derived, listed, strict=True)), (derived, listed)


def _read(relative: str, given_format: bool) -> tuple[Audit, Expected]:
    path = _data() / relative
    folder = relative.split("/")[0]
    prepared = read_file(path, folder if given_format else None, _attachment())
    assert prepared.reader.name == folder
    return prepared.audit, expected_for(relative, json.loads(path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("relative", FILES)
@pytest.mark.parametrize("given_format", [True, False], ids=["--format", "detected"])
def test_recording_answers_and_sources_read_right(relative: str, given_format: bool) -> None:
    audit, expected = _read(relative, given_format)
    got = observed(audit)
    assert (got.answers, got.not_answered) == (expected.answers, expected.not_answered)
    assert got.cited == expected.cited
    assert got.documents == expected.documents
    assert got.retrieved == expected.retrieved


@pytest.mark.parametrize("relative", [_case(f) for f in FILES])
@pytest.mark.parametrize("given_format", [True, False], ids=["--format", "detected"])
def test_recording_claims_and_edges_read_right(relative: str, given_format: bool) -> None:
    audit, expected = _read(relative, given_format)
    got = observed(audit)
    assert got.claims == expected.claims
    assert got.edges == expected.edges
    # every location of a claim with a position is one edge location; position-less ones make no edge
    assert got.locations == (expected.locations if expected.claims else 0)
    check_spans(audit)


def test_paused_turn_and_its_continuation_are_one_answer() -> None:
    first = _data() / "anthropic" / "pydantic-pause-turn-first.json"
    continued = _data() / "anthropic" / "pydantic-pause-turn-continued.json"
    (planned,) = plan_imports([first, continued])
    assert planned.files == (str(first), str(continued))
    (prepared,) = read_files([planned], attachment=_attachment())
    bodies = [json.loads(p.read_text(encoding="utf-8")) for p in (first, continued)]
    expected = anthropic(bodies)
    got = observed(prepared.audit)
    # one answer, none incomplete: the 15 claims and 15 edges of the continuation; the retrieved set now holds
    # the paused turn's 10 searches too (minus what is cited)
    assert (got.answers, got.not_answered) == (1, 0)
    assert got.claims == expected.claims
    assert got.edges == expected.edges
    assert got.retrieved == expected.retrieved
    assert len(got.retrieved) > TABLE["anthropic/pydantic-pause-turn-continued.json"][4]
    (answer,) = prepared.audit.answers
    # the paused turn's lead-in is the start of the answer; the queries of both turns are kept, 10 + 5 searches
    assert answer.text.startswith(bodies[0]["content"][1]["text"])
    tool_uses = [b for body in bodies for b in body["content"] if b["type"] == "server_tool_use"]
    assert len(answer.queries) == len({b["input"]["query"] for b in tool_uses}) == 15
    check_spans(prepared.audit)


Cli = Callable[..., Result]


@pytest.mark.parametrize("given_format", [True, False], ids=["--format", "detected"])
def test_cli_ingests_every_recording(cli: Cli, tmp_path: Path, given_format: bool) -> None:
    db = tmp_path / "payloads.db"
    totals = Expected()
    for relative in FILES:
        expected = expected_for(relative, json.loads((_data() / relative).read_text(encoding="utf-8")))
        totals.answers += expected.answers
        totals.not_answered += expected.not_answered
        args = ["ingest", _data() / relative, "--db", db, "--questions", PROTOCOL, "--question-id", "q01"]
        if given_format:
            args += ["--format", relative.split("/")[0]]
        result = cli(*args)
        assert result.exit_code == 0, result.output
        assert f"{expected.answers} answers" in result.stdout
    with sqlite3.connect(db) as connection:
        answers = connection.execute("SELECT count(*) FROM answers").fetchone()[0]
        failures = connection.execute("SELECT count(*) FROM ingest_failures").fetchone()[0]
    # 20 files: the paused turn alone (incomplete) and the SerpApi page without an AI Overview (failed) are not
    # answers, the 18 others one answer each: 18 + 2 = 20
    assert (answers, failures) == (totals.answers, totals.not_answered) == (18, 2)


def test_cli_summary_counts_position_less_citations(cli: Cli, tmp_path: Path) -> None:
    path = _data() / "openai-responses" / "vercel-xai-grok-web-search.json"
    result = cli("ingest", path, "--db", tmp_path / "x.db", "--questions", PROTOCOL, "--question-id", "q01")
    assert result.exit_code == 0, result.output
    # five url_citation annotations without start_index/end_index: five answer-level citations, no claim
    assert "1 answers, 0 claims, 0 edges" in result.stdout
    assert "5 cited source(s) without a position" in result.stdout


def test_cli_imports_a_paused_turn_and_its_continuation_as_one_answer(cli: Cli, tmp_path: Path) -> None:
    first = _data() / "anthropic" / "pydantic-pause-turn-first.json"
    continued = _data() / "anthropic" / "pydantic-pause-turn-continued.json"
    args = ["--db", tmp_path / "p.db", "--questions", PROTOCOL, "--question-id", "q01"]
    result = cli("ingest", first, continued, *args)
    assert result.exit_code == 0, result.output
    # one import named after both files: the continuation's 15 cited blocks (17 citation locations), no failure
    assert f"{first} + {continued} (anthropic): 1 answers, 15 claims, 15 edges from 17 locations" in result.stdout
    assert "failed or incomplete" not in result.stdout
