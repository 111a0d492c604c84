"""Hosts marked *autoparser unavailable* (docs/architecture.md section 3, autoparser; as Turbo does).

When a host's robots.txt forbids fetching its images, autoparsed pages of that host
would render without them, so the host is marked unavailable: every feed of the host
with the autoparser enabled gets ``autoparser_unavailable_reason`` in its status
(the webmaster sees it in the feed status), and the cube skips the host's pages.

Images often live on a sibling host (``img.example.com`` for ``www.example.com``),
so an image host matches a feed host when they are equal, one is a subdomain of the
other, or both share the parent domain after dropping their first label.

The set of unavailable hosts is read from the feed store at most every
``REFRESH_S`` seconds (one ``list()``), so a page costs no store round trip.
"""

from __future__ import annotations

import logging

from protego import Protego

from shared.clock import Clock, SystemClock
from shared.sitemaps import hosts_related
from shared.stores import FeedStore

__all__ = ["REFRESH_S", "HostMarker", "denied_images", "hosts_related"]

log = logging.getLogger(__name__)

#: how stale the unavailable-hosts view may be; a mark made by this process applies at once
REFRESH_S = 300.0
_MARKED_MAX = 10_000


def denied_images(robots_txt: bytes | str, image_urls: list[str], user_agent: str) -> list[str]:
    """The image URLs that ``robots_txt`` forbids ``user_agent`` to fetch (for a robots body at hand)."""
    text = robots_txt.decode("utf-8", "replace") if isinstance(robots_txt, bytes) else robots_txt
    rules = Protego.parse(text)
    return [u for u in image_urls if not rules.can_fetch(u, user_agent)]


class HostMarker:
    def __init__(self, feeds: FeedStore, clock: Clock | None = None) -> None:
        self.feeds = feeds
        self.clock = clock or SystemClock()
        self._unavailable: dict[str, str] = {}
        self._loaded_at: float | None = None
        #: image hosts already marked by this process: a denied host sends one media.cached
        #: failure per image, and each would otherwise cost a scan of the feed registry
        self._marked: dict[str, str] = {}

    async def _refresh(self) -> None:
        now = self.clock.monotonic()
        if self._loaded_at is not None and now - self._loaded_at < REFRESH_S:
            return
        current: dict[str, str] = {}
        for feed in await self.feeds.list(autoparser_only=True):  # the others never matter here
            reason = feed.status.autoparser_unavailable_reason
            if reason and feed.autoparser and not feed.deleted:
                current[feed.host] = reason
        self._unavailable = current
        self._loaded_at = now

    async def unavailable_reason(self, host: str) -> str | None:
        await self._refresh()
        return self._unavailable.get(host)

    async def mark_unavailable(self, image_host: str, reason: str) -> list[str]:
        """Mark every autoparser feed of a host related to ``image_host``; returns the feed ids marked."""
        if self._marked.get(image_host) == reason:
            return []
        marked: list[str] = []
        for feed in await self.feeds.list(autoparser_only=True):  # the others never matter here
            if not feed.autoparser or feed.deleted or not hosts_related(image_host, feed.host):
                continue
            if feed.status.autoparser_unavailable_reason != reason:
                await self.feeds.set_autoparser_unavailable(feed.feed_id, reason, now=self.clock.now())
                log.warning("autoparser unavailable for %s (feed %s): %s", feed.host, feed.feed_id, reason)
            self._unavailable[feed.host] = reason
            marked.append(feed.feed_id)
        if len(self._marked) >= _MARKED_MAX:
            self._marked.clear()
        self._marked[image_host] = reason
        return marked
