"""The indexer's round: drain the queue of written pages into the search index (docs/architecture.md s.3).

Each round (a timer, ``indexer.interval_s`` apart) takes batch after batch of
the oldest queue rows (``IndexQueue.index_pending``: one transaction each, the
analysis off the event loop) until the queue is empty or the round has run
``indexer.round_budget_s``; what is left waits for the next round. Nothing is
published: the queue is the input, and a batch's queue rows go only in the
transaction that indexes their pages, so a crash at any point loses nothing
(``shared/stores/search.py``). Each round's figures go to the metrics
(``metrics.py``): pages by outcome, the lag from write to searchable, the
indexer's CPU, the rows left.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from cubes.indexer.metrics import CPU, LAG, PAGES, PENDING
from shared.config import IndexerConfig
from shared.runtime.cube import Output, TimerContext
from shared.stores.search import IndexQueue, IndexRound

__all__ = ["Indexer"]


class Indexer:
    def __init__(self, queue: IndexQueue, config: IndexerConfig) -> None:
        self.queue = queue
        self.config = config
        #: totals since start (the status page, benchmarks)
        self.indexed = 0
        self.removed = 0
        self.cpu_s = 0.0

    async def round(self, ctx: TimerContext | None = None) -> Sequence[Output]:
        """One round: batches until the queue is empty or the budget is spent."""
        deadline = time.monotonic() + self.config.round_budget_s
        while True:
            done = await self.queue.index_pending(self.config.batch)
            self._count(done)
            if done.queued < self.config.batch:
                PENDING.set(0)
                return []
            if time.monotonic() >= deadline:
                PENDING.set(await self.queue.pending())
                return []

    def _count(self, done: IndexRound) -> None:
        if not done.queued:
            return
        self.indexed += done.indexed
        self.removed += done.removed
        self.cpu_s += done.cpu_s
        for outcome, n in (("indexed", done.indexed), ("removed", done.removed), ("moved_on", done.moved_on)):
            if n:
                PAGES.labels(outcome).inc(n)
        for lag in done.lags_s:
            LAG.observe(lag)
        CPU.inc(done.cpu_s)

    def status(self) -> dict[str, object]:
        return {"indexed": self.indexed, "removed": self.removed, "cpu_s": round(self.cpu_s, 3)}
