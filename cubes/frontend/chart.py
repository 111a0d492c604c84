"""The monthly history of a Wordstat frequency as an inline SVG bar chart (docs/architecture.md s.3, "wordstat").

Rendered on the server: the page needs no script, and the chart is part of the
HTML (the site's Content-Security-Policy allows no external image here). One
bar per month, oldest left; a month under the privacy threshold is a pale,
short bar titled "< N" (its number is never drawn); the axis shows the highest
month and a label every ``_LABEL_EVERY`` months. Every text is escaped.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from shared.wordstat.frequency import Count

__all__ = ["history_svg", "month_label"]

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


def history_svg(months: Sequence[tuple[int, Count]], *, title: str) -> str:
    """The chart of ``months`` ((YYYYMM, count) oldest first) for the query ``title``."""
    shown = [c.visible or 0 for _, c in months]
    top = max(shown, default=0) or 1
    plot_w = _WIDTH - _LEFT - _RIGHT
    plot_h = _HEIGHT - _TOP - _BOTTOM
    step = plot_w / max(len(months), 1)
    bar_w = max(step * 0.7, 2.0)
    parts = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_WIDTH} {_HEIGHT}" role="img"'
        f' aria-label="{escape(f"Searches per month for {title}")}">',
        f"<title>{escape(f'Searches per month: {title}')}</title>",
        f'<line x1="{_LEFT}" y1="{_TOP + plot_h}" x2="{_WIDTH - _RIGHT}" y2="{_TOP + plot_h}" class="axis"/>',
        f'<text x="{_LEFT - 6}" y="{_TOP + 10}" text-anchor="end" class="tick">{top:,}</text>',
        f'<text x="{_LEFT - 6}" y="{_TOP + plot_h}" text-anchor="end" class="tick">0</text>',
    ]
    for i, (month, count) in enumerate(months):
        x = _LEFT + i * step + (step - bar_w) / 2
        label = month_label(month)
        if count.visible is None:
            h = 3.0 if count.n else 0.0
            cls, tip = "bar low", f"{label}: {count.display}"
        else:
            h = plot_h * count.visible / top
            cls, tip = "bar", f"{label}: {count.display}"
        if h:
            parts.append(
                f'<rect class="{cls}" x="{x:.1f}" y="{_TOP + plot_h - h:.1f}" width="{bar_w:.1f}" height="{h:.1f}">'
                f"<title>{escape(tip)}</title></rect>"
            )
        if (len(months) - 1 - i) % _LABEL_EVERY == 0:
            mid = x + bar_w / 2
            parts.append(
                f'<text x="{mid:.1f}" y="{_HEIGHT - 8}" text-anchor="middle" class="tick">{escape(label)}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)
