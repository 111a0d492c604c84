"""Injected time (docs/conventions.md rule 5): tests drive a ``ManualClock`` and assert exact spacing.

``clock.now()`` is the one way code reads the wall clock as a datetime (timezone-aware, UTC), and
``at(ts)`` the one way a POSIX timestamp becomes one. Whatever stamps a message, a row or a page
asks its injected clock, so a test that moves the clock moves every stamp; a command line tool with
nothing injected asks ``SystemClock()``.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # asyncio is imported where a clock sleeps: a command that only stamps times runs no loop
    import asyncio

__all__ = ["Clock", "ManualClock", "SystemClock", "at", "sleep_unless"]


def at(ts: float) -> datetime:
    """The UTC datetime of the POSIX timestamp ``ts``."""
    return datetime.fromtimestamp(ts, UTC)


class Clock(Protocol):
    def monotonic(self) -> float: ...
    def time(self) -> float: ...
    def now(self) -> datetime:
        """``time()`` as a timezone-aware UTC datetime."""
        ...

    async def sleep(self, seconds: float) -> None: ...


async def sleep_unless(clock: Clock, seconds: float, stop: asyncio.Event) -> bool:
    """Sleep ``seconds`` on ``clock``, or until ``stop`` is set; True when it was (a loop's pause that a
    stop ends at once, so that the loop's work in progress is never what a stop has to cut)."""
    import asyncio

    if stop.is_set():
        return True
    pause = asyncio.ensure_future(clock.sleep(seconds))
    stopped = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait((pause, stopped), return_when=asyncio.FIRST_COMPLETED)
    finally:
        pause.cancel()
        stopped.cancel()
    return stop.is_set()


class SystemClock:
    """The real clock."""

    def monotonic(self) -> float:
        return time.monotonic()

    def time(self) -> float:
        return time.time()

    def now(self) -> datetime:
        return datetime.now(UTC)

    async def sleep(self, seconds: float) -> None:
        import asyncio

        await asyncio.sleep(max(0.0, seconds))


class ManualClock:
    """A clock that only moves when told to; ``sleep`` waits until ``advance`` passes its deadline."""

    def __init__(self, start: float = 1_000_000.0) -> None:
        self._now = start
        self._waiters: list[tuple[float, asyncio.Future[None]]] = []

    def monotonic(self) -> float:
        return self._now

    def time(self) -> float:
        return self._now

    def now(self) -> datetime:
        return at(self._now)

    async def sleep(self, seconds: float) -> None:
        import asyncio

        if seconds <= 0:
            await asyncio.sleep(0)
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((self._now + seconds, fut))
        await fut

    def advance(self, seconds: float) -> None:
        self._now += seconds
        due = [w for w in self._waiters if w[0] <= self._now]
        self._waiters = [w for w in self._waiters if w[0] > self._now]
        for _, fut in due:
            if not fut.done():
                fut.set_result(None)
