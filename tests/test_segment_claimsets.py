"""Planning claim sets (pure): properties of the judgement rule, and manual edits on hand-made claims."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from citeaudit.core.errors import InvalidValue
from citeaudit.segment import segment
from citeaudit.segment.claimsets import CurrentClaim, CurrentEdge, NewClaim, plan_merge, plan_segmentation, plan_split

_PIECES = st.sampled_from(
    ["The AX220", "has a 20 L tank", "and", "can run outdoors", "It costs 1.200 €", "[1]", "[2]", ".", "?", "\n- "]
)


def _answer(pieces: list[str]) -> str:
    return " ".join(pieces)


def _edges_for_markers(text: str, owner: int) -> list[CurrentEdge]:
    """One edge per marker number, every marker of that number a location, all on claim ``owner``."""
    locations: dict[int, list[tuple[str | None, int | None, int | None]]] = {}
    for found in re.finditer(r"\[(\d)\]", text):
        locations.setdefault(int(found.group(1)), []).append((found.group(), found.start(), found.end()))
    return [CurrentEdge(owner, source, tuple(found), judgements=1) for source, found in locations.items()]


@settings(max_examples=200, deadline=None)
@given(st.lists(_PIECES, max_size=30))
def test_the_same_segmentation_again_keeps_every_claim_and_judgement(pieces: list[str]) -> None:
    text = _answer(pieces)
    segmented = segment(text)
    current = [CurrentClaim(100 + i, f"c{i}", c.text, c.start, c.end) for i, c in enumerate(segmented.claims)]
    edges = [CurrentEdge(c.pk, 1, (("[1]", c.start, c.start + 1),), judgements=2) for c in current]
    plan = plan_segmentation(segmented, current, edges, current)
    assert plan.members == tuple(c.pk for c in current)
    assert (plan.new, plan.retired, plan.judgements_not_transferred) == (0, 0, 0)
    assert plan.judgements_kept == 2 * len(current)


@settings(max_examples=200, deadline=None)
@given(st.lists(_PIECES, max_size=30))
def test_every_location_of_a_replaced_claim_is_placed_or_counted(pieces: list[str]) -> None:
    text = _answer(pieces)
    whole = CurrentClaim(1, "whole", text, 0, len(text))  # one claim for the whole answer, as if ingested
    edges = _edges_for_markers(text, owner=1)
    segmented = segment(text)
    plan = plan_segmentation(segmented, [whole], edges, [whole])
    placed = {
        location
        for member in plan.members
        if isinstance(member, NewClaim)
        for found in member.edges.values()
        for location in found
    }
    every = {location for edge in edges for location in edge.locations}
    assert len(placed) + plan.unattached >= len(every)
    assert placed <= every
    # judgements are never moved: new claims carry only pending edges, the old claim's stay counted apart
    if plan.retired:
        assert plan.judgements_not_transferred == len(edges)


TEXT = "The AX220 has a 20 L tank and can operate outdoors.[1]"
CLAIM = CurrentClaim(7, "c7", TEXT[0:50], 0, 50)
EDGE = CurrentEdge(7, 3, (("[1]", 51, 54),), judgements=1)


def test_a_split_gives_a_marker_after_the_claim_to_both_parts() -> None:
    plan = plan_split("a1", TEXT, [CLAIM], [EDGE], [CLAIM], CLAIM, 30)
    first, second = plan.members
    assert isinstance(first, NewClaim)
    assert isinstance(second, NewClaim)
    # [0, 30) trimmed is "The AX220 has a 20 L tank and" [0, 29); [30, 50) "can operate outdoors"
    assert (first.start, first.end, second.start, second.end) == (0, 29, 30, 50)
    assert first.edges == second.edges == {3: [("[1]", 51, 54)]}
    assert (plan.new, plan.retired, plan.judgements_not_transferred) == (2, 1, 1)


def test_bad_splits_and_merges_are_refused() -> None:
    with pytest.raises(InvalidValue, match=r"split offset 50 is not inside its span \[0, 50\)"):
        plan_split("a1", TEXT, [CLAIM], [EDGE], [CLAIM], CLAIM, 50)
    with pytest.raises(InvalidValue, match="at least two claims"):
        plan_merge("a1", TEXT, [CLAIM], [EDGE], [CLAIM], [CLAIM])
    left = CurrentClaim(1, "l", "The AX220", 0, 9)
    middle = CurrentClaim(2, "m", "has a 20 L tank", 10, 25)
    right = CurrentClaim(3, "r", "can operate outdoors", 30, 50)
    with pytest.raises(InvalidValue, match=r"claims \['m'\] lie between"):
        plan_merge("a1", TEXT, [left, middle, right], [], [left, middle, right], [left, right])
