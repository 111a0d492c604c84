"""A lane's memory outlives its process: the next owner of a host waits as the old one was told."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from cubes.crawler.handler import CrawlHandler
from shared.clock import Clock, ManualClock, SystemClock
from shared.config import Settings
from shared.http import Fetcher
from shared.messages import FetchStatus
from shared.stores import Stores, open_stores
from tests.partners.fixtures import PartnerResolver
from tests.partners.server import PartnerServer
from tests.unit.cubes.crawler.crawlkit import CTX, crawl_result, fast_settings, request

A = "a.partner.test"
WALL = 1_800_000_000.0


class ProcessClock(ManualClock):
    """A process's clocks: the wall clock everyone shares, and a monotonic clock of its own."""

    def __init__(self, boot: float) -> None:
        super().__init__(start=WALL)
        self.boot = boot  # monotonic time 0 of this process, on the wall clock

    def monotonic(self) -> float:
        return super().monotonic() - self.boot


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[Stores]:
    s = await open_stores(f"sqlite:///{tmp_path}/store.db")
    yield s
    await s.close()


def crawler(settings: Settings, stores: Stores, clock: Clock, resolver: PartnerResolver) -> CrawlHandler:
    """One crawler process: its own lanes and clock, the shared lane store."""
    fetcher = Fetcher(settings, resolver=resolver, clock=clock)
    return CrawlHandler(settings, fetcher, clock, lane_store=stores.lanes)


async def test_a_new_owner_waits_out_the_retry_after_the_old_one_was_told(
    partner: PartnerServer, partner_resolver: PartnerResolver, stores: Stores
) -> None:
    settings = fast_settings(max_lane_wait_s=5.0)
    partner.set(A, "/busy", "no", status=429, headers={"Retry-After": "3600"})
    clock = ProcessClock(boot=WALL - 1_000.0)
    old = crawler(settings, stores, clock, partner_resolver)
    [out] = await old.handle(request(partner.url(A, "/busy"), A), CTX)
    assert crawl_result(out).status is FetchStatus.throttled
    seen = len(partner.hits(A))  # robots.txt and /busy
    # the old owner is gone; the new one, 20 minutes later, has a monotonic clock of its own
    later = ProcessClock(boot=WALL - 5.0)
    later.advance(1_200.0)
    new = crawler(settings, stores, later, partner_resolver)
    [out] = await new.handle(request(partner.url(A, "/feed.xml"), A, requesters=("feed:2",)), CTX)
    assert crawl_result(out).status is FetchStatus.throttled
    assert "lane busy" in (crawl_result(out).error or "")
    assert len(partner.hits(A)) == seen  # not a single request before the deadline, robots.txt included
    assert new.memory.restored == 1
    await old.fetcher.close()
    await new.fetcher.close()


async def test_robots_txt_is_not_asked_again_by_the_next_owner_while_it_holds(
    partner: PartnerServer, partner_resolver: PartnerResolver, stores: Stores
) -> None:
    settings = fast_settings()
    partner.set_robots(A, "User-agent: *\nDisallow: /private\n")
    old = crawler(settings, stores, ManualClock(), partner_resolver)
    await old.handle(request(partner.url(A, "/ok"), A), CTX)
    assert len(partner.hits(A, "/robots.txt")) == 1
    new = crawler(settings, stores, ManualClock(), partner_resolver)
    [out] = await new.handle(request(partner.url(A, "/private/x"), A, requesters=("feed:2",)), CTX)
    assert crawl_result(out).status is FetchStatus.robots_denied
    [ok] = await new.handle(request(partner.url(A, "/ok"), A, requesters=("feed:3",)), CTX)
    assert crawl_result(ok).status is FetchStatus.ok
    assert len(partner.hits(A, "/robots.txt")) == 1  # the next owner used the saved answer
    await old.fetcher.close()
    await new.fetcher.close()


async def test_the_adapted_rate_survives(
    partner: PartnerServer, partner_resolver: PartnerResolver, stores: Stores
) -> None:
    settings = fast_settings()
    partner.set(A, "/sick", "down", status=503)
    old = crawler(settings, stores, SystemClock(), partner_resolver)
    await old.handle(request(partner.url(A, "/sick"), A), CTX)
    slowed = old.lanes.get(A).policy.rate
    assert slowed < settings.crawler.rate
    assert await old.memory.flush() == 1  # soft state: saved by the timer, not before the result
    new = crawler(settings, stores, SystemClock(), partner_resolver)
    lane = await new.memory.lane(A)
    assert lane.policy.rate == pytest.approx(slowed)
    await old.fetcher.close()
    await new.fetcher.close()


async def test_the_crawl_delay_spacing_survives(
    partner: PartnerServer, partner_resolver: PartnerResolver, stores: Stores
) -> None:
    settings = fast_settings(max_lane_wait_s=1.0)
    partner.set_robots(A, "User-agent: *\nCrawl-delay: 30\n")
    old = crawler(settings, stores, SystemClock(), partner_resolver)
    [out] = await old.handle(request(partner.url(A, "/ok"), A), CTX)
    assert crawl_result(out).status is FetchStatus.throttled  # 30 s after robots.txt: more than it may wait
    new = crawler(settings, stores, SystemClock(), partner_resolver)
    lane = await new.memory.lane(A)
    assert lane.crawl_delay == 30.0
    # the old owner was told to leave 30 s after its robots.txt request: the new owner's first start too
    assert lane.next_allowed_at() >= new.clock.monotonic() + 25.0
    [out] = await new.handle(request(partner.url(A, "/ok"), A, requesters=("feed:2",)), CTX)
    assert crawl_result(out).status is FetchStatus.throttled
    assert [h.path for h in partner.hits(A)] == ["/robots.txt"]
    await old.fetcher.close()
    await new.fetcher.close()


async def test_a_saved_crawl_delay_is_held_to_a_lowered_cap(
    partner: PartnerServer, partner_resolver: PartnerResolver, stores: Stores
) -> None:
    partner.set_robots(A, "User-agent: *\nCrawl-delay: 30\n")
    old = crawler(fast_settings(max_lane_wait_s=1.0), stores, SystemClock(), partner_resolver)
    await old.handle(request(partner.url(A, "/ok"), A), CTX)
    assert (await old.memory.lane(A)).crawl_delay == 30.0
    # the operator lowers the cap: the lane the next owner restores keeps to it
    new = crawler(fast_settings(max_lane_wait_s=1.0, max_crawl_delay_s=2.0), stores, SystemClock(), partner_resolver)
    lane = await new.memory.lane(A)
    assert lane.crawl_delay == 2.0
    await old.fetcher.close()
    await new.fetcher.close()
