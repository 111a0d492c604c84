"""The runner's waits that are paces, not a message's behaviour (docs/architecture.md section 4, runtime).

Two waits, each ended early by a stop: the intake's wait for one of its own wake-up events
(room in the lanes, a record finished), re-checked at least every ``WAKE_EVERY_S``; and the wait
after a bus failure, doubling from ``BUS_BACKOFF_FIRST_S`` to ``BUS_BACKOFF_CAP_S``. Both are on
the event loop's time (``runner.py``'s docstring, "Time"): they must go on, and end, while a
test's clock stands still.
"""

from __future__ import annotations

import asyncio
import contextlib

from shared.outages import OUTAGES
from shared.runtime.retry import next_backoff_s

__all__ = ["BUS_BACKOFF_CAP_S", "BUS_BACKOFF_FIRST_S", "IDLE_POLL_S", "WAKE_EVERY_S", "bus_backoff", "wake_on"]

#: a bus failure is waited out: first wait, and the cap of the doubling waits (seconds)
BUS_BACKOFF_FIRST_S = 1.0
BUS_BACKOFF_CAP_S = 30.0
#: the intake re-checks its state at least this often while it waits for room (a safety net:
#: every change it waits for also wakes it)
WAKE_EVERY_S = 1.0
#: how long an intake with nothing in flight waits in one poll: records end it at once, and so does a
#: stop (``Consumer.wakeup``); a busy intake polls for 50 ms. 0.2 s made nine idle cubes poll 45 times
#: a second, most of an idle ``turbocubes up``'s wake-ups
IDLE_POLL_S = 1.0


async def wake_on(event: asyncio.Event, stop: asyncio.Event) -> None:
    """Wait for a wake-up ``event`` (cleared after), a ``stop``, or ``WAKE_EVERY_S``."""
    stopped = asyncio.ensure_future(stop.wait())
    waiter = asyncio.ensure_future(event.wait())
    await asyncio.wait((stopped, waiter), timeout=WAKE_EVERY_S, return_when=asyncio.FIRST_COMPLETED)
    stopped.cancel()
    waiter.cancel()
    event.clear()


async def bus_backoff(cube: str, what: str, exc: BaseException, backoff: float, stop: asyncio.Event) -> float:
    """Record that ``what`` failed on the bus and wait the next backoff after ``backoff`` (or until
    ``stop``); returns it."""
    backoff = next_backoff_s(backoff, BUS_BACKOFF_FIRST_S, BUS_BACKOFF_CAP_S)
    # the bus is down: told once per outage (shared/outages.py); the commit that ends it says so
    OUTAGES.down("bus", f"{cube}: {what}: {type(exc).__name__}: {exc}")
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), backoff)
    return backoff
