"""The watchdog judges a handler by its progress: quiet for longer than the limit is cut off, a handler
that says it gets on is not, whatever its total (docs/architecture.md section 4)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from shared.clock import ManualClock
from shared.runtime.cube import Context
from shared.runtime.watchdog import Watchdog


async def test_a_handler_that_gets_on_runs_past_the_limit_and_one_that_goes_quiet_is_cut_off() -> None:
    clock = ManualClock()
    dog = Watchdog(10.0, clock)
    step = asyncio.Event()
    steps_done = 0

    async def handler() -> None:
        nonlocal steps_done
        while True:
            await step.wait()
            step.clear()
            dog.beat()  # what Context.progress does, in the handler's own task
            steps_done += 1

    task = asyncio.ensure_future(handler())
    dog.running[task] = clock.monotonic()
    for _ in range(10):  # 80 s in all, 8 s a step: never quiet for 10 s
        clock.advance(8.0)
        dog.look()
        step.set()
        while step.is_set():  # the handler takes its step  # noqa: ASYNC110 (a state to reach, no event)
            await asyncio.sleep(0)
    assert steps_done == 10
    assert not task.cancelled()
    assert not dog.cut_off(task)
    clock.advance(10.5)  # quiet for longer than the limit
    dog.look()
    await asyncio.wait([task], timeout=5)
    assert task.cancelled()
    assert dog.cut_off(task)  # the cancellation was the watchdog's


async def test_progress_and_emit_tell_the_runtime() -> None:
    heard: list[str] = []

    async def emitter(outputs: Any) -> int:
        heard.append("emit")
        return 0

    ctx = Context("t", 0, 0, None, 1, datetime.now(UTC), emitter=emitter, progressed=lambda: heard.append("progress"))
    ctx.progress()
    await ctx.emit([])
    assert heard == ["progress", "emit", "progress"]  # an emitted batch counts as progress, once acknowledged
    Context("t", 0, 0, None, 1, datetime.now(UTC)).progress()  # outside a runner: nothing to tell, no error
