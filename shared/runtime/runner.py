"""The cube runner: consume, validate, handle, publish, acknowledge, commit (DESIGN.md section 4, runtime).

Records stream through without batch barriers:

* **Intake** polls the bus while fewer than ``runtime.batch_size`` records are
  in flight, and hands each record to the worker of its *lane* —
  ``hash(key) % concurrency``, or the key itself for cubes declared with
  ``lanes="per_key"`` — which handles the lane's records in order, so per-key
  order is kept while lanes run side by side.
* **A worker** validates the record against its topic's schema (invalid → a
  dead letter at once), runs the handler, validates and sends its outputs;
  a failure becomes a delayed retry (``retry.<cube>`` with attempt and
  not-before headers) or a dead letter (``<topic>.dlq``) — never an in-place
  sleep, so one bad message cannot stall the records behind it (per-key order
  is given up for the message being retried; stores keep the newest version,
  so that is harmless).
* **The committer** (commit order, STYLE.md rule 9 — do not reorder):
  1. per partition, take the finished records at the head, in offset order,
     up to the first unfinished one (offsets are committed *contiguously*);
  2. await the acknowledgement of everything they produced (outputs,
     retries, dead letters);
  3. commit, per partition, the offset after the last of them — an offset
     that would move backwards raises ``CommitOrderError``;
  4. run their ``after_commit`` hooks; update metrics.

A delayed retry that is not due yet holds back its (retry-topic) partition
only: intake pauses that partition and dispatches it again when due.

When the bus fails (the broker gone, deliveries not acknowledged) nothing
unacknowledged is committed: the runner drops everything in flight, seeks each
partition back to its last commit, backs off (1 s doubling to 30 s) and reads
again. Outputs that did get out are produced again then — at-least-once; the
stores' versioning makes that harmless.

DLQ storm breaker: see ``breaker.py``; while it is open the inputs are paused
and the message that would have been dead-lettered waits to run again.

Shutdown (SIGTERM / SIGINT via ``stop()``): intake stops; in-flight work gets
``shutdown_timeout_s`` to finish; what finished is committed; the consumer
leaves the group. A rebalance that takes partitions away waits for their
in-flight records the same way and commits them before they go.
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
from shared.errors import (
    BusUnavailable,
    CommitOrderError,
    ContractError,
    PublishContractError,
    TurbocubesError,
    is_outage,
)
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
from shared.runtime.breaker import Breaker
from shared.runtime.cube import Context, Cube, Output
from shared.runtime.deps import Deps
from shared.runtime.retry import Decision, decide

__all__ = ["HEADERS", "RunStats", "Runner", "publish_outputs"]

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
        {attempt, first_failure, not_before, origin_topic, origin_partition, origin_offset, error_class, error, group}
    )


#: how often consumer lag is sampled for /metrics
LAG_EVERY_S = 5.0
#: an error text in a header is cut to this many bytes (Kafka headers are not for essays)
MAX_ERROR_BYTES = 2000
#: finished records are committed in groups at most this often: a commit per record would cost a
#: broker round trip each; 20 ms keeps the added latency far below a person's notice
COMMIT_EVERY_S = 0.02


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
    #: time.monotonic() when the first record arrived and when the last commit was made
    first_batch_at: float | None = None
    last_commit_at: float | None = None


class _Slot:
    """One record in flight: its place in its partition's commit order, and what it produced."""

    __slots__ = ("cancelled", "deliveries", "done", "hooks", "record", "started")

    def __init__(self, record: Consumed) -> None:
        self.record = record
        self.done = False
        self.started = False
        self.cancelled = False
        self.deliveries: list[asyncio.Future[Any]] = []
        self.hooks: list[Callable[[], Awaitable[None]]] | None = None


class _Rerun(Exception):
    """The breaker held this message back; run it again once the breaker lets it through."""


class _Outage(Exception):
    """Our own infrastructure is down (``shared.errors.is_outage``): wait, then run this message again."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


#: an outage is waited out in place: first wait, and the cap of the doubling waits (seconds)
OUTAGE_FIRST_S = 0.5
OUTAGE_CAP_S = 30.0


def _h(headers: Sequence[tuple[str, bytes]], name: str) -> bytes | None:
    for k, v in headers:
        if k == name:
            return v
    return None


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
        #: the cube's own limit (a parser loading a 100,000-offer catalog) or the runtime's default
        self.handler_timeout_s = cube.handler_timeout_s or self.cfg.handler_timeout_s
        self.group = group or cube.name
        self.retry_topic = contracts.retry_topic(self.group)
        self.max_messages = max_messages
        self.idle_timeout = idle_timeout
        self.rng = rng or random.Random()
        self.concurrency = max(1, cube.concurrency or self.cfg.concurrency)
        self.max_in_flight = max(self.concurrency, self.cfg.batch_size)
        self.stats = RunStats()
        self.consumer: Consumer | None = None
        self.breaker = Breaker(self.cfg.dlq_breaker_window, self.cfg.dlq_breaker_ratio, self.cfg.dlq_breaker_cooldown_s)
        self._stop = asyncio.Event()
        self._started = asyncio.Event()
        self._committed: dict[TopicPartition, int] = {}
        self._tracks: dict[tuple[str, int], deque[_Slot]] = {}
        self._queues: dict[Any, deque[_Slot]] = {}
        self._per_key = cube.lanes == "per_key"
        #: per-key lanes are unbounded in number; this bounds the handlers running at once
        self._sem = asyncio.Semaphore(self.concurrency) if self._per_key else None
        self._workers: set[asyncio.Task[None]] = set()
        self._held: dict[tuple[str, int], deque[_Slot]] = {}
        self._in_flight = 0
        self._room = asyncio.Event()
        self._finished = asyncio.Event()
        self._commit_lock = asyncio.Lock()
        self._closing = False
        self._received_at = datetime.now(UTC)
        self._bus_failure: BaseException | None = None
        self._side_tasks: set[asyncio.Task[None]] = set()
        self._m_breaker = BREAKER_OPEN.labels(cube.name)
        self._running: dict[asyncio.Task[None], float] = {}
        self._timed_out: set[asyncio.Task[None]] = set()
        self._pending_counts: dict[tuple[Counter, str], int] = {}
        self._latencies: list[float] = []
        self._validators: dict[str, Callable[[bytes], Any]] = {}
        self._encoders: dict[str, tuple[type, str, Callable[[Any], bytes]]] = {}
        self._processed: dict[str, int] = {}
        self._published: dict[str, int] = {}

    # ------------------------------------------------------------------ lifecycle

    def stop(self) -> None:
        """Ask for a graceful stop: no new intake; in-flight work finishes and is committed."""
        self._stop.set()

    @property
    def started(self) -> asyncio.Event:
        return self._started

    @property
    def breaker_open(self) -> bool:
        return not self.breaker.passable.is_set()

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
                if cube.on_assignment is not None:
                    cube.on_assignment(self.consumer.assignment)
                self._send = self.deps.bus.producer().send
                tasks.append(asyncio.create_task(self._lag_loop()))
                tasks.append(asyncio.create_task(self._watchdog()))
                self._started.set()
                await self._consume()
            else:
                self._started.set()
                await self._stop.wait()
        finally:
            for t in [*tasks, *self._side_tasks]:
                t.cancel()
            for t in [*tasks, *self._side_tasks]:
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

    # ------------------------------------------------------------------ intake

    def _enough(self) -> bool:
        if self.max_messages is None:
            return False
        return self.stats.processed + self.stats.dead_lettered + self._in_flight >= self.max_messages

    async def _consume(self) -> None:
        assert self.consumer is not None
        consumer = self.consumer
        committer = asyncio.create_task(self._commit_loop())
        idle_since = time.monotonic()
        backoff = 0.0
        try:
            while not self._stop.is_set():
                if committer.done():
                    committer.result()  # a CommitOrderError is a bug: let it out, loudly
                if self._bus_failure is not None:
                    backoff = await self._recover(backoff)
                    continue
                if self._enough():
                    if self._in_flight == 0:
                        return
                    await self._wait_any(self._finished)
                    continue
                room = self.max_in_flight - self._in_flight
                if room <= 0:
                    await self._wait_any(self._room)
                    continue
                try:
                    records = await consumer.getmany(0.05 if self._in_flight else 0.2, room)
                except Exception as exc:  # the bus is unreachable: wait and poll again
                    self.stats.bus_failures += 1
                    backoff = await self._backoff("poll", exc, backoff)
                    continue
                if not records:
                    quiet = self._in_flight == 0 and not self._held
                    if quiet and self.idle_timeout is not None and time.monotonic() - idle_since >= self.idle_timeout:
                        return
                    continue
                idle_since = time.monotonic()
                backoff = 0.0
                if self.stats.first_batch_at is None:
                    self.stats.first_batch_at = idle_since
                # one timestamp per poll, not per record: "received" means when the poll returned
                self._received_at = datetime.now(UTC)
                for r in records:
                    self._admit(r)
        finally:
            await self._drain()
            # let a commit in progress end (cancelling it could cut its after-commit hooks short)
            self._closing = True
            with contextlib.suppress(Exception):
                await committer
            with contextlib.suppress(Exception):
                await self._commit_finished()

    async def _wait_any(self, event: asyncio.Event, *, consume: bool = True) -> bool:
        """Wait for ``event`` or a stop (at most a second); True when ``event`` was set.

        ``consume`` clears the event afterwards: right for the runner's own wake-up signals,
        wrong for a state someone else owns (the breaker's ``passable``: clearing it would leave
        every other waiting lane asleep for good).
        """
        stop = asyncio.ensure_future(self._stop.wait())
        waiter = asyncio.ensure_future(event.wait())
        await asyncio.wait({stop, waiter}, timeout=1.0, return_when=asyncio.FIRST_COMPLETED)
        stop.cancel()
        waiter.cancel()
        fired = event.is_set()
        if consume:
            event.clear()
        return fired

    def _admit(self, r: Consumed) -> None:
        tpk = (r.topic, r.partition)
        slot = _Slot(r)
        track = self._tracks.get(tpk)
        if track is None:
            track = self._tracks[tpk] = deque()
        track.append(slot)
        self._in_flight += 1
        held = self._held.get(tpk)
        if held is not None:
            held.append(slot)  # behind a retry that is not due yet
            return
        if r.topic == self.retry_topic:
            nb = _h(r.headers, HEADERS.not_before)
            if nb is not None and float(nb) > time.time():
                self._hold(tpk, slot, float(nb))
                return
        self._dispatch(slot)

    def _dispatch(self, slot: _Slot) -> None:
        # a key always maps to the same lane, so its records are handled in order; `concurrency`
        # lanes run side by side (a cube whose keys wait a lot, like the crawler's hosts, sets it
        # high so that few keys share a lane). A lane worker lives while its lane has records.
        key = self._lane_of(slot.record.key)
        q = self._queues.get(key)
        if q is None:
            q = self._queues[key] = deque([slot])
            worker = asyncio.ensure_future(self._worker(key, q))
            self._workers.add(worker)
            worker.add_done_callback(self._workers.discard)
        else:
            q.append(slot)

    def _lane_of(self, key: bytes | None) -> Any:
        return key if self._per_key else hash(key) % self.concurrency

    async def _worker(self, key: Any, q: deque[_Slot]) -> None:
        """Handle one lane's records in order; ends when the lane has nothing left in flight."""
        task = asyncio.current_task()
        assert task is not None
        try:
            while q:
                slot = q[0]
                if not slot.cancelled:
                    slot.started = True
                    if self._sem is None:
                        finished = await self._run_slot(slot, task)
                    else:
                        async with self._sem:
                            finished = await self._run_slot(slot, task)
                    if not finished:
                        return  # not done: it is read again (after recovery, or by the next run)
                    slot.done = True
                q.popleft()
                self._in_flight -= 1
                self._room.set()
                self._finished.set()
        finally:
            if self._queues.get(key) is q:
                del self._queues[key]

    async def _run_slot(self, slot: _Slot, task: asyncio.Task[None]) -> bool:
        """Handle one record; False when it could not be finished (the bus failed, or we stop)."""
        outage_wait = 0.0
        while True:
            try:
                await self._one(slot, task)
                return True
            except _Outage as outage:
                # a store / blob store / bus is down: the message is fine, so it is neither retried
                # through the retry topic nor dead-lettered; this lane waits and runs it again
                # (every lane meets the same outage, so the cube as a whole pauses until it ends)
                outage_wait = min(OUTAGE_CAP_S, max(OUTAGE_FIRST_S, outage_wait * 2))
                self.stats.outage_waits += 1
                log.warning(
                    "%s: %s (%s); waiting %.1fs, then trying the same message again",
                    self.cube.name,
                    type(outage.cause).__name__,
                    outage.cause,
                    outage_wait,
                )
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), outage_wait * self.rng.uniform(0.8, 1.2))
                if self._stop.is_set():
                    return False
            except _Rerun:
                # the breaker is open: wait for half-open, unless we are told to stop
                while not await self._wait_any(self.breaker.passable, consume=False):
                    if self._stop.is_set():
                        return False
            except CommitOrderError:
                raise
            except Exception as exc:
                # sending failed (handler errors are dealt with inside _one): the bus is in
                # trouble; the intake loop drops what is in flight and reads it again
                self.stats.bus_failures += 1
                self._bus_failure = exc
                return False

    def _hold(self, tpk: tuple[str, int], slot: _Slot, not_before: float) -> None:
        """Park a retry that is not due yet — and what follows it on its partition — until it is due."""
        assert self.consumer is not None
        held = self._held[tpk] = deque([slot])
        tp = TopicPartition(*tpk)
        self.consumer.pause([tp])

        async def release() -> None:
            await asyncio.sleep(max(0.0, not_before - time.time()))
            if self._held.get(tpk) is not held:
                return  # the partition was revoked or the runner recovered meanwhile
            del self._held[tpk]
            while held:
                nxt = held.popleft()
                if nxt.cancelled:
                    continue
                nb = _h(nxt.record.headers, HEADERS.not_before)
                if nb is not None and float(nb) > time.time():
                    self._hold(tpk, nxt, float(nb))
                    self._held[tpk].extend(held)
                    return
                self._dispatch(nxt)
            if self.consumer is not None and not self.breaker_open:
                self.consumer.resume([tp])

        self._spawn(release())

    def _spawn(self, coro: Awaitable[None]) -> None:
        t = asyncio.ensure_future(coro)
        self._side_tasks.add(t)
        t.add_done_callback(self._side_tasks.discard)

    async def _drain(self) -> None:
        """Stop: let in-flight work finish within the grace period, then cancel the rest."""
        deadline = time.monotonic() + self.cfg.shutdown_timeout_s
        while self._workers and time.monotonic() < deadline:
            await asyncio.wait(set(self._workers), timeout=max(0.0, deadline - time.monotonic()))
        for w in list(self._workers):
            w.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)

    # ------------------------------------------------------------------ commits

    async def _commit_loop(self) -> None:
        while not self._closing:
            await asyncio.sleep(COMMIT_EVERY_S)
            if self._bus_failure is not None:
                continue
            try:
                await self._commit_finished()
            except CommitOrderError:
                raise
            except Exception as exc:
                self.stats.bus_failures += 1
                self._bus_failure = exc

    async def _commit_finished(self) -> None:
        """Steps 1-4 of the commit order (module docstring)."""
        assert self.consumer is not None
        async with self._commit_lock:
            ready: list[_Slot] = []
            commits: dict[TopicPartition, int] = {}
            for (topic, partition), track in self._tracks.items():
                last = -1
                while track and track[0].done:
                    slot = track.popleft()
                    ready.append(slot)
                    last = slot.record.offset
                if last >= 0:
                    commits[TopicPartition(topic, partition)] = last + 1
            if not commits:
                self._flush_metrics()
                return
            deliveries = [f for s in ready for f in s.deliveries]
            if deliveries:
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
            for tp, off in commits.items():
                previous = self._committed.get(tp)
                if previous is not None and off < previous:
                    raise CommitOrderError(f"{self.cube.name}: commit of {tp} would go back from {previous} to {off}")
            await self.consumer.commit(commits)
            self._committed.update(commits)
            self.stats.commits += 1
            self.stats.last_commit_at = time.monotonic()
            for slot in ready:
                if slot.hooks:
                    await self._run_hooks(slot.hooks)
            self._flush_metrics()

    async def _run_hooks(self, hooks: list[Callable[[], Awaitable[None]]]) -> None:
        for hook in hooks:
            try:
                await hook()
            except Exception:
                log.exception(
                    "%s: an after-commit hook failed (the work it confirms is safe; "
                    "the state it would clean up is cleaned up later)",
                    self.cube.name,
                )

    async def _recover(self, backoff: float) -> float:
        """The bus failed under work in flight: drop it all and read again from the last commits."""
        assert self.consumer is not None
        exc, self._bus_failure = self._bus_failure, None
        assert exc is not None
        reset = getattr(self.deps.bus.producer(), "reset", None)
        if reset is not None:
            # a producer left broken by a broker restart (Kafka: out-of-order sequence numbers
            # forever) would fail every retry; the engine replaces it
            with contextlib.suppress(Exception):
                await reset()
        for w in list(self._workers):
            w.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)
        positions: dict[TopicPartition, int | None] = dict.fromkeys(self.consumer.assignment())
        for tpk, track in self._tracks.items():
            if track:
                positions[TopicPartition(*tpk)] = track[0].record.offset
        self._tracks.clear()
        self._queues.clear()
        self._held.clear()
        self._in_flight = 0
        for tp, first_unfinished in positions.items():
            committed = self._committed.get(tp)
            if committed is None:
                with contextlib.suppress(Exception):
                    committed = await self.consumer.committed(tp)
            target = committed if committed is not None else first_unfinished
            if target is not None:
                await self.consumer.seek(tp, target)
            self.consumer.resume([tp])
        return await self._backoff("delivery", exc, backoff)

    async def _backoff(self, what: str, exc: BaseException, backoff: float) -> float:
        backoff = min(30.0, max(1.0, backoff * 2))
        log.error(
            "%s: %s failed (%s: %s); trying again in %.0fs", self.cube.name, what, type(exc).__name__, exc, backoff
        )
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), backoff)
        return backoff

    async def _on_revoke(self, tps: set[TopicPartition]) -> None:
        """A rebalance takes partitions away: finish and commit their in-flight records first."""
        gone = {(tp.topic, tp.partition) for tp in tps}
        for tpk in gone:
            for slot in self._tracks.get(tpk, ()):
                if not slot.started:
                    slot.cancelled = True  # not begun: the new owner reads it
            for slot in self._held.pop(tpk, ()):
                slot.cancelled = True
                self._in_flight -= 1
        deadline = time.monotonic() + self.cfg.shutdown_timeout_s
        while time.monotonic() < deadline and any(
            s.started and not s.done for tpk in gone for s in self._tracks.get(tpk, ())
        ):
            await self._wait_any(self._finished)
        with contextlib.suppress(Exception):
            await self._commit_finished()
        for tpk in gone:
            self._tracks.pop(tpk, None)
            self._committed.pop(TopicPartition(*tpk), None)

    # ------------------------------------------------------------------ one message

    async def _one(self, slot: _Slot, task: asyncio.Task[None]) -> None:
        # the hot path of every message: kept flat on purpose (each call and lookup here is
        # paid once per message; see bench/bus.py)
        r = slot.record
        deliveries = slot.deliveries
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
        ctx = Context(
            origin,
            r.partition,
            r.offset,
            key.decode("utf-8", "replace") if key is not None else None,
            attempt,
            self._received_at,
            r.headers,
        )
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
                raise TimeoutError(f"handler took longer than {self.handler_timeout_s}s") from None
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
                sends.append(
                    (out.topic, out_key.encode() if out_key is not None else None, to_json(message), out.headers)
                )
        except Exception as exc:
            self._latencies.append(time.perf_counter() - t0)
            self.stats.failed += 1
            self._count(FAILED, origin)
            if is_outage(exc):
                raise _Outage(exc) from exc
            if isinstance(exc, PublishContractError):
                log.error("%s: handler built an invalid message: %s", self.cube.name, exc)
            d = decide(
                attempt,
                exc,
                max_attempts=self.cfg.max_attempts,
                base_s=self.cfg.backoff_base_s,
                cap_s=self.cfg.backoff_cap_s,
                rng=self.rng,
            )
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
            slot.hooks = ctx.committed_hooks
        processed = self._processed
        processed[origin] = processed.get(origin, 0) + 1
        self.stats.published += len(sends)
        self.stats.processed += 1
        self.breaker.success()
        if self._m_breaker_set:
            self._m_breaker.set(0)
            self._m_breaker_set = False

    _m_breaker_set = False

    def _encoder(self, topic: str) -> tuple[type, str, Callable[[Any], bytes]]:
        if topic not in self.cube.outputs:
            raise PublishContractError(f"cube {self.cube.name} does not declare output {topic}")
        t = contracts.topic(topic)
        return t.model, t.key, t.model.__pydantic_serializer__.to_json

    async def _watchdog(self) -> None:
        """Cut off handlers that run past ``handler_timeout_s`` (cheaper than a timeout per message)."""
        limit = self.handler_timeout_s
        while True:
            await asyncio.sleep(min(1.0, limit / 4))
            now = time.perf_counter()
            for task, started in list(self._running.items()):
                if now - started > limit and task not in self._timed_out:
                    self._timed_out.add(task)
                    task.cancel()

    # ------------------------------------------------------------------ metrics, batched

    def _count(self, metric: Counter, topic: str) -> None:
        key = (metric, topic)
        self._pending_counts[key] = self._pending_counts.get(key, 0) + 1

    def _flush_metrics(self) -> None:
        # counters and the latency histogram are updated in groups: prometheus_client takes a
        # lock per call, which would be most of a pass-through message's cost
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

    async def _retry(
        self,
        r: Consumed,
        origin: str,
        attempt: int,
        exc: BaseException,
        delay: float,
        deliveries: list[asyncio.Future[Any]],
    ) -> None:
        headers = [(k, v) for k, v in self._failure_headers(r, origin, attempt, exc) if k != HEADERS.attempt]
        headers += [
            (HEADERS.attempt, str(attempt + 1).encode()),
            (HEADERS.not_before, repr(time.time() + delay).encode()),
        ]
        deliveries.append(await self._send(self.retry_topic, r.value, key=r.key, headers=tuple(headers)))
        self.stats.retried += 1
        self._count(RETRIED, origin)
        log.warning(
            "%s: %s@%s attempt %d failed (%s: %s); retry in %.1fs",
            self.cube.name,
            origin,
            r.offset,
            attempt,
            type(exc).__name__,
            exc,
            delay,
        )

    async def _dead_letter(
        self, r: Consumed, origin: str, attempt: int, exc: BaseException, deliveries: list[asyncio.Future[Any]]
    ) -> None:
        if not self.breaker.dead_letter_allowed():
            self._trip()
            raise _Rerun
        headers = tuple(self._failure_headers(r, origin, attempt, exc))
        deliveries.append(await self._send(contracts.dlq_topic(origin), r.value, key=r.key, headers=headers))
        self.stats.dead_lettered += 1
        self._count(DEAD_LETTERED, origin)
        self.breaker.dead_lettered()
        log.error(
            "%s: dead-lettered %s@%d:%d after %d attempt(s): %s: %s",
            self.cube.name,
            origin,
            r.partition,
            r.offset,
            attempt,
            type(exc).__name__,
            exc,
        )

    def _trip(self) -> None:
        if not self.breaker.trip():
            return
        assert self.consumer is not None
        self.stats.breaker_trips += 1
        self._m_breaker.set(1)
        self._m_breaker_set = True
        self.consumer.pause(sorted(self.consumer.assignment()))
        log.error(
            "%s: most recent messages are being dead-lettered: input paused for %.0fs (breaker open)",
            self.cube.name,
            self.cfg.dlq_breaker_cooldown_s,
        )

        async def half_open() -> None:
            await asyncio.sleep(self.cfg.dlq_breaker_cooldown_s)
            self.breaker.half_open()
            if self.consumer is not None:
                held = {TopicPartition(*tpk) for tpk in self._held}
                self.consumer.resume([tp for tp in sorted(self.consumer.assignment()) if tp not in held])

        self._spawn(half_open())

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


async def publish_outputs(
    deps: Deps, cube_name: str, outputs: Sequence[Output], declared: Sequence[str] | None = None
) -> None:
    """Validate, send and await acknowledgement of ``outputs`` (used by timers and HTTP cubes)."""
    producer = deps.bus.producer()
    futs = []
    for out in outputs:
        if declared is not None and out.topic not in declared:
            raise PublishContractError(f"cube {cube_name} does not declare output {out.topic}")
        value = contracts.encode(out.topic, out.message)
        key = out.key if out.key is not None else getattr(out.message, contracts.topic(out.topic).key, None)
        futs.append(
            await producer.send(out.topic, value, key=key.encode() if key is not None else None, headers=out.headers)
        )
        PUBLISHED.labels(cube_name, out.topic).inc()
    if futs:
        try:
            await producer.flush()
            await asyncio.gather(*futs)
        except Exception as exc:
            reset = getattr(producer, "reset", None)
            if reset is not None:  # see Runner._recover: a producer broken for good is replaced
                with contextlib.suppress(Exception):
                    await reset()
            if isinstance(exc, TurbocubesError):
                raise
            raise BusUnavailable(f"delivery failed: {type(exc).__name__}: {exc}") from exc
