"""The crawler's lanes as a status snapshot (docs/architecture.md section 6; read by the status page).

Lanes live in the crawler process (``lanes.py``), the status page in the
frontend's: every ``runtime.status_interval_s`` this report writes the lanes
worth showing to ``lanes:<instance>`` in the status store
(``shared/status.py``), which every process can read in any deployment. The
same timer refreshes the crawler's overload watcher
(``shared/overload.py``) and the per-host lane gauges (``metrics.py``).

Lane times are monotonic; the snapshot turns them into wall-clock times
(epoch seconds) so that another process can show them.
"""

from __future__ import annotations

from typing import Any

from cubes.crawler.lanes import Lane, Lanes
from cubes.crawler.metrics import CrawlMetrics, lane_interest
from shared.clock import Clock
from shared.overload import Overload
from shared.runtime.cube import Output, TimerContext
from shared.status import LANES_PREFIX, instance_id, stamp
from shared.stores import StatusStore

__all__ = ["MAX_LANES", "LaneReport", "lane_row"]

#: lanes per snapshot: the status page is for people, and a crawler may hold 50,000 idle lanes;
#: the paused, busy and slowed ones come first, then the most recently used
MAX_LANES = 300


def lane_row(lane: Lane, clock: Clock) -> dict[str, Any]:
    """One lane as JSON, its pause and next slot as wall-clock epoch seconds."""
    mono, wall = clock.monotonic(), clock.time()
    paused = lane.policy.paused_until > mono
    nxt = lane.next_allowed_at(mono)
    return {
        "host": lane.host,
        "rate": round(lane.rate, 4),
        "ceiling": round(lane.limits.ceiling, 4),
        "in_flight": lane.in_flight,
        "concurrency": lane.concurrency,
        "started": lane.started,
        "crawl_delay": lane.crawl_delay,
        "paused_until": wall + (lane.policy.paused_until - mono) if paused else None,
        "pause_reason": lane.pause_reason if paused else "",
        "backoff_incidents": lane.policy.incidents,
        "next_at": None if nxt == float("inf") else wall + max(0.0, nxt - mono),
        "last_start": None if lane.last_start is None else wall + (lane.last_start - mono),
    }


class LaneReport:
    """A ``Timer`` of the crawler cube: publish the lanes, refresh the overload watcher and the lane gauges."""

    def __init__(
        self,
        lanes: Lanes,
        store: StatusStore,
        clock: Clock,
        *,
        overload: Overload | None = None,
        instance: str | None = None,
        limit: int = MAX_LANES,
        metrics: CrawlMetrics | None = None,
    ) -> None:
        self.lanes = lanes
        self.metrics = metrics
        self.store = store
        self.clock = clock
        self.overload = overload
        self.instance = instance or instance_id()
        self.limit = limit

    def snapshot(self) -> dict[str, Any]:
        now = self.clock.monotonic()
        chosen = sorted(self.lanes, key=lambda ln: lane_interest(ln, now))[: self.limit]
        return {
            "instance": self.instance,
            "total": len(self.lanes),
            "paused": sum(1 for ln in self.lanes if ln.policy.paused_until > now),
            "lanes": [lane_row(ln, self.clock) for ln in chosen],
        }

    async def tick(self, ctx: TimerContext) -> list[Output]:
        if self.overload is not None:
            await self.overload.refresh()
        if self.metrics is not None:
            self.metrics.refresh(self.lanes)
        await self.store.put_status(f"{LANES_PREFIX}{self.instance}", self.snapshot(), now=stamp(self.clock))
        return []
