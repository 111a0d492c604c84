"""The commit order: what may be committed, when, and the guard that keeps it (docs/conventions.md rule 9).

Records finish out of order (lanes run side by side), but a partition's
committed offset says "everything before this is done": so, per partition,
the tracker keeps the records in flight in offset order (``Slot``s, one per
record) and commits only the *contiguously* finished prefix. One commit round
(``commit_finished``) is, in this order — do not reorder:

1. per partition, take the finished slots at the head, in offset order, up to
   the first unfinished one;
2. await the acknowledgement of everything they produced (outputs, delayed
   retries, dead letters) and what their handlers held the commit for
   (``Context.commit_after``): nothing is committed whose work is not durable;
3. commit, per partition, the offset after the last of them; an offset that
   would move backwards raises ``CommitOrderError`` (a bug, never retried);
4. run their ``after_commit`` hooks (state that may only go once the work is
   safe): one key's in order, different keys' side by side; flush the metrics.

A round runs every ``COMMIT_EVERY_S`` (the session's commit loop, ``session.py``) while
records are in flight, and
once more at shutdown and before a rebalance takes partitions away; with nothing
in flight the loop sleeps until a record is admitted (an idle runner wakes for
no round). A round that fails on the bus leaves
the slots it took uncommitted (the runner then rewinds to the last commits,
``rewind``): the records are read and handled again — at-least-once.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from shared.bus.base import Consumed, Consumer, Producer, TopicPartition
from shared.clock import Clock
from shared.errors import CommitOrderError
from shared.runtime.publish import await_deliveries
from shared.runtime.stats import Meter, RunStats

__all__ = ["COMMIT_EVERY_S", "CommitTracker", "Slot"]

log = logging.getLogger("turbocubes.runtime")

#: finished records are committed in groups at most this often: a commit per record would cost a
#: broker round trip each. Nothing waits for a commit on the way to a page (outputs are sent as a
#: handler returns), only the after-commit hooks and a redelivery's extent after a crash do; 20 ms
#: made an OffsetCommit per 1-3 documents on Kafka (bench/e2e.py, real engines), 100 ms one per ~5-10
COMMIT_EVERY_S = 0.1

Hook = Callable[[], Awaitable[None]]


class Slot:
    """One record in flight: its place in its partition's commit order, and what it produced."""

    __slots__ = ("cancelled", "deliveries", "done", "hooks", "record", "running", "started", "task")

    def __init__(self, record: Consumed) -> None:
        self.record = record
        #: finished: handled, retried or dead-lettered (its deliveries may still be in the air)
        self.done = False
        self.started = False
        #: its handler runs now (in ``task``, its lane's worker)
        self.running = False
        self.task: asyncio.Task[None] | None = None
        #: not to be handled (any more): its partition went to another member (or is being re-read);
        #: a cancelled slot is never done, so it is never committed
        self.cancelled = False
        self.deliveries: list[asyncio.Future[Any]] = []
        self.hooks: list[Hook] | None = None


class CommitTracker:
    """Per partition, the slots in offset order and the last committed offset; commits in order."""

    def __init__(
        self, cube: str, consumer: Consumer, producer: Producer, clock: Clock, stats: RunStats, meter: Meter
    ) -> None:
        self.cube = cube
        self.consumer = consumer
        self.producer = producer
        self.clock = clock
        self.stats = stats
        self.meter = meter
        self._tracks: dict[tuple[str, int], deque[Slot]] = {}
        self._committed: dict[TopicPartition, int] = {}
        #: one round at a time: the loop's, the shutdown's and a rebalance's must not interleave
        self._lock = asyncio.Lock()
        #: set when a record is admitted (or at ``close``): the round loop's wait while nothing is in flight
        self._admitted = asyncio.Event()
        self._closing = False

    def admit(self, record: Consumed) -> Slot:
        """The slot of a record just read, at the end of its partition's track."""
        slot = Slot(record)
        tpk = (record.topic, record.partition)
        track = self._tracks.get(tpk)
        if track is None:
            track = self._tracks[tpk] = deque()
        track.append(slot)
        self._admitted.set()
        return slot

    def close(self) -> None:
        """The runner is closing: the commit loop ends after the round in progress (or its idle wait)."""
        self._closing = True
        self._admitted.set()

    def idle(self) -> bool:
        """Nothing admitted is left uncommitted."""
        return not any(self._tracks.values())

    def slots(self, tpk: tuple[str, int]) -> Iterable[Slot]:
        return self._tracks.get(tpk, ())

    def busy(self, tpks: Iterable[tuple[str, int]]) -> bool:
        """Whether a handler is still running on a record of these partitions."""
        return any(s.running for tpk in tpks for s in self._tracks.get(tpk, ()))

    def running(self, tpks: Iterable[tuple[str, int]]) -> list[Slot]:
        """The slots of these partitions whose handlers are running now."""
        return [s for tpk in tpks for s in self._tracks.get(tpk, ()) if s.running]

    def forget(self, tpks: Iterable[tuple[str, int]]) -> None:
        """These partitions went to another member: their tracks and commits are no longer ours."""
        for tpk in tpks:
            self._tracks.pop(tpk, None)
            self._committed.pop(TopicPartition(*tpk), None)

    async def rewind(self) -> None:
        """Drop every track and seek each assigned partition back to its last commit (after a bus failure).

        A partition never committed by this runner asks the group's committed offset, and
        without one goes back to its first unfinished record.
        """
        consumer = self.consumer
        positions: dict[TopicPartition, int | None] = dict.fromkeys(consumer.assignment())
        for tpk, track in self._tracks.items():
            if track:
                positions[TopicPartition(*tpk)] = track[0].record.offset
        self._tracks.clear()
        for tp, first_unfinished in positions.items():
            committed = self._committed.get(tp)
            if committed is None:
                try:
                    committed = await consumer.committed(tp)
                except Exception:  # the bus is in trouble: the first unfinished record is the next best
                    committed = None
            target = committed if committed is not None else first_unfinished
            if target is not None:
                await consumer.seek(tp, target)
            consumer.resume([tp])

    async def commit_finished(self) -> None:
        """One commit round: steps 1-4 of the module docstring."""
        async with self._lock:
            # 1. the contiguously finished head of each partition's track
            ready: list[Slot] = []
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
                self.meter.flush()
                return
            # 2. everything they produced is durable
            deliveries = [f for s in ready for f in s.deliveries]
            if deliveries:
                try:
                    await await_deliveries(self.producer, deliveries)
                except BaseException:
                    # back at the head of their tracks: ``rewind`` seeks a partition never committed
                    # to its first unfinished record, and without them it would skip them for good
                    self._put_back(ready)
                    raise
            # 3. commit, never backwards
            for tp, off in commits.items():
                previous = self._committed.get(tp)
                if previous is not None and off < previous:
                    raise CommitOrderError(f"{self.cube}: commit of {tp} would go back from {previous} to {off}")
            try:
                await self.consumer.commit(commits)
            except BaseException:
                # not committed: handled again after the rewind, and their hooks run then (the same reason)
                self._put_back(ready)
                raise
            self._committed.update(commits)
            self.stats.commits += 1
            self.stats.last_commit_at = self.clock.monotonic()
            # 4. what waited for the commit, then the metrics
            await run_round_hooks(self.cube, ready)
            self.meter.flush()

    def _put_back(self, slots: list[Slot]) -> None:
        for slot in reversed(slots):
            r = slot.record
            track = self._tracks.get((r.topic, r.partition))
            if track is None:
                track = self._tracks[(r.topic, r.partition)] = deque()
            track.appendleft(slot)

    @property
    def closing(self) -> bool:
        return self._closing

    async def until_admitted(self) -> None:
        """While nothing is in flight: wait for the next admitted record (or ``close``)."""
        if self.idle() and not self._closing:
            self._admitted.clear()
            await self._admitted.wait()


async def run_round_hooks(cube: str, ready: Iterable[Slot]) -> None:
    """The after-commit hooks of one round's slots: one key's in offset order, different keys' side
    by side (as their handlers ran), so that the store calls they make share the store's batches
    (the delay cube's confirm of 100 released documents: one round trip, not 100 in a row)."""
    chains: dict[bytes | None, list[Hook]] = {}
    for slot in ready:
        if slot.hooks:
            chains.setdefault(slot.record.key, []).extend(slot.hooks)
    if len(chains) == 1:
        [hooks] = chains.values()
        await run_hooks(cube, hooks)
    elif chains:
        await asyncio.gather(*(run_hooks(cube, hooks) for hooks in chains.values()))


async def run_hooks(cube: str, hooks: Iterable[Hook]) -> None:
    """Run after-commit hooks in order; one that fails is logged and the rest still run."""
    for hook in hooks:
        try:
            await hook()
        except Exception:
            log.exception(
                "%s: an after-commit hook failed (the work it confirms is safe; "
                "the state it would clean up is cleaned up later)",
                cube,
            )
