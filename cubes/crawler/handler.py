"""The crawler's handler: one ``CrawlRequest`` in, one ``CrawlResult`` out (docs/architecture.md sections 3 and 6).

For each request, in this order:

0. while the pipeline is overloaded, a ``page`` request (low-value work) is
   deferred: ``Deferred`` makes the runtime re-queue it with a delay
   (``shared/overload.py``);
1. the URL is checked (scheme, literal address) — ``bad_url`` / ``blocked_address``;
2. identical requests are coalesced (``coalesce.py``): only the first fetches;
3. robots.txt of the origin is consulted (``robots.py``) — ``robots_denied``
   without any request for the URL;
4. the host's lane (``lanes.py``; restored from the lane store the first time
   this process needs it, ``memory.py``) grants a slot: token bucket, concurrency
   cap, Crawl-delay, pause; a lane that cannot start the request within
   ``crawler.max_lane_wait_s`` answers ``throttled`` instead of holding a worker;
5. the guarded fetch (``shared.http``) with the request's ETag / Last-Modified;
6. the lane learns from the response (``policy.py``); a pause it was told to
   keep is saved before the result is published (``memory.py``);
7. the result goes to ``crawl.feeds`` / ``crawl.images`` (images and videos) /
   ``crawl.pages``; a body over ``crawler.inline_body_max`` is put into the
   blob store and travels as ``body_ref``.

Every outcome is a result with a specific status; nothing is dropped silently.
In the cube a request has a time budget (``budget_s``, under the runtime's
handler timeout): waits and fetches are cut to fit, so a slow partner ends as
a ``timeout`` / ``throttled`` result rather than as a runtime retry.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable
from pathlib import Path

from cubes.crawler.coalesce import Coalescer
from cubes.crawler.lanes import Lanes
from cubes.crawler.memory import LaneMemory
from cubes.crawler.metrics import CrawlMetrics
from cubes.crawler.robots import RobotsCache
from cubes.crawler.signals import signal_for
from shared.blobs.base import BlobStore
from shared.clock import Clock
from shared.config import Settings
from shared.errors import BlockedAddressError
from shared.http import Fetcher, FetchResult
from shared.messages import CrawlKind, CrawlRequest, CrawlResult, FetchStatus
from shared.overload import Overload
from shared.runtime.cube import Context, Output
from shared.secretbox import SecretBox, Unsealable
from shared.stores.lanes import LaneStore
from shared.webmaster.feed_options import fetch_headers

__all__ = ["TOPIC_FOR_KIND", "CrawlHandler"]

TOPIC_FOR_KIND = {
    CrawlKind.feed: "crawl.feeds",
    CrawlKind.image: "crawl.images",
    CrawlKind.video: "crawl.images",
    CrawlKind.page: "crawl.pages",
}

BlobsFactory = Callable[[], Awaitable[BlobStore]]


class CrawlHandler:
    def __init__(
        self,
        settings: Settings,
        fetcher: Fetcher,
        clock: Clock,
        *,
        blobs: BlobsFactory | None = None,
        lanes: Lanes | None = None,
        budget_s: float | None = None,
        overload: Overload | None = None,
        metrics: CrawlMetrics | None = None,
        lane_store: LaneStore | None = None,
    ) -> None:
        self.settings = settings
        #: per-host fetch counts (turbocubes_crawl_fetches_total); bounded labels, see metrics.py
        self.metrics = metrics or CrawlMetrics(clock)
        #: under overload, low-value requests (autoparser pages) are deferred (shared/overload.py)
        self.overload = overload
        #: time one request may take, waits and robots.txt included (None: unbounded, the CLI);
        #: the cube sets it under the runtime's handler timeout so a slow fetch ends as a result
        self.budget_s = budget_s
        self.fetcher = fetcher
        self.clock = clock
        self.lanes = lanes or Lanes(settings.crawler, clock)
        #: what the lanes must not forget, kept in the lane store for the next owner of each host
        self.memory = LaneMemory(self.lanes, lane_store, clock)
        c = settings.crawler
        self.robots = RobotsCache(
            fetcher,
            clock,
            ttl_s=c.robots_ttl_s,
            agent=settings.http.user_agent,
            max_lane_wait_s=c.max_lane_wait_s,
            store=lane_store,
        )
        self.coalescer = Coalescer(clock, c.coalesce_window_s)
        #: opens a feed's sealed credentials, for the one request that sends them
        self._box = SecretBox.from_settings(settings)
        self._blobs = blobs

    async def handle(self, msg: CrawlRequest, ctx: Context) -> list[Output]:
        if self.overload is not None:
            self.overload.check(msg, ctx.attempt)  # raises Deferred: the runtime re-queues it with a delay
        result = await self.crawl(msg)
        if result is None:
            return []  # another request's result already carries these requesters
        return [Output(TOPIC_FOR_KIND[msg.kind], result)]

    async def crawl(self, req: CrawlRequest) -> CrawlResult | None:
        """The result for ``req``, or None when a shared fetch's result already answers its requesters."""
        # a feed's credentials are part of what it asks: another asker of the same URL, without them or
        # with others, is never answered with what they fetched; a request carrying a feed's document (its
        # page's article: cubes/parser/fulltext.py) shares its fetch only with requests carrying that
        # document: the result must carry it back to its requester
        sealed = hashlib.sha256(req.credentials.encode()).hexdigest() if req.credentials else ""
        carried = f"{req.document.source.id}@{req.document.version}" if req.document is not None else ""
        key = (req.kind.value, req.url, req.etag or "", req.last_modified or "", sealed, carried)
        share = await self.coalescer.run(key, req.requesters, lambda: self._crawl(req), due_at=req.due_at)
        return share.result

    async def _crawl(self, req: CrawlRequest) -> CrawlResult:
        result = await self._crawl_once(req)
        self.metrics.fetched(req.host, result.status)  # once per crawl: coalesced askers share this one
        return result

    async def _crawl_once(self, req: CrawlRequest) -> CrawlResult:
        started = self.clock.monotonic()
        try:
            url = self.fetcher.guard.check_url(req.url)
        except BlockedAddressError as exc:
            return self._result(req, FetchStatus.blocked_address, error=exc.message)
        except ValueError as exc:
            return self._result(req, FetchStatus.bad_url, error=str(exc))
        origin_headers: dict[str, str] | None = None
        if req.credentials:
            try:
                origin_headers = fetch_headers(req.credentials, self._box)
            except Unsealable as exc:
                return self._result(req, FetchStatus.credentials_error, error=exc.message)
        lane = await self.memory.lane(url.host or req.host)
        c = self.settings.crawler

        deadline = None if self.budget_s is None else started + self.budget_s
        verdict = await self.robots.check(url, lane, deadline=deadline)
        # a robots.txt answer may have set a Crawl-delay, or a 429 to it paused the lane: saved first
        await self.memory.saved(lane)
        if not verdict.allowed:
            return self._result(req, verdict.status, error=verdict.reason)

        max_wait = c.max_lane_wait_s if deadline is None else min(c.max_lane_wait_s, deadline - self.clock.monotonic())
        if not await lane.acquire(max(0.0, max_wait)):
            wait = lane.next_allowed_at() - self.clock.monotonic()
            return self._result(req, FetchStatus.throttled, error=f"host lane busy for {wait:.0f} s more")
        fetched: FetchResult | None = None
        try:
            fetched = await self.fetcher.fetch(
                url,
                kind=req.kind,
                etag=req.etag,
                last_modified=req.last_modified,
                origin_headers=origin_headers,
                total_s=req.timeout_s,
                timeout_s=None if deadline is None else deadline - self.clock.monotonic(),
                # a body that will travel as a blob reference streams to disk on its way in, so a big
                # catalog or video never sits in memory whole
                spill_over=c.inline_body_max if self._blobs is not None else None,
            )
        finally:
            lane.release(signal_for(fetched) if fetched is not None else None)
        # order matters: a pause the partner asked for is saved before the result that reports it is
        # published, so a crawler killed right after cannot leave a next owner not knowing of it
        await self.memory.saved(lane)
        return await self._from_fetch(req, fetched, self.clock.monotonic() - started, lane.crawl_delay_capped)

    async def _from_fetch(
        self, req: CrawlRequest, f: FetchResult, elapsed_s: float, crawl_delay_capped: float | None = None
    ) -> CrawlResult:
        body, body_ref = f.body, None
        inline_max = self.settings.crawler.inline_body_max
        if f.body_file is not None:
            try:
                if f.status is FetchStatus.ok:
                    body_ref = await self._put_blob_file(req, f.body_file, f.body_sha256, f.headers.get("content-type"))
            finally:
                await asyncio.to_thread(f.body_file.unlink, True)
        elif f.status is FetchStatus.ok and body is not None and len(body) > inline_max:
            body_ref = await self._put_blob(req, body, f.headers.get("content-type"))
            body = None
        if f.status is not FetchStatus.ok:
            body = None  # error bodies stay out of the topics (they are for `turbocubes fetch`)
        return self._result(
            req,
            f.status,
            final_url=f.final_url,
            http_status=f.http_status,
            headers=f.headers,
            body=body,
            body_ref=body_ref,
            size=f.size,
            error=f.error,
            elapsed_ms=elapsed_s * 1000.0,
            crawl_delay_capped=crawl_delay_capped,
        )

    async def _put_blob(self, req: CrawlRequest, body: bytes, content_type: str | None) -> str:
        if self._blobs is None:
            raise RuntimeError("a body over crawler.inline_body_max needs a blob store")
        store = await self._blobs()
        # content-addressed: the same body fetched twice is stored once
        key = f"crawl/{req.kind.value}/{hashlib.sha256(body).hexdigest()}"
        return await store.put(key, body, content_type=content_type)

    async def _put_blob_file(self, req: CrawlRequest, path: Path, sha256: str | None, content_type: str | None) -> str:
        assert self._blobs is not None  # a body spills only when there is a blob store
        assert sha256 is not None  # computed while the body streamed to the file
        store = await self._blobs()
        return await store.put_file(f"crawl/{req.kind.value}/{sha256}", path, content_type=content_type)

    def _result(self, req: CrawlRequest, status: FetchStatus, **fields: object) -> CrawlResult:
        headers = fields.get("headers") or {}
        assert isinstance(headers, dict)
        return CrawlResult(
            kind=req.kind,
            url=req.url,
            host=req.host,
            status=status,
            content_type=headers.get("content-type"),
            requesters=list(req.requesters),
            feed_id=req.feed_id,
            requested_at=req.requested_at,
            document=req.document,
            fetched_at=self.clock.now(),
            trace_id=req.trace_id,
            **fields,  # type: ignore[arg-type]
        )
