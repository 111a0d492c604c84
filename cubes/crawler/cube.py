"""The crawler cube: crawl.requests -> crawl.feeds / crawl.images / crawl.pages (docs/architecture.md sections 3, 6).

``crawl.requests`` is keyed by host, so one host's lane lives in exactly one
crawler instance and scaling out needs no lock; what a lane must not forget
(a pause, the adapted rate, robots.txt) is in the lane store, so the next
owner of a host after a rebalance or a restart carries on (``memory.py``). The runtime runs
``crawler.parallel_hosts`` key-lanes at once: a handler waiting for its
host's next token holds only its own key-lane, while the other hosts proceed.
A ``status`` timer publishes the lanes for the status page and refreshes the
overload watcher, under which page requests are deferred (``report.py``).
"""

from __future__ import annotations

import json
from dataclasses import replace

from cubes.crawler.handler import CrawlHandler
from cubes.crawler.metrics import CrawlMetrics
from cubes.crawler.report import LaneReport
from shared.bus.base import Consumed
from shared.config import Settings
from shared.http import Fetcher
from shared.overload import PAGE_CRAWLS, Overload
from shared.runtime.cube import Cube, Output, Timer, TimerContext
from shared.runtime.deps import Deps

__all__ = ["BUDGET_SHARE", "build", "request_kind"]

#: share of ``runtime.handler_timeout_s`` one crawl request may spend waiting and fetching
BUDGET_SHARE = 0.8


def request_kind(record: Consumed) -> str | None:
    """The kind of a crawl request as read from the bus (its lane's class, ``Cube.key_class``).

    Read before the runner validates the record: one that is not JSON, or names no kind, is of
    no kind (it takes its turn like the others and is dead-lettered when it is handled).
    """
    try:
        kind = json.loads(record.value).get("kind")
    except (ValueError, TypeError, AttributeError):
        return None
    return kind if isinstance(kind, str) else None


CUBE = Cube(
    name="crawler",
    inputs=("crawl.requests",),
    outputs=("crawl.feeds", "crawl.images", "crawl.pages"),
    replicable=True,  # crawl.requests is keyed by host: each host's lane lives in one replica
)


async def build(settings: Settings, deps: Deps) -> Cube:
    fetcher = Fetcher(settings, resolver=deps.resolver, clock=deps.clock)
    # a request ends as a result (timeout / throttled) before the runtime's handler timeout
    # would cut it off and retry it; the rest is left for the blob upload
    budget = BUDGET_SHARE * settings.runtime.handler_timeout_s
    stores = await deps.stores()
    statuses = stores.status
    overload = Overload(settings, statuses, deps.clock, cube="crawler", yields=(PAGE_CRAWLS,))
    metrics = CrawlMetrics(deps.clock)
    handler = CrawlHandler(
        settings,
        fetcher,
        deps.clock,
        blobs=deps.blobs,
        budget_s=budget,
        overload=overload,
        metrics=metrics,
        lane_store=stores.lanes,  # what a lane must not forget, for the next owner of the host
    )

    async def save_lanes(ctx: TimerContext) -> list[Output]:
        await handler.memory.flush()
        return []

    async def stop() -> None:
        await handler.memory.flush()
        await fetcher.close()

    # publishes the lanes for the status page, refreshes the overload watcher and the per-host lane gauges
    report = LaneReport(handler.lanes, statuses, deps.clock, overload=overload, metrics=metrics)
    return replace(
        CUBE,
        handler=handler.handle,
        concurrency=settings.crawler.parallel_hosts,
        lanes="per_key",  # one lane per host: a host waiting for its politeness never holds up another
        # as many of a host's requests at once as its lane allows (a host's requests need no order;
        # one at a time, a feed's 100 new items queued their 200 images behind each other) ...
        key_width=lambda key: handler.lanes.concurrency_for(key.decode("utf-8", "replace") if key else ""),
        # ... and its kinds of request in turn: in one queue, a feed's next poll waited behind all
        # 400 images of its last edition (tests/integration/test_faults.py, shared/runtime/rotation.py)
        key_class=request_kind,
        timers=(
            Timer("status", settings.runtime.status_interval_s, report.tick),
            Timer("lane-memory", settings.runtime.status_interval_s, save_lanes),
        ),
        on_stop=stop,
        status=handler.lanes.status,
    )
