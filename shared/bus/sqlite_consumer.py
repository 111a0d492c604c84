"""The embedded log's consumer and its group membership (docs/architecture.md section 4).

A group's partitions are split among its live members by lease: each member writes its heartbeat
to the log's ``members`` table every ``HEARTBEAT_S`` (polling or not), a member silent for
``SESSION_TIMEOUT_S`` is dropped, and at each heartbeat a member's share is every partition whose
number modulo the count of members is its rank. One owner at a time: a member reads a partition
of its share only once it holds its *claim* (the ``claims`` table), and a claim passes on only
when its holder released it -- after its revoke callback returned, so after the records it was
handling ended -- or its holder expired. A member joining takes its share within a heartbeat or
two of the others', never beside them. Positions live in this process; committed offsets in the
log's ``offsets`` table, so they survive restarts. An idle consumer wakes at once on a write by
this process and looks for writes by other processes every ``POLL_S``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
import uuid
from collections.abc import Callable, Sequence

from shared.bus.base import Consumed, Record, RevokeCallback, TopicPartition
from shared.bus.sqlite_log import EmbeddedLog
from shared.errors import BusUnavailable

__all__ = ["SqliteConsumer"]

log = logging.getLogger("turbocubes.sqlite")

#: a member that has not heartbeated for this long loses its partitions
SESSION_TIMEOUT_S = 10.0
HEARTBEAT_S = 1.0
#: how often an idle consumer looks for records written by *other* processes
POLL_S = 0.02


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
        self._last_heartbeat = 0.0
        self._lease: asyncio.Future[None] | None = None
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
        self._last_heartbeat = time.monotonic()
        lost = self._assigned - mine
        gained = mine - self._assigned
        if lost:
            if self.on_revoke is not None:
                await self.on_revoke(lost)
            for tp in lost:
                self._position.pop(tp, None)
                self._paused.discard(tp)
            # ORDER MATTERS: released only once the revoke callback has returned (nothing of them runs here)
            await self.bus._call(self._release, sorted(lost))
        if gained:
            start = await self.bus._call(self._committed_many, sorted(gained))
            self._position.update(start)
        self._assigned = mine

    async def join(self) -> None:
        await self._rebalance()
        self._lease = asyncio.ensure_future(self._keep_lease())

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
        while not self._stopped:
            await asyncio.sleep(HEARTBEAT_S)  # a period, not a synchronization
            try:
                await self.bus._call(self._refresh_lease)
            except BusUnavailable as exc:  # the next beat tries again; the lease lasts SESSION_TIMEOUT_S
                log.warning("consumer %s of %s: lease not refreshed: %s", self.member, self.group, exc)

    # the Consumer protocol -----------------------------------------------------------

    def assignment(self) -> set[TopicPartition]:
        return set(self._assigned)

    def pause(self, tps: Sequence[TopicPartition]) -> None:
        self._paused.update(tps)

    def resume(self, tps: Sequence[TopicPartition]) -> None:
        self._paused.difference_update(tps)

    async def seek(self, tp: TopicPartition, offset: int) -> None:
        if tp in self._assigned:
            self._position[tp] = offset

    def _fetch(self, positions: dict[TopicPartition, int], max_records: int) -> list[Record]:
        out: list[Record] = []
        ends: dict[tuple[str, int], int] = {}
        for t in {tp.topic for tp in positions}:
            for p, n in self.bus.db.execute("SELECT partition, next_offset FROM ends WHERE topic=?", (t,)).fetchall():
                ends[(t, p)] = n
        ready = [(tp, pos) for tp, pos in positions.items() if ends.get((tp.topic, tp.partition), 0) > pos]
        if not ready:
            return out
        share = max(1, max_records // len(ready))
        for tp, pos in ready:
            out += self.bus._read(tp.topic, tp.partition, pos, share)
        return out

    async def getmany(self, timeout_s: float, max_records: int) -> Sequence[Consumed]:
        deadline = time.monotonic() + timeout_s
        while not self._stopped:
            if time.monotonic() - self._last_heartbeat >= HEARTBEAT_S:
                await self._rebalance()
            positions = {tp: pos for tp, pos in self._position.items() if tp not in self._paused}
            written = self.bus._written
            records = await self.bus._call(self._fetch, positions, max_records) if positions else []
            if records:
                for r in records:
                    # records are in offset order per partition: remember where to go on
                    self._position[r.tp] = r.offset + 1
                return list(records)
            left = deadline - time.monotonic()
            if left <= 0:
                return []
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(written.wait(), min(left, POLL_S))
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
        out = {}
        for t in self.topics:
            ends = await self.bus.end_offsets(t)
            committed = await self.bus.committed_offsets(self.group, t)
            for tp in self._assigned:
                if tp.topic == t:
                    out[tp] = max(0, ends.get(tp.partition, 0) - committed.get(tp.partition, 0))
        return out

    async def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        if self._lease is not None:
            self._lease.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._lease
        self._forget(self)

        def leave() -> None:
            self._release([])
            self.bus.db.execute("DELETE FROM members WHERE grp=? AND member=?", (self.group, self.member))

        with contextlib.suppress(BusUnavailable):
            await self.bus._call(leave)
