"""Claim sets: how a new segmentation (or a manual split, merge or edit) of one answer replaces its claims.

Pure: takes the answer's current claims and edges as read from the store, returns the plan the store
writes. The judgement rule: a claim whose text and span are unchanged is the same claim (same row, same
edges, same judgements); any other claim is new, and its edges start pending with the citation locations
that belong to it. Judgements are never moved to different text: the judgements of a replaced claim stay
with it in the claim set history.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from citeaudit.core.errors import InvalidValue
from citeaudit.ingest.text import claim_text, trim_span
from citeaudit.segment.rules import Segmented
from citeaudit.store.claimsets import ClaimPlan, CurrentClaim, CurrentEdge, NewClaim, SetPlan, StoredLocation

__all__ = [
    "ClaimPlan",
    "CurrentClaim",
    "CurrentEdge",
    "NewClaim",
    "SetPlan",
    "plan_edit",
    "plan_merge",
    "plan_segmentation",
    "plan_split",
]

Attach = Callable[[CurrentEdge, StoredLocation], tuple[int, ...]]


def _plan(
    current: Sequence[CurrentClaim],
    edges: Sequence[CurrentEdge],
    history: Sequence[CurrentClaim],
    proposed: Sequence[tuple[str, int, int]],
    attach: Attach,
    redistribute: set[int] | None = None,
) -> tuple[list[ClaimPlan], SetPlan]:
    """Members and counts for ``proposed`` claims replacing ``current``. Kept claims keep their own edges;
    ``attach`` places each location of the other current claims' edges on proposed claims (indexes).
    ``redistribute`` limits which current claims' edges are placed (default: all of them)."""
    known = {(c.text, c.start, c.end): c.pk for c in history}
    kept = {known[key] for key in proposed if key in known}
    placed: dict[int, dict[int, list[StoredLocation]]] = {}
    unattached = 0
    current_pks = {c.pk for c in current}
    for edge in edges:
        if edge.claim_pk not in current_pks or edge.claim_pk in kept:
            continue  # a kept claim keeps its own edges; claims of older sets are history
        if redistribute is not None and edge.claim_pk not in redistribute:
            continue
        for location in edge.locations:
            targets = attach(edge, location)
            if not targets:
                unattached += 1
            for target in targets:
                placed.setdefault(target, {}).setdefault(edge.source_pk, []).append(location)
    members: list[ClaimPlan] = []
    for index, (text, start, end) in enumerate(proposed):
        pk = known.get((text, start, end))
        if pk is not None:
            members.append(pk)
        else:
            members.append(NewClaim(text, start, end, placed.get(index, {})))
    kept_pks = {m for m in members if isinstance(m, int)}
    kept_edges = [e for e in edges if e.claim_pk in kept_pks]
    retired_edges = [e for e in edges if e.claim_pk in current_pks - kept_pks]
    new_claims = [m for m in members if isinstance(m, NewClaim)]
    summary = SetPlan(
        members=tuple(members),
        kept=len(kept_pks),
        new=len(new_claims),
        retired=len(current_pks - kept_pks),
        edges_kept=len(kept_edges),
        edges_pending=sum(len(m.edges) for m in new_claims),
        judgements_kept=sum(e.judgements for e in kept_edges),
        judgements_not_transferred=sum(e.judgements for e in retired_edges),
        facts_not_transferred=sum(1 for c in current if c.pk not in kept_pks and c.fact_pk is not None),
        unattached=unattached,
    )
    return members, summary


def _span_of(claims: Sequence[CurrentClaim], pk: int) -> tuple[int | None, int | None]:
    for claim in claims:
        if claim.pk == pk:
            return claim.start, claim.end
    return None, None


_TRAILING = ".,;:!?…。、"
"""Punctuation that may end a claim or not, without making it another claim."""


def _as_current(text: str, start: int, end: int, current: Sequence[CurrentClaim]) -> tuple[str, int, int]:
    """A proposed claim as the current claim it equals up to trailing punctuation (same start, same words, the
    end moved only over that punctuation), so an ingested claim is kept with its edges; otherwise itself."""
    bare = text.rstrip(_TRAILING).rstrip()
    for claim in current:
        # Same start, and the ends differ by exactly the characters the texts differ by (the punctuation).
        if claim.start != start or claim.end is None or claim.end - end != len(claim.text) - len(text):
            continue
        if claim.text.rstrip(_TRAILING).rstrip() == bare:
            return claim.text, claim.start, claim.end
    return text, start, end


def plan_segmentation(
    segmented: Segmented,
    current: Sequence[CurrentClaim],
    edges: Sequence[CurrentEdge],
    history: Sequence[CurrentClaim],
) -> SetPlan:
    """The new set a segmentation makes. A marker goes to the claim(s) of the sentence or clause it stands
    in; a span-shaped location (an engine segment) to every claim it overlaps; a location without position
    to every claim inside the span of the claim it was on."""

    def attach(edge: CurrentEdge, location: StoredLocation) -> tuple[int, ...]:
        marker, start, end = location
        if start is not None and marker is not None:
            return segmented.claims_at(start)
        if start is not None and end is not None:
            return segmented.claims_overlapping(start, max(end, start + 1))
        c_start, c_end = _span_of(current, edge.claim_pk)
        if c_start is None or c_end is None:
            return ()
        return segmented.claims_overlapping(c_start, max(c_end, c_start + 1))

    proposed = [_as_current(c.text, c.start, c.end, current) for c in segmented.claims]
    _, summary = _plan(current, edges, history, proposed, attach)
    return dataclasses.replace(summary, skipped=segmented.skipped_counts())


def _replace(
    answer: str,
    current: Sequence[CurrentClaim],
    edges: Sequence[CurrentEdge],
    history: Sequence[CurrentClaim],
    replaced: Sequence[CurrentClaim],
    replacements: Sequence[tuple[str, int, int]],
) -> SetPlan:
    """Replace ``replaced`` (adjacent current claims) by ``replacements``; the other claims are kept."""
    replaced_pks = {c.pk for c in replaced}
    proposed: list[tuple[str, int, int]] = []
    first_new = -1
    for claim in current:
        if claim.pk in replaced_pks:
            if first_new < 0:
                first_new = len(proposed)
                proposed.extend(replacements)
            continue
        if claim.start is None or claim.end is None:
            raise InvalidValue(answer, f"claim {claim.id!r}", "has no span; claims without spans cannot be edited")
        proposed.append((claim.text, claim.start, claim.end))
    indexes = range(first_new, first_new + len(replacements))

    def attach(edge: CurrentEdge, location: StoredLocation) -> tuple[int, ...]:
        _, start, end = location
        if start is None:
            return tuple(indexes)
        if end is not None and end - start > 8:  # a span-shaped location: every replacement it overlaps
            hits = tuple(i for i in indexes if proposed[i][1] < end and start < proposed[i][2])
            return hits or tuple(indexes)
        if start < proposed[indexes[0]][1] or start >= proposed[indexes[-1]][2]:
            return tuple(indexes)  # a marker outside the parts (e.g. after the full stop) belongs to all
        before = [i for i in indexes if proposed[i][1] <= start]
        return (before[-1],)

    _, summary = _plan(current, edges, history, proposed, attach, redistribute=replaced_pks)
    return summary


def plan_split(
    answer_id: str,
    answer_text: str,
    current: Sequence[CurrentClaim],
    edges: Sequence[CurrentEdge],
    history: Sequence[CurrentClaim],
    claim: CurrentClaim,
    at: int,
) -> SetPlan:
    """Split ``claim`` at answer offset ``at`` into two claims; its markers go to the part they stand in."""
    where = f"claim {claim.id!r}"
    if claim.start is None or claim.end is None:
        raise InvalidValue(answer_id, where, "has no span; only claims with a span can be split")
    if not claim.start < at < claim.end:
        raise InvalidValue(answer_id, where, f"split offset {at} is not inside its span [{claim.start}, {claim.end})")
    parts = [trim_span(answer_text, claim.start, at), trim_span(answer_text, at, claim.end)]
    pieces = [(claim_text(answer_text, s, e), s, e) for s, e in parts]
    if any(not text for text, _, _ in pieces):
        raise InvalidValue(answer_id, where, f"split at {at} leaves an empty part")
    return _replace(answer_id, current, edges, history, [claim], pieces)


def plan_merge(
    answer_id: str,
    answer_text: str,
    current: Sequence[CurrentClaim],
    edges: Sequence[CurrentEdge],
    history: Sequence[CurrentClaim],
    claims: Sequence[CurrentClaim],
) -> SetPlan:
    """Merge claims of one answer into one claim spanning them all; it keeps every location of every edge."""
    if len(claims) < 2:
        raise InvalidValue(answer_id, "claims", "name at least two claims to merge")
    for claim in claims:
        if claim.start is None or claim.end is None:
            raise InvalidValue(answer_id, f"claim {claim.id!r}", "has no span; only claims with a span can be merged")
    start = min(c.start for c in claims if c.start is not None)
    end = max(c.end for c in claims if c.end is not None)
    inside = [c for c in current if c.start is not None and c.end is not None and start <= c.start and c.end <= end]
    strays = sorted({c.id for c in inside} - {c.id for c in claims})
    if strays:
        raise InvalidValue(
            answer_id, "claims", f"claims {strays!r} lie between the claims to merge; merge them too or pick others"
        )
    return _replace(answer_id, current, edges, history, claims, [(claim_text(answer_text, start, end), start, end)])


def plan_edit(
    answer_id: str,
    answer_text: str,
    current: Sequence[CurrentClaim],
    edges: Sequence[CurrentEdge],
    history: Sequence[CurrentClaim],
    claim: CurrentClaim,
    text: str | None,
    start: int | None,
    end: int | None,
) -> SetPlan:
    """Change a claim's text and/or span; a changed claim is a new claim whose edges start pending."""
    where = f"claim {claim.id!r}"
    new_start = claim.start if start is None else start
    new_end = claim.end if end is None else end
    if new_start is None or new_end is None or not 0 <= new_start < new_end <= len(answer_text):
        raise InvalidValue(
            answer_id, where, f"span [{new_start}, {new_end}) is not inside the answer (length {len(answer_text)})"
        )
    new_text = " ".join(text.split()) if text is not None else claim_text(answer_text, new_start, new_end)
    if not new_text:
        raise InvalidValue(answer_id, where, "the new claim text is empty")
    return _replace(answer_id, current, edges, history, [claim], [(new_text, new_start, new_end)])
