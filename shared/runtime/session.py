"""A runner's time in its consumer group: intake, lanes, failures and commits (docs/architecture.md section 4).

``Session`` is made when the runner's consumer has joined, and owns what exists
only while it does: the consumer, the commit tracker (``commits.py``), the lanes
(``lanes.py``), the failure router (``failures.py``) with the breaker it shares with
the lanes, and the handling of one message (``handling.py``). It runs:

* **intake** (``consume``): poll while fewer than ``runtime.batch_size`` records
  are in flight, each record to the commit tracker, then to its lane;
* **commits**: a round every ``COMMIT_EVERY_S`` (``commits.py`` has the order), none
  while it recovers from a bus failure;
* **one record** (``run_slot``): ``Handling.one``, an outage waited out in place and
  the message run again, a message the breaker held back run once it half-opens;
* **recovery** (``_recover``): the bus failed under work in flight: drop it all,
  seek each partition back to its last commit, back off (1 s doubling to 30 s),
  read again;
* **rebalance** (``on_revoke``): one owner at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from typing import Any

from shared.bus.base import Consumer, Producer, TopicPartition
from shared.clock import Clock
from shared.config import RuntimeConfig
from shared.errors import CommitOrderError
from shared.outages import OUTAGES, dependency_of
from shared.runtime.breaker import Breaker
from shared.runtime.commits import COMMIT_EVERY_S, CommitTracker, Slot
from shared.runtime.cube import Cube
from shared.runtime.failures import FailureRouter, Outage, Rerun
from shared.runtime.handling import Handling
from shared.runtime.lanes import LaneDispatcher
from shared.runtime.publish import Encoder, emitter, reset_producer
from shared.runtime.stats import Meter, RunStats
from shared.runtime.waits import IDLE_POLL_S, bus_backoff, wake_on
from shared.runtime.watchdog import Watchdog

__all__ = ["Session"]


class Session:
    """What a runner holds while its consumer is in its group."""

    def __init__(
        self,
        cube: Cube,
        group: str,
        cfg: RuntimeConfig,
        *,
        consumer: Consumer,
        producer: Producer,
        encoder: Encoder,
        watchdog: Watchdog,
        retry_topic: str,
        clock: Clock,
        rng: random.Random,
        stats: RunStats,
        meter: Meter,
        stop: asyncio.Event,
        max_messages: int | None = None,
        idle_timeout: float | None = None,
    ) -> None:
        assert cube.handler is not None
        self.cube = cube.name
        self.cfg = cfg
        self.consumer = consumer
        self.producer = producer
        self.clock = clock
        self.stats = stats
        self.stop = stop
        self.max_messages = max_messages
        self.idle_timeout = idle_timeout
        self.max_in_flight = max(cube.concurrency or cfg.concurrency, cfg.batch_size)
        self.tracker = CommitTracker(cube.name, consumer, producer, clock, stats, meter)
        breaker = Breaker(cfg.dlq_breaker_window, cfg.dlq_breaker_ratio, cfg.dlq_breaker_cooldown_s)
        self.lanes = LaneDispatcher(
            concurrency=max(1, cube.concurrency or cfg.concurrency),
            per_key=cube.lanes == "per_key",
            key_width=cube.key_width,
            key_class=cube.key_class,
            retry_topic=retry_topic,
            consumer=consumer,
            clock=clock,
            slots=self,
            breaker=breaker,
        )
        self.failures = FailureRouter(
            cube.name,
            group,
            cfg,
            consumer=consumer,
            send=producer.send,
            clock=clock,
            rng=rng,
            stats=stats,
            meter=meter,
            breaker=breaker,
            held=self.lanes.held,
        )
        self.handling = Handling(
            cube.name,
            cube.handler,
            encoder=encoder,
            watchdog=watchdog,
            failures=self.failures,
            send=producer.send,
            emit=emitter(producer, encoder, meter.published, stats),
            retry_topic=retry_topic,
            clock=clock,
            stats=stats,
            meter=meter,
        )
        #: set by whatever meets the bus failing under work in flight; the intake then recovers
        self._bus_failure: BaseException | None = None

    def describe(self) -> dict[str, Any]:
        """For a stall report: records in flight, held partitions, live lanes."""
        return self.lanes.describe()

    # ------------------------------------------------------------------ intake

    def _enough(self) -> bool:
        if self.max_messages is None:
            return False
        return self.stats.processed + self.stats.dead_lettered + self.lanes.in_flight >= self.max_messages

    async def consume(self) -> None:
        consumer, lanes, tracker, clock, stop = self.consumer, self.lanes, self.tracker, self.clock, self.stop
        committer = asyncio.create_task(self._committing())
        loop_time = asyncio.get_running_loop().time  # for the idle bound (runner.py's docstring, "Time")
        poll_s = IDLE_POLL_S if self.idle_timeout is None else 0.2  # idle: records and a stop end a poll
        idle_since = loop_time()
        backoff = 0.0
        poll_failed = False
        try:
            while not stop.is_set():
                if committer.done():
                    committer.result()  # a CommitOrderError is a bug: let it out, loudly
                if self._bus_failure is not None:
                    backoff = await self._recover(backoff)
                    continue
                if self._enough():
                    if lanes.in_flight == 0:
                        return
                    await wake_on(lanes.finished, stop)
                    continue
                room = self.max_in_flight - lanes.in_flight
                if room <= 0:
                    await wake_on(lanes.room, stop)
                    continue
                try:
                    records = await consumer.getmany(poll_s if lanes.in_flight == 0 else 0.05, room)
                except Exception as exc:  # the bus is unreachable: wait and poll again
                    self.stats.bus_failures += 1
                    poll_failed = True
                    backoff = await bus_backoff(self.cube, "poll", exc, backoff, stop)
                    continue
                if poll_failed:  # a poll through after failing: the bus is back (a commit says it too)
                    poll_failed = False
                    OUTAGES.up("bus")
                if not records:
                    idle = self.idle_timeout is not None and loop_time() - idle_since >= self.idle_timeout
                    if idle and lanes.idle:
                        return
                    continue
                idle_since = loop_time()
                backoff = 0.0
                if self.stats.first_batch_at is None:
                    self.stats.first_batch_at = clock.monotonic()
                # one timestamp per poll, not per record: "received" means when the poll returned
                self.handling.received_at = clock.now()
                admit, dispatch = tracker.admit, lanes.admit
                for r in records:
                    dispatch(admit(r))
        finally:
            await lanes.drain(self.cfg.shutdown_timeout_s)
            # let a commit in progress end (cancelling it could cut its after-commit hooks short)
            tracker.close()
            with contextlib.suppress(Exception):
                await committer
            with contextlib.suppress(Exception):
                await tracker.commit_finished()

    async def _committing(self) -> None:
        """A commit round every ``COMMIT_EVERY_S`` while records are in flight, until the intake has
        drained; none while the session recovers from a bus failure; a round's bus failure is one (the
        intake then recovers). With nothing in flight it waits for the next record (an idle runner wakes
        for no round)."""
        tracker = self.tracker
        while not tracker.closing:
            if tracker.idle():
                await tracker.until_admitted()
                continue
            # a pace, not a behaviour: the event loop's time, so that commits go on while a test's
            # ManualClock stands still
            await asyncio.sleep(COMMIT_EVERY_S)
            if self._bus_failure is not None:
                continue
            try:
                await tracker.commit_finished()
            except CommitOrderError:
                raise
            except Exception as exc:
                self.stats.bus_failures += 1
                self._bus_failure = exc

    async def _recover(self, backoff: float) -> float:
        """The bus failed under work in flight: drop it all and read again from the last commits."""
        exc, self._bus_failure = self._bus_failure, None
        assert exc is not None
        await reset_producer(self.producer)
        await self.lanes.cancel()
        await self.tracker.rewind()
        self.lanes.clear()
        return await bus_backoff(self.cube, "delivery", exc, backoff, self.stop)

    # ------------------------------------------------------------------ rebalance

    async def on_revoke(self, tps: set[TopicPartition]) -> None:
        """A rebalance takes partitions away: once this returns (their next owner may start), none of
        their records runs here. Handlers get ``shutdown_timeout_s`` to finish (what finishes is
        committed); the rest are cancelled, never committed, and handled again by the next owner."""
        gone = {(tp.topic, tp.partition) for tp in tps}
        tracker, lanes = self.tracker, self.lanes
        lanes.revoke(gone, tracker.slots)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.cfg.shutdown_timeout_s):  # a bound: the loop's time
                while tracker.busy(gone) and not self.stop.is_set():
                    await wake_on(lanes.finished, self.stop)
        if running := tracker.running(gone):
            self.stats.revoke_cancels += len(running)
            await lanes.stop_running(self.cube, running)
        with contextlib.suppress(Exception):
            await tracker.commit_finished()
        tracker.forget(gone)

    # ------------------------------------------------------------------ one record

    async def run_slot(self, slot: Slot, task: asyncio.Task[None]) -> bool:
        """Handle one record; False when it could not be finished (the bus failed, or we stop)."""
        failures = self.failures
        outage_wait = 0.0
        waited = ""  # the dependency waited for
        while True:
            try:
                await self.handling.one(slot, task)
                if waited:  # through, after waiting: the engine is back
                    OUTAGES.up(waited)
                return True
            except Outage as outage:
                waited = dependency_of(outage.cause)
                outage_wait = await failures.wait_out(outage, outage_wait, self.stop)
                if self.stop.is_set():
                    return False
            except Rerun:
                if not await failures.wait_passable(self.stop):
                    return False
            except CommitOrderError:
                raise
            except Exception as exc:
                # sending failed (handler errors are dealt with inside ``Handling.one``): the bus is
                # in trouble; the intake drops what is in flight and reads it again
                self.stats.bus_failures += 1
                self._bus_failure = exc
                return False

    async def close(self) -> None:
        await self.lanes.close()
        await self.failures.close()
