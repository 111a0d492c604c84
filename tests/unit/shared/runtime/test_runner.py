"""Runtime behaviour beyond the bus contract: lanes, timeouts, delayed retries, health, the CLI."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from cubes.cli import build_parser
from shared import contracts
from shared.bus.base import Bus, header
from shared.bus.sqlite import SqliteBus
from shared.errors import Reject, TransientError
from shared.runtime import Cube, Output, Runner
from shared.runtime.health import HealthServer
from tests.contract.bus_contract import Item, drain, make_deps, produce, register, run_until


@pytest.fixture
async def bus(tmp_path: Path) -> AsyncIterator[Bus]:
    b = SqliteBus(f"sqlite:///{tmp_path}/bus.db")
    await b.start()
    yield b
    await b.close()


async def test_lanes_run_keys_concurrently_but_keep_per_key_order(bus: Bus, uid: str) -> None:
    t_in, t_out = register(f"in-{uid}"), register(f"out-{uid}")
    await produce(bus, t_in, [(f"k{i % 5}", contracts.encode(t_in, Item(id=f"k{i % 5}", n=i))) for i in range(200)])
    seen: dict[str, list[int]] = {}
    first_key: list[str] = []
    other_key_started = asyncio.Event()
    overlapped = False
    rng = random.Random(3)

    async def handle(msg: Item, ctx: Any) -> list[Output]:
        nonlocal overlapped
        if not first_key:
            # the first handler waits for one of another key to start: only lanes that run side by side
            # get past this (random yields alone showed it only by chance; it failed once under load)
            first_key.append(msg.id)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(10):
                    await other_key_started.wait()
                    overlapped = True
        elif msg.id != first_key[0]:
            other_key_started.set()
        for _ in range(rng.randint(0, 3)):
            await asyncio.sleep(0)  # yield so that lanes interleave
        seen.setdefault(msg.id, []).append(msg.n)
        return [Output(t_out, msg)]

    runner = Runner(Cube(f"c-{uid}", (t_in,), (t_out,), handle, concurrency=8), make_deps(bus))
    await run_until(runner, lambda: runner.stats.processed >= 200)
    assert overlapped, "lanes did not run concurrently"
    assert sum(map(len, seen.values())) == 200, "a record was handled twice or not at all"
    for key, ns in seen.items():
        assert ns == sorted(ns), f"{key} out of order"


async def test_per_key_lanes_run_as_many_of_one_key_at_once_as_its_width(bus: Bus, uid: str) -> None:
    # the crawler's case: a host's requests need no order, and its lane allows `width` at once; one
    # worker per key ran them one by one (a feed's 200 new images queued behind each other)
    t_in, t_out = register(f"in-{uid}"), register(f"out-{uid}")
    items = [("wide", i) for i in range(12)] + [("narrow", 100 + i) for i in range(12)]
    await produce(bus, t_in, [(k, contracts.encode(t_in, Item(id=k, n=n))) for k, n in items])
    running = {"wide": 0, "narrow": 0}
    peak = {"wide": 0, "narrow": 0}
    handled: list[int] = []
    narrow_order: list[int] = []
    three_at_once = asyncio.Event()

    async def handle(msg: Item, ctx: Any) -> list[Output]:
        running[msg.id] += 1
        peak[msg.id] = max(peak[msg.id], running[msg.id])
        try:
            if msg.id == "wide":
                if running["wide"] == 3:
                    three_at_once.set()
                # the first three wait for each other: only three side by side get past this
                async with asyncio.timeout(5):
                    await three_at_once.wait()
            else:
                narrow_order.append(msg.n)
                await asyncio.sleep(0)
        finally:
            running[msg.id] -= 1
        handled.append(msg.n)
        return [Output(t_out, msg)]

    def width(key: bytes | None) -> int:
        return 3 if key == b"wide" else 1

    cube = Cube(f"c-{uid}", (t_in,), (t_out,), handle, concurrency=8, lanes="per_key", key_width=width)
    runner = Runner(cube, make_deps(bus))
    await run_until(runner, lambda: runner.stats.processed >= 24)
    assert peak == {"wide": 3, "narrow": 1}
    assert sorted(handled) == sorted(n for _k, n in items)  # each once
    assert narrow_order == sorted(narrow_order)  # a width of one keeps the key's order
    assert runner.stats.failed == 0


async def test_a_hanging_handler_is_cut_off_and_retried(bus: Bus, uid: str) -> None:
    t_in, t_out = register(f"in-{uid}"), register(f"out-{uid}")
    await produce(bus, t_in, [("h", contracts.encode(t_in, Item(id="h", n=1)))])
    attempts: list[int] = []

    async def handle(msg: Item, ctx: Any) -> list[Output]:
        attempts.append(ctx.attempt)
        if ctx.attempt == 1:
            await asyncio.Event().wait()  # hangs forever
        return [Output(t_out, msg)]

    runner = Runner(Cube(f"c-{uid}", (t_in,), (t_out,), handle), make_deps(bus, handler_timeout_s=0.4))
    await run_until(runner, lambda: runner.stats.processed >= 1)
    assert attempts == [1, 2]
    assert runner.stats.failed == 1


async def test_a_cube_declares_its_own_handler_timeout(bus: Bus, uid: str) -> None:
    """``Cube.handler_timeout_s`` replaces ``runtime.handler_timeout_s``, longer or shorter."""
    t_in, t_out = register(f"in-{uid}"), register(f"out-{uid}")
    await produce(bus, t_in, [("a", contracts.encode(t_in, Item(id="a", n=1)))])
    attempts: list[int] = []

    async def slow(msg: Item, ctx: Any) -> list[Output]:
        attempts.append(ctx.attempt)
        await asyncio.sleep(1.0)  # the work itself takes a second: over the runtime's limit, under the cube's
        return [Output(t_out, msg)]

    deps = make_deps(bus, handler_timeout_s=0.3)
    runner = Runner(Cube(f"c-{uid}", (t_in,), (t_out,), slow, handler_timeout_s=30.0), deps)
    assert runner.handler_timeout_s == 30.0
    await run_until(runner, lambda: runner.stats.processed >= 1)
    assert attempts == [1]
    assert runner.stats.failed == 0

    t_in2 = register(f"in2-{uid}")
    await produce(bus, t_in2, [("h", contracts.encode(t_in2, Item(id="h", n=1)))])
    hung: list[int] = []

    async def hang(msg: Item, ctx: Any) -> list[Output]:
        hung.append(ctx.attempt)
        if ctx.attempt == 1:
            await asyncio.Event().wait()  # hangs forever: the cube's 0.4 s cuts it off, not the runtime's 60 s
        return [Output(t_out, msg)]

    runner = Runner(
        Cube(f"c2-{uid}", (t_in2,), (t_out,), hang, handler_timeout_s=0.4), make_deps(bus, handler_timeout_s=60.0)
    )
    await run_until(runner, lambda: runner.stats.processed >= 1)
    assert hung == [1, 2]
    assert runner.stats.failed == 1


async def test_a_delayed_retry_does_not_stall_other_keys(bus: Bus, uid: str) -> None:
    """A message waiting 60 s for its retry must not hold up the messages behind it."""
    t_in, t_out = register(f"in-{uid}"), register(f"out-{uid}")
    records = [("slow", contracts.encode(t_in, Item(id="slow", n=0)))]
    records += [(f"k{i}", contracts.encode(t_in, Item(id=f"k{i}", n=i))) for i in range(1, 30)]
    await produce(bus, t_in, records)
    handled: list[str] = []

    async def handle(msg: Item, ctx: Any) -> list[Output]:
        if msg.id == "slow":
            raise TransientError("down for a minute", retry_after=60)
        handled.append(msg.id)
        return [Output(t_out, msg)]

    runner = Runner(
        Cube(f"c-{uid}", (t_in,), (t_out,), handle), make_deps(bus, backoff_base_s=60.0, backoff_cap_s=120.0)
    )
    await run_until(runner, lambda: runner.stats.processed >= 29, within_s=10)
    assert len(handled) == 29
    assert runner.stats.retried == 1
    retry = await drain(await bus.consumer(f"peek-{uid}", [contracts.retry_topic(f"c-{uid}")]), 1)
    assert float(header(retry[0].headers, "tc-not-before") or b"0") > 0
    assert header(retry[0].headers, "tc-attempt") == b"2"


async def test_health_server_serves_healthz_and_metrics() -> None:
    hs = HealthServer("127.0.0.1", 0, lambda: {"ok": True, "cubes": {}})
    port = await hs.start()
    try:
        async with aiohttp.ClientSession() as s:
            async with s.get(f"http://127.0.0.1:{port}/healthz") as r:
                assert r.status == 200
                assert (await r.json())["ok"] is True
            async with s.get(f"http://127.0.0.1:{port}/metrics") as r:
                text = await r.text()
                assert "turbocubes_processed_total" in text
                assert "turbocubes_handler_seconds" in text
    finally:
        await hs.stop()


def test_cli_lists_the_foundation_commands() -> None:
    help_text = build_parser().format_help()
    for command in ("up", "cube", "topics", "dlq", "schemas"):
        assert command in help_text


async def test_after_commit_hooks_run_once_outputs_are_durable_and_not_for_failed_messages(bus: Bus, uid: str) -> None:
    t_in, t_out = register(f"in-{uid}"), register(f"out-{uid}")
    cube = f"c-{uid}"
    await produce(
        bus, t_in, [("a", contracts.encode(t_in, Item(id="a", n=1))), ("b", contracts.encode(t_in, Item(id="b", n=2)))]
    )
    seen_at_hook: list[tuple[str, int]] = []

    async def handle(msg: Item, ctx: Any) -> list[Output]:
        async def hook() -> None:
            ends = await bus.end_offsets(t_out)
            seen_at_hook.append((msg.id, sum(ends.values())))

        ctx.after_commit(hook)
        if msg.id == "b":
            raise Reject("b is bad")
        return [Output(t_out, msg)]

    runner = Runner(Cube(cube, (t_in,), (t_out,), handle), make_deps(bus))
    await run_until(runner, lambda: bool(seen_at_hook) and runner.stats.dead_lettered == 1)
    assert seen_at_hook == [("a", 1)]  # a's output was already in the log; b's hook never ran


async def test_an_outage_is_waited_out_in_place_and_never_dead_lettered(bus: Bus, uid: str) -> None:
    """S3 / the database / the bus down for longer than the retry budget: no message reaches the DLQ."""
    from shared.errors import BlobUnavailable

    t_in, t_out = register(f"in-{uid}"), register(f"out-{uid}")
    await produce(bus, t_in, [(f"k{i}", contracts.encode(t_in, Item(id=f"k{i}", n=i))) for i in range(3)])
    down_for = 4  # calls; more than max_attempts, so the old behaviour would dead-letter
    calls = 0

    async def handle(msg: Item, ctx: Any) -> list[Output]:
        nonlocal calls
        calls += 1
        if calls <= down_for:
            raise BlobUnavailable("S3 is down")
        assert ctx.attempt == 1  # waited out in place: the attempt was not spent
        return [Output(t_out, msg)]

    runner = Runner(Cube(f"c-{uid}", (t_in,), (t_out,), handle, concurrency=1), make_deps(bus, max_attempts=2))
    await run_until(runner, lambda: runner.stats.processed >= 3, within_s=30)
    assert runner.stats.dead_lettered == 0
    assert runner.stats.retried == 0
    assert runner.stats.outage_waits == down_for


async def test_after_the_breaker_half_opens_every_waiting_lane_runs_again(bus: Bus, uid: str) -> None:
    """A bug fixed by this test: the first lane to wake cleared the breaker's state for all others."""
    t_in, t_out = register(f"in-{uid}"), register(f"out-{uid}")
    n = 40
    await produce(bus, t_in, [(f"k{i}", contracts.encode(t_in, Item(id=f"k{i}", n=i))) for i in range(n)])
    runner: Runner

    async def handle(msg: Item, ctx: Any) -> list[Output]:
        if runner.stats.breaker_trips == 0:
            raise Reject("a bug, until it is fixed")
        return [Output(t_out, msg)]

    deps = make_deps(bus, dlq_breaker_window=10, dlq_breaker_ratio=0.5, dlq_breaker_cooldown_s=0.3)
    runner = Runner(Cube(f"c-{uid}", (t_in,), (t_out,), handle, concurrency=4), deps)
    await run_until(runner, lambda: runner.stats.processed + runner.stats.dead_lettered >= n, within_s=20)
    assert runner.stats.breaker_trips == 1
    assert runner.stats.dead_lettered == 5
    assert runner.stats.processed == n - 5
    assert not runner.breaker_open


async def test_an_input_held_by_commit_after_is_committed_only_once_its_work_is_durable(bus: Bus, uid: str) -> None:
    """``Context.commit_after``: the handler returns at once, the commit waits for the future; a
    failed future makes the runner read the input again (the wordstat cube's batches)."""
    t_in = register(f"in-{uid}")
    await produce(bus, t_in, [(f"k{i}", contracts.encode(t_in, Item(id=f"k{i}", n=i))) for i in range(3)])
    loop = asyncio.get_running_loop()
    held: asyncio.Future[None] = loop.create_future()
    handled: list[int] = []
    returned = asyncio.Event()

    async def handle(msg: Item, ctx: Any) -> list[Output]:
        handled.append(msg.n)
        if len(handled) <= 3:  # the first delivery of each waits for `held`; a second one is durable at once
            ctx.commit_after(held)
        if len(handled) == 3:
            returned.set()
        return []

    runner = Runner(Cube(f"c-{uid}", (t_in,), (), handle, concurrency=4), make_deps(bus))
    task = asyncio.create_task(runner.run())

    async def committed() -> int:
        consumer = runner.consumer
        assert consumer is not None
        offsets = [await consumer.committed(tp) for tp in consumer.assignment() if tp.topic == t_in]
        return sum(o or 0 for o in offsets)

    try:
        await asyncio.wait_for(returned.wait(), 10)
        for _ in range(5):  # a few commit rounds (COMMIT_EVERY_S) pass, and none may commit
            await asyncio.sleep(0.05)
            assert await committed() == 0, "committed before its work was durable"
        held.set_exception(TransientError("the batch was not written"))
        deadline = loop.time() + 10
        while len(handled) < 6 or await committed() < 3:  # read again, redone, then committed
            assert loop.time() < deadline, f"not redone and committed: {handled}, {await committed()}"
            await asyncio.sleep(0.02)  # polling a condition, not synchronizing on time
    finally:
        runner.stop()
        await task
    assert sorted(handled) == [0, 0, 1, 1, 2, 2]
