"""Registers the demo's sources the way an operator would (DESIGN.md sections 1, 2 and 8).

* The three feeds go through ``cubes.scheduler.commands.add_feed`` -- the very
  function behind ``turbocubes feeds add``: SSRF check, feed store upsert and a
  ``FeedRegistration`` on ``feeds.registry``. The feed id is derived from the
  canonical URL, so a second ``up --demo`` on the same port updates nothing.
* Demo feeds of an earlier run on another port (the old port was taken) are
  removed with ``remove_feed``, so they do not fail forever in the status.
* The blog has no feed. Nothing in the pipeline discovers a host's article
  pages yet (``cubes/autoparser/discover.py`` says the scheduler would call it;
  the scheduler does not), so the demo does that step itself: it reads its
  own sitemap with ``discover_article_urls`` and orders ``kind=page`` crawl
  requests, exactly what the scheduler would publish. The crawler then fetches
  them politely and the autoparser reads them; unchanged pages are not
  republished (the autoparser's content hash).
"""

from __future__ import annotations

import io
from urllib.parse import urlsplit

from cubes.autoparser.discover import discover_article_urls
from cubes.demo.content import Site
from cubes.scheduler.commands import add_feed, feed_id_for, remove_feed
from shared.clock import utcnow
from shared.config import Settings
from shared.messages import CrawlKind, CrawlRequest
from shared.runtime.cube import Output
from shared.runtime.deps import Publish
from shared.stores import FeedStore
from shared.urls import host_of

__all__ = ["DEMO_FEED_PATHS", "RegistrationError", "order_blog_pages", "register_feeds", "remove_stale_feeds"]

#: the paths of the demo's feeds; a feed on 127.0.0.1 with one of these paths is a demo feed
DEMO_FEED_PATHS = frozenset({"/news/rss.xml", "/news/turbo.xml", "/shop/catalog.yml"})
#: the blog's pages are routine work for the crawler, behind feeds (0 = urgent .. 9 = bulk)
_PAGE_PRIORITY = 5


class RegistrationError(RuntimeError):
    """A demo feed was refused (the reason is the operator CLI's own message)."""


async def register_feeds(settings: Settings, site: Site, feeds: FeedStore, publish: Publish) -> dict[str, str]:
    """Register every feed of ``site``; returns source key -> feed id. Idempotent."""
    ids: dict[str, str] = {}
    for source in site.sources:
        if source.feed_path is None:
            continue
        url = site.feed_url(source)
        out, err = io.StringIO(), io.StringIO()
        code = await add_feed(settings, feeds, publish, url, fmt=source.format, services=list(source.services),
                              out=out, err=err)
        if code != 0:
            raise RegistrationError(err.getvalue().strip() or f"feed {url} was refused")
        ids[source.key] = feed_id_for(None, url)
    return ids


async def remove_stale_feeds(site: Site, feeds: FeedStore, publish: Publish) -> list[str]:
    """Remove demo feeds of earlier runs whose port differs from this run's; returns their ids."""
    current = {site.feed_url(s) for s in site.sources if s.feed_path is not None}
    stale = []
    for feed in await feeds.list():
        parts = urlsplit(feed.url)
        if feed.host == "127.0.0.1" and parts.path in DEMO_FEED_PATHS and feed.url not in current:
            await remove_feed(feeds, publish, feed.feed_id, out=io.StringIO(), err=io.StringIO())
            stale.append(feed.feed_id)
    return stale


async def order_blog_pages(site: Site, publish: Publish) -> list[str]:
    """Order a crawl of every article the blog's sitemap lists; returns the URLs ordered."""
    host = host_of(site.base)
    sitemap = site.resources["/blog/sitemap.xml"].body
    urls = discover_article_urls(sitemap, [], host=host)
    now = utcnow()
    await publish([
        Output(
            "crawl.requests",
            CrawlRequest(kind=CrawlKind.page, url=url, host=host, requesters=[f"autoparser:{host}"],
                         requested_at=now, priority=_PAGE_PRIORITY),
        )
        for url in urls
    ])
    return urls
