"""The walk :func:`citeaudit.core.limits.load_json` makes over every document it parsed: nesting and numbers
checked in one pass over the containers.

A module of its own so that it is compiled with the reading of engine answers (``setup.py``), which parses every
answer through :func:`~citeaudit.core.limits.load_json`; the limits are passed in, and are
:mod:`citeaudit.core.limits`' own.
"""

from __future__ import annotations

from typing import Any

__all__ = ["past_limits"]


def past_limits(value: Any, max_depth: int, min_int: int, max_int: int) -> bool:
    """Whether a parsed JSON value nests deeper than ``max_depth`` or holds an integer outside
    ``[min_int, max_int]`` or an infinite float.

    One walk over the containers (no recursion), a tenth of the parse's own time: cheaper than scanning the text
    for brackets and long numbers, so it runs on every document; the text is looked at again only to say where.
    """
    kind = type(value)
    if kind is not dict and kind is not list:
        return (kind is int and not min_int <= value <= max_int) or (kind is float and value - value != 0)
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > max_depth:
            return True
        for child in node.values() if type(node) is dict else node:
            kind = type(child)
            if kind is str:
                continue
            if kind is dict or kind is list:
                stack.append((child, depth + 1))
            elif kind is int:
                if not min_int <= child <= max_int:
                    return True
            elif kind is float and child - child != 0:  # infinite (NaN is refused while parsing)
                return True
    return False
