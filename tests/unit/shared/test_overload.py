"""Graceful degradation under overload (shared/overload.py) with a ManualClock and a real SQLite store.

Lag snapshots are written into the store as each process's StatusWriter would;
the scheduler's tick and the crawler's hook are driven directly, no sleeps.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cubes.crawler.handler import CrawlHandler
from cubes.scheduler.handler import SchedulerHandler
from shared.clock import ManualClock
from shared.config import Settings
from shared.errors import ConfigError
from shared.http import Fetcher
from shared.messages import CrawlKind, CrawlRequest
from shared.overload import (
    DEFER_S,
    PAGE_CRAWLS,
    YML_REFETCHES,
    Deferred,
    Hysteresis,
    Overload,
    low_value,
)
from shared.runtime.cube import Context, Output
from shared.runtime.retry import Decision, decide
from shared.status import OVERLOAD_PREFIX, stamp
from shared.stores import Feed, Stores, open_stores
from tests.unit.cubes.scheduler.schedkit import Ticking

T0 = 1_800_000_000.0
SETTINGS = Settings().replace(
    scheduler={"jitter": 0.0},
    runtime={
        "overload_lag": 5000,
        "overload_resume_lag": 1000,
        "status_interval_s": 5.0,
        "overload_groups": ["parser", "media"],
    },
)


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[Stores]:
    s = await open_stores(f"sqlite:///{tmp_path}/store.db")
    yield s
    await s.close()


async def report_lag(stores: Stores, clock: ManualClock, **lags: int) -> None:
    """What each cube process's StatusWriter publishes: its group and its lag, stamped now."""
    for group, lag in lags.items():
        await stores.status.put_status(
            f"cube:{group}:h1:1", {"cube": group, "group": group, "lag": lag}, now=stamp(clock)
        )


class Collector:
    def __init__(self) -> None:
        self.outputs: list[Output] = []

    async def __call__(self, outputs: Sequence[Output]) -> None:
        self.outputs.extend(outputs)

    def take(self) -> list[str]:
        out = []
        for o in self.outputs:
            assert isinstance(o.message, CrawlRequest)
            out.append(o.message.feed_id or "")
        self.outputs.clear()
        return sorted(out)


def test_hysteresis_turns_on_at_high_and_off_under_low() -> None:
    g = Hysteresis(high=100, low=10)
    assert [g.update(v, float(t)) for t, v in enumerate([50, 99, 100, 60, 10, 9, 50, 100])] == [
        False,
        False,
        True,
        True,
        True,
        False,
        False,
        True,
    ]
    assert g.since == 7.0
    assert g.update(None, 8.0) is False  # nothing measured: fail open
    off = Hysteresis(high=0, low=0)
    assert off.update(10**9, 0.0) is False


def test_low_value_work() -> None:
    assert low_value(CrawlKind.page) == PAGE_CRAWLS
    assert low_value(CrawlKind.feed, fmt="yml") == YML_REFETCHES
    assert low_value(CrawlKind.feed, fmt="yml", first=True) is None  # a new catalog is fetched at once
    for fmt in ("rss", "turbo", "auto"):
        assert low_value(CrawlKind.feed, fmt=fmt) is None
    assert low_value(CrawlKind.image) is None
    assert low_value(CrawlKind.video) is None


def test_bad_thresholds_fail_at_start() -> None:
    with pytest.raises(ConfigError, match="overload_resume_lag"):
        SETTINGS.replace(runtime={"overload_lag": 100, "overload_resume_lag": 500})


async def test_scheduler_holds_yml_refetches_while_news_flows(stores: Stores) -> None:
    clock = ManualClock(T0)
    feeds = stores.feeds
    fetched = datetime.fromtimestamp(T0 - 3600, UTC)
    for feed_id, fmt, first in (
        ("news-rss", "rss", False),
        ("news-turbo", "turbo", False),
        ("shop-yml", "yml", False),
        ("new-yml", "yml", True),
    ):
        await feeds.upsert_feed(
            Feed(feed_id=feed_id, url=f"https://{feed_id}.example/feed", host=f"{feed_id}.example", format=fmt)
        )
        if not first:
            await feeds.update_schedule(feed_id, last_fetch_at=fetched, next_fetch_at=fetched)
    overload = Overload(SETTINGS, stores.status, clock, cube="scheduler", yields=(YML_REFETCHES,), instance="s1")
    publish = Collector()
    handler = Ticking(SchedulerHandler(SETTINGS, feeds, clock, overload=overload), publish)

    # the parser and media lag 4,000 + 2,000 records: over the 5,000 limit
    await report_lag(stores, clock, parser=4000, media=2000, crawler=10**6)
    assert await overload.refresh() is True
    await handler.tick()
    assert publish.take() == ["new-yml", "news-rss", "news-turbo"]
    held = await feeds.get("shop-yml")
    assert held is not None
    assert held.status.next_fetch_at is not None
    assert held.status.next_fetch_at.timestamp() == T0 + DEFER_S  # not lost: due again later

    (state,) = await stores.status.get_status(OVERLOAD_PREFIX)
    assert state.name == "overload:scheduler:s1"
    assert state.data["overloaded"] is True
    assert state.data["lag"] == 6000
    assert state.data["by_group"] == {"parser": 4000, "media": 2000}
    assert state.data["paused"] == [YML_REFETCHES]
    assert overload.deferred == {YML_REFETCHES: 1}

    # the lag falls, but not under the resume mark: YML still waits (hysteresis)
    clock.advance(DEFER_S)
    await report_lag(stores, clock, parser=2500, media=500)
    assert await overload.refresh() is True
    (state,) = await stores.status.get_status(OVERLOAD_PREFIX)
    assert state.data["deferred"] == {YML_REFETCHES: 1}  # what the status page shows as held back
    await handler.tick()
    assert "shop-yml" not in publish.take()

    # under the resume mark: it is fetched again, by itself
    clock.advance(DEFER_S)
    await report_lag(stores, clock, parser=600, media=300)
    assert await overload.refresh() is False
    await handler.tick()
    assert "shop-yml" in publish.take()
    (state,) = await stores.status.get_status(OVERLOAD_PREFIX)
    assert state.data["overloaded"] is False
    assert state.data["paused"] == []


async def test_stale_or_missing_lag_lets_everything_flow(stores: Stores) -> None:
    clock = ManualClock(T0)
    overload = Overload(SETTINGS, stores.status, clock, cube="crawler")
    assert await overload.refresh() is False  # nobody reported yet
    await report_lag(stores, clock, parser=9000)
    assert await overload.refresh() is True
    # the parser process stops reporting: after three intervals its lag no longer counts
    clock.advance(3 * 5.0 + 1)
    assert await overload.refresh() is False
    assert overload.lag is None


def _request(kind: CrawlKind, url: str) -> CrawlRequest:
    return CrawlRequest(
        kind=kind,
        url=url,
        host=url.split("/")[2],
        requesters=["autoparser:blog.example"],
        requested_at=datetime.fromtimestamp(T0, UTC),
    )


def _ctx(attempt: int) -> Context:
    return Context(
        topic="crawl.requests",
        partition=0,
        offset=0,
        key="blog.example",
        attempt=attempt,
        received_at=datetime.fromtimestamp(T0, UTC),
    )


async def test_crawler_defers_page_requests_and_resumes(stores: Stores) -> None:
    clock = ManualClock(T0)
    overload = Overload(SETTINGS, stores.status, clock, cube="crawler", yields=(PAGE_CRAWLS,))
    settings = SETTINGS
    handler = CrawlHandler(settings, Fetcher(settings, clock=clock), clock, overload=overload)
    page = _request(CrawlKind.page, "https://blog.example/2026/11/post")
    try:
        await report_lag(stores, clock, parser=7000)
        await overload.refresh()
        # deferred before anything is fetched: the runtime re-queues it on its delayed-retry topic
        with pytest.raises(Deferred, match="autoparser page crawling deferred: pipeline lag 7,000") as caught:
            await handler.handle(page, _ctx(attempt=1))
        d = decide(
            1,
            caught.value,
            max_attempts=settings.runtime.max_attempts,
            base_s=settings.runtime.backoff_base_s,
            cap_s=settings.runtime.backoff_cap_s,
        )
        assert d.decision is Decision.retry
        assert d.delay_s == min(DEFER_S, settings.runtime.backoff_cap_s)
        # news feeds and images are never held back
        overload.check(_request(CrawlKind.feed, "https://news.example/rss.xml"), 1)
        overload.check(_request(CrawlKind.image, "https://news.example/a.jpg"), 1)
        # the last attempt goes ahead: deferred, never dead-lettered
        overload.check(page, settings.runtime.max_attempts)
        with pytest.raises(Deferred):
            overload.check(page, settings.runtime.max_attempts - 1)
        assert overload.deferred == {PAGE_CRAWLS: 2}

        # the lag falls under the resume mark: pages flow again
        clock.advance(5.0)
        await report_lag(stores, clock, parser=10)
        assert await overload.refresh() is False
        overload.check(page, 1)
    finally:
        await handler.fetcher.close()
