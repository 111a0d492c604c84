"""The parser cube's handler: bodies in, documents and deletions out (DESIGN.md sections 2-3).

For each ``crawl.feeds`` result and each ``partner.uploads`` payload:

1. read the body (inline, or from the blob store by ``body_ref``); a feed body
   byte-identical to the last one processed for the feed is skipped at once
   (its xxh3 is kept in the hash store under ``<feed url>#body``);
2. parse it (``feed.parse_feed``; pure, in a worker thread when large) and
   prepare the items (``documents``: identity, sanitizing, media, hash);
3. per item (``items.py``), in this order (ORDER MATTERS):
   a. ownership: a URL belongs to one source; a source of higher priority
      (``SOURCE_PRIORITY``: partner API > Turbo > YML / RSS > autoparser)
      takes it over, an equal or lower one is refused -- pages never flap.
      The conflict is written to the losing source's status;
   b. GUID following: an item whose link changed under the same GUID moves:
      the old URL gets a tombstone, the new one a document;
   c. dedupe: the hash this source stored for the URL -> unchanged: nothing
      (one read, before a.); changed or new: a ``Document`` with the next version.
   Items run 32 at a time: their URLs are unique within a body, so their
   store round trips may overlap; results are merged back in feed order;
4. ``turbo="false"`` items and JSON ``"action": "delete"`` become
   ``DocumentDeleted`` tombstones, once (a tombstone hash is stored);
5. the result goes to the feed's status (errors with line and column) or to
   the upload task (one result per item), see ``status.py``.

Limit: a body is parsed into one ``ParseResult`` (in a worker thread when
large), so a first load of a huge catalog holds all its items and documents
in memory and costs a few store round trips per new offer. Measured on SQLite
here: 5,000 new offers = 3.4 s in the handler + 2 s of after-commit writes, so
100,000 new offers exceed ``runtime.handler_timeout_s`` (30 s). Later fetches
are cheap: a byte-identical body is one read; a changed catalog is one read
per offer (0.14 ms). Bounded-memory, batched first loads need a batch
``HashStore`` call (``check_and_set_many`` / ``get_many``) that
``stores/base.py`` lacks; ``iter_yml`` already streams (``turbocubes parse``
and the benchmark use it).

Crash safety: the store writes that make an item "seen" (its hash, its GUID,
a released old URL, the body hash, the upload task's "done") run in a
``Context.after_commit`` hook, i.e. only once the runtime has the outputs
acknowledged and the input committed. A crash or a failed publish before that
leaves them unwritten, so the redelivered message produces the same documents
again (with a fresh version; downstream keeps the newest): at least once,
never lost. Versions are computed here exactly as ``check_and_set`` will store
them: max(now in microseconds, every earlier version of the URL + 1).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from cubes.parser import metrics
from cubes.parser.dedupe import body_hash as hash_body
from cubes.parser.documents import prepare_deletions, prepare_items
from cubes.parser.feed import Limits, parse_feed
from cubes.parser.items import ItemRecorder, Source
from cubes.parser.model import DetectedFormat, ItemError, ParseResult
from cubes.parser.status import Outcome, write_feed_status, write_task
from shared.blobs.base import BlobStore
from shared.clock import Clock, SystemClock
from shared.config import ParserConfig
from shared.errors import NotFound, Reject
from shared.messages import (
    CrawlKind,
    CrawlResult,
    FetchStatus,
    PartnerUpload,
    SourceKind,
    SourceRef,
    UploadFormat,
)
from shared.runtime.cube import Context, Output
from shared.stores.base import Stores
from shared.urls import canonical_url

__all__ = ["ParserHandler", "source_kind"]

log = logging.getLogger(__name__)

#: bodies larger than this are parsed in a worker thread so the event loop keeps serving other lanes
_THREAD_BYTES = 256 * 1024
#: items whose store round trips run at once; enough to keep a PostgreSQL pool busy, small enough
#: that one big catalog does not starve the other lanes of the cube
_CONCURRENT_ITEMS = 32
#: feeds with more items than this are prepared (sanitized, hashed) in a worker thread
_THREAD_ITEMS = 200


def _body_key(feed_url: str) -> str | None:
    """Where the hash of a feed's whole body is kept: the feed URL with a fragment no document URL has."""
    try:
        return canonical_url(feed_url) + "#body"
    except ValueError:
        return None


def source_kind(fmt: DetectedFormat) -> SourceKind:
    if fmt is DetectedFormat.turbo:
        return SourceKind.turbo
    if fmt is DetectedFormat.yml:
        return SourceKind.yml
    return SourceKind.rss


class ParserHandler:
    def __init__(
        self,
        stores: Stores,
        blobs: Callable[[], Awaitable[BlobStore]],
        settings: ParserConfig | None = None,
        clock: Clock | None = None,
    ) -> None:
        settings = settings or ParserConfig()
        self.stores = stores
        self._blobs = blobs
        self.clock = clock or SystemClock()
        self.limits = Limits(max_items=settings.max_items, max_item_bytes=settings.max_item_bytes)
        self.items = ItemRecorder(stores, self.clock)

    def _now(self) -> datetime:
        return datetime.fromtimestamp(self.clock.time(), UTC)

    async def handle(self, msg: CrawlResult | PartnerUpload, ctx: Context) -> list[Output]:
        if isinstance(msg, CrawlResult):
            return await self.handle_feed(msg, ctx)
        if isinstance(msg, PartnerUpload):
            return await self.handle_upload(msg, ctx)
        raise Reject(f"the parser does not read {type(msg).__name__} messages")

    async def _body(self, body: bytes | None, ref: str | None) -> bytes:
        if body is not None:
            return body
        if not ref:
            raise Reject("message has neither a body nor a body_ref")
        try:
            return await (await self._blobs()).get(ref)
        except NotFound:
            raise Reject(f"body blob {ref!r} does not exist (expired or never written)") from None

    async def _parse(self, body: bytes, **kw: object) -> ParseResult:
        if len(body) > _THREAD_BYTES:
            return await asyncio.to_thread(lambda: parse_feed(body, limits=self.limits, **kw))  # type: ignore[arg-type]
        return parse_feed(body, limits=self.limits, **kw)  # type: ignore[arg-type]

    def _after_commit(self, ctx: Context, run: Outcome) -> None:
        """Run the store writes of ``run`` once its outputs are durable and the input committed."""
        if not run.writes:
            return
        writes = list(run.writes)

        async def commit() -> None:
            # items' writes are independent; the last one (body hash / task) waits for all of them
            *items, last = writes
            for start in range(0, len(items), _CONCURRENT_ITEMS):
                await asyncio.gather(*(w() for w in items[start : start + _CONCURRENT_ITEMS]))
            await last()

        ctx.after_commit(commit)

    # ------------------------------------------------------------------ feeds

    async def handle_feed(self, msg: CrawlResult, ctx: Context) -> list[Output]:
        if msg.kind is not CrawlKind.feed or msg.status is not FetchStatus.ok:
            return []  # not_modified, errors: the scheduler learns from those, nothing to parse
        feed = await self.stores.feeds.get(msg.feed_id) if msg.feed_id else None
        if feed is not None and feed.deleted:
            return []
        body = await self._body(msg.body, msg.body_ref)
        url = msg.final_url or msg.url
        store_id = f"feed:{msg.feed_id}" if msg.feed_id else f"url:{msg.url}"
        body_key = _body_key(msg.url)
        body_hash = hash_body(body)
        if body_key is not None:
            # the whole body as it was last time: every item is unchanged, skip them all in one read
            # (a 100,000-offer catalog would otherwise cost a store round trip per offer)
            entry = await self.stores.hashes.get(store_id, body_key)
            if entry is not None and entry.content_hash == body_hash:
                metrics.SAME_BODY.labels((feed.format if feed else None) or "auto").inc()
                return []
        result = await self._parse(
            body, url=url, content_type=msg.content_type, declared_format=feed.format if feed else None
        )
        kind = source_kind(result.format)
        src = Source(
            kind=kind,
            ref=SourceRef(kind=kind, id=msg.feed_id or msg.url),
            store_id=store_id,
            host=feed.host if feed is not None else msg.host,
            seen_at=msg.fetched_at,
        )
        run = Outcome(errors=list(result.errors))
        if not result.fatal:
            await self._apply(result, src, run)
        else:
            metrics.FEED_ERRORS.labels(kind.value).inc()
        if msg.feed_id:
            await write_feed_status(self.stores.feeds, msg.feed_id, result, run)
        if body_key is not None:
            hashes, now = self.stores.hashes, self._now()

            async def record_body() -> None:
                await hashes.check_and_set(store_id, body_key, body_hash, now=now)

            run.writes.append(record_body)  # last: only once every item of it is recorded
        self._after_commit(ctx, run)
        return run.outputs

    # ------------------------------------------------------------------ uploads

    async def handle_upload(self, msg: PartnerUpload, ctx: Context) -> list[Output]:
        body = await self._body(msg.body, msg.body_ref)
        declared = None if msg.format is UploadFormat.json else msg.format.value
        if msg.format is UploadFormat.json and body.lstrip()[:1] not in (b"{", b"["):
            result = ParseResult(DetectedFormat.json, fatal=True,
                                 errors=[ItemError("format=json but the body is not a JSON document", 1, 1)])
        else:
            result = await self._parse(body, url=f"https://{msg.host}/", declared_format=declared)
        src = Source(
            kind=SourceKind.upload,
            ref=SourceRef(kind=SourceKind.upload, id=msg.task_id),
            store_id=f"tenant:{msg.tenant_id}",
            host=msg.host,
            seen_at=msg.received_at,
            preview=msg.mode == "debug",
        )
        run = Outcome(errors=list(result.errors))
        if not result.fatal:
            await self._apply(result, src, run)
        else:
            metrics.FEED_ERRORS.labels(SourceKind.upload.value).inc()
        preview = [o.message.url for o in run.outputs if src.preview and o.topic == "documents.parsed"]  # type: ignore[attr-defined]
        tasks, now = self.stores.tasks, self._now()

        async def record_task() -> None:
            await write_task(tasks, msg.task_id, result, run, preview, now)

        run.writes.append(record_task)  # "done" only once the documents are durable
        self._after_commit(ctx, run)
        return run.outputs

    # ------------------------------------------------------------------ items

    async def _apply(self, result: ParseResult, src: Source, run: Outcome) -> None:
        metrics.PARSED.labels(src.kind.value).inc(len(result.items) + len(result.deletions))
        if len(result.items) > _THREAD_ITEMS:
            cands, errs = await asyncio.to_thread(prepare_items, result.items, feed_host=src.host)
        else:
            cands, errs = prepare_items(result.items, feed_host=src.host)
        removals, derrs = prepare_deletions(result.deletions, feed_host=src.host)
        for err in (*errs, *derrs):
            run.errors.append(err)
            run.results.append((err.link or f"#{(err.index or 0) + 1}", "rejected", err.reason))
        rejected_in_parse = sum(1 for e in result.errors if e.index is not None)
        metrics.REJECTED.labels(src.kind.value).inc(len(errs) + len(derrs) + rejected_in_parse)
        for e in result.errors:
            if e.index is not None:
                run.results.append((e.link or f"#{e.index + 1}", "rejected", e.reason))
        parsed_at = self._now()
        # items are independent (their URLs are unique within a body), so their store round trips
        # overlap; each item writes into its own Outcome, merged in feed order so results stay stable
        for start in range(0, len(cands), _CONCURRENT_ITEMS):
            chunk = cands[start : start + _CONCURRENT_ITEMS]
            parts = [Outcome() for _ in chunk]
            pairs = zip(chunk, parts, strict=True)
            await asyncio.gather(*(self.items.one(c, src, part, parsed_at) for c, part in pairs))
            for part in parts:
                run.merge(part)
        for rem in removals:
            await self.items.remove(rem, src, run, parsed_at, reason="removed by the source")
