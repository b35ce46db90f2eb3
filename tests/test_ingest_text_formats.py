"""Markdown and JSON Lines answers, and the ingest command around engine answers (protocol, question, run)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from citeaudit import InvalidValue, Label, MalformedInput, load_protocol, score_path
from citeaudit.core.model import CitationKind
from citeaudit.ingest import Attachment, read_file
from citeaudit.ingest import jsonl as jsonl_reader
from citeaudit.ingest import markdown as markdown_reader
from citeaudit.ingest.text import SentenceIndex, candidates, sentence_containing, span_before

FIXTURES = Path(__file__).parent / "fixtures"
PROTOCOL = FIXTURES / "protocol.yaml"
Cli = Callable[..., Result]


def test_markdown_markers_claims_and_references() -> None:
    path = FIXTURES / "markdown" / "ax220-answer.md"
    (answer,) = markdown_reader.read_answers(path.read_bytes(), str(path))
    assert answer.text == path.read_text(encoding="utf-8")  # stored verbatim, reference list included
    kinds = [(c.marker, c.kind) for c in answer.citations]
    # body markers in order [1] [1] [2] [3] [7]; [7] points past the list; [4] is listed but never referenced
    assert kinds == [
        ("[1]", CitationKind.CITED),
        ("[1]", CitationKind.CITED),
        ("[2]", CitationKind.CITED),
        ("[3]", CitationKind.CITED),
        ("[7]", CitationKind.DANGLING),
        ("[4]", CitationKind.CITED),
    ]
    assert answer.citations[2].url == "https://www.compressor-reviews.net/axtorp-ax220-review#outdoor"
    assert answer.citations[3].title == "AX220 Kompressor"
    # [1][1] and [2] stand in one sentence → one claim with three citation locations; [3] closes the next
    assert [c.text for c in answer.claims] == [
        "It has a 20 L tank and is rated IP54, so it can run outdoors.",
        "Noise is rated at 68 dB(A) at 1 m.",
    ]
    assert [c.citations for c in answer.claims] == [(0, 1, 2), (3,)]
    first = answer.claims[0]
    assert answer.text[first.start : first.end].startswith("It has a 20 L tank [1][1]")


def test_markdown_end_to_end_with_protocol_file(cli: Cli, tmp_path: Path) -> None:
    db = tmp_path / "md.db"
    path = FIXTURES / "markdown" / "ax220-answer.md"
    result = cli("ingest", path, "--db", db, "--questions", PROTOCOL, "--question-id", "q01", "--platform", "chatgpt")
    assert result.exit_code == 0, result.stderr
    assert "1 dangling marker(s)" in result.stdout
    scored = score_path(db).result
    # claim 1 cites ax220 page (twice → 1 edge) and the review; claim 2 cites axtorp.de → 3 edges, 4 locations
    assert (scored.overall.edges.unique, scored.overall.edges.locations) == (3, 4)
    assert scored.provisional is True
    # axtorp-machines.com is official → the answer cites an official source: 1/1
    assert (scored.official_rate.numerator, scored.official_rate.denominator) == (1, 1)
    # q01 requires f01 and no claim is mapped to it: 0 of 1 pair covered, 1 without a claim
    assert (scored.coverage.numerator, scored.coverage.denominator) == (0, 1)
    assert scored.overall.required.without_claim == 1
    again = cli("ingest", path, "--db", db, "--questions", PROTOCOL, "--question-id", "q01", "--platform", "chatgpt")
    assert "already imported" in again.stdout


def test_generic_formats_need_a_platform(tmp_path: Path) -> None:
    path = FIXTURES / "markdown" / "ax220-answer.md"
    protocol = load_protocol(PROTOCOL)
    with pytest.raises(InvalidValue, match="--platform"):
        read_file(path, attachment=Attachment(protocol, question_id="q01"))


def test_engine_answers_need_a_question_when_the_protocol_has_several(tmp_path: Path) -> None:
    path = FIXTURES / "markdown" / "ax220-answer.md"
    with pytest.raises(InvalidValue, match="--question-id"):
        read_file(path, attachment=Attachment(load_protocol(PROTOCOL), platform="chatgpt"))


def test_engine_answers_need_a_protocol(cli: Cli, tmp_path: Path) -> None:
    db = tmp_path / "none.db"
    result = cli("ingest", FIXTURES / "markdown" / "ax220-answer.md", "--db", db, "--platform", "x")
    assert result.exit_code == 2
    assert "--questions" in result.stderr
    assert not db.exists()


def test_jsonl_answers(cli: Cli, tmp_path: Path) -> None:
    path = FIXTURES / "jsonl" / "answers.jsonl"
    answers = list(jsonl_reader.read_answers(path.read_bytes(), str(path)))
    assert [a.answer_id for a in answers] == ["pp-q01", "cg-q01", "gm-q02"]
    # line 1: "[1]" closes sentence 1, "[2][2]" sentence 2 → two claims; line 2 has no markers → no claims
    assert [c.text for c in answers[0].claims] == ["The AX220 has a 20 L tank.", "It is rated IP54."]
    assert [c.citations for c in answers[0].claims] == [(0,), (1, 2)]
    assert answers[1].claims == ()
    assert [c.kind for c in answers[1].citations] == [CitationKind.CITED]
    db = tmp_path / "jsonl.db"
    assert cli("ingest", path, "--db", db, "--questions", PROTOCOL, "--run", "r-2026-11").exit_code == 0
    body = json.loads(cli("score", db, "--by", "platform", "--format", "json").stdout)
    # 3 answers; pp and cg cite official pages → 2/3; 2 edges (3 locations), all pending
    assert {k: body["official_rate"][k] for k in ("value", "numerator", "denominator")} == {
        "value": 2 / 3,
        "numerator": 2,
        "denominator": 3,
    }
    assert (body["edges"]["unique"], body["edges"]["locations"], body["edges"]["pending"]) == (2, 3, 2)
    # q01 requires f01: two answers to q01 → 2 pairs, none covered; q02 requires nothing
    # no claim is mapped to f01, so the 2 pending edges cannot cover it: 0 of 2, final
    assert body["coverage"] == {"value": 0.0, "numerator": 0, "denominator": 2}
    assert [g["by"]["platform"] for g in body["groups"]] == ["chatgpt", "gemini", "perplexity"]


def test_json_lines_split_at_line_feeds_only() -> None:
    # JSON may carry U+2028 and U+0085 raw inside a string; str.splitlines would cut such a line in two.
    first = '{"id": "a1", "platform": "p", "text": "Tank: 20\u2028L and\u0085more."}'
    second = '{"id": "a2", "platform": "p", "text": "Weight: 35 kg."}'
    data = (first + "\r\n\n" + second + "\n").encode()
    answers = list(jsonl_reader.read_answers(data, "raw.jsonl"))
    assert [a.text for a in answers] == ["Tank: 20\u2028L and\u0085more.", "Weight: 35 kg."]
    # line 1, a blank line 2, then line 3 broken: the location counts line feeds, the blank line included;
    # line 3 is 21 characters long and ends where a value is expected, so the error is at column 22
    broken = (first + "\n\n" + '{"id": "a3", "text": ' + "\n").encode()
    with pytest.raises(MalformedInput) as raised:
        list(jsonl_reader.read_answers(broken, "broken.jsonl"))
    assert raised.value.location == "line 3 column 22"


def test_jsonl_unknown_key_is_refused(tmp_path: Path) -> None:
    path = FIXTURES / "jsonl" / "unknown-key.jsonl"
    with pytest.raises(InvalidValue) as raised:
        list(jsonl_reader.read_answers(path.read_bytes(), str(path)))
    assert raised.value.location == "$: plattform"


def test_sentence_rules() -> None:
    text = (
        "Der Tank fasst 1.200 l, z.B. für Werkstätten [1]. Preis: 1,200 € [2]. 水箱容量为20升。[3]它可以在户外使用[4]。"
    )
    spans = [text[slice(*span_before(text, text.index(m)))] for m in ("[1]", "[2]", "[3]", "[4]")]
    # decimals and "z.B." do not end a sentence; a marker after 。 belongs to the sentence it closes
    assert spans == [
        "Der Tank fasst 1.200 l, z.B. für Werkstätten",
        "Preis: 1,200 €",
        "水箱容量为20升。",
        "它可以在户外使用",
    ]
    index = SentenceIndex(text)
    for position in range(len(text)):
        assert index.containing(position) == sentence_containing(text, position)


def test_candidates_merge_equal_spans_and_keep_duplicates() -> None:
    text = "Tank 20 L [1][1] [2]."
    merged = candidates(text, [(0, 9, 0), (0, 9, 1), (0, 9, 2)])
    assert len(merged) == 1
    assert merged[0].citations == (0, 1, 2)
    assert merged[0].text == "Tank 20 L"


def test_ingest_labels_nothing() -> None:
    path = FIXTURES / "jsonl" / "answers.jsonl"
    prepared = read_file(path, attachment=Attachment(load_protocol(PROTOCOL)))
    # engine answers arrive unreviewed: every edge is pending, no judgement is invented
    assert all(not edge.judgements for edge in prepared.audit.edges)
    assert Label.SUPPORTED not in {j.label for e in prepared.audit.edges for j in e.judgements}


def test_failed_answers_are_counted_where_scores_are_read(cli: Cli, tmp_path: Path) -> None:
    db = tmp_path / "failed.db"
    path = FIXTURES / "perplexity" / "agent-failed.json"
    result = cli("ingest", path, "--db", db, "--questions", PROTOCOL, "--question-id", "q01", "--run", "r1")
    assert result.exit_code == 0, result.stderr
    assert "1 failed or incomplete answer(s) recorded" in result.stdout
    table = cli("score", db)
    # the engine gave no answer: nothing to score, and the table says so instead of showing a silent zero
    assert "not scored: 1 answer(s) the engines did not give" in table.stdout
    body = json.loads(cli("score", db, "--format", "json").stdout)
    assert (body["answers"], body["failed_answers"]) == (0, 1)
    assert body["official_rate"]["value"] is None


def test_search_queries_are_kept_with_the_answer(tmp_path: Path) -> None:
    from citeaudit import Store, audit_to_document
    from citeaudit.ingest import READERS, store_prepared

    path = FIXTURES / "gemini" / "grounded.json"
    parsed = READERS["gemini"].read_answers  # the reader's own reading of the payload
    assert parsed is not None
    (answer,) = parsed(path.read_bytes(), str(path))
    assert answer.queries, "the fixture lists the queries Gemini issued"
    prepared = read_file(path, attachment=Attachment(load_protocol(PROTOCOL), question_id="q01"))
    with Store(tmp_path / "q.db") as store:
        store_prepared(store, prepared)
        loaded = store.load_audit(store.choose_protocol(None))
    assert loaded.answers[0].queries == answer.queries
    assert audit_to_document(loaded)["answers"][0]["queries"] == list(answer.queries)  # type: ignore[index]


def test_failed_answers_survive_export_and_reimport(cli: Cli, tmp_path: Path) -> None:
    db = tmp_path / "failed.db"
    path = FIXTURES / "perplexity" / "agent-failed.json"
    assert (
        cli("ingest", path, "--db", db, "--questions", PROTOCOL, "--question-id", "q01", "--run", "r1").exit_code == 0
    )
    exported = tmp_path / "export.json"
    assert cli("export", "--db", db, "--out", exported).exit_code == 0
    document = json.loads(exported.read_text(encoding="utf-8"))
    (failed,) = document["failed_answers"]
    assert (failed["run_id"], failed["question_id"], failed["status"]) == ("r1", "q01", "failed")
    # the exported file scores the same way, failure counted, and imports into a fresh database unchanged
    body = json.loads(cli("score", exported, "--format", "json").stdout)
    assert body["failed_answers"] == 1
    fresh = tmp_path / "fresh.db"
    assert cli("ingest", exported, "--db", fresh).exit_code == 0
    again = tmp_path / "again.json"
    assert cli("export", "--db", fresh, "--out", again).exit_code == 0
    assert again.read_text(encoding="utf-8") == exported.read_text(encoding="utf-8")
