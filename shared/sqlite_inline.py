"""Running short SQLite calls on the event loop thread (the embedded bus and the embedded store).

A call handed to a worker thread costs far more than the SQLite work of a
point read or a one-row write: the hop itself, then the GIL passed back and
forth between the loop and the thread, which at a few thousand calls a second
doubled the CPU of the whole embedded pipeline (``bench/e2e.py``). So the bus
and the store run each call *inline* on the loop thread, on a connection of
its own whose busy timeout is zero, and fall back to their worker thread only
when that would wait:

* the write lock is held (another process sharing the file, or this
  process's own thread): ``BEGIN IMMEDIATE`` fails at once with SQLITE_BUSY,
  nothing has run yet, and the same call goes to the thread, which waits for
  the lock with the long busy timeout;
* (no queueing rule is needed for order: a caller awaits each call before it
  makes the next, so its calls stay in order wherever they run, and calls of
  different callers are concurrent, with no order between them to keep);
* the caller marks the call as long (a catalog-sized batch, a full-text
  search, a retention sweep): it runs on the thread, the loop stays free.

The store's writes go further (``SqliteDb.write``): those asked for in one
turn of the event loop run together at its end, in one transaction with one
commit (*group commit*), since ``BEGIN IMMEDIATE`` and ``COMMIT`` take file
locks, syscalls that cost more than a small write itself; each caller returns
after the commit. The lock is held only while the group's statements run, not
across a turn of the loop: another process sharing the file waits microseconds,
not milliseconds. Reads use a second inline connection.

A commit in WAL mode with ``synchronous=NORMAL`` costs no fsync, but a
checkpoint does, and an automatic checkpoint runs inside the commit that
crosses the threshold. The inline connection therefore never checkpoints by
itself (``wal_autocheckpoint=0``): ``WalCheckpoints`` watches the WAL file's
size and runs a RESTART checkpoint on the thread when it has grown. RESTART
takes the write lock for its duration (inline writers meanwhile find the lock
taken and wait on their thread, the event loop does not), so it always
completes and the next writer starts the WAL from its beginning; a PASSIVE
one never caught up with a steady stream of writes (measured: a 89 MB WAL for
60 MB of data, against 18 MB with RESTART).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import time
from collections.abc import Awaitable, Callable

__all__ = ["INLINE_PRAGMAS", "WalCheckpoints", "enable_wal", "is_busy"]

log = logging.getLogger("turbocubes.sqlite")

#: SQLITE_BUSY, SQLITE_LOCKED (primary codes; extended codes keep them in the low byte)
_BUSY_CODES = frozenset({5, 6})
#: pragmas of an inline connection: never wait for a lock, never checkpoint in a commit
INLINE_PRAGMAS = ("PRAGMA busy_timeout = 0", "PRAGMA wal_autocheckpoint = 0")


def is_busy(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` means "someone else holds the lock" (worth waiting for on the thread)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return (code & 0xFF) in _BUSY_CODES
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def enable_wal(conn: sqlite3.Connection, *, attempts: int = 100, pause_s: float = 0.05) -> None:
    """Switch the file to WAL, waiting out other processes that open it at the same moment.

    Changing the journal mode needs a lock SQLite does not always wait for (it answers "database
    is locked" at once rather than risk a deadlock, whatever the busy timeout), so several
    processes opening a new file together must retry (blocking: this runs while opening)."""
    for attempt in range(attempts):
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or attempt == attempts - 1:
                raise
            time.sleep(pause_s)


class WalCheckpoints:
    """Runs a RESTART checkpoint on the worker thread once the WAL passes ``max_bytes``.

    ``committed()`` is called after each inline commit; it looks at the WAL file
    only every ``check_every`` commits (a ``stat`` is cheap, but not free).
    ``run_on_thread(fn)`` is the owner's way to run ``fn`` on its worker thread;
    no second checkpoint starts while one is running.
    """

    def __init__(
        self,
        db_path: str,
        max_bytes: int,
        run_on_thread: Callable[[Callable[[sqlite3.Connection], object]], Awaitable[object]],
        *,
        check_every: int = 200,
    ) -> None:
        self.db_path = db_path
        self.wal_path = f"{db_path}-wal"
        self.max_bytes = max_bytes
        self.run_on_thread = run_on_thread
        self.check_every = check_every
        self.requested = 0
        self._commits = 0
        #: the running checkpoint (kept so that it is not collected mid-flight)
        self._task: asyncio.Future[None] | None = None

    def committed(self) -> None:
        self._commits += 1
        if (self._task is not None and not self._task.done()) or self._commits % self.check_every:
            return
        try:
            size = os.stat(self.wal_path).st_size
        except OSError:
            return
        if size >= self.max_bytes:
            self.requested += 1
            self._task = asyncio.ensure_future(self._checkpoint())

    async def _checkpoint(self) -> None:
        try:
            await self.run_on_thread(lambda conn: conn.execute("PRAGMA wal_checkpoint(RESTART)").fetchall())
        except Exception as exc:  # the next commits ask again; a checkpoint is housekeeping
            log.debug("checkpoint of %s put off: %s", self.db_path, exc)
