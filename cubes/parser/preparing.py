"""Where an item is prepared: on the event loop, in a thread, or in a worker process (docs/architecture.md
section 6: CPU-heavy work on partner content never runs long on the loop that serves HTTP and heartbeats).

Preparing an item (Turbo blocks, nh3 sanitizing, media, hash: ``documents.prepare_one``) costs ~15 us
per KB of HTML on real content, but far more on some: nested elements, thousands of attributes, megabytes
of entities (``shared/offload.py`` has the figures). So:

* an item past ``OFFLOAD_CHARS`` of HTML (its content and its related links) is prepared in a worker
  process (``Deps.offload``), under ``parser.item_deadline_s``: past it the worker is killed and the
  item refused (``item.too_complex``), the other items go on. A worker that dies on an item is given
  one more try in a fresh one (a worker killed from outside is not the item's fault);
* the other items are prepared on the loop, in chunks of at most ``OFFLOAD_CHARS`` of HTML, with a
  turn of the loop between chunks once they have held it ``SLICE_S``: at 16 KB nh3's worst case is
  ~28 ms, so nothing holds the loop much longer, and a handler cut off by its time limit stops at the
  next turn;
* a large body (the handler's ``threaded``: many items or many bytes) keeps its items in a thread, as
  before: there nh3 runs beside the loop (it releases the GIL) and the rest takes the GIL in turns.

The common item (a news story of a few KB) takes the same path as ever: a length test is all it costs.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator, Sequence

from cubes.parser import metrics
from cubes.parser.documents import Candidate, FirstSeen, prepare_isolated, prepare_items
from cubes.parser.identity import IdentityError
from cubes.parser.model import ItemError, ParsedItem
from cubes.parser.sanitize import ContentCleaner
from shared.errors import OffloadFailed, OffloadTimeout
from shared.offload import OFFLOAD_CHARS, Offload
from shared.webmaster.hosts import HostScope

__all__ = ["PRELOAD", "SLICE_S", "Preparer", "Ready", "weight"]

#: what a worker process imports before it takes items (``Offload.preload``)
PRELOAD = ("cubes.parser.documents",)
#: the loop is given a turn between chunks once they have held it this long (s): an ordinary 100-item
#: feed (~15 ms) yields once or twice, not at every chunk; with a chunk's worst case (~28 ms) no chunk
#: run holds the loop past ~40 ms
SLICE_S = 0.010
#: characters a related link adds to an item's HTML (its block: a link, a title, a picture)
_RELATED_CHARS = 256

Outcome = Candidate | IdentityError
#: item index -> the outcome of its preparation in a worker process (``prepare_items(..., ready=)``)
Ready = dict[int, Outcome]


def weight(item: ParsedItem) -> int:
    """The characters of HTML preparing ``item`` reads: its content and the block of its related links."""
    return len(item.content_html) + _RELATED_CHARS * len(item.related)


class Preparer:
    """Prepares a body's items where each is cheapest without holding the loop (see the module docstring)."""

    def __init__(self, cleaner: ContentCleaner, offload: Offload | None = None, deadline_s: float = 10.0) -> None:
        self.cleaner = cleaner
        #: None: every item on the loop or in the thread (a caller without worker processes)
        self.offload = offload
        self.deadline_s = deadline_s

    async def prepare(
        self,
        items: Sequence[ParsedItem],
        feed_host: HostScope | str | None,
        *,
        first: FirstSeen | None = None,
        threaded: bool = False,
    ) -> tuple[list[Candidate], list[ItemError]]:
        """``prepare_items`` of ``items``, in their order (the duplicate check is ``first``'s, across calls)."""
        first = {} if first is None else first
        ready = await self.isolated(items, feed_host)
        if threaded:
            return await asyncio.to_thread(
                prepare_items, items, feed_host=feed_host, first=first, cleaner=self.cleaner, ready=ready
            )
        cands: list[Candidate] = []
        errs: list[ItemError] = []
        held_since = time.perf_counter()
        for chunk in _chunks(items, ready):
            if time.perf_counter() - held_since > SLICE_S:
                await asyncio.sleep(0)  # a turn of the loop: HTTP, heartbeats, a cut-off
                held_since = time.perf_counter()
            more, refused = prepare_items(chunk, feed_host=feed_host, first=first, cleaner=self.cleaner, ready=ready)
            cands.extend(more)
            errs.extend(refused)
        return cands, errs

    async def isolated(self, items: Sequence[ParsedItem], feed_host: HostScope | str | None) -> Ready:
        """The items of ``items`` past ``OFFLOAD_CHARS``, prepared in worker processes: index -> outcome.

        ``prepare_items(..., ready=)`` takes the answer: the rest is prepared wherever the caller is.
        """
        heavy = [it for it in items if weight(it) > OFFLOAD_CHARS] if self.offload is not None else []
        if not heavy:
            return {}
        outcomes = await asyncio.gather(*(self._one(it, feed_host) for it in heavy))
        return {it.index: out for it, out in zip(heavy, outcomes, strict=True)}

    async def _one(self, item: ParsedItem, feed_host: HostScope | str | None) -> Outcome:
        assert self.offload is not None
        what = f"preparing item {item.index + 1} ({weight(item):,} characters of HTML)"
        for attempt in (1, 2):
            try:
                done = await self.offload.run(
                    prepare_isolated, item, feed_host, self.cleaner.config, deadline_s=self.deadline_s, what=what
                )
            except OffloadTimeout:
                metrics.ISOLATED.labels("timeout").inc()
                return IdentityError(
                    f"the item's HTML took longer than {self.deadline_s:g}s to prepare (parser.item_deadline_s), "
                    "so it is not published: elements nested very deep, thousands of attributes or megabytes "
                    "of entities cost that",
                    code="item.too_complex",
                )
            except OffloadFailed:
                metrics.ISOLATED.labels("failed").inc()
                if attempt == 1:
                    continue
                return IdentityError(
                    "the worker process preparing the item ended on it twice, so it is not published",
                    code="item.too_complex",
                )
            metrics.ISOLATED.labels("done").inc()
            return done if isinstance(done, Candidate) else IdentityError(done[1], code=done[0])
        raise AssertionError("unreachable")  # pragma: no cover


def _chunks(items: Sequence[ParsedItem], ready: Ready) -> Iterator[Sequence[ParsedItem]]:
    """Consecutive runs of ``items`` whose HTML still to prepare here is at most ``OFFLOAD_CHARS``."""
    start, size = 0, 0
    for n, item in enumerate(items):
        cost = 0 if item.index in ready else weight(item)
        if size and size + cost > OFFLOAD_CHARS:
            yield items[start:n]
            start, size = n, 0
        size += cost
    if start < len(items):
        yield items[start:]
