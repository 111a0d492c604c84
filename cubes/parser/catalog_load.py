"""A big YML catalog, streamed in bounded memory (docs/architecture.md section 3, parser).

Big catalogs: a YML catalog of 100,000+ offers travels as a blob reference
and its first load publishes every offer. One store round trip per offer and
step made that 5,000 offers = 3.4 s in the handler on SQLite, so 100,000 ran
past ``runtime.handler_timeout_s`` (30 s) and were dead-lettered after the
retries: a catalog that could never be loaded. Now (``bench/parser.py`` (d)):

* the store's share is a few hundred batch calls per 100,000 offers;
* the catalog is streamed ``BATCH`` offers at a time (``iter_yml`` and
  ``prepare_items`` in one worker thread -- an offer past 16 KB of HTML in a
  worker process, ``preparing.py`` -- then the batch through the store
  and into documents), so parsed offers and candidates never pile up;
* the garbage collector is paused for the load (``collector.py``): its full
  passes over the growing heap of documents were half of the time;
* each batch counts as the handler's progress (``Context.progress``): the
  runtime's watchdog judges the load by its batches, never by its total, which
  grows with the catalog (a fixed 120 s was overrun by a 100,000-offer catalog
  on every attempt on a busy machine; a million offers would have been
  dead-lettered). The cube's own limit (``parser.handler_timeout_s``) bounds one
  step: a feed parsed whole, or one batch.

100,000 offers: ~9 s in the handler on a busy 2-CPU machine (~14 s with the
batch calls alone; about 60 s one by one, extrapolated from 20,000). Later
fetches are cheap: a byte-identical body is one read; a changed catalog is one
batch read per 1,000 offers.

Bounded memory (``bench/parser.py`` (d), 1,000,000 offers): a
body that came as a blob reference is read from a local file
(``BlobStore.local_copy``; the crawler streamed it to the blob store), hashed as
a stream (``shared.hashing.file_hash``), and a YML catalog in it is parsed as a
stream (``catalog_stream.py``: gzip inflated on the way, bounded by
``STREAM_LIMIT``). Under a runner, each batch's documents are emitted
(``Context.emit``) and, once acknowledged, its hashes recorded at once -- so
neither documents nor their hashes pile up, and a crash resumes where the
acknowledged offers end (see ``_load_catalog``). The duplicate-link check keeps
8 bytes an offer (``UrlIndex``), the per-offer results fold into counts. A
body that is not a streamable catalog is read whole within
``parser.max_body_bytes``, or refused with ``feed.too_large``.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import IO

from cubes.parser import metrics
from cubes.parser.catalog_stream import UrlIndex
from cubes.parser.categories import Listings
from cubes.parser.compressed import InflateError
from cubes.parser.documents import Candidate, prepare_items
from cubes.parser.items import BATCH, ItemRecorder, Seen, Source, record
from cubes.parser.lifecycle import Lifecycle, complete
from cubes.parser.model import ItemError, ParsedItem, ParseResult
from cubes.parser.preparing import Preparer, Ready
from cubes.parser.status import Outcome
from cubes.parser.turbo import Limits, oversized
from cubes.parser.xmlsafe import HostileXml
from cubes.parser.yml import Catalog, iter_yml
from shared.clock import Clock
from shared.runtime.cube import Context
from shared.stores import Stores

__all__ = ["CatalogLoader", "add_warnings"]

Rejects = Callable[[list[ItemError], list[ItemError], Source, Outcome], None]


def add_warnings(cands: list[Candidate], run: Outcome) -> None:
    """What the pages of ``cands`` could not carry (published all the same): into the run's problems."""
    for cand in cands:
        run.errors.extend(cand.warnings)


class CatalogLoader:
    """Streams a catalog through the store: the parser handler's path for big YML bodies."""

    def __init__(
        self,
        stores: Stores,
        items: ItemRecorder,
        lifecycle: Lifecycle,
        preparer: Preparer,
        rejects: Rejects,
        clock: Clock,
        limits: Limits | None = None,
    ) -> None:
        #: an offer's most bytes (``parser.max_item_bytes``): a bigger one is refused as it streams by
        self.limits = limits or Limits()
        self.stores = stores
        self.items = items
        self.lifecycle = lifecycle
        self.preparer = preparer
        self.rejects = rejects
        self.clock = clock

    async def load(
        self,
        open_catalog: Callable[[], IO[bytes]],
        url: str,
        result: ParseResult,
        src: Source,
        run: Outcome,
        ctx: Context,
        *,
        feed_url: str | None = None,
    ) -> int:
        """A YML catalog streamed ``BATCH`` offers at a time; how many offers it held.

        Parsing and preparing a batch run in a worker thread, then the batch goes through the store
        and becomes documents. One thread for the whole catalog, because lxml's iterparse should stay
        on the thread it started on.

        Bounded memory: with a runner (``ctx.can_emit``) each batch's documents are
        emitted as soon as the batch is through the store, and once the broker has them the batch is
        recorded as seen (its hashes) right away, not after the commit. So neither the documents nor
        their hashes pile up, and a crash half-way resumes: the redelivered catalog finds the offers
        already published unchanged and goes on from there. The body's own hash is still written
        last, after the commit: only a catalog fully through counts as "the same body next time".
        """
        stream = open_catalog()
        catalog, listings = Catalog(), Listings()
        entries = iter_yml(stream, base=url, catalog=catalog)
        first = UrlIndex()
        host = src.hosts
        state = {"offers": 0, "listed": False}

        def next_batch() -> tuple[list[ParsedItem], list[ItemError]]:
            items: list[ParsedItem] = []
            broken: list[ItemError] = []
            for entry in itertools.islice(entries, BATCH):
                if isinstance(entry, ItemError):
                    broken.append(entry)
                elif (refused := oversized(entry, self.limits)) is not None:
                    broken.append(refused)
                else:
                    items.append(entry)
                    listings.add(entry)
            state["offers"] += len(items)
            if not items and not broken and not state["listed"]:
                # the catalog is read: its category listing pages are the last batch (categories.py)
                state["listed"] = True
                items = listings.items(catalog, int(state["offers"]))
            return items, broken

        def prepare(items: list[ParsedItem], ready: Ready) -> tuple[list[Candidate], list[ItemError]]:
            return prepare_items(items, feed_host=host, first=first, cleaner=self.preparer.cleaner, ready=ready)

        count = 0
        parsed_at = self.clock.now()
        seen = Seen()
        thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="parser-yml")
        loop = asyncio.get_running_loop()
        try:
            while True:
                try:
                    items, broken = await loop.run_in_executor(thread, next_batch)
                except HostileXml as exc:
                    result.errors.append(ItemError(exc.reason, exc.line, exc.column, code="xml.hostile"))
                    run.errors.append(result.errors[-1])
                    break
                if not items and not broken:
                    break
                # offers past 16 KB of HTML in worker processes, the rest on the reading thread (preparing.py)
                ready = await self.preparer.isolated(items, host)
                cands, errs = await loop.run_in_executor(thread, prepare, items, ready)
                count = int(state["offers"])  # offers only: the listing pages are not the catalog's
                result.errors.extend(broken)
                run.errors.extend(broken)
                self.rejects(errs, broken, src, run)
                add_warnings(cands, run)
                await self.items.apply(cands, src, run, seen, parsed_at)
                ctx.progress()  # a batch through: the watchdog's limit counts from here
                if ctx.can_emit and not src.preview:
                    # ORDER MATTERS: published (acknowledged) first, then recorded as seen
                    await ctx.emit(run.outputs)
                    run.outputs.clear()
                    await record(self.stores.hashes, src.store_id, seen, parsed_at, seen_at=src.seen_at)()
                    seen = Seen()
                    run.tally()
        except InflateError as exc:
            result.errors.append(ItemError(exc.reason, code=exc.code))
            run.errors.append(result.errors[-1])
        finally:
            thread.submit(stream.close)  # on the reading thread, after whatever it is still doing
            thread.shutdown(wait=False)  # not waiting on the event loop, should the handler be cut off
        metrics.PARSED.labels(src.kind.value).inc(count)
        result.fatal = not count and bool(result.errors)  # as parse_yml: nothing readable at all
        if not result.fatal and feed_url and complete(result):
            await self.lifecycle.follow_catalog(src, run, seen, parsed_at, feed_url, first)
        if not result.fatal:
            run.writes.append(record(self.stores.hashes, src.store_id, seen, parsed_at, seen_at=src.seen_at))
        return count
