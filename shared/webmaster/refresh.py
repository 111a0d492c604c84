"""One URL fetched again now, or one image purged (docs/architecture.md sections 6 and 10).

A webmaster (the API, the console), the operator (``turbocubes refresh``) and the
site itself (the IndexNow receiver, ``cubes/api/indexnow.py``) ask through ``Refresher``,
so the rule of what a refresh does and who may ask is written once:

* **A page** is fetched again by whatever made it, through the host's polite crawler
  lane (the lane's rate, robots.txt and Retry-After still apply; the order is urgent):

  - a page of a feed (the hash store's owner ``feed:<id>``): that feed is fetched now
    (``shared.webmaster.feeds.fetch_request``, its fetch report names the order); its changed
    items are published, unchanged ones are skipped by their hash as on any poll;
  - a page of the autoparser, or a URL no source has published yet on a host that an
    autoparser feed reads: the page itself (``kind=page``), which the autoparser reads
    like a discovered one;
  - a new URL on a host read only by feeds: the host's feeds (at most ``FEEDS_MAX``)
    are fetched now, since one of them is where a new article appears;
  - a page uploaded through the partner API has nothing to fetch: refused (upload it
    again), as is a URL that no source of the host could bring (``nothing_to_fetch``).

* **An image** (its source URL, as the pages were given it) is fetched again now,
  unconditionally: the cdn cube handles the answer as a re-check (``cubes/cdn/recheck.py``):
  the same bytes change nothing, new bytes are a new copy that ``replaces`` the old one
  and every page that shows it is rendered again with it; a failure keeps the copy.
  **A purge** is the same fetch, except that an answer that gives no good image (a 404,
  not an image any more) drops the copy: the pages that showed it are rendered again
  without it (the kvwriter's ``without_copy``). The copy's bytes stay in the CDN, which is
  content-addressed: another URL may have the same bytes.

**Who may ask.** A tenant needs a right on the URL's origin (scheme, host, port:
``shared.webmaster.access.host_claim``), and a page published by another tenant's source that
holds a right there is not its to refresh (``page_not_owned``: the page rule of
``shared.webmaster.rights``). An image is a tenant's when a page it may refresh shows it. Without
a tenant (the site's IndexNow key, the operator), some tenant must hold a right on the
origin: the pipeline fetches no site that nobody proved.

**Bounded.** The same order (same action, same URL) within ``REORDER_S`` answers the one
already queued instead of queueing another, and a feed fetched for a refresh is not
fetched again for another in that time, so a button clicked ten times, a URL pinged in
a loop or ten URLs of one feed cost the site one fetch.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from enum import StrEnum

from shared.clock import Clock
from shared.errors import Reject
from shared.messages import CrawlKind, CrawlRequest
from shared.origins import origin_of
from shared.runtime.cube import Output
from shared.runtime.deps import Publish
from shared.stores import Feed, Stores
from shared.urls import MAX_URL_LENGTH, canonical_url, host_of
from shared.webmaster.access import AccessRefused, host_claim
from shared.webmaster.feeds import PURGE_PREFIX, REFRESH_PREFIX, URGENT_PRIORITY, fetch_request
from shared.webmaster.rights import page_owner

__all__ = ["FEEDS_MAX", "REORDER_S", "URL_MAX", "Action", "RefreshRefused", "Refreshed", "Refresher"]

#: the longest URL a crawl request carries (``shared.urls.MAX_URL_LENGTH``, as ``shared.messages.Url``)
URL_MAX = MAX_URL_LENGTH
#: seconds in which the same order answers the one already queued
REORDER_S = 30.0
#: feeds of one host fetched for a new URL (a site has a handful: news, sport, shop)
FEEDS_MAX = 10
#: orders remembered before the old ones are swept
_ORDERS_MAX = 10_000
#: pages of an image looked at to find one of the caller's (an image on thousands of pages is a logo:
#: any of the first few hundred is the caller's if one is)
_PAGES_READ = 200


class Action(StrEnum):
    """What a refresh queued."""

    feed = "feed"  # the feeds that carry the page, fetched now
    page = "page"  # the page itself, for the autoparser
    image = "image"  # the image, fetched again
    purge = "purge"  # the image, fetched again; its copy dropped unless a good one comes back


class RefreshRefused(Reject):
    """A refresh with nothing to do (``code``: ``uploaded``, ``nothing_to_fetch``, ``not_found``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True, slots=True)
class Refreshed:
    """A refresh queued (or the same one queued a moment ago: ``queued`` False)."""

    url: str
    action: Action
    refresh_id: str
    queued: bool
    #: the feeds fetched for it (``Action.feed``)
    feeds: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, object]:
        return {
            "url": self.url,
            "action": self.action.value,
            "refresh_id": self.refresh_id,
            "queued": self.queued,
            "feeds": list(self.feeds),
        }


def _canonical(url: object) -> str:
    if isinstance(url, str) and len(url) > URL_MAX:
        raise RefreshRefused("bad_url", f"url: longer than {URL_MAX} characters")
    try:
        return canonical_url(url)  # type: ignore[arg-type]  # checked inside: a non-string is a ValueError
    except ValueError as exc:
        raise RefreshRefused("bad_url", f"url: {exc}") from None


class Refresher:
    """Refreshes and purges, each checked and queued through the crawler (see the module docstring)."""

    def __init__(self, stores: Stores, publish: Publish, clock: Clock) -> None:
        self.stores = stores
        self.publish = publish
        self.clock = clock
        #: (action, url) -> (refresh id, what it queued, monotonic time queued)
        self._orders: dict[tuple[str, str], Refreshed] = {}
        self._queued_at: dict[tuple[str, str], float] = {}

    # ------------------------------------------------------------------ who may ask

    async def _authorize(self, url: str, tenant_id: str | None) -> str:
        """The origin of ``url`` once the caller may refresh there (see "Who may ask")."""
        origin = origin_of(url)
        host = host_of(url)
        if tenant_id is not None:
            claim = await host_claim(self.stores.tenants, tenant_id, host)
            if claim.origin != origin:
                raise AccessRefused(
                    "origin_not_held",
                    f"your right on {claim.host} covers {claim.origin}, not {origin}: a right covers the "
                    "scheme, host and port that were proven",
                    host=host,
                )
        elif not any(c.origin == origin for c in await self.stores.tenants.holders(host)):
            raise AccessRefused("host_not_verified", f"no one holds a verified right on {origin}", host=host)
        return origin

    async def _holders_feeds(self, url: str, origin: str, tenant_id: str | None) -> list[Feed]:
        """The live feeds on the URL's host of the tenants that may publish there (the caller alone, if a tenant)."""
        host = host_of(url)
        if tenant_id is not None:
            tenants = [tenant_id]
        else:
            tenants = sorted({c.tenant_id for c in await self.stores.tenants.holders(host) if c.origin == origin})
        feeds = [f for t in tenants for f in await self.stores.feeds.list(t) if f.host == host and not f.deleted]
        return feeds

    # ------------------------------------------------------------------ orders

    def _recent(self, key: tuple[str, str]) -> Refreshed | None:
        at = self._queued_at.get(key)
        if at is None or self.clock.monotonic() - at >= REORDER_S:
            return None
        done = self._orders[key]
        return Refreshed(done.url, done.action, done.refresh_id, False, done.feeds)

    def _remember(self, key: tuple[str, str], done: Refreshed) -> None:
        now = self.clock.monotonic()
        if len(self._orders) >= _ORDERS_MAX:  # bounded: forget the orders past their window
            for old in [k for k, at in self._queued_at.items() if now - at >= REORDER_S]:
                del self._orders[old], self._queued_at[old]
        self._orders[key] = done
        self._queued_at[key] = now

    async def page(self, url: object, *, tenant_id: str | None = None) -> Refreshed:
        """Fetch the page at ``url`` again now through whatever made it; ``AccessRefused`` / ``RefreshRefused``."""
        canonical = _canonical(url)
        origin = await self._authorize(canonical, tenant_id)
        key = ("page", canonical)
        if (recent := self._recent(key)) is not None:
            return recent
        owner = await page_owner(self.stores, canonical, origin)
        if tenant_id is not None and not owner.yields_to(tenant_id):
            raise AccessRefused(
                "page_not_owned",
                f"{canonical} was published by another tenant's source, which holds a right on {origin}: only it "
                "may refresh the page",
                host=host_of(canonical),
            )
        refresh_id = uuid.uuid4().hex
        kind, _, ident = (owner.source_id or "").partition(":")
        if kind == "tenant":
            raise RefreshRefused("uploaded", f"{canonical} came through the partner API: upload it again to change it")
        feeds = await self._holders_feeds(canonical, origin, tenant_id)
        if kind == "feed":
            feed = await self.stores.feeds.get(ident)
            if feed is None or feed.deleted:
                raise RefreshRefused("nothing_to_fetch", f"the feed that published {canonical} is removed")
            done = await self._fetch_feeds(canonical, [feed], refresh_id)
        elif kind == "autoparser" or any(f.autoparser for f in feeds):
            done = await self._fetch_page(canonical, refresh_id)
        elif feeds:
            done = await self._fetch_feeds(canonical, feeds[:FEEDS_MAX], refresh_id)
        else:
            raise RefreshRefused(
                "nothing_to_fetch",
                f"no feed of {host_of(canonical)} publishes {canonical}, and no feed reads the host's pages "
                "(autoparser): register one",
            )
        self._remember(key, done)
        return done

    async def _fetch_feeds(self, url: str, feeds: list[Feed], refresh_id: str) -> Refreshed:
        """Each feed fetched now, unless a refresh fetched it in the last ``REORDER_S`` (ten URLs of one feed
        pinged together cost one fetch of it)."""
        due = [f for f in feeds if self._recent(("feed", f.feed_id)) is None]
        if due:
            now = self.clock.now()
            await self.publish([fetch_request(f, now, fetch_id=refresh_id) for f in due])
            for f in due:
                self._remember(("feed", f.feed_id), Refreshed(f.url, Action.feed, refresh_id, True))
        return Refreshed(url, Action.feed, refresh_id, bool(due), tuple(f.feed_id for f in feeds))

    async def _fetch_page(self, url: str, refresh_id: str) -> Refreshed:
        host = host_of(url)
        order = CrawlRequest(
            kind=CrawlKind.page,
            url=url,
            host=host,
            requesters=[f"{REFRESH_PREFIX}{refresh_id}"],
            requested_at=self.clock.now(),
            priority=URGENT_PRIORITY,
        )
        await self.publish([Output("crawl.requests", order, key=host)])
        return Refreshed(url, Action.page, refresh_id, True)

    async def image(self, url: object, *, tenant_id: str | None = None, purge: bool = False) -> Refreshed:
        """Fetch the image at ``url`` (its source URL) again now; with ``purge``, drop its copy unless a good
        one comes back. ``RefreshRefused("not_found")`` for an image no page of the caller's shows."""
        canonical = _canonical(url)
        action = Action.purge if purge else Action.image
        rec = await self.stores.images.get(canonical)
        pages = await self.stores.images.pages_using(rec.cdn_url) if rec is not None and rec.cdn_url else []
        if not await self._may_show(pages, tenant_id):
            # another tenant's image reads exactly as one that is not there
            raise RefreshRefused("not_found", f"no page of yours shows the image {canonical} from the CDN")
        key = (action.value, canonical)
        if (recent := self._recent(key)) is not None:
            return recent
        assert rec is not None
        refresh_id = uuid.uuid4().hex
        host = host_of(canonical)
        order = CrawlRequest(
            kind=CrawlKind.video if (rec.mime or "").startswith("video/") else CrawlKind.image,
            url=canonical,
            host=host,
            requesters=[f"{PURGE_PREFIX if purge else REFRESH_PREFIX}{refresh_id}"],
            requested_at=self.clock.now(),
            priority=URGENT_PRIORITY,
        )
        await self.publish([Output("crawl.requests", order, key=host)])
        done = Refreshed(canonical, action, refresh_id, True)
        self._remember(key, done)
        return done

    async def _may_show(self, pages: list[str], tenant_id: str | None) -> bool:
        """Whether one of ``pages`` (the pages showing an image) is one the caller may refresh."""
        if tenant_id is not None:
            held = {c.origin for c in await self.stores.tenants.hosts_of(tenant_id) if c.verified}
        for page in pages[:_PAGES_READ]:
            try:
                origin = origin_of(page)
            except ValueError:
                continue
            if tenant_id is None:
                if any(c.origin == origin for c in await self.stores.tenants.holders(host_of(page))):
                    return True
            elif origin in held and (await page_owner(self.stores, page, origin)).yields_to(tenant_id):
                return True
        return False
