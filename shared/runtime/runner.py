"""The cube runner: consume, validate, handle, publish, acknowledge, commit (DESIGN.md section 4, runtime).

Commit order, per polled batch (STYLE.md rule 9) — do not reorder:

1. each record's value is decoded and validated against its topic's schema;
   an invalid one becomes a dead letter (``<topic>.dlq``) at once;
2. handlers run in *key lanes*: records are split by ``hash(key) % concurrency``
   and each lane handles its records in order, so per-key order is kept while
   different keys run concurrently;
3. a handler's outputs are validated (``encode``) and sent; failures become a
   delayed retry (``retry.<cube>`` with attempt / not-before headers) or a dead
   letter — never an in-place sleep, so one bad message cannot stall its
   partition (delivery order *per key* is given up for the message being
   retried; stores keep the newest version, so that is harmless);
4. every delivery future (outputs, retries, dead letters) is awaited: the
   broker has acknowledged everything this batch produced;
5. per partition, the offset after the last *contiguously* finished record is
   committed; an offset that would move backwards raises ``CommitOrderError``;
6. metrics.

A record that is not finished (a retry that is not due yet, the DLQ breaker
tripping, shutdown cutting a batch short) is sought back to and read again.

DLQ storm breaker: when more than ``dlq_breaker_ratio`` of the last
``dlq_breaker_window`` outcomes were dead letters, the cube stops dead-lettering,
pauses its inputs and sets ``turbocubes_dlq_breaker_open`` — that is a bug or an
outage, not bad data. After ``dlq_breaker_cooldown_s`` it lets one record through
(half-open); a success closes the breaker, another dead letter re-opens it.

Shutdown (SIGTERM / SIGINT via ``stop()``): no new poll; the batch in flight
finishes (bounded by ``shutdown_timeout_s``); finished records are committed;
the consumer leaves the group.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from prometheus_client import Counter

from shared import contracts
from shared.bus.base import Consumed, Consumer, Headers, TopicPartition
from shared.errors import BusUnavailable, CommitOrderError, ContractError, PublishContractError, TurbocubesError
from shared.metrics import (
    BREAKER_OPEN,
    CONSUMER_LAG,
    DEAD_LETTERED,
    FAILED,
    HANDLER_SECONDS,
    PROCESSED,
    PUBLISHED,
    RETRIED,
)
from shared.runtime.cube import Context, Cube, Output
from shared.runtime.deps import Deps
from shared.runtime.retry import Decision, decide

__all__ = ["HEADERS", "RunStats", "Runner"]

log = logging.getLogger("turbocubes.runtime")


class HEADERS:
    """Header names the runtime writes on retries and dead letters (STYLE.md rule 8)."""

    attempt = "tc-attempt"
    first_failure = "tc-first-failure"
    not_before = "tc-not-before"
    origin_topic = "tc-origin-topic"
    origin_partition = "tc-origin-partition"
    origin_offset = "tc-origin-offset"
    error_class = "tc-error-class"
    error = "tc-error"
    group = "tc-group"

    ALL = frozenset(
        {attempt, first_failure, not_before, origin_topic, origin_partition, origin_offset, error_class,
         error, group}
    )


#: how often consumer lag is sampled for /metrics
LAG_EVERY_S = 5.0
#: an error text in a header is cut to this many bytes (Kafka headers are not for essays)
MAX_ERROR_BYTES = 2000


@dataclass
class RunStats:
    processed: int = 0
    failed: int = 0
    retried: int = 0
    dead_lettered: int = 0
    published: int = 0
    batches: int = 0
    breaker_trips: int = 0
    #: time.monotonic() when the first batch arrived and when the last one was committed
    first_batch_at: float | None = None
    last_commit_at: float | None = None


def _h(headers: Sequence[tuple[str, bytes]], name: str) -> bytes | None:
    for k, v in headers:
        if k == name:
            return v
    return None


class _BreakerOpen(Exception):
    pass


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
        self.cfg = deps.settings.runtime
        self.group = group or cube.name
        self.retry_topic = contracts.retry_topic(self.group)
        self.max_messages = max_messages
        self.idle_timeout = idle_timeout
        self.rng = rng or random.Random()
        self.concurrency = max(1, cube.concurrency or self.cfg.concurrency)
        self.stats = RunStats()
        self.consumer: Consumer | None = None
        self._stop = asyncio.Event()
        self._started = asyncio.Event()
        self._batch_lock = asyncio.Lock()
        self._committed: dict[TopicPartition, int] = {}
        self._outcomes: deque[bool] = deque(maxlen=self.cfg.dlq_breaker_window)
        self._breaker_open = False
        self._half_open = False
        self._resume_tasks: set[asyncio.Task[None]] = set()
        self._m_breaker = BREAKER_OPEN.labels(cube.name)
        self._running: dict[asyncio.Task[None], float] = {}
        self._timed_out: set[asyncio.Task[None]] = set()
        self._pending_counts: dict[tuple[Counter, str], int] = {}
        self._latencies: list[float] = []
        self._validators: dict[str, Callable[[bytes], Any]] = {}
        self._encoders: dict[str, tuple[type, str, Callable[[Any], bytes]]] = {}
        self._processed: dict[str, int] = {}
        self._published: dict[str, int] = {}
        #: partitions this batch sought back to an unfinished record (prefetched records of them are stale)
        self._sought: dict[tuple[str, int], int] = {}

    # ------------------------------------------------------------------ lifecycle

    def stop(self) -> None:
        """Ask for a graceful stop: no new intake; in-flight work finishes and is committed."""
        self._stop.set()

    @property
    def started(self) -> asyncio.Event:
        return self._started

    async def run(self) -> RunStats:
        cube = self.cube
        tasks: list[asyncio.Task[None]] = []
        started_services = []
        try:
            if cube.on_start is not None:
                await cube.on_start()
            for svc in cube.services:
                await svc.start()
                started_services.append(svc)
            for timer in cube.timers:
                tasks.append(asyncio.create_task(self._timer(timer.name, timer.interval_s, timer.fn)))
            if cube.inputs:
                if cube.handler is None:
                    raise TypeError(f"cube {cube.name} has inputs but no handler")
                topics = [*cube.inputs, self.retry_topic]
                self.consumer = await self.deps.bus.consumer(self.group, topics, on_revoke=self._on_revoke)
                self._send = self.deps.bus.producer().send
                tasks.append(asyncio.create_task(self._lag_loop()))
                self._started.set()
                await self._consume()
            else:
                self._started.set()
                await self._stop.wait()
        finally:
            for t in tasks:
                t.cancel()
            for t in list(self._resume_tasks):
                t.cancel()
            for t in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await t
            if self.consumer is not None:
                await self.consumer.stop()
            for svc in reversed(started_services):
                with contextlib.suppress(Exception):
                    await svc.stop()
            if cube.on_stop is not None:
                await cube.on_stop()
        return self.stats

    async def _consume(self) -> None:
        """Poll, process, commit — with the next poll already running while a batch is processed.

        When the bus fails (broker gone, deliveries not acknowledged), the batch is not
        committed: its partitions are sought back to the batch's first records, the loop
        backs off (1 s doubling to 30 s) and reads them again. Outputs that did get out are
        produced again then — at-least-once; the stores' versioning makes that harmless.
        """
        assert self.consumer is not None
        consumer = self.consumer
        idle_since = time.monotonic()
        prefetch: asyncio.Future[Sequence[Consumed]] | None = None
        backoff = 0.0
        try:
            while not self._stop.is_set():
                handled = self.stats.processed + self.stats.dead_lettered
                if self.max_messages is not None and handled >= self.max_messages:
                    return
                if prefetch is None:
                    prefetch = asyncio.ensure_future(consumer.getmany(0.2, self.cfg.batch_size))
                try:
                    records = await prefetch
                except Exception as exc:  # the bus is unreachable: wait and poll again
                    prefetch = None
                    backoff = await self._bus_trouble("poll", exc, backoff)
                    continue
                prefetch = None
                if not records:
                    if self.idle_timeout is not None and time.monotonic() - idle_since >= self.idle_timeout:
                        return
                    continue
                idle_since = time.monotonic()
                self._sought.clear()
                batch = asyncio.ensure_future(self._locked_batch(records))
                # overlap: fetch the next records while this batch is handled
                prefetch = asyncio.ensure_future(consumer.getmany(0.05, self.cfg.batch_size))
                stop_wait = asyncio.ensure_future(self._stop.wait())
                await asyncio.wait({batch, stop_wait}, return_when=asyncio.FIRST_COMPLETED)
                if not batch.done():
                    # SIGTERM mid-batch: give in-flight work its grace period, then cut it short
                    done, _ = await asyncio.wait({batch}, timeout=self.cfg.shutdown_timeout_s)
                    if not done:
                        batch.cancel()
                        with contextlib.suppress(asyncio.CancelledError):
                            await batch
                stop_wait.cancel()
                failure = batch.exception() if batch.done() and not batch.cancelled() else None
                if failure is not None:
                    if isinstance(failure, CommitOrderError):
                        raise failure
                    for r in records:  # nothing of this batch is committed: read it all again
                        self._sought.setdefault((r.topic, r.partition), r.offset)
                    backoff = await self._bus_trouble("batch", failure, backoff)
                else:
                    backoff = 0.0
                if self._sought:
                    # some partitions were sought back: what the prefetch read of them is stale
                    try:
                        got = await prefetch
                    except Exception:
                        got = []
                    stale = dict(self._sought)
                    keep = [r for r in got if (r.topic, r.partition) not in stale]
                    for (t, p), off in stale.items():
                        await consumer.seek(TopicPartition(t, p), off)
                    prefetch = asyncio.get_running_loop().create_future()
                    prefetch.set_result(keep)
        finally:
            if prefetch is not None and not prefetch.done():
                prefetch.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await prefetch

    async def _bus_trouble(self, what: str, exc: BaseException, backoff: float) -> float:
        backoff = min(30.0, max(1.0, backoff * 2))
        log.error("%s: %s failed (%s: %s); trying again in %.0fs", self.cube.name, what, type(exc).__name__,
                  exc, backoff)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), backoff)
        return backoff

    async def _on_revoke(self, tps: set[TopicPartition]) -> None:
        # a rebalance takes partitions away: let the batch in flight finish and commit first
        async with self._batch_lock:
            for tp in tps:
                self._committed.pop(tp, None)

    async def _locked_batch(self, records: Sequence[Consumed]) -> None:
        async with self._batch_lock:
            await self._batch(records)

    # ------------------------------------------------------------------ one batch

    async def _batch(self, records: Sequence[Consumed]) -> None:
        assert self.consumer is not None
        self.stats.batches += 1
        if self.stats.first_batch_at is None:
            self.stats.first_batch_at = time.monotonic()
        now = time.time()
        held: dict[tuple[str, int], int] = {}
        todo: list[tuple[int, Consumed]] = []
        for i, r in enumerate(records):
            tpk = (r.topic, r.partition)
            if tpk in held:
                continue
            if r.topic == self.retry_topic:
                nb = _h(r.headers, HEADERS.not_before)
                if nb is not None and float(nb) > now:
                    # a delayed retry that is not due: hold its partition (only the retry topic's)
                    held[tpk] = r.offset
                    self._sought[tpk] = r.offset
                    tp = TopicPartition(r.topic, r.partition)
                    await self.consumer.seek(tp, r.offset)
                    self.consumer.pause([tp])
                    self._resume_later([tp], float(nb) - now)
                    continue
            todo.append((i, r))

        n = self.concurrency
        lanes: dict[int, list[tuple[int, Consumed]]] = {}
        for item in todo:
            lanes.setdefault(hash(item[1].key) % n if n > 1 else 0, []).append(item)
        deliveries: list[asyncio.Future[Any]] = []
        done = bytearray(len(records))
        received_at = datetime.now(UTC)
        hooks: list[Callable[[], Awaitable[None]]] = []
        tasks = [asyncio.ensure_future(self._lane(lane, deliveries, done, received_at, hooks))
                 for lane in lanes.values()]
        watchdog = asyncio.ensure_future(self._watchdog())
        try:
            await asyncio.gather(*tasks)
        except asyncio.CancelledError:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            # shutdown cut the batch short: commit what finished, then stop
            await self._ack_and_commit(records, deliveries, done)
            await self._run_hooks(hooks)
            raise
        finally:
            watchdog.cancel()
        await self._ack_and_commit(records, deliveries, done)
        await self._run_hooks(hooks)

    async def _run_hooks(self, hooks: list[Callable[[], Awaitable[None]]]) -> None:
        for hook in hooks:
            try:
                await hook()
            except Exception:
                log.exception("%s: an after-commit hook failed (the work it confirms is safe; "
                              "the state it would clean up is cleaned up later)", self.cube.name)

    async def _ack_and_commit(
        self,
        records: Sequence[Consumed],
        deliveries: list[asyncio.Future[Any]],
        done: bytearray,
    ) -> None:
        assert self.consumer is not None
        if deliveries:
            # step 4: every output, retry and dead letter acknowledged before any commit
            await self.deps.bus.producer().flush()
            try:
                for f in deliveries:
                    if not f.done():
                        await f
                    elif (exc := f.exception()) is not None:
                        raise exc
            except TurbocubesError:
                raise
            except Exception as exc:  # an engine's own delivery error: the broker did not take it
                raise BusUnavailable(f"delivery failed: {type(exc).__name__}: {exc}") from exc
        commits: dict[tuple[str, int], int] = {}
        stopped: dict[tuple[str, int], int] = {}
        for i, r in enumerate(records):  # records are in offset order per partition
            tpk = (r.topic, r.partition)
            if tpk in stopped:
                continue
            if done[i]:
                commits[tpk] = r.offset + 1
            else:
                stopped[tpk] = r.offset
        to_commit = {TopicPartition(t, p): off for (t, p), off in commits.items()}
        for tp, off in to_commit.items():
            last = self._committed.get(tp)
            if last is not None and off < last:
                raise CommitOrderError(f"{self.cube.name}: commit of {tp} would go back from {last} to {off}")
        if to_commit:
            await self.consumer.commit(to_commit)
            self._committed.update(to_commit)
            self.stats.last_commit_at = time.monotonic()
        for (t, p), off in stopped.items():
            await self.consumer.seek(TopicPartition(t, p), off)
            self._sought[(t, p)] = off
        self._flush_metrics()

    async def _lane(
        self,
        records: list[tuple[int, Consumed]],
        deliveries: list[asyncio.Future[Any]],
        done: bytearray,
        received_at: datetime,
        hooks: list[Callable[[], Awaitable[None]]],
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        for i, r in records:
            if self._breaker_open:
                return  # the rest of this lane is read again after the cooldown
            try:
                await self._one(r, deliveries, received_at, task, hooks)
            except _BreakerOpen:
                return
            done[i] = 1

    async def _watchdog(self) -> None:
        """Cut off handlers that run past ``handler_timeout_s`` (cheaper than a timeout per message)."""
        limit = self.cfg.handler_timeout_s
        while True:
            await asyncio.sleep(min(1.0, limit / 4))
            now = time.monotonic()
            for task, started in list(self._running.items()):
                if now - started > limit and task not in self._timed_out:
                    self._timed_out.add(task)
                    task.cancel()

    async def _one(self, r: Consumed, deliveries: list[asyncio.Future[Any]], received_at: datetime,
                   task: asyncio.Task[None], hooks: list[Callable[[], Awaitable[None]]]) -> None:
        # the hot path of every message: kept flat on purpose (each call and lookup here is
        # paid once per message; see bench/bus.py)
        origin = r.topic
        attempt = 1
        if origin == self.retry_topic:
            origin = (_h(r.headers, HEADERS.origin_topic) or b"").decode() or origin
            attempt = int(_h(r.headers, HEADERS.attempt) or b"1")
        try:
            validate = self._validators.get(origin)
            if validate is None:
                validate = self._validators[origin] = contracts.validator(origin)
            msg = validate(r.value)
        except ContractError as exc:
            await self._dead_letter(r, origin, attempt, exc, deliveries)
            return
        key = r.key
        ctx = Context(origin, r.partition, r.offset, key.decode("utf-8", "replace") if key is not None else None,
                      attempt, received_at, r.headers)
        handler = self.cube.handler
        assert handler is not None
        running = self._running
        t0 = time.perf_counter()
        running[task] = t0
        sends: list[tuple[str, bytes | None, bytes, Headers]] = []
        try:
            try:
                outputs = await handler(msg, ctx)
            except asyncio.CancelledError:
                if task not in self._timed_out:
                    raise
                self._timed_out.discard(task)
                task.uncancel()
                raise TimeoutError(f"handler took longer than {self.cfg.handler_timeout_s}s") from None
            finally:
                running.pop(task, None)
            encoders = self._encoders
            for out in outputs:
                enc = encoders.get(out.topic)
                if enc is None:
                    enc = encoders[out.topic] = self._encoder(out.topic)
                model, key_field, to_json = enc
                message = out.message
                if type(message) is not model:
                    raise PublishContractError(f"{out.topic} carries {model.__name__}, not {type(message).__name__}")
                out_key = out.key if out.key is not None else getattr(message, key_field, None)
                sends.append((out.topic, out_key.encode() if out_key is not None else None, to_json(message),
                              out.headers))
        except Exception as exc:
            self._latencies.append(time.perf_counter() - t0)
            self.stats.failed += 1
            self._count(FAILED, origin)
            if isinstance(exc, PublishContractError):
                log.error("%s: handler built an invalid message: %s", self.cube.name, exc)
            d = decide(attempt, exc, max_attempts=self.cfg.max_attempts, base_s=self.cfg.backoff_base_s,
                       cap_s=self.cfg.backoff_cap_s, rng=self.rng)
            if d.decision is Decision.retry:
                await self._retry(r, origin, attempt, exc, d.delay_s, deliveries)
            else:
                await self._dead_letter(r, origin, attempt, exc, deliveries)
            return
        self._latencies.append(time.perf_counter() - t0)
        send = self._send
        published = self._published
        for topic, out_key_b, value, headers in sends:
            deliveries.append(await send(topic, value, key=out_key_b, headers=headers))
            published[topic] = published.get(topic, 0) + 1
        if ctx.committed_hooks:
            hooks.extend(ctx.committed_hooks)
        processed = self._processed
        processed[origin] = processed.get(origin, 0) + 1
        self.stats.published += len(sends)
        self.stats.processed += 1
        if self._half_open:
            self._record_outcome(dead=False)
        else:
            self._outcomes.append(False)

    def _encoder(self, topic: str) -> tuple[type, str, Callable[[Any], bytes]]:
        if topic not in self.cube.outputs:
            raise PublishContractError(f"cube {self.cube.name} does not declare output {topic}")
        t = contracts.topic(topic)
        return t.model, t.key, t.model.__pydantic_serializer__.to_json

    # ------------------------------------------------------------------ metrics, batched

    def _count(self, metric: Counter, topic: str) -> None:
        key = (metric, topic)
        self._pending_counts[key] = self._pending_counts.get(key, 0) + 1

    def _flush_metrics(self) -> None:
        # counters and the latency histogram are updated once per batch: prometheus_client
        # takes a lock per call, which would be most of a pass-through message's cost
        name = self.cube.name
        for (metric, topic), n in self._pending_counts.items():
            metric.labels(name, topic).inc(n)
        self._pending_counts.clear()
        for counts, metric in ((self._processed, PROCESSED), (self._published, PUBLISHED)):
            for topic, n in counts.items():
                metric.labels(name, topic).inc(n)
            counts.clear()
        if self._latencies:
            HANDLER_SECONDS.observe_many(name, self._latencies)
            self._latencies.clear()

    # ------------------------------------------------------------------ retries and dead letters

    def _failure_headers(self, r: Consumed, origin: str, attempt: int, exc: BaseException) -> list[tuple[str, bytes]]:
        kept = [(k, v) for k, v in r.headers if k not in HEADERS.ALL]
        first = _h(r.headers, HEADERS.first_failure) or repr(time.time()).encode()
        if r.topic == self.retry_topic:
            o_part = _h(r.headers, HEADERS.origin_partition) or b""
            o_off = _h(r.headers, HEADERS.origin_offset) or b""
        else:
            o_part, o_off = str(r.partition).encode(), str(r.offset).encode()
        return [
            *kept,
            (HEADERS.origin_topic, origin.encode()),
            (HEADERS.origin_partition, o_part),
            (HEADERS.origin_offset, o_off),
            (HEADERS.group, self.group.encode()),
            (HEADERS.attempt, str(attempt).encode()),
            (HEADERS.first_failure, first),
            (HEADERS.error_class, type(exc).__name__.encode()),
            (HEADERS.error, str(exc).encode()[:MAX_ERROR_BYTES]),
        ]

    async def _retry(self, r: Consumed, origin: str, attempt: int, exc: BaseException, delay: float,
                     deliveries: list[asyncio.Future[Any]]) -> None:
        headers = [(k, v) for k, v in self._failure_headers(r, origin, attempt, exc) if k != HEADERS.attempt]
        headers += [(HEADERS.attempt, str(attempt + 1).encode()),
                    (HEADERS.not_before, repr(time.time() + delay).encode())]
        deliveries.append(await self._send(self.retry_topic, r.value, key=r.key,
                                                              headers=tuple(headers)))
        self.stats.retried += 1
        self._count(RETRIED, origin)
        log.warning("%s: %s@%s attempt %d failed (%s: %s); retry in %.1fs", self.cube.name, origin, r.offset,
                    attempt, type(exc).__name__, exc, delay)

    async def _dead_letter(self, r: Consumed, origin: str, attempt: int, exc: BaseException,
                           deliveries: list[asyncio.Future[Any]]) -> None:
        if self._would_trip():
            self._trip()
            raise _BreakerOpen
        headers = tuple(self._failure_headers(r, origin, attempt, exc))
        deliveries.append(await self._send(contracts.dlq_topic(origin), r.value, key=r.key,
                                                              headers=headers))
        self.stats.dead_lettered += 1
        self._count(DEAD_LETTERED, origin)
        self._record_outcome(dead=True)
        log.error("%s: dead-lettered %s@%d:%d after %d attempt(s): %s: %s", self.cube.name, origin, r.partition,
                  r.offset, attempt, type(exc).__name__, exc)

    # ------------------------------------------------------------------ DLQ storm breaker

    def _record_outcome(self, *, dead: bool) -> None:
        self._outcomes.append(dead)
        if self._half_open and not dead:
            self._half_open = False
            self._m_breaker.set(0)
            log.warning("%s: DLQ breaker closed", self.cube.name)

    def _would_trip(self) -> bool:
        if self._half_open:
            return True
        window = self.cfg.dlq_breaker_window
        return sum(self._outcomes) + 1 > self.cfg.dlq_breaker_ratio * window

    def _trip(self) -> None:
        if self._breaker_open:
            return
        assert self.consumer is not None
        self._breaker_open = True
        self._half_open = False
        self.stats.breaker_trips += 1
        self._m_breaker.set(1)
        tps = sorted(self.consumer.assignment())
        self.consumer.pause(tps)
        log.error("%s: most recent messages are being dead-lettered: input paused for %.0fs (breaker open)",
                  self.cube.name, self.cfg.dlq_breaker_cooldown_s)

        async def half_open() -> None:
            await asyncio.sleep(self.cfg.dlq_breaker_cooldown_s)
            self._breaker_open = False
            self._half_open = True
            self._outcomes.clear()
            assert self.consumer is not None
            self.consumer.resume(sorted(self.consumer.assignment()))

        t = asyncio.ensure_future(half_open())
        self._resume_tasks.add(t)
        t.add_done_callback(self._resume_tasks.discard)

    def _resume_later(self, tps: Sequence[TopicPartition], delay: float) -> None:
        async def resume() -> None:
            await asyncio.sleep(max(0.0, delay))
            if self.consumer is not None and not self._breaker_open:
                self.consumer.resume(tps)

        t = asyncio.ensure_future(resume())
        self._resume_tasks.add(t)
        t.add_done_callback(self._resume_tasks.discard)

    # ------------------------------------------------------------------ timers and lag

    async def _timer(self, name: str, interval: float, call: Callable[[], Awaitable[Sequence[Output]]]) -> None:
        while not self._stop.is_set():
            try:
                outputs = await call()
                if outputs:
                    await publish_outputs(self.deps, self.cube.name, outputs, declared=self.cube.outputs)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("%s: timer %s failed; it runs again in %.1fs", self.cube.name, name, interval)
            await self.deps.clock.sleep(interval)

    async def _lag_loop(self) -> None:
        while True:
            await asyncio.sleep(LAG_EVERY_S)
            if self.consumer is None:
                continue
            with contextlib.suppress(Exception):
                for tp, lag in (await self.consumer.lag()).items():
                    CONSUMER_LAG.labels(self.cube.name, tp.topic, str(tp.partition)).set(lag)


async def publish_outputs(deps: Deps, cube_name: str, outputs: Sequence[Output],
                          declared: Sequence[str] | None = None) -> None:
    """Validate, send and await acknowledgement of ``outputs`` (used by timers and HTTP cubes)."""
    producer = deps.bus.producer()
    futs = []
    for out in outputs:
        if declared is not None and out.topic not in declared:
            raise PublishContractError(f"cube {cube_name} does not declare output {out.topic}")
        value = contracts.encode(out.topic, out.message)
        key = out.key if out.key is not None else getattr(out.message, contracts.topic(out.topic).key, None)
        futs.append(await producer.send(out.topic, value, key=key.encode() if key is not None else None,
                                        headers=out.headers))
        PUBLISHED.labels(cube_name, out.topic).inc()
    if futs:
        await producer.flush()
        await asyncio.gather(*futs)
