"""Feeds of one host are spread out: due times keep a gap."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cubes.scheduler.spread import LOOKAHEAD, HostSpread, effective_gap, spread
from shared.clock import ManualClock
from shared.stores import Feed, FeedStore, Stores, open_stores


@pytest.mark.parametrize(
    ("candidate", "taken", "gap", "expected"),
    [
        (100.0, [], 10.0, 100.0),
        (100.0, [50.0, 200.0], 10.0, 100.0),  # far from both: unchanged
        (100.0, [95.0], 10.0, 105.0),  # too close after another: moved past it
        (100.0, [100.0], 10.0, 110.0),  # the same time: moved one gap on
        (100.0, [105.0], 10.0, 115.0),  # too close before another: moved past it (only later, never earlier)
        (100.0, [100.0, 110.0, 120.0], 10.0, 130.0),  # a run of neighbours
        (100.0, [100.0, 125.0], 10.0, 110.0),  # fits in the hole between them
        (100.0, [100.0], 0.0, 100.0),  # no gap asked
    ],
)
def test_spread_table(candidate: float, taken: list[float], gap: float, expected: float) -> None:
    assert spread(candidate, taken, gap) == pytest.approx(expected)


def test_spread_keeps_the_gap_for_many_feeds_falling_due_together() -> None:
    placed: list[float] = []
    for _ in range(40):
        placed.append(spread(1000.0, placed, 10.0))
    placed.sort()
    gaps = [b - a for a, b in itertools.pairwise(placed)]
    assert min(gaps) >= 10.0 - 1e-9
    assert placed[0] == 1000.0
    assert placed[-1] == pytest.approx(1000.0 + 39 * 10.0)


def test_effective_gap_fits_a_big_host_in_half_an_interval() -> None:
    assert effective_gap(10.0, 3600.0, 1) == 10.0
    assert effective_gap(10.0, 3600.0, 100) == 10.0
    assert effective_gap(10.0, 120.0, 100) == pytest.approx(0.6)


class CountingFeeds:
    """The store, counting the due times a placement reads."""

    def __init__(self, feeds: FeedStore) -> None:
        self.feeds = feeds
        self.read = 0

    async def host_due_times(self, host: str, after: datetime, *, exclude: str, limit: int) -> list[datetime]:
        got = await self.feeds.host_due_times(host, after, exclude=exclude, limit=limit)
        self.read += len(got)
        return got

    async def host_size(self, host: str) -> int:
        return await self.feeds.host_size(host)


async def _host(stores: Stores, host: str, n: int, at: float) -> None:
    for i in range(n):
        await stores.feeds.upsert_feed(Feed(feed_id=f"{host}-{i}", url=f"https://{host}/{i}", host=host, format="rss"))
        await stores.feeds.update_schedule(f"{host}-{i}", next_fetch_at=datetime.fromtimestamp(at, UTC))


async def test_host_spread_places_among_the_hosts_feeds_in_the_store(tmp_path: Path) -> None:
    async with await open_stores(f"sqlite:///{tmp_path}/s.db") as stores:
        await _host(stores, "a.example", 3, 1000.0)
        await _host(stores, "b.example", 1, 1000.0)
        place = HostSpread(stores.feeds, ManualClock(), gap_s=10.0)
        assert await place.place("a.example", "a.example-0", 1000.0, 3600.0) == 1010.0  # past its two siblings
        assert await place.place("a.example", "new", 1005.0, 3600.0) == 1010.0
        assert await place.place("b.example", "b.example-0", 1000.0, 3600.0) == 1000.0  # alone on its host
        assert await place.place("c.example", "c-0", 1000.0, 3600.0) == 1000.0


async def test_a_placement_reads_a_bounded_number_of_times_however_big_the_host(tmp_path: Path) -> None:
    async with await open_stores(f"sqlite:///{tmp_path}/s.db") as stores:
        await _host(stores, "big.example", 400, 1000.0)  # all due together: the worst a placement can meet
        counting = CountingFeeds(stores.feeds)
        place = HostSpread(counting, ManualClock(), gap_s=10.0)  # type: ignore[arg-type]
        t = await place.place("big.example", "x", 1000.0, 3600.0)
        assert counting.read <= LOOKAHEAD
        assert t > 1000.0  # moved past the neighbours it read (the lane keeps the rate beyond them)
