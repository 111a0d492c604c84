"""A search request, its filters, its results and the cursor of the next page (docs/architecture.md s.3, search).

Pagination is by **cursor**, not offset, so it is stable under new writes: the
next page holds the results ranked after the last one shown, whatever was
written in between, and a page shown is never shown again because new pages
pushed it down. The cursor carries

* ``now``: the instant the first page was ranked at, so the freshness factor of
  every page is the same on every page of the walk;
* the last result's ``url`` and ``score``: the store ranks that URL again
  (its current score, since BM25 moves a little with every page written) and
  continues after it; the stored score is the fallback when that URL is gone.

A cursor is user input: ``Cursor.decode`` checks every field and raises
``ValueError`` on anything else.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from datetime import datetime

import orjson

from shared.clock import SystemClock
from shared.search.kinds import PageKind
from shared.search.query import SearchQuery
from shared.search.ranking import Ranking
from shared.search.snippets import Snippet

__all__ = ["MAX_LIMIT", "Cursor", "Hit", "SearchFilters", "SearchRequest", "SearchResults"]

#: results one request may ask for (a page of a result list, or an API call)
MAX_LIMIT = 100
#: a cursor longer than this is not one of ours
_MAX_CURSOR = 6000


@dataclass(frozen=True, slots=True)
class SearchFilters:
    """Narrowing of a search: one host, a publication-date range (inclusive), one type."""

    host: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    kind: PageKind | None = None


@dataclass(frozen=True, slots=True)
class Cursor:
    now_us: int
    score: float
    url: str

    def encode(self) -> str:
        raw = orjson.dumps({"n": self.now_us, "s": self.score, "u": self.url})
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    @classmethod
    def decode(cls, text: str) -> Cursor:
        if not text or len(text) > _MAX_CURSOR:
            raise ValueError("not a search cursor")
        try:
            data = orjson.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
        except (binascii.Error, orjson.JSONDecodeError, ValueError):
            raise ValueError("not a search cursor") from None
        if not isinstance(data, dict):
            raise ValueError("not a search cursor")
        now, score, url = data.get("n"), data.get("s"), data.get("u")
        if not isinstance(now, int) or isinstance(now, bool) or not isinstance(url, str) or not url:
            raise ValueError("not a search cursor")
        if not isinstance(score, (int, float)) or isinstance(score, bool):
            raise ValueError("not a search cursor")
        return cls(now_us=now, score=float(score), url=url)


@dataclass(frozen=True, slots=True)
class SearchRequest:
    query: SearchQuery
    filters: SearchFilters = field(default_factory=SearchFilters)
    limit: int = 20
    cursor: Cursor | None = None
    #: the ranking instant (freshness); a cursor's own instant wins, so a walk ranks at one time
    now: datetime = field(default_factory=lambda: SystemClock().now())
    ranking: Ranking = field(default_factory=Ranking)
    #: on a first page that finds nothing, look for a "did you mean" (``suggest.py``)
    suggest: bool = True

    @property
    def now_us(self) -> int:
        if self.cursor is not None:
            return self.cursor.now_us
        return int(self.now.timestamp() * 1_000_000)


@dataclass(frozen=True, slots=True)
class Hit:
    """One result: the page, its title and best passage with the matched words marked."""

    url: str
    host: str
    title: Snippet
    snippet: Snippet
    score: float
    kind: PageKind | None = None
    published_at: datetime | None = None
    written_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class SearchResults:
    hits: tuple[Hit, ...] = ()
    #: where the next page starts; None when this page is the last
    next_cursor: Cursor | None = None
    #: "did you mean": the query with its unknown words corrected, which finds something (``suggest.py``)
    suggestion: str | None = None
