"""What a runner counts: its own ``RunStats``, and the Prometheus series, updated in groups (docs/architecture.md
section 4).

``RunStats`` is the runner's account for its caller (tests, benches, ``/healthz``,
the status snapshots). ``Meter`` feeds ``/metrics``: counters and the handler
latency histogram are updated once per commit round, not once per message,
because prometheus_client takes a lock per call, which would be most of a
pass-through message's cost (``bench/bus.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from prometheus_client import Counter

from shared.bus.base import TopicPartition
from shared.metrics import CONSUMER_LAG, HANDLER_SECONDS, PROCESSED, PUBLISHED

__all__ = ["LAG_EVERY_S", "Meter", "RunStats", "sample_lag"]

#: how often consumer lag is sampled for /metrics
LAG_EVERY_S = 5.0


@dataclass
class RunStats:
    processed: int = 0
    failed: int = 0
    retried: int = 0
    dead_lettered: int = 0
    published: int = 0
    commits: int = 0
    breaker_trips: int = 0
    bus_failures: int = 0
    #: waits because a store, blob store or the bus was down (the message ran again after each)
    outage_waits: int = 0
    #: handlers cancelled because their partitions went to another member (one owner at a time)
    revoke_cancels: int = 0
    #: the clock's monotonic time when the first record arrived and when the last commit was made
    first_batch_at: float | None = None
    last_commit_at: float | None = None


class Meter:
    """One cube's Prometheus series, counted in memory and flushed in groups (``flush``)."""

    __slots__ = ("_counts", "cube", "latencies", "processed", "published")

    def __init__(self, cube: str) -> None:
        self.cube = cube
        #: per topic, messages handled and published, and handler latencies, since the last flush (the
        #: hot path adds to these directly: a method call per message would cost more than the count)
        self.processed: dict[str, int] = {}
        self.published: dict[str, int] = {}
        self.latencies: list[float] = []
        self._counts: dict[tuple[Counter, str], int] = {}

    def count(self, metric: Counter, topic: str) -> None:
        """One more of a per-topic counter (failed, retried, dead-lettered)."""
        key = (metric, topic)
        self._counts[key] = self._counts.get(key, 0) + 1

    def flush(self) -> None:
        name = self.cube
        for (metric, topic), n in self._counts.items():
            metric.labels(name, topic).inc(n)
        self._counts.clear()
        for counts, metric in ((self.processed, PROCESSED), (self.published, PUBLISHED)):
            for topic, n in counts.items():
                metric.labels(name, topic).inc(n)
            counts.clear()
        if self.latencies:
            HANDLER_SECONDS.observe_many(name, self.latencies)
            self.latencies.clear()


async def sample_lag(cube: str, read: Callable[[], Awaitable[dict[TopicPartition, int]]], stop: asyncio.Event) -> None:
    """Set the consumer-lag gauge every ``LAG_EVERY_S`` until ``stop`` (a failed reading is skipped).

    A pace, not a behaviour: on the event loop's time (a test's ManualClock need not move for it).
    A stop ends the pause, never a reading: cancelling aiokafka while it opens a connection to the
    coordinator leaves that connection open for good (it warns when collected).
    """
    while True:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), LAG_EVERY_S)
        if stop.is_set():
            return
        with contextlib.suppress(Exception):
            for tp, lag in (await read()).items():
                CONSUMER_LAG.labels(cube, tp.topic, str(tp.partition)).set(lag)
