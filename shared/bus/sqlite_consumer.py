"""The embedded log's consumer and its group membership (docs/architecture.md section 4).

A group's partitions are split among its live members by lease: each member writes its heartbeat
to the log's ``members`` table every ``HEARTBEAT_S`` (polling or not), a member silent for
``SESSION_TIMEOUT_S`` is dropped, and at each heartbeat a member's share is every partition whose
number modulo the count of members is its rank. One owner at a time: a member reads a partition
of its share only once it holds its *claim* (the ``claims`` table), and a claim passes on only
when its holder released it -- after its revoke callback returned, so after the records it was
handling ended -- or its holder expired. A member joining takes its share within a heartbeat or
two of the others', never beside them. Positions live in this process; committed offsets in the
log's ``offsets`` table, so they survive restarts. An idle consumer sleeps until a write by this
process, or one by another process that the log's watch saw (``EmbeddedLog.watch``, every
``WATCH_S``), or the end of its poll.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import uuid
from collections.abc import Callable, Sequence

from shared.bus.base import Consumed, Record, RevokeCallback, TopicPartition
from shared.bus.sqlite_log import BEAT_S, EmbeddedLog, on_beat
from shared.errors import BusUnavailable
from shared.outages import OUTAGES

__all__ = ["SqliteConsumer"]

#: a member that has not heartbeated for this long loses its partitions
SESSION_TIMEOUT_S = 10.0
HEARTBEAT_S = 1.0
#: a member that does not poll refreshes its lease every this many heartbeats (well inside
#: SESSION_TIMEOUT_S); one that polls does it in its heartbeats, so one write a heartbeat is made either way
LEASE_EVERY_BEATS = 2


class SqliteConsumer:
    def __init__(
        self,
        bus: EmbeddedLog,
        group: str,
        topics: list[str],
        on_revoke: RevokeCallback | None,
        forget: Callable[[SqliteConsumer], None],
    ) -> None:
        self.bus = bus
        #: called once when this consumer stops, so the bus no longer closes it
        self._forget = forget
        self.group = group
        self.topics = topics
        self.on_revoke = on_revoke
        self.member = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self._assigned: set[TopicPartition] = set()
        self._paused: set[TopicPartition] = set()
        self._position: dict[TopicPartition, int] = {}
        #: the committed offset of each owned partition: found when it was gained, then ours (``lag``)
        self._committed: dict[TopicPartition, int] = {}
        #: when this member last re-divided the partitions (a heartbeat), and last refreshed its lease
        #: (a heartbeat or ``_keep_lease``), on the event loop's time
        self._last_heartbeat = 0.0
        self._last_beat = 0.0
        self._lease: asyncio.Future[None] | None = None
        #: the future a waiting ``getmany`` also waits on, for ``wakeup``
        self._woken: asyncio.Future[None] | None = None
        self._stopped = False

    # membership ---------------------------------------------------------------

    def _heartbeat(self) -> list[TopicPartition]:
        """Refresh our lease; the partitions of our share whose claims we hold (taking the free ones)."""
        db = self.bus.db
        now = time.time()
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute(
                "INSERT INTO members(grp, member, topics, heartbeat) VALUES (?,?,?,?) "
                "ON CONFLICT(grp, member) DO UPDATE SET heartbeat=excluded.heartbeat, topics=excluded.topics",
                (self.group, self.member, ",".join(self.topics), now),
            )
            db.execute("DELETE FROM members WHERE grp=? AND heartbeat<?", (self.group, now - SESSION_TIMEOUT_S))
            members = [
                r[0]
                for r in db.execute("SELECT member FROM members WHERE grp=? ORDER BY member", (self.group,)).fetchall()
            ]
            me = members.index(self.member)
            share = []
            for t in self.topics:
                n = self.bus._partitions_of(t)
                share += [TopicPartition(t, p) for p in range(n) if p % len(members) == me]
            holders = {
                TopicPartition(t, p): m
                for t, p, m in db.execute("SELECT topic, partition, member FROM claims WHERE grp=?", (self.group,))
            }
            live = set(members)
            # a claim held by a live member stays its own until it lets go (``_release``)
            mine = [tp for tp in share if holders.get(tp) in (None, self.member) or holders[tp] not in live]
            db.executemany(
                "INSERT INTO claims(grp, topic, partition, member) VALUES (?,?,?,?) "
                "ON CONFLICT(grp, topic, partition) DO UPDATE SET member=excluded.member",
                [(self.group, tp.topic, tp.partition, self.member) for tp in mine if holders.get(tp) != self.member],
            )
            db.execute("COMMIT")
            self.bus._committed_inline()
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return mine

    def _release(self, tps: list[TopicPartition]) -> None:
        """Let go of our claims on ``tps`` (their records are no longer handled here), or on all."""
        db = self.bus.db
        db.execute("BEGIN IMMEDIATE")
        try:
            if tps:
                db.executemany(
                    "DELETE FROM claims WHERE grp=? AND topic=? AND partition=? AND member=?",
                    [(self.group, tp.topic, tp.partition, self.member) for tp in tps],
                )
            else:
                db.execute("DELETE FROM claims WHERE grp=? AND member=?", (self.group, self.member))
            db.execute("COMMIT")
            self.bus._committed_inline()
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _committed_many(self, tps: list[TopicPartition]) -> dict[TopicPartition, int]:
        out = {}
        for tp in tps:
            row = self.bus.db.execute(
                "SELECT next_offset FROM offsets WHERE grp=? AND topic=? AND partition=?",
                (self.group, tp.topic, tp.partition),
            ).fetchone()
            out[tp] = int(row[0]) if row else 0
        return out

    async def _rebalance(self) -> None:
        mine = set(await self.bus._call(self._heartbeat))
        self._last_heartbeat = self._last_beat = asyncio.get_running_loop().time()
        lost = self._assigned - mine
        gained = mine - self._assigned
        if lost:
            if self.on_revoke is not None:
                await self.on_revoke(lost)
            for tp in lost:
                self._position.pop(tp, None)
                self._committed.pop(tp, None)
                self._paused.discard(tp)
            # ORDER MATTERS: released only once the revoke callback has returned (nothing of them runs here)
            await self.bus._call(self._release, sorted(lost))
        if gained:
            start = await self.bus._call(self._committed_many, sorted(gained))
            self._position.update(start)
            self._committed.update(start)
        self._assigned = mine

    async def join(self) -> None:
        await self._rebalance()
        self._lease = asyncio.ensure_future(self._keep_lease())
        self.bus.watch()

    def _refresh_lease(self) -> None:
        self.bus.db.execute(
            "UPDATE members SET heartbeat=? WHERE grp=? AND member=?", (time.time(), self.group, self.member)
        )

    async def _keep_lease(self) -> None:
        """Refresh the membership lease every heartbeat, polling or not.

        A runner stops polling while it holds as many records as it may (a crawler waiting on slow
        hosts); were the lease refreshed only by polls, such a member would be dropped after
        ``SESSION_TIMEOUT_S`` and a second member would take the same partitions (the same hosts)
        while the first still works on them. The partitions are re-divided at the next poll.
        """
        loop_time = asyncio.get_running_loop().time
        while not self._stopped:
            # a period, not a synchronization. A polling member's heartbeats (``getmany``) refresh the
            # lease every HEARTBEAT_S already: this one writes only when none did for LEASE_EVERY_BEATS
            every = LEASE_EVERY_BEATS * HEARTBEAT_S
            await asyncio.sleep(max(0.01, on_beat(self._last_beat + every) - loop_time()))
            if loop_time() - self._last_beat < every:
                continue
            self._last_beat = loop_time()
            try:
                await self.bus._call(self._refresh_lease)
            except BusUnavailable as exc:  # the next beat tries again; the lease lasts SESSION_TIMEOUT_S
                OUTAGES.down("bus", f"consumer {self.member} of {self.group}: lease not refreshed: {exc}")
            else:
                OUTAGES.up("bus")

    # the Consumer protocol -----------------------------------------------------------

    def wakeup(self) -> None:
        woken = self._woken
        if woken is not None and not woken.done():
            woken.set_result(None)

    def assignment(self) -> set[TopicPartition]:
        return set(self._assigned)

    def pause(self, tps: Sequence[TopicPartition]) -> None:
        self._paused.update(tps)

    def resume(self, tps: Sequence[TopicPartition]) -> None:
        self._paused.difference_update(tps)

    async def seek(self, tp: TopicPartition, offset: int) -> None:
        if tp in self._assigned:
            self._position[tp] = offset

    def _fetch(self, ready: list[tuple[TopicPartition, int]], max_records: int) -> list[Record]:
        out: list[Record] = []
        share = max(1, max_records // len(ready))
        for tp, pos in ready:
            out += self.bus._read(tp.topic, tp.partition, pos, share)
        return out

    async def getmany(self, timeout_s: float, max_records: int) -> Sequence[Consumed]:
        # the event loop's time (a test's loop may run it fast); the leases' stamps are the wall clock's
        loop_time = asyncio.get_running_loop().time
        # an idle poll (a second or so) ends on the beat, with the other consumers' of this process
        deadline = loop_time() + timeout_s
        if timeout_s >= 4 * BEAT_S:
            deadline = on_beat(deadline)
        ready_at = self.bus.ready
        while not self._stopped:
            if loop_time() - self._last_heartbeat >= HEARTBEAT_S:
                await self._rebalance()
            appended = self.bus.appended()
            # only the partitions with records past our position, by the ends the log knows: an idle
            # poll asks the file nothing
            paused = self._paused
            ready = [
                (tp, pos)
                for tp, pos in self._position.items()
                if tp not in paused and ready_at(tp.topic, tp.partition, pos)
            ]
            records = await self.bus._call(self._fetch, ready, max_records) if ready else []
            if records:
                for r in records:
                    # records are in offset order per partition: remember where to go on
                    self._position[r.tp] = r.offset + 1
                return list(records)
            left = deadline - loop_time()
            if left <= 0:
                return []
            woken = self._woken = asyncio.get_running_loop().create_future()
            done, _ = await asyncio.wait((appended, woken), timeout=left, return_when=asyncio.FIRST_COMPLETED)
            self._woken = None
            if appended not in done:
                return []  # nothing came (or ``wakeup``): the next poll looks again
        return []

    def _commit(self, offsets: dict[TopicPartition, int]) -> None:
        db = self.bus.db
        db.execute("BEGIN IMMEDIATE")
        try:
            db.executemany(
                "INSERT INTO offsets(grp, topic, partition, next_offset) VALUES (?,?,?,?) "
                "ON CONFLICT(grp, topic, partition) DO UPDATE SET next_offset=excluded.next_offset",
                [(self.group, tp.topic, tp.partition, off) for tp, off in offsets.items()],
            )
            db.execute("COMMIT")
            self.bus._committed_inline()
        except BaseException:
            db.execute("ROLLBACK")
            raise

    async def commit(self, offsets: dict[TopicPartition, int]) -> None:
        mine = {tp: off for tp, off in offsets.items() if tp in self._assigned}
        if mine:
            await self.bus._call(self._commit, mine)
            self._committed.update(mine)

    async def committed(self, tp: TopicPartition) -> int | None:
        def one() -> int | None:
            row = self.bus.db.execute(
                "SELECT next_offset FROM offsets WHERE grp=? AND topic=? AND partition=?",
                (self.group, tp.topic, tp.partition),
            ).fetchone()
            return int(row[0]) if row else None

        got: int | None = await self.bus._call(one)
        return got

    async def lag(self) -> dict[TopicPartition, int]:
        """Log end minus committed offset per owned partition, from what this process knows: the ends
        the log keeps (``EmbeddedLog.ends``) and the offsets this member committed or found committed
        when it got the partition (nobody else commits a partition while we own it). No read of the
        file: nine cubes' gauges every 5 s were a third of an idle process's calls to it."""
        ends, committed = self.bus.ends, self._committed
        return {
            tp: max(0, ends.get((tp.topic, tp.partition), 0) - committed.get(tp, 0)) for tp in sorted(self._assigned)
        }

    async def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        if self._lease is not None:
            self.bus.unwatch()
            self._lease.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._lease
        self._forget(self)

        def leave() -> None:
            self._release([])
            self.bus.db.execute("DELETE FROM members WHERE grp=? AND member=?", (self.group, self.member))

        with contextlib.suppress(BusUnavailable):
            await self.bus._call(leave)
