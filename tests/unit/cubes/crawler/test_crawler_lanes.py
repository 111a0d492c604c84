"""Crawl lanes on a ManualClock: spacing, bursts, the concurrency cap, pauses and Crawl-delay, exactly."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from cubes.crawler.lanes import Lanes
from cubes.crawler.policy import Signal, SignalKind
from shared.clock import ManualClock
from shared.config import CrawlerConfig


def lanes(clock: ManualClock, **kw: Any) -> Lanes:
    return Lanes(CrawlerConfig(**kw), clock, seed=1)


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_spacing_is_exact() -> None:
    clock = ManualClock(start=0.0)
    lane = lanes(clock, rate=2.0, burst=1, concurrency=4).get("a.test")
    starts = []

    async def one() -> None:
        assert await lane.acquire()
        starts.append(clock.monotonic())
        lane.release()  # answered at once

    tasks = [asyncio.create_task(one()) for _ in range(4)]
    for _ in range(8):
        await settle()
        clock.advance(0.25)
    await asyncio.gather(*tasks)
    assert starts == [0.0, 0.5, 1.0, 1.5]


async def test_spacing_counts_from_the_answer() -> None:
    clock = ManualClock(start=0.0)
    lane = lanes(clock, rate=1.0, burst=1, concurrency=1).get("a.test")
    assert await lane.acquire()
    clock.advance(0.7)  # the response took 0.7 s: the request may have arrived at 0.7
    lane.release()
    assert lane.next_allowed_at() == pytest.approx(1.7)


async def test_burst_then_rate() -> None:
    clock = ManualClock(start=0.0)
    lane = lanes(clock, rate=1.0, burst=3, concurrency=10).get("a.test")
    for _ in range(3):
        assert await lane.acquire(max_wait=0)
    assert lane.next_allowed_at() == float("inf")  # the window (3 per second) is full of requests in flight
    for _ in range(3):
        lane.release()
    assert not await lane.acquire(max_wait=0.5)  # the bucket is empty for another second
    assert lane.next_allowed_at() == 1.0
    assert lane.in_flight == 0


def test_try_start_grants_what_acquire_would_without_waiting() -> None:
    """The simulation in bench/scale.py drives lanes from a discrete-event loop: no task may wait."""
    clock = ManualClock(start=0.0)
    lane = lanes(clock, rate=1.0, burst=2, concurrency=1).get("a.test")
    assert lane.try_start()
    assert not lane.try_start()  # the concurrency cap: refused, nothing taken
    assert (lane.in_flight, lane.started) == (1, 1)
    lane.release()
    assert lane.try_start()  # the burst's second slot
    lane.release()
    assert not lane.try_start()  # the window is full until the rate frees a slot
    assert lane.next_allowed_at() == pytest.approx(1.0)
    clock.advance(1.0)
    assert lane.try_start()


async def test_window_counts_from_answers() -> None:
    clock = ManualClock(start=0.0)
    lane = lanes(clock, rate=4.0, burst=1, concurrency=10).get("a.test")
    for i in range(4):  # starts 0.25 s apart; every answer comes 0.125 s after its start
        assert await lane.acquire(max_wait=0)
        clock.advance(0.125)
        lane.release()
        if i < 3:  # the bucket decides while the window has room
            assert lane.next_allowed_at() == clock.monotonic() + 0.125
        clock.advance(0.125)
    # four answers at 0.125 .. 0.875: the fifth may start 1 s after the first *answer*, not at 1.0
    assert clock.monotonic() == 1.0
    assert lane.next_allowed_at() == 1.125


async def test_concurrency_cap() -> None:
    clock = ManualClock(start=0.0)
    lane = lanes(clock, rate=100.0, burst=10, concurrency=2).get("a.test")
    assert await lane.acquire()
    assert await lane.acquire()
    third = asyncio.create_task(lane.acquire())
    await settle()
    assert not third.done()
    lane.release()
    await settle()
    assert third.done()
    assert third.result() is True
    assert lane.in_flight == 2


async def test_pause_from_retry_after_blocks_the_whole_lane() -> None:
    clock = ManualClock(start=0.0)
    lane = lanes(clock, rate=10.0, burst=1, concurrency=2).get("a.test")
    assert await lane.acquire()
    lane.release(Signal(SignalKind.throttled, retry_after_s=3.0))
    assert lane.next_allowed_at() == 3.0
    assert not await lane.acquire(max_wait=2.9)  # refuses at once rather than waiting in vain
    waiter = asyncio.create_task(lane.acquire())
    clock.advance(2.99)
    await settle()
    assert not waiter.done()
    clock.advance(0.01)
    await settle()
    assert waiter.done()
    assert clock.monotonic() == 3.0


async def test_crawl_delay_spaces_requests_and_disables_bursts() -> None:
    clock = ManualClock(start=0.0)
    lane = lanes(clock, rate=10.0, burst=5, concurrency=5).get("a.test")
    lane.set_crawl_delay(2.0)  # robots.txt just answered: the delay counts from now
    assert lane.rate == 0.5
    assert lane.next_allowed_at() == 2.0
    clock.advance(2.0)
    assert await lane.acquire(max_wait=0)
    lane.release()
    assert not await lane.acquire(max_wait=1.9)  # no burst on top of a Crawl-delay
    assert lane.next_allowed_at() == 4.0


async def test_backoff_slows_the_lane_at_once() -> None:
    clock = ManualClock(start=0.0)
    lane = lanes(clock, rate=4.0, burst=1, concurrency=1).get("a.test")
    assert await lane.acquire(max_wait=0)
    assert lane.next_allowed_at() == 0.25
    lane.release(Signal(SignalKind.unavailable))
    assert lane.next_allowed_at() == 0.5  # the slot booked at 4/s is re-booked at 2/s
    for _ in range(2):
        lane.observe(Signal(SignalKind.unavailable))
    assert lane.rate == 0.5
    assert lane.interval == 2.0
    assert lane.next_allowed_at() == 2.0


def test_host_overrides_and_defaults() -> None:
    clock = ManualClock()
    ls = lanes(
        clock,
        rate=1.0,
        burst=2,
        concurrency=2,
        host_overrides={"big.test": {"rate": 5.0, "burst": 5, "concurrency": 4}, "*.cdn.test": {"rate": 3.0}},
    )
    big, other, cdn = ls.get("BIG.test"), ls.get("small.test"), ls.get("img.cdn.test")
    assert (big.limits.configured_rate, big.burst, big.concurrency) == (5.0, 5, 4)
    assert (other.limits.configured_rate, other.burst, other.concurrency) == (1.0, 2, 2)
    assert cdn.limits.configured_rate == 3.0
    assert ls.get("big.test") is big
    assert len(ls) == 3
    # what the runtime runs of one host at once (Cube.key_width): the cap its lane is made with
    assert [ls.concurrency_for(h) for h in ("Big.test", "small.test", "img.cdn.test", "new.test")] == [4, 2, 2, 2]
    assert len(ls) == 3  # asking makes no lane


async def test_status_and_idle_lane_eviction(monkeypatch: pytest.MonkeyPatch) -> None:
    import cubes.crawler.lanes as lanes_mod

    monkeypatch.setattr(lanes_mod, "MAX_IDLE_LANES", 3)
    clock = ManualClock(start=0.0)
    ls = lanes(clock, rate=1.0, burst=1, concurrency=1)
    busy = ls.get("busy.test")
    assert await busy.acquire(max_wait=0)
    for i in range(5):
        ls.get(f"h{i}.test")
    assert len(ls) == 3
    assert ls.get("busy.test") is busy  # a lane with a request in flight is never forgotten
    status = ls.status()
    assert [s["host"] for s in status["busy"]] == ["busy.test"]
    assert status["busy"][0]["in_flight"] == 1


async def test_a_new_lane_past_the_cap_looks_at_a_few_lanes_not_all(monkeypatch: pytest.MonkeyPatch) -> None:
    """At 100k hosts every new host past the cap copied and scanned every lane (bench/scale.py at 1M
    feeds spent its time there); lanes that must be kept are not looked at again and again."""
    import cubes.crawler.lanes as lanes_mod

    monkeypatch.setattr(lanes_mod, "MAX_IDLE_LANES", 100)
    looked = 0
    forgettable = lanes_mod.Lane.forgettable

    def counting(self: lanes_mod.Lane, now: float) -> bool:
        nonlocal looked
        looked += 1
        return forgettable(self, now)

    monkeypatch.setattr(lanes_mod.Lane, "forgettable", counting)
    clock = ManualClock(start=0.0)
    ls = lanes(clock, rate=1.0, burst=1, concurrency=1)
    busy = [ls.get(f"busy{i}.test") for i in range(100)]
    for lane in busy:
        assert lane.try_start()  # in flight: must be kept
    for i in range(1000):
        ls.get(f"h{i}.test")
    assert all(ls.peek(f"busy{i}.test") is busy[i] for i in range(100))  # none forgotten
    assert ls.peek("h999.test") is not None  # the lane just made for a request is kept
    assert len(ls) < 110  # the busy ones and a few idle ones: the cap holds within a few
    assert looked <= 20 * 1000  # at most a few per new lane, however many are busy (was: all ~100 each)


async def test_a_waiting_request_goes_before_one_that_asks_later() -> None:
    # two of a host's requests at once (Cube.key_width): the worker whose fetch had just ended asked
    # again with no suspension in between and took each new slot before the waiter woke, while the
    # other (a feed's poll, tests/integration/test_faults.py) waited behind dozens of images
    clock = ManualClock(start=0.0)
    lane = lanes(clock, rate=1.0, burst=2, concurrency=1).get("a.test")
    assert await lane.acquire()  # an image's request is in flight
    poll = asyncio.create_task(lane.acquire())
    await settle()
    assert not poll.done()  # the cap: it waits in line

    async def next_image() -> bool:
        lane.release()  # the image's answer, and at once (no suspension) its worker's next image
        return await lane.acquire()

    clock.advance(1.0)
    again = asyncio.create_task(next_image())
    await settle()
    assert poll.done()  # the one that waited goes first
    assert poll.result()
    assert not again.done()
    lane.release()
    for _ in range(4):
        clock.advance(0.5)
        await settle()
    assert again.done()
    assert again.result()


async def test_one_behind_in_line_still_gives_up_at_its_deadline() -> None:
    clock = ManualClock(start=0.0)
    lane = lanes(clock, rate=1.0, burst=1, concurrency=1).get("a.test")
    assert await lane.acquire()
    first = asyncio.create_task(lane.acquire(10.0))
    second = asyncio.create_task(lane.acquire(2.0))
    await settle()
    clock.advance(2.5)
    await settle()
    assert second.done()  # behind the first, past its own bound
    assert second.result() is False
    assert not first.done()
    lane.release()
    clock.advance(1.0)  # a window after the answer
    await settle()
    assert first.done()
    assert first.result()
    assert lane.in_flight == 1  # the one that gave up took nothing


def test_a_requests_class_in_its_hosts_lane_is_its_kind() -> None:
    # Cube.key_class of the crawler: read from the raw record, before the runner validates it
    from datetime import UTC, datetime

    from cubes.crawler.cube import request_kind
    from shared.bus.base import Record
    from shared.messages import CrawlKind, CrawlRequest

    req = CrawlRequest(kind=CrawlKind.feed, url="https://a.test/f.xml", host="a.test", requested_at=datetime.now(UTC))
    assert request_kind(Record("crawl.requests", 0, 0, b"a.test", req.model_dump_json().encode())) == "feed"
    for bad in (b"not json", b"[1]", b'{"kind": 3}', b"{}"):
        assert request_kind(Record("crawl.requests", 0, 1, b"a.test", bad)) is None
