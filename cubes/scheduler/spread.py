"""Feeds of one host are spread out instead of falling due together (DESIGN.md sections 3 and 6).

A partner with 40 feeds registered in one go would otherwise get 40 requests
at once every interval: the crawler's lane would keep it polite, but the
schedule itself should not produce bursts. So each feed's next due time is
moved (only ever later) until it is at least ``gap`` seconds away from every
other due time of its host.

``spread`` is a pure function. ``HostIndex`` remembers the due times per host
that this process has seen; it is a *cache* rebuilt from the feed store at
start (``next_fetch_at`` in the store stays the truth). ``crawl.feeds`` is
keyed by host, so all results of one host reach one scheduler instance and
its index of that host is complete.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["HostIndex", "effective_gap", "spread"]


def effective_gap(gap: float, interval: float, feeds_of_host: int) -> float:
    """``gap`` shrunk so that all feeds of a host still fit in one ``interval``."""
    if feeds_of_host <= 1:
        return gap
    return min(gap, interval / feeds_of_host)


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


class HostIndex:
    """host -> feed id -> next due time (epoch seconds), for the feeds this process schedules."""

    def __init__(self) -> None:
        self._hosts: dict[str, dict[str, float]] = {}
        self._host_of: dict[str, str] = {}

    def set(self, host: str, feed_id: str, due: float) -> None:
        old = self._host_of.get(feed_id)
        if old is not None and old != host:
            self.discard(feed_id)
        self._hosts.setdefault(host, {})[feed_id] = due
        self._host_of[feed_id] = host

    def discard(self, feed_id: str) -> None:
        host = self._host_of.pop(feed_id, None)
        if host is None:
            return
        feeds = self._hosts.get(host, {})
        feeds.pop(feed_id, None)
        if not feeds:
            self._hosts.pop(host, None)

    def others(self, host: str, feed_id: str) -> list[float]:
        """Due times of the host's other feeds."""
        return [due for fid, due in self._hosts.get(host, {}).items() if fid != feed_id]

    def count(self, host: str) -> int:
        return len(self._hosts.get(host, {}))
