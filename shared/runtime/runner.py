"""The cube runner: consume, validate, handle, publish, acknowledge, commit (docs/architecture.md section 4, runtime).

Records stream through without batch barriers. The state of each concern is
owned by a class of its own:

* **the runner** (here): a cube's life -- its services and timers, joining its
  group (waiting out a bus that is away), the lag readers, the watchdog, a
  bounded stop;
* **the session** (``session.py``: ``Session``), made once the consumer has
  joined: the intake (poll while fewer than ``runtime.batch_size`` records are
  in flight), the commit loop, recovery from a bus failure, a rebalance;
* **lanes** (``lanes.py``: ``LaneDispatcher``) run records side by side, each
  key's in order, and hold a delayed retry that is not due yet;
* **one message** (``handling.py``: ``Handling``): validate against the topic's
  schema (invalid → a dead letter at once), run the handler (cut off when it
  makes no progress for its limit, ``watchdog.py``), validate and send its
  outputs (``publish.py``);
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
unacknowledged is committed: the session drops everything in flight, seeks each
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
handlers the same grace, then cancels them (one owner at a time: ``Session.on_revoke``).

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
import random
from collections.abc import Sequence
from typing import Any

from shared import contracts
from shared.bus.base import Consumer, TopicPartition
from shared.errors import BusUnavailable
from shared.runtime.cube import Cube, Output
from shared.runtime.deps import Deps
from shared.runtime.headers import HEADERS
from shared.runtime.publish import Encoder, publish_outputs
from shared.runtime.session import Session
from shared.runtime.shutdown import bounded, settle
from shared.runtime.stats import Meter, RunStats, sample_lag
from shared.runtime.timers import run_timer
from shared.runtime.waits import bus_backoff
from shared.runtime.watchdog import Watchdog

__all__ = ["HEADERS", "RunStats", "Runner"]

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
        self.group = group or cube.name
        self.retry_topic = contracts.retry_topic(self.group)
        self.max_messages = max_messages
        self.idle_timeout = idle_timeout
        self.rng = rng or random.Random()
        self.stats = RunStats()
        self.meter = Meter(cube.name)
        self.encoder = Encoder(cube.name, cube.outputs)
        #: the cube's own limit (a parser's first load of a big catalog) or the runtime's default
        self.watchdog = Watchdog(cube.handler_timeout_s or deps.settings.runtime.handler_timeout_s, deps.clock)
        self.consumer: Consumer | None = None
        #: the session of the consumer in its group (None before it joined)
        self.session: Session | None = None
        self._stop = asyncio.Event()
        self._started = asyncio.Event()
        self._leaving = False

    # ------------------------------------------------------------------ what callers ask

    @property
    def handler_timeout_s(self) -> float:
        return self.watchdog.limit_s

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
        return self.session is not None and self.session.failures.breaker_open

    def describe(self) -> dict[str, Any]:
        """What the runner holds right now (for a stall report): in flight, held, lanes, paused."""
        out: dict[str, Any] = {"breaker_open": self.breaker_open, "bus_failures": self.stats.bus_failures}
        if self.session is not None:
            out.update(self.session.describe())
        return out

    async def lag(self) -> dict[TopicPartition, int]:
        """The consumer lag of the partitions this runner holds ({} before it joined, and once it leaves).

        Readers (the lag gauge, the status writer) come through here, so that none starts once the
        runner leaves; a reading in flight ends before the consumer stops (the engine's business)."""
        if self.consumer is None or self._leaving:
            return {}
        return await self.consumer.lag()

    # ------------------------------------------------------------------ a cube's life

    async def run(self) -> RunStats:
        cube, cfg, clock = self.cube, self.deps.settings.runtime, self.deps.clock
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
                        run_timer(cube.name, timer, self._publish_round, clock, self._stop),
                        name=f"timer:{cube.name}:{timer.name}",
                    )
                )
            if cube.inputs:
                if cube.handler is None:
                    raise TypeError(f"cube {cube.name} has inputs but no handler")
                session = await self._join()
                if session is None:
                    return self.stats  # told to stop while the bus was away
                if cube.on_assignment is not None:
                    cube.on_assignment(session.consumer.assignment)
                readers.append(asyncio.create_task(sample_lag(cube.name, self.lag, self._stop)))
                tasks.append(asyncio.create_task(self.watchdog.run()))
                self._started.set()
                await session.consume()
            else:
                self._started.set()
                await self._stop.wait()
        finally:
            # every step bounded (shutdown.py): a stop always ends, whatever does not honour it
            self._stop.set()  # also when run() fails: the timers end their rounds
            await settle(tasks, 0)
            self._leaving = True  # no new lag reading (the consumer's stop lets one in flight end)
            await settle(readers, LAG_READ_GRACE_S)
            await settle(timers, cfg.shutdown_timeout_s)  # a round in progress may finish
            if self.session is not None:
                await self.session.close()
            if self.consumer is not None:
                await bounded(f"{cube.name}: leaving the group", self.consumer.stop)
            for svc in reversed(started_services):
                await bounded(f"{cube.name}: stopping {svc.name}", svc.stop)
            if cube.on_stop is not None:
                await bounded(f"{cube.name}: on_stop", cube.on_stop)
        return self.stats

    async def _join(self) -> Session | None:
        """Join the group (waiting out a bus that is away: a cube started in an outage died of it) and
        open the session; None when told to stop first."""
        topics, backoff = [*self.cube.inputs, self.retry_topic], 0.0
        while not self._stop.is_set():
            try:
                self.consumer = await self.deps.bus.consumer(self.group, topics, on_revoke=self._on_revoke)
                break
            except BusUnavailable as exc:
                backoff = await bus_backoff(self.cube.name, "joining the group", exc, backoff, self._stop)
        else:
            return None
        self.session = Session(
            self.cube,
            self.group,
            self.deps.settings.runtime,
            consumer=self.consumer,
            producer=self.deps.bus.producer(),
            encoder=self.encoder,
            watchdog=self.watchdog,
            retry_topic=self.retry_topic,
            clock=self.deps.clock,
            rng=self.rng,
            stats=self.stats,
            meter=self.meter,
            stop=self._stop,
            max_messages=self.max_messages,
            idle_timeout=self.idle_timeout,
        )
        return self.session

    async def _on_revoke(self, tps: set[TopicPartition]) -> None:
        if self.session is not None:  # None while joining, before anything was read: nothing to finish
            await self.session.on_revoke(tps)

    async def _publish_round(self, outputs: Sequence[Output]) -> int:
        return await publish_outputs(self.deps.bus.producer(), self.encoder, outputs)
