"""Collections as a dimension, and the trend across them with its comparability breaks."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

Cli = Callable[..., Result]

FIXTURES = Path(__file__).resolve().parent / "fixtures"
PROTOCOL = FIXTURES / "protocol.yaml"
PATTERN = "{question}__{engine}__{locale}__{repeat}.json"


def _collection(tmp_path: Path, name: str) -> Path:
    """A folder with Perplexity's answer to q01, its id made unique so that each collection is a new payload."""
    folder = tmp_path / name
    folder.mkdir()
    document = json.loads((FIXTURES / "perplexity" / "sonar.json").read_text(encoding="utf-8"))
    document["id"] = f"{document['id']}-{name}"
    (folder / "q01__perplexity__en-GB__1.json").write_text(json.dumps(document), encoding="utf-8")
    return folder


@pytest.fixture
def db(tmp_path: Path, cli: Cli) -> Path:
    """Three collections of one answer each; the third measured under a protocol whose official domains
    changed (axtorp-machines.com replaced by axtorp.com)."""
    path = tmp_path / "trend.db"
    revised = tmp_path / "revised.yaml"
    revised.write_text(PROTOCOL.read_text(encoding="utf-8").replace("axtorp-machines.com", "axtorp.com"), "utf-8")
    for name, protocol in (("2026-09", PROTOCOL), ("2026-10", PROTOCOL), ("2026-11", revised)):
        result = cli(
            "ingest",
            _collection(tmp_path, name),
            "--pattern",
            PATTERN,
            "--collection",
            name,
            "--questions",
            protocol,
            "--db",
            path,
        )
        assert result.exit_code == 0, result.stderr
    return path


def test_trend_gives_each_collection_and_marks_the_break(cli: Cli, db: Path) -> None:
    result = cli("trend", db, "--resamples", "200", "--format", "json")
    assert result.exit_code == 0, result.stderr
    body = json.loads(result.stdout)
    points = body["collections"]
    assert [p["collection"] for p in points] == ["2026-09", "2026-10", "2026-11"]
    # The answer cites www.axtorp-machines.com (official under the first protocol): 1 of 1 answers; under the
    # revised protocol its official domains are axtorp.com and axtorp.de, which nothing cites: 0 of 1.
    rates = [(p["official_rate"]["numerator"], p["official_rate"]["denominator"]) for p in points]
    assert rates == [(1, 1), (1, 1), (0, 1)]
    # the same payload in each: the same edges, none reviewed yet, so precision is 0 of the same count
    assert {p["precision"]["denominator"] for p in points} == {points[0]["precision"]["denominator"]}
    assert all(p["precision"]["numerator"] == 0 and p["provisional"] for p in points)
    # one required fact for q01 (f01), no confirmed mapping: coverage 0 of 1
    assert all((p["coverage"]["numerator"], p["coverage"]["denominator"]) == (0, 1) for p in points)
    assert [p["comparable_with_previous"] for p in points] == [True, True, False]
    assert points[2]["changed_components"] == ["official_domains"]
    assert body["breaks"] == 1
    assert all("ci" in p["official_rate"] for p in points)
    table = cli("trend", db, "--resamples", "200")
    assert "break before 2026-11: not comparable with 2026-10 (official_domains changed)" in table.stdout
    assert "3 collection(s), 1 comparability break(s)" in table.stdout


def test_trend_by_platform(cli: Cli, db: Path) -> None:
    body = json.loads(cli("trend", db, "--by", "platform", "--resamples", "200", "--format", "json").stdout)
    assert [[g["platform"] for g in p["groups"]] for p in body["collections"]] == [["perplexity"]] * 3


def test_collection_is_a_where_and_by_dimension(cli: Cli, db: Path) -> None:
    # two protocols share the id and version: the first one is named by its fingerprint
    first = json.loads(cli("trend", db, "--resamples", "200", "--format", "json").stdout)["collections"][0]
    selector = first["fingerprint"][:19]
    chosen = cli("score", db, "--protocol", selector, "--where", "collection=2026-10", "--format", "json")
    assert chosen.exit_code == 0, chosen.stderr
    assert json.loads(chosen.stdout)["answers"] == 1
    grouped = cli("score", db, "--protocol", selector, "--by", "collection", "--format", "json")
    assert grouped.exit_code == 0, grouped.stderr
    groups = json.loads(grouped.stdout)["groups"]
    # the first protocol's answers: one in each of the first two collections
    assert [(g["by"]["collection"], g["answers"]) for g in groups] == [("2026-09", 1), ("2026-10", 1)]
    missing = cli("score", db, "--protocol", selector, "--where", "collection=2031-01", "--format", "json")
    assert json.loads(missing.stdout)["answers"] == 0


def test_the_report_draws_the_trend_with_its_break(cli: Cli, db: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    first = json.loads(cli("trend", db, "--resamples", "200", "--format", "json").stdout)["collections"][0]
    result = cli("report", db, "--protocol", first["fingerprint"][:19], "--out", out, "--resamples", "200")
    assert result.exit_code == 0, result.stderr
    html = out.read_text(encoding="utf-8")
    section = html.split('<h2 id="trend">')[1].split("<h3")[0]
    # three collections, one break (before 2026-11) drawn as a dashed line and named in the table
    assert section.count('class="break"') == 1
    assert "break: not comparable with 2026-10: changed official domains" in section
    # the comparability column is never blank: the first collection and the comparable one say what they are
    assert "first collection (baseline)" in section
    # the figures of the collections measured under the report's protocol link to their evidence; 2026-11's,
    # measured under the revised protocol, are not in this report's audit and are shown without a link
    assert 'data-set="official_rate:trend:2026-09"' in section
    assert 'data-set="official_rate:trend:2026-10"' in section
    assert "trend:2026-11" not in section
    assert "comparable with 2026-09" in section
    # per engine too (the one engine here: Perplexity), with the same break
    engine = html.split('<h3 class="engine-trend">Perplexity</h3>')[1].split("</table>")[0]
    assert engine.count('class="break"') == 1
    assert "break: not comparable with 2026-10: changed official domains" in engine
    assert [c for c in ("2026-09", "2026-10", "2026-11") if c in section] == ["2026-09", "2026-10", "2026-11"]


def test_report_compares_two_selections_of_one_database(cli: Cli, db: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    first = json.loads(cli("trend", db, "--resamples", "200", "--format", "json").stdout)["collections"][0]
    result = cli(
        "report",
        db,
        "--protocol",
        first["fingerprint"][:19],
        "--where",
        "collection=2026-09",
        "--compare-where",
        "collection=2026-10",
        "--out",
        out,
        "--resamples",
        "200",
    )
    assert result.exit_code == 0, result.stderr
    html = out.read_text(encoding="utf-8")
    assert f"Comparison: {db} [collection=2026-09] (A) vs {db} [collection=2026-10] (B)" in html
    # the same answer in both collections: official rate 1/1 on both sides, B − A = 0
    comparison = html.split("<h2>Comparison")[1].split("</table>")[0]
    assert '<td>Official-domain rate</td><td class="num">1.000</td><td class="num">1.000</td>' in comparison
    assert "+0.000" in comparison
    # one question paired: its interval carries the few-questions caution in the report as in compare's JSON
    assert "Caution: only 1 clusters" in html.split("<h2>Comparison")[1]
    assert "p (Holm)" in comparison


@pytest.fixture
def revised_db(tmp_path: Path, cli: Cli) -> Path:
    """Two collections under version 1, then the required facts revised (version 2, f01 reworded) after their
    answers were locked, then a third collection ingested under version 2."""
    path = tmp_path / "revised.db"
    revised = tmp_path / "v2.yaml"
    text = PROTOCOL.read_text(encoding="utf-8").replace('version: "1"', 'version: "2"')
    revised.write_text(text.replace("AX220 tank is 20 L", "AX220 tank holds 20 litres"), encoding="utf-8")

    def ingest(name: str, protocol: Path) -> None:
        result = cli(
            "ingest", _collection(tmp_path, name), "--pattern", PATTERN, "--collection", name, "--questions",
            protocol, "--db", path,
        )  # fmt: skip
        assert result.exit_code == 0, result.stderr

    ingest("2026-09", PROTOCOL)
    ingest("2026-10", PROTOCOL)
    result = cli("protocol", "revise", revised, "--db", path, "--by", "li", "--reason", "wording")
    assert result.exit_code == 0, result.stderr
    ingest("2026-11", revised)
    return path


def test_trend_scores_revised_collections_under_their_revised_protocol(cli: Cli, revised_db: Path) -> None:
    result = cli("trend", revised_db, "--resamples", "200", "--format", "json")
    assert result.exit_code == 0, result.stderr
    points = json.loads(result.stdout)["collections"]
    assert [p["collection"] for p in points] == ["2026-09", "2026-10", "2026-11"]
    # each collection holds one answer, and `score --by collection` gives each of them one answer as well
    assert [p["answers"] for p in points] == [1, 1, 1]
    score = json.loads(cli("score", revised_db, "--by", "collection", "--format", "json").stdout)
    by_collection = {g["by"]["collection"]: g for g in score["groups"]}
    for point in points:
        group = by_collection[point["collection"]]
        for name in ("official_rate", "precision", "coverage"):
            assert (point[name]["numerator"], point[name]["denominator"]) == (
                group[name]["numerator"],
                group[name]["denominator"],
            )
    # all three are now measured under version 2
    assert {p["protocol"] for p in points} == {"axtorp-ingest-test@2"}
    # the first two were revised after their answers were locked: they say so, and the third (locked under
    # version 2 from the start) is not one series with them
    assert [p["revised_from"] for p in points] == ["axtorp-ingest-test@1", "axtorp-ingest-test@1", None]
    assert all(
        any("required facts changed after answers were ingested" in w for w in p["warnings"]) for p in points[:2]
    )
    assert points[2]["warnings"] == []
    assert [p["comparable_with_previous"] for p in points] == [True, True, False]
    assert points[2]["changed_components"] == ["revision"]
    table = " ".join(cli("trend", revised_db, "--resamples", "200").stdout.split())
    assert "required facts changed after answers were ingested" in table
    assert "break before 2026-11" in table


def test_two_collections_are_not_repeats_of_one_ask(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "months.db"
    for name in ("2026-09", "2026-10"):
        result = cli(
            "ingest", _collection(tmp_path, name), "--pattern", PATTERN, "--collection", name, "--questions",
            PROTOCOL, "--db", path,
        )  # fmt: skip
        assert result.exit_code == 0, result.stderr
    body = json.loads(cli("score", path, "--format", "json").stdout)
    # one answer to q01 on perplexity in each monthly collection: no (question, platform, collection) cell was
    # asked more than once, so there is no repeat variance to report
    assert body["answers"] == 2
    assert "repeats" not in body


def test_the_repeats_line_names_its_statistic_and_unit(
    cli: Cli, write_json: Callable[..., Path], tmp_path: Path
) -> None:
    from builders import document

    # q1 asked twice on p1 (runs r1 and r2, no collections): a1 1 supported of 2 edges (0.5), a2 1 of 1 (1.0).
    # Sample variance of (0.5, 1.0) = (0.25² + 0.25²) / 1 = 0.125, SD 0.354
    answers = [{"id": f"a{i}", "question_id": "q1", "run_id": f"r{i}", "platform": "p1", "text": "t"} for i in (1, 2)]
    claims = [{"id": "c1", "answer_id": "a1", "text": "x"}, {"id": "c2", "answer_id": "a2", "text": "y"}]
    edges = [
        {"claim_id": "c1", "url": "https://brand.com/a", "label": "supported", "reviewer": "li"},
        {"claim_id": "c1", "url": "https://brand.com/b", "label": "irrelevant", "reviewer": "li"},
        {"claim_id": "c2", "url": "https://brand.com/a", "label": "supported", "reviewer": "li"},
    ]
    table = cli("score", write_json(document(answers, claims, edges), "repeats.json"))
    assert table.exit_code == 0, table.stderr
    words = " ".join(table.stdout.split())
    assert (
        "repeats: variance of per-answer precision (a proportion, 0–1; variance in squared units, SD beside it) "
        "between asks of one question on one platform within one collection: 0.1250 (SD 0.354) on average over 1 "
        "such cell(s) asked more than once"
    ) in words
