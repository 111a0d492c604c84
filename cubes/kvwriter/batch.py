"""Group commit for page writes (docs/architecture.md section 3, "kvwriter"; the store's ``upsert_many``).

The runtime runs up to ``runtime.concurrency`` handler calls at once (one per
key-lane). Each would commit its own transaction; here the pages that arrive
while a write is in flight wait and go together in the next ``upsert_many``:
one commit for the group instead of one per page, and no added latency when
the cube is idle (a lone page is written at once).

Every caller still gets the outcome of *its* page, or the error of its batch
(then the runtime retries the message; writes are idempotent, so a retry after
a half-known outcome is harmless).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from shared.errors import TransientError
from shared.stores import Page, PageStore, UpsertOutcome

__all__ = ["GroupWriter"]

#: Pages per transaction at most: large enough to amortize the commit, small enough that one
#: batch holds the SQLite write lock for only milliseconds (other processes write too).
MAX_BATCH = 64


class GroupWriter:
    """Queues pages; one background task writes them in batches while any are queued."""

    def __init__(
        self,
        pages: PageStore,
        max_batch: int = MAX_BATCH,
        *,
        written: Callable[[Sequence[Page]], Awaitable[None]] | None = None,
    ) -> None:
        self.pages = pages
        self.max_batch = max_batch
        #: called with the pages of a batch that are stored (not stale), before their callers learn
        #: it: what goes with a page (its image links) is written once per batch too; its error is the
        #: batch's, and a retry writes it again (the page is then "unchanged", which still counts)
        self.written = written
        self._pending: list[tuple[Page, asyncio.Future[UpsertOutcome]]] = []
        self._task: asyncio.Task[None] | None = None

    async def upsert(self, page: Page) -> UpsertOutcome:
        """Write ``page`` (with whatever else is queued) and return its own outcome."""
        fut: asyncio.Future[UpsertOutcome] = asyncio.get_running_loop().create_future()
        self._pending.append((page, fut))
        if self._task is None or self._task.done():
            # the writer is a task of its own, not a caller: a caller's cancellation (a handler
            # timeout) never strands the pages of the others
            self._task = asyncio.create_task(self._drain(), name="kvwriter-group-commit")
        return await fut

    async def _drain(self) -> None:
        while self._pending:
            batch = self._pending[: self.max_batch]
            del self._pending[: self.max_batch]
            try:
                outcomes = await self.pages.upsert_many([page for page, _ in batch])
                if self.written is not None:
                    kept = [p for (p, _), o in zip(batch, outcomes, strict=True) if o is not UpsertOutcome.stale]
                    if kept:
                        await self.written(kept)
            except Exception as exc:  # every caller of the batch gets the error; the runtime retries
                _fail(batch, exc)
                continue
            except BaseException:
                stopped = TransientError("page write interrupted: the writer was cancelled")
                _fail(batch, stopped)
                _fail(self._pending, stopped)
                self._pending = []
                raise
            for (_, fut), outcome in zip(batch, outcomes, strict=True):
                if not fut.done():
                    fut.set_result(outcome)


def _fail(batch: Sequence[tuple[Page, asyncio.Future[UpsertOutcome]]], exc: BaseException) -> None:
    for _, fut in batch:
        if not fut.done():
            fut.set_exception(exc)
