"""A scored scope as ``citeaudit score`` hands it over: the result, what the reader needs to know about the scope,
the figures computed beside it (or why they were not), and its JSON.

Pure: the services that read a file, a database or a Parquet dataset fill it in; the command line, the Spark job
and the library print it the same way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from citeaudit.core.protocol import disclosure

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from citeaudit.core.brand.results import BrandFigures
    from citeaudit.core.misattribution import MisattributionReport
    from citeaudit.core.model import Protocol
    from citeaudit.core.results import ScoreResult

__all__ = ["FIGURES", "NOT_ASKED", "NO_BRAND", "ScoredPath", "engine_not_computed", "result_json"]

FIGURES = ("brand", "misattribution")
"""The figures computed beside the scores when asked for, in the order of the JSON's ``computed`` object."""

NOT_ASKED = "not asked for: the figures are computed for `score --format json`, the HTML report and the review app"
"""Why no figure was computed when the caller did not ask for them (tables, CSV, the library by default)."""

NO_BRAND = "the protocol names no brand and no competitors (protocol keys `brand`, `competitors`)"
"""Why the brand figures were not computed for a protocol that declares neither."""


def engine_not_computed(engine: str) -> tuple[tuple[str, str], ...]:
    """Why no figure is computed beside the scores of the SQL engine ``engine`` (``duckdb``, ``spark``)."""
    return tuple((name, f"the {engine} engine computes the three headline metrics only") for name in FIGURES)


def result_json(result: ScoreResult, *, unresolved: int = 0, **extra: object) -> str:
    """The result as JSON; ``null`` where a metric is undefined; ``unresolved`` cited links not followed yet make the
    official rate provisional."""
    return json.dumps({**result.to_dict(unresolved), **extra}, indent=2, ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class ScoredPath:
    """A scored file or database with what the reader needs to know about the scope."""

    result: ScoreResult
    """The numbers."""
    protocol: Protocol
    """The protocol they were measured under."""
    excluded_by_kind: int
    """Answers left out because of their run kind (fixtures, by default)."""
    failed_answers: int = 0
    """Answers the engines did not give (failed or incomplete) in the scope's runs: recorded, not scored."""
    warnings: tuple[str, ...] = ()
    """What a reader must see beside the numbers (e.g. required facts changed after answers arrived)."""
    brand: BrandFigures | None = None
    """Competitor share, mentions, retrieved-not-cited, entity confusion and version drift, each under its own
    key (never part of precision, coverage or the official rate)."""
    misattribution: MisattributionReport | None = None
    """Claims at risk supported by another source of the audit (cross pairs); never part of any edge count."""
    unresolved_links: int = 0
    """Cited sources in scope whose link has not been followed yet (grounding redirects, title-only cards): while
    there are any, the official-domain rate is provisional (a link may lead to an official page, or away)."""
    not_computed: tuple[tuple[str, str], ...] = ()
    """``(figure, reason)`` for each of :data:`FIGURES` left uncomputed and why; a figure neither computed nor
    listed here reads as not asked for."""
    also: ScoreResult | None = None
    """The same answers grouped another way, without intervals, when asked for (``score_path(also_by=...)``)."""
    source_official: npt.NDArray[np.bool_] | None = None
    """Per source of a database (by its integer key), whether its page is official under :attr:`protocol`, as the
    official-domain rate decided it (``None`` for an audit file or an SQL engine): the HTML report marks the same
    sources official without deciding again."""

    @property
    def official_rate_provisional(self) -> bool:
        """Whether the official-domain rate may still change when the cited links are resolved."""
        return self.unresolved_links > 0

    def computed(self) -> dict[str, dict[str, object]]:
        """For each figure of :data:`FIGURES`, whether it was computed and, when it was not, why."""
        reasons = dict(self.not_computed)
        present = {"brand": self.brand is not None, "misattribution": self.misattribution is not None}
        return {
            name: {"computed": True} if present[name] else {"computed": False, "reason": reasons.get(name, NOT_ASKED)}
            for name in FIGURES
        }

    def to_json(self) -> str:
        """The JSON ``citeaudit score --format json`` prints: the result, failures, warnings, disclosure, the
        figures under their own keys (overall and per group), and which figures were computed."""
        extra: dict[str, object] = {}
        if self.misattribution is not None:
            extra["misattribution"] = self.misattribution.to_dict()
        if self.brand is not None:
            extra.update(self.brand.to_dict())
            brand = self.brand
            extra["groups"] = [{**group.to_dict(), **brand.group_dict(dict(group.by))} for group in self.result.groups]
        extra["official_rate_provisional"] = self.official_rate_provisional
        extra["unresolved_links"] = self.unresolved_links
        extra["computed"] = self.computed()
        return result_json(
            self.result,
            unresolved=self.unresolved_links,
            failed_answers=self.failed_answers,
            warnings=list(self.warnings),
            disclosure=disclosure(self.protocol),
            **extra,
        )
