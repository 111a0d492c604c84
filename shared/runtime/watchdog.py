"""Handlers that stop making progress are cut off (docs/architecture.md section 4: no message blocks a
partition forever).

A handler's limit counts from its start or from the last time it said it got on
(``Context.progress``; every ``Context.emit`` says so): a handler whose work grows
with its message -- a catalog of a million offers, loaded a batch at a time -- is
judged by its batches, not by a fixed total that a busy machine would overrun (a
100,000-offer catalog overran the parser's fixed 120 s on every attempt at ~2,700
offers per CPU-second; a 1,000,000-offer one would have spent its attempts and been
dead-lettered). One that goes quiet for longer than its limit is stuck, and is cut off.

One loop watches every running handler, which is far cheaper than a timeout
per message. A cut-off handler's task is cancelled and the runner turns that
into a ``TimeoutError`` (retriable: a delayed retry, then the DLQ). How long a
handler has been quiet is measured on the injected clock, so a test decides when
it has run too long; the loop looks on the event loop's own pace (a test's
``ManualClock`` that stands still must not stop it looking).
"""

from __future__ import annotations

import asyncio

from shared.clock import Clock

__all__ = ["Watchdog"]


class Watchdog:
    """``running`` maps each handler's task to its start or last progress (the runner fills it, ``beat``
    moves it on); ``run`` cuts off the quiet."""

    __slots__ = ("_busy", "_timed_out", "clock", "limit_s", "running")

    def __init__(self, limit_s: float, clock: Clock) -> None:
        self.limit_s = limit_s
        self.clock = clock
        self.running: dict[asyncio.Task[None], float] = {}
        self._timed_out: set[asyncio.Task[None]] = set()
        #: set by ``watch`` when a handler starts while none ran: ``run`` waits for it meanwhile
        self._busy = asyncio.Event()

    def watch(self, task: asyncio.Task[None]) -> float:
        """``task`` starts a handler now (the runner takes it out of ``running`` when it ends); its start."""
        running = self.running
        if not running:
            self._busy.set()  # looking begins again
        started = running[task] = self.clock.monotonic()
        return started

    def beat(self) -> None:
        """The handler running in the current task got on: its limit counts from now."""
        task = asyncio.current_task()
        if task is not None and task in self.running:
            self.running[task] = self.clock.monotonic()

    def cut_off(self, task: asyncio.Task[None]) -> bool:
        """Whether ``task``'s cancellation was this watchdog's (the mark is consumed)."""
        if task in self._timed_out:
            self._timed_out.discard(task)
            return True
        return False

    def look(self) -> None:
        """Cut off every handler quiet for longer than the limit (one look of ``run``)."""
        now = self.clock.monotonic()
        for task, since in list(self.running.items()):
            if now - since > self.limit_s and task not in self._timed_out:
                self._timed_out.add(task)
                task.cancel()

    async def run(self) -> None:
        while True:
            if not self.running:  # nothing to watch: no look until a handler starts (an idle runner sleeps)
                self._busy.clear()
                await self._busy.wait()
            # a quarter of the limit: a handler is cut off at most 25 % late (and at least once a second)
            await asyncio.sleep(min(1.0, self.limit_s / 4))
            self.look()
