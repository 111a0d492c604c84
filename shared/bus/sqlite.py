"""The embedded durable log: ``sqlite:///var/bus.db`` (DESIGN.md section 4).

A small Kafka on one SQLite file, for laptops, the demo and unit tests:

* topics with N partitions; a record's partition is ``crc32(key) % N``
  (round-robin without a key), offsets dense per partition;
* consumer groups with committed offsets that survive restarts;
* several processes may share the file: writes are ``BEGIN IMMEDIATE``
  transactions (WAL mode), and a group's partitions are split among its
  live members by lease (``members`` table, heartbeat every second,
  a member silent for ``SESSION_TIMEOUT_S`` is dropped).

Each call does a whole batch (an append, a fetch, a commit). It runs inline on
the event loop thread, on a connection that never waits for a lock, and moves
to this process's one worker thread (whose connection waits) when the lock is
taken (by another process, or by a call on that thread), and for the retention
sweep; ``shared/sqlite_inline.py`` explains why (the hop to a thread
cost more than the work at the embedded pipeline's rates). A producer collects sends
for ``linger_ms`` and writes them in one transaction; the future of each send
resolves after that transaction commits (durable: WAL + synchronous=NORMAL
survives a process crash; ``?sync=full`` survives power loss).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import sqlite3
import threading
import time
import uuid
import zlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

import orjson

from shared.bus.base import Consumed, Delivered, Headers, Record, RevokeCallback, TopicPartition, TopicSpec
from shared.errors import BusUnavailable, ConfigError
from shared.sqlite_inline import INLINE_PRAGMAS, WalCheckpoints, enable_wal, is_busy

__all__ = ["SqliteBus"]

T = TypeVar("T")

log = logging.getLogger("turbocubes.sqlite")

#: a member that has not heartbeated for this long loses its partitions
SESSION_TIMEOUT_S = 10.0
HEARTBEAT_S = 1.0
#: how often an idle consumer looks for records written by *other* processes
POLL_S = 0.02
#: how often old records are dropped (retention)
RETENTION_SWEEP_S = 60.0
DEFAULT_RETENTION_MS = 7 * 86_400_000
#: the log's page size and the WAL size (pages) at which a checkpoint is asked for
PAGE_BYTES = 16384
WAL_CHECKPOINT_PAGES = 4000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS topics (name TEXT PRIMARY KEY, partitions INTEGER NOT NULL,
    compact INTEGER NOT NULL DEFAULT 0, retention_ms INTEGER);
CREATE TABLE IF NOT EXISTS ends (topic TEXT NOT NULL, partition INTEGER NOT NULL,
    next_offset INTEGER NOT NULL, PRIMARY KEY (topic, partition));
CREATE TABLE IF NOT EXISTS log (id INTEGER PRIMARY KEY, topic TEXT NOT NULL, partition INTEGER NOT NULL,
    offset INTEGER NOT NULL, key BLOB, value BLOB NOT NULL, headers BLOB, ts INTEGER NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS log_pos ON log (topic, partition, offset);
CREATE TABLE IF NOT EXISTS offsets (grp TEXT NOT NULL, topic TEXT NOT NULL, partition INTEGER NOT NULL,
    next_offset INTEGER NOT NULL, PRIMARY KEY (grp, topic, partition));
CREATE TABLE IF NOT EXISTS members (grp TEXT NOT NULL, member TEXT NOT NULL, topics TEXT NOT NULL,
    heartbeat REAL NOT NULL, PRIMARY KEY (grp, member));
"""


def _partition_for(key: bytes | None, partitions: int, rr: itertools.count[int]) -> int:
    if key is None:
        return next(rr) % partitions
    return zlib.crc32(key) % partitions


class SqliteBus:
    """The embedded log. ``sqlite:///relative/path.db``, ``sqlite:////abs/path.db``;
    query options: ``partitions`` (default for auto-created topics), ``sync`` (normal|full)."""

    def __init__(self, url: str, *, linger_ms: int = 5) -> None:
        self.url = url
        parts = urlsplit(url)
        if parts.scheme != "sqlite" or not parts.path or parts.path == "/":
            raise ConfigError("bus.url", url, "sqlite:///PATH.db (relative) or sqlite:////PATH.db (absolute)")
        self.path = Path(parts.path[1:])
        q = parse_qs(parts.query)
        self.default_partitions = int(q.get("partitions", ["4"])[0])
        self.sync = q.get("sync", ["normal"])[0].upper()
        if self.sync not in ("NORMAL", "FULL"):
            raise ConfigError("bus.url", url, "sync=normal or sync=full")
        self.linger_s = linger_ms / 1000
        self._exec = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite-bus")
        self._db: sqlite3.Connection | None = None
        #: the event loop thread's own connection (see the module docstring), and that thread
        self._inline: sqlite3.Connection | None = None
        self._loop_thread = 0
        self._checkpoints: WalCheckpoints | None = None
        #: how many calls ran inline and how many on the thread (tests and benchmarks read these)
        self.inline_calls = 0
        self.thread_calls = 0
        self._partitions: dict[str, int] = {}
        self._producer: SqliteProducer | None = None
        self._consumers: list[SqliteConsumer] = []
        #: set whenever this process commits new records, so local consumers wake at once
        self._written = asyncio.Event()
        self._closed = False

    # ------------------------------------------------------------------ plumbing

    async def _call(self, fn: Any, *args: Any) -> Any:
        """``fn(*args)`` inline when it need not wait, else on the worker thread (module docstring).

        ``fn`` reaches the database through ``self.db`` and must begin any write with ``BEGIN
        IMMEDIATE``: when that finds the lock taken, nothing has changed and ``fn`` runs again on
        the thread."""
        if self._closed:
            raise BusUnavailable(f"{self.url} is closed")
        if self._inline is not None:
            try:
                result = fn(*args)
            except sqlite3.OperationalError as exc:
                if not is_busy(exc):
                    raise BusUnavailable(f"embedded log {self.path}: {exc}") from exc
            else:
                self.inline_calls += 1
                return result
        return await self._on_thread(fn, *args)

    async def _on_thread(self, fn: Any, *args: Any) -> Any:
        if self._closed:
            raise BusUnavailable(f"{self.url} is closed")
        self.thread_calls += 1
        try:
            return await asyncio.get_running_loop().run_in_executor(self._exec, fn, *args)
        except sqlite3.OperationalError as exc:
            raise BusUnavailable(f"embedded log {self.path}: {exc}") from exc

    def _committed_inline(self) -> None:
        if self._checkpoints is not None and threading.get_ident() == self._loop_thread:
            self._checkpoints.committed()

    def _open_inline(self) -> None:
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=0)
        db.execute("PRAGMA cache_size=-16384")
        db.execute(f"PRAGMA synchronous={self.sync}")
        for pragma in INLINE_PRAGMAS:
            db.execute(pragma)
        self._inline = db
        self._loop_thread = threading.get_ident()
        self._checkpoints = WalCheckpoints(
            str(self.path), WAL_CHECKPOINT_PAGES * PAGE_BYTES, lambda fn: self._on_thread(lambda: fn(self.db))
        )

    def _open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
        # 16 KiB pages and a 64 MiB cache: records are ~1 KB, and with the default 4 KiB pages
        # appends ran at ~1/2 the speed (measured here); page_size only applies to a new file
        db.execute(f"PRAGMA page_size={PAGE_BYTES}")
        enable_wal(db)
        db.execute("PRAGMA cache_size=-65536")
        # checkpoint every ~64 MiB of WAL instead of every 4 MiB: fewer fsyncs under load
        db.execute(f"PRAGMA wal_autocheckpoint={WAL_CHECKPOINT_PAGES}")
        db.execute(f"PRAGMA synchronous={self.sync}")
        db.execute("PRAGMA busy_timeout=30000")
        db.executescript(_SCHEMA)
        self._db = db

    @property
    def db(self) -> sqlite3.Connection:
        """The connection of the calling thread: the inline one on the event loop thread."""
        if self._inline is not None and threading.get_ident() == self._loop_thread:
            return self._inline
        assert self._db is not None, "bus not started"
        return self._db

    async def start(self) -> None:
        if self._db is None:
            await self._on_thread(self._open)
            self._open_inline()

    async def close(self) -> None:
        if self._closed:
            return
        for c in list(self._consumers):
            await c.stop()
        if self._producer is not None:
            await self._producer.flush()
        self._closed = True
        if self._inline is not None:
            self._inline.close()
            self._inline = None
        if self._db is not None:
            await asyncio.get_running_loop().run_in_executor(self._exec, self._db.close)
        self._exec.shutdown(wait=True)

    # ------------------------------------------------------------------ topics

    def _ensure_topic(
        self, name: str, partitions: int | None = None, compact: bool = False, retention_ms: int | None = None
    ) -> int:
        """Create ``name`` if needed (inside the caller's transaction or alone); returns its partitions."""
        n = self._partitions.get(name)
        if n is not None:
            return n
        row = self.db.execute("SELECT partitions FROM topics WHERE name=?", (name,)).fetchone()
        if row is None:
            n = partitions or self.default_partitions
            self.db.execute(
                "INSERT OR IGNORE INTO topics(name, partitions, compact, retention_ms) VALUES (?,?,?,?)",
                (name, n, int(compact), retention_ms),
            )
            self.db.executemany(
                "INSERT OR IGNORE INTO ends(topic, partition, next_offset) VALUES (?,?,0)",
                [(name, p) for p in range(n)],
            )
            row = self.db.execute("SELECT partitions FROM topics WHERE name=?", (name,)).fetchone()
        self._partitions[name] = int(row[0])
        return int(row[0])

    def _create_topics(self, specs: Sequence[TopicSpec]) -> list[str]:
        created = []
        self.db.execute("BEGIN IMMEDIATE")
        try:
            for s in specs:
                exists = self.db.execute("SELECT 1 FROM topics WHERE name=?", (s.name,)).fetchone()
                if not exists:
                    self._ensure_topic(s.name, s.partitions, s.compact, s.retention_ms)
                    created.append(s.name)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return created

    async def create_topics(self, specs: Sequence[TopicSpec]) -> list[str]:
        await self.start()
        return list(await self._call(self._create_topics, list(specs)))

    def _partitions_of(self, topic: str) -> int:
        n = self._partitions.get(topic)
        if n is None:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                n = self._ensure_topic(topic)
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
        return n

    # ------------------------------------------------------------------ produce

    def _append(
        self, batch: list[tuple[str, bytes | None, bytes, Headers]], rr: itertools.count[int]
    ) -> list[Delivered]:
        """Write a batch in one transaction; returns (partition, offset) per record."""
        db = self.db
        now_ms = int(time.time() * 1000)
        db.execute("BEGIN IMMEDIATE")
        try:
            placed: list[Delivered] = []
            nexts: dict[tuple[str, int], int] = {}
            rows = []
            for topic, key, value, headers in batch:
                p = _partition_for(key, self._ensure_topic(topic), rr)
                tp = (topic, p)
                off = nexts.get(tp)
                if off is None:
                    off = db.execute("SELECT next_offset FROM ends WHERE topic=? AND partition=?", tp).fetchone()[0]
                nexts[tp] = off + 1
                rows.append(
                    (
                        topic,
                        p,
                        off,
                        key,
                        value,
                        orjson.dumps([[k, v.hex()] for k, v in headers]) if headers else None,
                        now_ms,
                    )
                )
                placed.append(Delivered(p, off))
            db.executemany(
                "INSERT INTO log(topic, partition, offset, key, value, headers, ts) VALUES (?,?,?,?,?,?,?)", rows
            )
            db.executemany(
                "UPDATE ends SET next_offset=? WHERE topic=? AND partition=?",
                [(n, t, p) for (t, p), n in nexts.items()],
            )
            db.execute("COMMIT")
            self._committed_inline()
        except BaseException:
            db.execute("ROLLBACK")
            raise
        return placed

    def producer(self) -> SqliteProducer:
        if self._producer is None:
            self._producer = SqliteProducer(self)
        return self._producer

    def _notify(self) -> None:
        self._written.set()
        self._written = asyncio.Event()

    # ------------------------------------------------------------------ consume

    async def consumer(
        self, group: str, topics: Sequence[str], *, on_revoke: RevokeCallback | None = None
    ) -> SqliteConsumer:
        await self.start()
        for t in topics:
            await self._call(self._partitions_of, t)
        c = SqliteConsumer(self, group, list(topics), on_revoke)
        await c.join()
        self._consumers.append(c)
        return c

    def _read(self, topic: str, partition: int, offset: int, limit: int) -> list[Record]:
        rows = self.db.execute(
            "SELECT offset, key, value, headers, ts FROM log WHERE topic=? AND partition=? AND offset>=? "
            "ORDER BY offset LIMIT ?",
            (topic, partition, offset, limit),
        ).fetchall()
        return [
            Record(
                topic,
                partition,
                off,
                key,
                value,
                tuple((k, bytes.fromhex(v)) for k, v in orjson.loads(h)) if h else (),
                ts,
            )
            for off, key, value, h, ts in rows
        ]

    async def read(self, topic: str, partition: int, offset: int, limit: int) -> list[Record]:
        await self.start()
        return list(await self._call(self._read, topic, partition, offset, limit))

    def _ends(self, topic: str) -> dict[int, int]:
        self._partitions_of(topic)
        rows = self.db.execute("SELECT partition, next_offset FROM ends WHERE topic=?", (topic,)).fetchall()
        return {int(p): int(n) for p, n in rows}

    async def end_offsets(self, topic: str) -> dict[int, int]:
        await self.start()
        return dict(await self._call(self._ends, topic))

    async def partitioner(self, topic: str) -> Callable[[bytes], int]:
        await self.start()
        n = int(await self._call(self._partitions_of, topic))
        rr = itertools.count()  # unused: a key is always given
        return lambda key: _partition_for(key, n, rr)

    async def committed_offsets(self, group: str, topic: str) -> dict[int, int]:
        def q() -> dict[int, int]:
            rows = self.db.execute(
                "SELECT partition, next_offset FROM offsets WHERE grp=? AND topic=?", (group, topic)
            ).fetchall()
            return {int(p): int(n) for p, n in rows}

        await self.start()
        return dict(await self._call(q))

    def _retention_sweep(self) -> int:
        now_ms = int(time.time() * 1000)
        deleted = 0
        for name, retention in self.db.execute("SELECT name, retention_ms FROM topics").fetchall():
            horizon = now_ms - (retention or DEFAULT_RETENTION_MS)
            cur = self.db.execute("DELETE FROM log WHERE topic=? AND ts<?", (name, horizon))
            deleted += cur.rowcount
        return deleted


class SqliteProducer:
    def __init__(self, bus: SqliteBus) -> None:
        self.bus = bus
        self._pending: list[tuple[str, bytes | None, bytes, Headers]] = []
        self._futures: list[asyncio.Future[Delivered]] = []
        self._flusher: asyncio.Task[None] | None = None
        self._rr = itertools.count()
        self._last_sweep = time.monotonic()

    async def send(
        self, topic: str, value: bytes, *, key: bytes | None = None, headers: Headers = ()
    ) -> asyncio.Future[Delivered]:
        fut: asyncio.Future[Delivered] = asyncio.get_running_loop().create_future()
        self._pending.append((topic, key, value, headers))
        self._futures.append(fut)
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush_after_linger())
        return fut

    async def _flush_after_linger(self) -> None:
        # linger: let a handler batch's outputs accumulate into one transaction
        await asyncio.sleep(self.bus.linger_s)
        await self._write()

    async def _write(self) -> None:
        while self._pending:
            batch, futs = self._pending, self._futures
            self._pending, self._futures = [], []
            try:
                placed = await self.bus._call(self.bus._append, batch, self._rr)
            except BaseException as exc:
                for f in futs:
                    if not f.done():
                        f.set_exception(BusUnavailable(str(exc)) if not isinstance(exc, BusUnavailable) else exc)
                if isinstance(exc, asyncio.CancelledError):
                    raise
                continue
            for f, where in zip(futs, placed, strict=True):
                if not f.done():
                    f.set_result(where)
            self.bus._notify()
        if time.monotonic() - self._last_sweep > RETENTION_SWEEP_S:
            self._last_sweep = time.monotonic()
            with contextlib.suppress(BusUnavailable):
                await self.bus._on_thread(self.bus._retention_sweep)

    async def flush(self) -> None:
        if self._flusher is not None and not self._flusher.done():
            await asyncio.shield(self._flusher)
        await self._write()


class SqliteConsumer:
    def __init__(self, bus: SqliteBus, group: str, topics: list[str], on_revoke: RevokeCallback | None) -> None:
        self.bus = bus
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
        """Refresh our lease and compute our share of the partitions."""
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
            db.execute("COMMIT")
            self.bus._committed_inline()
        except BaseException:
            db.execute("ROLLBACK")
            raise
        me = members.index(self.member)
        mine = []
        for t in self.topics:
            n = self.bus._partitions_of(t)
            mine += [TopicPartition(t, p) for p in range(n) if p % len(members) == me]
        return mine

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
        if self in self.bus._consumers:
            self.bus._consumers.remove(self)

        def leave() -> None:
            self.bus.db.execute("DELETE FROM members WHERE grp=? AND member=?", (self.group, self.member))

        with contextlib.suppress(BusUnavailable):
            await self.bus._call(leave)
