"""Timers: a cube's periodic work, its outputs published like a handler's (docs/architecture.md section 4;
docs/conventions.md rule 2).

One round (``run_round``), in this order:

1. the timer runs with a fresh ``TimerContext`` and returns its outputs (it
   may ``emit`` some on the way, each batch acknowledged before it goes on,
   as a handler may);
2. the runtime validates and sends them and waits until every one is
   acknowledged (``publish.py``);
3. then the round's ``after_commit`` hooks run (the delay cube confirms the
   documents it released) — or, when step 1 or 2 failed, its ``on_failure``
   hooks (the scheduler puts back the next-fetch times it moved ahead), and the
   failure is logged; the next round comes anyway.

Rounds follow each other ``interval_s`` apart on the injected clock (a test's
``ManualClock`` decides when the next one runs); a stop ends the wait at once,
and a round in progress may finish (the runner gives it the shutdown grace).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence

from shared.clock import Clock, sleep_unless
from shared.outages import OUTAGES, dependency_of
from shared.runtime.commits import run_hooks
from shared.runtime.cube import Output, Timer, TimerContext, TimerFn

__all__ = ["run_round", "run_timer"]

log = logging.getLogger("turbocubes.runtime")

#: publish a round's outputs and wait for their acknowledgement (``publish_outputs``, or a test's fake)
PublishRound = Callable[[Sequence[Output]], Awaitable[object]]


async def run_round(cube: str, name: str, fn: TimerFn, publish: PublishRound) -> int:
    """One round of a timer (steps 1-3 of the module docstring); how many outputs were published.

    Raises what failed, after the ``on_failure`` hooks ran.
    """
    emitted = 0

    async def emit(outputs: Sequence[Output]) -> int:
        nonlocal emitted
        await publish(outputs)
        emitted += len(outputs)
        return len(outputs)

    ctx = TimerContext(name, emitter=emit)
    try:
        outputs = await fn(ctx)
        if outputs:
            await publish(outputs)
    except Exception:
        if ctx.failed_hooks:
            await run_hooks(cube, ctx.failed_hooks)
        raise
    if ctx.committed_hooks:
        await run_hooks(cube, ctx.committed_hooks)
    return emitted + len(outputs)


async def run_timer(cube: str, timer: Timer, publish: PublishRound, clock: Clock, stop: asyncio.Event) -> int:
    """Rounds until ``stop``; how many outputs went out in all."""
    total = 0
    waited: str | None = None  # the dependency the last round found down
    while not stop.is_set():
        try:
            total += await run_round(cube, timer.name, timer.fn, publish)
        except Exception as exc:
            if OUTAGES.met(exc, f"{cube}: timer {timer.name}"):  # told once, not every round
                waited = dependency_of(exc)
            else:
                log.exception("%s: timer %s failed; it runs again in %.1fs", cube, timer.name, timer.interval_s)
        else:
            if waited is not None:
                OUTAGES.up(waited)
                waited = None
        await sleep_unless(clock, timer.interval_s, stop)
    return total
