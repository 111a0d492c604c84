"""Feeds of one host are spread out instead of falling due together (docs/architecture.md sections 3 and 6).

A partner with 40 feeds registered in one go would otherwise get 40 requests
at once every interval: the crawler's lane would keep it polite, but the
schedule itself should not produce bursts. So each feed's next due time is
moved (only ever later) until it is at least ``gap`` seconds away from every
other due time of its host.

``spread`` is a pure function. ``HostSpread`` feeds it from the store, which
holds every schedule (``FeedStore.host_due_times``: the host's next few due
times from the candidate on, through the index on (host, next fetch)), so
the scheduler keeps nothing per feed in memory and any replica that owns
the host after a rebalance sees the same schedule. The cost of a placement
is one indexed read of at most ``LOOKAHEAD`` times, whatever the size of the
host; only the host's feed count is cached (``SIZE_TTL_S``).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable

from shared.clock import Clock, at
from shared.stores.feeds import FeedStore

__all__ = ["LOOKAHEAD", "SIZE_TTL_S", "HostSpread", "effective_gap", "spread"]

#: due times read past the candidate: a placement walks past at most this many neighbours. The
#: effective gap leaves a host's interval at least half free (``effective_gap``), so runs are short;
#: a placement that would need more lands after the last one read (the crawler's lane still keeps
#: the host's rate, so a rare clash costs a wait there, never a violation)
LOOKAHEAD = 32
#: a host's feed count is read again after this long (it only narrows the gap of big hosts)
SIZE_TTL_S = 600.0
#: hosts whose count is cached (~150 bytes each): the busiest ones of the last SIZE_TTL_S
_SIZES_MAX = 100_000


def effective_gap(gap: float, interval: float, feeds_of_host: int) -> float:
    """``gap`` shrunk so that all feeds of a host fit in half an ``interval``.

    Half, not all of it: a schedule packed full is one long run of neighbours ``gap`` apart, and
    every placement would walk it end to end; at most half full, runs stay short (``LOOKAHEAD``).
    """
    if feeds_of_host <= 1:
        return gap
    return min(gap, interval / (2 * feeds_of_host))


def spread(candidate: float, taken: Iterable[float], gap: float) -> float:
    """The earliest time ``>= candidate`` that is at least ``gap`` away from every time in ``taken``."""
    t = candidate
    if gap <= 0:
        return t
    for other in sorted(taken):
        if other <= t - gap:
            continue  # well before: no conflict
        if other >= t + gap:
            break  # sorted: every later one is also clear
        # too close: move just past it; earlier times stay clear because t only grows
        t = other + gap
    return t


class HostSpread:
    """Places a feed's next due time among its host's others, as the store holds them."""

    def __init__(self, feeds: FeedStore, clock: Clock, gap_s: float) -> None:
        self._feeds = feeds
        self._clock = clock
        self._gap_s = gap_s
        self._sizes: OrderedDict[str, tuple[int, float]] = OrderedDict()

    async def place(self, host: str, feed_id: str, candidate: float, interval: float) -> float:
        """The earliest time >= ``candidate`` that keeps the host's effective gap to its other feeds."""
        size = await self._size(host)
        gap = effective_gap(self._gap_s, interval, size)
        if size <= 1 or gap <= 0:
            return candidate
        after = at(candidate - gap)
        taken = await self._feeds.host_due_times(host, after, exclude=feed_id, limit=LOOKAHEAD)
        return spread(candidate, [t.timestamp() for t in taken], gap)

    async def _size(self, host: str) -> int:
        now = self._clock.monotonic()
        cached = self._sizes.get(host)
        if cached is not None and cached[1] > now:
            self._sizes.move_to_end(host)
            return cached[0]
        size = await self._feeds.host_size(host)
        self._sizes[host] = (size, now + SIZE_TTL_S)
        self._sizes.move_to_end(host)
        while len(self._sizes) > _SIZES_MAX:
            self._sizes.popitem(last=False)
        return size
