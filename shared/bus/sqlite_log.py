"""The embedded log's file: ``sqlite:///var/bus.db`` (docs/architecture.md section 4).

A small Kafka on one SQLite file, for laptops, the demo and unit tests:

* topics with N partitions; a record's partition is ``crc32(key) % N``
  (round-robin without a key), offsets dense per partition;
* consumer groups with committed offsets that survive restarts
  (``shared/bus/sqlite_consumer.py`` owns the group membership);
* several processes may share the file: writes are ``BEGIN IMMEDIATE``
  transactions (WAL mode).

This module owns the file: its schema, its two connections, the calls that reach it, the topics
and the records (append, read, ends, committed offsets, retention). ``shared/bus/sqlite.py`` puts
the Bus protocol on it; ``sqlite_producer.py`` and ``sqlite_consumer.py`` are its two clients.

Each call does a whole batch (an append, a fetch, a commit). It runs inline on
the event loop thread, on a connection that never waits for a lock, and moves
to this process's one worker thread (whose connection waits) when the lock is
taken (by another process, or by a call on that thread), and for the retention
sweep; ``shared/sqlite_inline.py`` explains why (the hop to a thread
cost more than the work at the embedded pipeline's rates).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import sqlite3
import threading
import time
import zlib
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import orjson

from shared.bus.base import Delivered, Headers, Record, TopicSpec
from shared.errors import BusUnavailable, ConfigError
from shared.sqlite_inline import INLINE_PRAGMAS, WalCheckpoints, enable_wal, is_busy

__all__ = ["BEAT_S", "DEFAULT_RETENTION_MS", "WATCH_S", "EmbeddedLog", "Pending", "on_beat", "partition_for"]

log = logging.getLogger("turbocubes.sqlite")

#: records older than this are dropped when their topic sets no ``retention_ms``
DEFAULT_RETENTION_MS = 7 * 86_400_000
#: the log's page size and the WAL size (pages) at which a checkpoint is asked for
PAGE_BYTES = 16384
WAL_CHECKPOINT_PAGES = 4000

#: how often a process with consumers looks for records appended by *other* processes sharing the file:
#: one look serves every consumer of the process (``EmbeddedLog.watch``). 20 ms bounds the wait of a
#: record handed between processes (``up --workers N``); an idle look costs a few microseconds
WATCH_S = 0.02
#: ...and while nothing has been appended anywhere for a while, the look slows down to this (an idle
#: process wakes 4 times a second for it, not 50); the first append seen brings it back to ``WATCH_S``
WATCH_IDLE_S = 0.25
#: the idle waits of a process's consumers end on multiples of this much of the event loop's time
#: (``on_beat``): nine idle consumers then wake together, one wake-up of the process, not nine
BEAT_S = 0.25

#: one send waiting for its transaction: (topic, key, value, headers)
Pending = tuple[str, bytes | None, bytes, Headers]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS topics (name TEXT PRIMARY KEY, partitions INTEGER NOT NULL,
    compact INTEGER NOT NULL DEFAULT 0, retention_ms INTEGER);
CREATE TABLE IF NOT EXISTS ends (topic TEXT NOT NULL, partition INTEGER NOT NULL,
    next_offset INTEGER NOT NULL, PRIMARY KEY (topic, partition));
CREATE TABLE IF NOT EXISTS log (id INTEGER PRIMARY KEY, topic TEXT NOT NULL, partition INTEGER NOT NULL,
    offset INTEGER NOT NULL, key BLOB, value BLOB NOT NULL, headers BLOB, ts INTEGER NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS log_pos ON log (topic, partition, offset);
-- the retention sweep's: without it each sweep (every RETENTION_SWEEP_S) read the whole log, ~2 s a
-- million records under the write lock; with it a sweep reads only what it drops (+0.5 us an append)
CREATE INDEX IF NOT EXISTS log_age ON log (topic, ts);
CREATE TABLE IF NOT EXISTS offsets (grp TEXT NOT NULL, topic TEXT NOT NULL, partition INTEGER NOT NULL,
    next_offset INTEGER NOT NULL, PRIMARY KEY (grp, topic, partition));
CREATE TABLE IF NOT EXISTS members (grp TEXT NOT NULL, member TEXT NOT NULL, topics TEXT NOT NULL,
    heartbeat REAL NOT NULL, PRIMARY KEY (grp, member));
-- who reads a group's partition now: taken over only once released (or its member expired)
CREATE TABLE IF NOT EXISTS claims (grp TEXT NOT NULL, topic TEXT NOT NULL, partition INTEGER NOT NULL,
    member TEXT NOT NULL, PRIMARY KEY (grp, topic, partition));
"""


def on_beat(at: float) -> float:
    """``at`` moved on to the next multiple of ``BEAT_S`` (a deadline of an idle wait, on the loop's time)."""
    return math.ceil(at / BEAT_S) * BEAT_S


def partition_for(key: bytes | None, partitions: int, rr: itertools.count[int]) -> int:
    if key is None:
        return next(rr) % partitions
    return zlib.crc32(key) % partitions


class EmbeddedLog:
    """The file, its connections and its records. ``sqlite:///relative/path.db``,
    ``sqlite:////abs/path.db``; query options: ``partitions`` (default for auto-created topics),
    ``sync`` (normal|full)."""

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
        #: resolved whenever this process commits new records, so local consumers wake at once (and
        #: when another process did: ``watch``); a new one is made for the next wait (``appended``)
        self._appended: asyncio.Future[None] | None = None
        #: each partition's end as this process knows it: its own appends as they commit, other
        #: processes' when ``watch`` sees them. Ends only grow, so a consumer whose position is at its
        #: partition's known end has nothing to read and asks the file nothing (``ready``)
        self.ends: dict[tuple[str, int], int] = {}
        self._watchers = 0
        self._watch_task: asyncio.Task[None] | None = None
        #: looks in a row that saw nothing appended (the look's pace slows with it)
        self._watch_quiet = 0
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
            self._learn_ends()

    async def _close_file(self) -> None:
        self._closed = True
        if self._watch_task is not None:
            self._watch_task.cancel()
            self._watch_task = None
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

    # ------------------------------------------------------------------ records

    def _append(self, batch: list[Pending], rr: itertools.count[int]) -> list[Delivered]:
        """Write a batch in one transaction; returns (partition, offset) per record."""
        db = self.db
        now_ms = int(time.time() * 1000)
        db.execute("BEGIN IMMEDIATE")
        try:
            placed: list[Delivered] = []
            nexts: dict[tuple[str, int], int] = {}
            rows = []
            for topic, key, value, headers in batch:
                p = partition_for(key, self._ensure_topic(topic), rr)
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
        self.ends.update(nexts)
        return placed

    def appended(self) -> asyncio.Future[None]:
        """A future that resolves at the next append this process learns of (its own or, through
        ``watch``, another process's); every waiter shares it. Take it *before* looking for records,
        so that an append while looking is not missed."""
        fut = self._appended
        if fut is None or fut.done():
            fut = self._appended = asyncio.get_running_loop().create_future()
        return fut

    def _notify(self) -> None:
        fut, self._appended = self._appended, None
        if fut is not None and not fut.done():
            fut.set_result(None)
        self._watch_quiet = 0  # things are moving: look at other processes often again

    # ------------------------------------------------------------------ other processes' appends

    def watch(self) -> None:
        """A consumer of this process waits on ``appended``: while any does, one task looks every
        ``WATCH_S`` (slowing to ``WATCH_IDLE_S`` while nothing moves) whether another process
        appended records, and wakes them all if so.

        Each consumer used to read the partitions' ends every 20 ms itself: nine idle cubes made
        450 reads a second, most of an idle ``turbocubes up``'s CPU. A look is ``PRAGMA
        data_version`` (has another connection committed since the last look?) and only then the
        sum of the ends (did that commit append records, or only beat a heartbeat?)."""
        self._watchers += 1
        if self._watch_task is None or self._watch_task.done():
            self._watch_task = asyncio.ensure_future(self._watch_others())

    def unwatch(self) -> None:
        """A consumer stopped; the last one stops the look."""
        self._watchers -= 1
        if self._watchers <= 0 and self._watch_task is not None:
            self._watch_task.cancel()
            self._watch_task = None

    def ready(self, topic: str, partition: int, position: int) -> bool:
        """Whether the partition has records at or past ``position``, as far as this process knows."""
        return self.ends.get((topic, partition), 0) > position

    def _learn_ends(self) -> bool:
        """Read every partition's end from the file; whether one moved past what this process knew."""
        assert self._inline is not None
        ends, moved = self.ends, False
        for topic, partition, end in self._inline.execute("SELECT topic, partition, next_offset FROM ends"):
            tp = (topic, partition)
            if end > ends.get(tp, 0):  # ends only grow: an append of ours may be newer than this read
                ends[tp] = end
                moved = True
        return moved

    async def _watch_others(self) -> None:
        version: int | None = None
        while not self._closed:
            # a period, not a synchronization: doubling from WATCH_S after each quiet look, up to WATCH_IDLE_S
            pause = WATCH_S * (1 << min(self._watch_quiet, 8))
            if pause >= WATCH_IDLE_S:  # quiet: on the beat, with the consumers' idle polls
                loop_time = asyncio.get_running_loop().time
                pause = max(0.0, on_beat(loop_time() + WATCH_IDLE_S / 2) - loop_time())
            await asyncio.sleep(pause)
            self._watch_quiet += 1
            conn = self._inline
            if conn is None:
                continue
            try:
                now = conn.execute("PRAGMA data_version").fetchone()[0]
                if now == version:
                    continue
                version = now
                # another connection committed: records, or only a heartbeat?
                moved = self._learn_ends()
            except sqlite3.Error as exc:  # the next look tries again; the consumers' polls end meanwhile
                log.debug("embedded log %s: ends not read: %s", self.path, exc)
                continue
            if moved:
                self._notify()

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

    def _ends(self, topic: str) -> dict[int, int]:
        self._partitions_of(topic)
        rows = self.db.execute("SELECT partition, next_offset FROM ends WHERE topic=?", (topic,)).fetchall()
        return {int(p): int(n) for p, n in rows}

    async def end_offsets(self, topic: str) -> dict[int, int]:
        await self.start()
        return dict(await self._call(self._ends, topic))

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
