"""Lanes: records run side by side, each key's in order (docs/architecture.md section 4, runtime).

Each record read goes to the worker of its *lane* — ``hash(key) % concurrency``,
or the key itself for cubes declared with ``lanes="per_key"`` (then a semaphore
bounds the handlers running at once to ``concurrency``) — which handles the
lane's records one after another, so per-key order is kept while lanes run
side by side. A lane's worker lives while its lane has records.

A per-key cube whose keys need no order may say how many of one key's records
run at once (``key_width``: the crawler's host lane's concurrency cap, which a
single worker per host never reached): up to that many workers then take the
key's records, each as soon as one is free — the classes of its records in turn
(``key_class``, ``rotation.py``: a host's feed polls do not wait behind its hundreds of images).

A delayed retry that is not due yet (``tc-not-before`` in the future) is
*held*: its retry-topic partition pauses, the record and whatever arrives
behind it on that partition wait, and they are dispatched when it is due —
so it holds back that partition only, never the cube's inputs.

The dispatcher counts the records in flight (dispatched or held, not yet
finished) and wakes the intake (``room``, ``finished``) as they finish.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Callable, Coroutine, Iterable
from typing import Any, Protocol

from shared.bus.base import Consumer, TopicPartition, header
from shared.clock import Clock
from shared.runtime.breaker import Breaker
from shared.runtime.commits import Slot
from shared.runtime.headers import HEADERS
from shared.runtime.rotation import ClassOf, Rotation
from shared.runtime.shutdown import CANCEL_GRACE_S, settle

__all__ = ["LaneDispatcher", "SlotRunner"]

log = logging.getLogger("turbocubes.runtime")


class SlotRunner(Protocol):
    """Who handles the records the lanes hand out (the runner's session)."""

    async def run_slot(self, slot: Slot, task: asyncio.Task[None]) -> bool:
        """Handle one record; False when it could not be finished (the bus failed, or the runner stops)."""
        ...


class LaneDispatcher:
    """The lanes of one runner, their workers, and the retries held until due."""

    def __init__(
        self,
        *,
        concurrency: int,
        per_key: bool,
        retry_topic: str,
        consumer: Consumer,
        clock: Clock,
        slots: SlotRunner,
        breaker: Breaker,
        key_width: Callable[[Any], int] | None = None,
        key_class: ClassOf | None = None,
    ) -> None:
        self.concurrency = concurrency
        self.per_key = per_key
        #: per-key lanes only: how many of one key's records may run at once (None: one, in order)
        self.key_width = key_width if per_key else None
        #: wide lanes only: the class of a record; a key's classes take turns (``rotation.py``)
        self.key_class = key_class
        self.retry_topic = retry_topic
        self.consumer = consumer
        self.clock = clock
        self.slots = slots
        #: a partition whose held retry came due is read again only while the breaker lets messages through
        self.breaker = breaker
        #: records dispatched or held and not finished yet
        self.in_flight = 0
        #: set when a record finishes: room for one more (``room``), progress (``finished``)
        self.room = asyncio.Event()
        self.finished = asyncio.Event()
        self._queues: dict[Any, deque[Slot]] = {}
        #: per-key lanes are unbounded in number; this bounds the handlers running at once
        self._sem = asyncio.Semaphore(concurrency) if per_key else None
        self._workers: set[asyncio.Task[None]] = set()
        #: wide lanes (``key_width``): their queues, and their workers (more start while the key has
        #: records and room)
        self._wide: dict[Any, Rotation] = {}
        self._width: dict[Any, int] = {}
        self._held: dict[tuple[str, int], deque[Slot]] = {}
        self._releases: set[asyncio.Task[None]] = set()

    # ------------------------------------------------------------------ what the runner asks

    @property
    def idle(self) -> bool:
        """Nothing in flight and nothing held."""
        return self.in_flight == 0 and not self._held

    def held(self) -> list[tuple[str, int]]:
        """The partitions paused behind a retry that is not due yet."""
        return list(self._held)

    def describe(self) -> dict[str, int]:
        """For a stall report: records in flight, held partitions, live lanes."""
        return {"in_flight": self.in_flight, "held": len(self._held), "lanes": len(self._queues) + len(self._wide)}

    # ------------------------------------------------------------------ intake

    def admit(self, slot: Slot) -> None:
        """A record just read: to its lane, or held behind (or as) a retry that is not due."""
        r = slot.record
        tpk = (r.topic, r.partition)
        self.in_flight += 1
        held = self._held.get(tpk)
        if held is not None:
            held.append(slot)  # behind a retry that is not due yet
            return
        if r.topic == self.retry_topic:
            nb = header(r.headers, HEADERS.not_before)
            if nb is not None and float(nb) > self.clock.time():
                self._hold(tpk, slot, float(nb))
                return
        self.dispatch(slot)

    def dispatch(self, slot: Slot) -> None:
        # a key always maps to the same lane, so its records are handled in order; `concurrency`
        # lanes run side by side (a cube whose keys wait a lot, like the crawler's hosts, sets it
        # high so that few keys share a lane)
        key = slot.record.key
        lane = key if self.per_key else hash(key) % self.concurrency
        if self.key_width is not None:
            rotation = self._wide.get(lane)
            if rotation is None:
                rotation = self._wide[lane] = Rotation(self.key_class)
            rotation.append(slot)
            running = self._width.get(lane, 0)
            if running < self.key_width(key):
                self._width[lane] = running + 1
                self._start(self._wide_worker(lane, rotation))
            return
        q = self._queues.get(lane)
        if q is None:
            q = self._queues[lane] = deque([slot])
            self._start(self._worker(lane, q))
        else:
            q.append(slot)

    def _start(self, work: Coroutine[Any, Any, None]) -> None:
        worker = asyncio.ensure_future(work)
        self._workers.add(worker)
        worker.add_done_callback(self._workers.discard)

    async def _worker(self, lane: Any, q: deque[Slot]) -> None:
        """Handle one lane's records in order; ends when the lane has nothing left in flight."""
        task = asyncio.current_task()
        assert task is not None
        try:
            while q:
                slot = q[0]
                if not slot.cancelled and not await self._run(slot, task):
                    return  # not done: it is read again (after recovery, or by the next run)
                q.popleft()
                self.in_flight -= 1
                self.room.set()
                self.finished.set()
        finally:
            if self._queues.get(lane) is q:
                del self._queues[lane]

    async def _run(self, slot: Slot, task: asyncio.Task[None]) -> bool:
        """Handle one slot on its lane's worker ``task``; False when it could not be finished.

        A slot cancelled while it runs (its partition revoked: ``stop_running``) ends here, not
        done, and the lane goes on with its next record: the revoke's cancellation was meant for
        this handler only.
        """
        slot.started = slot.running = True
        slot.task = task
        try:
            if self._sem is None:
                finished = await self.slots.run_slot(slot, task)
            else:
                async with self._sem:
                    finished = await self.slots.run_slot(slot, task)
        except asyncio.CancelledError:
            if not slot.cancelled:
                raise  # the runner stops, or recovers: the whole lane goes
            task.uncancel()
            return True  # not done (never committed): the partition's next owner handles it
        finally:
            slot.running = False
            slot.task = None
            if slot.cancelled:
                self.finished.set()  # ``stop_running`` waits for it
        if finished:
            slot.done = True
        return finished

    async def _wide_worker(self, lane: Any, q: Rotation) -> None:
        """One of up to ``key_width`` workers of one key: takes its records as ``Rotation`` hands them
        out, no order kept between them (the commit order is the tracker's, per partition, all the same)."""
        task = asyncio.current_task()
        assert task is not None
        try:
            while q:
                slot = q.popleft()
                if not slot.cancelled and not await self._run(slot, task):
                    return  # not done: it is read again (after recovery, or by the next run)
                self.in_flight -= 1
                self.room.set()
                self.finished.set()
        finally:
            left = self._width.get(lane, 1) - 1
            if left > 0:
                self._width[lane] = left
            else:
                self._width.pop(lane, None)
                if self._wide.get(lane) is q:
                    del self._wide[lane]

    # ------------------------------------------------------------------ delayed retries

    def _hold(self, tpk: tuple[str, int], slot: Slot, not_before: float) -> None:
        """Park a retry that is not due yet — and what follows it on its partition — until it is due."""
        held = self._held[tpk] = deque([slot])
        self.consumer.pause([TopicPartition(*tpk)])
        release = asyncio.ensure_future(self._release(tpk, held, not_before))
        self._releases.add(release)
        release.add_done_callback(self._releases.discard)

    async def _release(self, tpk: tuple[str, int], held: deque[Slot], not_before: float) -> None:
        clock = self.clock
        await clock.sleep(not_before - clock.time())
        if self._held.get(tpk) is not held:
            return  # the partition was revoked or the runner recovered meanwhile
        del self._held[tpk]
        while held:
            nxt = held.popleft()
            if nxt.cancelled:
                continue
            nb = header(nxt.record.headers, HEADERS.not_before)
            if nb is not None and float(nb) > clock.time():
                self._hold(tpk, nxt, float(nb))
                self._held[tpk].extend(held)
                return
            self.dispatch(nxt)
        if self.breaker.passable.is_set():
            self.consumer.resume([TopicPartition(*tpk)])

    # ------------------------------------------------------------------ rebalance, recovery, stop

    def revoke(self, tpks: Iterable[tuple[str, int]], slots: Callable[[tuple[str, int]], Iterable[Slot]]) -> None:
        """These partitions go to another member: what has not begun is theirs to read."""
        for tpk in tpks:
            for slot in slots(tpk):
                if not slot.started:
                    slot.cancelled = True
            for slot in self._held.pop(tpk, ()):
                slot.cancelled = True
                self.in_flight -= 1

    async def stop_running(self, cube: str, running: Iterable[Slot], grace_s: float = CANCEL_GRACE_S) -> list[Slot]:
        """Cancel the handlers of ``running`` (slots of revoked partitions) and wait, at most
        ``grace_s`` (the loop's time), until each has ended; the slots still running then."""
        slots = [s for s in running if s.running and s.task is not None]
        log.warning(
            "%s: %d handler(s) still running after their partitions were revoked: cancelled (their next owner"
            " handles their records again)",
            cube,
            len(slots),
        )
        for slot in slots:
            slot.cancelled = True
            assert slot.task is not None
            slot.task.cancel()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(grace_s):
                while any(s.running for s in slots):
                    # each cancelled slot's lane goes on to its next record, setting ``finished``
                    self.finished.clear()
                    await self.finished.wait()
        stuck = [s for s in slots if s.running]
        if stuck:
            log.error("%s: %d revoked handler(s) ignore their cancellation and still run", cube, len(stuck))
        return stuck

    async def drain(self, grace_s: float) -> None:
        """Let the workers finish within ``grace_s`` (new ones too: a held retry may come due
        meanwhile), then cancel the rest.

        The grace is counted on the event loop's time, not the injected clock: a bound that
        makes shutdown end must pass even while a test's ManualClock stands still.
        """
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(grace_s):
                while self._workers:
                    await asyncio.wait(set(self._workers))
        await self.cancel()

    async def cancel(self) -> None:
        """Cancel every worker and wait until they are gone (at most ``CANCEL_GRACE_S``)."""
        await settle(list(self._workers), 0)

    def clear(self) -> None:
        """Forget every lane and held retry (after ``cancel``, when the runner re-reads from its commits)."""
        self._queues.clear()
        self._wide.clear()
        self._width.clear()
        self._held.clear()
        self.in_flight = 0

    async def close(self) -> None:
        await self.cancel()
        await settle(list(self._releases), 0)
