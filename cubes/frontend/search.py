"""The search page: results in Russian and English, filters and cursor pages (docs/architecture.md s.3, search).

``GET /search?q=&type=&host=&from=&to=&after=`` — ``q`` in the search box's
language (``shared.search.query``); ``type`` one of news / article / product;
``host`` one site; ``from`` / ``to`` publication dates (``YYYY-MM-DD``,
inclusive); ``after`` the cursor of the previous page (``shared.search.request``:
pages stay stable while new pages are written). A filter that cannot be read is
said on the page and ignored, never an error. Titles and passages are shown with
the matched words marked, whole words only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, time, timedelta
from html import escape
from urllib.parse import urlencode

from cubes.frontend import templates
from shared.search.kinds import PageKind
from shared.search.request import Cursor, Hit, SearchFilters

__all__ = ["SearchParams", "results_page", "search_params"]

_CSS = (
    ".filters{display:flex;flex-wrap:wrap;gap:.5rem;margin:.25rem 0 1rem}"
    ".filters input,.filters select,.filters button{font:inherit;font-size:.9rem;padding:.35rem .6rem;"
    "border:1px solid rgba(127,127,127,.35);border-radius:.5rem;background:transparent;color:inherit}"
    ".filters input[name=host]{width:10rem}.note{opacity:.8;font-size:.9rem}"
    ".hit .kind{font-size:.8rem;opacity:.75}"
)
_TYPE_LABELS = {PageKind.news: "News", PageKind.article: "Articles", PageKind.product: "Products"}


class SearchParams:
    """What the request asked, read leniently: ``problems`` says what was ignored."""

    def __init__(self, query: str, filters: SearchFilters, cursor: Cursor | None, raw: dict[str, str]) -> None:
        self.query = query
        self.filters = filters
        self.cursor = cursor
        self.raw = raw
        self.problems: list[str] = []


def _day(value: str, *, end: bool) -> datetime:
    d = date.fromisoformat(value)
    start = datetime.combine(d, time(0), tzinfo=UTC)
    return start + timedelta(days=1) - timedelta(microseconds=1) if end else start


def search_params(query: Mapping[str, str], *, max_query: int) -> SearchParams:
    q = " ".join(query.get("q", "").split())[:max_query]
    raw = {k: query.get(k, "").strip() for k in ("type", "host", "from", "to")}
    problems: list[str] = []
    kind = None
    if raw["type"]:
        try:
            kind = PageKind(raw["type"])
        except ValueError:
            problems.append(f"unknown type {raw['type']!r} (news, article or product): ignored")
    since = until = None
    for key in ("from", "to"):
        if raw[key]:
            try:
                value = _day(raw[key], end=key == "to")
            except ValueError:
                problems.append(f"{key} date {raw[key]!r} is not YYYY-MM-DD: ignored")
                continue
            if key == "from":
                since = value
            else:
                until = value
    host = raw["host"].lower()[:253] or None
    cursor = None
    if after := query.get("after", ""):
        try:
            cursor = Cursor.decode(after)
        except ValueError:
            problems.append("the page link was not one of ours: showing the first page")
    params = SearchParams(q, SearchFilters(host=host, since=since, until=until, kind=kind), cursor, raw)
    params.problems = problems
    return params


def _filters_form(p: SearchParams) -> str:
    options = '<option value="">Any type</option>' + "".join(
        f'<option value="{k.value}"{" selected" if p.filters.kind is k else ""}>{label}</option>'
        for k, label in _TYPE_LABELS.items()
    )
    return (
        '<form class="filters" action="/search" method="get">'
        f'<input type="hidden" name="q" value="{escape(p.query)}">'
        f'<select name="type" aria-label="Type">{options}</select>'
        f'<input name="host" value="{escape(p.raw["host"])}" placeholder="site" aria-label="Site">'
        f'<input type="date" name="from" value="{escape(p.raw["from"])}" aria-label="From">'
        f'<input type="date" name="to" value="{escape(p.raw["to"])}" aria-label="To">'
        '<button type="submit">Filter</button></form>'
    )


def _hit(h: Hit) -> str:
    when = h.published_at or h.written_at
    label = _TYPE_LABELS.get(h.kind, "") if h.kind else ""
    kind = f'<span class="kind">{label}</span>' if label else ""
    return (
        '<li class="hit">'
        f'<div class="meta">{templates.BADGE}<span>{escape(h.host)}</span>{kind}{templates.when(when)}</div>'
        f'<h3><a href="{templates.turbo_link(h.url)}">{templates.marked(h.title)}</a></h3>'
        f"<p>{templates.marked(h.snippet)}</p></li>"
    )


def results_page(
    p: SearchParams, hits: Sequence[Hit], next_cursor: Cursor | None, suggestion: str | None = None
) -> str:
    if not p.query:
        body = '<section class="hero"><h1>Search <span>Turbo pages</span></h1>' + templates.search_form(
            "", autofocus=True
        )
        return templates.layout("Search · turbocubes", body + "</section>", header_search=False)
    notes = "".join(f'<p class="note" role="status">{escape(n)}</p>' for n in p.problems)
    if hits:
        found = f'<ul class="hits">{"".join(_hit(h) for h in hits)}</ul>'
    else:
        found = f'<p class="empty">Nothing matches <b>{escape(p.query)}</b> yet. Try fewer or different words.</p>'
    keep = {"q": p.query, **{k: v for k, v in p.raw.items() if v}}
    if suggestion:
        link = escape(urlencode({**keep, "q": suggestion}))
        found = f'<p class="suggestion">Did you mean <a href="/search?{link}">{escape(suggestion)}</a>?</p>' + found
    pager = []
    if p.cursor is not None:
        pager.append(f'<a href="/search?{escape(urlencode(keep))}">← First results</a>')
    if next_cursor is not None:
        pager.append(
            f'<a href="/search?{escape(urlencode({**keep, "after": next_cursor.encode()}))}">More results →</a>'
        )
    nav = f'<nav class="pager">{"".join(pager)}</nav>' if pager else ""
    # phones have no room for the header's search box: the results page repeats it
    body = (
        f"{templates.search_form(p.query, extra_class=' phone')}<h2>Results for “{escape(p.query)}”</h2>"
        f"{_filters_form(p)}{notes}{found}{nav}"
    )
    return templates.layout(f"{p.query} · turbocubes search", body, query=p.query, extra_css=_CSS)
