"""Counted searches summed in memory and written in big batches (docs/architecture.md section 3, "wordstat").

A handler call only adds its search to the batch being gathered and returns; its input is
committed once that batch is durable (``Context.commit_after``). A batch is written when it
holds ``max_batch`` searches or ``linger_s`` after its first one, in one transaction
(``WordstatStore.count``), which sums the searches per counter row: a Zipf stream's
thousands of searches are a few hundred upserts, and the lanes never wait for the store.

Nothing counted is lost or counted twice on a crash:

* a crash before a batch is durable: its inputs were not committed, they are read again;
* a crash after it is durable, before its inputs' commit: they are read again, and the
  store counts each event id once (``ws_seen``, in the batch's own transaction);
* a failed write fails every search of the batch: the runner reads them again.

Batches are written one at a time, in order; while one is written the next gathers. Past
``max_waiting`` searches not yet durable, a caller waits for the write in progress
(back-pressure: a store slower than the stream holds the intake, not the memory).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque

from shared.clock import Clock, SystemClock
from shared.errors import TransientError
from shared.stores.wordstat import CountedSearch, Privacy, WordstatStore

__all__ = ["GroupCounter"]

#: searches per transaction at most: a batch is one upsert per distinct counter row, and a Zipf
#: stream's 20,000 searches have a few thousand; SQLite holds its write lock ~0.1 s for it
MAX_BATCH = 20_000
#: how long a batch gathers at most: a count shows up this much later, and the input's commit
#: waits for it (the runtime commits every 20 ms otherwise); a quarter second is far below what a
#: reader of monthly counts could notice, and lets a busy cube's batches fill
LINGER_S = 0.25


class _Batch:
    __slots__ = ("fut", "searches")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.searches: list[CountedSearch] = []
        #: done once the batch is durable; a write's error is every caller's
        self.fut: asyncio.Future[None] = loop.create_future()
        # one nobody awaits (its input was dropped by a rebalance) is not an error to log
        self.fut.add_done_callback(_retrieve)


class GroupCounter:
    def __init__(
        self,
        store: WordstatStore,
        privacy: Privacy,
        max_batch: int = MAX_BATCH,
        linger_s: float = LINGER_S,
        max_waiting: int | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.store = store
        self.privacy = privacy
        self.clock = clock or SystemClock()
        self.max_batch = max_batch
        self.linger_s = linger_s
        self.max_waiting = max_waiting if max_waiting is not None else 3 * max_batch
        #: batches not written yet, oldest first; the last one gathers
        self._queue: deque[_Batch] = deque()
        self._waiting = 0
        self._full = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        #: batches written, searches in them and the time their writes took (the bench and tests read these)
        self.batches = 0
        self.written = 0
        self.write_s = 0.0

    @property
    def waiting(self) -> int:
        """Searches added and not durable yet."""
        return self._waiting

    def add(self, search: CountedSearch) -> asyncio.Future[None]:
        """Add a search to the batch being gathered; the future is done once that batch is durable."""
        queue = self._queue
        if not queue or len(queue[-1].searches) >= self.max_batch:
            queue.append(_Batch(asyncio.get_running_loop()))
        batch = queue[-1]
        batch.searches.append(search)
        self._waiting += 1
        if len(batch.searches) >= self.max_batch:
            self._full.set()
        if self._task is None or self._task.done():
            # a task of its own, not a caller: a caller that goes away never strands the others
            self._task = asyncio.create_task(self._drain(), name="wordstat-group-count")
        return batch.fut

    async def count(self, search: CountedSearch) -> None:
        """Count one search and return once it is durable (outside a runner)."""
        await self.add(search)

    async def room(self) -> None:
        """Wait while more than ``max_waiting`` searches are not durable yet (back-pressure)."""
        while self._waiting > self.max_waiting and self._queue:
            with contextlib.suppress(Exception):
                await asyncio.shield(self._queue[0].fut)

    async def flush(self) -> None:
        """Write what is gathered now; return once everything added so far is durable (or failed)."""
        self._full.set()
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)

    async def _drain(self) -> None:
        queue = self._queue
        while queue:
            if len(queue) == 1 and len(queue[0].searches) < self.max_batch:
                # linger: the searches of the next polls join the batch (or it fills first)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._full.wait(), self.linger_s)
            self._full.clear()
            batch = queue.popleft()  # from now on it does not grow: add() starts the next one
            t0 = time.perf_counter()
            try:
                await self.store.count(batch.searches, now=self.clock.now(), privacy=self.privacy)
            except Exception as exc:  # every search of the batch failed: the runner reads them again
                batch.fut.set_exception(exc)
                continue
            except BaseException:  # cancelled (the cube stops): what is not durable is read again
                stopped = TransientError("counting interrupted: the writer was cancelled")
                for b in (batch, *queue):
                    b.fut.set_exception(stopped)
                self._waiting -= sum(len(b.searches) for b in queue)
                queue.clear()
                raise
            finally:
                self._waiting -= len(batch.searches)
                self.write_s += time.perf_counter() - t0
            self.batches += 1
            self.written += len(batch.searches)
            batch.fut.set_result(None)


def _retrieve(fut: asyncio.Future[None]) -> None:
    if not fut.cancelled():
        fut.exception()
