"""The runner on an injected ``ManualClock``: a retry's due time and a handler's limit are the clock's.

Before the runner took its time from ``deps.clock`` these failed: the retry's
``tc-not-before`` was the wall clock's plus the delay (and the retry waited a
real minute), and a handler was cut off by the wall clock alone.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from shared import contracts
from shared.bus.base import Bus, header
from shared.bus.sqlite import SqliteBus
from shared.clock import ManualClock
from shared.errors import TransientError
from shared.runtime import HEADERS, Cube, Output, Runner
from tests.contract.bus_contract import Item, drain, make_deps, produce, register

T0 = 1_700_000_000.0
WAIT_S = 15.0


@pytest.fixture
async def bus(tmp_path: Path) -> AsyncIterator[Bus]:
    b = SqliteBus(f"sqlite:///{tmp_path}/bus.db")
    await b.start()
    yield b
    await b.close()


async def until(cond: Callable[[], bool], what: str) -> None:
    """Poll ``cond`` (a state, not a time) under a real-time bound."""
    deadline = time.monotonic() + WAIT_S
    while not cond():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {WAIT_S}s: {what}")
        await asyncio.sleep(0.01)


async def settle() -> None:
    """Let every task that is ready run (a few loop turns; no time passes on the test's clock)."""
    for _ in range(50):
        await asyncio.sleep(0)


async def test_a_delayed_retry_comes_due_on_the_injected_clock(bus: Bus, uid: str) -> None:
    t_in, t_out = register(f"in-{uid}"), register(f"out-{uid}")
    cube = f"c-{uid}"
    await produce(bus, t_in, [("x", contracts.encode(t_in, Item(id="x", n=1)))])
    clock = ManualClock(start=T0)
    attempts: list[tuple[int, float]] = []

    async def handle(msg: Item, ctx: Any) -> list[Output]:
        attempts.append((ctx.attempt, clock.time()))
        if ctx.attempt == 1:
            raise TransientError("the partner is down for a minute", retry_after=60)
        return [Output(t_out, msg)]

    deps = make_deps(bus, backoff_base_s=1.0, backoff_cap_s=120.0)
    deps.clock = clock
    runner = Runner(Cube(cube, (t_in,), (t_out,), handle), deps)
    task = asyncio.create_task(runner.run())
    try:
        [retry] = await drain(await bus.consumer(f"peek-{uid}", [contracts.retry_topic(cube)]), 1)
        # the delay is retry_after (60 s, over the 1 s backoff) from the clock's now, not the wall's
        assert header(retry.headers, HEADERS.not_before) == repr(T0 + 60.0).encode()
        assert header(retry.headers, HEADERS.first_failure) == repr(T0).encode()
        assert header(retry.headers, HEADERS.attempt) == b"2"

        await until(lambda: runner.describe().get("held") == 1, "the retry read back and held")
        clock.advance(59.9)
        await settle()
        assert [a for a, _ in attempts] == [1]  # not due yet
        assert runner.describe()["held"] == 1

        clock.advance(0.1)
        await until(lambda: runner.stats.processed == 1, "the retry handled once due")
        assert attempts == [(1, T0), (2, T0 + 60.0)]
        assert runner.stats.retried == 1
    finally:
        runner.stop()
        await asyncio.wait_for(task, WAIT_S)


async def test_a_handler_is_cut_off_when_the_injected_clock_passes_its_limit(bus: Bus, uid: str) -> None:
    t_in, t_out = register(f"in-{uid}"), register(f"out-{uid}")
    await produce(bus, t_in, [("h", contracts.encode(t_in, Item(id="h", n=1)))])
    clock = ManualClock(start=T0)
    entered = asyncio.Event()
    attempts: list[int] = []

    async def handle(msg: Item, ctx: Any) -> list[Output]:
        attempts.append(ctx.attempt)
        if ctx.attempt == 1:
            entered.set()
            await asyncio.Event().wait()  # hangs until cut off
        return [Output(t_out, msg)]

    # a limit no test run reaches on the wall clock: only the injected clock can pass it
    deps = make_deps(bus, handler_timeout_s=3600.0, backoff_base_s=0.5, backoff_cap_s=0.5)
    deps.clock = clock
    runner = Runner(Cube(f"c-{uid}", (t_in,), (t_out,), handle), deps)
    task = asyncio.create_task(runner.run())
    try:
        await asyncio.wait_for(entered.wait(), WAIT_S)
        clock.advance(3601.0)
        await until(lambda: runner.stats.failed == 1, "the hanging handler cut off")
        assert runner.stats.retried == 1
        clock.advance(1.0)  # past the retry's backoff (at most 0.5 s on the clock)
        await until(lambda: runner.stats.processed == 1, "the retry handled")
        assert attempts == [1, 2]
    finally:
        runner.stop()
        await asyncio.wait_for(task, WAIT_S)
