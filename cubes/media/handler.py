"""The media cube's handler (docs/architecture.md section 2: "all images in the CDN? yes: rewrite; no: order + park").

For each parsed document:

1. Find its media (``shared.images.media.MediaDoc``) and look them all up in the image
   registry in one round trip (shared with the other documents in flight, and
   answered from memory for images known to be cached: ``shared/images/lookups.py``).
2. Everything cached (or failed for good): rewrite the references to CDN URLs,
   drop the failed ones, publish to ``documents.ready`` with ``media_ready_at``.
   What was dropped is written as the page's problems (``shared/pages/losses.py``),
   for its webmaster; a release (step 4, and the delay cube) does the same. A page
   that lost an image for good is held back instead (``media.hold_incomplete``,
   ``shared/pages/completeness.py``): its problems are written held, nothing is published.
3. Otherwise order each missing image or video ONCE: ``ImageRegistry.mark_ordered_many``
   is an atomic "first caller wins" per image (a document's images in one call), so a
   thousand documents needing one image send one ``crawl.requests`` (a lost order is
   re-sent after ``media.deadline_s``, the window after which waiting for it is
   pointless anyway). A retried message
   (``ctx.attempt > 1``) orders every missing image again: the first attempt may
   have won the order and then failed before its orders were published, and
   a duplicate order costs nothing (the crawler coalesces identical requests).
   Then park the document in the delay store with its pending set and its
   deadline; a newer version replaces an older parked one, an older one is ignored.
   It is parked with the template of its rewrite (``shared/images/parked.py``), so that
   the delay cube releases it without parsing its HTML again.
4. Order matters here: an image may be cached between the registry look-up and
   the park, and its ``media.cached`` would then find nothing parked. So after
   parking we look the pending set up again and resolve what arrived meanwhile;
   if that completes the document, we release it ourselves. Only the images
   someone else ordered need that second look: an image this call orders gets its
   ``media.cached`` after the order is published, which is after the park (even a
   fetch the crawler shares or answers from a fresh result sends a result for
   our requester), so the usual cold document costs two registry/delay round
   trips in a row, not four: the look-up, then the order marks and the park side
   by side (neither needs the other's answer).
"""

from __future__ import annotations

import asyncio
import functools
from datetime import datetime, timedelta

from lxml import etree

from shared.clock import Clock
from shared.config import Settings
from shared.errors import Reject
from shared.images.lookups import LookupBatcher
from shared.images.media import MediaDoc, look_up
from shared.images.parked import park_payload, release
from shared.messages import CrawlKind, CrawlRequest, Document, MediaKind
from shared.offload import OFFLOAD_CHARS
from shared.pages.losses import page_problems
from shared.previews import preview_key
from shared.runtime.cube import Context, Output
from shared.stores import DelayStore, ImageRegistry, PageProblems, ParkOutcome, ProblemStore
from shared.urls import host_of
from shared.webmaster.feeds import FIX_PREFIX

__all__ = ["THREAD_CHARS", "MediaHandler"]

#: a document with more HTML than this (characters) is parsed and rewritten in a worker thread
THREAD_CHARS = OFFLOAD_CHARS


class MediaHandler:
    def __init__(
        self,
        settings: Settings,
        images: ImageRegistry,
        delay: DelayStore,
        clock: Clock,
        problems: ProblemStore | None = None,
    ) -> None:
        self.media = settings.media
        #: a page that lost an image for good is held back, not published (``shared/pages/completeness.py``)
        self.hold = settings.media.hold_incomplete
        #: where what a published page lost is written; None: nowhere (tests of other concerns)
        self.problems = problems
        self.images = images
        self.lookups = LookupBatcher.from_settings(images, settings.media)
        self.delay = delay
        self.clock = clock

    async def handle(self, doc: Document, ctx: Context) -> list[Output]:
        now = self.clock.now()
        # a large document is parsed, and later serialized, in a thread: libxml2 lets the GIL go while it
        # parses, and on the loop 1 MB of HTML held it (every cube, the API and /healthz) for ~0.3-1.5 s
        large = len(doc.content_html) > THREAD_CHARS
        try:
            media_doc = await asyncio.to_thread(MediaDoc, doc) if large else MediaDoc(doc)
        except (etree.ParserError, ValueError) as exc:  # lxml refuses NUL bytes and the like
            raise Reject(f"content_html of {doc.url} cannot be parsed: {exc}") from exc
        retry = doc.retry_failed_before  # the webmaster asked to see a fix: failed images are ordered again
        found = await look_up(self.lookups, media_doc.refs, now, failed_before=retry)
        if not found.missing:
            # An older version of this document may still be parked; it is left there; when it
            # is released, the kvwriter drops it as stale (newest version wins). Looking for it
            # here would cost a store round trip on the path every cached document takes.
            rewrite = functools.partial(
                media_doc.rewrite, found.cdn, sizes=found.sizes, variants=found.variants, media_ready_at=now
            )
            ready = await asyncio.to_thread(rewrite) if large else rewrite()
            if found.failed:
                row = page_problems(doc, found.lost(found.failed), hold=self.hold, shown=len(found.cdn))
                await self._tell([row], now)
                if row is not None and row.held:  # shared/pages/completeness.py: held back, not published
                    return []
            return [Output("documents.ready", ready, key=doc.url)]

        outputs: list[Output] = []
        # an image ordered again at the webmaster's asking is fetched fresh, never answered from the
        # crawler's memory of its last failure (``shared.webmaster.feeds.FIX_PREFIX``)
        requesters = [f"media:{doc.url}"] + ([f"{FIX_PREFIX}{doc.url}"] if retry is not None else [])
        marked, parked = await asyncio.gather(
            self.images.mark_ordered_many(found.missing, now, window_s=self.media.deadline_s, failed_before=retry),
            self.delay.park(
                # a check's preview waits under its own key: it never replaces the live page's parked version
                preview_key(doc.source.id, doc.url) if doc.preview else doc.url,
                doc.version,
                park_payload(media_doc),  # the document and the template of its rewrite: a cheap release
                found.missing.keys(),
                now + timedelta(seconds=self.media.deadline_s),
                host=doc.host,
                now=now,
            ),
            return_exceptions=True,  # both run to the end; the first failure is the handler's
        )
        if isinstance(marked, BaseException):
            raise marked
        if isinstance(parked, BaseException):
            raise parked
        outcome = parked
        ordered = set(found.missing) if ctx.attempt > 1 else marked  # see step 3: a retry orders them all
        for url, kind in found.missing.items():
            if url in ordered:
                try:
                    host = host_of(url)
                except ValueError:  # refs are canonical already; kept for safety
                    continue
                order = CrawlRequest(
                    kind=CrawlKind.video if kind == MediaKind.video else CrawlKind.image,
                    url=url,
                    host=host,
                    requesters=requesters,
                    requested_at=now,
                    priority=self.media.order_priority,
                    trace_id=doc.trace_id,
                )
                outputs.append(Output("crawl.requests", order, key=host))

        others = {url: kind for url, kind in found.missing.items() if url not in ordered}
        if others and outcome in (ParkOutcome.parked, ParkOutcome.replaced):
            # see step 4 of the module docstring
            again = await look_up(self.lookups, others, now, failed_before=retry)  # fresh: pending is never cached
            released: list[tuple[str, int]] = []
            losses: list[PageProblems | None] = []
            for url in others.keys() - again.missing.keys():
                for done in await self.delay.resolve(url, now=now):
                    back = await release(done.doc_json, self.lookups, now)
                    row = page_problems(back.doc, back.lost, hold=self.hold, shown=back.shown)
                    if row is None or not row.held:  # a held page is released, and not published
                        outputs.append(Output("documents.ready", back.doc, key=done.url))
                    released.append((done.url, done.version))
                    losses.append(row)
            await self._tell(losses, now)
            if released:
                delay = self.delay

                async def confirm() -> None:
                    # the released documents are published: the delay store may forget them
                    await delay.confirm(released)

                ctx.after_commit(confirm)
        return outputs

    async def _tell(self, rows: list[PageProblems | None], now: datetime) -> None:
        """Write what published pages lost (before publishing: a redelivery writes the same rows again)."""
        found = [r for r in rows if r is not None]
        if found and self.problems is not None:
            await self.problems.put_page_problems(found, now=now)
