"""The searches that showed an origin's pages, as its webmasters may see them (privacy: only searches many people made).

One rule for the API (``GET /api/v1/hosts/{host}/queries``) and the console's
host page: the period is the last ``months`` months, this one included; a
query is listed only when its impressions of the origin are published (each
month's a cell with its secret offset, like the searches': at least
``privacy_threshold`` of them, ``shared/wordstat/privacy.py``; a rarer
one could point at one person), the number shown rounded
(``frequency.rounded``). Rarer queries are in no number at all, not even a count
of them (which would grow by one when a webmaster searched a guessed query for the
first time); ``hidden`` counts the published ones past the list's end.

**Whose searches**: the pages shown are counted by their origin (scheme, host and
port: ``SearchQueryEvent.origins``), and a tenant asks for the origin of its right
on the host (the caller's check: ``cubes/api/auth.require_host``, the console's
claims). A right on ``http://shop.example:8080`` shows nothing of the searches
that showed ``https://shop.example``'s pages, which another party may hold (they
were counted per host, and a proof on another port of a host showed its owner's
searches). Several tenants that hold rights on one origin see the same searches:
they are the site's, as a search console shows a property's to each of its
verified owners.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from shared.stores.wordstat import WordstatStore, month_of
from shared.wordstat.frequency import months_back, rounded

__all__ = ["HOST_QUERIES", "HostQueries", "host_queries"]

#: queries of a host listed at most
HOST_QUERIES = 100


@dataclass(frozen=True, slots=True)
class HostQueries:
    #: the origin whose pages the searches showed
    origin: str
    months: int
    threshold: int
    #: (query, how often it showed the origin's pages, rounded), most often first; each at least ``threshold``
    shown: tuple[tuple[str, int], ...]
    #: queries published past the list's end (rarer ones are in no count)
    hidden: int


async def host_queries(
    store: WordstatStore, origin: str, *, now: datetime, months: int, threshold: int, limit: int = HOST_QUERIES
) -> HostQueries:
    last = month_of(now)
    rows = await store.host_queries(origin, months_back(last, months - 1), last, limit=limit * 10, threshold=threshold)
    visible = [(q, rounded(n, threshold)) for q, n in rows if n >= threshold]
    shown = tuple(visible[:limit])
    return HostQueries(origin, months, threshold, shown, hidden=len(visible) - len(shown))
