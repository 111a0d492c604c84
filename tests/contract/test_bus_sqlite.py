"""The bus contract on the embedded SQLite log, plus what only it promises (restart, processes)."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from shared.bus.base import Bus, TopicSpec, tp_of
from shared.bus.sqlite import SqliteBus
from shared.errors import BusUnavailable
from shared.runtime import Output
from shared.runtime.publish import Encoder, publish_outputs
from tests.contract.bus_contract import BusContract, Item, drain, produce, register


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
    assert c2.assignment() == set()  # c1 holds every claim: c2 waits until c1 lets go of its share
    await c1._rebalance()  # c1 learns that c2 joined (normally within a heartbeat) and releases two
    await c2._rebalance()  # c2 takes them at its next heartbeat
    assert c1.assignment().isdisjoint(c2.assignment())
    assert len(c1.assignment()) == len(c2.assignment()) == 2
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
        # the busy member is still there: it keeps its claims (it lets go of half at its next poll),
        # so the newcomer reads none of its partitions meanwhile
        assert bus.db.execute("SELECT count(*) FROM members WHERE grp='g'").fetchone()[0] == 2
        assert newcomer.assignment() == set()
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


async def test_a_batch_send_keeps_order_beside_single_sends_and_each_caller_gets_its_placements(
    tmp_path: Path,
) -> None:
    """``send_batch`` (one future for many records) and ``send`` in one transaction: every record
    placed once, offsets dense, each key's records in the order they were sent."""
    b = SqliteBus(f"sqlite:///{tmp_path}/bus.db")
    await b.start()
    try:
        await b.create_topics([TopicSpec("t", 3)])
        p = b.producer()
        first = await p.send("t", b"s0", key=b"k0")
        batch = await p.send_batch([("t", f"k{i % 4}".encode(), f"b{i}".encode(), ()) for i in range(10)])
        empty = await p.send_batch([])
        last = await p.send("t", b"s1", key=b"k1")
        await p.flush()
        placed = [await first, *(await batch), await last]
        assert await empty == []
        assert len(placed) == 12
        assert sorted(placed) == sorted(set(placed))  # no record placed twice
        ends = await b.end_offsets("t")
        assert sum(ends.values()) == 12
        for part, end in ends.items():  # dense offsets in every partition
            assert sorted(d.offset for d in placed if d.partition == part) == list(range(end))
        c = await b.consumer("g", ["t"])
        got = await drain(c, 12)
        await c.stop()
        by_key: dict[bytes, list[bytes]] = {}
        for r in sorted(got, key=lambda r: (r.partition, r.offset)):
            assert r.key is not None
            by_key.setdefault(r.key, []).append(r.value)
        sent = ["s0", *(f"b{i}" for i in range(10)), "s1"]
        keys = ["k0", *(f"k{i % 4}" for i in range(10)), "k1"]
        for k in set(keys):
            assert by_key[k.encode()] == [v.encode() for v, kk in zip(sent, keys, strict=True) if kk == k]
    finally:
        await b.close()


async def test_a_failed_write_fails_every_send_of_its_batch(tmp_path: Path) -> None:
    """The log's failure reaches ``send_batch``'s caller and ``publish_outputs``' (nothing is taken as
    acknowledged), and the next write works again."""
    b = SqliteBus(f"sqlite:///{tmp_path}/bus.db")
    await b.start()
    try:
        await b.create_topics([TopicSpec("t", 2)])
        p = b.producer()
        real_append = b._append

        def broken(*args: object) -> object:
            raise sqlite3.OperationalError("disk I/O error")

        b._append = broken  # type: ignore[method-assign,assignment]
        single = await p.send("t", b"one", key=b"a")
        batch = await p.send_batch([("t", b"k", b"two", ()), ("t", b"k", b"three", ())])
        await p.flush()
        for fut in (single, batch):
            with pytest.raises(BusUnavailable):
                await fut
        topic = register(f"batch-{uuid.uuid4().hex}")
        outputs = [Output(topic, Item(id=f"i{i}", n=i)) for i in range(3)]
        with pytest.raises(BusUnavailable):
            await publish_outputs(p, Encoder("test", None), outputs)
        b._append = real_append  # type: ignore[method-assign]
        again = await p.send_batch([("t", b"k", b"four", ())])
        await p.flush()
        assert [d.offset for d in await again] == [0]
        assert sum((await b.end_offsets("t")).values()) == 1
        assert await publish_outputs(p, Encoder("test", None), outputs) == 3
        assert sum((await b.end_offsets(topic)).values()) == 3
    finally:
        await b.close()
