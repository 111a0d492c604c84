"""Article discovery for autoparser hosts, the scheduler's side (docs/architecture.md sections 2-3).

A feed registered with ``autoparser=True`` means "the pages of this host are
also read by the autoparser". The autoparser only reads pages it is given, so
the scheduler finds them:

* **Rounds** (``tick``): every ``scheduler.discovery_interval_s`` per host
  (at once for a host new to this process), ``kind=page`` fetches of
  ``<origin>/sitemap.xml`` and the home page ``<origin>/`` go to
  ``crawl.requests`` with the requester ``discover:<host>``, through the
  polite crawler like any other fetch. While the pipeline is overloaded a
  round yields (page crawls are low-value work, ``shared/overload.py``):
  it is pushed ``DEFER_S`` ahead, never skipped.
* **Results** (``on_page``, ``crawl.pages`` results whose requesters include
  ``discover:<host>``): a sitemap index orders its child sitemaps the same way
  (same or related host only, each once per round, so an index cannot loop or
  send us to other sites); a sitemap or a home page gives article URLs
  (``shared.sitemaps``), kept only when a host its feeds' tenants may publish
  has them (``shared.webmaster.hosts``: the host itself, its ``www.`` alias when the
  tenant verified both -- a sibling host may be somebody else's site, and its
  pages would be published as this host's autoparser pages). Each URL not seen before becomes a
  ``CrawlRequest(kind=page, requesters=["autoparser:<host>"], priority=9)``,
  at most ``scheduler.discovery_batch`` per host per round. "Seen" is the
  autoparser's own record (``HashStore.get("autoparser:<host>", url)``: a page
  it has published) or an order of this process in the last ``REORDER_S``
  (pages still on their way, and pages that turned out not to be articles).
  The autoparser cube skips the discovery fetches themselves.

State is in memory: the autoparser hosts come from the feed store (its
autoparser feeds only, read again every ``RELOAD_S``, since a registration's
announcement reaches one replica of the scheduler and the others learn of it
there) and are kept current by the announcements this replica receives. Each
replica runs the rounds of the hosts it owns (``ownership.py``) and answers
any discovery result it is given (``crawl.pages`` is keyed by host too, but
its partitions need not be assigned like those of ``crawl.feeds``). A
restarted replica runs its rounds at once; the HashStore check keeps that
from ordering known pages again.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import urlsplit

from prometheus_client import Counter

from cubes.scheduler.ownership import Ownership
from shared.blobs.base import BlobStore
from shared.clock import Clock, at
from shared.config import SchedulerConfig
from shared.errors import NotFound
from shared.messages import CrawlKind, CrawlRequest, CrawlResult, FetchStatus
from shared.origins import try_origin
from shared.overload import DEFER_S, Overload
from shared.runtime.cube import Output, TimerContext
from shared.sitemaps import discover_article_urls, hosts_related, is_sitemap, page_links, sitemap_children
from shared.stores import Feed, FeedStore, HashStore, TenantStore
from shared.urls import host_of
from shared.webmaster.feeds import ARTICLE_PRIORITY, AUTOPARSER_PREFIX
from shared.webmaster.hosts import HostScope, scope_for, tenant_scope

__all__ = ["ARTICLE_PRIORITY", "AUTOPARSER_PREFIX", "DISCOVER_PREFIX", "REORDER_S", "Discovery"]

log = logging.getLogger(__name__)

DISCOVER_PREFIX = "discover:"
#: the sitemap and home page: ahead of the articles they lead to, behind routine feed polls
_ROUND_PRIORITY = 8
#: an order of this process counts as "seen" this long: a page that failed or was no article is tried
#: again a day later, not every round
REORDER_S = 86_400.0
#: bound of the in-memory "ordered" record (~100 bytes a URL); past it the oldest half is dropped
_ORDERED_MAX = 200_000
#: child sitemaps of one index fetched per round (sitemaps.org allows 50,000; news sites use a few dozen)
_CHILDREN_MAX = 50
#: the autoparser hosts are read from the store again this often (registrations other replicas received)
RELOAD_S = 300.0

ORDERED = Counter("turbocubes_discovery_pages_total", "Article pages ordered for autoparser hosts")
READ = Counter("turbocubes_discovery_reads_total", "Sitemaps and home pages read for article links", ["kind"])
ROUNDS = Counter("turbocubes_discovery_rounds_total", "Discovery rounds of autoparser hosts", ["outcome"])


@dataclass
class _Host:
    #: feed id -> the origin (scheme://authority) of its URL; one host, usually one origin
    origins: dict[str, str] = field(default_factory=dict)
    #: feed id -> its tenant (None: the operator's feed); whose scope the articles must be in
    tenants: dict[str, str | None] = field(default_factory=dict)
    due: float = 0.0
    #: child sitemaps ordered in the current round, and article pages ordered in it
    sitemaps: set[str] = field(default_factory=set)
    ordered_in_round: int = 0


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


class Discovery:
    def __init__(
        self,
        cfg: SchedulerConfig,
        feeds: FeedStore,
        clock: Clock,
        *,
        hashes: HashStore | None = None,
        blobs: Callable[[], Awaitable[BlobStore]] | None = None,
        overload: Overload | None = None,
        tenants: TenantStore | None = None,
        ownership: Ownership | None = None,
    ) -> None:
        self._cfg = cfg
        self._owner = ownership or Ownership()
        self._feeds = feeds
        self._clock = clock
        self._hashes = hashes
        self._blobs = blobs
        self._overload = overload
        self._tenants = tenants
        self.hosts: dict[str, _Host] = {}
        self._ordered: dict[str, float] = {}
        self._loaded_at: float | None = None

    # ------------------------------------------------------------------ registry

    async def _load(self) -> None:
        now = self._clock.monotonic()
        if self._loaded_at is not None and now - self._loaded_at < RELOAD_S:
            return
        self._loaded_at = now
        feeds = await self._feeds.list(autoparser_only=True)
        live = {f.feed_id for f in feeds}
        known = {fid for host in self.hosts.values() for fid in host.origins}
        for feed_id in known - live:  # removed or unflagged through another replica
            self.remove(feed_id)
        for feed in feeds:
            if feed.feed_id not in self.hosts.get(feed.host, _Host()).origins:
                self._add(feed)

    def _add(self, feed: Feed) -> None:
        host = self.hosts.get(feed.host)
        if host is None:
            host = self.hosts[feed.host] = _Host(due=0.0)  # new to us: a round at once
        elif _origin(feed.url) not in host.origins.values():
            host.due = 0.0  # a new origin of a known host is read at once too
        host.origins[feed.feed_id] = _origin(feed.url)
        host.tenants[feed.feed_id] = feed.tenant_id

    async def update(self, feed: Feed) -> None:
        """A feed was registered or changed: follow its autoparser flag."""
        await self._load()
        self.remove(feed.feed_id)
        if feed.autoparser and not feed.deleted:
            self._add(feed)

    def remove(self, feed_id: str) -> None:
        for name, host in list(self.hosts.items()):
            host.tenants.pop(feed_id, None)
            if host.origins.pop(feed_id, None) is not None and not host.origins:
                del self.hosts[name]

    # ------------------------------------------------------------------ rounds

    async def tick(self, ctx: TimerContext) -> list[Output]:
        """The orders of the rounds that are due (the scheduler's tick publishes them)."""
        await self._load()
        now = self._clock.time()
        due = [(name, h) for name, h in self.hosts.items() if h.due <= now and self._owner.owns(name)]
        if not due:
            return []
        if self._overload is not None and (work := self._overload.yields(CrawlKind.page)) is not None:
            for _, h in due:
                h.due = now + DEFER_S  # not skipped: read once the lag falls
            self._overload.count(work, len(due))
            ROUNDS.labels("deferred").inc(len(due))
            return []
        requested_at = at(now)
        outputs = [
            self._request(url, name, DISCOVER_PREFIX + name, _ROUND_PRIORITY, requested_at)
            for name, h in due
            for origin in sorted(set(h.origins.values()))
            for url in (origin + "/sitemap.xml", origin + "/")
        ]
        before = {name: h.due for name, h in due}
        for _, h in due:
            h.due = now + self._cfg.discovery_interval_s
            h.sitemaps.clear()
            h.ordered_in_round = 0

        async def put_back() -> None:  # the orders did not go out: the rounds are due as they were
            for name, h in due:
                h.due = before[name]

        async def started() -> None:
            ROUNDS.labels("started").inc(len(due))

        ctx.on_failure(put_back)
        ctx.after_commit(started)
        return outputs

    @staticmethod
    def _request(url: str, host: str, requester: str, priority: int, now: datetime) -> Output:
        return Output(
            "crawl.requests",
            CrawlRequest(
                kind=CrawlKind.page, url=url, host=host, requesters=[requester], requested_at=now, priority=priority
            ),
        )

    # ------------------------------------------------------------------ results

    async def on_page(self, res: CrawlResult) -> list[Output]:
        """A ``crawl.pages`` result: if it is one of our discovery fetches, order what it leads to."""
        names = [r.removeprefix(DISCOVER_PREFIX) for r in res.requesters if r.startswith(DISCOVER_PREFIX)]
        if not names or res.status is not FetchStatus.ok:
            return []
        await self._load()
        names = [n for n in dict.fromkeys(names) if n in self.hosts]
        if not names:
            return []  # the host's feeds were removed (or lost the flag) since the round began
        body = await self._body(res)
        if body is None:
            return []
        page_url = res.final_url or res.url
        sitemap = is_sitemap(body)
        READ.labels("sitemap" if sitemap else "page").inc()
        now = self._clock.time()
        requested_at = at(now)
        outputs: list[Output] = []
        for name in names:
            host = self.hosts[name]
            if sitemap:
                for child in sitemap_children(body):
                    if len(host.sitemaps) >= _CHILDREN_MAX:
                        break
                    if child not in host.sitemaps and hosts_related(host_of(child), name):
                        host.sitemaps.add(child)
                        outputs.append(
                            self._request(child, host_of(child), DISCOVER_PREFIX + name, _ROUND_PRIORITY, requested_at)
                        )
                urls = discover_article_urls(body, [], host=name)
            else:
                urls = discover_article_urls(None, page_links(body, page_url), host=name)
            # articles become pages of this host: only hosts its feeds' tenants may publish (shared.webmaster.hosts)
            scopes = await self._scopes(host, name)
            urls = [u for u in urls if any(scope.admits(host_of(u), try_origin(u)) for scope in scopes)]
            outputs += await self._articles(host, urls, now, requested_at)
        return outputs

    async def _scopes(self, host: _Host, name: str) -> list[HostScope]:
        """Where the host's articles may be: the scope of each of its feeds' tenants, read now."""
        if self._tenants is None:
            return [scope_for(name, None)]
        return [await tenant_scope(self._tenants, tenant_id, name) for tenant_id in set(host.tenants.values())]

    async def _articles(self, host: _Host, urls: list[str], now: float, requested_at: datetime) -> list[Output]:
        out: list[Output] = []
        for url in urls:
            if host.ordered_in_round >= self._cfg.discovery_batch:
                break
            ordered_at = self._ordered.get(url)
            if ordered_at is not None and now - ordered_at < REORDER_S:
                continue
            page_host = host_of(url)
            source_id = AUTOPARSER_PREFIX + page_host  # the autoparser's source id (its handler's claim)
            if self._hashes is not None and await self._hashes.get(source_id, url) is not None:
                continue
            self._remember(url, now)
            host.ordered_in_round += 1
            out.append(self._request(url, page_host, source_id, ARTICLE_PRIORITY, requested_at))
        ORDERED.inc(len(out))
        return out

    def _remember(self, url: str, now: float) -> None:
        if len(self._ordered) >= _ORDERED_MAX:
            for old in list(self._ordered)[: _ORDERED_MAX // 2]:  # insertion order: the oldest first
                del self._ordered[old]
        self._ordered.pop(url, None)
        self._ordered[url] = now

    async def _body(self, res: CrawlResult) -> bytes | None:
        if res.body is not None:
            return res.body
        if res.body_ref and self._blobs is not None:
            try:
                return await (await self._blobs()).get(res.body_ref)
            except NotFound:
                log.warning("discovery page %s: body %s is gone from the blob store", res.url, res.body_ref)
        return None
