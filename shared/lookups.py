"""Image-registry look-ups batched across documents, cached once ok (DESIGN.md section 2, media and delay).

The media cube needs one ``ImageRegistry.get_many`` per parsed document, the
delay cube one per released document, and a store round trip costs far more
than the query itself (a thread hop for SQLite, a network round trip for
PostgreSQL). Two things make the common case cheap:

* **Batching.** A cube runs several key-lanes at once. Look-ups asked for
  within one turn of the event loop are merged into one query and each caller
  gets its share (the DataLoader pattern: no timer, so no added latency; a lone
  document gets its own query at once).
* **A cache of ``ok`` records.** An image that is in the CDN stays there: the
  registry never turns ``ok`` into anything else (a failure does not downgrade
  it) and CDN objects are immutable and never deleted, so a remembered CDN URL
  is always valid. Only ``ok`` records are cached; pending and failed ones are
  always read fresh. Bounded LRU (``media.lookup_cache_size`` entries, ~200 bytes
  each; 0 turns it off). ``remember`` adds what a caller learnt elsewhere (the
  delay cube: the CDN URL a ``media.cached`` message announces, recorded in the
  registry before it was sent).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Iterable

from shared.stores import ImageRecord, ImageRegistry, ImageStatus

__all__ = ["LookupBatcher"]


class LookupBatcher:
    """``get_many`` for many concurrent callers through one ``ImageRegistry.get_many``."""

    def __init__(self, images: ImageRegistry, *, cache_size: int = 0) -> None:
        self._images = images
        self._cache: OrderedDict[str, ImageRecord] = OrderedDict()
        self._cache_size = cache_size
        self._urls: set[str] = set()
        self._waiter: asyncio.Future[dict[str, ImageRecord]] | None = None
        # strong references: a task only referenced by the loop may be collected mid-flight
        self._tasks: set[asyncio.Task[dict[str, ImageRecord]]] = set()

    async def get_many(self, urls: Iterable[str]) -> dict[str, ImageRecord]:
        found: dict[str, ImageRecord] = {}
        wanted: list[str] = []
        for url in dict.fromkeys(urls):
            rec = self._cache.get(url)
            if rec is None:
                wanted.append(url)
            else:
                self._cache.move_to_end(url)
                found[url] = rec
        if not wanted:
            return found
        if self._waiter is None:
            loop = asyncio.get_running_loop()
            self._waiter = loop.create_future()
            # after every caller that runs in this turn of the loop has added its URLs
            loop.call_soon(self._flush)
        self._urls.update(wanted)
        # shield: one caller being cancelled must not cancel the query the others wait on
        records = await asyncio.shield(self._waiter)
        for url in wanted:
            rec = records.get(url)
            if rec is not None:
                found[url] = rec
                if rec.status == ImageStatus.ok and self._cache_size > 0:
                    self._remember(url, rec)
        return found

    def remember(
        self,
        url: str,
        cdn_url: str,
        *,
        width: int | None = None,
        height: int | None = None,
        variants: tuple[int, ...] = (),
    ) -> None:
        """``url`` is in the CDN at ``cdn_url`` (with its size and copies): later look-ups need no query."""
        if self._cache_size > 0:
            rec = ImageRecord(
                url=url, status=ImageStatus.ok, cdn_url=cdn_url, width=width, height=height, variants=variants
            )
            self._remember(url, rec)

    def _remember(self, url: str, rec: ImageRecord) -> None:
        self._cache[url] = rec
        self._cache.move_to_end(url)
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)

    def _flush(self) -> None:
        waiter, urls = self._waiter, self._urls
        self._waiter, self._urls = None, set()
        if waiter is None:
            return
        task = asyncio.ensure_future(self._images.get_many(urls))
        self._tasks.add(task)

        def done(t: asyncio.Task[dict[str, ImageRecord]]) -> None:
            self._tasks.discard(t)
            if waiter.done():
                return
            if t.cancelled():
                waiter.cancel()
            elif (exc := t.exception()) is not None:
                waiter.set_exception(exc)
            else:
                waiter.set_result(t.result())

        task.add_done_callback(done)
