"""The Wordstat page: how often a query is searched, by month, region and device (docs/architecture.md s.3, "wordstat").

``GET /wordstat?q=&months=&region=&device=`` — the query in Wordstat's operators
(``shared.wordstat.operators``), the period its total and splits cover (the
last 1 to 24 months, this one included), and optionally one region or device.
Public, like search: every number is an aggregate under the privacy threshold
(counts below it show as "< N", rarer queries are never listed). A query that
cannot be read is answered with its problem and where it is, never a 500.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from html import escape
from urllib.parse import urlencode

from aiohttp import web

from cubes.frontend import templates
from cubes.frontend.chart import history_svg
from shared.config import Settings
from shared.stores import Stores
from shared.wordstat.frequency import Frequency, Share, frequency
from shared.wordstat.operators import WordstatSyntaxError, parse

__all__ = ["WordstatPage", "period_param"]

_MAX_QUERY = 300
_CSS = (
    ".chart{width:100%;height:auto;margin:.5rem 0 1rem}.chart .bar{fill:var(--acc)}"
    ".chart .bar.low{fill:var(--line,#ccd)}.chart .axis{stroke:currentColor;opacity:.3}"
    ".chart .tick{font-size:11px;fill:currentColor;opacity:.7}"
    ".ws-total{font-size:2rem;font-weight:700}.ws-grid{display:grid;gap:1.5rem;"
    "grid-template-columns:repeat(auto-fit,minmax(14rem,1fr))}"
    ".ws table{width:100%;border-collapse:collapse}.ws td,.ws th{padding:.3rem .4rem;text-align:left}"
    ".ws td.n{text-align:right;font-variant-numeric:tabular-nums}.ws .problem{color:#b00020}"
    ".ws .help{opacity:.75;font-size:.9rem}"
)
_HELP = (
    '<p class="help">Operators: <code>"…"</code> these words only, <code>!word</code> this form, '
    "<code>+в</code> a function word counted, <code>[…]</code> this order, <code>(a|b)</code> either, "
    "<code>-word</code> exclude.</p>"
)


def period_param(raw: str | None, history: int) -> int:
    """The ``months`` parameter: 1 (this month) .. the history length."""
    try:
        return min(max(int(raw or "1"), 1), history)
    except ValueError:
        return 1


def _form(query: str, months: int) -> str:
    options = "".join(
        f'<option value="{n}"{" selected" if n == months else ""}>{label}</option>'
        for n, label in ((1, "this month"), (3, "3 months"), (12, "12 months"), (24, "24 months"))
    )
    return (
        '<form class="search" action="/wordstat" method="get" role="search">'
        f'<input type="search" name="q" value="{escape(query)}" placeholder="Query, with operators"'
        ' aria-label="Wordstat query">'
        f'<select name="months" aria-label="Period">{options}</select>'
        '<button type="submit">Count</button></form>'
    )


def _shares(title: str, shares: tuple[Share, ...]) -> str:
    if not shares:
        return f'<section><h3>{escape(title)}</h3><p class="empty">No searches.</p></section>'
    rows = "".join(
        f'<tr><td>{escape(s.key)}</td><td class="n">{escape(s.count.display)}</td>'
        f'<td class="n">{"" if s.share is None else f"{s.share:.0%}"}</td></tr>'
        for s in shares
    )
    return f"<section><h3>{escape(title)}</h3><table>{rows}</table></section>"


def _similar(f: Frequency, months: int) -> str:
    if not f.similar:
        return '<section><h3>Queries</h3><p class="empty">None searched often enough to list.</p></section>'
    rows = "".join(
        f'<tr><td><a href="/wordstat?{escape(urlencode({"q": q, "months": months}))}">{escape(q)}</a></td>'
        f'<td class="n">{escape(c.display)}</td></tr>'
        for q, c in f.similar
    )
    return f"<section><h3>Queries</h3><table>{rows}</table></section>"


def _result(f: Frequency, months: int) -> str:
    period = "this month" if months == 1 else f"the last {months} months"
    note = '<p class="help">A lower bound: more queries matched than were checked.</p>' if f.approximate else ""
    return (
        f'<p><span class="ws-total">{escape(f.total.display)}</span> searches for “{escape(f.query)}” {period}.</p>'
        f"{note}<h3>By month</h3>{history_svg(f.months, title=f.query)}"
        f'<div class="ws-grid">{_shares("Regions", f.regions)}{_shares("Devices", f.devices)}'
        f"{_similar(f, months)}</div>"
    )


class WordstatPage:
    def __init__(self, settings: Settings, stores: Stores, now: Callable[[], datetime]) -> None:
        self.settings = settings
        self.stores = stores
        self.now = now

    async def render(self, request: web.Request) -> tuple[str, int]:
        """The page's HTML and status (400 for a query that cannot be read)."""
        cfg = self.settings.wordstat
        query = " ".join(request.query.get("q", "").split())[:_MAX_QUERY]
        months = period_param(request.query.get("months"), cfg.history_months)
        body = f'<section class="ws"><h1>Wordstat</h1>{_form(query, months)}{_HELP}'
        status = 200
        if query:
            try:
                parsed = parse(query)
            except WordstatSyntaxError as exc:
                status = 400
                body += f'<p class="problem" role="alert">This query cannot be counted: {escape(str(exc))}.</p>'
            else:
                f = await frequency(
                    self.stores.wordstat,
                    parsed,
                    now=self.now(),
                    threshold=cfg.privacy_threshold,
                    history_months=cfg.history_months,
                    period_months=months,
                    region=request.query.get("region") or None,
                    device=request.query.get("device") or None,
                )
                body += _result(f, months)
        body += "</section>"
        return templates.layout(f"{query or 'Wordstat'} · turbocubes wordstat", body, extra_css=_CSS), status
