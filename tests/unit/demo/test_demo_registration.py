"""Demo registration is the operator's (idempotent, stable ids); the tracker reads the stores right."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from demo.content import Site, build_site
from demo.registration import RegistrationError, register_feeds, remove_stale_feeds
from demo.site import demo_settings, previous_port
from demo.tracker import Tracker
from shared.config import Settings
from shared.messages import FeedRegistration
from shared.runtime.cube import Output
from shared.sitemaps import discover_article_urls, page_links, sitemap_children
from shared.stores import Page, Stores, open_stores
from shared.webmaster.feeds import feed_id_for


class Collector:
    def __init__(self) -> None:
        self.outputs: list[Output] = []

    async def __call__(self, outputs: Sequence[Output]) -> None:
        self.outputs.extend(outputs)


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[Stores]:
    s = await open_stores(f"sqlite:///{tmp_path}/store.db")
    yield s
    await s.close()


def _site(port: int) -> Site:
    return build_site(f"http://127.0.0.1:{port}", {})


SETTINGS = demo_settings(Settings())


async def test_registering_twice_gives_one_feed_per_url(stores: Stores) -> None:
    site, pub = _site(18765), Collector()
    first = await register_feeds(SETTINGS, site, stores.feeds, pub)
    second = await register_feeds(SETTINGS, site, stores.feeds, pub)
    assert first == second
    assert set(first) == {"news-rss", "news-turbo", "columns-rss", "shop-yml", "ru-news-turbo", "ru-shop-yml"}
    feeds = await stores.feeds.list()
    assert sorted(f.url for f in feeds) == sorted({site.feed_url(s) for s in site.sources if s.feed_path})
    assert {f.format for f in feeds} == {"rss", "turbo", "yml"}
    # the id is the operator CLI's and the API's formula, so `feeds add` of the same URL is this feed
    assert first["news-rss"] == feed_id_for(None, "http://127.0.0.1:18765/news/rss.xml")
    regs = [o.message for o in pub.outputs]
    assert len(regs) == 12  # six feeds, twice
    assert all(isinstance(r, FeedRegistration) for r in regs)


async def test_registration_is_refused_without_the_demo_allowlist(stores: Stores) -> None:
    with pytest.raises(RegistrationError, match="loopback"):
        await register_feeds(Settings(), _site(18765), stores.feeds, Collector())
    assert await stores.feeds.list() == []


async def test_feeds_of_an_earlier_port_are_removed(stores: Stores, tmp_path: Path) -> None:
    old, new, pub = _site(18765), _site(18766), Collector()
    await register_feeds(SETTINGS, old, stores.feeds, pub)
    settings = Settings().replace(store={"url": f"sqlite:///{tmp_path}/store.db"})
    assert await previous_port(settings) == 18765
    assert await remove_stale_feeds(old, stores.feeds, pub) == []
    await register_feeds(SETTINGS, new, stores.feeds, pub)
    removed = await remove_stale_feeds(new, stores.feeds, pub)
    assert len(removed) == 6
    live = await stores.feeds.list()
    assert len(live) == 6
    assert all(":18766/" in f.url for f in live)


async def test_the_host_is_registered_for_the_autoparser_and_its_sitemap_leads_to_the_blog(
    stores: Stores,
) -> None:
    site = _site(18765)
    await register_feeds(SETTINGS, site, stores.feeds, Collector())
    feeds = await stores.feeds.list()
    assert feeds
    assert all(f.autoparser for f in feeds)  # the blog has no feed: its host's feeds carry the flag
    # what the scheduler does with it: <origin>/sitemap.xml is an index of the blog's sitemap ...
    index = site.resources["/sitemap.xml"].body
    assert sitemap_children(index) == [f"{site.base}/blog/sitemap.xml"]
    # ... whose articles are exactly the blog's pages, and the home page links no article
    urls = discover_article_urls(site.resources["/blog/sitemap.xml"].body, [], host="127.0.0.1")
    blog = next(s for s in site.sources if s.key == "blog")
    assert sorted(urls) == sorted(blog.pages)
    assert discover_article_urls(None, page_links(site.resources["/"].body, site.base + "/"), host="127.0.0.1") == []


def test_demo_settings_allow_loopback_and_a_fast_lane() -> None:
    base = Settings().replace(http={"allowlist": ["10.0.0.0/8"]}, crawler={"host_overrides": {"a.example": {}}})
    s = demo_settings(base)
    assert s.http.allowlist == ["10.0.0.0/8", "127.0.0.1/32"]
    assert (s.crawler.host_overrides["127.0.0.1"].rate or 0) >= 10
    assert "a.example" in s.crawler.host_overrides
    assert s.media.deadline_s <= 60
    assert demo_settings(s).http.allowlist == s.http.allowlist  # applying twice adds nothing


async def test_tracker_counts_parsed_waiting_written_per_source(stores: Stores) -> None:
    site = _site(18765)
    ids = await register_feeds(SETTINGS, site, stores.feeds, Collector())
    rss, turbo = site.sources[0], site.sources[1]
    now = datetime(2026, 11, 30, tzinfo=UTC)
    # rss: 3 parsed, of which 1 waits for images and 1 is written; turbo: nothing yet
    for url in rss.pages[:3]:
        await stores.hashes.claim(url, f"feed:{ids['news-rss']}", 50, now=now)
    await stores.delay.park(
        rss.pages[1],
        1,
        b"{}",
        ["http://127.0.0.1:18765/img/x.jpg"],
        now + timedelta(minutes=1),
        host="127.0.0.1",
        now=now,
    )
    await stores.pages.upsert(Page(url=rss.pages[2], host="127.0.0.1", version=1, title="t", written_at=now))
    await stores.feeds.update_schedule(ids["news-rss"], last_fetch_at=now, fetch_result="ok")
    await stores.feeds.update_parse_status(ids["news-rss"], parse_result="partial", parse_error="parse: bad item")
    rows = await Tracker(site, stores, ids).snapshot()
    assert [r.label for r in rows] == [
        "news RSS",
        "news Turbo",
        "columns (summaries only)",
        "shop YML",
        "blog (autoparser)",
        "Russian news Turbo",
        "Russian shop YML",
    ]
    assert (rows[0].parsed, rows[0].waiting, rows[0].written, rows[0].expected) == (3, 1, 1, 12)
    assert rows[0].fetched
    assert rows[0].error == "parse: bad item"
    assert (rows[1].parsed, rows[1].written, rows[1].fetched) == (0, 0, False)
    assert rows[1].expected == len(turbo.pages) == 8
    assert rows[2].expected == 3  # the columns
    assert rows[3].expected == 20
    assert rows[4].expected == 8
