"""Judges by name: the factory behind ``--judge checks|nli|openai``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from citeaudit.core.errors import InvalidValue
from citeaudit.judges._base import Judge
from citeaudit.judges._checks import ChecksJudge
from citeaudit.judges._nli import NliJudge
from citeaudit.judges._openai import OpenAIJudge

__all__ = ["JUDGES", "make_judge"]


def _nli(model_path: str | None = None, **options: Any) -> Judge:
    if not model_path:
        raise InvalidValue("--judge nli", "model", "the nli judge needs the folder of a local model (--model PATH)")
    return NliJudge(model_path, **options)


JUDGES: dict[str, Callable[..., Judge]] = {
    "checks": lambda **_: ChecksJudge(),
    "nli": _nli,
    "openai": lambda **options: OpenAIJudge(**options),
}
"""Judge name → factory."""


def make_judge(name: str, **options: Any) -> Judge:
    """The judge called ``name`` (``checks``, ``nli`` with ``model_path=``, ``openai``)."""
    if name not in JUDGES:
        raise InvalidValue("--judge", "name", f"unknown judge {name!r}; judges: {', '.join(sorted(JUDGES))}")
    return JUDGES[name](**options)
