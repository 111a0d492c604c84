"""The crawler's lanes reach the host view through the store (cubes/crawler/report.py -> cubes/frontend/status/).

The lanes live in the crawler process, the page in the frontend's: the crawler's
``status`` timer writes a snapshot, the frontend reads it. Both run here on one
ManualClock over one SQLite store, as two processes would.
"""

from __future__ import annotations

from pathlib import Path

from cubes.crawler.lanes import Lanes
from cubes.crawler.policy import Signal, SignalKind
from cubes.crawler.report import LaneReport
from cubes.frontend.status.gather import gather_host, gather_pipeline
from cubes.frontend.status.view import host_view
from shared.clock import ManualClock
from shared.config import CrawlerConfig, Settings
from shared.overload import PAGE_CRAWLS, Overload
from shared.runtime.cube import TimerContext
from shared.status import LANES_PREFIX, OVERLOAD_PREFIX
from shared.stores import open_stores

T0 = 1_800_000_000.0


async def test_lane_pauses_and_rates_reach_the_status_page(tmp_path: Path) -> None:
    clock = ManualClock(T0)
    settings = Settings()
    stores = await open_stores(f"sqlite:///{tmp_path}/store.db")
    try:
        lanes = Lanes(CrawlerConfig(rate=2.0, burst=1, concurrency=2), clock, seed=1)
        slow = lanes.get("slow.example")
        assert await slow.acquire(max_wait=0)
        slow.release(Signal(SignalKind.unavailable, latency_s=0.1, retry_after_s=120.0))  # 503, Retry-After: 120
        rude = lanes.get("rude.example")
        assert await rude.acquire(max_wait=0)
        rude.release(Signal(SignalKind.throttled, latency_s=0.1))  # 429 without Retry-After: our own back-off
        fine = lanes.get("fine.example")
        assert await fine.acquire(max_wait=0)  # one request in flight

        overload = Overload(settings, stores.status, clock, cube="crawler", yields=(PAGE_CRAWLS,), instance="c1")
        report = LaneReport(lanes, stores.status, clock, overload=overload, instance="c1")
        assert await report.tick(TimerContext("status")) == []

        (snap,) = await stores.status.get_status(LANES_PREFIX)
        assert snap.name == "lanes:c1"
        assert snap.data["total"] == 3
        assert snap.data["paused"] == 2
        rows = {r["host"]: r for r in snap.data["lanes"]}
        assert [r["host"] for r in snap.data["lanes"]][2] == "fine.example"  # paused lanes first
        assert rows["slow.example"]["paused_until"] == T0 + 120.0  # wall clock: readable by another process
        assert rows["slow.example"]["pause_reason"] == "Retry-After 120 s (unavailable)"
        assert rows["slow.example"]["rate"] == 1.0  # halved after the 503
        assert rows["rude.example"]["pause_reason"] == "back-off after 429 (incident 1)"
        assert rows["rude.example"]["backoff_incidents"] == 1
        assert rows["fine.example"]["in_flight"] == 1
        assert rows["fine.example"]["paused_until"] is None
        # the same timer refreshed the overload watcher (nothing reported: all work flows)
        (state,) = await stores.status.get_status(OVERLOAD_PREFIX)
        assert state.data["overloaded"] is False
        assert state.data["yields"] == [PAGE_CRAWLS]

        slow_view = host_view(await gather_host(stores, settings, clock.time(), "slow.example", []))
        assert slow_view.lane is not None
        assert (slow_view.lane.state, slow_view.lane.notes) == ("paused", ("Retry-After 120 s (unavailable)",))
        assert slow_view.lane.paused_until is not None
        assert slow_view.lane.paused_until.relative == "in 2 min"
        rude_view = host_view(await gather_host(stores, settings, clock.time(), "rude.example", []))
        assert rude_view.lane is not None
        assert rude_view.lane.notes == ("back-off after 429 (incident 1)", "429 back-offs in a row: 1")
        assert (rude_view.lane.rate, rude_view.lane.ceiling) == (1.0, 2.0)
        fine_view = host_view(await gather_host(stores, settings, clock.time(), "fine.example", []))
        assert fine_view.lane is not None
        assert (fine_view.lane.state, fine_view.lane.in_flight, fine_view.lane.concurrency) == ("fetching", 1, 2)
        assert (await gather_pipeline(stores, settings, clock.time())).lanes_paused == 2

        # the pause ends: the next snapshot says so
        clock.advance(121.0)
        await report.tick(TimerContext("status"))
        (snap,) = await stores.status.get_status(LANES_PREFIX)
        rows = {r["host"]: r for r in snap.data["lanes"]}
        assert rows["slow.example"]["paused_until"] is None
        assert rows["slow.example"]["pause_reason"] == ""
        # a crawler that stopped writing: its lanes leave the page after three intervals
        clock.advance(3 * settings.runtime.status_interval_s + 1)
        assert (await gather_host(stores, settings, clock.time(), "slow.example", [])).lane is None
        assert (await gather_pipeline(stores, settings, clock.time())).lanes_total == 0
    finally:
        await stores.close()
