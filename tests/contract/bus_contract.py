"""The bus + runtime contract, written once and run against every engine (docs/conventions.md rule 11).

Subclasses provide the ``bus`` fixture: ``test_bus_sqlite.py`` (embedded log)
and ``test_bus_kafka.py`` (Apache Kafka started by ``ops/kafka/start``).
Each test uses fresh uuid topics and groups, so tests never see each other.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from shared import contracts
from shared.bus.base import Bus, Consumed, Consumer, TopicSpec, header, tp_of
from shared.config import Settings
from shared.contracts import Topic
from shared.errors import Reject, TransientError
from shared.messages import Message
from shared.runtime import HEADERS, Cube, Deps, Output, Runner
from shared.runtime.dlq import dead_letters, replay

WAIT_S = 30.0


class Item(Message):
    id: str
    n: int


def register(name: str) -> str:
    contracts.register_topic(Topic(name, "id", 3, Item, "test", "test topic"))
    return name


async def drain(consumer: Consumer, n: int, within_s: float = WAIT_S) -> list[Consumed]:
    """Read until ``n`` records arrived (or fail after ``within_s``)."""
    got: list[Consumed] = []
    deadline = time.monotonic() + within_s
    while len(got) < n:
        if time.monotonic() > deadline:
            pytest.fail(f"only {len(got)} of {n} records arrived within {within_s}s")
        got += list(await consumer.getmany(0.5, 1000))
    return got


async def produce(bus: Bus, topic: str, items: list[tuple[str, bytes]]) -> None:
    p = bus.producer()
    futs = [await p.send(topic, v, key=k.encode()) for k, v in items]
    await p.flush()
    await asyncio.gather(*futs)


def settings_for(bus: Bus) -> Settings:
    return Settings().replace(
        bus={"url": bus.url},
        runtime={
            "backoff_base_s": 0.05,
            "backoff_cap_s": 0.2,
            "max_attempts": 3,
            "concurrency": 4,
            "dlq_breaker_window": 100,
            "dlq_breaker_ratio": 0.5,
            "shutdown_timeout_s": 10.0,
        },
    )


def make_deps(bus: Bus, **runtime: Any) -> Deps:
    async def publish(outputs: Any) -> None:
        raise AssertionError("not used")

    return Deps(settings=settings_for(bus).replace(runtime=runtime), bus=bus, publish=publish)


async def run_until(runner: Runner, cond: Any, within_s: float = WAIT_S) -> None:
    """Run ``runner`` until ``cond()`` holds, then stop it gracefully and wait for it."""
    task = asyncio.create_task(runner.run())
    deadline = time.monotonic() + within_s
    try:
        while not cond():
            if task.done():
                task.result()
                pytest.fail("runner ended before the condition held")
            if time.monotonic() > deadline:
                pytest.fail(f"condition not reached within {within_s}s")
            await asyncio.sleep(0.02)  # polling a condition, not synchronizing on time
    finally:
        runner.stop()
        await asyncio.wait_for(task, 15)


class BusContract:
    """Subclasses define an async fixture ``bus`` yielding a started engine."""

    @pytest.fixture
    async def bus(self) -> Bus:  # pragma: no cover - overridden
        raise NotImplementedError

    async def make_topics(self, bus: Bus, *names: str, partitions: int = 3) -> None:
        await bus.create_topics([TopicSpec(n, partitions) for n in names])

    # ------------------------------------------------------------------ the log itself

    async def test_per_key_order_is_kept(self, bus: Bus, uid: str) -> None:
        t = f"order-{uid}"
        await self.make_topics(bus, t)
        items = [(f"k{i % 7}", f"{i % 7}:{i}".encode()) for i in range(300)]
        await produce(bus, t, items)
        c = await bus.consumer(f"g-{uid}", [t])
        got = await drain(c, 300)
        await c.stop()
        seen: dict[bytes, list[int]] = {}
        for r in got:
            assert r.key is not None
            seen.setdefault(r.key, []).append(int(r.value.split(b":")[1]))
        assert len(seen) == 7
        for key, ns in seen.items():
            assert ns == sorted(ns), f"key {key!r} out of order"
        assert len({r.partition for r in got if r.key == b"k3"}) == 1

    async def test_partitioner_says_where_the_producer_put_each_key(self, bus: Bus, uid: str) -> None:
        t = f"placed-{uid}"
        await self.make_topics(bus, t, partitions=5)
        keys = [f"host{i}.example" for i in range(60)]
        p = bus.producer()
        futs = [await p.send(t, b"v", key=k.encode()) for k in keys]
        await p.flush()
        placed = [(await f).partition for f in futs]
        where = await bus.partitioner(t)
        assert [where(k.encode()) for k in keys] == placed
        assert len(set(placed)) == 5  # a real spread, not one partition that would agree by chance

    async def test_two_groups_each_receive_every_message(self, bus: Bus, uid: str) -> None:
        t = f"fanout-{uid}"
        await self.make_topics(bus, t)
        await produce(bus, t, [(f"k{i}", str(i).encode()) for i in range(50)])
        a = await bus.consumer(f"a-{uid}", [t])
        b = await bus.consumer(f"b-{uid}", [t])
        got_a, got_b = await asyncio.gather(drain(a, 50), drain(b, 50))
        await a.stop()
        await b.stop()
        assert sorted(r.value for r in got_a) == sorted(r.value for r in got_b)
        assert len({r.value for r in got_a}) == 50

    async def test_uncommitted_records_come_again_and_restart_resumes_after_commit(self, bus: Bus, uid: str) -> None:
        t, g = f"redeliver-{uid}", f"g-{uid}"
        await self.make_topics(bus, t, partitions=1)
        await produce(bus, t, [("k", str(i).encode()) for i in range(10)])
        c = await bus.consumer(g, [t])
        first = await drain(c, 10)
        # handled the first 4, committed them; "killed" before committing the rest
        await c.commit({tp_of(first[3]): first[3].offset + 1})
        await c.stop()
        c2 = await bus.consumer(g, [t])
        again = await drain(c2, 6)
        await c2.stop()
        assert [r.value for r in again][:6] == [str(i).encode() for i in range(4, 10)]

    async def test_lag_is_log_end_minus_committed(self, bus: Bus, uid: str) -> None:
        t, g = f"lag-{uid}", f"g-{uid}"
        await self.make_topics(bus, t, partitions=1)
        await produce(bus, t, [("k", str(i).encode()) for i in range(10)])
        c = await bus.consumer(g, [t])
        got = await drain(c, 10)
        tp = tp_of(got[0])
        assert (await c.lag())[tp] == 10  # read, not committed: still behind
        await c.commit({tp: got[3].offset + 1})
        assert (await c.lag())[tp] == 6
        await c.commit({tp: got[9].offset + 1})
        assert (await c.lag())[tp] == 0
        await c.stop()
        # a new member reads the group's committed offset, not only the offsets it committed itself
        await produce(bus, t, [("k", b"late")])
        c2 = await bus.consumer(g, [t])
        await drain(c2, 1)
        assert (await c2.lag())[tp] == 1
        await c2.stop()

    async def test_wakeup_ends_a_long_poll_at_once_and_loses_nothing(self, bus: Bus, uid: str) -> None:
        """A stopping runner wakes its consumer's idle poll (``Consumer.wakeup``) instead of waiting it out."""
        t, g = f"wake-{uid}", f"g-{uid}"
        await self.make_topics(bus, t, partitions=1)
        c = await bus.consumer(g, [t])
        try:
            poll = asyncio.ensure_future(c.getmany(3600.0, 10))
            async with asyncio.timeout(WAIT_S):  # the poll is woken, not waited out
                while not poll.done():
                    c.wakeup()  # again until the poll has begun waiting (no event says when)
                    await asyncio.sleep(0.01)
            assert poll.result() == []
            await produce(bus, t, [("k", b"after")])
            assert [r.value for r in await drain(c, 1)] == [b"after"]
        finally:
            await c.stop()

    async def test_headers_and_keys_survive(self, bus: Bus, uid: str) -> None:
        t = f"headers-{uid}"
        await self.make_topics(bus, t)
        p = bus.producer()
        fut = await p.send(t, b"v", key=b"k", headers=(("a", b"1"), ("b", b"\x00\xff")))
        await p.flush()
        delivered = await fut
        got = await bus.read(t, delivered.partition, delivered.offset, 1)
        assert got[0].key == b"k"
        assert header(got[0].headers, "a") == b"1"
        assert header(got[0].headers, "b") == b"\x00\xff"

    # ------------------------------------------------------------------ the runtime on this engine

    async def test_invalid_message_goes_to_dlq_with_reason_and_next_is_processed(self, bus: Bus, uid: str) -> None:
        t_in, t_out = register(f"in-{uid}"), register(f"out-{uid}")
        await self.make_topics(bus, t_in, t_out, f"{t_in}.dlq", contracts.retry_topic(f"c-{uid}"))
        good = contracts.encode(t_in, Item(id="a", n=1))
        await produce(bus, t_in, [("a", b'{"id": "a", "n": "not a number"}'), ("a", good)])
        handled: list[int] = []

        async def handle(msg: Item, ctx: Any) -> list[Output]:
            handled.append(msg.n)
            return [Output(t_out, msg)]

        runner = Runner(Cube(f"c-{uid}", (t_in,), (t_out,), handle), make_deps(bus))
        await run_until(runner, lambda: runner.stats.processed >= 1 and runner.stats.dead_lettered >= 1)
        assert handled == [1]
        dead = await dead_letters(bus, t_in, 10)
        assert len(dead) == 1
        assert dead[0].key == b"a"
        assert dead[0].value == b'{"id": "a", "n": "not a number"}'
        assert header(dead[0].headers, HEADERS.error_class) == b"ContractError"
        assert b"n:" in (header(dead[0].headers, HEADERS.error) or b"")
        assert header(dead[0].headers, HEADERS.origin_topic) == t_in.encode()
        assert header(dead[0].headers, HEADERS.group) == f"c-{uid}".encode()

    async def test_emitted_outputs_are_acknowledged_before_emit_returns_and_a_crash_resumes(
        self, bus: Bus, uid: str
    ) -> None:
        # a handler whose outputs grow with its input emits them in parts (a shop's catalog): each part is
        # on the broker when emit returns; the input is committed only when the handler returns
        t_in, t_out = register(f"in-{uid}"), register(f"out-{uid}")
        cube = f"c-{uid}"
        await self.make_topics(bus, t_in, t_out, contracts.retry_topic(cube))
        await produce(bus, t_in, [("cat", contracts.encode(t_in, Item(id="cat", n=9)))])
        done: set[int] = set()  # the "hash store": what the handler recorded after each emit returned
        on_broker: list[int] = []
        check = await bus.consumer(f"check-{uid}", [t_out])

        async def handle(msg: Item, ctx: Any) -> list[Output]:
            assert ctx.can_emit
            for part in range(0, msg.n, 3):
                todo = [i for i in range(part, min(part + 3, msg.n)) if i not in done]
                await ctx.emit([Output(t_out, Item(id=f"offer-{i}", n=i)) for i in todo])
                arrived = [contracts.decode(t_out, r.value) for r in await drain(check, len(todo))]
                on_broker.extend(sorted(x.n for x in arrived if isinstance(x, Item)))
                done.update(todo)
                if ctx.attempt == 1 and part == 3:
                    raise TransientError("crashed half-way through the catalog")
            return [Output(t_out, Item(id="summary", n=len(done)))]

        runner = Runner(Cube(cube, (t_in,), (t_out,), handle), make_deps(bus, max_attempts=3))
        await run_until(runner, lambda: runner.stats.processed >= 1)
        assert on_broker == list(range(9))  # each part read back before the next: acknowledged, in order
        assert runner.stats.retried == 1
        assert runner.stats.published == 9 + 1  # the resumed delivery did not emit the first six again
        summary = await drain(check, 1)
        await check.stop()
        item = contracts.decode(t_out, summary[0].value)
        assert isinstance(item, Item)
        assert (item.id, item.n) == ("summary", 9)

    async def test_transient_failure_is_retried_then_succeeds(self, bus: Bus, uid: str) -> None:
        t_in, t_out = register(f"in-{uid}"), register(f"out-{uid}")
        cube = f"c-{uid}"
        await self.make_topics(bus, t_in, t_out, contracts.retry_topic(cube))
        await produce(bus, t_in, [("x", contracts.encode(t_in, Item(id="x", n=7)))])
        attempts: list[int] = []

        async def handle(msg: Item, ctx: Any) -> list[Output]:
            attempts.append(ctx.attempt)
            if ctx.attempt < 3:
                raise TransientError("partner is down")
            return [Output(t_out, msg)]

        runner = Runner(Cube(cube, (t_in,), (t_out,), handle), make_deps(bus, max_attempts=5))
        await run_until(runner, lambda: runner.stats.processed >= 1)
        assert attempts == [1, 2, 3]
        assert runner.stats.retried == 2
        out = await bus.consumer(f"check-{uid}", [t_out])
        got = await drain(out, 1)
        await out.stop()
        out_item = contracts.decode(t_out, got[0].value)
        assert isinstance(out_item, Item)
        assert (out_item.id, out_item.n) == ("x", 7)

    async def test_rejected_message_is_dead_lettered_at_once_and_replay_republishes(self, bus: Bus, uid: str) -> None:
        t_in, t_out = register(f"in-{uid}"), register(f"out-{uid}")
        cube = f"c-{uid}"
        await self.make_topics(bus, t_in, t_out, f"{t_in}.dlq", contracts.retry_topic(cube))
        await produce(bus, t_in, [("r", contracts.encode(t_in, Item(id="r", n=-1)))])
        fixed = False
        seen: list[int] = []

        async def handle(msg: Item, ctx: Any) -> list[Output]:
            seen.append(ctx.attempt)
            if not fixed:
                raise Reject("n must not be negative")
            return [Output(t_out, msg)]

        runner = Runner(Cube(cube, (t_in,), (t_out,), handle), make_deps(bus))
        await run_until(runner, lambda: runner.stats.dead_lettered >= 1)
        assert seen == [1]  # no retries for a Reject
        dead = await dead_letters(bus, t_in, 10)
        assert header(dead[0].headers, HEADERS.error) == b"n must not be negative"
        fixed = True
        assert await replay(bus, t_in, 10, group=f"replay-{uid}") == 1
        runner2 = Runner(Cube(cube, (t_in,), (t_out,), handle), make_deps(bus))
        await run_until(runner2, lambda: runner2.stats.processed >= 1)
        out = await bus.consumer(f"check-{uid}", [t_out])
        got = await drain(out, 1)
        await out.stop()
        out_item = contracts.decode(t_out, got[0].value)
        assert isinstance(out_item, Item)
        assert (out_item.id, out_item.n) == ("r", -1)

    async def test_graceful_shutdown_commits_in_flight_work(self, bus: Bus, uid: str) -> None:
        t_in, t_out = register(f"in-{uid}"), register(f"out-{uid}")
        cube = f"c-{uid}"
        await self.make_topics(bus, t_in, t_out, contracts.retry_topic(cube), partitions=1)
        await produce(bus, t_in, [(f"k{i}", contracts.encode(t_in, Item(id=f"k{i}", n=i))) for i in range(5)])
        entered = asyncio.Event()
        release = asyncio.Event()
        done: list[int] = []

        async def handle(msg: Item, ctx: Any) -> list[Output]:
            entered.set()
            await release.wait()
            done.append(msg.n)
            return [Output(t_out, msg)]

        runner = Runner(Cube(cube, (t_in,), (t_out,), handle, concurrency=8), make_deps(bus))
        task = asyncio.create_task(runner.run())
        await asyncio.wait_for(entered.wait(), WAIT_S)
        runner.stop()  # SIGTERM while handlers are in flight
        release.set()
        await asyncio.wait_for(task, 15)
        assert sorted(done) == [0, 1, 2, 3, 4]
        c = await bus.consumer(cube, [t_in])
        assert await c.committed(next(iter(c.assignment()))) == 5
        await c.stop()

    async def test_breaker_pauses_input_instead_of_emptying_topic_into_dlq(self, bus: Bus, uid: str) -> None:
        t_in, t_out = register(f"in-{uid}"), register(f"out-{uid}")
        cube = f"c-{uid}"
        await self.make_topics(bus, t_in, t_out, f"{t_in}.dlq", contracts.retry_topic(cube), partitions=1)
        await produce(bus, t_in, [("k", contracts.encode(t_in, Item(id="k", n=i))) for i in range(40)])

        async def handle(msg: Item, ctx: Any) -> list[Output]:
            raise Reject("a bug, not bad data")

        deps = make_deps(bus, dlq_breaker_window=10, dlq_breaker_ratio=0.5, dlq_breaker_cooldown_s=3600.0)
        runner = Runner(Cube(cube, (t_in,), (t_out,), handle), deps)
        await run_until(runner, lambda: runner.stats.breaker_trips >= 1)
        assert runner.stats.dead_lettered == 5  # 5 of the last 10 allowed, the 6th trips the breaker
        assert len(await dead_letters(bus, t_in, 100)) == 5
        c = await bus.consumer(cube, [t_in])
        assert await c.committed(next(iter(c.assignment()))) == 5  # the rest is still there
        await c.stop()

    async def test_a_member_joining_midway_loses_nothing(self, bus: Bus, uid: str) -> None:
        """Rebalance: a second instance of a cube joins while the first is busy; every message is
        handled (at least once), every output is there, and the group's commits cover the topic."""
        t_in, t_out = register(f"in-{uid}"), register(f"out-{uid}")
        cube = f"c-{uid}"
        await self.make_topics(bus, t_in, t_out, contracts.retry_topic(cube), partitions=6)
        n = 300
        await produce(bus, t_in, [(f"k{i}", contracts.encode(t_in, Item(id=f"k{i}", n=i))) for i in range(n)])
        handled: set[int] = set()

        async def handle(msg: Item, ctx: Any) -> list[Output]:
            await asyncio.sleep(0.002)  # a little work, so the rebalance lands mid-stream
            handled.add(msg.n)
            return [Output(t_out, msg)]

        deps = make_deps(bus, batch_size=20)
        a = Runner(Cube(cube, (t_in,), (t_out,), handle), deps)
        b = Runner(Cube(cube, (t_in,), (t_out,), handle), deps)
        ta = asyncio.create_task(a.run())
        deadline = time.monotonic() + WAIT_S
        while len(handled) < n // 5:
            assert time.monotonic() < deadline, "first member made no progress"
            await asyncio.sleep(0.01)
        tb = asyncio.create_task(b.run())
        while len(handled) < n:
            assert time.monotonic() < deadline + WAIT_S, f"only {len(handled)} of {n} handled"
            await asyncio.sleep(0.02)
        a.stop()
        b.stop()
        await asyncio.wait_for(asyncio.gather(ta, tb), 30)
        assert handled == set(range(n))
        out = await bus.consumer(f"check-{uid}", [t_out])
        got = await drain(out, n)
        await out.stop()
        assert {contracts.decode(t_out, r.value).n for r in got} == set(range(n))  # type: ignore[attr-defined]
        ends = await bus.end_offsets(t_in)
        probe = await bus.consumer(cube, [t_in])
        committed = {tp.partition: await probe.committed(tp) for tp in probe.assignment()}
        await probe.stop()
        assert committed == ends

    async def test_a_revoked_partition_has_one_owner_at_a_time(self, bus: Bus, uid: str) -> None:
        """A member whose partition goes to another stops handling its records before the other
        begins: a long handler is cancelled at the revoke, not left running beside its next owner
        (a parser loaded one catalog for 53 s beside the member that had taken its partition)."""
        t_in, t_out = register(f"in-{uid}"), register(f"out-{uid}")
        cube = f"c-{uid}"
        await self.make_topics(bus, t_in, t_out, contracts.retry_topic(cube), partitions=2)
        n = 8
        await produce(bus, t_in, [(f"k{i}", contracts.encode(t_in, Item(id=f"k{i}", n=i))) for i in range(n)])
        inside: dict[int, set[str]] = {i: set() for i in range(n)}
        overlaps: list[tuple[int, str, set[str]]] = []
        started = {"a": asyncio.Event(), "b": asyncio.Event()}

        def handler(member: str, long: bool) -> Any:
            async def handle(msg: Item, ctx: Any) -> list[Output]:
                if inside[msg.n]:
                    overlaps.append((msg.n, member, set(inside[msg.n])))
                inside[msg.n].add(member)
                started[member].set()
                try:
                    if long:
                        await asyncio.Event().wait()  # a handler that would run for ever: only a cancel ends it
                    return [Output(t_out, msg)]
                finally:
                    inside[msg.n].discard(member)

            return handle

        # a short grace before the cancel, and no handler deadline to end the long handler instead
        deps = make_deps(bus, shutdown_timeout_s=0.5, handler_timeout_s=3600.0, concurrency=n)
        a = Runner(Cube(cube, (t_in,), (t_out,), handler("a", long=True)), deps)
        b = Runner(Cube(cube, (t_in,), (t_out,), handler("b", long=False)), deps)
        ta = asyncio.create_task(a.run())
        tb: asyncio.Task[Any] | None = None
        try:
            await asyncio.wait_for(started["a"].wait(), WAIT_S)
            tb = asyncio.create_task(b.run())
            await asyncio.wait_for(started["b"].wait(), WAIT_S)  # b got a partition a had, and handles its records
            deadline = time.monotonic() + WAIT_S
            while b.stats.processed < 1:
                assert time.monotonic() < deadline, "b handled nothing"
                await asyncio.sleep(0.02)  # polling a condition, not synchronizing on time
        finally:
            a.stop()
            b.stop()
            await asyncio.wait_for(asyncio.gather(ta, *([tb] if tb else [])), 30)
        assert a.stats.revoke_cancels >= 1, a.stats
        assert not overlaps, f"two members handled one record at once: {overlaps}"
