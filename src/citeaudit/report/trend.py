"""The three numbers per collection, in collection order, with a break wherever the measurement changed.

Collections measured under different protocol fingerprints are not comparable: the trend marks the break and
names the changed components instead of joining the points as if nothing had changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citeaudit.core.errors import InputError
from citeaudit.core.model import Protocol, RunKind
from citeaudit.core.protocol import differing_components, fingerprint
from citeaudit.core.results import ScoreResult
from citeaudit.core.scope import Scope
from citeaudit.core.scoring import IntervalSettings

__all__ = ["Trend", "TrendPoint", "trend_path"]


@dataclass(frozen=True, slots=True)
class TrendPoint:
    """One collection's scores."""

    collection: str
    date: str
    """When the collection was made (``YYYY-MM-DD``)."""
    fingerprint: str
    result: ScoreResult
    """The three numbers (grouped as asked), under this collection's protocol."""
    break_before: tuple[str, ...] = ()
    """Fingerprint components that changed since the collection before (empty: comparable with it); ``revision``
    when one of the two was revised after its results and the other was not (or from another version)."""
    protocol: str = ""
    """The protocol (``id@version``) the collection's answers are measured under now."""
    revised_from: str | None = None
    """The protocol the collection was made under, when ``protocol revise`` has since moved its runs."""
    warnings: tuple[str, ...] = ()
    """What a reader must see beside the numbers (required facts changed after the answers were locked)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON form: the collection, its date, fingerprint, break, and the overall and group scores."""
        overall = self.result.overall
        return {
            "collection": self.collection,
            "date": self.date,
            "fingerprint": self.fingerprint,
            "protocol": self.protocol,
            "revised_from": self.revised_from,
            "comparable_with_previous": not self.break_before,
            "changed_components": list(self.break_before),
            "warnings": list(self.warnings),
            "answers": overall.answers,
            "provisional": self.result.provisional,
            **{name: overall.metric_dict(name) for name in ("official_rate", "precision", "coverage")},
            "groups": [
                {
                    **dict(group.by),
                    "answers": group.answers,
                    **{name: group.metric_dict(name) for name in ("official_rate", "precision", "coverage")},
                }
                for group in self.result.groups
            ],
        }


@dataclass(frozen=True, slots=True)
class Trend:
    """The scores of a database's collections, oldest first."""

    points: tuple[TrendPoint, ...]
    by: tuple[str, ...]

    @property
    def breaks(self) -> int:
        """Comparability breaks along the trend."""
        return sum(1 for point in self.points if point.break_before)

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"by": list(self.by), "breaks": self.breaks, "collections": [p.to_dict() for p in self.points]}


def trend_path(
    path: str | Path, *, by: Sequence[str] = (), ci: IntervalSettings | None = None, scope: Scope | None = None
) -> Trend:
    """Score each collection of the database at ``path`` (platform runs, or the run kinds of ``scope``)."""
    from citeaudit.scoring.paths import is_database, score_path
    from citeaudit.store import Store
    from citeaudit.store.answers import collections_measured

    if not is_database(path):
        raise InputError(
            str(path),
            "",
            "a trend reads the collections of a database; import them with "
            "`citeaudit ingest DIR --manifest FILE` or `citeaudit collect`",
        )
    with Store(path) as store:
        collections = collections_measured(store)
        protocols = {pk: store.protocol(pk) for row in collections for pk in row[2:4]}
    if not collections:
        raise InputError(
            str(path),
            "",
            "no collection has answers: a trend needs collections (`citeaudit ingest "
            "DIR --manifest FILE`, `citeaudit collect`)",
        )
    base = scope or Scope(run_kinds=frozenset({RunKind.PLATFORM}))
    points: list[TrendPoint] = []
    previous: Protocol | None = None
    previous_origin: str | None = None
    for name, date, made_under, measured_under, _ in collections:
        # a revised collection's runs point at the revised protocol: it is scored there, and says so
        protocol = protocols[measured_under]
        origin = None if made_under == measured_under else _named(protocols[made_under])
        where = {**base.where, "collection": frozenset({name})}
        scored = score_path(
            path,
            scope=Scope(run_kinds=base.run_kinds, where=where),
            by=by,
            protocol=fingerprint(protocol),
            ci=ci,
        )
        # as the collection's answers were measured (its segmentation, the review assistance of its labels)
        protocol = scored.protocol
        changed: tuple[str, ...] = ()
        if previous is not None:
            changed = tuple(differing_components(previous, protocol))
            if origin != previous_origin:
                changed = (*changed, "revision")
        points.append(
            TrendPoint(
                name, date, fingerprint(protocol), scored.result, changed, _named(protocol), origin, scored.warnings
            )
        )
        previous, previous_origin = protocol, origin
    return Trend(tuple(points), tuple(by))


def _named(protocol: Protocol) -> str:
    return f"{protocol.id}@{protocol.version}"
