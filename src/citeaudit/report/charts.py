"""Inline SVG charts for the HTML report, drawn as plain markup: the report needs no plotting library.

Every text placed in a chart is escaped, so a group name such as ``<script>`` stays text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from citeaudit.core.results import Metric

__all__ = ["METRIC_NAMES", "NAMED_AT_MOST", "Bar", "bar_chart", "wrap"]

METRIC_NAMES = {"official_rate": "Official-domain rate", "precision": "Citation precision", "coverage": "Fact coverage"}
"""The three numbers in the order the charts draw them."""

_COLOURS = ("#3b6fb6", "#2f8f5b", "#c27c0e")
_FILLS = ("#3b6fb6", "url(#hatch-1)", "url(#dots-2)")
"""Each metric's fill: a colour and a pattern (solid, hatched, dotted), so colour is never the only cue."""
_PATTERNS = (
    '<defs><pattern id="hatch-1" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
    f'<rect width="6" height="6" fill="{_COLOURS[1]}"/><line x1="0" y1="0" x2="0" y2="6" stroke="#fff" '
    'stroke-width="2"/></pattern><pattern id="dots-2" width="6" height="6" patternUnits="userSpaceOnUse">'
    f'<rect width="6" height="6" fill="{_COLOURS[2]}"/><circle cx="3" cy="3" r="1.3" fill="#fff"/></pattern></defs>'
)
_WIDTH, _HEIGHT = 900, 340
_LEFT, _RIGHT, _TOP, _BOTTOM = 48, 190, 16, 68
_CHAR = 7.4
"""A generous width of one character of the 12 px axis labels (px): lines are cut to fit their slot with it."""
NAMED_AT_MOST = 8
"""Above this many groups (or when a name does not fit its slot in three lines), the x axis numbers the groups and
the table beside the chart names them."""
_LINES = 3


@dataclass(frozen=True, slots=True)
class Bar:
    """One group of the chart: its label, the three metrics, and a mark drawn before it (a comparability break)."""

    label: str
    metrics: Sequence[Metric]
    break_before: str = ""
    """Why the group is not comparable with the one before it (empty when it is)."""


def _y(value: float) -> float:
    return _TOP + (1.0 - value) * (_HEIGHT - _TOP - _BOTTOM)


def bar_chart(bars: Sequence[Bar], names: Sequence[str] = tuple(METRIC_NAMES.values())) -> str:
    """Grouped bars (one per metric) with their intervals as whiskers; an undefined value is marked "n/a"
    instead of a bar of height 0; a break is a dashed vertical line with its reason as the tooltip."""
    plot_width = _WIDTH - _LEFT - _RIGHT
    slot = plot_width / max(1, len(bars))
    bar_width = slot * 0.8 / max(1, len(names))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_WIDTH} {_HEIGHT}" width="{_WIDTH}" '
        f'height="{_HEIGHT}" role="img" font-family="sans-serif" font-size="12">',
        _PATTERNS,
    ]
    fits = int(slot * 0.92 / _CHAR)
    # names that would lose words to the slot are numbered too: a cut name reads as another name
    numbered = len(bars) > NAMED_AT_MOST or any(wrap(bar.label, fits)[-1].endswith("…") for bar in bars)
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        y = _y(tick)
        parts.append(f'<line x1="{_LEFT}" x2="{_LEFT + plot_width}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e3e6eb"/>')
        parts.append(f'<text x="{_LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{tick:.2f}</text>')
    for i, bar in enumerate(bars):
        x0 = _LEFT + i * slot + slot * 0.1
        if bar.break_before:
            x = _LEFT + i * slot
            parts.append(
                f'<line class="break" x1="{x:.1f}" x2="{x:.1f}" y1="{_TOP}" y2="{_HEIGHT - _BOTTOM}" '
                f'stroke="#a11919" stroke-dasharray="4 3"><title>{escape(bar.break_before)}</title></line>'
            )
        for k, metric in enumerate(bar.metrics):
            x = x0 + k * bar_width
            colour = _FILLS[k % len(_FILLS)]
            if metric.value is None:
                parts.append(
                    f'<text x="{x + bar_width / 2:.1f}" y="{_y(0) - 4:.1f}" text-anchor="middle" '
                    f'fill="#5b6474">n/a</text>'
                )
                continue
            top = _y(metric.value)
            parts.append(
                f'<rect x="{x:.1f}" y="{top:.1f}" width="{bar_width * 0.9:.1f}" height="{_y(0) - top:.1f}" '
                f'fill="{colour}"><title>{escape(names[k])}: {metric.numerator}/{metric.denominator}</title></rect>'
            )
            ci = metric.ci
            if ci is not None and ci.low is not None and ci.high is not None:
                mid = x + bar_width * 0.45
                parts.append(
                    f'<line x1="{mid:.1f}" x2="{mid:.1f}" y1="{_y(ci.high):.1f}" y2="{_y(ci.low):.1f}" stroke="#222"/>'
                )
        parts.append(_x_label(bar.label, i, slot, numbered))
    for k, name in enumerate(names):
        y = _TOP + 10 + k * 20
        parts.append(
            f'<rect x="{_WIDTH - _RIGHT + 12}" y="{y - 9}" width="12" height="12" fill="{_FILLS[k]}" stroke="#222" '
            'stroke-width="0.5"/>'
        )
        parts.append(f'<text x="{_WIDTH - _RIGHT + 30}" y="{y + 2}">{escape(name)}</text>')
    if numbered:
        y = _TOP + 10 + len(names) * 20 + 8
        parts.append(
            f'<text x="{_WIDTH - _RIGHT + 12}" y="{y}" fill="#5b6474"><tspan>groups are numbered</tspan>'
            f'<tspan x="{_WIDTH - _RIGHT + 12}" dy="14">as in the table</tspan></text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def wrap(label: str, width: int, lines: int = _LINES) -> list[str]:
    """``label`` in at most ``lines`` lines of at most ``width`` characters, cut at spaces where it can be; a word
    longer than a line is split, and what does not fit ends in an ellipsis."""
    width = max(2, width)
    out: list[str] = []
    current = ""
    for word in label.split():
        while len(word) > width:
            if current:
                out.append(current)
                current = ""
            out.append(word[: width - 1] + "-")
            word = word[width - 1 :]
        if not current:
            current = word
        elif len(current) + 1 + len(word) <= width:
            current += " " + word
        else:
            out.append(current)
            current = word
    if current:
        out.append(current)
    if len(out) > lines:
        out = out[:lines]
        out[-1] = out[-1][: width - 1].rstrip("-") + "…"
    return out or [""]


def _x_label(label: str, i: int, slot: float, numbered: bool) -> str:
    """The label under group ``i``: its name wrapped to the slot, or its number when the groups are many (the
    full name is the label's tooltip either way)."""
    x = _LEFT + (i + 0.5) * slot
    y = _HEIGHT - _BOTTOM + 18
    title = f"<title>{escape(label)}</title>"
    if numbered:
        return f'<text class="xlabel" x="{x:.1f}" y="{y}" text-anchor="middle">{title}{i + 1}</text>'
    lines = wrap(label, int(slot * 0.92 / _CHAR))
    spans = "".join(
        f'<tspan x="{x:.1f}" dy="{0 if n == 0 else 14}">{escape(line)}</tspan>' for n, line in enumerate(lines)
    )
    return f'<text class="xlabel" x="{x:.1f}" y="{y}" text-anchor="middle">{title}{spans}</text>'
