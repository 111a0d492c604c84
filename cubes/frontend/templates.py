"""The frontend's own pages as small Python string templates (docs/architecture.md section 3, "frontend").

Every value that comes from data is escaped here with ``html.escape``; the
only raw HTML these functions insert is their own markup and the inline SVG.
The page frame is the Jinja2 template ``html/layout.html`` (``jinja.py``),
shared with the status page and the console.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from html import escape
from urllib.parse import urlencode

from markupsafe import Markup

from cubes.frontend.assets import ROCKET_SVG
from cubes.frontend.jinja import render
from shared.search.query import parse_query
from shared.search.snippets import Snippet, highlight
from shared.stores import SearchHit

__all__ = ["BADGE", "error_page", "home_page", "layout", "marked", "search_form", "turbo_link", "when"]

BADGE = f'<span class="badge" title="Turbo page">{ROCKET_SVG}Turbo</span>'


def turbo_link(url: str) -> str:
    """The frontend path of the Turbo page of ``url`` (already escaped for an attribute)."""
    return escape("/turbo?" + urlencode({"url": url}))


def when(ts: datetime | None) -> str:
    if ts is None:
        return ""
    return f'<time datetime="{ts.isoformat()}">{ts.strftime("%d %b %Y, %H:%M")} UTC</time>'


def search_form(query: str, *, autofocus: bool = False, extra_class: str = "") -> str:
    focus = " autofocus" if autofocus else ""
    return (
        f'<form class="search{extra_class}" action="/search" method="get" role="search">'
        f'<input type="search" name="q" value="{escape(query)}" placeholder="Search Turbo pages"'
        f' aria-label="Search Turbo pages"{focus}><button type="submit">Search</button></form>'
    )


def layout(title: str, body: str, *, query: str = "", header_search: bool = True, extra_css: str = "") -> str:
    """The page frame around ``body`` (HTML these functions built, every data value escaped already)."""
    search = search_form(query) if header_search else ""
    return render(
        "layout.html",
        title=title,
        body=Markup(body),  # noqa: S704 - built by this module, which escapes every value it inserts
        search=Markup(search),  # noqa: S704 - the same
        extra_css=Markup(extra_css),  # noqa: S704 - the caller's own stylesheet constant
    )


def marked(snippet: Snippet) -> str:
    """``snippet`` escaped, its matched words in ``<mark>`` (whole words only: ``shared.search.snippets``)."""
    return "".join(f"<mark>{escape(p)}</mark>" if m else escape(p) for p, m in snippet.parts())


def _highlight(text: str, query: str) -> str:
    """``text`` escaped, with the words that match the query's (in any form) in ``<mark>``."""
    return marked(highlight(text, parse_query(query).terms)) if query else escape(text)


def _shorten(text: str, limit: int = 220) -> str:
    """``text`` cut at a word boundary near ``limit`` characters, with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(None, 1)[0].rstrip(",;:.-")
    return cut + "…"


def _hits(hits: Sequence[SearchHit], query: str = "") -> str:
    items = []
    for h in hits:
        items.append(
            '<li class="hit">'
            f'<div class="meta">{BADGE}<span>{escape(h.host)}</span>{when(h.published_at or h.written_at)}</div>'
            f'<h3><a href="{turbo_link(h.url)}">{escape(h.title or h.url)}</a></h3>'
            f"<p>{_highlight(_shorten(h.snippet), query)}</p></li>"
        )
    return f'<ul class="hits">{"".join(items)}</ul>'


def home_page(*, pages: int, feeds: int, parked: int, recent: Sequence[SearchHit]) -> str:
    latest = (
        _hits(recent)
        if recent
        else '<p class="empty">No Turbo pages yet. Register a feed or push documents through the API,'
        " and they appear here within seconds.</p>"
    )
    body = (
        '<section class="hero"><h1>Fast pages, <span>instantly.</span></h1>'
        "<p>turbocubes turns partner feeds and documents into light Turbo pages: "
        "no scripts, no trackers, every image from our CDN.</p>"
        f"{search_form('', autofocus=True)}</section>"
        '<section class="stats">'
        f'<div class="stat"><b>{pages:,}</b><span>Turbo pages</span></div>'
        f'<div class="stat"><b>{feeds:,}</b><span>registered feeds</span></div>'
        f'<div class="stat"><b>{parked:,}</b><span>waiting for media</span></div></section>'
        f"<section><h2>Latest pages</h2>{latest}</section>"
    )
    return layout("turbocubes: Turbo pages", body, header_search=False)


def error_page(status: int, title: str, message: str, *, url: str | None = None) -> str:
    original = ""
    if url and url.startswith(("http://", "https://")):
        link = f'<a class="url" href="{escape(url)}" rel="noopener">{escape(url)}</a>'
        original = f"<p>The original is still there: {link}</p>"
    body = (
        f'<section class="hero err"><p class="big">{status}</p><h1>{escape(title)}</h1>'
        f"<p>{escape(message)}</p>{original}{search_form('')}"
        '<p><a href="/">← Back to the home page</a></p></section>'
    )
    return layout(f"{title} · turbocubes", body, header_search=False)
