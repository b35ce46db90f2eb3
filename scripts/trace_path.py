"""Follow the ``path`` argument of ``citeaudit score FILE`` down the calls that pass it on.

Runs ``citeaudit score`` in this process under :func:`sys.setprofile` and records every call of a citeaudit
function one of whose arguments is the path (the string given on the command line, or a ``Path`` equal to it).
Each distinct function so called is a *stop* (called again, once per row or by a second scoring, it is the same
stop; the calls are counted too). A *climb* is a hop whose function lies in a layer above the layer of the
citeaudit function that called it (a service calling back into an interface, the core into the store or a
service). Layers come from the folder a module is in, as in the contracts of ``pyproject.toml``: interfaces (the
package root, ``cli``, ``review``, ``api``) over the services over ``store`` over ``core``.

Run: python scripts/trace_path.py [FILE] [score options...]   (default: the bundled four-claim example, JSON)
"""

from __future__ import annotations

import inspect
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path, PurePath
from types import FrameType
from typing import Any

INTERFACES = frozenset({"cli", "review", "api"})
LAYERS = {"interfaces": 3, "services": 2, "store": 1, "core": 0}


def layer_of(module: str) -> str:
    """The layer of a citeaudit module, decided by its top-level folder."""
    parts = module.split(".")
    top = parts[1] if len(parts) > 1 else ""
    if top in ("store", "core"):
        return top
    if top == "" or top in INTERFACES:
        return "interfaces"
    return "services"


@dataclass(frozen=True, slots=True)
class Stop:
    """One call that was handed the path."""

    module: str
    function: str
    caller: str | None
    climb: bool


@dataclass(slots=True)
class Trace:
    """The calls of one run that were handed the path, in call order."""

    calls: list[Stop] = field(default_factory=list)

    @property
    def stops(self) -> list[str]:
        """The distinct functions handed the path (``module.function``), in order of first call: a function called
        again with it (once per row, or by a second scoring) is the same stop."""
        return list(dict.fromkeys(f"{call.module}.{call.function}" for call in self.calls))

    @property
    def modules(self) -> list[str]:
        """The distinct modules of the stops, in order of first visit."""
        return list(dict.fromkeys(call.module for call in self.calls))

    @property
    def climbs(self) -> list[str]:
        """The distinct ``caller -> module.function`` hops up a layer: the function's layer above its caller's."""
        return list(
            dict.fromkeys(f"{call.caller} -> {call.module}.{call.function}" for call in self.calls if call.climb)
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON form: the counts, then the stops and the climbs."""
        return {
            "stops": len(self.stops),
            "modules": len(self.modules),
            "climbs": len(self.climbs),
            "calls": len(self.calls),
            "stop_list": self.stops,
            "climb_list": self.climbs,
        }


def _is_path(value: object, wanted: str) -> bool:
    if isinstance(value, str):
        return value == wanted
    return isinstance(value, PurePath) and value == Path(wanted)


def _arguments(frame: FrameType) -> list[object]:
    code = frame.f_code
    count = code.co_argcount + code.co_kwonlyargcount
    count += bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    values: list[object] = []
    for name in code.co_varnames[:count]:
        value = frame.f_locals.get(name)
        values.extend(value if isinstance(value, tuple) else value.values() if isinstance(value, dict) else [value])
    return values


def _citeaudit_caller(frame: FrameType) -> str | None:
    """The module of the nearest citeaudit function up the stack from ``frame``."""
    caller = frame.f_back
    while caller is not None:
        name = caller.f_globals.get("__name__", "")
        if name == "citeaudit" or name.startswith("citeaudit."):
            return str(name)
        caller = caller.f_back
    return None


def trace_score(path: str, options: Sequence[str] = ("--format", "json")) -> Trace:
    """Run ``citeaudit score PATH OPTIONS`` in this process and record where the path goes."""
    from typer.testing import CliRunner

    from citeaudit.cli import app

    trace = Trace()
    seen_generators: set[int] = set()
    live: list[FrameType] = []  # keeps generator frames alive, so their ids are not reused during the run

    def profile(frame: FrameType, event: str, _: object) -> None:
        if event != "call":
            return
        module = frame.f_globals.get("__name__", "")
        if not (module == "citeaudit" or module.startswith("citeaudit.")):
            return
        if frame.f_code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
            if id(frame) in seen_generators:  # a generator resumed: not a new call
                return
            seen_generators.add(id(frame))
            live.append(frame)
        if not any(_is_path(value, path) for value in _arguments(frame)):
            return
        caller = _citeaudit_caller(frame)
        climb = caller is not None and LAYERS[layer_of(module)] > LAYERS[layer_of(caller)]
        trace.calls.append(Stop(module, frame.f_code.co_qualname, caller, climb))

    runner = CliRunner()
    sys.setprofile(profile)
    try:
        result = runner.invoke(app, ["score", path, *options], catch_exceptions=False)
    finally:
        sys.setprofile(None)
    if result.exit_code != 0:
        raise RuntimeError(f"citeaudit score {path} exited {result.exit_code}: {result.stderr}")
    return trace


def example() -> str:
    """The bundled four-claim example's path."""
    return str(resources.files("citeaudit") / "examples" / "four-claim.audit.json")


def main(argv: Sequence[str]) -> int:
    """Print the trace of ``score`` on ``argv[0]`` (default: the four-claim example) as JSON."""
    path = argv[0] if argv else example()
    options = list(argv[1:]) or ["--format", "json"]
    print(json.dumps(trace_score(path, options).to_dict(), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
