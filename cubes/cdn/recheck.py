"""Cached images are asked about again at their source (docs/architecture.md s.2, s.3).

An image changed in place (same URL, new bytes) used to keep its first copy
forever. Like any HTTP cache past its freshness lifetime, the cdn cube now
revalidates: every ``media.recheck_sweep_s`` it claims the images due a check
(``recheck_at``: the image's own lifetime as its response gave it, or
``media.recheck_s``; ``handler.py``) with ``ImageRegistry.claim_rechecks`` (the
claim marks them held for a period, so another replica does not order them too) and
orders a *conditional* fetch with the validators of the last one (``ETag`` as
``If-None-Match``, ``Last-Modified`` as ``If-Modified-Since``), at the bulk
priority ``media.recheck_priority``: new content goes first in every lane.

What the answer does is the handler's (``handler.py``): a 304 or the same bytes
only note the check; new bytes are stored as a new content-addressed copy (so
its URL changes and no cache keeps the old picture), with its smaller copies,
and announced in ``media.cached`` with ``replaces`` = the old copy's URL; the
kvwriter renders every page that shows the old copy again. A failed re-check
keeps the copy (a failure never downgrades a cached image) until the next one.

A round whose orders are not published makes the claimed images due at once
again, so the next round orders them.

Why a period and not "when a page using it is parsed again": the pages that
show an image usually do not change when it does (a photo retouched, a chart
redrawn under the same name), so nothing would ever look.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from shared.clock import Clock
from shared.config import Settings
from shared.messages import CrawlKind, CrawlRequest
from shared.runtime.cube import Output, TimerContext
from shared.stores import ImageRecord, ImageRegistry
from shared.urls import host_of

__all__ = ["RECHECK_REQUESTER", "Rechecks"]

#: the requester of a re-check's fetch: the crawler echoes it back, and the handler knows the answer
RECHECK_REQUESTER = "cdn:recheck"


class Rechecks:
    """The sweep that orders re-checks of the images due one."""

    def __init__(self, settings: Settings, images: ImageRegistry, clock: Clock) -> None:
        self.media = settings.media
        self.images = images
        self.clock = clock

    async def sweep(self, tctx: TimerContext) -> list[Output]:
        if self.media.recheck_s <= 0:
            return []
        now = self.clock.now()
        due = await self.images.claim_rechecks(
            now, self.media.recheck_batch, hold_until=now + timedelta(seconds=self.media.recheck_s)
        )
        if not due:
            return []
        outputs = [o for rec in due if (o := self._order(rec, now)) is not None]
        images = self.images

        async def put_back() -> None:
            # the orders did not go out: the images are due again at the next round (the claim held them
            # for a whole period: restoring the claim's own "checked now" would have held them as long)
            for rec in due:
                await images.record_checked(rec.url, now, recheck_at=now)

        tctx.on_failure(put_back)
        return outputs

    def _order(self, rec: ImageRecord, now: datetime) -> Output | None:
        try:
            host = host_of(rec.url)
        except ValueError:  # registry URLs are canonical; kept for safety
            return None
        video = (rec.mime or "").startswith("video/")
        order = CrawlRequest(
            kind=CrawlKind.video if video else CrawlKind.image,
            url=rec.url,
            host=host,
            requesters=[RECHECK_REQUESTER],
            etag=rec.etag,
            last_modified=rec.last_modified,
            requested_at=now,
            priority=self.media.recheck_priority,
        )
        return Output("crawl.requests", order, key=host)
