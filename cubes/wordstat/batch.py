"""Group commit for counted searches (DESIGN.md section 3, "wordstat"; the store's ``count``).

Many handler calls run at once (the cube's key-lanes); the searches that arrive
while a batch is being written wait and go together in the next one: one
transaction per batch, however many searches it holds, and no added latency
when the cube is idle. Every caller waits for *its* batch to be durable (so the
runtime commits the input only then) or gets its error (the runtime retries;
counting is idempotent by event id, so a retry after a half-known outcome is harmless).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from shared.clock import utcnow
from shared.errors import TransientError
from shared.stores.wordstat import CountedSearch, WordstatStore

__all__ = ["GroupCounter"]

#: searches per transaction at most: a batch is a few small upserts per distinct query, lemma and
#: host, so 2,000 hold the SQLite write lock for a few milliseconds
MAX_BATCH = 2000
#: how long a batch gathers before it is written (Kafka's linger.ms, for the same reason): without it
#: a busy cube wrote batches of ~10 searches, each paying the transaction's fixed statements; 5 ms
#: delays a count by nothing a reader could see and makes batches of hundreds
LINGER_S = 0.005


class GroupCounter:
    def __init__(self, store: WordstatStore, max_batch: int = MAX_BATCH, linger_s: float = LINGER_S) -> None:
        self.store = store
        self.max_batch = max_batch
        self.linger_s = linger_s
        self._pending: list[tuple[CountedSearch, asyncio.Future[None]]] = []
        self._task: asyncio.Task[None] | None = None

    async def count(self, search: CountedSearch) -> None:
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((search, fut))
        if self._task is None or self._task.done():
            # a task of its own, not a caller: a caller's timeout never strands the others
            self._task = asyncio.create_task(self._drain(), name="wordstat-group-count")
        await fut

    async def _drain(self) -> None:
        # linger: the handlers that the next polls start queue before the write
        await asyncio.sleep(self.linger_s)
        while self._pending:
            batch = self._pending[: self.max_batch]
            del self._pending[: self.max_batch]
            try:
                await self.store.count([s for s, _ in batch], now=utcnow())
            except Exception as exc:  # every caller of the batch gets the error; the runtime retries
                _settle(batch, exc)
                continue
            except BaseException:
                stopped = TransientError("counting interrupted: the writer was cancelled")
                _settle(batch, stopped)
                _settle(self._pending, stopped)
                self._pending = []
                raise
            _settle(batch, None)


def _settle(batch: Sequence[tuple[CountedSearch, asyncio.Future[None]]], exc: BaseException | None) -> None:
    for _, fut in batch:
        if fut.done():
            continue
        if exc is None:
            fut.set_result(None)
        else:
            fut.set_exception(exc)
