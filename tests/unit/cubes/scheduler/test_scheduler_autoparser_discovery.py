"""Article discovery for autoparser hosts (cubes/scheduler/discovery.py) through the scheduler's handler."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import pytest

from cubes.scheduler.discovery import ARTICLE_PRIORITY, Discovery
from cubes.scheduler.handler import SchedulerHandler
from shared.clock import ManualClock
from shared.config import Settings
from shared.messages import CrawlKind, CrawlRequest, CrawlResult, FeedFormat, FeedRegistration, FetchStatus
from shared.overload import Overload
from shared.runtime.cube import Context, Output
from shared.status import stamp
from shared.stores import Stores, open_stores
from tests.unit.cubes.scheduler.schedkit import Ticking, announce

SETTINGS = Settings().replace(scheduler={"jitter": 0.0, "discovery_interval_s": 600.0, "discovery_batch": 3})
ORIGIN = "https://blog.example"
SITEMAP = f"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>{ORIGIN}/2024/05/01/first-post</loc><lastmod>2024-05-01</lastmod></url>
  <url><loc>{ORIGIN}/2024/05/02/second-post</loc><lastmod>2024-05-02</lastmod></url>
  <url><loc>{ORIGIN}/tag/tools</loc></url>
  <url><loc>https://elsewhere.org/2024/05/02/not-ours-at-all</loc></url>
</urlset>""".encode()
INDEX = f"""<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>{ORIGIN}/sitemap-posts.xml</loc></sitemap>
  <sitemap><loc>https://evil.example.org/sitemap.xml</loc></sitemap>
</sitemapindex>""".encode()
HOME = (
    b"<html><body><a href='/about'>About</a><a href='/2024/05/02/second-post'>2</a>"
    b"<a href='/2024/05/03/third-post-here'>3</a></body></html>"
)


class Collector:
    def __init__(self) -> None:
        self.outputs: list[Output] = []

    async def __call__(self, outputs: Sequence[Output]) -> None:
        self.outputs.extend(outputs)

    def take(self) -> list[CrawlRequest]:
        out = [o.message for o in self.outputs if isinstance(o.message, CrawlRequest)]
        assert len(out) == len(self.outputs)
        assert all(o.topic == "crawl.requests" for o in self.outputs)
        self.outputs.clear()
        return out


def ctx(topic: str) -> Context:
    return Context(topic=topic, partition=0, offset=0, key=None, attempt=1, received_at=datetime.now(UTC))


def reg(
    feed_id: str, url: str, *, autoparser: bool, action: Literal["upsert", "delete"] = "upsert"
) -> FeedRegistration:
    return FeedRegistration(
        action=action,
        feed_id=feed_id,
        url=url,
        host=url.split("/")[2],
        format=FeedFormat.rss,
        autoparser=autoparser,
        registered_at=datetime.now(UTC),
    )


def page(url: str, body: bytes, requesters: list[str], status: FetchStatus = FetchStatus.ok) -> CrawlResult:
    return CrawlResult(
        kind=CrawlKind.page,
        url=url,
        host=url.split("/")[2],
        status=status,
        http_status=200,
        body=body if status is FetchStatus.ok else None,
        requesters=requesters,
        fetched_at=datetime(2024, 5, 14, tzinfo=UTC),
    )


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[Stores]:
    s = await open_stores(f"sqlite:///{tmp_path}/store.db")
    yield s
    await s.close()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(start=1_700_000_000.0)


def make(stores: Stores, clock: ManualClock, pub: Collector, overload: Overload | None = None) -> Ticking:
    discovery = Discovery(SETTINGS.scheduler, stores.feeds, clock, hashes=stores.hashes, overload=overload)
    return Ticking(SchedulerHandler(SETTINGS, stores.feeds, clock, rng=random.Random(7), discovery=discovery), pub)


def discovery_fetches(reqs: list[CrawlRequest]) -> list[str]:
    return sorted(r.url for r in reqs if r.requesters == ["discover:blog.example"])


async def test_autoparser_feed_gets_discovery_rounds_on_its_schedule(stores: Stores, clock: ManualClock) -> None:
    pub = Collector()
    h = make(stores, clock, pub)
    await announce(h, stores.feeds, reg("blog", f"{ORIGIN}/feed.xml", autoparser=True))
    await announce(h, stores.feeds, reg("news", "https://news.example/rss.xml", autoparser=False))
    await h.tick()
    reqs = pub.take()
    # both feeds are fetched as feeds; only the autoparser host is read for articles
    assert sorted(r.url for r in reqs if r.kind is CrawlKind.feed) == [
        f"{ORIGIN}/feed.xml",
        "https://news.example/rss.xml",
    ]
    pages = [r for r in reqs if r.kind is CrawlKind.page]
    assert discovery_fetches(pages) == [f"{ORIGIN}/", f"{ORIGIN}/sitemap.xml"]
    assert len(pages) == 2
    assert all(r.host == "blog.example" for r in pages)
    assert not any("news.example" in r.url for r in pages)

    clock.advance(599)
    await h.tick()
    assert discovery_fetches(pub.take()) == []  # not due yet
    clock.advance(2)
    await h.tick()
    assert discovery_fetches(pub.take()) == [f"{ORIGIN}/", f"{ORIGIN}/sitemap.xml"]

    # the flag removed: no more rounds
    await announce(h, stores.feeds, reg("blog", f"{ORIGIN}/feed.xml", autoparser=False))
    clock.advance(601)
    await h.tick()
    assert discovery_fetches(pub.take()) == []


async def test_sitemap_result_becomes_page_requests_once(stores: Stores, clock: ManualClock) -> None:
    pub = Collector()
    h = make(stores, clock, pub)
    await announce(h, stores.feeds, reg("blog", f"{ORIGIN}/feed.xml", autoparser=True))
    await h.tick()
    pub.take()
    out = await h.handle(page(f"{ORIGIN}/sitemap.xml", SITEMAP, ["discover:blog.example"]), ctx("crawl.pages"))
    reqs = [o.message for o in out]
    assert all(isinstance(r, CrawlRequest) for r in reqs)
    assert [(r.url, r.requesters, r.priority, r.kind) for r in reqs] == [
        (f"{ORIGIN}/2024/05/02/second-post", ["autoparser:blog.example"], ARTICLE_PRIORITY, CrawlKind.page),
        (f"{ORIGIN}/2024/05/01/first-post", ["autoparser:blog.example"], ARTICLE_PRIORITY, CrawlKind.page),
    ]
    # the home page links one new article and one already ordered
    out = await h.handle(page(f"{ORIGIN}/", HOME, ["discover:blog.example"]), ctx("crawl.pages"))
    assert [o.message.url for o in out] == [f"{ORIGIN}/2024/05/03/third-post-here"]

    # a later round, in a restarted scheduler: what the autoparser published is not ordered again
    now = clock.now()
    await stores.hashes.check_and_set("autoparser:blog.example", f"{ORIGIN}/2024/05/02/second-post", "h", now=now)
    clock.advance(601)
    h2 = make(stores, clock, pub)
    await h2.tick()
    assert discovery_fetches(pub.take()) == [f"{ORIGIN}/", f"{ORIGIN}/sitemap.xml"]
    out = await h2.handle(page(f"{ORIGIN}/sitemap.xml", SITEMAP, ["discover:blog.example"]), ctx("crawl.pages"))
    assert [o.message.url for o in out] == [f"{ORIGIN}/2024/05/01/first-post"]
    again = await h2.handle(page(f"{ORIGIN}/sitemap.xml", SITEMAP, ["discover:blog.example"]), ctx("crawl.pages"))
    assert again == []


async def test_sitemap_index_orders_its_own_children_only(stores: Stores, clock: ManualClock) -> None:
    pub = Collector()
    h = make(stores, clock, pub)
    await announce(h, stores.feeds, reg("blog", f"{ORIGIN}/feed.xml", autoparser=True))
    await h.tick()
    pub.take()
    out = await h.handle(page(f"{ORIGIN}/sitemap.xml", INDEX, ["discover:blog.example"]), ctx("crawl.pages"))
    assert [(o.message.url, o.message.requesters) for o in out] == [
        (f"{ORIGIN}/sitemap-posts.xml", ["discover:blog.example"]),
    ]
    # the same index again in this round (a redelivery, or an index listing itself): no loop
    assert await h.handle(page(f"{ORIGIN}/sitemap.xml", INDEX, ["discover:blog.example"]), ctx("crawl.pages")) == []


async def test_pages_not_ours_are_ignored_and_rounds_are_bounded(stores: Stores, clock: ManualClock) -> None:
    pub = Collector()
    h = make(stores, clock, pub)
    await announce(h, stores.feeds, reg("news", "https://news.example/rss.xml", autoparser=False))
    await announce(h, stores.feeds, reg("blog", f"{ORIGIN}/feed.xml", autoparser=True))
    # an autoparser article result, a discovery result for a host without the flag, a failed fetch
    assert (
        await h.handle(page(f"{ORIGIN}/2024/05/01/first-post", HOME, ["autoparser:blog.example"]), ctx("crawl.pages"))
        == []
    )
    assert await h.handle(page("https://news.example/", HOME, ["discover:news.example"]), ctx("crawl.pages")) == []
    assert (
        await h.handle(
            page(f"{ORIGIN}/sitemap.xml", b"", ["discover:blog.example"], FetchStatus.http_4xx), ctx("crawl.pages")
        )
        == []
    )
    many = b"".join(b"<a href='/2024/05/%02d/post-number-%d'>x</a>" % (i % 28 + 1, i) for i in range(10))
    out = await h.handle(page(f"{ORIGIN}/", many, ["discover:blog.example"]), ctx("crawl.pages"))
    assert len(out) == SETTINGS.scheduler.discovery_batch  # the rest come in later rounds


async def test_rounds_yield_under_overload(stores: Stores, clock: ManualClock) -> None:
    settings = SETTINGS.replace(
        runtime={
            "overload_lag": 100,
            "overload_resume_lag": 10,
            "status_interval_s": 5.0,
            "overload_groups": ["parser"],
        }
    )
    overload = Overload(settings, stores.status, clock, cube="scheduler")
    pub = Collector()
    h = make(stores, clock, pub, overload)
    await announce(h, stores.feeds, reg("blog", f"{ORIGIN}/feed.xml", autoparser=True))
    await stores.status.put_status(
        "cube:parser:h1:1", {"cube": "parser", "group": "parser", "lag": 500}, now=stamp(clock)
    )
    assert await overload.refresh() is True
    await h.tick()
    assert discovery_fetches(pub.take()) == []  # held back, not dropped
    await stores.status.put_status(
        "cube:parser:h1:1", {"cube": "parser", "group": "parser", "lag": 0}, now=stamp(clock)
    )
    assert await overload.refresh() is False
    clock.advance(61)
    await h.tick()
    assert discovery_fetches(pub.take()) == [f"{ORIGIN}/", f"{ORIGIN}/sitemap.xml"]


async def test_articles_are_ordered_only_on_hosts_the_feeds_tenant_may_publish(
    stores: Stores, clock: ManualClock
) -> None:
    """shared.webmaster.hosts: a sibling or a www. spelling may be another tenant's site."""
    pub = Collector()
    discovery = Discovery(SETTINGS.scheduler, stores.feeds, clock, hashes=stores.hashes, tenants=stores.tenants)
    h = Ticking(SchedulerHandler(SETTINGS, stores.feeds, clock, rng=random.Random(7), discovery=discovery), pub)
    await stores.tenants.create_tenant("T", tenant_id="t")
    await stores.tenants.add_host("t", "blog.example")
    await stores.tenants.set_verified("t", "blog.example")
    registration = reg("blog", f"{ORIGIN}/feed.xml", autoparser=True).model_copy(update={"tenant_id": "t"})
    await announce(h, stores.feeds, registration)
    await h.tick()
    pub.take()
    sitemap = b"""<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
      <url><loc>https://blog.example/2024/05/01/ours</loc></url>
      <url><loc>https://www.blog.example/2024/05/02/the-www-spelling</loc></url>
      <url><loc>https://shop.blog.example/2024/05/03/a-subdomain</loc></url>
    </urlset>"""

    async def ordered() -> list[str]:
        out = await h.handle(page(f"{ORIGIN}/sitemap.xml", sitemap, ["discover:blog.example"]), ctx("crawl.pages"))
        return sorted(o.message.url for o in out)

    assert await ordered() == ["https://blog.example/2024/05/01/ours"]
    await stores.tenants.add_host("t", "www.blog.example")
    await stores.tenants.set_verified("t", "www.blog.example")  # both spellings verified: one site
    assert await ordered() == ["https://www.blog.example/2024/05/02/the-www-spelling"]
