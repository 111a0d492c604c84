"""Per-host crawl metrics for Prometheus and the Grafana dashboard (docs/architecture.md sections 6 and 8).

* ``turbocubes_crawl_fetches_total{host,status}`` — one per finished crawl (every
  ``CrawlResult`` the crawler made, ``status`` = ``FetchStatus``: ok, throttled,
  robots_denied, http_5xx, ...; a coalesced request that shared another's fetch
  is not counted again);
* ``turbocubes_crawl_lane_rate{host}`` — the requests/s the host's lane allows
  now (the adaptive policy, slowed by Crawl-delay);
* ``turbocubes_crawl_lane_paused{host}`` — 1 while the lane is paused
  (Retry-After, 429 back-off), else 0.

**Hosts are label values.** That is fine at our scale (hundreds to a few
thousand partner hosts per crawler) but unbounded in principle, so both are
capped per process: the counter names at most ``MAX_HOSTS`` hosts (the first
seen; later ones count under ``host="_other"``), and the gauges are written by
the status timer (``refresh``) for at most ``MAX_GAUGE_HOSTS`` lanes — paused,
busy and slowed lanes first, then the most recently used (``report.py``'s
order) — and removed for lanes no longer shown, so an idle host's series
ends instead of lingering. Raise the caps only with Prometheus' memory in mind
(each host label costs about one series per status in the counter).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any

from prometheus_client import Counter, Gauge

from cubes.crawler.lanes import Lane
from shared.clock import Clock
from shared.messages import FetchStatus

__all__ = [
    "FETCHES",
    "LANE_PAUSED",
    "LANE_RATE",
    "MAX_GAUGE_HOSTS",
    "MAX_HOSTS",
    "OTHER_HOST",
    "CrawlMetrics",
    "lane_interest",
]

#: host label values of the fetch counter per process (the rest are ``OTHER_HOST``)
MAX_HOSTS = 2000
#: lanes exported as gauges per process per refresh
MAX_GAUGE_HOSTS = 300
OTHER_HOST = "_other"

FETCHES = Counter("turbocubes_crawl_fetches_total", "Finished crawls per host and outcome", ["host", "status"])
LANE_RATE = Gauge("turbocubes_crawl_lane_rate", "Requests/s the host's crawl lane allows now", ["host"])
LANE_PAUSED = Gauge("turbocubes_crawl_lane_paused", "1 while the host's crawl lane is paused", ["host"])


def lane_interest(lane: Lane, now: float) -> tuple[int, int, int, float]:
    """Sort key of the lanes worth showing: smaller first (the status page uses it too)."""
    # smaller sorts first: paused, then busy, then slowed below the ceiling, then recently used
    return (
        0 if lane.policy.paused_until > now else 1,
        0 if lane.in_flight else 1,
        0 if lane.rate < lane.limits.ceiling else 1,
        -(lane.last_start if lane.last_start is not None else float("-inf")),
    )


class CrawlMetrics:
    """The crawler's per-host metrics with bounded label sets (one per crawler process)."""

    def __init__(self, clock: Clock, *, max_hosts: int = MAX_HOSTS, max_gauge_hosts: int = MAX_GAUGE_HOSTS) -> None:
        self.clock = clock
        self.max_hosts = max_hosts
        self.max_gauge_hosts = max_gauge_hosts
        self._hosts: set[str] = set()
        self._gauged: set[str] = set()
        #: FETCHES children by (host as given, status): ``labels()`` costs ~10 us per call; the
        #: host labels are bounded (``host_label``), so is this (hosts past the bound share OTHER_HOST)
        self._fetch_counters: dict[tuple[str, FetchStatus], Any] = {}

    def host_label(self, host: str) -> str:
        host = host.lower()
        if host in self._hosts:
            return host
        if len(self._hosts) >= self.max_hosts:
            return OTHER_HOST
        self._hosts.add(host)
        return host

    def fetched(self, host: str, status: FetchStatus) -> None:
        counter = self._fetch_counters.get((host, status))
        if counter is None:
            counter = FETCHES.labels(self.host_label(host), status.value)
            if len(self._fetch_counters) < 4 * self.max_hosts:
                self._fetch_counters[(host, status)] = counter
        counter.inc()

    def refresh(self, lanes: Iterable[Lane]) -> None:
        """Write the lane gauges of the most interesting lanes; drop the series of the others."""
        now = self.clock.monotonic()
        chosen = sorted(lanes, key=lambda ln: lane_interest(ln, now))[: self.max_gauge_hosts]
        shown: set[str] = set()
        for lane in chosen:
            LANE_RATE.labels(lane.host).set(lane.rate)
            LANE_PAUSED.labels(lane.host).set(1 if lane.policy.paused_until > now else 0)
            shown.add(lane.host)
        for host in self._gauged - shown:
            for gauge in (LANE_RATE, LANE_PAUSED):
                with contextlib.suppress(KeyError):  # already gone (another CrawlMetrics in this process)
                    gauge.remove(host)
        self._gauged = shown
