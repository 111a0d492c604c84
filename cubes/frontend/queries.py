"""Answered searches out to ``search.queries``, without slowing a search down (docs/architecture.md s.3, "wordstat").

A search never waits for the bus: ``record`` puts the event in a bounded
queue and returns; one background task publishes what has gathered, a batch
at a time, and waits for the bus to acknowledge it. If the bus is down the
task keeps the batch and tries again with a capped backoff, so a short outage
loses nothing; if it stays down long enough for ``search.queue_max`` events to
pile up, new ones are dropped — the statistics lose searches rather than the
frontend its memory — and each drop is counted
(``turbocubes_search_events_dropped_total``) and logged. ``stop`` publishes
what is left, within a time limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque

from prometheus_client import Counter

from shared.clock import Clock, SystemClock
from shared.messages import SearchQueryEvent
from shared.runtime.cube import Output
from shared.runtime.deps import Publish
from shared.runtime.retry import next_backoff_s

__all__ = ["QueryEvents"]

log = logging.getLogger(__name__)

TOPIC = "search.queries"
PUBLISHED = Counter("turbocubes_search_events_published_total", "Answered searches published to search.queries")
DROPPED = Counter(
    "turbocubes_search_events_dropped_total", "Answered searches not published: the queue was full (bus down)"
)
#: events in one publish: enough to make a busy second a few round trips, small enough to retry cheaply
_BATCH = 500
#: backoff after a failed publish, doubling up to the cap (the bus's own outage handling is behind it)
_RETRY_FIRST_S = 0.2
_RETRY_CAP_S = 10.0
#: how long ``stop`` spends publishing what is left
_STOP_S = 5.0


class QueryEvents:
    def __init__(self, publish: Publish, *, queue_max: int, clock: Clock | None = None) -> None:
        self._publish = publish
        self._queue: deque[SearchQueryEvent] = deque()
        self._max = queue_max
        self._clock = clock or SystemClock()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self.dropped = 0

    def record(self, event: SearchQueryEvent) -> None:
        """Queue ``event`` for publishing (never blocks)."""
        if len(self._queue) >= self._max:
            self.dropped += 1
            DROPPED.inc()
            if self.dropped == 1 or self.dropped % 1000 == 0:
                log.warning("search.queries queue full (%d): %d searches not counted so far", self._max, self.dropped)
            return
        self._queue.append(event)
        self._wake.set()

    @property
    def pending(self) -> int:
        return len(self._queue)

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="search-queries")

    async def _flush_once(self) -> bool:
        """Publish one batch; True when it went out (or there was nothing to send)."""
        batch = [self._queue[i] for i in range(min(_BATCH, len(self._queue)))]
        if not batch:
            return True
        try:
            # keyed by event: counting needs no order, and a popular query must not make one hot partition
            await self._publish([Output(TOPIC, e) for e in batch])
        except Exception as exc:  # any failure: keep the batch, try again later
            log.warning("publishing %d search events failed, will retry: %s", len(batch), exc)
            return False
        for _ in batch:
            self._queue.popleft()
        PUBLISHED.inc(len(batch))
        return True

    async def _run(self) -> None:
        delay = _RETRY_FIRST_S
        while not self._stopping:
            if not self._queue:
                self._wake.clear()
                await self._wake.wait()
                continue
            if await self._flush_once():
                delay = _RETRY_FIRST_S
            else:
                await self._clock.sleep(delay)
                delay = next_backoff_s(delay, _RETRY_FIRST_S, _RETRY_CAP_S)

    async def stop(self) -> None:
        """Stop the task and publish what is left (for at most a few seconds)."""
        self._stopping = True
        if self._task is not None:
            # a publish cut short may have gone out: the batch is sent again, and the wordstat
            # cube counts each event id once
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        try:
            async with asyncio.timeout(_STOP_S):
                while self._queue and await self._flush_once():
                    pass
        except TimeoutError:
            pass
        if self._queue:
            log.warning("%d search events not published at shutdown", len(self._queue))
