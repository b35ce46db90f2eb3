"""Google AI Overviews from SerpApi (``serpapi-ai-overview``).

Fixtures are hand-written from the documented shapes. The answer text of ``google.json``, with offsets counted
by hand (separators: a blank line between blocks, "\\n- " before a list item, "\\n  - " one level deeper):

    0..99     "The Axtorp AX220 is a portable air compressor with a 20-litre tank and a maximum pressure of 8 bar."
    101..119  "Key specifications"                                  (heading, no references)
    122..165  "Tank: 20 litres, steel, with a drain valve."         (item title + snippet: 5 + 1 + 37)
    168..200  "Noise: About 68 dB at one metre."                    (6 + 1 + 25; reference 1 twice)
    203..236  "Models: Axtorp sells three sizes:"                   (7 + 1 + 25)
    241..266  "AX150 with a 6-litre tank"                           (nested item, 25)
    271..297  "AX300 with a 50-litre tank"                          (nested item, 26; references 3 and 9)
    299..319  "Warranty and service"                                (expandable block's title)
    321..393  "Axtorp gives a 3-year warranty when the compressor is registered online."  (inside the expandable)
    395..436  "Prices and availability vary by retailer."           (no references)

The references are listed in the order index 2, 0, 3, 1, 4: position and ``index`` differ on purpose.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import citeaudit
from citeaudit import InvalidValue, MalformedInput
from citeaudit.core.model import AnswerStatus, CitationKind, RetrievalStatus
from citeaudit.ingest import Attachment, gemini, perplexity, read_file, store_prepared
from citeaudit.ingest.base import ParsedAnswer
from citeaudit.ingest.serpapi import PAGE_TOKEN_ONLY, READER
from payloads import read_one_with, read_with, write_payload

FIXTURES = Path(__file__).parent / "fixtures"
SERPAPI = FIXTURES / "serpapi-ai-overview"
PROTOCOL = citeaudit.Protocol(id="p", version="1", questions=(citeaudit.Question("q1", "Tank size?"),))
AXTORP = "https://www.axtorp-machines.com/en/compressors/ax220#:~:text=20%2Dlitre%20tank"
RETAILER = "https://www.protooldirect.com/axtorp-ax220-20l.html?srsltid=AfmBOoq7Xk2Lw9"
REVIEW = "https://www.toolreviewhub.co.uk/reviews/axtorp-ax220/?utm_source=google&utm_medium=aio"
FORUM = "https://forum.workshoptalk.net/t/axtorp-ax150-vs-ax220/4821"
DATASHEET = "https://www.axtorp-machines.com/downloads/ax300-datasheet.pdf"


def read(path: Path) -> list[ParsedAnswer]:
    return read_with(READER, path)


def read_one(path: Path) -> ParsedAnswer:
    return read_one_with(READER, path)


def reference(index: int, link: str | None = "https://a.example/x", **extra: Any) -> dict[str, Any]:
    return {"title": f"Reference {index}", "link": link, "source": "Example", "index": index, **extra}


def test_text_is_built_from_snippets_in_reading_order() -> None:
    answer = read_one(SERPAPI / "google.json")
    assert answer.text == (
        "The Axtorp AX220 is a portable air compressor with a 20-litre tank and a maximum pressure of 8 bar.\n\n"
        "Key specifications\n"
        "- Tank: 20 litres, steel, with a drain valve.\n"
        "- Noise: About 68 dB at one metre.\n"
        "- Models: Axtorp sells three sizes:\n"
        "  - AX150 with a 6-litre tank\n"
        "  - AX300 with a 50-litre tank\n\n"
        "Warranty and service\n\n"
        "Axtorp gives a 3-year warranty when the compressor is registered online.\n\n"
        "Prices and availability vary by retailer."
    )
    assert (answer.platform, answer.status, answer.retrieval) == (
        "google-ai-overview",
        AnswerStatus.COMPLETE,
        RetrievalStatus.USED,
    )


def test_each_cited_snippet_is_one_claim_including_nested_list_items() -> None:
    answer = read_one(SERPAPI / "google.json")
    assert [(c.start, c.end, c.text, c.citations) for c in answer.claims] == [
        (
            0,
            99,
            "The Axtorp AX220 is a portable air compressor with a 20-litre tank and a maximum pressure of 8 bar.",
            (0, 1),
        ),
        (122, 165, "Tank: 20 litres, steel, with a drain valve.", (2,)),
        (168, 200, "Noise: About 68 dB at one metre.", (3, 4)),
        (203, 236, "Models: Axtorp sells three sizes:", (5,)),
        (241, 266, "AX150 with a 6-litre tank", (6,)),
        (271, 297, "AX300 with a 50-litre tank", (7, 8)),
        (321, 393, "Axtorp gives a 3-year warranty when the compressor is registered online.", (9,)),
    ]


def test_reference_indexes_name_the_index_field_not_the_position() -> None:
    answer = read_one(SERPAPI / "google.json")
    rows = [(c.kind, c.start, c.url, c.publisher) for c in answer.citations]
    cited = CitationKind.CITED
    assert rows == [
        (cited, 0, AXTORP, "Axtorp"),  # index 0 is the second reference in the list
        (cited, 0, RETAILER, "ProTool Direct"),  # index 2 is the first
        (cited, 122, AXTORP, "Axtorp"),
        (cited, 168, REVIEW, "Tool Review Hub"),
        (cited, 168, REVIEW, "Tool Review Hub"),
        (cited, 203, FORUM, "WorkshopTalk"),
        (cited, 241, FORUM, "WorkshopTalk"),
        (cited, 271, FORUM, "WorkshopTalk"),
        (CitationKind.DANGLING, 271, None, None),  # no reference has index 9
        (cited, 321, AXTORP, "Axtorp"),
        (CitationKind.RETRIEVED, None, DATASHEET, "Axtorp"),  # index 4 is never referenced
    ]
    assert answer.citations[0].title == "AX220 Portable Air Compressor - Axtorp"


def test_google_overview_end_to_end(tmp_path: Path) -> None:
    prepared = read_file(SERPAPI / "google.json", READER, Attachment(PROTOCOL))
    assert {a.platform for a in prepared.audit.answers} == {"google-ai-overview"}
    db = tmp_path / "a.db"
    with citeaudit.Store(db) as store:
        report = store_prepared(store, prepared)
    assert (report.dangling, report.retrieved) == (1, 1)
    result = citeaudit.score_path(db).result
    # 2 + 1 + 1 + 1 + 1 + 1 + 1 = 8 unique edges; "Noise" cites reference 1 twice, so 9 locations.
    assert (result.overall.edges.unique, result.overall.edges.locations) == (8, 9)
    assert result.provisional is True


def test_tables_render_one_row_per_line() -> None:
    answer = read_one(SERPAPI / "ai-overview-engine.json")
    intro = "Axtorp makes three compressors that differ mainly in tank size:"
    table = "Model | Tank | Max. pressure\nAX150 | 6 l | 8 bar\nAX220 | 20 l | 8 bar\nAX300 | 50 l | 10 bar"
    assert answer.text == f"{intro}\n\n{table}"
    # The intro is 63 characters; the table starts after the blank line at 65 and runs 91 characters.
    assert [(c.start, c.end, c.citations) for c in answer.claims] == [(0, 63, (0,)), (65, 156, (1, 2))]


def test_overview_fields_at_the_top_level_are_read(tmp_path: Path) -> None:
    document = {
        "search_parameters": {"engine": "google_ai_overview", "page_token": "KIVu-nict"},
        "text_blocks": [{"type": "paragraph", "snippet": "The AX220 has a 20-litre tank.", "reference_indexes": [1]}],
        "references": [reference(1, "https://www.axtorp-machines.com/en/compressors/ax220")],
    }
    answer = read_one(write_payload(tmp_path, document))
    assert [(c.kind, c.url) for c in answer.citations] == [
        (CitationKind.CITED, "https://www.axtorp-machines.com/en/compressors/ax220")
    ]


def test_page_token_only_is_incomplete(tmp_path: Path) -> None:
    answer = read_one(SERPAPI / "page-token.json")
    assert (answer.status, answer.failure) == (AnswerStatus.INCOMPLETE, PAGE_TOKEN_ONLY)
    assert PAGE_TOKEN_ONLY == "page_token only: fetch engine=google_ai_overview within 4 minutes"
    prepared = read_file(SERPAPI / "page-token.json", READER, Attachment(PROTOCOL))
    assert prepared.audit.answers == ()
    assert [(f.status, f.platform) for f in prepared.audit.failed_answers] == [
        (AnswerStatus.INCOMPLETE, "google-ai-overview")
    ]


@pytest.mark.parametrize(
    ("document", "status", "failure"),
    [
        (
            {"search_parameters": {"engine": "google"}, "organic_results": []},
            AnswerStatus.FAILED,
            "no AI Overview shown",
        ),
        (
            {"error": "Google hasn't returned any results for this query."},
            AnswerStatus.FAILED,
            "no AI Overview shown (Google hasn't returned any results for this query.)",
        ),
        ({"ai_overview": {"error": "Timed out."}}, AnswerStatus.FAILED, "AI Overview error: Timed out."),
        (
            {"ai_overview": {"text_blocks": [{"type": "paragraph", "snippet": " "}]}},
            AnswerStatus.FAILED,
            "empty AI Overview",
        ),
    ],
)
def test_missing_overviews_are_recorded(
    tmp_path: Path, document: dict[str, Any], status: AnswerStatus, failure: str
) -> None:
    answer = read_one(write_payload(tmp_path, document))
    assert (answer.status, answer.failure, answer.text) == (status, failure, "")


def test_no_overview_fixture_is_failed() -> None:
    answer = read_one(SERPAPI / "no-overview.json")
    assert (answer.status, answer.failure) == (AnswerStatus.FAILED, "no AI Overview shown")


def test_wrong_reference_index_type_names_its_path() -> None:
    path = SERPAPI / "bad-index.json"
    with pytest.raises(InvalidValue) as caught:
        read(path)
    assert str(caught.value) == f"{path}: ai_overview.text_blocks[1].reference_indexes[0]: expected int (got '1')"


def test_reference_without_link_or_title_is_refused(tmp_path: Path) -> None:
    document = {
        "ai_overview": {
            "text_blocks": [{"type": "paragraph", "snippet": "Tank: 20 l.", "reference_indexes": [0]}],
            "references": [{"snippet": "…", "source": "Example", "index": 0}],
        }
    }
    with pytest.raises(InvalidValue) as caught:
        read(write_payload(tmp_path, document))
    assert (caught.value.location, caught.value.message) == ("ai_overview.references[0]", "has neither link nor title")


def test_json_lines_report_the_line(tmp_path: Path) -> None:
    good = {"ai_overview": {"text_blocks": [{"type": "paragraph", "snippet": "Tank: 20 l."}]}}
    bad = {"ai_overview": {"text_blocks": [{"type": "list", "list": [{"snippet": 5}]}]}}
    path = tmp_path / "batch.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n", encoding="utf-8")
    with pytest.raises(InvalidValue) as caught:
        read(path)
    assert caught.value.location == "line 2: ai_overview.text_blocks[0].list[0].snippet"


def test_malformed_json_names_file_and_position() -> None:
    path = SERPAPI / "malformed.json"
    with pytest.raises(MalformedInput) as caught:
        read(path)
    assert (caught.value.source, caught.value.location) == (str(path), "line 1 column 320")


@pytest.mark.parametrize("path", sorted(SERPAPI.iterdir()), ids=lambda p: p.name)
def test_can_read_every_serpapi_fixture(path: Path) -> None:
    assert READER.can_read(path.read_bytes()[:8192])


@pytest.mark.parametrize(
    "path",
    sorted((FIXTURES / "perplexity").iterdir()) + sorted((FIXTURES / "gemini").iterdir()),
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_cannot_read_other_engines_fixtures(path: Path) -> None:
    head = path.read_bytes()[:8192]
    assert not READER.can_read(head)
    assert perplexity.can_read(head) or gemini.can_read(head)


@pytest.mark.parametrize("engine", ["bing_copilot", "google_ai_mode"])
def test_cannot_read_other_serpapi_engines(engine: str) -> None:
    document = {
        "search_parameters": {"engine": engine, "q": "axtorp ax220"},
        "text_blocks": [{"type": "paragraph", "snippet": "x", "reference_indexes": [0]}],
        "references": [reference(0)],
    }
    assert not READER.can_read(json.dumps(document, indent=2).encode())
