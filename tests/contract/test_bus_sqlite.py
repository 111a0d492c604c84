"""The bus contract on the embedded SQLite log, plus what only it promises (restart, processes)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from shared.bus.base import Bus, TopicSpec, tp_of
from shared.bus.sqlite import SqliteBus
from tests.contract.bus_contract import BusContract, drain, produce


class TestSqliteBus(BusContract):
    @pytest.fixture
    async def bus(self, tmp_path: Path) -> AsyncIterator[Bus]:
        b = SqliteBus(f"sqlite:///{tmp_path}/bus.db")
        await b.start()
        yield b
        await b.close()


async def test_log_and_offsets_survive_a_restart(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/bus.db"
    b1 = SqliteBus(url)
    await b1.start()
    await b1.create_topics([TopicSpec("t", 2)])
    await produce(b1, "t", [(f"k{i}", str(i).encode()) for i in range(20)])
    c = await b1.consumer("g", ["t"])
    got = await drain(c, 20)
    await c.commit({tp_of(r): r.offset + 1 for r in got if int(r.value) < 10} or {})
    await b1.close()

    b2 = SqliteBus(url)
    await b2.start()
    assert sum((await b2.end_offsets("t")).values()) == 20
    c2 = await b2.consumer("g", ["t"])
    committed = {tp: await c2.committed(tp) for tp in c2.assignment()}
    assert all(v is not None and v > 0 for v in committed.values())
    await c2.stop()
    await b2.close()


def test_two_processes_share_one_log_without_losing_records(tmp_path: Path) -> None:
    """Four producer processes append at once; every record gets a unique, dense offset."""
    db = tmp_path / "bus.db"
    code = (
        "import asyncio, sys\n"
        "from shared.bus.sqlite import SqliteBus\n"
        "async def main():\n"
        f"    b = SqliteBus('sqlite:///{db}')\n"
        "    await b.start()\n"
        "    p = b.producer()\n"
        "    futs = [await p.send('shared', f'{sys.argv[1]}-{i}'.encode(), key=str(i).encode()) for i in range(500)]\n"
        "    await p.flush(); await asyncio.gather(*futs); await b.close()\n"
        "asyncio.run(main())\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(n)]) for n in range(4)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0, 0]

    async def check() -> None:
        b = SqliteBus(f"sqlite:///{db}")
        await b.start()
        ends = await b.end_offsets("shared")
        values = []
        for partition, end in ends.items():
            recs = await b.read("shared", partition, 0, end + 10)
            assert [r.offset for r in recs] == list(range(end))
            values += [r.value for r in recs]
        assert len(values) == 2000
        assert len(set(values)) == 2000
        await b.close()

    asyncio.run(check())


async def test_group_members_split_partitions(tmp_path: Path) -> None:
    b = SqliteBus(f"sqlite:///{tmp_path}/bus.db")
    await b.start()
    await b.create_topics([TopicSpec("t", 4)])
    c1 = await b.consumer("g", ["t"])
    c2 = await b.consumer("g", ["t"])
    await c1._rebalance()  # c1 learns that c2 joined (normally within a heartbeat)
    assert c1.assignment().isdisjoint(c2.assignment())
    assert len(c1.assignment() | c2.assignment()) == 4
    await c1.stop()
    await c2.stop()
    await b.close()


async def test_a_member_that_does_not_poll_keeps_its_lease(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A runner full of slow work stops polling; its partitions must not go to another member meanwhile."""
    import time

    from shared.bus import sqlite_consumer as engine

    monkeypatch.setattr(engine, "HEARTBEAT_S", 0.05)
    monkeypatch.setattr(engine, "SESSION_TIMEOUT_S", 0.3)
    bus = SqliteBus(f"sqlite:///{tmp_path}/bus.db")
    await bus.start()
    try:
        await bus.create_topics([TopicSpec("t", 4)])
        busy = await bus.consumer("g", ["t"])  # joins, then never polls again
        joined = time.time()
        assert len(busy.assignment()) == 4

        def last_beat() -> float:
            row = bus.db.execute("SELECT heartbeat FROM members WHERE member=?", (busy.member,)).fetchone()
            return float(row[0]) if row else 0.0

        async with asyncio.timeout(5):
            while last_beat() < joined + 2 * engine.SESSION_TIMEOUT_S:  # noqa: ASYNC110 (no event to wait on)
                await asyncio.sleep(0.01)
        newcomer = await bus.consumer("g", ["t"])  # its join drops members silent for SESSION_TIMEOUT_S
        assert len(newcomer.assignment()) == 2  # the busy member is still there: the partitions are split
        await newcomer.stop()
        await busy.stop()
    finally:
        await bus.close()


async def test_retention_drops_old_records_reading_only_those(tmp_path: Path) -> None:
    """The sweep drops what is past its topic's retention, keeps the rest, and finds them by age.

    Before the ``log_age`` index the sweep's DELETE read every record of the topic: ~2 s for a
    million records, every ``RETENTION_SWEEP_S``, holding the write lock (a catalog's first load).
    """
    b = SqliteBus(f"sqlite:///{tmp_path}/bus.db")
    await b.start()
    try:
        await b.create_topics([TopicSpec("short", 2, retention_ms=60_000), TopicSpec("other", 1)])
        await produce(b, "short", [(f"k{i}", str(i).encode()) for i in range(10)])
        await produce(b, "other", [(f"k{i}", str(i).encode()) for i in range(3)])
        b.db.execute("UPDATE log SET ts = ts - 3600000 WHERE CAST(value AS TEXT) IN ('0', '1', '2')")
        dropped = b._retention_sweep()
        left = b.db.execute("SELECT topic, CAST(value AS TEXT) FROM log ORDER BY topic, id").fetchall()
        assert dropped == 3
        assert sorted(v for t, v in left if t == "short") == [str(i) for i in range(3, 10)]
        assert sorted(v for t, v in left if t == "other") == ["0", "1", "2"]  # 7 days' retention
        plan = b.db.execute("EXPLAIN QUERY PLAN DELETE FROM log WHERE topic=? AND ts<?", ("short", 0)).fetchall()
        assert any("USING INDEX log_age" in str(row[-1]) for row in plan), plan
    finally:
        await b.close()
