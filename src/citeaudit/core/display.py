"""How a figure is shown: the one decision every view (terminal, HTML, JSON, the review UI) takes from here.

A figure is in one of four states, and each state has one wording:

- ``measured``: final; ``17/36  0.472``.
- ``provisional``: some of its inputs still wait for a final label or a resolved link; the pending count is in
  the same cell (``0/49 · 49 pending``), and no decimal: it would read as measured (JSON keeps ``value``).
- ``undefined``: its denominator is 0 (``— n/a (no edges)``): never 0, never 1.
- ``not_measured``: its inputs were never produced (no cross pairs proposed); it is ``null`` with the reason and
  how to produce them, never a count over nothing.

An interval is shown beside the figure as ``[low, high]``; one of zero width (every question at the same value,
a one-question group) is "not informative", never certainty, and one over fewer than
:data:`~citeaudit.core.stats.FEW_CLUSTERS` questions carries the few-clusters caution wherever it is shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from citeaudit.core.stats import Interval

__all__ = ["UNDEFINED_REASONS", "FigureState", "ShownFigure", "interval_shown", "show_figure"]

UNDEFINED_REASONS = {
    "precision": "no edges",
    "coverage": "no facts",
    "official_rate": "no answers",
    "misattribution": "no claims at risk",
}
"""Why each figure is undefined when its denominator is 0 (the unit it counts)."""


class FigureState(StrEnum):
    """What a figure's value is."""

    MEASURED = "measured"
    """Final: every input has its final label (and every link its resolution)."""
    PROVISIONAL = "provisional"
    """Some inputs are pending; the value may still change."""
    UNDEFINED = "undefined"
    """The denominator is 0: there is nothing to count."""
    NOT_MEASURED = "not_measured"
    """The inputs were never produced: the value is unknown, not 0."""


@dataclass(frozen=True, slots=True)
class ShownFigure:
    """A figure with the words it is shown with."""

    state: FigureState
    """What its value is."""
    numerator: int
    """Units meeting the criterion."""
    denominator: int
    """Units in scope."""
    pending: int
    """Inputs still pending (0 unless provisional)."""
    reason: str | None
    """Why the figure is undefined or not measured (``None`` otherwise)."""
    interval: str | None
    """The interval's wording (``[low, high]`` or ``not informative (…)``), ``None`` without one."""
    caution: str | None
    """The few-clusters caution of the interval, when it has one."""
    pending_of: str | None = None
    """What the pending inputs are when they are not the figure's own units (``edges`` for coverage, ``links``
    for the official rate); ``None`` when they are."""

    @property
    def value(self) -> float | None:
        """The proportion, ``None`` when undefined or not measured."""
        if self.state in (FigureState.UNDEFINED, FigureState.NOT_MEASURED):
            return None
        return self.numerator / self.denominator

    @property
    def text(self) -> str:
        """The figure on one line, as a table cell shows it."""
        if self.state is FigureState.NOT_MEASURED:
            return f"— not measured ({self.reason})"
        if self.state is FigureState.UNDEFINED:
            return f"— n/a ({self.reason})"
        shown = f"{self.numerator}/{self.denominator}"
        if self.state is FigureState.PROVISIONAL:
            # no decimal while inputs are pending: 0.000 over unreviewed edges reads as a measured figure
            unit = f" {self.pending_of}" if self.pending_of else ""
            return f"{shown} · {self.pending}{unit} pending"
        return f"{shown}  {self.numerator / self.denominator:.3f}"

    @property
    def cell(self) -> str:
        """The figure, then its interval and caution on a second line (terminal tables, HTML cells)."""
        if self.interval is None:
            return self.text
        few = " ⚠" if self.caution else ""  # the caution itself is printed once below the table
        # a cell stays narrow: "not informative" above its reason
        interval = self.interval.replace("informative (", "informative\n(", 1)
        return f"{self.text}\n{interval}{few}"

    def to_dict(self) -> dict[str, object]:
        """The JSON keys a figure gains beside ``value``/``numerator``/``denominator`` when it is provisional or not
        measured (nothing for a measured or undefined one, so the JSON shape of docs/metrics.md holds)."""
        body: dict[str, object] = {}
        if self.state in (FigureState.MEASURED, FigureState.UNDEFINED):
            # ``value: null`` over a denominator of 0 already says it (docs/metrics.md)
            return body
        body["state"] = str(self.state)
        if self.state is FigureState.PROVISIONAL:
            body["pending"] = self.pending
        if self.reason is not None:
            body["reason"] = self.reason
        if body:
            body["shown"] = self.text
        return body


def _short(value: float) -> str:
    # 1.0, 0.333: the value each question has, without trailing zeros
    text = f"{value:.3f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def interval_shown(ci: Interval | None) -> tuple[str | None, str | None]:
    """``(wording, caution)`` of an interval: ``[low, high]``, or "not informative" for one of zero width."""
    if ci is None or ci.low is None or ci.high is None:
        return None, None
    questions = "question" if ci.clusters == 1 else "questions"
    if ci.high - ci.low <= 1e-12:
        return f"not informative ({ci.clusters} {questions}, all at {_short(ci.low)})", ci.caution
    return f"[{ci.low:.3f}, {ci.high:.3f}]", ci.caution


def show_figure(
    numerator: int,
    denominator: int,
    name: str,
    *,
    ci: Interval | None = None,
    pending: int = 0,
    pending_of: str | None = None,
    not_measured: str | None = None,
) -> ShownFigure:
    """How the figure ``numerator/denominator`` called ``name`` is shown.

    ``pending`` counts its inputs without a final label (or resolution): above 0 the figure is provisional;
    ``pending_of`` names those inputs when they are not the figure's own units.
    ``not_measured`` is the reason its inputs were never produced (with what produces them): the figure is then
    not measured whatever the counts say.

    Notes: undefined when ``denominator == 0`` (the reason from :data:`UNDEFINED_REASONS`)."""
    if pending < 0:
        raise ValueError(f"pending must be at least 0 (got {pending!r})")
    interval, caution = interval_shown(ci)
    if not_measured is not None:
        return ShownFigure(FigureState.NOT_MEASURED, numerator, denominator, 0, not_measured, None, None)
    if denominator == 0:
        reason = UNDEFINED_REASONS.get(name, "nothing to count")
        return ShownFigure(FigureState.UNDEFINED, 0, 0, 0, reason, None, None)
    if pending:
        return ShownFigure(
            FigureState.PROVISIONAL, numerator, denominator, pending, None, interval, caution, pending_of
        )
    return ShownFigure(FigureState.MEASURED, numerator, denominator, 0, None, interval, caution)
