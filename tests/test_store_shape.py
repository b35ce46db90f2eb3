"""The store a caller opens stays readable: ``Store`` and the concern objects it carries each have a handful of
methods, and the modules that hold them, the import writer and the migrations stay short."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from citeaudit import Store

STORE = Path(__file__).resolve().parents[1] / "src" / "citeaudit" / "store"

MODULES = [
    "sqlite.py",
    "claims.py",
    "claimsets.py",
    "resolution.py",
    "facts.py",
    "judgements.py",
    "connection.py",
    "importing.py",
    "chunk_rows.py",
    "bulk.py",
    *(f"migrations/{path.name}" for path in sorted((STORE / "migrations").glob("*.py"))),
]
"""The modules of the store's own concerns, its import and its migrations."""


def _count(source: str, name: str) -> int:
    """How many functions the class ``name`` of ``source`` defines directly in its body."""
    (found,) = [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ClassDef) and node.name == name]
    return sum(isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) for node in found.body)


def _methods(module: str, name: str) -> int:
    """:func:`_count` of a class of a store module."""
    return _count((STORE / module).read_text(encoding="utf-8"), name)


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("sqlite.py", "Store"),
        ("resolution.py", "Sources"),
        ("claims.py", "Claims"),
        ("facts.py", "Facts"),
        ("judgements.py", "Ratings"),
    ],
)
def test_the_store_and_its_concerns_have_at_most_25_methods(module: str, name: str) -> None:
    assert 0 < _methods(module, name) <= 25


def test_the_store_carries_one_object_per_concern(db_path: Path) -> None:
    with Store(db_path) as store:
        carried = {
            type(store.sources).__name__,
            type(store.claims).__name__,
            type(store.facts).__name__,
            type(store.ratings).__name__,
        }
    assert carried == {"Sources", "Claims", "Facts", "Ratings"}


@pytest.mark.parametrize("module", MODULES)
def test_a_store_module_is_at_most_700_lines(module: str) -> None:
    lines = len((STORE / module).read_text(encoding="utf-8").splitlines())
    assert lines <= 700, f"{module}: {lines} lines"


def test_the_method_count_is_of_the_class_body_alone() -> None:
    # a, b and c are A's: 3; d is nested in c, e is the module's, B's f is another class's
    source = (
        "class A:\n    def a(self): pass\n    async def b(self): pass\n    def c(self):\n        def d(): pass\n"
        "def e(): pass\nclass B:\n    def f(self): pass\n"
    )
    assert _count(source, "A") == 3
