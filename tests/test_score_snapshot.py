"""Scoring a database reads one state of it: a writer that commits while the columns are read changes nothing
in the figures of that run (they are the figures of the state the run started from)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

import citeaudit.store.reading as reading
from citeaudit.core.scope import Scope
from citeaudit.scoring.paths import score_path

Cli = Callable[..., Result]


def _second_answer(four_claim_path: Path) -> dict[str, Any]:
    """The fixture's answer again under new ids: a second answer of the same run, citing one official-looking
    source the first answer never cites."""
    document = json.loads(four_claim_path.read_text(encoding="utf-8"))
    answer = document["answers"][0]
    answer["id"] = "fx-a2"
    answer["citations"] = [{"url": "https://s9.example.org/other", "marker": "[1]", "start": 26, "end": 29}]
    document["claims"], document["edges"] = [], []
    return document


@pytest.mark.parametrize("cores", [1, 2], ids=["one connection", "two connections"])
def test_a_commit_during_the_read_changes_no_figure(
    cli: Cli,
    four_claim_path: Path,
    write_json: Callable[..., Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    cores: int,
) -> None:
    import citeaudit.store.sqlite as store_module

    monkeypatch.setattr(store_module, "usable_cores", lambda: cores)
    monkeypatch.setattr(reading, "_SPLIT_ROWS", 1)  # with two connections, every table read in halves
    db = tmp_path / "a.db"
    assert cli("ingest", four_claim_path, "--db", db).exit_code == 0
    fixture = Scope(run_kinds=frozenset({"fixture"}))
    before = score_path(db, scope=fixture)
    second = write_json(_second_answer(four_claim_path), "second.json")

    original = reading.int_columns
    imported: list[Result] = []

    def commit_first(db_: Any, expressions: Any, table: str, rest: str, params: Any, **kwargs: Any) -> Any:
        # Another process's import commits after the answers and claims were read, before the citations are.
        if table == "citations c" and not imported:
            imported.append(cli("ingest", second, "--db", db))
        return original(db_, expressions, table, rest, params, **kwargs)

    monkeypatch.setattr(reading, "int_columns", commit_first)
    during = score_path(db, scope=fixture)
    monkeypatch.setattr(reading, "int_columns", original)
    assert len(imported) == 1
    assert imported[0].exit_code == 0, imported[0].stderr

    # The state the read started from: 1 answer, as before the import (its rate, precision and coverage alike).
    assert during.result.overall.official_rate == before.result.overall.official_rate
    assert during.result.overall.precision == before.result.overall.precision
    assert during.result.overall.coverage == before.result.overall.coverage
    assert during.result.overall.answers == before.result.overall.answers == 1
    assert during.unresolved_links == before.unresolved_links
    # The import did commit: the next read sees 2 answers.
    assert score_path(db, scope=fixture).result.overall.answers == 2
