"""How the HTML report is made: the reads started ahead on a thread of their own give the page the reads in turn
give, and the compiled template kept between runs changes nothing but the time (a cache that cannot be kept costs
only the compiling)."""

from __future__ import annotations

import errno
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jinja2
import pytest
from typer.testing import Result

from test_report_input import _database, _document, _history

Cli = Callable[..., Result]

# Six edges, each judged by ann and by bo (people), some also by a model; labels drawn so they agree on some
# edges and not on others (the page then states their agreement).
_HISTORIES = [
    (5, ["supported", "supported", "unknown"]),
    (5, ["partial", "conflicting", "unknown"]),
    (5, ["irrelevant", "irrelevant", "unknown"]),
    (7, ["supported", "partial", "partial"]),
    (3, ["unknown", "supported", "unknown"]),
    (5, ["conflicting", "conflicting", "unknown"]),
]


def _page(cli: Cli, db: Path, out: Path) -> str:
    result = cli("report", db, "--out", out, "--resamples", "200")
    assert result.exit_code == 0, result.stderr
    # the minute it was made is the one line two runs may differ in
    return re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", "(time)", out.read_text(encoding="utf-8"))


@pytest.mark.parametrize("policy", ["single", "double"])
def test_reads_started_ahead_give_the_page_reads_in_turn_give(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, policy: str
) -> None:
    from citeaudit.store import pipeline

    db = tmp_path / "audit.db"
    _database(db, _document([_history(shape, labels) for shape, labels in _HISTORIES]), policy)
    started: list[str] = []
    real_init = pipeline.BackgroundRead.__init__

    def counted(self: Any, path: Path, read: Any, *, name: str) -> None:
        started.append(name)
        real_init(self, path, read, name=name)

    monkeypatch.setattr(pipeline.BackgroundRead, "__init__", counted)
    monkeypatch.setattr(pipeline, "second_core_idle", lambda: False)
    in_turn = _page(cli, db, tmp_path / "in-turn.html")
    assert started == []
    monkeypatch.setattr(pipeline, "second_core_idle", lambda: True)
    ahead = _page(cli, db, tmp_path / "ahead.html")
    assert started == ["citeaudit-report-reads"]
    assert ahead == in_turn
    # the reviewers read ahead are those of the note: two people, so their agreement is stated
    assert "2 human reviewer(s) labelled edges" in ahead
    assert "Reviewer agreement between ann and bo" in ahead


def _compiles(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    """The names of the templates Jinja compiles from here on."""
    compiled: list[str | None] = []
    real = jinja2.Environment.compile

    def counted(self: jinja2.Environment, source: Any, name: str | None = None, *args: Any, **kwargs: Any) -> Any:
        compiled.append(name)
        return real(self, source, name, *args, **kwargs)

    monkeypatch.setattr(jinja2.Environment, "compile", counted)
    return compiled


def test_the_compiled_template_is_kept_between_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from citeaudit.report.html import _template

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    compiled = _compiles(monkeypatch)
    first = _template()
    assert compiled == ["report.html.j2"]
    kept = list(tmp_path.glob("_jinja2-cache-*/__jinja2_*.cache"))
    assert len(kept) == 1
    second = _template()
    assert compiled == ["report.html.j2"]  # not compiled again: read from the cache
    # the same code, so the two render alike (rendering needs a whole report's values)
    assert second.root_render_func.__code__.co_code == first.root_render_func.__code__.co_code


def test_an_unsafe_temporary_folder_keeps_nothing_and_the_report_is_made(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from citeaudit.report.html import _template

    temporary = tmp_path / "tmp"
    temporary.mkdir()
    (temporary / f"_jinja2-cache-{os.getuid()}").write_text("a file where Jinja wants its own folder")
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    compiled = _compiles(monkeypatch)
    _template()
    _template()
    assert compiled == ["report.html.j2", "report.html.j2"]  # compiled each time, nothing kept
    db = tmp_path / "audit.db"
    _database(db, _document([_history(shape, labels) for shape, labels in _HISTORIES]), "single")
    assert "Fact coverage" in _page(cli, db, tmp_path / "report.html")


def test_a_cache_that_cannot_be_written_costs_only_the_compiling(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from citeaudit.report.html import _template

    def full(self: Any, bucket: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(jinja2.FileSystemBytecodeCache, "dump_bytecode", full)
    compiled = _compiles(monkeypatch)
    _template()
    _template()
    assert compiled == ["report.html.j2", "report.html.j2"]
    assert list(tmp_path.glob("_jinja2-cache-*/*")) == []
    db = tmp_path / "audit.db"
    _database(db, _document([_history(shape, labels) for shape, labels in _HISTORIES]), "single")
    assert "Fact coverage" in _page(cli, db, tmp_path / "report.html")
