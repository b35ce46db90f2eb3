"""The ``path`` of ``citeaudit score FILE`` is named once at the edge and handed down a short chain: measured by
``scripts/trace_path.py`` on the bundled four-claim example, and held to its bounds."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAX_STOPS = 20
MAX_CLIMBS = 3


@pytest.fixture(scope="module")
def tracer() -> Iterator[ModuleType]:
    """``scripts/trace_path.py``, loaded as a module."""
    spec = importlib.util.spec_from_file_location("trace_path", ROOT / "scripts" / "trace_path.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["trace_path"] = module  # dataclasses look their module up by name
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules["trace_path"]


def test_the_path_of_score_makes_few_stops_and_no_climb_back(tracer: ModuleType) -> None:
    trace = tracer.trace_score(tracer.example())
    assert len(trace.stops) <= MAX_STOPS, trace.stops
    assert len(trace.climbs) <= MAX_CLIMBS, trace.climbs
    # The chain starts at the command and reaches the reader: the trace sees what it should.
    assert trace.stops[:3] == [
        "citeaudit.cli.common.handles_errors.<locals>.wrapper",
        "citeaudit.cli.score.score",
        "citeaudit.scoring.paths.score_path",
    ]
    assert "citeaudit.interchange.reader.parse_audit_bytes" in trace.stops


def test_the_layers_of_the_trace_follow_the_folders(tracer: ModuleType) -> None:
    # cli/review/api and the package root are interfaces; store and core their own; every other folder a service
    assert [tracer.layer_of(m) for m in ("citeaudit", "citeaudit.cli.score", "citeaudit.api")] == ["interfaces"] * 3
    assert tracer.layer_of("citeaudit.scoring.paths") == "services"
    assert tracer.layer_of("citeaudit.store.sqlite") == "store"
    assert tracer.layer_of("citeaudit.core.errors") == "core"


def test_a_climb_is_counted(tracer: ModuleType) -> None:
    # The bound above can fail: a call from the core up into a service, handed the path, is one climb.
    trace = tracer.Trace()
    trace.calls.append(tracer.Stop("citeaudit.ingest", "read_file", "citeaudit.core.limits", True))
    trace.calls.append(tracer.Stop("citeaudit.ingest", "read_file", "citeaudit.core.limits", True))
    trace.calls.append(tracer.Stop("citeaudit.core.limits", "load_json", "citeaudit.ingest", False))
    # two calls of one hop up, one down: one climb, two stops
    assert (len(trace.climbs), len(trace.stops)) == (1, 2)
