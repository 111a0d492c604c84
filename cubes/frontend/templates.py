"""The frontend's own pages: home and errors, and the shape of a result (docs/architecture.md section 3, "frontend").

Each page is a template of ``html/`` rendered by ``jinja.py``'s environment, the one every page of
ours is made with (``shared/pages/templates.py``), which escapes every value: ``home.html``, ``error.html``,
``search.html`` (``search.py``), ``wordstat.html`` (``wordstat.py``); ``macros.html`` draws the
search box and a list of results, ``layout.html`` the frame. This module decides what they show.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlencode

from cubes.frontend.jinja import render
from shared.search.snippets import Snippet
from shared.stores import SearchHit

__all__ = ["HitView", "error_page", "home_page", "shorten"]


@dataclass(frozen=True, slots=True)
class HitView:
    """One result as ``macros.hit_list`` draws it: its title and passage marked where they matched.

    The link and the dates are strings made here: a template's attribute look-ups and filters
    cost several times what Python's do, and a page of results draws twenty of these.
    """

    link: str
    host: str
    title: Snippet | str
    passage: Snippet | str
    #: the time shown (published, else written): ISO 8601 and as people read it; "" for none
    iso: str
    shown: str
    kind: str | None = None

    @classmethod
    def of(
        cls, url: str, host: str, title: Snippet | str, passage: Snippet | str, when: datetime | None, kind: str | None
    ) -> HitView:
        iso = when.isoformat() if when is not None else ""
        shown = when.strftime("%d %b %Y, %H:%M") + " UTC" if when is not None else ""
        return cls("/turbo?" + urlencode({"url": url}), host, title, passage, iso, shown, kind)


def shorten(text: str, limit: int = 220) -> str:
    """``text`` cut at a word boundary near ``limit`` characters, with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(None, 1)[0].rstrip(",;:.-")
    return cut + "…"


def home_page(*, pages: int, feeds: int, parked: int, recent: Sequence[SearchHit]) -> str:
    latest = [
        HitView.of(h.url, h.host, h.title or h.url, shorten(h.snippet), h.published_at or h.written_at, None)
        for h in recent
    ]
    return render("home.html", title="turbocubes: Turbo pages", pages=pages, feeds=feeds, parked=parked, recent=latest)


def error_page(status: int, title: str, message: str, *, url: str | None = None) -> str:
    """An error page; ``url``, when it is a web address, is offered as the original page."""
    original = url if url and url.startswith(("http://", "https://")) else None
    return render(
        "error.html", title=f"{title} · turbocubes", status=status, heading=title, message=message, original=original
    )
