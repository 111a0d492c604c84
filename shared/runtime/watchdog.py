"""Handlers that run past their limit are cut off (docs/architecture.md section 4: no message blocks a partition
forever).

One loop watches every running handler, which is far cheaper than a timeout
per message. A cut-off handler's task is cancelled and the runner turns that
into a ``TimeoutError`` (retriable: a delayed retry, then the DLQ). How long a
handler has run is measured on the injected clock, so a test decides when it
has run too long; the loop looks on the event loop's own pace (a test's
``ManualClock`` that stands still must not stop it looking).
"""

from __future__ import annotations

import asyncio

from shared.clock import Clock

__all__ = ["Watchdog"]


class Watchdog:
    """``running`` maps each handler's task to its start (the runner fills it); ``run`` cuts off the late."""

    __slots__ = ("_timed_out", "clock", "limit_s", "running")

    def __init__(self, limit_s: float, clock: Clock) -> None:
        self.limit_s = limit_s
        self.clock = clock
        self.running: dict[asyncio.Task[None], float] = {}
        self._timed_out: set[asyncio.Task[None]] = set()

    def cut_off(self, task: asyncio.Task[None]) -> bool:
        """Whether ``task``'s cancellation was this watchdog's (the mark is consumed)."""
        if task in self._timed_out:
            self._timed_out.discard(task)
            return True
        return False

    async def run(self) -> None:
        limit = self.limit_s
        clock = self.clock
        while True:
            # a quarter of the limit: a handler is cut off at most 25 % late (and at least once a second)
            await asyncio.sleep(min(1.0, limit / 4))
            now = clock.monotonic()
            for task, started in list(self.running.items()):
                if now - started > limit and task not in self._timed_out:
                    self._timed_out.add(task)
                    task.cancel()
