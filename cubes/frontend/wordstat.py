"""The Wordstat page: how often a query is searched, by month, region and device (docs/architecture.md s.3, "wordstat").

``GET /wordstat?q=&months=&region=&device=`` — the query in Wordstat's operators
(``shared.wordstat.operators``), the period its total and splits cover (the
last 1 to 24 months, this one included), and optionally one region or device.
Public, like search: every number is an aggregate under the privacy threshold
(counts below it show as "< N", rarer queries are never listed). A query that
cannot be read is answered with its problem and where it is, never a 500. The page is
``html/wordstat.html``.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from aiohttp import web
from markupsafe import Markup

from cubes.frontend.chart import history_chart
from cubes.frontend.jinja import render
from shared.config import Settings
from shared.stores import Stores
from shared.wordstat.frequency import frequency
from shared.wordstat.operators import WordstatSyntaxError, parse

__all__ = ["WordstatPage", "period_param"]

_MAX_QUERY = 300
_CSS = Markup(
    ".chart{width:100%;height:auto;margin:.5rem 0 1rem}.chart .bar{fill:var(--acc)}"
    ".chart .bar.low{fill:var(--line,#ccd)}.chart .axis{stroke:currentColor;opacity:.3}"
    ".chart .tick{font-size:11px;fill:currentColor;opacity:.7}"
    ".ws-total{font-size:2rem;font-weight:700}.ws-grid{display:grid;gap:1.5rem;"
    "grid-template-columns:repeat(auto-fit,minmax(14rem,1fr))}"
    ".ws table{width:100%;border-collapse:collapse}.ws td,.ws th{padding:.3rem .4rem;text-align:left}"
    ".ws td.n{text-align:right;font-variant-numeric:tabular-nums}.ws .problem{color:#b00020}"
    ".ws .help{opacity:.75;font-size:.9rem}"
)
#: the periods the form offers: months, and how the menu says it
_PERIODS = ((1, "this month"), (3, "3 months"), (12, "12 months"), (24, "24 months"))


def period_param(raw: str | None, history: int) -> int:
    """The ``months`` parameter: 1 (this month) .. the history length."""
    try:
        return min(max(int(raw or "1"), 1), history)
    except ValueError:
        return 1


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
        status, problem, found = 200, None, None
        if query:
            try:
                parsed = parse(query)
            except WordstatSyntaxError as exc:
                status, problem = 400, str(exc)
            else:
                found = await frequency(
                    self.stores.wordstat,
                    parsed,
                    now=self.now(),
                    threshold=cfg.privacy_threshold,
                    history_months=cfg.history_months,
                    period_months=months,
                    region=request.query.get("region") or None,
                    device=request.query.get("device") or None,
                )
        page = render(
            "wordstat.html",
            title=f"{query or 'Wordstat'} · turbocubes wordstat",
            header_search="",  # the header's box searches pages, not Wordstat
            extra_css=_CSS,
            query=query,
            months=months,
            periods=_PERIODS,
            problem=problem,
            f=found,
            # the query as typed ("ёлка"), not as counted (its words folded: "елка")
            chart=history_chart(found.months, title=query) if found is not None else None,
        )
        return page, status
