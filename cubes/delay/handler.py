"""The delay cube's handler and deadline sweep (docs/architecture.md section 2: "[delay] releases when all images
are cached or the deadline passes").

* ``handle(media.cached)``: the media URL is struck from every parked document's
  pending set (atomically, in the store); each document left with nothing pending
  is rewritten with the CDN URLs from the registry (``shared/images/parked.py``: mostly
  a substitution into the template the media cube stored) and published. A failed
  image resolves too: the document goes on without it. The registry is read
  through ``shared/images/lookups.py``, which also remembers the CDN URL each ``ok``
  message announces (the cdn cube records it before it announces it), so the
  release that the last image of a document triggers usually needs no query.
* ``sweep()`` (a ``Timer``): documents past their deadline are published with
  whatever is cached; the rest of their media is REMOVED, never hotlinked.

Whatever a released document goes without -- a failed image, one late at the
deadline -- is written as the page's problems (``shared/pages/losses.py``) before
the document is published, so its webmaster sees what the page lost and why.

No document is ever lost: the store does not delete what it releases, it leases
it (``released_at``). ``handle`` and ``sweep`` return the documents as outputs and
confirm them (``DelayStore.confirm`` deletes them) in an ``after_commit`` hook,
which the runtime runs only once those outputs are acknowledged (and, for
``handle``, the input committed). A crash or a failed publish in between leaves the release
unconfirmed, and the sweep hands it out again once ``delay.release_lease_s`` has
passed: at worst a duplicate, which the kvwriter drops (newest version wins).
"""

from __future__ import annotations

import logging
from datetime import datetime

from pydantic import ValidationError

from shared.clock import Clock
from shared.config import Settings
from shared.images.lookups import LookupBatcher
from shared.images.parked import ParkedPayloadError, release
from shared.messages import MediaCached, MediaStatus
from shared.pages.losses import page_problems
from shared.runtime.cube import Context, Output, TimerContext
from shared.stores import DelayStore, ImageRegistry, PageProblems, ParkedDoc, ProblemStore

__all__ = ["DelayHandler"]

log = logging.getLogger("turbocubes.delay")

Released = list[tuple[str, int]]  # (url, version) of released docs, what ``DelayStore.confirm`` takes


class DelayHandler:
    def __init__(
        self,
        settings: Settings,
        images: ImageRegistry,
        delay: DelayStore,
        clock: Clock,
        problems: ProblemStore | None = None,
    ) -> None:
        #: where what a released page lost is written; None: nowhere (tests of other concerns)
        self.problems = problems
        #: a page that lost an image for good is held back, not published (``shared/pages/completeness.py``)
        self.hold = settings.media.hold_incomplete
        self.sweep_batch = settings.delay.sweep_batch
        self.lease_s = settings.delay.release_lease_s
        self.images = images
        self.lookups = LookupBatcher.from_settings(images, settings.media)
        self.delay = delay
        self.clock = clock

    async def _ready(self, docs: list[ParkedDoc], now: datetime) -> tuple[list[Output], Released]:
        outputs: list[Output] = []
        released: Released = []
        losses: list[PageProblems] = []
        for d in docs:
            try:
                done = await release(d.doc_json, self.lookups, now)
            except (ValidationError, ParkedPayloadError) as exc:
                # Cannot happen for what the media cube parked (it was a valid Document), but if a
                # model change ever breaks one, it stays in the store (unconfirmed, retried every
                # lease and logged) rather than failing its neighbours or being dropped.
                log.error("delay: parked document %s v%d no longer decodes, kept: %s", d.url, d.version, exc)
                continue
            lost = page_problems(done.doc, done.lost, hold=self.hold, shown=done.shown)
            if lost is None or not lost.held:  # a held page is released (forgotten here), not published
                outputs.append(Output("documents.ready", done.doc, key=d.url))
            released.append((d.url, d.version))
            if lost is not None:
                losses.append(lost)
        if losses and self.problems is not None:
            # before the documents are published: a failed publish releases them again, writing the same rows
            await self.problems.put_page_problems(losses, now=now)
        return outputs, released

    async def handle(self, msg: MediaCached, ctx: Context) -> list[Output]:
        url = msg.url  # canonical: the media cube ordered it so (URLs are trusted past their boundary)
        now = self.clock.now()
        if msg.status == MediaStatus.ok and msg.cdn_url:
            self.lookups.remember(url, msg.cdn_url, width=msg.width, height=msg.height, variants=tuple(msg.variants))
        outputs, released = await self._ready(await self.delay.resolve(url, now=now), now)
        self._confirm_after_commit(ctx, released)
        return outputs

    async def sweep(self, ctx: TimerContext) -> list[Output]:
        """Release documents past their deadline, and releases never confirmed (at most ``sweep_batch``)."""
        now = self.clock.now()
        docs = await self.delay.due(now, limit=self.sweep_batch, lease_s=self.lease_s)
        outputs, released = await self._ready(docs, now)
        self._confirm_after_commit(ctx, released)
        return outputs

    def _confirm_after_commit(self, ctx: Context | TimerContext, released: Released) -> None:
        if not released:
            return

        async def confirm() -> None:
            await self.delay.confirm(released)

        ctx.after_commit(confirm)  # only once our outputs are durable; see the module docstring
