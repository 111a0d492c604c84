"""The Kafka engine's consumer: ``KafkaBus.consumer`` returns one (docs/architecture.md section 4).

Manual commits only (``enable_auto_commit=False``), earliest offset for a new
group. On a rebalance, aiokafka calls our listener before partitions are taken
away (and the group waits for it: the eager protocol); the runtime's
``on_revoke`` callback lets short handlers finish and commits them, cancels the
rest, and returns only once none runs, so nothing is lost and two owners never
handle one record at once (a commit for a partition we no longer own is
dropped). An idle poll can be ended by ``wakeup``; a lag reading is shielded
from its caller's cancellation and let end before the client stops.

No aiokafka type leaves this module.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from typing import Any

from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener
from aiokafka import TopicPartition as KTP
from aiokafka.errors import CommitFailedError, IllegalStateError, KafkaConnectionError

from shared.bus.base import Consumed, Record, RevokeCallback, TopicPartition
from shared.errors import BusUnavailable

__all__ = ["KafkaConsumer", "record_of"]

#: a poll this long or longer (an idle runner's) can be ended by ``wakeup``; shorter ones, the polls of
#: a busy runner, go to aiokafka directly (racing them would cost a task each)
WAKEABLE_POLL_S = 0.5

#: a lag reading in flight when the consumer stops gets this long to end by itself
LAG_READ_GRACE_S = 5.0


def _ktp(tp: TopicPartition, prefix: str = "") -> KTP:
    return KTP(prefix + tp.topic, tp.partition)


def _tp(k: Any, prefix: str = "") -> TopicPartition:
    return TopicPartition(k.topic[len(prefix) :], k.partition)


def record_of(m: Any, prefix: str = "") -> Record:
    return Record(
        m.topic[len(prefix) :],
        m.partition,
        m.offset,
        m.key,
        m.value,
        tuple((k, bytes(v)) for k, v in (m.headers or ())),
        m.timestamp or 0,
    )


class _Listener(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self, owner: KafkaConsumer) -> None:
        self.owner = owner

    async def on_partitions_revoked(self, revoked: Any) -> None:
        for k in revoked:  # their next owner commits them: what we knew is stale if they come back
            self.owner._committed.pop(k, None)
        tps = {_tp(k, self.owner.prefix) for k in revoked}
        if tps and self.owner.on_revoke is not None:
            await self.owner.on_revoke(tps)

    async def on_partitions_assigned(self, assigned: Any) -> None:
        return None


class KafkaConsumer:
    def __init__(self, raw: AIOKafkaConsumer, group: str, on_revoke: RevokeCallback | None, prefix: str = "") -> None:
        self.raw = raw
        self.prefix = prefix
        self.group = group
        self.on_revoke = on_revoke
        self.listener = _Listener(self)
        self._on_stop: Any = None
        self._stopped = False
        #: the future a long ``getmany`` races against, for ``wakeup``
        self._woken: asyncio.Future[None] | None = None
        #: the offsets this member committed (or read once from the group) per partition it owns: the
        #: lag gauge reads them instead of asking the coordinator for every partition every 5 s (an
        #: OffsetFetch round trip each, ~100 a reading for a process of seven cubes)
        self._committed: dict[KTP, int] = {}
        self._lag_reads: set[asyncio.Future[dict[TopicPartition, int]]] = set()

    async def getmany(self, timeout_s: float, max_records: int) -> Sequence[Consumed]:
        try:
            if timeout_s < WAKEABLE_POLL_S:
                got = await self.raw.getmany(timeout_ms=int(timeout_s * 1000), max_records=max_records)
            else:
                got = await self._wakeable(timeout_s, max_records)
        except KafkaConnectionError as exc:
            raise BusUnavailable(str(exc)) from exc
        # aiokafka's ConsumerRecords are handed through: they have every attribute the runtime
        # reads (topic, partition, offset, key, value, headers); converting cost ~5 % per message
        if self.prefix:
            return [record_of(m, self.prefix) for batch in got.values() for m in batch]
        return [m for batch in got.values() for m in batch]

    async def _wakeable(self, timeout_s: float, max_records: int) -> dict[Any, list[Any]]:
        """aiokafka's ``getmany`` raced against ``wakeup`` (a task of its own: a long, idle poll only).

        Cancelling it loses nothing: aiokafka takes records out of its buffer only in the step that
        returns them."""
        poll = asyncio.ensure_future(self.raw.getmany(timeout_ms=int(timeout_s * 1000), max_records=max_records))
        woken = self._woken = asyncio.get_running_loop().create_future()
        try:
            await asyncio.wait((poll, woken), return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._woken = None
            if not poll.done():
                poll.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await poll
        got: dict[Any, list[Any]] = {} if poll.cancelled() else poll.result()
        return got

    def wakeup(self) -> None:
        woken = self._woken
        if woken is not None and not woken.done():
            woken.set_result(None)

    async def commit(self, offsets: dict[TopicPartition, int]) -> None:
        mine = self.raw.assignment()
        todo = {_ktp(tp, self.prefix): off for tp, off in offsets.items() if _ktp(tp, self.prefix) in mine}
        if not todo:
            return
        try:
            await self.raw.commit(todo)
        except (CommitFailedError, IllegalStateError):
            # the group rebalanced under us: the new owner re-reads from the last commit
            # (at-least-once); committing now could move *its* offset, so we drop ours
            return
        except KafkaConnectionError as exc:
            raise BusUnavailable(str(exc)) from exc
        self._committed.update(todo)

    async def committed(self, tp: TopicPartition) -> int | None:
        got = await self.raw.committed(_ktp(tp, self.prefix))
        return int(got) if got is not None else None

    def assignment(self) -> set[TopicPartition]:
        return {_tp(k, self.prefix) for k in self.raw.assignment()}

    def pause(self, tps: Sequence[TopicPartition]) -> None:
        mine = self.raw.assignment()
        self.raw.pause(*[k for k in (_ktp(tp, self.prefix) for tp in tps) if k in mine])

    def resume(self, tps: Sequence[TopicPartition]) -> None:
        mine = self.raw.assignment()
        self.raw.resume(*[k for k in (_ktp(tp, self.prefix) for tp in tps) if k in mine])

    async def seek(self, tp: TopicPartition, offset: int) -> None:
        k = _ktp(tp, self.prefix)
        if k in self.raw.assignment():
            self.raw.seek(k, offset)

    async def lag(self) -> dict[TopicPartition, int]:
        """Log end minus committed offset per owned partition ({} once stopping).

        aiokafka, asked for a committed offset while its client closes, opens a coordinator
        connection that nothing closes (it warns when collected), and cancelled half-way through
        opening a connection leaks it the same way. So a caller's timeout or cancellation gives up
        its wait, never the reading (shield), and ``stop`` lets the readings in flight end first.
        """
        if self._stopped:
            return {}
        reading = asyncio.ensure_future(self._lag())
        self._lag_reads.add(reading)
        reading.add_done_callback(self._lag_reads.discard)
        return await asyncio.shield(reading)

    async def _lag(self) -> dict[TopicPartition, int]:
        """Log end minus committed offset per owned partition (the usual consumer-lag definition).

        The committed offset is the one this member committed last; a partition it has not committed
        yet since it got it is asked of the group coordinator once (a revoke forgets the answer).
        ``highwater`` is what the last fetch response said, so no request is sent for it.
        """
        mine = self.raw.assignment()
        for k in [k for k in self._committed if k not in mine]:
            del self._committed[k]  # revoked: its next owner's commits are not ours to know
        out = {}
        for k in mine:
            high = self.raw.highwater(k)
            if high is None:
                continue
            committed = self._committed.get(k)
            if committed is None:
                # asked once per ownership, also when the group has no commit for it yet (0): while we
                # own the partition nobody else commits it, so only our own commits change the answer
                # (asking again on every reading was an OffsetFetch per idle partition every 5 s)
                got = await self.raw.committed(k)
                committed = self._committed[k] = int(got or 0)
            out[_tp(k, self.prefix)] = max(0, int(high) - committed)
        return out

    async def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        if self._lag_reads:  # see ``lag``: a reading in flight ends (bounded) before the client closes
            await asyncio.wait(set(self._lag_reads), timeout=LAG_READ_GRACE_S)
        await self.raw.stop()
        if self._on_stop is not None:
            self._on_stop()
