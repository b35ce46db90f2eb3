"""The bundled examples and the shipped JSON Schema: current, valid, and reproducing the reference figures."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import jsonschema
import pytest

from citeaudit import Label, load_audit, score
from conftest import REPO, SHARED

SCHEMA = REPO / "src" / "citeaudit" / "schemas" / "audit-v1.schema.json"


def script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    assert spec
    assert spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_exporter_example_is_what_its_generator_writes(exporter_path: Path) -> None:
    generator = script("make_exporter_example")
    assert exporter_path.read_text(encoding="utf-8") == generator.render()
    assert exporter_path.with_name("exporter.protocol.yaml").read_text(encoding="utf-8") == generator.render_protocol()


def test_shipped_schema_is_current() -> None:
    assert SCHEMA.read_text(encoding="utf-8") == script("make_schema").render()


@pytest.mark.parametrize("name", ["four-claim.audit.json", "exporter.audit.json"])
def test_examples_validate_against_the_schema(exporter_path: Path, name: str) -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    jsonschema.validate(json.loads(exporter_path.with_name(name).read_text(encoding="utf-8")), schema)


def test_schema_rejects_an_unknown_label() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    doc = {
        "format": "citeaudit.audit/v1",
        "protocol": {"id": "p", "version": "1"},
        "edges": [{"claim_id": "c", "url": "https://x.org", "label": "supportd"}],
    }
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, schema)


def test_exporter_example_has_what_the_demo_promises(exporter_path: Path) -> None:
    audit = load_audit(exporter_path)
    result = score(audit)
    labels = result.overall.edges.by_label
    assert all(labels[label] > 0 for label in Label), labels
    assert result.overall.edges.collapsed > 0
    assert result.overall.edges.pending > 0
    assert result.overall.edges.disputed == 1
    assert any(s.key.startswith("title:") for s in audit.sources), "no title-only card"
    assert len({a.platform or r.platform for a in audit.answers for r in audit.runs if r.id == a.run_id}) == 3
    assert len(audit.protocol.questions) == 12


def test_shared_reference_fixture_reproduces_one_third_and_one_quarter() -> None:
    path = SHARED / "examples" / "four-claim.audit.json"
    if not path.exists():
        pytest.skip(f"shared reference fixture not found at {path}")
    result = score(load_audit(path))
    # 3 unique edges after collapsing c1–s1, 1 supported; 1 of 4 required facts covered
    assert (result.precision.numerator, result.precision.denominator) == (1, 3)
    assert (result.coverage.numerator, result.coverage.denominator) == (1, 4)


def test_readme_library_example_prints_what_it_says(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    block = readme.split("```python\n", 1)[1].split("```", 1)[0]
    expected = [line.split("# ", 1)[1].strip() for line in block.splitlines() if line.startswith("print(")]
    monkeypatch.chdir(REPO)
    exec(compile(block, "README.md", "exec"), {})
    assert capsys.readouterr().out.splitlines() == expected
