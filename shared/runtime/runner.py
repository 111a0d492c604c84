"""The cube runner: consume, validate, handle, publish, acknowledge, commit (docs/architecture.md section 4, runtime).

Records stream through without batch barriers. The runner reads and handles;
the state of each concern is owned by a class of its own:

* **intake** (here) polls the bus while fewer than ``runtime.batch_size``
  records are in flight and hands each to the commit tracker, then to the
  lanes;
* **lanes** (``lanes.py``: ``LaneDispatcher``) run records side by side, each
  key's in order, and hold a delayed retry that is not due yet;
* **one message** (here, ``_one``): validate against the topic's schema
  (invalid → a dead letter at once), run the handler (cut off past its limit by
  ``watchdog.py``), validate and send its outputs (``publish.py``);
* **failures** (``failures.py``: ``FailureRouter``): a delayed retry
  (``retry.<group>``), a dead letter (``<topic>.dlq``), an outage waited out in
  place, or the DLQ storm breaker — never an in-place sleep, so one bad message
  cannot stall the records behind it (per-key order is given up for the message
  being retried; stores keep the newest version, so that is harmless);
* **commits** (``commits.py``: ``CommitTracker``): the commit order of
  docs/conventions.md rule 9, its four steps numbered there — the contiguously finished prefix per
  partition, only once everything it produced is acknowledged, never backwards;
  then the ``after_commit`` hooks and the metrics (``stats.py``).

When the bus fails (the broker gone, deliveries not acknowledged) nothing
unacknowledged is committed: the runner drops everything in flight, seeks each
partition back to its last commit, backs off (1 s doubling to 30 s) and reads
again. Outputs that did get out are produced again then — at-least-once; the
stores' versioning makes that harmless.

Timers (``Cube.timers``, ``timers.py``) run beside the intake; their outputs
are published and acknowledged, then their ``after_commit`` hooks run, as a
handler's (their ``on_failure`` hooks when that failed).

Shutdown (SIGTERM / SIGINT via ``stop()``): intake stops; in-flight work gets
``shutdown_timeout_s`` to finish; what finished is committed; the consumer
leaves the group. Every step is bounded (``shutdown.py``), so a stop ends even
when something does not honour it. A rebalance that takes partitions away gives their running
handlers the same grace, then cancels them (one owner at a time: ``_on_revoke``).

Time: every time the runner *reads* and every wait that is a message's
behaviour is the injected ``deps.clock``'s — a retry's due time and the failure
times in its headers, ``received_at``, a handler's time limit, the breaker's
cooldown, the timers' intervals — so a test with a ``ManualClock`` decides when
a retry is due or a handler late. Paces, recovery waits and bounds are the
event loop's own time: the commit cadence, lag sampling, the watchdog's look,
the waits after a bus failure (``waits.py``) or through an outage, the shutdown grace, the
tests' ``idle_timeout``; they must go on, and end, while a test's clock stands
still.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from shared import contracts
from shared.bus.base import Consumer, TopicPartition
from shared.errors import BusUnavailable, CommitOrderError, ContractError, PublishContractError, is_outage
from shared.metrics import FAILED
from shared.outages import OUTAGES, dependency_of
from shared.runtime.commits import CommitTracker, Slot
from shared.runtime.cube import Context, Cube, Output
from shared.runtime.deps import Deps
from shared.runtime.failures import FailureRouter, Outage, Rerun
from shared.runtime.headers import HEADERS, origin_of
from shared.runtime.lanes import LaneDispatcher
from shared.runtime.publish import Encoder, emitter, publish_outputs, reset_producer
from shared.runtime.shutdown import bounded, settle
from shared.runtime.stats import Meter, RunStats, sample_lag
from shared.runtime.timers import run_timer
from shared.runtime.waits import IDLE_POLL_S, bus_backoff, wake_on
from shared.runtime.watchdog import Watchdog

__all__ = ["HEADERS", "RunStats", "Runner"]

log = logging.getLogger("turbocubes.runtime")

#: a lag reader (the gauge's sampler) at a stop gets this long to end by itself
LAG_READ_GRACE_S = 5.0


class Runner:
    """Runs one cube until ``stop()`` (or the bounds given for tests) and returns its stats."""

    def __init__(
        self,
        cube: Cube,
        deps: Deps,
        *,
        group: str | None = None,
        max_messages: int | None = None,
        idle_timeout: float | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.cube = cube
        self.deps = deps
        self.clock = deps.clock
        self.cfg = deps.settings.runtime
        #: the cube's own limit (a parser loading a 100,000-offer catalog) or the runtime's default
        self.handler_timeout_s = cube.handler_timeout_s or self.cfg.handler_timeout_s
        self.group = group or cube.name
        self.retry_topic = contracts.retry_topic(self.group)
        self.max_messages = max_messages
        self.idle_timeout = idle_timeout
        self.rng = rng or random.Random()
        self.max_in_flight = max(cube.concurrency or self.cfg.concurrency, self.cfg.batch_size)
        self.stats = RunStats()
        self.meter = Meter(cube.name)
        self.consumer: Consumer | None = None
        self._stop = asyncio.Event()
        self._started = asyncio.Event()
        self._bus_failure: BaseException | None = None
        #: when the last poll returned: every record of one poll was "received" then
        self._received_at = self.clock.now()
        self._validators: dict[str, Callable[[bytes], Any]] = {}
        self._encoder = Encoder(cube.name, cube.outputs)
        self._watchdog = Watchdog(self.handler_timeout_s, self.clock)
        # built once the consumer exists (``_open``)
        self._tracker: CommitTracker
        self._emitter: Callable[[Sequence[Output]], Awaitable[int]] | None = None
        self._lanes: LaneDispatcher
        self._failures: FailureRouter | None = None
        self._leaving = False

    # ------------------------------------------------------------------ lifecycle

    def stop(self) -> None:
        """Ask for a graceful stop: no new intake; in-flight work finishes and is committed."""
        self._stop.set()
        if self.consumer is not None:
            self.consumer.wakeup()  # an idle poll in progress ends now

    @property
    def started(self) -> asyncio.Event:
        return self._started

    @property
    def breaker_open(self) -> bool:
        return self._failures is not None and self._failures.breaker_open

    def describe(self) -> dict[str, Any]:
        """What the runner holds right now (for a stall report): in flight, held, lanes, paused."""
        out: dict[str, Any] = {"breaker_open": self.breaker_open, "bus_failures": self.stats.bus_failures}
        if self._failures is not None:
            out.update(self._lanes.describe())
        return out

    async def lag(self) -> dict[TopicPartition, int]:
        """The consumer lag of the partitions this runner holds ({} before it joined, and once it leaves).

        Readers (the lag gauge, the status writer) come through here, so that none starts once the
        runner leaves; a reading in flight ends before the consumer stops (the engine's business)."""
        if self.consumer is None or self._leaving:
            return {}
        return await self.consumer.lag()

    async def run(self) -> RunStats:
        cube = self.cube
        tasks: list[asyncio.Task[None]] = []
        #: tasks that talk to the broker: they end at a stop by themselves (see ``sample_lag``)
        readers: list[asyncio.Task[None]] = []
        timers: list[asyncio.Task[int]] = []
        started_services = []
        try:
            if cube.on_start is not None:
                await cube.on_start()
            for svc in cube.services:
                await svc.start()
                started_services.append(svc)
            for timer in cube.timers:
                timers.append(
                    asyncio.create_task(
                        run_timer(cube.name, timer, self._publish_round, self.clock, self._stop),
                        name=f"timer:{cube.name}:{timer.name}",
                    )
                )
            if cube.inputs:
                if cube.handler is None:
                    raise TypeError(f"cube {cube.name} has inputs but no handler")
                consumer = await self._join()
                if consumer is None:
                    return self.stats  # told to stop while the bus was away
                if cube.on_assignment is not None:
                    cube.on_assignment(consumer.assignment)
                readers.append(asyncio.create_task(sample_lag(cube.name, self.lag, self._stop)))
                tasks.append(asyncio.create_task(self._watchdog.run()))
                self._started.set()
                await self._consume()
            else:
                self._started.set()
                await self._stop.wait()
        finally:
            # every step bounded (shutdown.py): a stop always ends, whatever does not honour it
            self._stop.set()  # also when run() fails: the timers end their rounds
            await settle(tasks, 0)
            self._leaving = True  # no new lag reading (the consumer's stop lets one in flight end)
            await settle(readers, LAG_READ_GRACE_S)
            await settle(timers, self.cfg.shutdown_timeout_s)  # a round in progress may finish
            if self._failures is not None:
                await self._lanes.close()
                await self._failures.close()
            if self.consumer is not None:
                await bounded(f"{cube.name}: leaving the group", self.consumer.stop)
            for svc in reversed(started_services):
                await bounded(f"{cube.name}: stopping {svc.name}", svc.stop)
            if cube.on_stop is not None:
                await bounded(f"{cube.name}: on_stop", cube.on_stop)
        return self.stats

    async def _join(self) -> Consumer | None:
        """Join the group (waiting out a bus that is away: a cube started in an outage died of it) and
        build what needs the consumer; None when told to stop first."""
        topics, backoff = [*self.cube.inputs, self.retry_topic], 0.0
        while not self._stop.is_set():
            try:
                consumer = self.consumer = await self.deps.bus.consumer(self.group, topics, on_revoke=self._on_revoke)
                break
            except BusUnavailable as exc:
                backoff = await bus_backoff(self.cube.name, "joining the group", exc, backoff, self._stop)
        else:
            return None
        producer = self.deps.bus.producer()
        self._send = producer.send
        self._emitter = emitter(producer, self._encoder, self.meter.published, self.stats)
        self._tracker = CommitTracker(self.cube.name, consumer, producer, self.clock, self.stats, self.meter)
        self._lanes = LaneDispatcher(
            concurrency=max(1, self.cube.concurrency or self.cfg.concurrency),
            per_key=self.cube.lanes == "per_key",
            key_width=self.cube.key_width,
            key_class=self.cube.key_class,
            retry_topic=self.retry_topic,
            consumer=consumer,
            clock=self.clock,
            run_slot=self._run_slot,
            may_resume=lambda: not self.breaker_open,
        )
        self._failures = FailureRouter(
            self.cube.name,
            self.group,
            self.cfg,
            consumer=consumer,
            send=producer.send,
            clock=self.clock,
            rng=self.rng,
            stats=self.stats,
            meter=self.meter,
            held=self._lanes.held,
        )
        return consumer

    # ------------------------------------------------------------------ intake

    def _enough(self) -> bool:
        if self.max_messages is None:
            return False
        return self.stats.processed + self.stats.dead_lettered + self._lanes.in_flight >= self.max_messages

    def _failed(self, exc: BaseException) -> None:
        self._bus_failure = exc

    async def _consume(self) -> None:
        assert self.consumer is not None
        consumer, lanes, tracker, clock = self.consumer, self._lanes, self._tracker, self.clock
        committer = asyncio.create_task(tracker.run(lambda: self._bus_failure is not None, self._failed))
        loop_time = asyncio.get_running_loop().time  # for the idle bound (module docstring)
        poll_s = IDLE_POLL_S if self.idle_timeout is None else 0.2  # idle: records and a stop end a poll
        idle_since = loop_time()
        backoff = 0.0
        poll_failed = False
        try:
            while not self._stop.is_set():
                if committer.done():
                    committer.result()  # a CommitOrderError is a bug: let it out, loudly
                if self._bus_failure is not None:
                    backoff = await self._recover(backoff)
                    continue
                if self._enough():
                    if lanes.in_flight == 0:
                        return
                    await wake_on(lanes.finished, self._stop)
                    continue
                room = self.max_in_flight - lanes.in_flight
                if room <= 0:
                    await wake_on(lanes.room, self._stop)
                    continue
                try:
                    records = await consumer.getmany(poll_s if lanes.in_flight == 0 else 0.05, room)
                except Exception as exc:  # the bus is unreachable: wait and poll again
                    self.stats.bus_failures += 1
                    poll_failed = True
                    backoff = await bus_backoff(self.cube.name, "poll", exc, backoff, self._stop)
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
                self._received_at = clock.now()
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

    async def _recover(self, backoff: float) -> float:
        """The bus failed under work in flight: drop it all and read again from the last commits."""
        exc, self._bus_failure = self._bus_failure, None
        assert exc is not None
        await reset_producer(self.deps.bus.producer())
        await self._lanes.cancel()
        await self._tracker.rewind()
        self._lanes.clear()
        return await bus_backoff(self.cube.name, "delivery", exc, backoff, self._stop)

    async def _on_revoke(self, tps: set[TopicPartition]) -> None:
        """A rebalance takes partitions away: once this returns (their next owner may start), none of
        their records runs here. Handlers get ``shutdown_timeout_s`` to finish (what finishes is
        committed); the rest are cancelled, never committed, and handled again by the next owner."""
        if self._failures is None:
            return  # called while joining, before anything was read: nothing to finish
        gone = {(tp.topic, tp.partition) for tp in tps}
        tracker, lanes = self._tracker, self._lanes
        lanes.revoke(gone, tracker.slots)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.cfg.shutdown_timeout_s):  # a bound: the loop's time
                while tracker.busy(gone) and not self._stop.is_set():
                    await wake_on(lanes.finished, self._stop)
        if running := tracker.running(gone):
            self.stats.revoke_cancels += len(running)
            await lanes.stop_running(self.cube.name, running)
        with contextlib.suppress(Exception):
            await tracker.commit_finished()
        tracker.forget(gone)

    # ------------------------------------------------------------------ one message

    async def _run_slot(self, slot: Slot, task: asyncio.Task[None]) -> bool:
        """Handle one record; False when it could not be finished (the bus failed, or we stop)."""
        failures = self._failures
        assert failures is not None
        outage_wait = 0.0
        waited = ""  # the dependency waited for
        while True:
            try:
                await self._one(slot, task)
                if waited:  # through, after waiting: the engine is back
                    OUTAGES.up(waited)
                return True
            except Outage as outage:
                waited = dependency_of(outage.cause)
                outage_wait = await failures.wait_out(outage, outage_wait, self._stop)
                if self._stop.is_set():
                    return False
            except Rerun:
                if not await failures.wait_passable(self._stop):
                    return False
            except CommitOrderError:
                raise
            except Exception as exc:
                # sending failed (handler errors are dealt with inside _one): the bus is in
                # trouble; the intake loop drops what is in flight and reads it again
                self.stats.bus_failures += 1
                self._bus_failure = exc
                return False

    async def _one(self, slot: Slot, task: asyncio.Task[None]) -> None:
        # the hot path of every message: kept flat on purpose (each call and lookup here is
        # paid once per message; see bench/bus.py)
        r = slot.record
        deliveries = slot.deliveries
        origin, attempt = origin_of(r, self.retry_topic)
        failures = self._failures
        assert failures is not None
        try:
            validate = self._validators.get(origin)
            if validate is None:
                validate = self._validators[origin] = contracts.validator(origin)
            msg = validate(r.value)
        except ContractError as exc:
            await failures.dead_letter(r, origin, attempt, exc, deliveries)
            return
        key = r.key
        ctx = Context(
            origin,
            r.partition,
            r.offset,
            key.decode("utf-8", "replace") if key is not None else None,
            attempt,
            self._received_at,
            r.headers,
            emitter=self._emitter,
            progressed=self._watchdog.beat,
        )
        handler = self.cube.handler
        assert handler is not None
        now = self.clock.monotonic
        running = self._watchdog.running
        t0 = self._watchdog.watch(task)
        try:
            try:
                outputs = await handler(msg, ctx)
            except asyncio.CancelledError:
                # the watchdog's mark is consumed either way; a revoked record is not a timeout
                if not self._watchdog.cut_off(task) or slot.cancelled:
                    raise
                task.uncancel()
                raise TimeoutError(f"handler made no progress for {self.handler_timeout_s}s") from None
            finally:
                running.pop(task, None)
            sends = self._encoder.encode(outputs)
        except Exception as exc:
            self.meter.latencies.append(now() - t0)
            self.stats.failed += 1
            self.meter.count(FAILED, origin)
            if is_outage(exc):
                raise Outage(exc) from exc
            if isinstance(exc, PublishContractError):
                log.error("%s: handler built an invalid message: %s", self.cube.name, exc)
            await failures.failed(r, origin, attempt, exc, deliveries)
            return
        meter = self.meter
        meter.latencies.append(now() - t0)
        send = self._send
        published = meter.published
        for topic, out_key, value, headers in sends:
            deliveries.append(await send(topic, value, key=out_key, headers=headers))
            published[topic] = published.get(topic, 0) + 1
        if ctx.holds:
            deliveries.extend(ctx.holds)
        if ctx.committed_hooks:
            slot.hooks = ctx.committed_hooks
        processed = meter.processed
        processed[origin] = processed.get(origin, 0) + 1
        self.stats.published += len(sends)
        self.stats.processed += 1
        failures.success()

    # ------------------------------------------------------------------ timers

    async def _publish_round(self, outputs: Sequence[Output]) -> int:
        return await publish_outputs(self.deps.bus.producer(), self._encoder, outputs)
