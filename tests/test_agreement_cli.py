"""``citeaudit agreement`` end to end: judgements from audit files and real SQLite databases, refusals with clear
messages, and the real WiCE labels (gold vs saved GPT-4-0613 outputs) reproducing the published F1 and accuracy."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from builders import answer, claim, document, edge
from conftest import SHARED

Cli = Callable[..., Result]
WICE = SHARED / "data" / "wice"


def judged(cid: str, url: str, *judgements: dict[str, Any]) -> dict[str, Any]:
    return edge(cid, url, judgements=list(judgements))


def j(reviewer: str, label: str, at: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"reviewer": reviewer, "label": label, **({"created_at": at} if at else {}), **extra}


def two_reviewers() -> dict[str, Any]:
    """Six edges in three answers: li and mo pair on three of them."""
    return document(
        [answer("a1"), answer("a2"), answer("a3")],
        [claim("c1", "a1"), claim("c2", "a1"), claim("c3", "a2"), claim("c4", "a3"), claim("c5", "a3")],
        [
            judged(
                "c1",
                "https://x.org/1",
                j("li", "supported", "2026-01-01T10:00:00"),
                j("mo", "partial", "2026-01-01T11:00:00"),  # the two independent reviews differ: disputed
                j("li", "partial", "2026-01-02T10:00:00"),  # li changed their mind: partial is li's label
                j("j1", "supported", origin="model"),
                j("boss", "supported", "2026-01-03T10:00:00", stage="adjudication"),  # never a review
            ),
            judged("c2", "https://x.org/1", j("li", "supported"), j("mo", "supported")),
            judged("c3", "https://x.org/2", j("li", "conflicting"), j("mo", "irrelevant")),
            judged("c4", "https://x.org/3", j("li", "supported")),
            judged("c5", "https://x.org/3", j("mo", "unknown")),
            edge("c5", "https://x.org/4"),
        ],
    )


def run_json(cli: Cli, path: Path, *args: str) -> dict[str, Any]:
    result = cli("agreement", path, *args, "--format", "json")
    assert result.exit_code == 0, result.stderr
    body: dict[str, Any] = json.loads(result.stdout)
    return body


def test_file_pairs_each_reviewers_latest_review(cli: Cli, write_json: Callable[..., Path]) -> None:
    path = write_json(two_reviewers())
    body = run_json(cli, path, "--between", "li", "mo", "--resamples", "0")
    # pairs: c1 (partial, partial), c2 (supported, supported), c3 (conflicting, irrelevant)
    assert body["n"] == 3
    assert body["clusters"] == 2  # a1 (c1, c2) and a2 (c3)
    # c4 li only, c5→x.org/3 mo only, c5→x.org/4 nobody: 6 edges = 3 + 1 + 1 + 1
    assert body["edges"] == {"paired": 3, "a_only": 1, "b_only": 1, "neither": 1, "ambiguous": 0, "total": 6}
    assert body["observed"] == {"value": pytest.approx(2 / 3), "ci": None}
    # rows li: S1 P1 C1; columns mo: S1 P1 I1; p_e = (1 + 1 + 0 + 0) / 9 = 2/9; κ = (6/9 - 2/9) / (7/9) = 4/7
    assert body["cohen_kappa"]["value"] == pytest.approx(4 / 7)
    counts = body["confusion"]["counts"]
    assert counts[0][0] == counts[1][1] == counts[2][3] == 1
    assert body["supported"]["tp"] == 1
    assert body["raters"] == {"a": "li", "b": "mo", "gold": "a"}


def test_a_model_judge_is_named_model_colon_name(cli: Cli, write_json: Callable[..., Path]) -> None:
    path = write_json(two_reviewers())
    body = run_json(cli, path, "--between", "li", "model:j1", "--resamples", "0")
    # only c1 has both: li partial vs j1 supported; li alone labels c2, c3, c4
    assert (body["n"], body["edges"]["a_only"], body["edges"]["b_only"], body["edges"]["neither"]) == (1, 3, 0, 2)
    assert body["confusion"]["counts"][1][0] == 1
    assert body["supported"]["fp"] == 1
    assert body["raters"]["b"] == "model:j1"


def test_database_gives_the_same_figures_as_the_file(cli: Cli, write_json: Callable[..., Path], db_path: Path) -> None:
    path = write_json(two_reviewers())
    assert cli("ingest", path, "--db", db_path).exit_code == 0
    from_file = run_json(cli, path, "--between", "li", "mo", "--resamples", "300", "--seed", "4")
    from_db = run_json(cli, db_path, "--between", "li", "mo", "--resamples", "300", "--seed", "4")
    assert from_db == from_file
    with_protocol = run_json(cli, db_path, "--between", "li", "mo", "--resamples", "0", "--protocol", "test-protocol")
    assert with_protocol["n"] == 3


def test_unknown_rater_is_refused_naming_the_raters_present(
    cli: Cli, write_json: Callable[..., Path], db_path: Path
) -> None:
    path = write_json(two_reviewers())
    assert cli("ingest", path, "--db", db_path).exit_code == 0
    for target in (path, db_path):
        result = cli("agreement", target, "--between", "li", "boss")
        assert result.exit_code == 2
        message = " ".join(result.stderr.split())
        assert str(target) in message
        assert "--between B" in message
        assert "'boss'" in message  # an adjudicator, not a reviewer
        # 4 edges have a final label, li and mo labelled 4 edges each, the judge 1
        assert "final (4 edges), li (4 edges), mo (4 edges), model:j1 (1 edges)" in message
        assert result.stdout == ""


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("--between", "li", "li"), "must differ"),
        (("--between", "li", "model:"), "needs a name"),
        (("--between", "li", "mo", "--format", "csv"), "table or json"),
        (("--between", "li", "mo", "--resamples", "10"), "at least 100"),
    ],
)
def test_bad_options_exit_2_with_a_message(
    cli: Cli, write_json: Callable[..., Path], args: tuple[str, ...], fragment: str
) -> None:
    result = cli("agreement", write_json(two_reviewers()), *args)
    assert result.exit_code == 2
    assert fragment in " ".join(result.stderr.split())


def test_missing_file_exits_2(cli: Cli, tmp_path: Path) -> None:
    result = cli("agreement", tmp_path / "nope.json", "--between", "li", "mo")
    assert result.exit_code == 2
    assert "nope.json" in result.stderr


def test_table_shows_every_part(cli: Cli, write_json: Callable[..., Path]) -> None:
    result = cli("agreement", write_json(two_reviewers()), "--between", "li", "mo", "--resamples", "200")
    assert result.exit_code == 0, result.stderr
    text = result.stdout
    for part in (
        "A = li (gold)",
        "edges paired 3 of 6 in 2 answers",
        "Cohen's kappa",
        "Krippendorff's alpha (nominal)",
        "Gwet's AC1",
        "Confusion (rows A, columns B)",
        "Per class",
        "Supported vs rest (A as gold)",
        "— n/a (unused)",  # unknown: neither li nor mo used it on a paired edge
        "cluster bootstrap over 2 answers, 200 resamples",
    ):
        assert part in text, part
    assert "0.571" in text  # κ = 4/7


# -- the real WiCE labels ---------------------------------------------------------------------------------------

GOLD = {"supported": "supported", "partially_supported": "partial", "not_supported": "irrelevant"}
MODEL = {1.0: "supported", 0.5: "partial", 0.0: "irrelevant"}


def wice_document() -> dict[str, Any]:
    """The first 100 WiCE test claims as an audit: one answer and one claim per WiCE claim, one edge to its
    evidence page with the WiCE gold label (human ``wice-gold``) and GPT-4-0613's saved output (model)."""
    if not (WICE / "claim" / "test.jsonl").exists():
        pytest.skip(f"WiCE data not found under {WICE} (see ../shared/data/SOURCES.md)")
    with (WICE / "claim" / "test.jsonl").open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line, _ in zip(handle, range(100), strict=False)]
    outputs = json.loads((WICE / "model_outputs" / "gpt-4-0613_claim_test.entailment_score.json").read_text())
    ids = [row["meta"]["id"] for row in rows]
    assert ids == list(outputs)  # the saved outputs cover exactly the first 100 test claims, in order
    return document(
        [answer(i, text=row["claim"]) for i, row in zip(ids, rows, strict=True)],
        [claim(f"{i}-c", i, text=row["claim"]) for i, row in zip(ids, rows, strict=True)],
        [
            judged(
                f"{i}-c",
                f"https://wice.example/{i}",
                j("wice-gold", GOLD[row["label"]]),
                j("gpt-4-0613", MODEL[outputs[i]], origin="model"),
            )
            for i, row in zip(ids, rows, strict=True)
        ],
    )


def published_gpt4() -> tuple[float, float]:
    """GPT-4's claim-level F1 and accuracy (in %) from the WiCE result table."""
    table = (WICE / "model_outputs" / "result_table.tex").read_text(encoding="utf-8")
    match = re.search(r"^GPT-4\s*&\s*([\d.]+)\s*&\s*([\d.]+)", table, re.MULTILINE)
    assert match, "no GPT-4 row in result_table.tex"
    return float(match.group(1)), float(match.group(2))


def test_wice_gold_vs_gpt4_reproduces_the_published_f1_and_accuracy(
    cli: Cli, write_json: Callable[..., Path], db_path: Path
) -> None:
    path = write_json(wice_document(), "wice.audit.json")
    assert cli("ingest", path, "--db", db_path).exit_code == 0
    for target in (path, db_path):
        body = run_json(cli, target, "--between", "wice-gold", "model:gpt-4-0613", "--resamples", "1000")
        supported = body["supported"]
        # gold supported 22 of 100; GPT-4 says supported 37 times, 18 of them right:
        # tp 18, fp 37 - 18 = 19, fn 22 - 18 = 4, tn 100 - 41 = 59
        assert (supported["tp"], supported["fp"], supported["fn"], supported["tn"]) == (18, 19, 4, 59)
        # F1 = 36 / (36 + 19 + 4) = 36/59 = 0.6102; accuracy = (18 + 59) / 100 = 0.77
        assert round(supported["f1"]["value"], 3) == 0.610
        assert round(supported["accuracy"]["value"], 3) == 0.770
        f1_percent, accuracy_percent = published_gpt4()
        assert (round(supported["f1"]["value"] * 100, 1), round(supported["accuracy"]["value"] * 100, 1)) == (
            f1_percent,
            accuracy_percent,
        )
        # three-way: gold partial 73, supported 22, not supported 5; agreement on 18 + 46 + 5 = 69 of 100
        assert body["observed"]["value"] == pytest.approx(0.69)
        assert body["n"] == 100
        assert body["clusters"] == 100
        ci = body["supported"]["f1"]["ci"]
        assert ci["low"] < supported["f1"]["value"] < ci["high"]


def test_an_open_store_gives_raters_and_pairs_for_the_review_ui(
    cli: Cli, write_json: Callable[..., Path], db_path: Path
) -> None:
    from citeaudit import Rater, Store, agreement_path, label_pairs_from_store
    from citeaudit.core.agreement import agreement

    path = write_json(two_reviewers())
    assert cli("ingest", path, "--db", db_path).exit_code == 0
    with Store(db_path) as store:
        # final labels: c1 adjudicated, c2 agreed, c4 and c5→x.org/3 labelled by one reviewer (c3 is disputed)
        assert [(str(r), n) for r, n in store.ratings.raters()] == [("final", 4), ("li", 4), ("mo", 4), ("model:j1", 1)]
        pairs = label_pairs_from_store(store, Rater("li"), Rater.parse("mo"))
    assert (len(pairs.a), pairs.edges_total) == (3, 6)
    from_store = agreement(pairs, resamples=200, seed=2).to_dict()
    assert from_store == agreement_path(db_path, Rater("li"), Rater("mo"), resamples=200, seed=2).to_dict()


def test_a_tie_between_one_raters_latest_labels_is_counted_as_ambiguous_in_files_and_databases(
    cli: Cli, write_json: Callable[..., Path], db_path: Path
) -> None:
    doc = document(
        [answer("a1")],
        [claim("c1", "a1"), claim("c2", "a1")],
        [
            judged(
                "c1",
                "https://x.org/1",
                j("li", "supported", "2026-02-01T09:00:00"),
                j("li", "partial", "2026-02-01T09:00:00"),  # same time, different label: which is li's?
                j("mo", "partial"),
            ),
            judged("c2", "https://x.org/1", j("li", "unknown"), j("mo", "unknown")),
        ],
    )
    path = write_json(doc)
    assert cli("ingest", path, "--db", db_path).exit_code == 0
    for target in (path, db_path):
        body = run_json(cli, target, "--between", "li", "mo", "--resamples", "0")
        # c1 is left out (and counted), c2 pairs unknown with unknown
        assert (body["n"], body["edges"]["ambiguous"], body["edges"]["neither"]) == (1, 1, 0)
        assert body["confusion"]["counts"][4][4] == 1


def test_a_judge_against_the_final_labels(cli: Cli, write_json: Callable[..., Path], db_path: Path) -> None:
    path = write_json(two_reviewers())
    assert cli("ingest", path, "--db", db_path).exit_code == 0
    for target in (path, db_path):
        body = run_json(cli, target, "--between", "final", "model:j1", "--resamples", "0")
        # j1 labelled only c1, whose final label is the adjudicator's supported: one pair (supported, supported);
        # final labels without j1: c2, c4, c5→x.org/3; c3 (disputed) and c5→x.org/4 have neither
        assert (body["n"], body["edges"]["a_only"], body["edges"]["b_only"], body["edges"]["neither"]) == (1, 3, 0, 2)
        assert body["confusion"]["counts"][0][0] == 1
        assert body["raters"] == {"a": "final", "b": "model:j1", "gold": "a"}
        reviewers = run_json(cli, target, "--between", "final", "li", "--resamples", "0")
        # li's latest per edge vs final: c1 partial vs supported (adjudicated), c2 S/S, c4 S/S; c3 li only
        assert (reviewers["n"], reviewers["edges"]["a_only"], reviewers["edges"]["b_only"]) == (3, 1, 1)
        assert reviewers["supported"]["tp"] == 2
        assert reviewers["supported"]["fn"] == 1


def test_a_lower_level_gives_a_narrower_interval_from_the_same_resamples(
    cli: Cli, write_json: Callable[..., Path]
) -> None:
    path = write_json(wice_document(), "wice.audit.json")
    args = ("--between", "wice-gold", "model:gpt-4-0613", "--resamples", "2000", "--seed", "8")
    wide = run_json(cli, path, *args)["gwet_ac1"]["ci"]
    narrow = run_json(cli, path, *args, "--level", "0.8")["gwet_ac1"]["ci"]
    assert (wide["level"], narrow["level"]) == (0.95, 0.8)
    assert wide["low"] < narrow["low"] < narrow["high"] < wide["high"]


def test_ac1_categories_are_reported_and_can_be_declared(cli: Cli, write_json: Callable[..., Path]) -> None:
    path = write_json(two_reviewers())
    # li vs mo pair on c1 (partial/partial), c2 (supported/supported), c3 (conflicting/irrelevant):
    # p_o = 2/3; used labels: supported, partial, conflicting, irrelevant (q = 4); pooled π = 2/6, 2/6, 1/6, 1/6
    # Σπ(1-π) = 2·(2/6·4/6) + 2·(1/6·5/6) = 16/36 + 10/36 = 26/36; p_e = (26/36)/3 = 26/108
    # AC1 = (2/3 - 26/108) / (1 - 26/108) = (72 - 26)/(108 - 26) = 46/82
    used = run_json(cli, path, "--between", "li", "mo", "--resamples", "0")["gwet_ac1"]
    assert used["value"] == pytest.approx(46 / 82)
    assert used["categories"] == ["supported", "partial", "conflicting", "irrelevant"]
    # all five: p_e = (26/36)/4 = 26/144; AC1 = (96 - 26)/(144 - 26) = 70/118
    five = run_json(cli, path, "--between", "li", "mo", "--resamples", "0", "--ac1-categories", "all")["gwet_ac1"]
    assert five["value"] == pytest.approx(70 / 118)
    assert five["categories_from"] == "declared"
    table = cli("agreement", path, "--between", "li", "mo", "--resamples", "0")
    assert "Gwet's AC1 counts 4 categories" in " ".join(table.stdout.split())
    refused = cli("agreement", path, "--between", "li", "mo", "--ac1-categories", "supported,partial")
    assert refused.exit_code == 2
    assert "'conflicting'" in refused.stderr
    unknown = cli("agreement", path, "--between", "li", "mo", "--ac1-categories", "maybe")
    assert unknown.exit_code == 2
    assert "'maybe'" in unknown.stderr
