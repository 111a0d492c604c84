"""Registers the demo's sources the way an operator would (docs/architecture.md sections 1, 2 and 8).

* The six feeds (four English, the columns' with summaries only; two Russian) go through
  ``shared.webmaster.feeds.FeedRegistry`` -- the registration service behind ``turbocubes feeds add`` and
  the webmaster API: SSRF check, feed store upsert and a ``FeedRegistration`` on
  ``feeds.registry``. The feed id is derived from the canonical URL, so a second ``up --demo``
  on the same port updates nothing.
* Demo feeds of an earlier run on another port (the old port was taken) are
  removed with ``FeedRegistry.remove``, so they do not fail forever in the status.
* The blog has no feed, and nothing to register on its own: the autoparser is
  a flag of a host, carried by its feeds ("the pages of this host are also
  read by the autoparser"). The blog lives on the demo's one host, so the
  feeds of a site with an autoparsed source are registered with
  ``autoparser=True`` (as ``turbocubes feeds add --autoparser`` does). The
  scheduler then reads the host's ``/sitemap.xml`` (an index leading to the
  blog's sitemap) and home page and orders the article pages it finds
  (``cubes/scheduler/discovery.py``); the crawler fetches them politely and the
  autoparser reads them. Pages already published are not ordered again.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from demo.content import Site
from shared.config import Settings
from shared.http import AddressGuard
from shared.runtime.deps import Publish
from shared.stores import FeedStore
from shared.webmaster.feeds import FeedRegistry, RegistrationRefused

__all__ = ["DEMO_FEED_PATHS", "RegistrationError", "register_feeds", "remove_stale_feeds"]

#: the paths of the demo's feeds; a feed on 127.0.0.1 with one of these paths is a demo feed
DEMO_FEED_PATHS = frozenset(
    {
        "/news/rss.xml",
        "/news/turbo.xml",
        "/news/columns.xml",
        "/shop/catalog.yml",
        "/ru/news/turbo.xml",
        "/ru/shop/catalog.yml",
    }
)


class RegistrationError(RuntimeError):
    """A demo feed was refused (the reason is the operator CLI's own message)."""


async def register_feeds(settings: Settings, site: Site, feeds: FeedStore, publish: Publish) -> dict[str, str]:
    """Register every feed of ``site``; returns source key -> feed id. Idempotent."""
    ids: dict[str, str] = {}
    registry = FeedRegistry.from_settings(settings, feeds, publish)
    # a source without a feed (the blog) is autoparsed: its host's feeds carry the flag
    autoparser = any(source.feed_path is None for source in site.sources)
    for source in site.sources:
        if source.feed_path is None:
            continue
        url = site.feed_url(source)
        try:
            done = await registry.register(
                url, fmt=source.format, services=list(source.services), autoparser=autoparser
            )
        except RegistrationRefused as exc:
            raise RegistrationError(f"feed {url} was refused: {exc.message}") from None
        ids[source.key] = done.feed.feed_id
    return ids


async def remove_stale_feeds(site: Site, feeds: FeedStore, publish: Publish) -> list[str]:
    """Remove demo feeds of earlier runs whose port differs from this run's; returns their ids."""
    current = {site.feed_url(s) for s in site.sources if s.feed_path is not None}
    stale = []
    for feed in await feeds.list():
        parts = urlsplit(feed.url)
        if feed.host == "127.0.0.1" and parts.path in DEMO_FEED_PATHS and feed.url not in current:
            await FeedRegistry(feeds, publish, AddressGuard()).remove(feed.feed_id)
            stale.append(feed.feed_id)
    return stale
