"""What the import contracts cannot see: SQL run outside the store, and the architecture page drifting from the
contracts. The import rules themselves are import-linter's, run by ``make check``; here a copy of the tree with a
throw-away module added shows that each contract can fail, and the unchanged copy that they pass."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import citeaudit

SRC = Path(citeaudit.__file__).resolve().parent
ROOT = SRC.parent.parent
SQL_CALLS = frozenset({"execute", "executemany", "executescript"})
# The only homes of SQL: the ledger's store, and the engines that run the core's engine SQL (DuckDB, Spark).
SQL_HOMES = ("store", "engines")


def _sql_calls(path: Path) -> list[str]:
    """``file:line name`` of every call of a method named like a DB-API SQL call in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [
        f"{path.relative_to(SRC)}:{node.lineno} {node.func.attr}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SQL_CALLS
    ]


def _modules() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def test_ledger_sql_runs_only_in_the_store() -> None:
    outside = [
        call for path in _modules() if path.relative_to(SRC).parts[0] not in SQL_HOMES for call in _sql_calls(path)
    ]
    assert outside == [], "SQL outside store/ (give the store a function for it):\n" + "\n".join(outside)


def test_the_scan_finds_the_stores_own_sql() -> None:
    # The check above can fail: the same scan sees the SQL the store does run.
    inside = [call for path in _modules() if path.relative_to(SRC).parts[0] == "store" for call in _sql_calls(path)]
    assert any(call.startswith("store/sqlite.py:") for call in inside)
    assert any(call.endswith(" executemany") for call in inside)


def _contract_layers() -> list[set[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (layers,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return [{name.strip().strip("()") for name in re.split(r"[|:]", layer)} for layer in layers["layers"]]


def _documented_layers() -> list[set[str]]:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (interfaces|services|store|core) \| (.+) \|$", text, flags=re.MULTILINE)
    return [set(re.findall(r"`([a-z_]+)`", modules)) for _, modules in rows]


def test_the_architecture_page_lists_the_contracts_layers() -> None:
    assert _documented_layers() == _contract_layers()


def test_every_top_level_module_has_a_layer() -> None:
    # import-linter checks this too (the contract is exhaustive); here the page is held to it as well.
    top = {
        p.stem if p.is_file() else p.name for p in SRC.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()
    }
    top.discard("__init__")
    documented = set().union(*_documented_layers())
    assert top <= documented, sorted(top - documented)


# --- the contracts can fail: a copy of the tree with one throw-away module added ---------------------------------

LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _contracts_on_copy(tmp_path: Path, added: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` over a copy of ``src/`` and ``pyproject.toml`` with the files ``added`` (path under
    ``src/citeaudit`` → text) written into it."""
    shutil.copytree(SRC, tmp_path / "src" / "citeaudit", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    for name, text in added.items():
        target = tmp_path / "src" / "citeaudit" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    environment = {**os.environ, "PYTHONPATH": str(tmp_path / "src")}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-logo", "--no-cache"],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


def _contract_name(contract_id: str) -> str:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (name,) = [c["name"] for c in config["tool"]["importlinter"]["contracts"] if c["id"] == contract_id]
    return str(name)


def test_the_unchanged_copy_keeps_every_contract(tmp_path: Path) -> None:
    run = _contracts_on_copy(tmp_path, {})
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout


BREAKS = {
    # the core opening the ledger: not pure, and sqlite3 outside the store
    "core imports sqlite3": ({"core/_throwaway.py": "import sqlite3\n"}, ("pure-core", "ledger-in-store")),
    # the core reaching up into a service
    "core imports a service": ({"core/_throwaway.py": "import citeaudit.scoring.paths\n"}, ("layers",)),
    # a new service package, named in no list, is still held to the forbidden contracts; and it needs a layer
    "new package imports duckdb": (
        {"newservice/__init__.py": "import duckdb\n"},
        ("engine-sql-in-engines", "layers"),
    ),
    # two services importing each other
    "service cycle": ({"scoring/_throwaway.py": "import citeaudit.report.formats\n"}, ("service-cycles",)),
}


@pytest.mark.parametrize("case", sorted(BREAKS))
def test_a_throw_away_module_breaks_its_contracts(tmp_path: Path, case: str) -> None:
    added, broken = BREAKS[case]
    run = _contracts_on_copy(tmp_path, added)
    assert run.returncode != 0, run.stdout
    section = run.stdout.split("Broken contracts", 1)[-1]
    for contract_id in broken:
        assert _contract_name(contract_id) in section, (contract_id, run.stdout)
