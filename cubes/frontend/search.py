"""The search page: results in Russian and English, filters and cursor pages (docs/architecture.md s.3, search).

``GET /search?q=&type=&host=&from=&to=&after=`` — ``q`` in the search box's
language (``shared.search.query``); ``type`` one of news / article / product;
``host`` one site; ``from`` / ``to`` publication dates (``YYYY-MM-DD``,
inclusive); ``after`` the cursor of the previous page (``shared.search.request``:
pages stay stable while new pages are written). A filter that cannot be read is
said on the page and ignored, never an error. Titles and passages are shown with
the matched words marked, whole words only. The page is ``html/search.html``.

The page is a template like every page of ours, though the f-strings with a hand ``escape()`` it
replaced cost less: a page of 20 results is ~0.3 ms of CPU more (``bench/frontend_pages.py
--against 8b97839``: 791 us against 495 us, 1.6x, at load 37), beside a search that costs
milliseconds; one way to make HTML, escaping every value by default, is worth it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, time, timedelta

from markupsafe import Markup

from cubes.frontend.jinja import render
from cubes.frontend.templates import HitView
from shared.search.kinds import PageKind
from shared.search.request import Cursor, Hit, SearchFilters

__all__ = ["SearchParams", "results_page", "search_params"]

_CSS = Markup(
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


def _view(h: Hit) -> HitView:
    kind = _TYPE_LABELS.get(h.kind) if h.kind else None
    return HitView.of(h.url, h.host, h.title, h.snippet, h.published_at or h.written_at, kind)


def results_page(
    p: SearchParams, hits: Sequence[Hit], next_cursor: Cursor | None, suggestion: str | None = None
) -> str:
    """The page of ``hits`` for the request ``p`` (``html/search.html``)."""
    if not p.query:
        return render("search.html", title="Search · turbocubes", query="")
    keep = {"q": p.query, **{k: v for k, v in p.raw.items() if v}}
    return render(
        "search.html",
        title=f"{p.query} · turbocubes search",
        header_search=p.query,
        query=p.query,
        extra_css=_CSS,
        types=[(k.value, label) for k, label in _TYPE_LABELS.items()],
        kind=p.filters.kind.value if p.filters.kind is not None else None,
        raw=p.raw,
        problems=p.problems,
        suggestion={"text": suggestion, "query": {**keep, "q": suggestion}} if suggestion else None,
        hits=[_view(h) for h in hits],
        first=keep if p.cursor is not None else None,
        more={**keep, "after": next_cursor.encode()} if next_cursor is not None else None,
    )
