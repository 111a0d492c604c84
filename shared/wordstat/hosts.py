"""The searches that showed a host's pages, as its webmaster may see them (privacy: only searches many people made).

One rule for the API (``GET /api/v1/hosts/{host}/queries``) and the console's
host page: the period is the last ``months`` months, this one included; a
query is listed only when it showed the host's pages at least
``privacy_threshold`` times (a rarer one could point at one person), and the
ones left out are counted, never named. Who may ask — the tenant that owns the
verified host — is the caller's check (``cubes/api/auth.require_host``, the
console's claims).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from shared.stores.wordstat import WordstatStore, month_of
from shared.wordstat.frequency import months_back

__all__ = ["HOST_QUERIES", "HostQueries", "host_queries"]

#: queries of a host listed at most
HOST_QUERIES = 100


@dataclass(frozen=True, slots=True)
class HostQueries:
    host: str
    months: int
    threshold: int
    #: (query, how often it showed the host's pages), most often first; each at least ``threshold``
    shown: tuple[tuple[str, int], ...]
    #: queries that showed the host's pages fewer times than ``threshold`` (or past the list's end)
    hidden: int


async def host_queries(
    store: WordstatStore, host: str, *, now: datetime, months: int, threshold: int, limit: int = HOST_QUERIES
) -> HostQueries:
    last = month_of(now)
    rows = await store.host_queries(host, months_back(last, months - 1), last, limit=limit * 10)
    visible = [(q, n) for q, n in rows if n >= threshold]
    shown = tuple(visible[:limit])
    return HostQueries(host, months, threshold, shown, hidden=len(rows) - len(shown))
