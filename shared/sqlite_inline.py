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

The store's writes go further (``SqliteDb.write``): those made in one turn of
the event loop share one transaction and one commit (*group commit*), since
``BEGIN IMMEDIATE`` and ``COMMIT`` take file locks, syscalls that cost more
than a small write itself; each caller still returns only after the commit.
Reads use a second inline connection, so they never see a group's writes
before they are committed.

A commit in WAL mode with ``synchronous=NORMAL`` costs no fsync, but a
checkpoint does, and an automatic checkpoint runs inside the commit that
crosses the threshold. The inline connection therefore never checkpoints by
itself (``wal_autocheckpoint=0``): ``WalCheckpoints`` watches the WAL file's
size and hands a PASSIVE checkpoint to the thread when it has grown.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable

__all__ = ["INLINE_PRAGMAS", "WalCheckpoints", "is_busy"]

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


class WalCheckpoints:
    """Asks for a PASSIVE checkpoint on the worker thread once the WAL passes ``max_bytes``.

    ``committed()`` is called after each inline commit; it looks at the WAL file
    only every ``check_every`` commits (a ``stat`` is cheap, but not free).
    ``submit`` schedules the checkpoint on the thread; it is not called again
    while the previous one is running (``done()`` ends it).
    """

    def __init__(self, db_path: str, max_bytes: int, submit: Callable[[], None], *, check_every: int = 200) -> None:
        self.wal_path = f"{db_path}-wal"
        self.max_bytes = max_bytes
        self.submit = submit
        self.check_every = check_every
        self.requested = 0
        self._commits = 0
        self._running = False

    def committed(self) -> None:
        self._commits += 1
        if self._running or self._commits % self.check_every:
            return
        try:
            size = os.stat(self.wal_path).st_size
        except OSError:
            return
        if size >= self.max_bytes:
            self._running = True
            self.requested += 1
            self.submit()

    def done(self) -> None:
        self._running = False
