"""The embedded store engine: stdlib ``sqlite3`` (DESIGN.md sections 4 and 7).

``sqlite:///var/store.db`` (relative to the working directory) or
``sqlite:////srv/store.db`` (absolute); ``sqlite:///:memory:`` for a private
in-memory database.

Why it looks like this:

* **WAL, synchronous=NORMAL**: readers never block the writer and a commit
  costs no fsync (WAL is synced at checkpoints); a power loss may drop the
  last commits but never corrupts the file, and every write here is an
  idempotent replay of a bus message anyway.
* **One writer thread, one reader thread** per process, each with its own
  connection: sqlite3 calls block, so they run off the event loop, and a
  single thread per connection serializes them without a lock. Reads
  (``get``, ``search``) never queue behind a batch of writes.
* **Point reads inline**: ``get(url)`` is one indexed lookup (tens of µs), cheaper
  than the hop to a thread (~100-200 µs), and a WAL reader never waits for a
  writer; so it runs on the event loop thread with a third connection whose
  busy timeout is short, falling back to the reader thread if it ever is busy.
* **Several processes on one machine** may share the file: ``busy_timeout``
  makes a writer wait for another process's transaction, and every
  read-modify-write runs under ``BEGIN IMMEDIATE`` (the write lock is taken
  before the read, so the check and the write see the same state).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from shared.errors import ConfigError, StoreUnavailable
from shared.stores.base import Stores
from shared.stores.migrations import SQLITE
from shared.stores.registry import SqlFeedStore, SqlTaskStore, SqlTenantStore

__all__ = ["SqliteDb", "open_sqlite", "sqlite_path"]

T = TypeVar("T")

#: how long a writer waits for another process's transaction before giving up (ms)
BUSY_TIMEOUT_MS = 15_000
#: the inline reader's busy timeout (ms): WAL readers wait only in rare cases (recovery after a
#: crash), and the event loop must not stall for long; past it the read moves to the reader thread
INLINE_BUSY_TIMEOUT_MS = 50
#: WAL pages before an automatic checkpoint; the default (1000 pages) checkpoints too often
#: under the kvwriter's bursts, 4000 pages (~16 MB) halves checkpoint stalls
WAL_AUTOCHECKPOINT = 4000


def sqlite_path(url: str) -> str:
    """The file path in a ``sqlite:///`` URL (``:memory:`` kept as is)."""
    if not url.startswith("sqlite:///"):
        raise ConfigError("store.url", url, "sqlite:///RELATIVE/PATH or sqlite:////ABSOLUTE/PATH")
    path = url[len("sqlite:///") :].split("?", 1)[0]
    if not path:
        raise ConfigError("store.url", url, "a database file path after sqlite:///")
    return path


def _connect(path: str, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> sqlite3.Connection:
    # isolation_level=None: autocommit; transactions are explicit (BEGIN IMMEDIATE) where needed
    conn = sqlite3.connect(path, timeout=busy_timeout_ms / 1000, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {busy_timeout_ms}")
    if path != ":memory:":
        conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute(f"PRAGMA wal_autocheckpoint = {WAL_AUTOCHECKPOINT}")
    # temp b-trees (sorting search results) in memory
    conn.execute("PRAGMA temp_store = MEMORY")
    return conn


class SqliteDb:
    """Two connections (writer, reader), each driven by its own thread."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._writer = _connect(path)
        # an in-memory database is private to its connection: read through the writer
        self._reader = self._writer if path == ":memory:" else _connect(path)
        self._inline = None if path == ":memory:" else _connect(path, INLINE_BUSY_TIMEOUT_MS)
        self._write_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite-w")
        self._read_pool = (
            self._write_pool
            if self._reader is self._writer
            else ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite-r")
        )

    async def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(conn)`` on the writer thread inside ``BEGIN IMMEDIATE`` … ``COMMIT``."""

        def run() -> T:
            conn = self._writer
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = fn(conn)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return result

        return await self._call(self._write_pool, run)

    async def write_raw(self, fn: Callable[[], T]) -> T:
        """Run ``fn()`` on the writer thread with no transaction around it (migrations)."""
        return await self._call(self._write_pool, fn)

    async def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(conn)`` on the reader thread (autocommit: each statement sees the latest commit)."""
        return await self._call(self._read_pool, lambda: fn(self._reader))

    async def read_inline(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run a short read on the event loop thread (see the module docstring); the thread if busy."""
        if self._inline is not None:
            try:
                return fn(self._inline)
            except sqlite3.OperationalError:
                pass  # busy (or the file vanished): the reader thread waits or raises StoreUnavailable
        return await self.read(fn)

    async def _call(self, pool: ThreadPoolExecutor, fn: Callable[[], T]) -> T:
        try:
            return await asyncio.get_running_loop().run_in_executor(pool, fn)
        except sqlite3.OperationalError as exc:
            # "database is locked" after busy_timeout, disk I/O errors, a vanished file: try later
            raise StoreUnavailable(f"sqlite {self.path}: {exc}") from exc

    # --- the SqlRunner protocol of registry.py (simple statements, `?` placeholders)

    async def fetch(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        return await self.read(lambda conn: conn.execute(sql, args).fetchall())

    async def fetchone(self, sql: str, *args: Any) -> tuple[Any, ...] | None:
        row: tuple[Any, ...] | None = await self.read(lambda conn: conn.execute(sql, args).fetchone())
        return row

    async def execute(self, sql: str, *args: Any) -> int:
        return await self.write(lambda conn: conn.execute(sql, args).rowcount)

    async def execute_returning(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        return await self.write(lambda conn: conn.execute(sql, args).fetchall())

    def migrate(self) -> None:
        """Apply missing migrations (blocking; called once at open)."""
        conn = self._writer
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
            " applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)"
        )
        for version, name, statements in SQLITE:
            conn.execute("BEGIN IMMEDIATE")
            try:
                done = conn.execute("SELECT 1 FROM schema_migrations WHERE version = ?", (version,)).fetchone()
                if done is None:
                    for statement in statements:
                        conn.execute(statement)
                    conn.execute("INSERT INTO schema_migrations (version, name) VALUES (?, ?)", (version, name))
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    async def close(self) -> None:
        if self._inline is not None:
            self._inline.close()

        def shutdown() -> None:
            if self._reader is not self._writer:
                self._reader.close()
            self._writer.close()

        await asyncio.get_running_loop().run_in_executor(self._write_pool, shutdown)
        self._write_pool.shutdown(wait=True)
        self._read_pool.shutdown(wait=True)


async def open_sqlite(url: str) -> Stores:
    from shared.stores.images import SqlImageRegistry
    from shared.stores.sqlite_media import SqliteDelayStore
    from shared.stores.sqlite_pages import SqliteHashStore, SqlitePageStore
    from shared.stores.status import SqlStatusStore

    path = sqlite_path(url)
    if path != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    try:
        db = await asyncio.to_thread(SqliteDb, path)
    except sqlite3.Error as exc:
        raise StoreUnavailable(f"sqlite {path}: cannot open: {exc}") from exc
    try:
        await db.write_raw(db.migrate)
    except BaseException:
        await db.close()
        raise
    return Stores(
        url,
        pages=SqlitePageStore(db),
        hashes=SqliteHashStore(db),
        images=SqlImageRegistry(db),
        delay=SqliteDelayStore(db),
        feeds=SqlFeedStore(db),
        tenants=SqlTenantStore(db),
        tasks=SqlTaskStore(db),
        status=SqlStatusStore(db),
        close=db.close,
    )
