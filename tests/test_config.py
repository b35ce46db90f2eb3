"""citeaudit.toml: settings become option defaults, the command line wins, and config show says where from."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from citeaudit.cli.config import Defaults, load_settings

Cli = Callable[..., Result]


@pytest.fixture
def project(tmp_path: Path, four_claim_path: Path, exporter_path: Path, cli: Cli) -> Path:
    """A project folder: the fixture in audit.db, the exporter audit in other.db, and a citeaudit.toml."""
    assert cli("ingest", four_claim_path, "--db", tmp_path / "audit.db").exit_code == 0
    assert cli("ingest", exporter_path, "--db", tmp_path / "other.db").exit_code == 0
    (tmp_path / "citeaudit.toml").write_text(
        'db = "audit.db"\n\n[resolve]\nmap_host = ["site.test=127.0.0.1"]\nconcurrency = 3\n\n'
        '[review]\npolicy = "double"\n',
        encoding="utf-8",
    )
    return tmp_path


def _ids(result: Result) -> list[str]:
    assert result.exit_code == 0, result.stderr
    return [row["id"] for row in json.loads(result.stdout)]


def test_the_file_in_the_working_directory_gives_the_database(
    cli: Cli, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    monkeypatch.delenv("CITEAUDIT_DB", raising=False)
    # audit.db holds the fixture's one answer
    assert _ids(cli("answers", "list", "--format", "json")) == ["fx-a1"]
    # the command line wins: other.db is the exporter audit (its first answer is not the fixture's)
    assert "fx-a1" not in _ids(cli("answers", "list", "--format", "json", "--db", "other.db"))
    # score's PATH comes from the file too; the fixture scores 1/3 (see test_cli)
    score = cli("score", "--format", "json")
    assert score.exit_code == 0, score.stderr
    body = json.loads(score.stdout)
    assert (body["precision"]["numerator"], body["precision"]["denominator"]) == (1, 3)


def test_an_environment_variable_wins_over_the_file(cli: Cli, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    assert "fx-a1" not in _ids(cli("answers", "list", "--format", "json", env={"CITEAUDIT_DB": "other.db"}))
    shown = cli("config", "show", env={"CITEAUDIT_DB": "other.db"})
    assert shown.exit_code == 0, shown.stderr
    line = next(row for row in shown.stdout.splitlines() if row.startswith("│ db "))
    assert "other.db" in line
    assert "environment" in line


def test_config_from_elsewhere_reads_paths_from_its_own_folder(
    cli: Cli, project: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    monkeypatch.delenv("CITEAUDIT_DB", raising=False)
    assert _ids(cli("--config", project / "citeaudit.toml", "answers", "list", "--format", "json")) == ["fx-a1"]
    shown = cli("--config", project / "citeaudit.toml", "config", "show")
    assert shown.exit_code == 0, shown.stderr
    assert "review.policy" in shown.stdout
    assert "double" in shown.stdout
    assert "site.test=127.0.0.1" in shown.stdout


def test_settings_reach_the_options_of_their_commands_only(project: Path) -> None:
    defaults = Defaults(load_settings(project / "citeaudit.toml"))
    resolve = defaults.get("resolve")
    assert resolve["map_host"] == ["site.test=127.0.0.1"]
    assert resolve["concurrency"] == 3
    assert resolve["db"] == project / "audit.db"
    assert defaults.get("review").get("serve")["policy"] == "double"
    # collect's --timeout is about engines, not pages: the resolver's limits stay out of it
    assert "timeout" not in defaults.get("collect")
    assert "concurrency" not in defaults.get("collect")
    # demo builds its own database
    assert "db" not in defaults.get("demo")
    # an option the file does not set is not in the map: its own default applies
    assert defaults.get("score").get("help") is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("dbb = 'x.db'\n", "dbb: unknown setting 'dbb'"),
        ("[resolve]\nconcurrency = 'many'\n", "resolve.concurrency: expected a whole number (got 'many')"),
        ("[resolve]\nmap_host = 'a=1'\n", "resolve.map_host: expected a list of strings (got 'a=1')"),
        ("db = \n", "not valid TOML"),
    ],
)
def test_a_bad_file_is_refused_with_the_key_and_value(
    cli: Cli, tmp_path: Path, four_claim_path: Path, text: str, message: str
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(text, encoding="utf-8")
    result = cli("--config", bad, "score", four_claim_path)
    assert result.exit_code == 2
    assert str(bad) in result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_a_named_config_that_does_not_exist_is_refused(cli: Cli, tmp_path: Path, four_claim_path: Path) -> None:
    result = cli("--config", tmp_path / "nope.toml", "score", four_claim_path)
    assert result.exit_code == 2
    assert "no such configuration file" in result.stderr
