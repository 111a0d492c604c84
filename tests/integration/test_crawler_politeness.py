"""Politeness measured where a partner measures it: server-side request logs, in real time.

Several virtual hosts on one ``PartnerServer``; one worker per host drives the
real ``CrawlHandler`` (robots.txt, lane, guarded fetch), as the runtime's key
lanes do. Rates are fast (20/s) so the whole file runs in ~10 s. Nothing waits
on a sleep: each test waits for its workers and then reads the server's logs.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from cubes.crawler.handler import CrawlHandler
from shared.messages import CrawlKind, CrawlResult, FetchStatus
from tests.partners import max_in_window
from tests.partners.fixtures import PartnerResolver
from tests.partners.server import PartnerServer
from tests.unit.cubes.crawler.crawlkit import CTX, crawl_result, fast_settings, make_handler, request

RATE = 20.0
A, B, C, D = "a.partner.test", "b.partner.test", "c.partner.test", "d.partner.test"


@pytest.fixture
async def handler(partner_resolver: PartnerResolver) -> AsyncIterator[CrawlHandler]:
    settings = fast_settings(rate=RATE, burst=1, concurrency=2, max_rate=RATE)
    h = make_handler(settings, partner_resolver)
    yield h
    await h.fetcher.close()


async def crawl(
    handler: CrawlHandler, partner: PartnerServer, host: str, paths: list[str], kind: CrawlKind = CrawlKind.page
) -> list[CrawlResult]:
    out: list[CrawlResult] = []
    for p in paths:
        res = await handler.handle(request(partner.url(host, p), host, kind, requesters=[f"t:{p}"]), CTX)
        out.extend(crawl_result(o) for o in res)
    return out


def rate_over(times: list[float]) -> float:
    return (len(times) - 1) / (times[-1] - times[0])


async def test_host_rate_is_kept_while_other_hosts_run_in_parallel(
    partner: PartnerServer, handler: CrawlHandler
) -> None:
    n = 60
    results = await asyncio.gather(
        crawl(handler, partner, A, [f"/page/{i}" for i in range(n)]),
        *(crawl(handler, partner, h, [f"/page/{i}" for i in range(20)]) for h in (B, C, D)),
    )
    assert all(r.status is FetchStatus.ok for rs in results for r in rs)
    a = partner.hit_times(A)
    assert len(a) == n + 1  # + robots.txt, which goes through the lane too
    assert max_in_window(a, 1.0) <= RATE
    assert rate_over(a) <= RATE
    # no burst inside the second either: half a second holds half the rate, plus the one request a
    # window edge may cut and the one a late start's catch-up may add (lanes.LATE_TOLERANCE_S)
    assert max_in_window(a, 0.5) <= RATE / 2 + 2
    # the other hosts were served at the same time, not after A
    for host in (B, C, D):
        other = partner.hit_times(host)
        assert len(other) == 21
        assert other[-1] < a[-1]
        assert max_in_window(other, 1.0) <= RATE


async def test_retry_after_pauses_the_host_and_only_that_host(partner: PartnerServer, handler: CrawlHandler) -> None:
    calls = 0

    async def once_429(request: web.Request) -> web.Response:
        nonlocal calls
        calls += 1
        if calls == 1:
            return web.Response(status=429, text="slow down", headers={"Retry-After": "3"})
        return web.Response(text="fine")

    partner.set_handler(A, "/limited", once_429)
    partner.set_handler(A, "/limited2", once_429)

    first = await crawl(handler, partner, A, ["/limited"])
    assert first[0].status is FetchStatus.throttled
    assert first[0].http_status == 429
    # the next request for A waits out the pause; B proceeds meanwhile
    second, others = await asyncio.gather(
        crawl(handler, partner, A, ["/limited2"]), crawl(handler, partner, B, [f"/page/{i}" for i in range(10)])
    )
    assert second[0].status is FetchStatus.ok
    hit_429 = partner.hits(A, "/limited")[0].at
    after = [h.at for h in partner.hits(A) if h.at > hit_429]
    assert after
    assert after[0] - hit_429 >= 3.0  # no request at all reached A for 3 s
    b_times = partner.hit_times(B)
    assert len(b_times) == 11
    assert b_times[-1] < after[0]  # B was not held up by A's pause
    assert all(r.status is FetchStatus.ok for r in others)


async def test_5xx_storm_backs_the_lane_off(partner: PartnerServer, handler: CrawlHandler) -> None:
    partner.set(A, "/storm", "down", status=503)
    paths = [f"/storm?i={i}" for i in range(5)]
    results = await crawl(handler, partner, A, paths)
    assert all(r.status is FetchStatus.http_5xx for r in results)
    times = [h.at for h in partner.hits(A, "/storm")]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert all(b > a for a, b in itertools.pairwise(gaps)), gaps  # each 503 slows the lane more
    # the 4th 503 halved the pace a fourth time (20/s -> 1.25/s) before the 5th request was booked
    assert gaps[-1] >= 0.95 * 16 / RATE
    assert handler.lanes.get(A).rate <= RATE / 32


async def test_crawl_delay_is_obeyed(partner: PartnerServer, handler: CrawlHandler) -> None:
    partner.set_robots(C, "User-agent: *\nCrawl-delay: 0.25\n")
    results = await crawl(handler, partner, C, [f"/page/{i}" for i in range(4)])
    assert all(r.status is FetchStatus.ok for r in results)
    times = partner.hit_times(C)  # robots.txt + 4 pages: Crawl-delay applies after robots.txt too
    assert len(times) == 5
    assert min(b - a for a, b in itertools.pairwise(times)) >= 0.25


async def test_slow_drip_and_oversized_bodies_are_cut_off(
    partner: PartnerServer, partner_resolver: PartnerResolver
) -> None:
    settings = fast_settings().replace(
        http={"allowlist": ["127.0.0.1/32"], "total_timeout_s": 0.5},
        crawler={"max_page_bytes": 100_000, "max_feed_bytes": 200_000},
    )
    h = make_handler(settings, partner_resolver)
    try:
        drip = await crawl(h, partner, A, ["/slow-drip?interval=0.05"])
        huge = await crawl(h, partner, B, ["/huge"])
        bomb = await crawl(h, partner, C, ["/gzip-bomb?mb=8"], kind=CrawlKind.feed)
    finally:
        await h.fetcher.close()
    assert drip[0].status is FetchStatus.timeout
    assert huge[0].status is FetchStatus.too_large
    assert bomb[0].status is FetchStatus.too_large
    assert huge[0].body is None
