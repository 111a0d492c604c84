"""Image-registry look-ups batched across documents, cached once ok (docs/architecture.md section 2, media and delay).

The media cube needs one ``ImageRegistry.get_many`` per parsed document, the
delay cube one per released document, and a store round trip costs far more
than the query itself (a thread hop for SQLite, a network round trip for
PostgreSQL). Two things make the common case cheap:

* **Batching.** A cube runs several key-lanes at once. Look-ups asked for
  within one turn of the event loop are merged into one query and each caller
  gets its share (the DataLoader pattern: no timer, so no added latency; a lone
  document gets its own query at once).
* **A cache of ``ok`` records.** An image that is in the CDN stays there: the
  registry keeps an ``ok`` record (a failure does not downgrade it) and CDN
  objects are immutable and never deleted, so a remembered CDN URL is always
  valid. It may not be the *newest* copy, though: an image changed at its source
  gets a new one (``cubes/cdn/recheck.py``), so a remembered record is read again
  once it is ``media.lookup_cache_max_age_s`` old; pages published meanwhile with
  the old copy are still correct pages. A webmaster's purge is the one change of
  an ``ok`` record (``ImageRegistry.drop_copy``): for that age at most a new
  document may still get the dropped copy, whose bytes stay valid in the CDN, and
  the pages already showing it are rendered without it. Only ``ok`` records are
  cached; pending and failed ones are always read fresh. Bounded LRU
  (``media.lookup_cache_size`` entries, ~200 bytes each; 0 turns it off).
  ``remember`` adds what a caller learnt elsewhere (the delay cube: the CDN URL
  a ``media.cached`` message announces, recorded in the registry before it was sent).
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable

from shared.config import MediaConfig
from shared.stores import ImageRecord, ImageRegistry, ImageStatus

__all__ = ["LookupBatcher"]


class LookupBatcher:
    """``get_many`` for many concurrent callers through one ``ImageRegistry.get_many``."""

    def __init__(
        self,
        images: ImageRegistry,
        *,
        cache_size: int = 0,
        max_age_s: float = 300.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._images = images
        #: url -> (record, when it was remembered on the ``monotonic`` clock)
        self._cache: OrderedDict[str, tuple[ImageRecord, float]] = OrderedDict()
        self._cache_size = cache_size
        self._max_age_s = max_age_s
        self._monotonic = monotonic
        self._urls: set[str] = set()
        self._waiter: asyncio.Future[dict[str, ImageRecord]] | None = None
        # strong references: a task only referenced by the loop may be collected mid-flight
        self._tasks: set[asyncio.Task[dict[str, ImageRecord]]] = set()

    @classmethod
    def from_settings(cls, images: ImageRegistry, media: MediaConfig) -> LookupBatcher:
        """The look-up the media and delay cubes make: the cache ``media.lookup_cache_*`` says."""
        return cls(images, cache_size=media.lookup_cache_size, max_age_s=media.lookup_cache_max_age_s)

    async def get_many(self, urls: Iterable[str]) -> dict[str, ImageRecord]:
        found: dict[str, ImageRecord] = {}
        wanted: list[str] = []
        oldest = self._monotonic() - self._max_age_s if self._cache else 0.0
        for url in dict.fromkeys(urls):
            hit = self._cache.get(url)
            if hit is None or hit[1] < oldest:
                wanted.append(url)
            else:
                self._cache.move_to_end(url)
                found[url] = hit[0]
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
        self._cache[url] = (rec, self._monotonic())
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
