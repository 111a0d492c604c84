"""The delay cube's handler and deadline sweep (DESIGN.md section 2: "[delay] releases when all images
are cached or the deadline passes").

* ``handle(media.cached)``: the media URL is struck from every parked document's
  pending set (atomically, in the store); each document left with nothing pending
  is rewritten with the CDN URLs from the registry and published. A failed image
  resolves too: the document goes on without it.
* ``sweep()`` (a ``Timer``): documents past their deadline are published with
  whatever is cached; the rest of their media is REMOVED, never hotlinked.

Parked documents live only in the delay store, so a restart loses none of them.
The store removes a document as it hands it out; the runtime publishes our
outputs right after, so the window in which a crash could lose one is the
publish itself (see the report of issue 6 for the store API change that would close it).
"""

from __future__ import annotations

from datetime import UTC, datetime

from shared.clock import Clock
from shared.config import Settings
from shared.media import release
from shared.messages import MediaCached
from shared.runtime.cube import Context, Output
from shared.stores.base import DelayStore, ImageRegistry, ParkedDoc
from shared.urls import try_canonical_url

__all__ = ["DelayHandler"]


class DelayHandler:
    def __init__(self, settings: Settings, images: ImageRegistry, delay: DelayStore, clock: Clock) -> None:
        self.sweep_batch = settings.delay.sweep_batch
        self.images = images
        self.delay = delay
        self.clock = clock

    def _now(self) -> datetime:
        return datetime.fromtimestamp(self.clock.time(), UTC)

    async def _ready(self, docs: list[ParkedDoc], now: datetime) -> list[Output]:
        return [
            Output("documents.ready", await release(d.doc_json, self.images, now), key=d.url) for d in docs
        ]

    async def handle(self, msg: MediaCached, ctx: Context) -> list[Output]:
        url = try_canonical_url(msg.url) or msg.url
        return await self._ready(await self.delay.resolve(url), self._now())

    async def sweep(self) -> list[Output]:
        """Release every document whose deadline has passed (at most ``delay.sweep_batch``)."""
        now = self._now()
        return await self._ready(await self.delay.due(now, limit=self.sweep_batch), now)
