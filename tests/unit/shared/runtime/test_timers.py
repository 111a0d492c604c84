"""Timers return outputs like handlers: published and acknowledged, then ``after_commit``;
``on_failure`` when the round failed; the rounds paced by the injected clock."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from shared.bus.base import Bus
from shared.bus.sqlite import SqliteBus
from shared.clock import ManualClock
from shared.errors import BusUnavailable
from shared.runtime import Cube, Output, Runner
from shared.runtime.cube import Timer, TimerContext
from shared.runtime.timers import run_round
from tests.contract.bus_contract import Item, make_deps, register

WAIT_S = 15.0


@pytest.fixture
async def bus(tmp_path: Path) -> AsyncIterator[Bus]:
    b = SqliteBus(f"sqlite:///{tmp_path}/bus.db")
    await b.start()
    yield b
    await b.close()


async def test_a_timers_outputs_are_durable_before_its_after_commit_hooks_run(bus: Bus, uid: str) -> None:
    """The runner publishes what the timer returns; the hook sees it in the log already."""
    t_out = register(f"out-{uid}")
    clock = ManualClock()
    seen: list[int] = []
    rounds = asyncio.Queue[int]()
    calls: list[int] = []

    async def sweep(ctx: TimerContext) -> list[Output]:
        n = len(calls)
        calls.append(n)

        async def confirm() -> None:
            seen.append(sum((await bus.end_offsets(t_out)).values()))
            rounds.put_nowait(n)

        ctx.after_commit(confirm)
        return [Output(t_out, Item(id=f"i{n}", n=n))]

    deps = make_deps(bus)
    deps.clock = clock
    runner = Runner(Cube(f"c-{uid}", (), (t_out,), timers=(Timer("sweep", 60.0, sweep),)), deps)
    task = asyncio.create_task(runner.run())
    try:
        assert await asyncio.wait_for(rounds.get(), WAIT_S) == 0  # the first round runs at start
        assert seen == [1]  # its one output was in the log when the hook ran
        assert rounds.empty()  # the next round waits for the clock, not for the wall
        clock.advance(60.0)
        assert await asyncio.wait_for(rounds.get(), WAIT_S) == 1
        assert seen == [1, 2]
    finally:
        runner.stop()
        await asyncio.wait_for(task, WAIT_S)


async def test_a_failed_publish_runs_the_on_failure_hooks_and_not_the_after_commit_ones() -> None:
    happened: list[str] = []

    async def tick(ctx: TimerContext) -> Sequence[Output]:
        async def put_back() -> None:
            happened.append("put back")

        async def confirm() -> None:
            happened.append("confirmed")

        ctx.on_failure(put_back)
        ctx.after_commit(confirm)
        return [Output("crawl.requests", object())]  # type: ignore[arg-type]

    async def refused(outputs: Sequence[Output]) -> None:
        raise BusUnavailable("broker down")

    with pytest.raises(BusUnavailable):
        await run_round("c", "tick", tick, refused)
    assert happened == ["put back"]


async def test_a_round_that_fails_itself_runs_its_on_failure_hooks_and_publishes_nothing() -> None:
    happened: list[str] = []
    published: list[Output] = []

    async def tick(ctx: TimerContext) -> Sequence[Output]:
        async def put_back() -> None:
            happened.append("put back")

        ctx.on_failure(put_back)
        raise RuntimeError("the store went away half-way")

    async def publish(outputs: Sequence[Output]) -> None:
        published.extend(outputs)

    with pytest.raises(RuntimeError):
        await run_round("c", "tick", tick, publish)
    assert happened == ["put back"]
    assert published == []
