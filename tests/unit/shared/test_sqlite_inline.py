"""Short SQLite calls inline on the event loop, with a thread fallback (shared/sqlite_inline.py).

The embedded store groups the writes of one loop turn into one commit; the
embedded bus runs its batches inline. Both must move to their thread when the
write lock is held elsewhere (another process sharing the file), and the data
must be the same either way.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from shared.bus.sqlite import SqliteBus
from shared.errors import StoreUnavailable
from shared.sqlite_inline import WalCheckpoints, enable_wal, is_busy
from shared.stores.sqlite import SqliteDb


async def _until(cond: Any, what: str) -> None:
    """Let the loop run until ``cond()`` holds (a condition, not a timed sleep); fail after 5 s."""
    async with asyncio.timeout(5):
        while not cond():  # noqa: ASYNC110 (a worker thread sets no event to wait on)
            await asyncio.sleep(0.001)
    assert cond(), what


@pytest.fixture
async def db(tmp_path: Path) -> Any:
    d = SqliteDb(str(tmp_path / "s.db"))
    await d.write_raw(lambda: d._writer.execute("CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER)"))
    yield d
    await d.close()


def _insert(k: str, v: int) -> Any:
    def fn(conn: sqlite3.Connection) -> int:
        return conn.execute("INSERT INTO t (k, v) VALUES (?, ?)", (k, v)).rowcount

    return fn


async def _rows(db: SqliteDb) -> dict[str, int]:
    return dict(await db.fetch("SELECT k, v FROM t"))


async def test_writes_of_one_turn_commit_together_and_each_returns_after_the_commit(db: SqliteDb) -> None:
    threads = db.thread_calls  # creating the table
    results = await asyncio.gather(*(db.write(_insert(f"k{i}", i)) for i in range(20)))
    assert results == [1] * 20
    assert await _rows(db) == {f"k{i}": i for i in range(20)}
    assert db.inline_calls >= 20
    assert db.thread_calls == threads


async def test_a_failing_write_is_rolled_back_alone(db: SqliteDb) -> None:
    await db.write(_insert("dup", 1))

    def boom(conn: sqlite3.Connection) -> None:
        conn.execute("INSERT INTO t (k, v) VALUES ('half', 9)")
        raise ValueError("the handler's own error")

    got = await asyncio.gather(
        db.write(_insert("a", 1)),
        db.write(_insert("dup", 2)),
        db.write(boom),
        db.write(_insert("b", 2)),
        return_exceptions=True,
    )
    assert got[0] == 1
    assert got[3] == 1
    assert isinstance(got[1], sqlite3.IntegrityError)
    assert isinstance(got[2], ValueError)
    assert await _rows(db) == {"dup": 1, "a": 1, "b": 2}  # no "half": its savepoint was rolled back


async def test_a_write_is_seen_once_its_group_has_committed(db: SqliteDb) -> None:
    task = asyncio.create_task(db.write(_insert("x", 1)))
    await asyncio.sleep(0)  # the task asks for its write; the group runs at the end of the turn
    assert db._pending
    assert not task.done()
    assert await _rows(db) == {}
    assert await task == 1
    assert await _rows(db) == {"x": 1}


async def test_a_write_waits_on_the_thread_while_another_connection_holds_the_lock(
    db: SqliteDb, tmp_path: Path
) -> None:
    other = sqlite3.connect(tmp_path / "s.db", isolation_level=None)  # another process, as far as SQLite knows
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO t (k, v) VALUES ('other', 0)")
    threads = db.thread_calls
    task = asyncio.create_task(db.write(_insert("mine", 1)))
    await _until(lambda: db.thread_calls == threads + 1, "the write moved to the writer thread")
    assert not task.done()
    other.execute("COMMIT")
    assert await task == 1
    assert await _rows(db) == {"other": 0, "mine": 1}
    other.close()


async def test_a_failed_group_commit_fails_every_write_in_it(db: SqliteDb) -> None:
    real = db._inline
    assert real is not None

    class CommitFails:
        def execute(self, sql: str, *args: Any) -> Any:
            if sql == "COMMIT":
                raise sqlite3.OperationalError("disk I/O error")
            assert real is not None
            return real.execute(sql, *args)

    db._inline = CommitFails()  # type: ignore[assignment]
    try:
        got = await asyncio.gather(db.write(_insert("a", 1)), db.write(_insert("b", 2)), return_exceptions=True)
    finally:
        db._inline = real
    assert all(isinstance(g, StoreUnavailable) for g in got), got
    assert await _rows(db) == {}
    assert await db.write(_insert("c", 3)) == 1  # the connection is usable again
    assert await _rows(db) == {"c": 3}


async def test_a_long_write_goes_to_the_thread(db: SqliteDb) -> None:
    threads = db.thread_calls
    assert await db.write(_insert("big", 1), long=True) == 1
    assert db.thread_calls == threads + 1
    assert db.inline_calls == 0
    assert await _rows(db) == {"big": 1}


async def test_the_bus_appends_on_its_thread_while_another_connection_holds_the_lock(tmp_path: Path) -> None:
    bus = SqliteBus(f"sqlite:///{tmp_path}/bus.db")
    await bus.start()
    try:
        producer = bus.producer()
        first = await (await producer.send("t", b"one", key=b"k"))
        assert bus.thread_calls == 1  # only opening the file
        other = sqlite3.connect(tmp_path / "bus.db", isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        fut = await producer.send("t", b"two", key=b"k")
        await _until(lambda: bus.thread_calls == 2, "the append moved to the bus thread")
        assert not fut.done()
        other.execute("ROLLBACK")
        second = await fut
        other.close()
        assert (second.partition, second.offset) == (first.partition, first.offset + 1)
        records = await bus.read("t", first.partition, 0, 10)
        assert [r.value for r in records] == [b"one", b"two"]
    finally:
        await bus.close()


async def test_checkpoints_run_once_the_wal_is_big_and_not_again_while_one_runs(tmp_path: Path) -> None:
    wal = tmp_path / "x.db-wal"
    ran: list[str] = []
    gate = asyncio.Event()

    class Conn:
        def execute(self, sql: str) -> Any:
            ran.append(sql)
            return self

        def fetchall(self) -> list[Any]:
            return []

    async def on_thread(fn: Any) -> object:
        await gate.wait()  # the checkpoint "runs" until the test lets it end
        return fn(Conn())

    cp = WalCheckpoints(str(tmp_path / "x.db"), 1000, on_thread, check_every=2)
    wal.write_bytes(b"\0" * 10)
    for _ in range(4):
        cp.committed()
    assert cp.requested == 0  # small WAL
    wal.write_bytes(b"\0" * 2000)
    cp.committed()
    assert cp.requested == 0  # looked at only every 2nd commit
    cp.committed()
    assert cp.requested == 1
    for _ in range(4):
        cp.committed()
    assert cp.requested == 1  # one is running
    gate.set()
    assert cp._task is not None
    await cp._task
    assert ran == ["PRAGMA wal_checkpoint(RESTART)"]
    cp.committed()
    cp.committed()
    assert cp.requested == 2


def test_busy_means_locked(tmp_path: Path) -> None:
    a = sqlite3.connect(tmp_path / "l.db", isolation_level=None, timeout=0)
    b = sqlite3.connect(tmp_path / "l.db", isolation_level=None, timeout=0)
    a.execute("BEGIN IMMEDIATE")
    with pytest.raises(sqlite3.OperationalError) as locked:
        b.execute("BEGIN IMMEDIATE")
    with pytest.raises(sqlite3.OperationalError) as missing:
        b.execute("SELECT * FROM nowhere")
    assert is_busy(locked.value)
    assert not is_busy(missing.value)
    a.close()
    b.close()


def test_wal_is_enabled_once_another_opener_lets_go(tmp_path: Path) -> None:
    """Several processes opening a new file at once: the journal-mode switch waits, it does not fail."""
    import threading

    path = tmp_path / "new.db"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN EXCLUSIVE")  # another opener, mid-way
    mine = sqlite3.connect(path, isolation_level=None, timeout=0)
    with pytest.raises(sqlite3.OperationalError) as gave_up:
        enable_wal(mine, attempts=2, pause_s=0.001)
    assert is_busy(gave_up.value)
    released = threading.Event()

    def let_go() -> None:
        released.wait(5)
        other.execute("COMMIT")

    t = threading.Thread(target=let_go)
    t.start()
    released.set()  # the other opener commits while we retry
    enable_wal(mine, attempts=200, pause_s=0.01)
    t.join()
    assert mine.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    mine.close()
    other.close()
