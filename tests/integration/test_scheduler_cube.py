"""The scheduler cube on the real runtime and the embedded engines (SQLite bus and store).

Registration on ``feeds.registry`` -> the tick emits one ``crawl.requests`` ->
a result on ``crawl.feeds`` is learned -> the next request is conditional;
then a restart (new process objects over the same files) carries on from the
store. Time is a ManualClock: the tick runs when the test advances it, and the
test waits on events (never on sleeps).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cubes.scheduler.cube import build
from shared.clock import ManualClock
from shared.config import Settings
from shared.messages import CrawlKind, CrawlRequest, CrawlResult, FeedFormat, FeedRegistration, FetchStatus
from shared.runtime import Runner, ensure_topics, open_deps
from shared.runtime.cube import Cube, Output, Timer, TimerContext
from shared.runtime.deps import Deps
from shared.stores import Feed

WAIT_S = 10.0
URL = "https://news.example/feed.xml"


class Probe:
    """Wraps a built cube so the test can wait for: a handled message, a finished tick and its published requests."""

    def __init__(self) -> None:
        self.handled: asyncio.Queue[Any] = asyncio.Queue()
        self.ticks: asyncio.Queue[None] = asyncio.Queue()
        self.requests: list[CrawlRequest] = []

    def wrap_cube(self, cube: Cube) -> Cube:
        handle = cube.handler
        assert handle is not None
        [timer] = [t for t in cube.timers if t.name == "tick"]
        others = tuple(t for t in cube.timers if t.name != "tick")

        async def handled(msg: Any, ctx: Any) -> Any:
            out = await handle(msg, ctx)
            self.handled.put_nowait(msg)
            return out

        async def ticked(ctx: TimerContext) -> Sequence[Output]:
            inner = ctx.emitter
            assert inner is not None

            async def emit(outputs: Sequence[Output]) -> int:  # what the tick emits: recorded once durable
                n = await inner(outputs)
                self.requests.extend(o.message for o in outputs if isinstance(o.message, CrawlRequest))
                return n

            ctx.emitter = emit
            out = await timer.fn(ctx)

            async def published() -> None:  # the tick's round is over: what it returned is durable too
                self.requests.extend(o.message for o in out if isinstance(o.message, CrawlRequest))
                self.ticks.put_nowait(None)

            ctx.after_commit(published)
            return out

        return dataclasses.replace(cube, handler=handled, timers=(Timer(timer.name, timer.interval_s, ticked), *others))


async def _start(settings: Settings, clock: ManualClock) -> tuple[Deps, Runner, asyncio.Task[Any], Probe]:
    deps = await open_deps(settings, clock=clock)
    await ensure_topics(deps, ["scheduler"])
    probe = Probe()
    cube = probe.wrap_cube(await build(settings, deps))
    runner = Runner(cube, deps, group="scheduler-test")
    task = asyncio.create_task(runner.run())
    await asyncio.wait_for(probe.ticks.get(), WAIT_S)  # the first tick runs at start
    return deps, runner, task, probe


async def _stop(deps: Deps, runner: Runner, task: asyncio.Task[Any]) -> None:
    runner.stop()
    await asyncio.wait_for(task, WAIT_S)
    await deps.close()


async def _tick(clock: ManualClock, probe: Probe, settings: Settings, seconds: float | None = None) -> None:
    clock.advance(settings.scheduler.tick_s if seconds is None else seconds)
    await asyncio.wait_for(probe.ticks.get(), WAIT_S)


async def test_registered_feed_is_fetched_on_schedule_once_and_survives_restart(tmp_path: Path) -> None:
    settings = Settings().replace(
        bus={"url": f"sqlite:///{tmp_path}/bus.db"},
        store={"url": f"sqlite:///{tmp_path}/store.db"},
        scheduler={"jitter": 0.0},
        runtime={"metrics_port": 0},
    )
    clock = ManualClock(start=time.time())
    deps, runner, task, probe = await _start(settings, clock)
    try:
        reg = FeedRegistration(
            feed_id="f1", url=URL, host="news.example", format=FeedFormat.rss, registered_at=datetime.now(UTC)
        )
        # what the registration service (shared.webmaster.feeds) does: the row, then its announcement
        await (await deps.stores()).feeds.upsert_feed(Feed(feed_id="f1", url=URL, host="news.example", format="rss"))
        await deps.publish([Output("feeds.registry", reg)])
        assert await asyncio.wait_for(probe.handled.get(), WAIT_S) == reg

        await _tick(clock, probe, settings)
        [first] = probe.requests
        assert (first.kind, first.url, first.feed_id, first.priority) == (CrawlKind.feed, URL, "f1", 0)
        await _tick(clock, probe, settings)
        await _tick(clock, probe, settings)
        assert len(probe.requests) == 1  # emitted once, however many ticks

        fetched = clock.time()
        result = CrawlResult(
            kind=CrawlKind.feed,
            url=URL,
            host="news.example",
            status=FetchStatus.ok,
            http_status=200,
            headers={"etag": '"v1"'},
            body=b"<rss><channel><title>t</title></channel></rss>",
            requesters=["feed:f1"],
            feed_id="f1",
            fetched_at=datetime.fromtimestamp(fetched, UTC),
        )
        await deps.publish([Output("crawl.feeds", result)])
        await asyncio.wait_for(probe.handled.get(), WAIT_S)
        feed = await (await deps.stores()).feeds.get("f1")
        assert feed is not None
        assert feed.status.etag == '"v1"'
        assert feed.status.next_fetch_at == datetime.fromtimestamp(fetched + 120.0, UTC)
    finally:
        await _stop(deps, runner, task)

    # a restart: new engines, new cube, same files; the schedule carries on from the store
    deps, runner, task, probe = await _start(settings, clock)
    try:
        assert probe.requests == []  # not due yet
        await _tick(clock, probe, settings, fetched + 121.0 - clock.time())
        [again] = probe.requests
        assert (again.feed_id, again.etag, again.priority) == ("f1", '"v1"', 5)
    finally:
        await _stop(deps, runner, task)
