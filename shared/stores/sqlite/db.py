"""The embedded store engine's connections: stdlib ``sqlite3`` (docs/architecture.md sections 4 and 7).

``sqlite:///var/store.db`` (relative to the working directory) or
``sqlite:////srv/store.db`` (absolute); ``sqlite:///:memory:`` for a private
in-memory database.

Why it looks like this:

* **WAL, synchronous=NORMAL**: readers never block the writer and a commit
  costs no fsync (WAL is synced at checkpoints); a power loss may drop the
  last commits but never corrupts the file, and every write here is an
  idempotent replay of a bus message anyway.
* **Short calls inline, long ones on threads**: a point read or a one-row write
  costs tens of µs, far less than the hop to a thread and the GIL traffic it
  brings; so writes and short reads run on the event loop thread with a third
  connection whose busy timeout is zero, and move to the writer thread (one
  per process, it waits for locks) when the lock is taken or when the caller
  says the call is long (a big batch); full-text search and scans use the reader thread.
  ``shared/sqlite_inline.py`` has the rules, and why checkpoints stay on the
  thread.
* **Several processes on one machine** may share the file: ``busy_timeout``
  makes a writer wait for another process's transaction, and every
  read-modify-write runs under ``BEGIN IMMEDIATE`` (the write lock is taken
  before the read, so the check and the write see the same state).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from shared.errors import ConfigError, StoreUnavailable, TurbocubesError
from shared.sqlite_inline import INLINE_PRAGMAS, WalCheckpoints, enable_wal, is_busy
from shared.stores.migrations import SQLITE

__all__ = ["LONG_BATCH", "SqliteDb", "sqlite_path"]

T = TypeVar("T")

log = logging.getLogger("turbocubes.sqlite")

#: how long a writer waits for another process's transaction before giving up (ms)
BUSY_TIMEOUT_MS = 15_000
#: a batch of more rows than this is written on the writer thread, not inline (a catalog's
#: 10,000 hashes would hold up the event loop for tens of milliseconds)
LONG_BATCH = 64
#: SQLite's default page size: the WAL size at which the inline connection asks for a checkpoint
INLINE_PAGE_BYTES = 4096
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


def _connect(path: str, busy_timeout_ms: int = BUSY_TIMEOUT_MS, *, wal: bool = True) -> sqlite3.Connection:
    """A connection; ``wal`` switches the file to WAL (persistent: the first connection is enough)."""
    # isolation_level=None: autocommit; transactions are explicit (BEGIN IMMEDIATE) where needed
    conn = sqlite3.connect(path, timeout=busy_timeout_ms / 1000, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {busy_timeout_ms}")
    if path != ":memory:" and wal:
        enable_wal(conn)
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute(f"PRAGMA wal_autocheckpoint = {WAL_AUTOCHECKPOINT}")
    # temp b-trees (sorting search results) in memory
    conn.execute("PRAGMA temp_store = MEMORY")
    return conn


class _Busy(Exception):
    """The inline ``BEGIN IMMEDIATE`` found the write lock taken: nothing ran."""


@dataclass(slots=True)
class _Failed:
    exc: BaseException


#: one write of a group: the function and the future of its caller (None: a caller on the thread path)
_Write = tuple[Callable[[sqlite3.Connection], Any], "asyncio.Future[Any] | None"]


def _run_group(conn: sqlite3.Connection, batch: list[_Write]) -> list[Any]:
    """Run ``batch`` in one transaction on ``conn``, each write in a savepoint; its outcomes in order.

    Raises ``_Busy`` when the lock is taken and the connection does not wait (nothing ran), and the
    ``COMMIT``'s error when that fails (then nothing of the group is written)."""
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        if is_busy(exc):
            raise _Busy from exc
        raise
    outcomes: list[Any] = []
    try:
        for fn, _ in batch:
            conn.execute("SAVEPOINT w")
            try:
                outcomes.append(fn(conn))
            except Exception as exc:
                conn.execute("ROLLBACK TO w")
                outcomes.append(_Failed(exc))
            conn.execute("RELEASE w")
        conn.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")
        raise
    return outcomes


def _settle(batch: list[_Write], outcomes: list[Any] | None = None, *, exc: BaseException | None = None) -> None:
    """Hand each caller its outcome (or the group's failure)."""
    for i, (_, fut) in enumerate(batch):
        if fut is None or fut.done():
            continue
        if exc is not None:
            fut.set_exception(exc)
            continue
        assert outcomes is not None
        outcome = outcomes[i]
        if isinstance(outcome, _Failed):
            fut.set_exception(_error(outcome.exc))
        else:
            fut.set_result(outcome)


def _error(exc: BaseException) -> BaseException:
    """A write's own error as its caller sees it: SQLite's operational errors are outages."""
    if isinstance(exc, sqlite3.OperationalError):
        out = StoreUnavailable(f"sqlite: {exc}")
        out.__cause__ = exc
        return out
    return exc


class SqliteDb:
    """Four connections: writer and reader, each driven by its own thread, and an inline writer and
    an inline reader used on the event loop thread for short calls (``shared/sqlite_inline.py``)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._writer = _connect(path)
        # an in-memory database is private to its connection: read through the writer
        self._reader = self._writer if path == ":memory:" else _connect(path)
        self._inline = None if path == ":memory:" else _connect(path, 0, wal=False)
        self._inline_r = None if path == ":memory:" else _connect(path, 0, wal=False)
        for conn in (self._inline, self._inline_r):
            if conn is not None:
                for pragma in INLINE_PRAGMAS:
                    conn.execute(pragma)
        #: writes asked for in this turn of the event loop, run together at its end (``write``)
        self._pending: list[_Write] = []
        #: groups that found the lock taken and run on the writer thread (kept from being collected)
        self._thread_groups: set[asyncio.Future[None]] = set()
        self._write_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite-w")
        self._read_pool = (
            self._write_pool
            if self._reader is self._writer
            else ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlite-r")
        )
        self._checkpoints = WalCheckpoints(
            path, WAL_AUTOCHECKPOINT * INLINE_PAGE_BYTES, lambda fn: self._on_writer(lambda: fn(self._writer))
        )
        #: how many calls ran inline and how many went to a thread (tests and benchmarks read these)
        self.inline_calls = 0
        self.thread_calls = 0

    async def write(self, fn: Callable[[sqlite3.Connection], T], *, long: bool = False) -> T:
        """Run ``fn(conn)`` in a transaction and return once it is committed.

        The writes asked for in one turn of the event loop run together at the end of that turn, in
        one transaction (*group commit*: one ``BEGIN IMMEDIATE`` … ``COMMIT``, each write in a
        savepoint of its own, so one that raises is rolled back alone): inline when the write lock
        is free, else as one call on the writer thread, which waits for the lock. The lock is held
        only while the group's statements run, never across a turn of the loop (another process
        sharing the file would wait for it). ``long=True`` (a large batch must not hold up the event
        loop): on the writer thread, alone. ``fn`` must only touch ``conn``."""
        if self._inline is None or long:
            batch: list[_Write] = [(fn, None)]
            outcome = (await self._on_writer(lambda: _run_group(self._writer, batch)))[0]
            if isinstance(outcome, _Failed):
                raise _error(outcome.exc)
            return outcome  # type: ignore[no-any-return]
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[Any] = loop.create_future()
        self._pending.append((fn, fut))
        if len(self._pending) == 1:
            loop.call_soon(self._flush)
        result: T = await fut
        return result

    def _flush(self) -> None:
        """Run the writes of this turn as one group: inline if the lock is free, else on the thread."""
        batch, self._pending = self._pending, []
        batch = [(fn, fut) for fn, fut in batch if fut is None or not fut.cancelled()]
        if not batch:
            return
        conn = self._inline
        assert conn is not None
        try:
            outcomes = _run_group(conn, batch)
        except _Busy:
            task = asyncio.ensure_future(self._flush_on_thread(batch))
            self._thread_groups.add(task)
            task.add_done_callback(self._thread_groups.discard)
            return
        except sqlite3.Error as exc:
            _settle(batch, exc=StoreUnavailable(f"sqlite {self.path}: {exc}"))
            return
        self.inline_calls += len(batch)
        self._checkpoints.committed()
        _settle(batch, outcomes)

    async def _flush_on_thread(self, batch: list[_Write]) -> None:
        try:
            outcomes = await self._on_writer(lambda: _run_group(self._writer, batch))
        except BaseException as exc:
            failure = exc if isinstance(exc, TurbocubesError) else StoreUnavailable(f"sqlite {self.path}: {exc}")
            _settle(batch, exc=failure)
            if isinstance(exc, asyncio.CancelledError):
                raise
            return
        _settle(batch, outcomes)

    async def _on_writer(self, fn: Callable[[], T]) -> T:
        return await self._call(self._write_pool, fn)

    async def write_raw(self, fn: Callable[[], T]) -> T:
        """Run ``fn()`` on the writer thread with no transaction around it (migrations)."""
        return await self._on_writer(fn)

    async def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(conn)`` on the reader thread (autocommit: each statement sees the latest commit).
        For reads that may take long (full-text search, scans); short ones use ``read_inline``."""
        return await self._call(self._read_pool, lambda: fn(self._reader))

    async def read_inline(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run a short read on the event loop thread (see the module docstring); the thread if busy.

        A WAL reader does not wait for writers, so this is inline even while the writer thread works;
        it sees every commit made before the call."""
        if self._inline_r is not None:
            try:
                result = fn(self._inline_r)
            except sqlite3.OperationalError as exc:
                if not is_busy(exc):
                    raise StoreUnavailable(f"sqlite {self.path}: {exc}") from exc
            else:
                self.inline_calls += 1
                return result
        return await self.read(fn)

    async def _call(self, pool: ThreadPoolExecutor, fn: Callable[[], T]) -> T:
        self.thread_calls += 1
        try:
            return await asyncio.get_running_loop().run_in_executor(pool, fn)
        except sqlite3.OperationalError as exc:
            # "database is locked" after busy_timeout, disk I/O errors, a vanished file: try later
            raise StoreUnavailable(f"sqlite {self.path}: {exc}") from exc

    # --- the SqlRunner protocol of sql/runner.py (simple statements, `?` placeholders)

    async def fetch(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        return await self.read_inline(lambda conn: conn.execute(sql, args).fetchall())

    async def fetchone(self, sql: str, *args: Any) -> tuple[Any, ...] | None:
        row: tuple[Any, ...] | None = await self.read_inline(lambda conn: conn.execute(sql, args).fetchone())
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
        if self._pending:  # writes asked for in this very turn: they run now
            self._flush()
        if self._thread_groups:
            await asyncio.gather(*self._thread_groups, return_exceptions=True)
        for conn in (self._inline, self._inline_r):
            if conn is not None:
                conn.close()

        def shutdown() -> None:
            if self._reader is not self._writer:
                self._reader.close()
            self._writer.close()

        await asyncio.get_running_loop().run_in_executor(self._write_pool, shutdown)
        self._write_pool.shutdown(wait=True)
        self._read_pool.shutdown(wait=True)
