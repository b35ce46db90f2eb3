"""``score`` computes the figures beside the scores only when the protocol or the options call for them, and its
JSON says which it computed and why it left the others out."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from citeaudit.core.model import RunKind
from citeaudit.core.scope import Scope
from citeaudit.core.scored import NO_BRAND, NOT_ASKED
from citeaudit.scoring.paths import score_path

Cli = Callable[..., Result]

BRAND_KEYS = ("competitor_share", "mentions", "retrieved_not_cited", "entity_confusion", "version_drift")
"""The top-level keys of the brand figures (docs/metrics.md)."""


def _with_brand(four_claim_path: Path) -> dict[str, Any]:
    """The four-claim fixture with a brand declared; its one answer names the brand's alias AX220."""
    document = json.loads(four_claim_path.read_text(encoding="utf-8"))
    document["protocol"]["brand"] = {"name": "Axtorp", "aliases": ["AX220"]}
    return dict(document)


def _scored(cli: Cli, path: Path) -> dict[str, Any]:
    run = cli("score", path, "--kind", "fixture", "--format", "json")
    assert run.exit_code == 0, run.stderr
    return dict(json.loads(run.stdout))


def _database(cli: Cli, source: Path, db: Path) -> Path:
    run = cli("ingest", source, "--db", db)
    assert run.exit_code == 0, run.stderr
    return db


@pytest.mark.parametrize("stored", [False, True], ids=["file", "database"])
def test_a_protocol_without_a_brand_gets_no_brand_figures_and_says_why(
    cli: Cli, four_claim_path: Path, tmp_path: Path, stored: bool
) -> None:
    path = _database(cli, four_claim_path, tmp_path / "a.db") if stored else four_claim_path
    body = _scored(cli, path)
    assert body["computed"] == {
        "brand": {"computed": False, "reason": NO_BRAND},
        "misattribution": {"computed": True},
    }
    assert [key for key in BRAND_KEYS if key in body] == []
    # misattribution is still given: claims at risk c2 (conflicting) and c3 (unknown), none with a cross pair
    assert (body["misattribution"]["rate"]["numerator"], body["misattribution"]["rate"]["denominator"]) == (0, 2)


@pytest.mark.parametrize("stored", [False, True], ids=["file", "database"])
def test_a_protocol_with_a_brand_gets_the_brand_figures(
    cli: Cli, four_claim_path: Path, write_json: Callable[[Any, str], Path], tmp_path: Path, stored: bool
) -> None:
    source = write_json(_with_brand(four_claim_path), "branded.json")
    path = _database(cli, source, tmp_path / "b.db") if stored else source
    body = _scored(cli, path)
    assert body["computed"] == {"brand": {"computed": True}, "misattribution": {"computed": True}}
    assert [key for key in BRAND_KEYS if key not in body] == []
    # one answer in scope, and its text names AX220 (an alias of the brand): 1 of 1
    mention = body["mentions"]["brand"]["mention_rate"]
    assert (mention["numerator"], mention["denominator"]) == (1, 1)


def test_figures_not_asked_for_are_not_computed(four_claim_path: Path) -> None:
    # the library's default (figures=False), as the table and CSV output use it
    scored = score_path(four_claim_path, scope=Scope(run_kinds=frozenset(RunKind)))
    assert (scored.brand, scored.misattribution) == (None, None)
    body = json.loads(scored.to_json())
    assert body["computed"] == {
        "brand": {"computed": False, "reason": NOT_ASKED},
        "misattribution": {"computed": False, "reason": NOT_ASKED},
    }
