"""The parser cube's handler: bodies in, documents and deletions out (docs/architecture.md sections 2-3).

For each ``crawl.feeds`` result and each ``partner.uploads`` payload:

0. read the source's ``shared.webmaster.hosts.HostScope``: the hosts its items may be on (its own; the
   ``www.`` alias when its tenant verified both). A tenant source whose host is no longer
   verified for it publishes nothing and its body is not read (one ``host.not_verified`` problem);
1. read the body (inline, or from the blob store by ``body_ref``); a feed body
   byte-identical to the last one processed for the feed is skipped at once
   (its xxh3 is kept in the hash store under ``<feed url>#body``) -- unless the
   fetch answers a "fetch now": the webmaster fixed something, maybe outside the
   feed (an image put back at its URL), so the body is read, the pages that lost
   something are published again even unchanged, and every document asks for
   the images that failed before to be fetched again (``items.Source``);
2. parse it (``feed.parse_feed``; pure, in a worker thread when large) and
   prepare the items (``documents``: identity, sanitizing, media, hash); a
   large YML catalog is streamed instead (``catalog_load.py``);
3. per item (``items.py``), in this order (ORDER MATTERS):
   a. ownership: a URL belongs to one source; a source of higher priority
      (``SOURCE_PRIORITY``: partner API > Turbo > YML / RSS > autoparser)
      takes it over, an equal or lower one is refused -- pages never flap.
      The conflict is written to the losing source's status;
   b. GUID following: an item whose link changed under the same GUID moves:
      the old URL gets a tombstone, the new one a document;
   c. dedupe: the hash this source stored for the URL -> unchanged: nothing
      (one read, before a.); changed or new: a ``Document`` with the next version.
   Items go ``items.BATCH`` (1,000) at a time, each step one batch call to the
   hash store (``get_many``, ``owners``, ``claim_many``, ``urls_for_guids``);
4. ``turbo="false"`` items and JSON ``"action": "delete"`` become
   ``DocumentDeleted`` tombstones, once (a tombstone hash is stored);
5. the result goes to the feed's status (errors with line and column) or to
   the upload task (one result per item), see ``status.py``.

Big catalogs are streamed, in bounded memory (``catalog_load.py`` says how and why).

Crash safety: the store writes that make an item "seen" (its hash, its GUID, a released old URL, the body
hash, the upload task's "done") run in a ``Context.after_commit`` hook, i.e. only once the runtime has the
outputs acknowledged and the input committed. A crash or a failed publish before that leaves them unwritten,
so the redelivered message produces the same documents again (with a fresh version; downstream keeps the
newest): at least once, never lost. They are batched as well (``items.record``: releases, guids, then
``check_and_set_many`` per 1,000 URLs; the body hash or the task last). Versions are computed here exactly as
``check_and_set`` will store them: max(now in microseconds, every earlier version of the URL + 1).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import io
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import IO

from cubes.parser import metrics
from cubes.parser.catalog_load import CatalogLoader, add_warnings
from cubes.parser.catalog_stream import STREAM_LIMIT, catalog_opener
from cubes.parser.checks import check_task_id, check_upload, feed_named, feed_share
from cubes.parser.collector import collector_paused
from cubes.parser.compressed import is_gzip
from cubes.parser.documents import prepare_deletions, source_kind
from cubes.parser.feed import Limits, parse_feed, yml_source
from cubes.parser.filters import filtered
from cubes.parser.items import ItemRecorder, Seen, Source, record
from cubes.parser.lifecycle import Lifecycle, complete
from cubes.parser.model import DetectedFormat, FeedMeta, ItemError, ParseResult, Severity
from cubes.parser.preparing import Preparer
from cubes.parser.sanitize import ContentCleaner
from cubes.parser.status import Fetch, Outcome, write_feed_status, write_fetch_outcome, write_task
from shared.blobs.base import BlobStore
from shared.clock import Clock, SystemClock
from shared.config import ParserConfig
from shared.errors import NotFound, Reject
from shared.hashing import body_hash as hash_body
from shared.hashing import file_hash
from shared.messages import (
    CrawlKind,
    CrawlResult,
    FeedRegistration,
    FetchStatus,
    PartnerUpload,
    SourceKind,
    SourceRef,
    UploadFormat,
)
from shared.offload import Offload
from shared.problems import fetch_problem
from shared.runtime.cube import Context, Output
from shared.stores import Feed, PageState, Stores, TaskStatus
from shared.urls import canonical_url
from shared.webmaster.feed_options import FeedFilters, FeedOptions, FullText, crawl_fields
from shared.webmaster.feeds import FETCH_NOW_PREFIX
from shared.webmaster.hosts import HostScope, tenant_scope

__all__ = ["ParserHandler"]

log = logging.getLogger(__name__)

#: bodies larger than this are parsed, and their items prepared, in a worker thread so the event loop keeps
#: serving other lanes. Below it the work stays on the loop: a 100-item news feed (~150 KB) is ~2 ms to
#: parse and ~4 ms to prepare, most of it holding the GIL (nh3 lets it go, but its attribute filter takes
#: it back for every URL: the loop got ~1/3 of its pace beside a thread cleaning news HTML), so a thread
#: would not run it beside the loop, only add the hop and GIL handoffs every switch interval (5 ms). An
#: item past 16 KB of HTML is prepared in a worker process whatever the body (``preparing.py``)
_THREAD_BYTES = 256 * 1024
#: feeds with more items than this are prepared (sanitized, hashed) in a worker thread whatever their size
_THREAD_ITEMS = 200
#: pages a "fetch now" publishes again at most (those that lost something): a catalog with more broken
#: pages than this rebuilds the rest at their items' next change, or at the next "fetch now"
RESEND_MAX = 10_000


def _body_key(feed_url: str) -> str | None:
    """Where the hash of a feed's whole body is kept: the feed URL with a fragment no document URL has."""
    try:
        return canonical_url(feed_url) + "#body"
    except ValueError:
        return None


def _host_refused(scope: HostScope) -> ParseResult:
    """The whole body refused, unread: its source no longer holds a verified claim on its host."""
    problem = ItemError(scope.refusal(scope.host), code="host.not_verified")
    return ParseResult(DetectedFormat.unknown, fatal=True, errors=[problem])


def _too_large(size: int) -> ParseResult:
    """A body too big to read whole that is not a catalog we can stream: refused, and why."""
    problem = ItemError(
        f"the feed is {size:,} bytes: only a YML catalog is read as a stream past the parser's"
        " limit (parser.max_body_bytes); split the feed, or serve the catalog with an XML declaration that"
        " names its charset",
        code="feed.too_large",
    )
    return ParseResult(DetectedFormat.unknown, fatal=True, errors=[problem])


class ParserHandler:
    def __init__(
        self,
        stores: Stores,
        blobs: Callable[[], Awaitable[BlobStore]],
        settings: ParserConfig | None = None,
        clock: Clock | None = None,
        *,
        cleaner: ContentCleaner | None = None,
        max_body_bytes: int | None = None,
        offload: Offload | None = None,
    ) -> None:
        settings = settings or ParserConfig()
        #: the safe-HTML policy with the configured video hosts (``kvwriter.video_hosts``)
        self.cleaner = cleaner or ContentCleaner()
        self.stores = stores
        self._blobs = blobs
        self.clock = clock or SystemClock()
        self.limits = Limits(max_items=settings.max_items, max_item_bytes=settings.max_item_bytes)
        if max_body_bytes is not None:  # a gzipped body inflates at most to a fetched feed's limit
            self.limits = dataclasses.replace(self.limits, max_body_bytes=max_body_bytes)
        #: where each item is prepared: the loop, a thread, or (past 16 KB of HTML) a worker process
        self.preparer = Preparer(self.cleaner, offload, settings.item_deadline_s)
        self.items = ItemRecorder(stores)
        self.lifecycle = Lifecycle(stores, self.items, self.clock)
        self.catalogs = CatalogLoader(
            stores, self.items, self.lifecycle, self.preparer, self._rejects, self.clock, self.limits
        )

    async def handle(self, msg: CrawlResult | PartnerUpload | FeedRegistration, ctx: Context) -> list[Output]:
        if isinstance(msg, CrawlResult):
            return await self.handle_feed(msg, ctx)
        if isinstance(msg, PartnerUpload):
            return await self.handle_upload(msg, ctx)
        if isinstance(msg, FeedRegistration):
            run = await self.lifecycle.feed_registered(msg)
            self._after_commit(ctx, run)
            return run.outputs
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
        # a gzip body is inflated in the thread too (zlib lets the GIL go): a 60 KB gzip bomb is 50 MB
        if len(body) > _THREAD_BYTES or is_gzip(body):
            return await asyncio.to_thread(lambda: parse_feed(body, limits=self.limits, **kw))  # type: ignore[arg-type]
        return parse_feed(body, limits=self.limits, **kw)  # type: ignore[arg-type]

    def _after_commit(self, ctx: Context, run: Outcome) -> None:
        """Run the store writes of ``run`` once its outputs are durable and the input committed."""
        if not run.writes:
            return
        writes = list(run.writes)

        async def commit() -> None:
            # in order: the items' batched writes, then the body hash / task, which says "all of it is done"
            for write in writes:
                await write()

        ctx.after_commit(commit)

    # ------------------------------------------------------------------ feeds

    async def handle_feed(self, msg: CrawlResult, ctx: Context) -> list[Output]:
        if msg.kind is not CrawlKind.feed:
            return []
        msg = feed_named(msg)  # a result a check shares with the feed's own poll (checks.py)
        if (task_id := check_task_id(msg.requesters)) is not None:
            checked, rest = await self._check(msg, task_id, ctx), feed_share(msg)
            return checked if rest is None else checked + await self.handle_feed(rest, ctx)
        feed = await self.stores.feeds.get(msg.feed_id) if msg.feed_id else None
        if feed is not None and feed.deleted:
            return []
        if msg.status is not FetchStatus.ok:
            # not modified, or a failure: nothing to parse (the scheduler learns from it), but the
            # webmaster's history shows the fetch and what went wrong with it
            if feed is not None:
                await write_fetch_outcome(self.stores.problems, feed.feed_id, msg, items=feed.status.items)
            return []
        host = feed.host if feed is not None else msg.host
        scope = await tenant_scope(self.stores.tenants, feed.tenant_id if feed is not None else None, host)
        if not scope.verified:
            # the tenant's right on the host ended since the feed was registered: nothing of it is published
            refused = _host_refused(scope)
            if msg.feed_id:
                await write_feed_status(
                    self.stores, msg.feed_id, refused, Outcome(errors=list(refused.errors)), fetch=Fetch.of(msg)
                )
            return []
        if not await self.stores.tenants.turbo_enabled(host, feed.tenant_id if feed is not None else None):
            return await self._turbo_off(msg, ctx, feed, host)
        async with contextlib.AsyncExitStack() as held:
            body = await self._feed_body(msg, held)
            return await self._handle_body(msg, ctx, feed, host, scope, body)

    async def _turbo_off(self, msg: CrawlResult, ctx: Context, feed: Feed | None, host: str) -> list[Output]:
        """The host's Turbo pages are switched off: its pages removed, nothing published (``lifecycle.py``)."""
        kind = source_kind(DetectedFormat(feed.format)) if feed is not None and feed.format != "auto" else None
        run = await self.lifecycle.host_off(
            msg.feed_id, feed.tenant_id if feed is not None else None, host, kind or SourceKind.rss
        )
        off = ParseResult(DetectedFormat.unknown)
        removed = run.count({"deleted"})
        off.errors.append(
            ItemError(
                f"Turbo pages are switched off for {host}: nothing is published"
                + (f"; {removed} page(s) removed" if removed else ""),
                severity=Severity.warning,
                code="host.turbo_off",
            )
        )
        run.errors.extend(off.errors)
        if msg.feed_id:
            await write_feed_status(self.stores, msg.feed_id, off, run, 0, fetch=Fetch.of(msg))
        body_key = _body_key(msg.url)
        if body_key is not None:
            hashes, store_id = self.stores.hashes, f"feed:{msg.feed_id}" if msg.feed_id else f"url:{msg.url}"

            async def forget_body() -> None:
                await hashes.forget(store_id, body_key)

            # switched on again, the next fetch reads the body whole, even unchanged: it republishes
            run.writes.append(forget_body)
        self._after_commit(ctx, run)
        return run.outputs

    async def _feed_body(self, msg: CrawlResult, held: contextlib.AsyncExitStack) -> bytes | Path:
        """The body in memory, or for a blob reference a local file (kept while ``held`` lasts)."""
        if msg.body is not None or not msg.body_ref:
            return await self._body(msg.body, msg.body_ref)
        try:
            return await held.enter_async_context((await self._blobs()).local_copy(msg.body_ref))
        except NotFound:
            raise Reject(f"body blob {msg.body_ref!r} does not exist (expired or never written)") from None

    async def _handle_body(
        self, msg: CrawlResult, ctx: Context, feed: Feed | None, host: str, scope: HostScope, source: bytes | Path
    ) -> list[Output]:
        url = msg.final_url or msg.url
        store_id = f"feed:{msg.feed_id}" if msg.feed_id else f"url:{msg.url}"
        body_key = _body_key(msg.url)
        body_hash = hash_body(source) if isinstance(source, bytes) else await asyncio.to_thread(file_hash, source)
        # "fetch now": the webmaster fixed something and wants to see it, maybe outside the feed (an image
        # put back at its URL): the body is read even if unchanged, the pages that lost something are
        # published again, and their failed images ordered again at once (``items.Source``)
        fix = msg.fetched_at if any(r.startswith(FETCH_NOW_PREFIX) for r in msg.requesters) else None
        if body_key is not None and fix is None:
            # the whole body as it was last time: every item is unchanged, skip them all in one read
            # (a 100,000-offer catalog would otherwise cost a store round trip per offer)
            entry = await self.stores.hashes.get(store_id, body_key)
            if entry is not None and entry.content_hash == body_hash:
                metrics.SAME_BODY.labels((feed.format if feed else None) or "auto").inc()
                if feed is not None:
                    await write_fetch_outcome(self.stores.problems, feed.feed_id, msg, items=feed.status.items)
                return []
        declared = feed.format if feed else None
        catalog, encoding, body, size = await self._catalog(source, msg.content_type, declared)
        count: int | None = None
        if catalog is not None:
            result = ParseResult(
                DetectedFormat.yml, meta=FeedMeta(parser="iterparse", version="yml"), encoding=encoding
            )
        elif body is None:
            result = _too_large(size)
        else:
            result = await self._parse(body, url=url, content_type=msg.content_type, declared_format=declared)
        kind = source_kind(result.format)
        src = Source(
            kind=kind,
            ref=SourceRef(kind=kind, id=msg.feed_id or msg.url),
            store_id=store_id,
            host=host,
            seen_at=msg.fetched_at,
            scope=scope,
            retry_failed_before=fix,
            resend=await self._lost_pages(store_id) if fix is not None else frozenset(),
            tenant_id=feed.tenant_id if feed is not None else None,
            full_text=FeedOptions.from_json(feed.options).full_text if feed is not None else FullText.never,
            feed_url=feed.url if feed is not None else None,
            fetch_fields=crawl_fields(feed.options, feed.secret) if feed is not None else {},
        )
        run = Outcome(errors=list(result.errors))
        if catalog is not None:
            with collector_paused():  # see collector.py: half the time of a big first load otherwise
                count = await self.catalogs.load(catalog, url, result, src, run, ctx, feed_url=msg.url)
        elif not result.fatal and body is not None:
            filters = FeedOptions.from_json(feed.options).filters if feed is not None and feed.options else None
            await self._apply(result, src, run, len(body), feed_url=msg.url, filters=filters)
        if result.fatal:
            metrics.FEED_ERRORS.labels(kind.value).inc()
        if msg.feed_id:
            await write_feed_status(self.stores, msg.feed_id, result, run, count, fetch=Fetch.of(msg))
        if body_key is not None:
            hashes, now = self.stores.hashes, self.clock.now()

            async def record_body() -> None:
                await hashes.check_and_set(store_id, body_key, body_hash, now=now)

            if not run.keep_reading:  # a held catalog loss is read again, even unchanged (removals.py)
                run.writes.append(record_body)  # last: only once every item of it is recorded
        self._after_commit(ctx, run)
        return run.outputs

    async def _check(self, msg: CrawlResult, task_id: str, ctx: Context) -> list[Output]:
        """A feed check (``checks.py``): the fetched body as a debug upload of its task."""
        task = await self.stores.tasks.get(task_id)
        if task is None:
            log.warning("feed check %s has no task; its fetch is dropped", task_id)
            return []
        if msg.status is not FetchStatus.ok:
            found = fetch_problem(msg.status.value, msg.http_status, msg.error)
            await self.stores.tasks.update(
                task_id, status=TaskStatus.failed, errors=[found.describe()], problems=[found], now=self.clock.now()
            )
            return []
        body = await self._body(msg.body, msg.body_ref)  # relative links resolve against the feed's own URL
        return await self.handle_upload(check_upload(msg, task, body), ctx, base_url=msg.final_url or msg.url)

    # ------------------------------------------------------------------ uploads

    async def handle_upload(self, msg: PartnerUpload, ctx: Context, *, base_url: str | None = None) -> list[Output]:
        # read when the body is parsed, not only when it was accepted: a claim lost in between counts
        scope = await tenant_scope(self.stores.tenants, msg.tenant_id, msg.host)
        body = b"" if not scope.verified else await self._body(msg.body, msg.body_ref)
        declared = None if msg.format is UploadFormat.json else msg.format.value
        if not scope.verified:
            result = _host_refused(scope)
        elif msg.mode != "debug" and not await self.stores.tenants.turbo_enabled(msg.host, msg.tenant_id):
            result = ParseResult(
                DetectedFormat.unknown,
                fatal=True,
                errors=[
                    ItemError(
                        f"Turbo pages are switched off for {msg.host}: nothing is published",
                        severity=Severity.error,
                        code="host.turbo_off",
                    )
                ],
            )
        elif msg.format is UploadFormat.json and body.lstrip()[:1] not in (b"{", b"["):
            result = ParseResult(
                DetectedFormat.json,
                fatal=True,
                errors=[
                    ItemError("format=json but the body is not a JSON document", 1, 1, code="feed.format_mismatch")
                ],
            )
        else:
            result = await self._parse(body, url=base_url or f"https://{msg.host}/", declared_format=declared)
        src = Source(
            kind=SourceKind.upload,
            ref=SourceRef(kind=SourceKind.upload, id=msg.task_id),
            store_id=f"tenant:{msg.tenant_id}",
            host=msg.host,
            seen_at=msg.received_at,
            preview=msg.mode == "debug",
            scope=scope,
            # a check judges as the pipeline would now: an image that failed before is fetched again
            retry_failed_before=msg.received_at if msg.mode == "debug" else None,
            tenant_id=msg.tenant_id,
        )
        run = Outcome(errors=list(result.errors))
        if not result.fatal:
            await self._apply(result, src, run, len(body))
        else:
            metrics.FEED_ERRORS.labels(SourceKind.upload.value).inc()
        preview = [o.message.url for o in run.outputs if src.preview and o.topic == "documents.parsed"]  # type: ignore[attr-defined]
        tasks, now = self.stores.tasks, self.clock.now()

        async def record_task() -> None:
            await write_task(tasks, msg.task_id, result, run, preview, now)

        run.writes.append(record_task)  # "done" only once the documents are durable
        self._after_commit(ctx, run)
        return run.outputs

    # ------------------------------------------------------------------ items

    def _rejects(self, errs: list[ItemError], parse_errors: list[ItemError], src: Source, run: Outcome) -> None:
        """Items refused while preparing (``errs``) or parsing: into the errors and the per-item results."""
        for err in errs:
            run.errors.append(err)
            run.results.append((err.link or f"#{(err.index or 0) + 1}", "rejected", err.reason))
        in_parse = 0
        for e in parse_errors:
            # an item the parser could not read (None: the body as a whole; a warning: read, repaired)
            if e.index is not None and e.severity is Severity.error:
                in_parse += 1
                run.results.append((e.link or f"#{e.index + 1}", "rejected", e.reason))
        metrics.REJECTED.labels(src.kind.value).inc(len(errs) + in_parse)

    async def _apply(
        self,
        result: ParseResult,
        src: Source,
        run: Outcome,
        body_bytes: int,
        *,
        feed_url: str | None = None,
        filters: FeedFilters | None = None,
    ) -> None:
        metrics.PARSED.labels(src.kind.value).inc(len(result.items) + len(result.deletions))
        # sanitizing costs by the byte (nh3: ~15 us per KB): a few huge items stay off the loop too
        items = [*result.items, *result.listings]  # a catalog's category pages are published like its offers
        threaded = len(items) > _THREAD_ITEMS or body_bytes > _THREAD_BYTES
        cands, errs = await self.preparer.prepare(items, src.hosts, threaded=threaded)
        removals, derrs = prepare_deletions(result.deletions, feed_host=src.hosts)
        if threaded:  # the per-item bookkeeping of a large body is a thread's too (~1 us an item)
            await asyncio.to_thread(self._rejects, [*errs, *derrs], result.errors, src, run)
        else:
            self._rejects([*errs, *derrs], result.errors, src, run)
        if filters is not None and not filters.empty:
            cands = filtered(cands, filters, run)
        add_warnings(cands, run)
        parsed_at = self.clock.now()
        seen = Seen()
        await self.items.apply(cands, src, run, seen, parsed_at)
        await self.items.remove_many(
            removals, src, run, seen, parsed_at, reasons=["removed by the source"] * len(removals)
        )
        if result.format is DetectedFormat.yml and feed_url and complete(result):
            await self.lifecycle.follow_catalog(src, run, seen, parsed_at, feed_url, {c.url for c in cands})
        # previews add nothing to it
        run.writes.append(record(self.stores.hashes, src.store_id, seen, parsed_at, seen_at=src.seen_at))

    async def _lost_pages(self, store_id: str) -> frozenset[str]:
        """The pages of ``store_id`` held back or published without something: what "fetch now" rebuilds."""
        rows = await self.stores.problems.page_rows(
            source_id=store_id, states=(PageState.held, PageState.incomplete), limit=RESEND_MAX
        )
        return frozenset(r.key for r in rows)

    async def _catalog(
        self, source: bytes | Path, content_type: str | None, declared: str | None
    ) -> tuple[Callable[[], IO[bytes]] | None, str | None, bytes | None, int]:
        """How to stream ``source`` when it is a big YML catalog (and its charset), else its bytes; its size.

        The bytes are None for a file too big to read whole that is not a catalog lxml can stream.
        """
        if isinstance(source, bytes):
            found = None
            if len(source) > _THREAD_BYTES:
                found = yml_source(source, content_type=content_type, declared_format=declared, limits=self.limits)
            if found is None:
                return None, None, source, len(source)
            data, encoding = found
            return lambda: io.BytesIO(data), encoding, None, len(source)
        size = (await asyncio.to_thread(source.stat)).st_size
        opener = await asyncio.to_thread(catalog_opener, source, declared, STREAM_LIMIT)
        if opener is not None:
            return opener, None, None, size
        if size > self.limits.max_body_bytes:
            return None, None, None, size
        return None, None, await asyncio.to_thread(source.read_bytes), size
