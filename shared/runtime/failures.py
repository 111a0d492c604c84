"""Where a failed message goes: a delayed retry, a dead letter, a wait, or back in line (docs/architecture.md
section 4).

* **Retry** (``retry.<group>``): a transient failure, within ``runtime.max_attempts``,
  after the delay ``retry.decide`` gives (capped exponential backoff, full jitter,
  ``retry_after`` as a floor). Never an in-place sleep: the record goes to the
  group's retry topic with ``tc-not-before`` (``headers.py``), so one bad message
  cannot stall the records behind it.
* **Dead letter** (``<topic>.dlq``): invalid data, a ``Reject``, or a transient
  failure out of attempts — at once, with the original key and value.
* **Outage** (``shared.errors.is_outage``: our own store, blob store or bus is
  down): the message is fine, so it is neither retried through the topic nor
  dead-lettered; its lane waits (0.5 s doubling to 30 s, jittered) and runs it
  again. Every lane meets the same outage, so the cube pauses until it ends; the
  process tells it once (``shared/outages.py``), when it begins and when it ends.
* **Breaker** (``breaker.py``): when most recent outcomes were dead letters, the
  cube is looking at a bug, not at bad data: the inputs pause, and the message
  that would have been dead-lettered waits (``Rerun``) until the breaker half-opens.

The message's times come from the injected clock: the retry's due time, the
first failure's time, the breaker's cooldown (when dead letters may flow
again). The outage waits are a recovery pace on the event loop's own time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from shared import contracts
from shared.bus.base import Consumed, Consumer, Headers, TopicPartition
from shared.clock import Clock
from shared.config import RuntimeConfig
from shared.metrics import BREAKER_OPEN, DEAD_LETTERED, RETRIED
from shared.outages import OUTAGES
from shared.runtime.breaker import Breaker
from shared.runtime.headers import failure_headers, retry_headers
from shared.runtime.retry import Decision, decide, next_backoff_s
from shared.runtime.shutdown import settle
from shared.runtime.stats import Meter, RunStats

__all__ = ["OUTAGE_CAP_S", "OUTAGE_FIRST_S", "FailureRouter", "Outage", "Rerun"]

log = logging.getLogger("turbocubes.runtime")

#: an outage is waited out in place: first wait, and the cap of the doubling waits (seconds)
OUTAGE_FIRST_S = 0.5
OUTAGE_CAP_S = 30.0

#: the producer's ``send``: queue one record, get the future of its acknowledgement
SendRecord = Callable[..., Awaitable["asyncio.Future[Any]"]]


class Rerun(Exception):
    """The breaker held this message back; run it again once the breaker lets it through."""


class Outage(Exception):
    """Our own infrastructure is down (``shared.errors.is_outage``): wait, then run this message again."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


class FailureRouter:
    """One runner's failures: decides, sends retries and dead letters, keeps the breaker."""

    def __init__(
        self,
        cube: str,
        group: str,
        cfg: RuntimeConfig,
        *,
        consumer: Consumer,
        send: SendRecord,
        clock: Clock,
        rng: random.Random,
        stats: RunStats,
        meter: Meter,
        breaker: Breaker,
        held: Callable[[], Iterable[tuple[str, int]]],
    ) -> None:
        self.cube = cube
        self.group = group
        self.retry_topic = contracts.retry_topic(group)
        self.cfg = cfg
        self.consumer = consumer
        self.send = send
        self.clock = clock
        self.rng = rng
        self.stats = stats
        self.meter = meter
        #: the partitions parked behind a retry that is not due (they stay paused when the breaker closes)
        self.held = held
        #: shared with the lanes, which resume a held partition only while it lets messages through
        self.breaker = breaker
        self._gauge = BREAKER_OPEN.labels(cube)
        self._gauge_set = False
        self._half_open: asyncio.Task[None] | None = None

    @property
    def breaker_open(self) -> bool:
        return not self.breaker.passable.is_set()

    def success(self) -> None:
        """A message went through (on every handled message's path: kept to two attribute reads)."""
        self.breaker.success()
        if self._gauge_set:
            self._gauge.set(0)
            self._gauge_set = False

    async def failed(
        self, record: Consumed, origin: str, attempt: int, exc: BaseException, deliveries: list[asyncio.Future[Any]]
    ) -> None:
        """The handler failed with ``exc`` (not an outage): a delayed retry or a dead letter."""
        d = decide(
            attempt,
            exc,
            max_attempts=self.cfg.max_attempts,
            base_s=self.cfg.backoff_base_s,
            cap_s=self.cfg.backoff_cap_s,
            rng=self.rng,
        )
        if d.decision is Decision.retry:
            await self.retry(record, origin, attempt, exc, d.delay_s, deliveries)
        else:
            await self.dead_letter(record, origin, attempt, exc, deliveries)

    async def retry(
        self,
        record: Consumed,
        origin: str,
        attempt: int,
        exc: BaseException,
        delay_s: float,
        deliveries: list[asyncio.Future[Any]],
    ) -> None:
        headers = retry_headers(
            record,
            origin=origin,
            attempt=attempt,
            exc=exc,
            group=self.group,
            retry_topic=self.retry_topic,
            now=self.clock.time(),
            delay_s=delay_s,
        )
        deliveries.append(await self.send(self.retry_topic, record.value, key=record.key, headers=headers))
        self.stats.retried += 1
        self.meter.count(RETRIED, origin)
        log.warning(
            "%s: %s@%s attempt %d failed (%s: %s); retry in %.1fs",
            self.cube,
            origin,
            record.offset,
            attempt,
            type(exc).__name__,
            exc,
            delay_s,
        )

    async def dead_letter(
        self, record: Consumed, origin: str, attempt: int, exc: BaseException, deliveries: list[asyncio.Future[Any]]
    ) -> None:
        """Send ``record`` to ``<origin>.dlq`` — or, while the breaker holds, raise ``Rerun``."""
        if not self.breaker.dead_letter_allowed():
            self._trip()
            raise Rerun
        headers: Headers = tuple(
            failure_headers(
                record,
                origin=origin,
                attempt=attempt,
                exc=exc,
                group=self.group,
                retry_topic=self.retry_topic,
                now=self.clock.time(),
            )
        )
        deliveries.append(await self.send(contracts.dlq_topic(origin), record.value, key=record.key, headers=headers))
        self.stats.dead_lettered += 1
        self.meter.count(DEAD_LETTERED, origin)
        self.breaker.dead_lettered()
        log.error(
            "%s: dead-lettered %s@%d:%d after %d attempt(s): %s: %s",
            self.cube,
            origin,
            record.partition,
            record.offset,
            attempt,
            type(exc).__name__,
            exc,
        )

    async def wait_out(self, outage: Outage, previous_s: float, stop: asyncio.Event) -> float:
        """Wait before running a message again through an outage; the wait, for the next one to double."""
        wait_s = next_backoff_s(previous_s, OUTAGE_FIRST_S, OUTAGE_CAP_S)
        self.stats.outage_waits += 1
        # told once per outage, by the process (shared/outages.py), not once per lane and wait
        OUTAGES.met(outage.cause, self.cube)
        # jittered, so that every lane of every process does not hit a recovering store at once; on
        # the event loop's time: a recovery pace, which must go on while a test's ManualClock stands still
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), wait_s * self.rng.uniform(0.8, 1.2))
        return wait_s

    async def wait_passable(self, stop: asyncio.Event) -> bool:
        """Wait until the breaker lets messages through again; False when told to stop first."""
        passable = self.breaker.passable
        # never clear ``passable`` here: it is the breaker's state, and every waiting lane reads it
        while not passable.is_set():
            if stop.is_set():
                return False
            waiters = [asyncio.ensure_future(passable.wait()), asyncio.ensure_future(stop.wait())]
            try:
                await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for w in waiters:
                    w.cancel()
        return True

    def _trip(self) -> None:
        if not self.breaker.trip():
            return
        self.stats.breaker_trips += 1
        self._gauge.set(1)
        self._gauge_set = True
        self.consumer.pause(sorted(self.consumer.assignment()))
        log.error(
            "%s: most recent messages are being dead-lettered: input paused for %.0fs (breaker open)",
            self.cube,
            self.cfg.dlq_breaker_cooldown_s,
        )
        self._half_open = asyncio.ensure_future(self._cool_down())

    async def _cool_down(self) -> None:
        await self.clock.sleep(self.cfg.dlq_breaker_cooldown_s)
        self.breaker.half_open()
        held = {TopicPartition(*tpk) for tpk in self.held()}
        self.consumer.resume([tp for tp in sorted(self.consumer.assignment()) if tp not in held])

    async def close(self) -> None:
        if self._half_open is not None:
            await settle([self._half_open], 0)
