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

    One walk over the containers, a tenth of the parse's own time: cheaper than scanning the text for brackets and
    long numbers, so it runs on every document; the text is looked at again only to say where. It recurses at
    most ``max_depth`` deep (a container deeper than that is not entered).
    """
    kind = type(value)
    if kind is dict:
        return _past_object(value, 1, max_depth, min_int, max_int)
    if kind is list:
        return _past_array(value, 1, max_depth, min_int, max_int)
    return (kind is int and not min_int <= value <= max_int) or (kind is float and value - value != 0)


def _past_object(node: dict[Any, Any], depth: int, max_depth: int, min_int: int, max_int: int) -> bool:
    if depth > max_depth:
        return True
    return any(type(child) is not str and _past(child, depth, max_depth, min_int, max_int) for child in node.values())


def _past_array(node: list[Any], depth: int, max_depth: int, min_int: int, max_int: int) -> bool:
    if depth > max_depth:
        return True
    return any(type(child) is not str and _past(child, depth, max_depth, min_int, max_int) for child in node)


def _past(child: Any, depth: int, max_depth: int, min_int: int, max_int: int) -> bool:
    """Whether ``child``, a value inside a container ``depth`` deep, breaks a limit."""
    kind = type(child)
    if kind is dict:
        return _past_object(child, depth + 1, max_depth, min_int, max_int)
    if kind is list:
        return _past_array(child, depth + 1, max_depth, min_int, max_int)
    if kind is int:
        return not min_int <= child <= max_int
    return kind is float and child - child != 0  # infinite (NaN is refused while parsing)
