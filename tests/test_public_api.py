"""The public surface: a sorted, complete ``__all__``; a docstring for every model field and enum member."""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import citeaudit
from citeaudit.core import model

SRC = Path(citeaudit.__file__).resolve().parent


PUBLIC_NAMES = [
    "Agreement",
    "Answer",
    "Audit",
    "Brand",
    "Citation",
    "CitationKind",
    "CiteauditError",
    "Claim",
    "Comparison",
    "Competitor",
    "DuplicateId",
    "Edge",
    "EvidenceGroup",
    "ImportReport",
    "IncomparableRuns",
    "InputError",
    "Interval",
    "IntervalSettings",
    "InvalidValue",
    "Judgement",
    "Label",
    "LabelPairs",
    "Location",
    "MalformedInput",
    "Metric",
    "OfficialDomain",
    "OfficialMatcher",
    "Origin",
    "Protocol",
    "ProtocolError",
    "Question",
    "Rater",
    "RequiredFact",
    "ReviewState",
    "Run",
    "RunKind",
    "SchemaVersionMismatch",
    "Scope",
    "ScopeError",
    "ScopeScore",
    "ScoreResult",
    "ScoredPath",
    "Segmentation",
    "Severity",
    "Source",
    "SourceStatus",
    "Stage",
    "Store",
    "StoreError",
    "UnknownFormat",
    "UnknownReference",
    "agreement_path",
    "audit_to_document",
    "cluster_bootstrap_ratio",
    "compare_paths",
    "differing_components",
    "fingerprint",
    "fingerprint_components",
    "label_pairs_from_store",
    "load_audit",
    "load_label_pairs",
    "load_protocol",
    "normalize_url",
    "parse_audit_bytes",
    "registrable_domain",
    "review_outcome",
    "score",
    "score_path",
    "score_reference",
]
"""The package's public names, written out here: a name dropped from the package (from ``__all__``, from the
lazy table or from the type checker's imports) fails the tests below instead of passing unseen."""


def _package_tables() -> tuple[list[str], dict[str, str], dict[str, str]]:
    """``__all__``, the lazy table (name -> module) and the type checker's imports (name -> module), as written."""
    tree = ast.parse((SRC / "__init__.py").read_text(encoding="utf-8"))
    listed: list[str] = []
    lazy: dict[str, str] = {}
    typed: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            if node.targets[0].id == "__all__":
                listed = ast.literal_eval(node.value)
            elif node.targets[0].id == "_HOME":
                lazy = ast.literal_eval(node.value)
        elif isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for imported in node.body:
                assert isinstance(imported, ast.ImportFrom), ast.unparse(imported)
                assert imported.module, ast.unparse(imported)
                typed.update({alias.name: imported.module for alias in imported.names})
    return listed, lazy, typed


def test_all_is_sorted_and_the_pinned_names() -> None:
    assert citeaudit.__all__ == sorted(citeaudit.__all__)
    # Per home module: api 5, comparison 2, agreement 3, errors 12, identity 3, model 26, protocol 3, results 3,
    # scope 1, scoring 3, stats 2, interchange 4, store 2: 5+2+3+12+3+26+3+3+1+3+2+4+2 = 69, none twice.
    assert len(PUBLIC_NAMES) == len(set(PUBLIC_NAMES)) == 69
    assert citeaudit.__all__ == sorted(PUBLIC_NAMES)


def test_all_the_lazy_table_and_the_typed_imports_agree() -> None:
    listed, lazy, typed = _package_tables()
    assert listed == citeaudit.__all__
    assert set(lazy) == set(PUBLIC_NAMES), set(lazy) ^ set(PUBLIC_NAMES)
    assert set(typed) == set(PUBLIC_NAMES), set(typed) ^ set(PUBLIC_NAMES)
    # The type checker sees each name where the package loads it from.
    assert typed == lazy


def test_every_public_name_loads_from_its_home() -> None:
    _, lazy, _ = _package_tables()
    for name in PUBLIC_NAMES:
        value = getattr(citeaudit, name)
        assert value is getattr(importlib.import_module(lazy[name]), name), name
    public = {n for n in dir(citeaudit) if not n.startswith("_") and not inspect.ismodule(getattr(citeaudit, n))}
    assert public == set(PUBLIC_NAMES)


def test_every_model_field_and_member_has_a_docstring() -> None:
    tree = ast.parse(inspect.getsource(model))
    missing = []
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        assert ast.get_docstring(cls), f"{cls.name} has no docstring"
        body = cls.body
        for i, node in enumerate(body):
            is_field = isinstance(node, ast.AnnAssign) or (
                isinstance(node, ast.Assign) and not getattr(node.targets[0], "id", "_").startswith("_")
            )
            if not is_field:
                continue
            following = body[i + 1] if i + 1 < len(body) else None
            documented = isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)
            if not documented:
                missing.append(f"{cls.name}.{ast.unparse(node).split(':')[0].split('=')[0].strip()}")
    assert not missing, f"undocumented: {missing}"


def test_review_packages_export_a_complete_all() -> None:
    # Order is ruff's (RUF022, constants first); completeness is checked here.
    import citeaudit.checks
    import citeaudit.evidence
    import citeaudit.judges
    import citeaudit.suggest

    for package in (citeaudit.checks, citeaudit.evidence, citeaudit.judges, citeaudit.suggest):
        public = {
            n
            for n in dir(package)
            if not n.startswith("_") and n != "annotations" and not inspect.ismodule(getattr(package, n))
        }
        assert public == set(package.__all__), package.__name__


def test_the_api_facade_hands_out_the_services_own_functions() -> None:
    import citeaudit.api
    import citeaudit.scoring.paths

    public = {n for n in dir(citeaudit.api) if not n.startswith("_") and n != "annotations"}
    public -= {n for n in public if inspect.ismodule(getattr(citeaudit.api, n))}
    assert public == set(citeaudit.api.__all__)
    # The same objects, not copies: the facade, the package root and the service agree by identity.
    for name in citeaudit.api.__all__:
        assert getattr(citeaudit.api, name) is getattr(citeaudit.scoring.paths, name), name
    for name in ("score_path", "agreement_path", "ScoredPath"):  # the ones the package root names too
        assert getattr(citeaudit.api, name) is getattr(citeaudit, name), name
