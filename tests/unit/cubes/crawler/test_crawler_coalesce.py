"""Fetch once, distribute to all."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from cubes.crawler.coalesce import Coalescer, Share
from shared.clock import ManualClock
from shared.messages import CrawlKind, CrawlResult, FetchStatus


def _served(share: Share) -> CrawlResult:
    """The result a share of a fetch carries (every share of a finished fetch has one)."""
    assert share.result is not None
    return share.result


def result(status: FetchStatus = FetchStatus.ok) -> CrawlResult:
    return CrawlResult(
        kind=CrawlKind.feed, url="http://a.test/f", host="a.test", status=status, fetched_at=datetime.now(UTC)
    )


async def test_in_flight_requests_share_one_fetch() -> None:
    clock = ManualClock()
    co = Coalescer(clock, 60.0)
    gate = asyncio.Event()
    calls = 0

    async def fetch() -> CrawlResult:
        nonlocal calls
        calls += 1
        await gate.wait()
        return result()

    key = ("feed", "http://a.test/f", "", "")
    tasks = [asyncio.create_task(co.run(key, [f"r{i}"], fetch)) for i in range(3)]
    for _ in range(3):
        await asyncio.sleep(0)
    gate.set()
    shares = await asyncio.gather(*tasks)
    assert calls == 1
    leaders = [s for s in shares if s.leader]
    assert len(leaders) == 1
    assert _served(leaders[0]).requesters == ["r0", "r1", "r2"]
    assert [s.result for s in shares if not s.leader] == [None, None]


async def test_fresh_result_serves_new_requesters_only_once() -> None:
    clock = ManualClock()
    co = Coalescer(clock, 60.0)
    calls = 0

    async def fetch() -> CrawlResult:
        nonlocal calls
        calls += 1
        return result()

    key = ("feed", "u", "", "")
    first = await co.run(key, ["feed:1"], fetch)
    assert _served(first).requesters == ["feed:1"]
    other = await co.run(key, ["media:x", "feed:1"], fetch)
    assert _served(other).requesters == ["media:x"]  # a new asker shares the fresh result
    assert calls == 1
    clock.advance(60.0)
    await co.run(key, ["feed:1"], fetch)
    assert calls == 2  # the freshness window is over


async def test_an_asker_already_served_who_asks_again_gets_a_new_fetch() -> None:
    """A WebSub push or an operator's nudge re-asks on purpose: a remembered result would drop it."""
    co = Coalescer(ManualClock(), 60.0)
    calls = 0

    async def fetch() -> CrawlResult:
        nonlocal calls
        calls += 1
        return result()

    await co.run(("k",), ["feed:1"], fetch)
    again = await co.run(("k",), ["feed:1"], fetch)
    assert again.result is not None
    assert _served(again).requesters == ["feed:1"]
    assert calls == 2


@pytest.mark.parametrize(
    "status",
    [
        FetchStatus.throttled,
        FetchStatus.http_5xx,
        FetchStatus.timeout,
        FetchStatus.connect_error,
        FetchStatus.dns_error,
    ],
)
async def test_passing_failures_are_not_remembered_so_a_retry_reaches_the_partner(status: FetchStatus) -> None:
    co = Coalescer(ManualClock(), 60.0)
    calls = 0

    async def fetch() -> CrawlResult:
        nonlocal calls
        calls += 1
        return result(status)

    await co.run(("k",), ["media:a"], fetch)
    assert len(co) == 0
    await co.run(("k",), ["cdn:retry:1", "media:a"], fetch)
    assert calls == 2  # the re-order after a 503 asked the partner again


async def test_a_404_is_remembered() -> None:
    co = Coalescer(ManualClock(), 60.0)

    async def fetch() -> CrawlResult:
        return result(FetchStatus.http_4xx)

    await co.run(("k",), ["a"], fetch)
    assert len(co) == 1


async def test_a_cancelled_leader_hands_over_to_a_joiner() -> None:
    co = Coalescer(ManualClock(), 60.0)
    gate = asyncio.Event()
    calls = 0

    async def fetch() -> CrawlResult:
        nonlocal calls
        calls += 1
        if calls == 1:
            await gate.wait()  # the leader hangs until cancelled
        return result()

    key = ("k",)
    leader = asyncio.create_task(co.run(key, ["a"], fetch))
    await asyncio.sleep(0)
    joiner = asyncio.create_task(co.run(key, ["b"], fetch))
    await asyncio.sleep(0)
    leader.cancel()
    share = await asyncio.wait_for(joiner, 5)
    assert share.leader
    assert _served(share).requesters == ["b"]
    assert calls == 2


async def test_a_failing_fetch_fails_every_joiner() -> None:
    co = Coalescer(ManualClock(), 60.0)
    gate = asyncio.Event()

    async def fetch() -> CrawlResult:
        await gate.wait()
        raise RuntimeError("blob store down")

    tasks = [asyncio.create_task(co.run(("k",), [str(i)], fetch)) for i in range(2)]
    await asyncio.sleep(0)
    gate.set()
    outcomes = await asyncio.gather(*tasks, return_exceptions=True)
    assert [type(o) for o in outcomes] == [RuntimeError, RuntimeError]


async def test_the_same_scheduled_poll_emitted_twice_is_fetched_once() -> None:
    """A scheduler replica that takes over a partition re-emits the polls its predecessor published
    but did not record; naming the same slot, they cost the partner nothing."""
    co = Coalescer(ManualClock(), 60.0)
    calls = 0

    async def fetch() -> CrawlResult:
        nonlocal calls
        calls += 1
        return result()

    key = ("feed", "u", "", "")
    slot = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    first = await co.run(key, ["feed:1"], fetch, due_at=slot)
    assert first.result is not None
    again = await co.run(key, ["feed:1"], fetch, due_at=slot)
    assert (again.result, calls) == (None, 1)  # served: nothing fetched, nothing published twice
    await co.run(key, ["feed:1"], fetch, due_at=datetime(2024, 5, 1, 12, 15, tzinfo=UTC))
    assert calls == 2  # the next poll is a new fetch
    await co.run(key, ["feed:1"], fetch)
    assert calls == 3  # and an unscheduled ask (a push, "fetch now") always is


async def test_a_scheduled_poll_joining_a_flight_counts_as_served() -> None:
    co = Coalescer(ManualClock(), 60.0)
    gate = asyncio.Event()
    calls = 0

    async def fetch() -> CrawlResult:
        nonlocal calls
        calls += 1
        await gate.wait()
        return result()

    key = ("feed", "u", "", "")
    slot = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    leader = asyncio.create_task(co.run(key, ["feed:1"], fetch, due_at=slot))
    await asyncio.sleep(0)
    joiner = asyncio.create_task(co.run(key, ["feed:1"], fetch, due_at=slot))
    await asyncio.sleep(0)
    gate.set()
    await asyncio.gather(leader, joiner)
    later = await co.run(key, ["feed:1"], fetch, due_at=slot)
    assert (later.result, calls) == (None, 1)


async def test_a_fetch_now_order_is_never_answered_from_a_remembered_result() -> None:
    """A webmaster fixes the feed and presses "fetch now": they must see the fix, not the body
    fetched a minute ago (the order is a new requester, which the freshness window would answer)."""
    co = Coalescer(ManualClock(), 60.0)
    calls = 0

    async def fetch() -> CrawlResult:
        nonlocal calls
        calls += 1
        return result()

    key = ("feed", "u", "", "")
    await co.run(key, ["feed:1"], fetch)
    now = await co.run(key, ["feed:1", "fetch:order-7"], fetch)
    assert calls == 2
    assert now.leader
    assert _served(now).requesters == ["feed:1", "fetch:order-7"]
