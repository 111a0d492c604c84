"""The scheduler's handler: registrations in, lessons from fetches, due feeds out (docs/architecture.md section 3).

* ``feeds.registry`` -> follow the registration service (``shared.webmaster.feeds``),
  which wrote the row: a new (or re-registered) feed is placed in its host's
  partition and due at once (``tick.Ticker.place``), a removed one gets a new
  feed's schedule back and leaves every partition, and discovery follows the
  autoparser flag.
* ``crawl.feeds`` -> learn: hash the body (xxh3-128), classify the fetch
  (changed / unchanged / failed), compute the next due time with
  ``policy``, the origin's own schedule (``origin.py``: its ttl, ``sy:update*``,
  ``Cache-Control`` / ``Expires``, ``skipHours`` / ``skipDays``) and ``spread``
  (among the host's other feeds, as the store holds them), and write the
  *fetch* fields of the feed status, with what chose the due time.
  The parser consumes the same topic and writes the parse fields
  (``items``, ``parse_error``, ...); this handler writes the fetch's own
  (``fetch_result``, ``fetch_error``) and the schedule (``shared/stores/feeds.py``
  says who writes which field).
  A result older than the last one learned is ignored (redelivery, reordering).
* ``tick`` (a ``Timer``) -> the due feeds of this replica's partitions
  become ``crawl.requests``, each poll once (``tick.py`` writes the order
  down), and feeds no announcement placed are placed.
  All state is in the store — nothing per feed in memory — so a restarted
  replica, or the one that takes its partitions, carries on.
* ``crawl.pages`` and the same tick -> article discovery for the hosts of
  feeds registered with ``autoparser=True`` (``discovery.py``).
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from typing import Any

from cubes.scheduler.discovery import Discovery
from cubes.scheduler.feedhead import FeedHead, read_head
from cubes.scheduler.origin import declared_json, origin_schedule, skip_window
from cubes.scheduler.ownership import Ownership
from cubes.scheduler.policy import Outcome, classify, follow_origin, next_delay, next_interval
from cubes.scheduler.spread import HostSpread
from cubes.scheduler.subscriber import Subscriber
from cubes.scheduler.tick import Ticker
from cubes.scheduler.websub import discover
from shared.blobs.base import BlobStore
from shared.clock import Clock, at
from shared.config import Settings
from shared.errors import NotFound
from shared.hashing import body_hash, file_hash
from shared.http.retry_after import parse_retry_after
from shared.messages import CrawlKind, CrawlResult, FeedRegistration, FetchStatus
from shared.overload import Overload
from shared.runtime.cube import Context, Output, TimerContext
from shared.stores import Feed, FeedStore

__all__ = ["SchedulerHandler"]

log = logging.getLogger(__name__)

#: the schedule of a feed never fetched, in no partition: placed again (due at once, the shortest
#: interval, no validators) when it is registered again
_NEW_SCHEDULE: dict[str, Any] = {
    "schedule_partition": None,
    "next_fetch_at": None,
    "interval_s": None,
    "consecutive_failures": 0,
    "etag": None,
    "last_modified": None,
    "last_hash": None,
}


class SchedulerHandler:
    def __init__(
        self,
        settings: Settings,
        feeds: FeedStore,
        clock: Clock,
        *,
        subscriber: Subscriber | None = None,
        blobs: Callable[[], Awaitable[BlobStore]] | None = None,
        rng: random.Random | None = None,
        overload: Overload | None = None,
        discovery: Discovery | None = None,
        ownership: Ownership | None = None,
    ) -> None:
        self._cfg = settings.scheduler
        #: under overload, YML re-fetches yield (shared/overload.py)
        self._overload = overload
        #: article discovery for autoparser hosts (None: off)
        self._discovery = discovery
        self._feeds = feeds
        self._clock = clock
        self._subscriber = subscriber
        self._blobs = blobs
        self._rng = rng or random.Random()
        #: which partitions this replica ticks (a lone scheduler: all)
        self.ownership = ownership or Ownership()
        self.ticker = Ticker(self._cfg, feeds, clock, self.ownership, overload=overload)
        self._spread = HostSpread(feeds, clock, self._cfg.host_gap_s)

    # ------------------------------------------------------------------ dispatch

    async def handle(self, msg: FeedRegistration | CrawlResult, ctx: Context) -> list[Output]:
        if isinstance(msg, FeedRegistration):
            await self._register(msg)
        elif msg.kind is CrawlKind.page:
            return await self._discovery.on_page(msg) if self._discovery is not None else []
        else:
            await self._learn(msg)
        return []

    # ------------------------------------------------------------------ feeds.registry

    async def _register(self, reg: FeedRegistration) -> None:
        """Follow an announcement of the registration service (``shared.webmaster.feeds``), which wrote the row.

        The row is the truth (its URL was canonicalized at registration); the message only says
        which feed changed. A removal resets the feed's schedule to a new feed's, so a feed
        registered again is due at once and sends no validators of a URL it may no longer serve.
        """
        feed = await self._feeds.get(reg.feed_id)
        if reg.action == "delete":
            if self._discovery is not None:
                self._discovery.remove(reg.feed_id)
            if feed is None:
                return
            await self._feeds.update_schedule(reg.feed_id, **_NEW_SCHEDULE)
            if self._subscriber is not None:
                error = await self._subscriber.unsubscribe(reg.feed_id, feed.url)
                if error:
                    log.warning("websub unsubscribe of removed feed %s failed: %s", reg.feed_id, error)
            return
        if feed is None or feed.deleted:
            return  # an announcement older than a removal (a compacted log read again): nothing to follow
        await self.ticker.place(feed)
        if self._discovery is not None:
            await self._discovery.update(feed)

    # ------------------------------------------------------------------ crawl.feeds

    async def _learn(self, res: CrawlResult) -> None:
        ids = {r.removeprefix("feed:") for r in res.requesters if r.startswith("feed:")}
        if res.feed_id:
            ids.add(res.feed_id)
        if not ids:
            return
        digest = await self._hash(res) if res.status is FetchStatus.ok else None
        # the feed's head, read once for both its WebSub hub and its own schedule (a body in a blob is a
        # catalog, whose format declares neither)
        head = read_head(res.body) if res.status is FetchStatus.ok and res.body is not None else None
        for feed_id in sorted(ids):
            await self._learn_one(feed_id, res, digest, head)

    async def _hash(self, res: CrawlResult) -> str | None:
        if res.body is not None:
            return body_hash(res.body)
        if res.body_ref and self._blobs is not None:
            try:
                # from a local file, a chunk at a time: a 45 MB catalog was read whole into memory just to
                # be hashed; the embedded store hands its own file, S3 streams to a temporary one
                async with (await self._blobs()).local_copy(res.body_ref) as path:
                    return await asyncio.to_thread(file_hash, path)
            except NotFound:
                log.warning("feed body %s is gone from the blob store; counted as changed", res.body_ref)
        return None

    async def _learn_one(self, feed_id: str, res: CrawlResult, digest: str | None, head: FeedHead | None) -> None:
        feed = await self._feeds.get(feed_id)
        if feed is None or feed.deleted:
            return
        st = feed.status
        if st.last_fetch_at is not None and res.fetched_at <= st.last_fetch_at:
            return  # already learned (redelivery) or older than what we know
        fetched = res.fetched_at.timestamp()
        outcome = classify(res.status, digest, st.last_hash)
        failures = st.consecutive_failures + 1 if outcome is Outcome.failed else 0
        interval = next_interval(st.interval_s, outcome, self._cfg)
        lease_left = None if st.websub_expires_at is None else st.websub_expires_at.timestamp() - fetched
        u = self._rng.random()
        delay = next_delay(
            interval=interval,
            outcome=outcome,
            failures=failures,
            websub_lease_left=lease_left,
            retry_after=parse_retry_after(res.headers.get("retry-after"), fetched),
            u=u,
            cfg=self._cfg,
        )
        reason: str | None = None
        origin = origin_schedule(head, res.headers, fetched, st.declared_schedule)
        if outcome is not Outcome.failed and not (lease_left is not None and lease_left > 0):
            # a failure keeps its backoff and a live WebSub lease its safety net: the origin's schedule is
            # for a feed we poll because it answered
            delay, reason = follow_origin(delay, origin, u, self._cfg)
        planned, skipped = skip_window(fetched + delay, origin)
        due = await self._spread.place(feed.host, feed_id, planned, interval)
        fields: dict[str, Any] = {
            "last_fetch_at": res.fetched_at,
            "last_http_status": res.http_status,
            "fetch_result": res.status.value,
            "fetch_error": None,  # the fetch's own field: a parse error is the parser's (PARSE_FIELDS)
            "next_fetch_at": at(due),
            "interval_s": interval,
            "consecutive_failures": failures,
            "schedule_reason": skipped or reason,
        }
        if head is not None:  # a body: what it declares now (nothing, when its ttl went)
            fields["declared_schedule"] = declared_json(origin)
        if outcome is Outcome.failed:
            detail = res.error or (f"HTTP {res.http_status}" if res.http_status else "")
            fields["fetch_error"] = f"{res.status.value}: {detail}" if detail else res.status.value
        if res.status is FetchStatus.ok:
            # the validators of *this* response; a server that stopped sending them must not get old ones
            fields["etag"] = res.headers.get("etag")
            fields["last_modified"] = res.headers.get("last-modified")
            if digest is not None:
                fields["last_hash"] = digest
        elif res.status is FetchStatus.not_modified:
            if res.headers.get("etag"):
                fields["etag"] = res.headers["etag"]
            if res.headers.get("last-modified"):
                fields["last_modified"] = res.headers["last-modified"]
        await self._feeds.update_schedule(feed_id, **fields)
        await self._maybe_subscribe(feed, res, fetched, head)

    async def _maybe_subscribe(self, feed: Feed, res: CrawlResult, now: float, head: FeedHead | None) -> None:
        if self._subscriber is None or not self._subscriber.enabled or res.status is not FetchStatus.ok:
            return
        found = discover(head or FeedHead(), res.headers)
        if found is not None and self._subscriber.due_for(self._subscriber.book.of(feed), found, now):
            # failures are logged by the subscriber and retried on a later poll; polling goes on meanwhile
            await self._subscriber.subscribe(feed.feed_id, feed.url, found, now)

    # ------------------------------------------------------------------ tick

    async def tick(self, ctx: TimerContext) -> list[Output]:
        """Place what no announcement placed, emit every due feed once (``ctx.emit``: each batch is
        leased once durable, ``tick.py``), then return the due discovery rounds' orders."""
        await self.ticker.sweep()
        await self.ticker.tick(ctx)
        if self._discovery is not None:
            return await self._discovery.tick(ctx)
        return []

    async def close(self) -> None:
        if self._subscriber is not None:
            await self._subscriber.close()
