"""Polls follow the origin: ttl, sy:update*, Cache-Control / Expires, skipHours / skipDays, each bounded."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cubes.scheduler.feedhead import read_head
from cubes.scheduler.handler import SchedulerHandler
from cubes.scheduler.origin import OriginSchedule, origin_schedule, skip_window
from cubes.scheduler.policy import follow_origin
from shared.clock import ManualClock
from shared.config import Settings
from shared.messages import CrawlKind, CrawlResult, FeedFormat, FeedRegistration, FetchStatus
from shared.runtime.cube import Context
from shared.stores import Stores, open_stores
from tests.unit.cubes.scheduler.schedkit import announce

SETTINGS = Settings().replace(scheduler={"jitter": 0.0, "host_gap_s": 10.0})
CFG = SETTINGS.scheduler
URL = "https://news.example/feed.xml"
#: 2023-11-14 22:13:20 UTC, a Tuesday
T0 = 1_700_000_000.0


def rss(channel: str, items: str = "<item><title>a</title><ttl>1</ttl></item>") -> bytes:
    return (
        '<?xml version="1.0"?><rss version="2.0" xmlns:sy="http://purl.org/rss/1.0/modules/syndication/">'
        f"<channel><title>t</title>{channel}{items}</channel></rss>"
    ).encode()


def schedule(body: bytes | None, headers: dict[str, str] | None = None) -> OriginSchedule:
    return origin_schedule(read_head(body) if body is not None else None, headers or {}, T0)


# ---------------------------------------------------------------------------------------------- reading


def test_ttl_is_minutes_and_only_the_channel_counts() -> None:
    got = schedule(rss("<ttl>60</ttl>"))
    assert (got.every_s, got.every_reason) == (3600.0, "the feed's ttl")
    # an item's <ttl> (after the first item) is not the channel's
    assert schedule(rss("")).every_s is None


def test_sy_update_period_and_frequency() -> None:
    assert (
        schedule(rss("<sy:updatePeriod>hourly</sy:updatePeriod><sy:updateFrequency>2</sy:updateFrequency>")).every_s
        == 1800.0
    )
    assert schedule(rss("<sy:updatePeriod>daily</sy:updatePeriod>")).every_s == 86_400.0
    # a frequency alone is per day (the module's default period)
    assert schedule(rss("<sy:updateFrequency>4</sy:updateFrequency>")).every_s == 21_600.0


def test_the_least_frequent_wish_wins() -> None:
    got = schedule(rss("<ttl>30</ttl><sy:updatePeriod>hourly</sy:updatePeriod>"))
    assert (got.every_s, got.every_reason) == (3600.0, "the feed's sy:updatePeriod")


@pytest.mark.parametrize(
    "channel",
    [
        "<ttl>1e2000000</ttl>",
        "<ttl>-5</ttl>",
        "<ttl>0</ttl>",
        "<ttl>" + "9" * 400 + "</ttl>",
        "<ttl>sixty</ttl>",
        "<sy:updatePeriod>fortnightly</sy:updatePeriod>",
        "<sy:updatePeriod>hourly</sy:updatePeriod><sy:updateFrequency>0</sy:updateFrequency>",
        "<sy:updatePeriod>hourly</sy:updatePeriod><sy:updateFrequency>99999999999999</sy:updateFrequency>",
    ],
)
def test_a_value_that_is_not_a_bounded_number_is_ignored(channel: str) -> None:
    assert schedule(rss(channel)).every_s is None


def test_an_entity_in_the_head_reads_nothing() -> None:
    body = b'<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY a "60">]><rss><channel><ttl>&a;</ttl></channel></rss>'
    assert schedule(body) == OriginSchedule()


def test_cache_control_and_expires() -> None:
    assert schedule(rss(""), {"cache-control": "public, max-age=900"}).fresh_s == 900.0
    # we are a shared cache: s-maxage first
    got = schedule(rss(""), {"cache-control": "max-age=60, s-maxage=1200"})
    assert (got.fresh_s, got.fresh_reason) == (1200.0, "the feed's Cache-Control s-maxage")
    assert schedule(rss(""), {"cache-control": "no-cache, max-age=900"}).fresh_s is None
    expires = "Tue, 14 Nov 2023 23:13:20 GMT"  # an hour after T0
    got = schedule(rss(""), {"expires": expires})
    assert (got.fresh_s, got.fresh_reason) == (3600.0, "the feed's Expires")
    # max-age overrides Expires, even when it says "stale now"
    assert schedule(rss(""), {"cache-control": "max-age=0", "expires": expires}).fresh_s is None
    for bad in ("0", "-1", "yesterday", "Tue, 14 Nov 1999 23:13:20 GMT", "x" * 500):
        assert schedule(rss(""), {"expires": bad}).fresh_s is None
    assert schedule(rss(""), {"cache-control": "max-age=" + "9" * 50}).fresh_s is None


def test_skip_hours_and_days_are_bounded() -> None:
    got = schedule(rss("<skipHours><hour>22</hour><hour>23</hour><hour>24</hour><hour>99</hour></skipHours>"))
    assert got.skip_hours == frozenset({22, 23, 0})
    got = schedule(rss("<skipDays><day>Saturday</day><day>sunday</day><day>Caturday</day></skipDays>"))
    assert got.skip_days == frozenset({5, 6})
    every_hour = "".join(f"<hour>{h}</hour>" for h in range(24))
    assert schedule(rss(f"<skipHours>{every_hour}</skipHours>")).skip_hours == frozenset()


def test_skip_window_moves_a_poll_to_the_next_allowed_hour() -> None:
    origin = OriginSchedule(skip_hours=frozenset({22, 23}))
    moved, reason = skip_window(T0, origin)  # 22:13 UTC
    assert datetime.fromtimestamp(moved, UTC) == datetime(2023, 11, 15, 0, 0, tzinfo=UTC)
    assert reason == "the feed's skipHours"
    assert skip_window(T0 + 2 * 3600, origin) == (T0 + 2 * 3600, None)  # 00:13: allowed
    weekend = OriginSchedule(skip_days=frozenset({1}))  # Tuesday
    moved, reason = skip_window(T0, weekend)
    assert datetime.fromtimestamp(moved, UTC) == datetime(2023, 11, 15, 0, 0, tzinfo=UTC)
    assert reason == "the feed's skipDays"


def test_follow_origin_keeps_the_schedulers_bounds_and_says_so() -> None:
    assert follow_origin(120.0, OriginSchedule(), 0.5, CFG) == (120.0, None)
    assert follow_origin(120.0, OriginSchedule(every_s=3600.0, every_reason="the feed's ttl"), 0.0, CFG) == (
        3600.0,
        "the feed's ttl",
    )
    assert follow_origin(120.0, OriginSchedule(every_s=10.0, every_reason="the feed's ttl"), 0.0, CFG) == (
        120.0,
        "the feed's ttl, raised to scheduler.min_interval_s",
    )
    assert follow_origin(120.0, OriginSchedule(every_s=1e9, every_reason="the feed's ttl"), 0.0, CFG) == (
        CFG.max_interval_s,
        "the feed's ttl, capped at scheduler.max_interval_s",
    )
    fresh = OriginSchedule(fresh_s=900.0, fresh_reason="the feed's Cache-Control max-age")
    assert follow_origin(120.0, fresh, 0.0, CFG) == (900.0, "the feed's Cache-Control max-age")
    assert follow_origin(1800.0, fresh, 0.0, CFG) == (1800.0, None)  # already later than it goes stale
    # jitter only ever lengthens what the origin asked for
    jittery = Settings().replace(scheduler={"jitter": 0.1}).scheduler
    for u in (0.0, 0.3, 0.99):
        delay, _ = follow_origin(120.0, OriginSchedule(every_s=3600.0, every_reason="ttl"), u, jittery)
        assert 3600.0 <= delay <= 3960.0


# ---------------------------------------------------------------------------------------------- the handler


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[Stores]:
    s = await open_stores(f"sqlite:///{tmp_path}/store.db")
    yield s
    await s.close()


def ctx() -> Context:
    return Context(topic="crawl.feeds", partition=0, offset=0, key=None, attempt=1, received_at=datetime.now(UTC))


def fetched(at: float, body: bytes | None, *, status: FetchStatus = FetchStatus.ok, **headers: str) -> CrawlResult:
    return CrawlResult(
        kind=CrawlKind.feed,
        url=URL,
        host="news.example",
        status=status,
        http_status={FetchStatus.ok: 200, FetchStatus.not_modified: 304}.get(status, 503),
        headers={k.replace("_", "-"): v for k, v in headers.items()},
        body=body,
        requesters=["feed:f1"],
        feed_id="f1",
        fetched_at=datetime.fromtimestamp(at, UTC),
    )


async def _handler(stores: Stores) -> SchedulerHandler:
    h = SchedulerHandler(SETTINGS, stores.feeds, ManualClock(start=T0), rng=random.Random(7))
    reg = FeedRegistration(
        action="upsert",
        feed_id="f1",
        url=URL,
        host="news.example",
        format=FeedFormat.rss,
        registered_at=datetime.now(UTC),
    )
    await announce(h, stores.feeds, reg)
    return h


async def _next(stores: Stores) -> tuple[float, str | None]:
    feed = await stores.feeds.get("f1")
    assert feed is not None
    assert feed.status.next_fetch_at is not None
    return feed.status.next_fetch_at.timestamp(), feed.status.schedule_reason


async def test_a_feed_with_ttl_60_is_polled_hourly(stores: Stores) -> None:
    h = await _handler(stores)
    body = rss("<ttl>60</ttl>")
    at = T0
    for n in range(4):
        # changed, then unchanged bodies, then a 304: the adaptive schedule would say 2, 3, 4.5 minutes
        answer = fetched(at, body if n < 3 else None, status=FetchStatus.ok if n < 3 else FetchStatus.not_modified)
        await h.handle(answer if n else fetched(at, rss("<ttl>60</ttl>", "<item><title>new</title></item>")), ctx())
        due, reason = await _next(stores)
        assert due == at + 3600.0, f"poll {n}"
        assert reason == "the feed's ttl"
        at = due
    # the ttl is gone from the feed: the adaptive schedule again
    await h.handle(fetched(at, rss("<title>x</title>")), ctx())
    due, reason = await _next(stores)
    assert reason is None
    assert due - at < 3600.0


async def test_a_failure_keeps_its_backoff_whatever_the_ttl(stores: Stores) -> None:
    h = await _handler(stores)
    await h.handle(fetched(T0, rss("<ttl>600</ttl>")), ctx())
    await h.handle(fetched(T0 + 36_000, None, status=FetchStatus.http_5xx), ctx())
    due, reason = await _next(stores)
    assert due == T0 + 36_000 + CFG.min_interval_s  # the first failure's backoff
    assert reason is None


async def test_cache_control_is_a_floor_and_skip_hours_move_the_poll(stores: Stores) -> None:
    h = await _handler(stores)
    await h.handle(fetched(T0, rss(""), cache_control="max-age=1800"), ctx())
    due, reason = await _next(stores)
    assert (due, reason) == (T0 + 1800.0, "the feed's Cache-Control max-age")
    skipping = rss("<ttl>10</ttl><skipHours><hour>22</hour><hour>23</hour></skipHours>")
    await h.handle(fetched(T0 + 1800.0, skipping), ctx())  # 22:43: +10 min is 22:53, skipped
    due, reason = await _next(stores)
    assert datetime.fromtimestamp(due, UTC) == datetime(2023, 11, 15, 0, 0, tzinfo=UTC)
    assert reason == "the feed's skipHours"
