"""``citeaudit judge audit``: the bias battery with the checks judge against a gold reviewer, on sources resolved
from the test site (tests/site.py's /manual.txt) and passages stored by ``suggest`` or ranked on the spot."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.test_judges import needs_models
from tests.test_suggest import edge_pk, resolved_db, rows
from typer.testing import Result

from citeaudit.core.model import Judgement, Label
from citeaudit.judges import ChecksJudge
from citeaudit.store.review import ReviewStore
from citeaudit.store.review import now as review_now
from citeaudit.suggest import judge_audit, suggest_edges
from nli_models import build_nli_model

MATCH = "The AX220 has a 20 L tank."  # the manual says exactly this: the checks find nothing to refute (unknown)

# li's gold labels. The checks judge (top passage only) says: c1 conflicting (20 bar vs 12 bar), c2 conflicting
# (30 L vs 20 L), c3 unknown (no quantity), c5 unknown (20 L = 20 L); c4 has no snapshot and is not tested.
GOLD = {"c1": "conflicting", "c2": "conflicting", "c3": "supported", "c4": "unknown", "c5": "supported"}


def gold_db(db_path: Path, site_url: str, *, suggest_first: bool) -> Path:
    resolved_db(db_path, site_url, more={"c5": MATCH})
    if suggest_first:
        suggest_edges(db_path, ChecksJudge(), k=1)
    with ReviewStore(db_path) as review:
        review.accounts.add_reviewer("li", "reviewer", "no password: labels recorded through the library")
        for number, (claim_id, label) in enumerate(GOLD.items()):
            judgement = Judgement(Label(label), "li", created_at=review_now())
            review.judgements.record_judgement(edge_pk(db_path, claim_id), judgement, f"gold-{number}")
    return db_path


@pytest.mark.parametrize("suggest_first", [True, False], ids=["stored-passages", "ranked-now"])
def test_battery_against_the_gold_reviewer(db_path: Path, site: str, suggest_first: bool) -> None:
    gold_db(db_path, site, suggest_first=suggest_first)
    report = judge_audit(db_path, ChecksJudge(), "li", k=1, resamples=200)
    # 5 gold edges: c4 has no text, 4 tested, with stored passages (suggest ran, top 1) or ranked now (top 1).
    assert (report.gold_edges, report.tested, report.without_text, report.over_limit) == (5, 4, 1, 0)
    assert (report.from_suggestions, report.ranked_now) == ((4, 0) if suggest_first else (0, 4))
    flips = {str(r.perturbation): (r.edges, r.flips) for r in report.battery.results}
    # The checks are deterministic and ignore label order, padding (no numbers) and the authority framing: no flips
    # on the 4 edges. Order swap needs two passages: applies to none (top 1). The counterfactual changes the first
    # number of c1 (20 → 200 bar: still conflicting), c2 (30 → 300 L: still conflicting) and c5 (20 → 200 L:
    # unknown → conflicting); c3 has no number. So 1 flip of 3.
    assert flips == {
        "repeat": (4, 0),
        "order_swap": (0, 0),
        "label_permutation": (4, 0),
        "verbosity_padding": (4, 0),
        "fake_authority": (4, 0),
        "counterfactual_number": (3, 1),
        "self_preference": (0, 0),  # the checks write no text
    }
    verdicts = {str(r.perturbation): str(r.verdict) for r in report.battery.results}
    # deterministic, order-blind and shown no labels: those rows cannot move and are not applicable, never passes
    assert verdicts["repeat"] == verdicts["order_swap"] == verdicts["label_permutation"] == "not applicable"
    assert verdicts["self_preference"] == "not applicable"
    # the checks only refute: the rows about P(supported) cannot move either
    assert verdicts["verbosity_padding"] == verdicts["fake_authority"] == "not applicable"
    assert verdicts["counterfactual_number"] == "not applicable"
    assert report.battery.result("counterfactual_number").flip_rate == pytest.approx(1 / 3)
    assert report.battery.result("order_swap").flip_rate is None
    # Agreement with li on 4 edges: c1, c2 agree (conflicting), c3, c5 do not (supported vs unknown): 2/4.
    # Chance: li 2 conflicting + 2 supported, judge 2 conflicting + 2 unknown → p_e = (2/4)(2/4) = 1/4;
    # kappa = (1/2 − 1/4) / (1 − 1/4) = 1/3.
    assert report.agreement.n == 4
    assert report.agreement.observed.value == pytest.approx(0.5)
    assert report.agreement.cohen_kappa.value == pytest.approx(1 / 3)
    assert report.battery.agreement.kappa == pytest.approx(1 / 3)
    assert report.battery.calibration is None  # the checks give no confidence


def test_limit_and_nothing_written(db_path: Path, site: str) -> None:
    gold_db(db_path, site, suggest_first=False)
    before = rows(db_path, "SELECT (SELECT count(*) FROM judgements), (SELECT count(*) FROM suggestions)")
    report = judge_audit(db_path, ChecksJudge(), "li", limit=2, k=1, resamples=200)
    # the first 2 gold edges in edge order (c1, c2) are tested; 3 are left by the limit
    assert (report.tested, report.over_limit) == (2, 3)
    assert rows(db_path, "SELECT (SELECT count(*) FROM judgements), (SELECT count(*) FROM suggestions)") == before


def test_cli_judge_audit_json_and_table(db_path: Path, site: str, cli: Callable[..., Result]) -> None:
    gold_db(db_path, site, suggest_first=True)
    result = cli(
        "judge", "audit", "--db", db_path, "--judge", "checks", "--gold", "li", "--top", "1",
        "--resamples", "200", "--format", "json",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    body = json.loads(result.stdout)
    assert list(body) == [
        "gold", "judge", "edges", "baseline_labels", "perturbations", "agreement", "calibration",
    ]  # fmt: skip
    assert body["edges"] == {
        "gold": 5, "tested": 4, "from_suggestions": 4, "ranked_now": 0, "without_text": 1, "over_limit": 0,
    }  # fmt: skip
    assert body["baseline_labels"] == {"supported": 0, "partial": 0, "conflicting": 2, "irrelevant": 0, "unknown": 2}
    counterfactual = next(p for p in body["perturbations"] if p["perturbation"] == "counterfactual_number")
    assert (counterfactual["edges"], counterfactual["flips"]) == (3, 1)
    assert body["agreement"]["raters"] == {"a": "li", "b": "model:checks", "gold": "a"}
    assert body["agreement"]["observed"]["value"] == pytest.approx(0.5)
    assert body["calibration"] is None
    table = cli("judge", "audit", "--db", db_path, "--judge", "checks", "--gold", "li", "--resamples", "200")
    assert table.exit_code == 0, table.stderr
    assert "counterfactual_number" in table.stdout
    assert "calibration: —" in table.stdout


def test_cli_unknown_gold_reviewer(db_path: Path, site: str, cli: Callable[..., Result]) -> None:
    gold_db(db_path, site, suggest_first=False)
    result = cli("judge", "audit", "--db", db_path, "--judge", "checks", "--gold", "marta")
    assert result.exit_code == 2
    assert "reviewer 'marta' labelled no edge" in result.stderr
    assert "reviewers: li" in result.stderr


@needs_models
def test_nli_judge_suggests_with_confidence_and_is_calibrated(
    db_path: Path,
    site: str,
    tmp_path: Path,
    cli: Callable[..., Result],
) -> None:
    # A model whose logits are its bias (5, 0, 0) whatever the input: always entailment → supported, with
    # confidence c = e^5 / (e^5 + 2) = 0.98670.
    folder = build_nli_model(tmp_path / "nli", ["entailment", "neutral", "contradiction"], (5.0, 0.0, 0.0))
    confidence = math.exp(5) / (math.exp(5) + 2)
    gold_db(db_path, site, suggest_first=False)
    audit = cli(
        "judge", "audit", "--db", db_path, "--judge", "nli", "--model", folder, "--gold", "li", "--top", "1",
        "--resamples", "200", "--format", "json",
    )  # fmt: skip
    assert audit.exit_code == 0, audit.stderr
    body = json.loads(audit.stdout)
    # 4 tested edges, all "supported" at confidence c; li says supported on c3 and c5 only: accuracy 1/2.
    # One confidence bin: ECE = |1/2 − c|; Brier = ((1 − c)² + (1 − c)² + c² + c²) / 4.
    assert body["baseline_labels"]["supported"] == 4
    assert body["calibration"]["edges"] == 4
    assert body["calibration"]["ece"] == pytest.approx(confidence - 0.5, rel=1e-5)
    assert body["calibration"]["brier"] == pytest.approx(((1 - confidence) ** 2 + confidence**2) / 2, rel=1e-5)
    assert body["judge"]["model"].startswith(str(folder.resolve()))


@needs_models
def test_nli_suggestions_store_their_confidence(
    db_path: Path,
    site: str,
    tmp_path: Path,
    cli: Callable[..., Result],
) -> None:
    folder = build_nli_model(tmp_path / "nli", ["entailment", "neutral", "contradiction"], (5.0, 0.0, 0.0))
    resolved_db(db_path, site)
    result = cli("suggest", "--db", db_path, "--judge", "nli", "--model", folder, "--format", "json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["labels"]["supported"] == 3  # c1–c3 have the snapshot; c4 has none
    stored = rows(db_path, "SELECT judge, judge_model, confidence, origin FROM judgements")
    assert len(stored) == 3
    for judge, model, stored_confidence, origin in stored:
        assert (judge, origin) == ("nli", "model")
        assert str(model).startswith(str(folder.resolve()))
        assert stored_confidence == pytest.approx(math.exp(5) / (math.exp(5) + 2), rel=1e-5)
    # model "supported" is no final label: all four edges stay pending
    assert rows(db_path, "SELECT DISTINCT review_state FROM edges") == [("pending",)]


def test_gold_edges_without_text_are_refused(db_path: Path, site: str, cli: Callable[..., Result]) -> None:
    resolved_db(db_path, site, labels={"c4": "unknown"})  # li labelled only c4, whose source has no snapshot
    result = cli("judge", "audit", "--db", db_path, "--judge", "checks", "--gold", "li")
    assert result.exit_code == 2
    assert "none of the 1 edge(s) reviewer 'li' labelled has text to judge" in result.stderr
