"""How the HTML report is made: the reads started ahead on a thread of their own give the page the reads in turn
give, and the compiled template kept between runs changes nothing but the time (a cache that cannot be kept costs
only the compiling)."""

from __future__ import annotations

import errno
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jinja2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
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

    def counted(self: Any, path: Path, read: Any, *, name: str, after: Any = None) -> None:
        started.append(name)
        real_init(self, path, read, name=name, after=after)

    monkeypatch.setattr(pipeline.BackgroundRead, "__init__", counted)
    monkeypatch.setattr(pipeline, "second_core_idle", lambda: False)
    in_turn = _page(cli, db, tmp_path / "in-turn.html")
    assert started == []
    monkeypatch.setattr(pipeline, "second_core_idle", lambda: True)
    ahead = _page(cli, db, tmp_path / "ahead.html")
    # the edges' columns and texts, then the reviewers
    assert started == ["citeaudit-report-edges", "citeaudit-reviewers"]
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


# A fresh process (one thread, as a command starts) in which a second core is said to be idle or not, and the
# report command runs; a forked child prints nothing, so what the script prints is the parent's.
_RUN = """
import os, sys
import citeaudit.store.pipeline as pipeline
import citeaudit.scoring.child as child
pipeline.second_core_idle = lambda: {idle}
made = child.InChild.__init__
def counted(self, work):
    print("forked", file=sys.stderr)
    made(self, work)
child.InChild.__init__ = counted
parent = os.getpid()
if {child_fails}:
    import citeaudit.cli.report as report
    scores = report._Scores.__call__
    def failing(self):
        if os.getpid() != parent:
            raise RuntimeError("the child fails")
        return scores(self)
    report._Scores.__call__ = failing
from citeaudit.cli import main
sys.argv = ["citeaudit", "report", *sys.argv[1:]]
main()
"""


def _run(db: Path, out: Path, *extra: str, idle: bool, child_fails: bool = False) -> subprocess.CompletedProcess[str]:
    script = _RUN.format(idle=idle, child_fails=child_fails)
    return subprocess.run(
        [sys.executable, "-c", script, str(db), "--out", str(out), "--resamples", "200", *extra],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


def _same_minute(page: str) -> str:
    return re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", "(time)", page)


@pytest.mark.parametrize("policy", ["single", "double"])
def test_scores_made_in_a_child_give_the_page_made_in_turn(tmp_path: Path, policy: str) -> None:
    db = tmp_path / "audit.db"
    _database(db, _document([_history(shape, labels) for shape, labels in _HISTORIES]), policy)
    in_turn = _run(db, tmp_path / "in-turn.html", idle=False)
    assert in_turn.returncode == 0, in_turn.stderr
    assert "forked" not in in_turn.stderr
    ahead = _run(db, tmp_path / "ahead.html", idle=True)
    assert ahead.returncode == 0, ahead.stderr
    assert ahead.stderr.count("forked") == 1
    pages = [_same_minute((tmp_path / f"{name}.html").read_text(encoding="utf-8")) for name in ("in-turn", "ahead")]
    assert pages[0] == pages[1]
    assert "Reviewer agreement between ann and bo" in pages[1]


def test_a_child_that_fails_leaves_the_scores_to_the_parent(tmp_path: Path) -> None:
    db = tmp_path / "audit.db"
    _database(db, _document([_history(shape, labels) for shape, labels in _HISTORIES]), "single")
    in_turn = _run(db, tmp_path / "in-turn.html", idle=False)
    failed = _run(db, tmp_path / "failed.html", idle=True, child_fails=True)
    assert failed.returncode == 0, failed.stderr
    assert failed.stderr.count("forked") == 1
    assert "the child fails" not in failed.stderr + failed.stdout  # the child's error is not shown: it is made again
    pages = [_same_minute((tmp_path / f"{name}.html").read_text(encoding="utf-8")) for name in ("in-turn", "failed")]
    assert pages[0] == pages[1]
    assert in_turn.stdout.startswith("wrote ")
    assert failed.stdout.startswith("wrote ")


@pytest.mark.parametrize("extra", [("--protocol", "nosuch"), ("--where", "nosuch=1")])
def test_an_error_of_the_scores_is_told_as_when_they_are_made_in_turn(tmp_path: Path, extra: tuple[str, str]) -> None:
    db = tmp_path / "audit.db"
    _database(db, _document([_history(shape, labels) for shape, labels in _HISTORIES]), "single")
    in_turn = _run(db, tmp_path / "in-turn.html", *extra, idle=False)
    ahead = _run(db, tmp_path / "ahead.html", *extra, idle=True)
    assert in_turn.returncode == ahead.returncode == 2
    assert ahead.stderr.replace("forked\n", "") == in_turn.stderr
    assert in_turn.stderr.startswith("error: ")
    assert not (tmp_path / "ahead.html").exists()


def test_a_child_not_waited_for_is_stopped_and_reaped() -> None:
    """Leaving the ``with`` block early (an error here, Ctrl-C) kills a child still at work and waits for it: no
    process is left behind."""
    script = """
import os, time
from citeaudit.scoring.child import in_child
found = None
try:
    with in_child(lambda: time.sleep(600)) as ahead:
        found = ahead._pid
        raise KeyError("stopped early")
except KeyError:
    pass
try:
    os.kill(found, 0)
    print("left behind")
except ProcessLookupError:
    print("gone")
done, value = in_child(lambda: 6 * 7).result()
print(done, value)
"""
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.split("\n")[:2] == ["gone", "True 42"]


_CELL_AS_THE_TEMPLATE_WROTE_IT = (
    '{% for title, url, label in sources %}{% if url.startswith("http://") or url.startswith("https://") %}'
    '<a href="{{ url }}" rel="noreferrer">{{ title or url }}</a>{% else %}{{ title or url }}{% endif %} '
    '<span class="label-{{ label }}">({{ label }})</span><br>{% endfor %}'
)

_ODD_TEXT = st.text(alphabet=st.sampled_from("ab<>&\"' é/:"), max_size=12)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            _ODD_TEXT,
            st.one_of(_ODD_TEXT, _ODD_TEXT.map(lambda t: "https://" + t), _ODD_TEXT.map(lambda t: "http://" + t)),
            st.sampled_from(["partial", "irrelevant", "unknown", "x<y"]),
        ),
        max_size=4,
    )
)
def test_the_sources_cell_is_the_one_the_template_wrote(sources: list[tuple[str, str, str]]) -> None:
    """An unsupported claim's sources cell, made in Python, is the text the template's loop wrote, escaping
    included (markupsafe's entities)."""
    import markupsafe

    from citeaudit.report.html import _sources_html, escape_html

    template = jinja2.Environment(autoescape=True).from_string(_CELL_AS_THE_TEMPLATE_WROTE_IT)
    assert str(_sources_html(sources)) == template.render(sources=sources)
    for title, url, label in sources:
        for text in (title, url, label):
            assert escape_html(text) == str(markupsafe.escape(text))
