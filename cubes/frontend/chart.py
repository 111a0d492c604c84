"""The monthly history of a Wordstat frequency as an inline SVG bar chart (docs/architecture.md s.3, "wordstat").

Rendered on the server: the page needs no script, and the chart is part of the
HTML (the site's Content-Security-Policy allows no external image here). One
bar per month, oldest left; a month under the privacy threshold is a pale,
short bar titled "< N" (its number is never drawn); the axis shows the highest
month and a label every ``_LABEL_EVERY`` months. This module lays the chart out;
``html/chart.html`` draws it (escaping every text, as every template does).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cubes.frontend.jinja import ENV
from shared.wordstat.frequency import Count

__all__ = ["Chart", "history_chart", "history_svg", "month_label"]

_WIDTH = 720
_HEIGHT = 240
_LEFT = 56  # room for the axis numbers
_BOTTOM = 28  # room for the month labels
_TOP = 12
_RIGHT = 28  # room for half of the last month's label, centred under its bar
#: a label every third month: 24 labels would overlap on a phone
_LABEL_EVERY = 3
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def month_label(month: int) -> str:
    """``202611`` -> ``Nov 2026``."""
    return f"{_MONTHS[month % 100 - 1]} {month // 100}"


@dataclass(frozen=True, slots=True)
class Bar:
    cls: str  # "bar", or "bar low" for a month under the privacy threshold
    x: float
    y: float
    w: float
    h: float
    tip: str


@dataclass(frozen=True, slots=True)
class Label:
    x: float
    text: str


@dataclass(frozen=True, slots=True)
class Month:
    """One month of the chart: its bar (none for a month without searches) and its label (one in ``_LABEL_EVERY``)."""

    bar: Bar | None
    label: Label | None


@dataclass(frozen=True, slots=True)
class Chart:
    """The chart as ``html/chart.html`` draws it: the frame, then each month's bar and label."""

    title: str
    highest: int
    months: list[Month]
    width: int = _WIDTH
    height: int = _HEIGHT
    left: int = _LEFT
    right: int = _WIDTH - _RIGHT
    top: int = _TOP
    base: int = _HEIGHT - _BOTTOM


def history_chart(months: Sequence[tuple[int, Count]], *, title: str) -> Chart:
    """The chart of ``months`` ((YYYYMM, count) oldest first) for the query ``title``."""
    shown = [c.visible or 0 for _, c in months]
    top = max(shown, default=0) or 1
    plot_w = _WIDTH - _LEFT - _RIGHT
    plot_h = _HEIGHT - _TOP - _BOTTOM
    step = plot_w / max(len(months), 1)
    bar_w = max(step * 0.7, 2.0)
    drawn: list[Month] = []
    for i, (month, count) in enumerate(months):
        x = _LEFT + i * step + (step - bar_w) / 2
        label = month_label(month)
        if count.visible is None:
            h = 3.0 if count.n else 0.0
            cls = "bar low"
        else:
            h = plot_h * count.visible / top
            cls = "bar"
        bar = Bar(cls, x, _TOP + plot_h - h, bar_w, h, f"{label}: {count.display}") if h else None
        shown_label = Label(x + bar_w / 2, label) if (len(months) - 1 - i) % _LABEL_EVERY == 0 else None
        drawn.append(Month(bar, shown_label))
    return Chart(title=title, highest=top, months=drawn)


def history_svg(months: Sequence[tuple[int, Count]], *, title: str) -> str:
    """The chart as SVG markup, as the page draws it (``html/chart.html``)."""
    chart = ENV.get_template("chart.html").module.history_chart  # type: ignore[attr-defined]
    return str(chart(history_chart(months, title=title)))
