"""Independent support: sources in one copy group count once, so that a majority of copies never passes for
independent evidence (pure): the rule the store applies over the copy groups it keeps (the groups themselves
are computed by :mod:`citeaudit.sources.copies`)."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["independent_support"]


def independent_support(supporting: Iterable[str], group_of: dict[str, int]) -> tuple[int, bool]:
    """``(independent sources, rests on one origin's copies only)`` for the keys of a claim's supporting
    sources: sources in one copy group count once; the flag is set when several sources support the claim
    and all of them are copies of one origin."""
    keys = list(dict.fromkeys(supporting))
    origins = {("group", group_of[k]) if k in group_of else ("source", k) for k in keys}
    return len(origins), len(keys) > 1 and len(origins) == 1
