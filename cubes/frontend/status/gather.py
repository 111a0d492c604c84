"""Reading what the status views show, once per request (docs/architecture.md section 10).

Everything comes from the stores, so the views are true in any deployment:
the feed and delay stores, the page table (counts and ``seen_at`` ->
``written_at`` of the most recent pages), and the snapshots that processes
publish (``shared/status.py``): ``cube:`` (runner stats, lag, DLQ depth),
``lanes:`` (the crawler's lanes) and ``overload:`` (the overload watchers).

Two readings, for two audiences:

* ``gather_pipeline`` -- the public status page: pipeline-wide aggregates
  only (counts, freshness, lag, cube processes, dead letters). No host, feed
  URL or error of any tenant leaves this function.
* ``gather_host`` -- one host's feeds, pages, waiting documents and crawl
  lane, for the webmaster console (which checks the tenant owns the host).

A snapshot its process stopped rewriting is stale: its process crashed or
hangs, and it never counts towards lag. A process that stopped cleanly wrote
a last snapshot saying so (``shared.status.STOPPED``) and is not shown at all.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from shared.config import Settings
from shared.status import CUBE_PREFIX, LANES_PREFIX, OVERLOAD_PREFIX, is_fresh, is_stopped
from shared.stores import Feed, StatusSnapshot, Stores

__all__ = [
    "FRESHNESS_SAMPLE",
    "NEVER",
    "HostStatus",
    "PipelineStatus",
    "gather_host",
    "gather_pipeline",
    "lanes_by_host",
]

#: pages whose seen -> written time makes the freshness figures: the latest thousand writes
#: are minutes of a busy pipeline and days of a quiet one, either way "recent"
FRESHNESS_SAMPLE = 1000


#: the result of a feed not fetched yet, in ``PipelineStatus.results``
NEVER = "never fetched"


@dataclass
class PipelineStatus:
    """The public status page's data: aggregates over every tenant, nothing of any one of them."""

    now: float
    settings: Settings
    pages: int
    feeds: int
    hosts: int
    waiting: int
    freshness: list[float]
    #: feeds by the outcome of their last fetch or parse (``parsed``, ``partial``, ``http_4xx``...)
    results: dict[str, int]
    #: feeds whose last fetches failed (``consecutive_failures`` > 0)
    failing: int
    cubes: list[StatusSnapshot]
    overload: list[StatusSnapshot]
    lanes_total: int
    lanes_paused: int


@dataclass
class HostStatus:
    """One host as its webmaster sees it."""

    now: float
    settings: Settings
    host: str
    pages: int = 0
    waiting: int = 0
    feeds: list[Feed] = field(default_factory=list)
    lane: dict[str, Any] | None = None

    @property
    def failing(self) -> int:
        return sum(1 for f in self.feeds if f.status.consecutive_failures)


def lanes_by_host(snaps: list[StatusSnapshot], now: float, interval_s: float) -> tuple[dict[str, dict[str, Any]], int]:
    """The newest lane row per host over the fresh ``lanes:`` snapshots, and the lanes in memory."""
    rows: dict[str, dict[str, Any]] = {}
    total = 0
    for snap in sorted(snaps, key=lambda s: s.updated_at):  # newer snapshots overwrite older rows
        if not snap.name.startswith(LANES_PREFIX) or not is_fresh(snap, now, interval_s):
            continue
        total += int(snap.data.get("total") or 0)
        for lane in snap.data.get("lanes") or []:
            if isinstance(lane, dict) and lane.get("host"):
                rows[str(lane["host"])] = lane
    return rows, total


async def gather_pipeline(stores: Stores, settings: Settings, now: float) -> PipelineStatus:
    feeds = [f for f in await stores.feeds.list() if not f.deleted]
    waiting = await stores.delay.waiting_by_host()
    counts = await stores.status.page_counts()
    snaps = [s for s in await stores.status.get_status() if not is_stopped(s)]
    lanes, lanes_total = lanes_by_host(snaps, now, settings.runtime.status_interval_s)
    return PipelineStatus(
        now=now,
        settings=settings,
        pages=sum(counts.values()),
        feeds=len(feeds),
        hosts=len({f.host for f in feeds} | set(counts)),
        waiting=sum(waiting.values()),
        freshness=await stores.status.freshness(FRESHNESS_SAMPLE),
        results=dict(sorted(Counter(f.status.last_result or NEVER for f in feeds).items())),
        failing=sum(1 for f in feeds if f.status.consecutive_failures),
        cubes=[s for s in snaps if s.name.startswith(CUBE_PREFIX)],
        overload=[s for s in snaps if s.name.startswith(OVERLOAD_PREFIX)],
        lanes_total=lanes_total,
        lanes_paused=sum(1 for lane in lanes.values() if lane.get("paused_until")),
    )


async def gather_host(stores: Stores, settings: Settings, now: float, host: str, feeds: list[Feed]) -> HostStatus:
    """``host``'s figures; ``feeds`` are the caller's feeds of that host (the console reads them per tenant)."""
    counts = await stores.status.page_counts()
    waiting = await stores.delay.waiting_by_host()
    lanes, _ = lanes_by_host(await stores.status.get_status(LANES_PREFIX), now, settings.runtime.status_interval_s)
    return HostStatus(
        now=now,
        settings=settings,
        host=host,
        pages=counts.get(host, 0),
        waiting=waiting.get(host, 0),
        feeds=[f for f in feeds if f.host == host and not f.deleted],
        lane=lanes.get(host),
    )
