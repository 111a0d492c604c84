"""Per-host crawl metrics: fetch counts by status, lane rate and pause gauges, bounded label sets."""

from __future__ import annotations

from prometheus_client import REGISTRY

from cubes.crawler.lanes import Lanes
from cubes.crawler.metrics import OTHER_HOST, CrawlMetrics
from cubes.crawler.policy import Signal, SignalKind
from shared.clock import ManualClock
from shared.config import CrawlerConfig
from shared.messages import FetchStatus
from tests.partners.fixtures import PartnerResolver
from tests.partners.server import PartnerServer
from tests.unit.cubes.crawler.crawlkit import CTX, crawl_result, fast_settings, make_handler, request

A = "a.partner.test"


def sample(name: str, **labels: str) -> float | None:
    return REGISTRY.get_sample_value(name, labels)


def fetches(host: str, status: str) -> float:
    return sample("turbocubes_crawl_fetches_total", host=host, status=status) or 0.0


async def test_each_finished_crawl_is_counted_once_per_host_and_status(
    partner: PartnerServer, partner_resolver: PartnerResolver
) -> None:
    h = make_handler(fast_settings(max_lane_wait_s=0.5), partner_resolver)
    ok_before, throttled_before = fetches(A, "ok"), fetches(A, "throttled")
    try:
        [ok] = await h.handle(request(partner.url(A, "/feed.xml"), A, requesters=["feed:1"]), CTX)
        assert crawl_result(ok).status is FetchStatus.ok
        # the same URL again within the coalescing window for a new asker: served from memory, no count
        [shared_result] = await h.handle(request(partner.url(A, "/feed.xml"), A, requesters=["media:x"]), CTX)
        assert crawl_result(shared_result).requesters == ["media:x"]
        partner.set(A, "/busy", "no", status=429, headers={"Retry-After": "3600"})
        await h.handle(request(partner.url(A, "/busy"), A), CTX)
    finally:
        await h.fetcher.close()
    assert fetches(A, "ok") == ok_before + 1
    assert fetches(A, "throttled") == throttled_before + 1


async def test_lane_gauges_follow_rate_and_pause_and_end_with_the_lane() -> None:
    clock = ManualClock(start=100.0)
    lanes = Lanes(CrawlerConfig(rate=2.0, max_rate=4.0), clock, seed=1)
    metrics = CrawlMetrics(clock, max_gauge_hosts=2)
    paused, slow, idle = lanes.get("paused.test"), lanes.get("slow.test"), lanes.get("idle.test")
    paused.observe(Signal(SignalKind.throttled, retry_after_s=60.0))
    slow.set_crawl_delay(4.0)  # 0.25 requests/s
    metrics.refresh(lanes)
    assert sample("turbocubes_crawl_lane_paused", host="paused.test") == 1.0
    assert sample("turbocubes_crawl_lane_paused", host="slow.test") == 0.0
    assert sample("turbocubes_crawl_lane_rate", host="slow.test") == 0.25
    # at most two lanes shown: the paused and the slowed one come before an idle one
    assert sample("turbocubes_crawl_lane_rate", host="idle.test") is None
    assert idle.rate == 2.0
    # the pause ends; the slow lane's delay is lifted and it drops out of the two most interesting
    clock.advance(61.0)
    slow.set_crawl_delay(None)
    paused.observe(Signal(SignalKind.throttled, retry_after_s=600.0))
    lanes.get("idle.test").last_start = clock.monotonic()
    metrics.refresh(lanes)
    assert sample("turbocubes_crawl_lane_paused", host="paused.test") == 1.0
    assert sample("turbocubes_crawl_lane_rate", host="idle.test") == 2.0
    assert sample("turbocubes_crawl_lane_rate", host="slow.test") is None  # its series ended


def test_host_labels_are_bounded() -> None:
    metrics = CrawlMetrics(ManualClock(), max_hosts=2)
    before = fetches(OTHER_HOST, "ok")
    for host in ("one.test", "two.test", "three.test", "ONE.test"):
        metrics.fetched(host, FetchStatus.ok)
    assert metrics.host_label("one.test") == "one.test"
    assert metrics.host_label("four.test") == OTHER_HOST
    assert fetches(OTHER_HOST, "ok") == before + 1  # three.test
    assert sample("turbocubes_crawl_fetches_total", host="three.test", status="ok") is None


def test_repeated_fetches_of_a_host_count_every_time_into_its_one_series() -> None:
    metrics = CrawlMetrics(ManualClock(), max_hosts=3)
    ok_before, e404_before = fetches("rep.test", "ok"), fetches("rep.test", "http_4xx")
    for host in ("rep.test", "REP.test", "rep.test", "rep.test"):
        metrics.fetched(host, FetchStatus.ok)  # the labelled child is kept after the first call
    metrics.fetched("rep.test", FetchStatus.http_4xx)
    assert fetches("rep.test", "ok") == ok_before + 4
    assert fetches("rep.test", "http_4xx") == e404_before + 1
