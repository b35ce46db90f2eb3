"""Segmenting engine answers after ingest: engine spans are never crossed and every resulting claim keeps the
citations that stand in its sentence or clause (real payload fixtures, real SQLite file, the CLI)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from typer.testing import Result

from citeaudit.store import Store

Cli = Callable[..., Result]
FIXTURES = Path(__file__).parent / "fixtures"


def _ingest_and_segment(cli: Cli, tmp_path: Path, payload: Path, question: str) -> tuple[Path, dict[str, object]]:
    db = tmp_path / "engine.db"
    ingested = cli(
        "ingest",
        payload,
        "--db",
        db,
        "--questions",
        FIXTURES / "protocol.yaml",
        "--question-id",
        question,
        "--run",
        "r1",
    )
    assert ingested.exit_code == 0, ingested.stderr
    segmented = cli("segment", "--db", db, "--run", "r1", "--format", "json")
    assert segmented.exit_code == 0, segmented.stderr
    return db, json.loads(segmented.stdout)


def _claims(db: Path) -> list[tuple[str, int, int, list[str]]]:
    """Current claims with the markers of their edges' locations (or the location spans)."""
    with Store(db) as store:
        ((answer_pk, _, _),) = store.claims.answers("r1")
        state = store.claims.of_answer(answer_pk)
    found = []
    for claim in state.claims:
        locations = sorted(
            f"{marker or ''}@{start}"
            for edge in state.edges
            if edge.claim_pk == claim.pk
            for marker, start, _ in edge.locations
        )
        found.append((claim.text, claim.start or 0, claim.end or 0, locations))
    return found


def test_perplexity_markers_go_to_their_sentence_or_clause(cli: Cli, tmp_path: Path) -> None:
    db, report = _ingest_and_segment(cli, tmp_path, FIXTURES / "perplexity" / "sonar.json", "q01")
    claims = _claims(db)
    # "The Axtorp AX220 has a 20-litre tank" = 3+1+6+1+5+1+3+1+1+1+13 = 36 → [0, 36); " and " 36..41;
    # "delivers up to 8 bar" = 20 → [41, 61); "." 61; "[1][1]" at 62 and 65 stand after the full stop, so both
    # claims of the sentence get both locations (one edge each, two locations)
    assert claims[0] == ("The Axtorp AX220 has a 20-litre tank", 0, 36, ["[1]@62", "[1]@65"])
    assert claims[1] == ("The Axtorp AX220 delivers up to 8 bar", 41, 61, ["[1]@62", "[1]@65"])
    # "[2]" stands inside the next sentence, "[3]" after its full stop: both belong to its one claim
    text, _, _, locations = claims[2]
    assert text.startswith("Reviewers describe it as quiet at 68 dB")
    assert [loc.split("@")[0] for loc in locations] == ["[2]", "[3]"]
    # one sentence, unsplit, equals its ingested claim up to the full stop: that claim is kept, stop included
    assert text == "Reviewers describe it as quiet at 68 dB, although one retailer lists 70 dB."
    # five sentences and list items, the first split in two: 6 claims. Kept (span and text equal to the ingested
    # claim up to the full stop): the sentence above and the two list items, whose ingested spans leave the "- "
    # bullet out as the rules do = 3. New: the two halves of the first sentence, and the AX300 sentence, whose
    # ingested span runs on over "[4][9]." (markers before the stop) = 3. Nothing skipped, no location left
    # without a claim.
    assert len(claims) == 6
    assert (report["new"], report["kept"], report["unattached"], report["skipped"]) == (3, 3, 0, {})


def test_gemini_segments_are_never_crossed(cli: Cli, tmp_path: Path) -> None:
    db, report = _ingest_and_segment(cli, tmp_path, FIXTURES / "gemini" / "umlaut-cjk.json", "q01")
    with Store(db) as store:
        ((answer_pk, _, _),) = store.claims.answers("r1")
        regions = store.claims.of_answer(answer_pk).regions
    # the engine's segments (character offsets after UTF-8 conversion, see test_ingest_gemini)
    assert regions == ((0, 74), (75, 121), (123, 142), (142, 162))
    claims = _claims(db)
    for _, start, end, _ in claims:
        assert any(r_start <= start and end <= r_end for r_start, r_end in regions)
    # segment 1 holds two coordinated predicates: "Der Axtorp AX220 hat einen 20-Liter-Tank" =
    # 3+1+6+1+5+1+3+1+5+1+13 = 40 → [0, 40); " und " 40..45; "ist mit 68 dB angenehm leise" = 28 → [45, 73).
    # A Gemini location is the segment span itself, so both claims get both sources of segment 1.
    assert claims[0][:3] == ("Der Axtorp AX220 hat einen 20-Liter-Tank", 0, 40)
    assert claims[1][:3] == ("Der Axtorp AX220 ist mit 68 dB angenehm leise", 45, 73)
    assert claims[0][3] == claims[1][3] == ["@0", "@0"]
    # segments 2-4 are one sentence each, equal to the engine's segment up to its final . or 。 (the comma ，
    # does not split): the ingested claims stay, with their punctuation and their labels
    assert [c[:3] for c in claims[2:]] == [
        ("Für größere Werkstätten eignet sich der AX300.", 75, 121),
        ("AX300 的储气罐容量为 50 升。", 123, 142),
        ("最大工作压力为 10 巴，适合连续使用。", 142, 162),
    ]
    # new: segment 1's two claims; retired: segment 1's ingested claim; kept: 3.
    # pending edges: 2 + 2 (segment 1, two claims, two sources each) = 4
    assert (report["new"], report["kept"], report["retired"], report["edges_pending"]) == (2, 3, 1, 4)
    assert report["unattached"] == 0
