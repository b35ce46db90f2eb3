"""A command imports only what it uses: ``--help`` loads no reader, store, HTTP or model stack; scoring a file
loads no store, HTTP client, web app or judge.

Each case runs in a fresh interpreter (this process has long since imported everything) and reports the
modules it ended with; the test compares names, never times.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from importlib import resources

import pytest

# Run the console-script entry point in-process, then list what is loaded.
_PROBE = """
import json, sys
sys.argv = ["citeaudit", *sys.argv[1:]]
{setup}
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""
_RUN_CLI = """
from citeaudit.cli import app
try:
    app()
except SystemExit:
    pass
"""


def _modules_after(setup: str, *args: str) -> set[str]:
    completed = subprocess.run(
        [sys.executable, "-c", _PROBE.format(setup=setup), *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return set(json.loads(completed.stderr.strip().splitlines()[-1]))


def _loaded(modules: set[str], package: str) -> bool:
    return package in modules or any(m.startswith(package + ".") for m in modules)


# What no command that reads a file or prints help may pull in.
HEAVY_FOR_EVERY_COMMAND = (
    "citeaudit.review",
    "citeaudit.collect",
    "citeaudit.judges",
    "citeaudit.suggest",
    "citeaudit.checks",
    "citeaudit.sources.fetch",
    "citeaudit.sources.resolver",
    "citeaudit.report.html",
    "fastapi",
    "uvicorn",
    "httpx",
    "jinja2",
    "torch",
    "pint",
    "krippendorff",
    "sqlite3",
)


def test_importing_the_package_loads_none_of_its_modules() -> None:
    modules = _modules_after("import citeaudit")
    assert sorted(m for m in modules if m.startswith("citeaudit")) == ["citeaudit"]


def test_importing_the_model_does_not_load_numpy_or_pydantic() -> None:
    modules = _modules_after("import citeaudit.core.model")
    for heavy in ("numpy", "pydantic", "citeaudit.ingest", "citeaudit.store.sqlite", "tldextract"):
        assert not _loaded(modules, heavy), heavy


def test_a_public_name_is_loaded_on_first_use() -> None:
    modules = _modules_after("import citeaudit\nassert citeaudit.score.__module__ == 'citeaudit.core.scoring'")
    assert "citeaudit.core.scoring" in modules
    assert not _loaded(modules, "citeaudit.store.sqlite")


@pytest.mark.parametrize("args", [("--help",), ("score", "--help"), ("review", "--help")])
def test_help_loads_no_reader_store_or_network_stack(args: tuple[str, ...]) -> None:
    modules = _modules_after(_RUN_CLI, *args)
    for heavy in (
        *HEAVY_FOR_EVERY_COMMAND,
        "citeaudit.store.sqlite",
        "citeaudit.interchange",
        "citeaudit.core.scoring",
        "citeaudit.scoring.paths",
        "citeaudit.ingest.audit_json",
        "citeaudit.ingest.openai",
        # pydantic is not listed: typer itself loads it to run a subcommand.
        "tldextract",
        "numpy",
        "yaml",
    ):
        assert not _loaded(modules, heavy), heavy


def test_scoring_a_file_loads_no_store_network_or_web_stack() -> None:
    small = resources.files("citeaudit") / "examples" / "four-claim.audit.json"
    modules = _modules_after(_RUN_CLI, "score", str(small))
    # It does load what it uses: the file reader, the scoring core and the tables.
    for used in ("citeaudit.ingest.audit_json", "citeaudit.core.scoring", "citeaudit.report.tables"):
        assert used in modules, used
    # The store's plain records may be loaded; the store itself (the ledger connection) is not.
    for heavy in (*HEAVY_FOR_EVERY_COMMAND, "citeaudit.store.sqlite", "citeaudit.core.agreement", "yaml"):
        assert not _loaded(modules, heavy), heavy
    # The first reader in detection order recognises the file: no other reader is loaded.
    readers = sorted(m for m in modules if m.startswith("citeaudit.ingest.") and m != "citeaudit.ingest.audit_json")
    assert [m for m in readers if m.split(".")[-1] in READER_MODULES] == []


def test_a_command_loads_its_own_command_module_only() -> None:
    small = resources.files("citeaudit") / "examples" / "four-claim.audit.json"
    modules = _modules_after(_RUN_CLI, "score", str(small))
    assert sorted(m for m in modules if m.startswith("citeaudit.cli.")) == [
        "citeaudit.cli.common",
        "citeaudit.cli.score",
    ]


def test_the_root_help_loads_no_command_module() -> None:
    # The root's help is the table's names and one-line help: no command module, nor cli/common.py.
    modules = _modules_after(_RUN_CLI, "--help")
    assert sorted(m for m in modules if m.startswith("citeaudit")) == ["citeaudit", "citeaudit.cli"]


def test_a_command_help_loads_its_own_command_module_only() -> None:
    modules = _modules_after(_RUN_CLI, "score", "--help")
    assert sorted(m for m in modules if m.startswith("citeaudit.cli.")) == [
        "citeaudit.cli.common",
        "citeaudit.cli.score",
    ]


def test_the_root_knows_where_every_command_comes_from() -> None:
    # The root lists its commands without loading them: the table must name each command every command module
    # registers, in the group that registers it, and nothing else.
    from citeaudit.cli import _COMMANDS, _GROUPS, _built

    registered = {name: group for group in _GROUPS for name in _built(group)}
    assert registered == {name: group for name, (group, _) in _COMMANDS.items()}


def test_the_table_help_is_the_command_own_first_paragraph() -> None:
    # What the root's help shows for a command is the first paragraph of the command's own help (its
    # docstring or its group's help=), on one line: the table's copy must be that text, word for word.
    from citeaudit.cli import _COMMANDS, _built

    for name, (group, listed) in _COMMANDS.items():
        command = _built(group)[name]
        own = inspect.cleandoc(command.short_help or command.help or "").partition("\f")[0].split("\n\n")[0]
        assert listed == " ".join(own.split()), name


def test_the_root_help_lists_every_command_with_its_help() -> None:
    # End to end in a fresh process: every name and the start of its help are in the output.
    from citeaudit.cli import _COMMANDS

    completed = subprocess.run(
        [sys.executable, "-c", "from citeaudit.cli import main; main()", "--help"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "400"},
    )
    rows = {line.strip("│ ").split(" ", 1)[0]: line for line in completed.stdout.splitlines() if line.startswith("│ ")}
    for name, (_, listed) in _COMMANDS.items():
        assert name in rows, name
        # The first five words of the help follow the name on its row (the rest may wrap).
        assert " ".join(listed.split()[:5]) in rows[name], name


READER_MODULES = ("expertqa", "openai", "perplexity", "gemini", "anthropic", "serpapi", "jsonl", "markdown")


@pytest.mark.parametrize(("preset", "expected"), [(None, "1"), ("3", "3")])
def test_the_command_line_keeps_blas_to_one_thread_unless_told(preset: str | None, expected: str) -> None:
    # main() sets OPENBLAS_NUM_THREADS before numpy can be loaded (a pool of BLAS threads costs start-up CPU and
    # speeds up nothing citeaudit multiplies); a value the user set is left alone.
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if preset is not None:
        env["OPENBLAS_NUM_THREADS"] = preset
    probe = (
        "import os, sys\n"
        "sys.argv = ['citeaudit', '--help']\n"
        "from citeaudit.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write(os.environ['OPENBLAS_NUM_THREADS'])\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True, timeout=120
    )
    assert completed.stderr == expected


def test_the_ingest_worker_reads_without_the_interchange_schema_or_numpy() -> None:
    # The worker process (citeaudit.ingest.worker) starts while the importer stores the payload, and the importer
    # waits for its first chunk: what it loads to read an engine's answers and assemble their rows is all it needs,
    # not the interchange format's pydantic schema nor numpy.
    setup = (
        "import citeaudit.ingest.worker\n"
        "from citeaudit.ingest import READERS, _import_chunks, _Partial\n"
        "import citeaudit.ingest.assemble\n" + "".join(f"import citeaudit.ingest.{name}\n" for name in READER_MODULES)
    )
    modules = _modules_after(setup)
    assert "citeaudit.ingest.assemble" in modules
    for heavy in ("pydantic", "citeaudit.interchange.schema", "numpy", "citeaudit.store.sqlite"):
        assert not _loaded(modules, heavy), heavy


def test_recognising_an_engine_payload_loads_no_interchange_schema() -> None:
    # Every payload's format is found by asking the readers in order, the audit format's first; an import waits for
    # the answer before its worker starts. The audit reader recognises its documents by their declared format and
    # loads the interchange schema (pydantic) only to parse one: a Sonar answer is recognised without it.
    sonar = (
        '{"id": "r1", "model": "sonar", "object": "chat.completion", "created": 1, '
        '"choices": [{"index": 0, "message": {"role": "assistant", "content": "The AX220 is rated IP67 [1]."}}], '
        '"search_results": [{"title": "AX220", "url": "https://www.axtorp-machines.com/ax220"}], '
        '"usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}'
    )
    modules = _modules_after(
        "from citeaudit.ingest import detect_reader\n"
        f"assert detect_reader({sonar!r}.encode(), 'sonar.json').name == 'perplexity'\n"
    )
    assert "citeaudit.ingest.audit_json" in modules  # asked first, as it always is
    for heavy in ("pydantic", "citeaudit.interchange"):
        assert not _loaded(modules, heavy), heavy
    # and an audit file is still read through it
    audit = resources.files("citeaudit") / "examples" / "four-claim.audit.json"
    modules = _modules_after(
        f"from citeaudit.ingest import read_file\nassert read_file({str(audit)!r}).audit.answers\n"
    )
    assert _loaded(modules, "citeaudit.interchange")
