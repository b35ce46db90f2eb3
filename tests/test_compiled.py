"""The compiled build (setup.py): CI tests it, it is never older than its source, and it reads as the source does."""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest
from tests.conftest import REPO, SHARED


def compiled_modules() -> list[str]:
    """The modules setup.py compiles, by name, as the benchmarks read them (``benchmarks/machine.py``)."""
    spec = importlib.util.spec_from_file_location("machine", REPO / "benchmarks" / "machine.py")
    assert spec is not None
    assert spec.loader is not None
    machine = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(machine)
    return list(machine.compiled_modules())


def is_compiled(name: str) -> bool:
    return str(importlib.import_module(name).__file__).endswith(tuple(EXTENSION_SUFFIXES))


MODULES = compiled_modules()
COMPILED = all(is_compiled(name) for name in MODULES)


def test_setup_names_the_hot_path() -> None:
    # the six modules of docs/performance.md, *Ingest*: the sentence splitter, claim texts, the Sonar reader, the
    # assembly of rows, the URL keys and the walk over every parsed document
    assert MODULES == [
        "citeaudit.ingest.sentences",
        "citeaudit.ingest.text",
        "citeaudit.ingest.perplexity",
        "citeaudit.ingest.assemble",
        "citeaudit.core.identity",
        "citeaudit.core.json_walk",
    ]


@pytest.mark.skipif(
    os.environ.get("CI") != "true", reason="outside CI the build may be pure Python (CITEAUDIT_COMPILE=0)"
)
def test_ci_tests_the_compiled_build() -> None:
    assert [name for name in MODULES if not is_compiled(name)] == []


def test_no_compiled_module_is_older_than_its_source() -> None:
    stale = []
    for name in MODULES:
        module = importlib.import_module(name)
        source = REPO / "src" / Path(*name.split(".")).with_suffix(".py")
        built = Path(str(module.__file__))
        if built.suffix != ".py" and built.stat().st_mtime < source.stat().st_mtime:
            stale.append(name)
    assert stale == [], f"compiled from an older source: {stale}; run make (or pip install -e .) to build them again"


@pytest.mark.skipif(not COMPILED, reason="the build is pure Python: there is nothing compiled to compare")
def test_the_compiled_build_reads_as_its_source(tmp_path: Path) -> None:
    # The same inputs (every ALCE answer, 3 000 random texts of tricky pieces, Perplexity's recorded responses,
    # and payloads a reader refuses) through the installed build and through a copy of the source without the
    # compiled files: every sentence, span, claim text, row and error message must be the same.
    source = tmp_path / "source"
    shutil.copytree(
        REPO / "src" / "citeaudit", source / "citeaudit", ignore=shutil.ignore_patterns("*.so", "__pycache__")
    )
    script = [sys.executable, str(REPO / "tests" / "compiled_reading.py"), str(SHARED / "data"), *MODULES]
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    runs = {}
    for label, path in (("compiled", None), ("source", source)):
        run_env = env if path is None else {**env, "PYTHONPATH": str(path)}
        done = subprocess.run(script, env=run_env, capture_output=True, text=True, check=False, timeout=900)
        assert done.returncode == 0, done.stderr[-2000:]
        runs[label] = json.loads(done.stdout)
    compiled, python = runs["compiled"], runs["source"]
    assert set(compiled.pop("modules").values()) <= {".so", ".pyd"}
    assert set(python.pop("modules").values()) == {".py"}
    # what was compared is not empty: ALCE's answers and the 3 000 random texts, and the payloads of
    # compiled_reading.payloads (4 recordings, the JSON Lines of every text, 5 refused)
    assert len(compiled["texts"]) > 3000
    assert len(compiled["imports"]) == 4 + 1 + 5
    assert sum(isinstance(result, str) for result in compiled["imports"]) >= 4
    # the URLs of the recordings and 3 000 random ones, some refused (an unclosed IPv6 host)
    assert len(compiled["urls"]) > 3000
    assert any(str(entry["key"]).startswith("InvalidValue") for entry in compiled["urls"])
    # the walk: documents nested up to one level past MAX_DEPTH, numbers at and past the limits, true among them
    assert len(compiled["walks"]) > 1000
    assert 0 < sum(compiled["walks"]) < len(compiled["walks"])
    for key in ("texts", "imports", "urls", "walks"):
        differ = [i for i, (a, b) in enumerate(zip(compiled[key], python[key], strict=True)) if a != b]
        assert differ == [], f"{key}: the compiled build differs from its source at {differ[:10]}"


def test_named_tuples_made_as_tuples_are_those_their_constructors_make() -> None:
    """The compiled reader makes its citations, claim candidates and sentences with ``tuple.__new__`` (a named
    tuple's own constructor is Python code): each is the one the constructor makes, every field filled, the
    defaults included; a field added to one of them breaks this until the reader fills it too."""
    from citeaudit.core.model import CitationKind, RetrievalStatus
    from citeaudit.ingest.base import ClaimCandidate, ParsedAnswer, ParsedCitation
    from citeaudit.ingest.perplexity import _citation, read_answers
    from citeaudit.ingest.sentences import Sentence, sentences
    from citeaudit.ingest.text import candidates

    made = _citation("https://a.example/x", "A", "[1]", CitationKind.CITED, 4, 7)
    assert made == ParsedCitation("https://a.example/x", "A", "[1]", CitationKind.CITED, 4, 7)
    assert type(made) is ParsedCitation
    assert len(made) == len(ParsedCitation._fields)
    retrieved = _citation("https://b.example/", None, None, CitationKind.RETRIEVED, None, None)
    assert retrieved == ParsedCitation("https://b.example/", kind=CitationKind.RETRIEVED)
    # "One. Two [1]." holds two sentences; the span (5, 12) of the second is one candidate citing citation 0
    (found,) = candidates("One. Two [1].", [(5, 13, 0)])
    assert type(found) is ClaimCandidate
    assert len(found) == len(ClaimCandidate._fields)
    assert found == ClaimCandidate(found.text, 5, 13, (0,))
    split = sentences("One. Two [1].")
    assert [type(sentence) for sentence in split] == [Sentence, Sentence]
    assert all(len(sentence) == len(Sentence._fields) for sentence in split)
    assert [Sentence(*sentence) for sentence in split] == split
    # the answer the Sonar reader makes: every field by name against the one it made by position
    body = {"model": "sonar", "answer_id": "r1", "choices": [{"message": {"content": "One. Two [1]."}}]}
    body["search_results"] = [{"url": "https://a.example/x", "title": "A"}]
    (answer,) = read_answers(json.dumps(body).encode(), "x.json")
    assert type(answer) is ParsedAnswer
    assert len(answer) == len(ParsedAnswer._fields)
    assert answer == ParsedAnswer(
        text="One. Two [1].",
        citations=(ParsedCitation("https://a.example/x", "A", "[1]", CitationKind.CITED, 9, 12),),
        claims=(ClaimCandidate("Two.", 5, 13, (0,)),),  # "Two [1]." is 8 characters from 5: the marker goes
        retrieval=RetrievalStatus.USED,
        model="sonar",
        answer_id="r1",
    )
