"""robots.txt caching per RFC 9309 on a ManualClock: at most 24 h, outages retried sooner."""

from __future__ import annotations

from cubes.crawler.robots import UNREACHABLE_TTL_S, RobotsCache
from shared.clock import ManualClock
from shared.messages import FetchStatus
from tests.partners.fixtures import PartnerResolver
from tests.partners.server import PartnerServer
from tests.unit.cubes.crawler.crawlkit import CTX, crawl_result, fast_settings, make_handler, request

A = "a.partner.test"


async def test_cached_until_ttl_then_fetched_again(partner: PartnerServer, partner_resolver: PartnerResolver) -> None:
    clock = ManualClock()
    h = make_handler(fast_settings(robots_ttl_s=100.0), partner_resolver, clock=clock)
    try:
        partner.set_robots(A, "User-agent: *\nDisallow: /private\n")
        await h.handle(request(partner.url(A, "/ok"), A, requesters=["1"]), CTX)
        clock.advance(99.0)
        await h.handle(request(partner.url(A, "/page/1"), A, requesters=["2"]), CTX)
        assert len(partner.hits(A, "/robots.txt")) == 1
        partner.set_robots(A, "User-agent: *\nDisallow: /\n")  # the partner changes its mind
        clock.advance(2.0)
        [out] = await h.handle(request(partner.url(A, "/page/2"), A, requesters=["3"]), CTX)
        assert len(partner.hits(A, "/robots.txt")) == 2
        assert crawl_result(out).status is FetchStatus.robots_denied
    finally:
        await h.fetcher.close()


async def test_outage_is_retried_after_minutes_not_a_day(
    partner: PartnerServer, partner_resolver: PartnerResolver
) -> None:
    clock = ManualClock()
    h = make_handler(fast_settings(), partner_resolver, clock=clock)
    try:
        partner.set_robots(A, "", status=503)
        [denied] = await h.handle(request(partner.url(A, "/ok"), A, requesters=["1"]), CTX)
        assert crawl_result(denied).status is FetchStatus.robots_denied
        assert "disallow all for now" in (crawl_result(denied).error or "")
        partner.set_robots(A, "User-agent: *\nAllow: /\n")
        clock.advance(UNREACHABLE_TTL_S + 1)
        [ok] = await h.handle(request(partner.url(A, "/ok"), A, requesters=["2"]), CTX)
        assert crawl_result(ok).status is FetchStatus.ok
        assert len(partner.hits(A, "/robots.txt")) == 2
    finally:
        await h.fetcher.close()


def test_ttl_never_above_a_day() -> None:
    cache = RobotsCache(
        None,  # type: ignore[arg-type]  # nothing is fetched: only the cap is read
        ManualClock(),
        ttl_s=10 * 86_400,
        agent="TurbocubesBot/0.1 (+x)",
        max_lane_wait_s=1,
    )
    assert cache.ttl_s == 86_400
    assert cache.agent == "TurbocubesBot"
