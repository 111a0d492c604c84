"""One message, from its bytes to its sent outputs (docs/architecture.md section 4, runtime).

``Handling.one`` is the hot path of every message: validate the record against
its topic's schema (invalid: a dead letter at once), run the handler under the
watchdog (``watchdog.py``: cut off when it makes no progress for its limit), then
validate and send its outputs, keeping their delivery futures on the record's
``Slot`` for the commit round (``commits.py``, step 2). A handler's failure goes to
the failure router (``failures.py``); an outage of our own engines is raised as
``Outage``, for the session to wait out and run the message again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from shared import contracts
from shared.clock import Clock
from shared.errors import ContractError, PublishContractError, is_outage
from shared.metrics import FAILED
from shared.runtime.commits import Slot
from shared.runtime.cube import Context, Handler, Output
from shared.runtime.failures import FailureRouter, Outage, SendRecord
from shared.runtime.headers import origin_of
from shared.runtime.publish import Encoder
from shared.runtime.stats import Meter, RunStats
from shared.runtime.watchdog import Watchdog

__all__ = ["Handling"]

log = logging.getLogger("turbocubes.runtime")


class Handling:
    """The handling of one cube's messages: its handler, its schemas, its watchdog and where failures go."""

    def __init__(
        self,
        cube: str,
        handler: Handler,
        *,
        encoder: Encoder,
        watchdog: Watchdog,
        failures: FailureRouter,
        send: SendRecord,
        emit: Callable[[Sequence[Output]], Awaitable[int]],
        retry_topic: str,
        clock: Clock,
        stats: RunStats,
        meter: Meter,
    ) -> None:
        self.cube = cube
        self.handler = handler
        self.encoder = encoder
        self.watchdog = watchdog
        self.failures = failures
        self.send = send
        #: ``Context.emit``: outputs published and acknowledged while the handler runs
        self.emit = emit
        self.retry_topic = retry_topic
        self.clock = clock
        self.stats = stats
        self.meter = meter
        #: when the last poll returned: every record of one poll was "received" then (the session sets it)
        self.received_at = clock.now()
        self._validators: dict[str, Callable[[bytes], Any]] = {}

    async def one(self, slot: Slot, task: asyncio.Task[None]) -> None:
        # every call and look-up here is paid once per message (bench/bus.py): locals for what is read twice
        r = slot.record
        deliveries = slot.deliveries
        origin, attempt = origin_of(r, self.retry_topic)
        failures = self.failures
        try:
            validate = self._validators.get(origin)
            if validate is None:
                validate = self._validators[origin] = contracts.validator(origin)
            msg = validate(r.value)
        except ContractError as exc:
            await failures.dead_letter(r, origin, attempt, exc, deliveries)
            return
        key = r.key
        watchdog = self.watchdog
        ctx = Context(
            origin,
            r.partition,
            r.offset,
            key.decode("utf-8", "replace") if key is not None else None,
            attempt,
            self.received_at,
            r.headers,
            emitter=self.emit,
            progressed=watchdog.beat,
        )
        now = self.clock.monotonic
        running = watchdog.running
        t0 = watchdog.watch(task)
        meter = self.meter
        try:
            try:
                outputs = await self.handler(msg, ctx)
            except asyncio.CancelledError:
                # the watchdog's mark is consumed either way; a revoked record is not a timeout
                if not watchdog.cut_off(task) or slot.cancelled:
                    raise
                task.uncancel()
                raise TimeoutError(f"handler made no progress for {watchdog.limit_s}s") from None
            finally:
                running.pop(task, None)
            sends = self.encoder.encode(outputs)
        except Exception as exc:
            meter.latencies.append(now() - t0)
            self.stats.failed += 1
            meter.count(FAILED, origin)
            if is_outage(exc):
                raise Outage(exc) from exc
            if isinstance(exc, PublishContractError):
                log.error("%s: handler built an invalid message: %s", self.cube, exc)
            await failures.failed(r, origin, attempt, exc, deliveries)
            return
        meter.latencies.append(now() - t0)
        send = self.send
        published = meter.published
        for topic, out_key, value, headers in sends:
            deliveries.append(await send(topic, value, key=out_key, headers=headers))
            published[topic] = published.get(topic, 0) + 1
        if ctx.commit_waits:
            deliveries.extend(ctx.commit_waits)
        if ctx.committed_hooks:
            slot.hooks = ctx.committed_hooks
        processed = meter.processed
        processed[origin] = processed.get(origin, 0) + 1
        self.stats.published += len(sends)
        self.stats.processed += 1
        failures.success()
