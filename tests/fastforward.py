"""An event loop that runs its clock fast and counts how often it would have slept.

For tests of what an idle process does over a long span without waiting that long and without
timing anything: once ``fast`` is set, whenever the loop would block in its selector with nothing
ready, it does not wait but moves its clock (``loop.time()``) to the moment it would have woken
and goes on, and it counts that as one *wake-up* (a real process sleeps there, and the kernel
wakes it). Every wait on the loop's time (``asyncio.sleep``, timeouts, ``call_later``) is thus
served at once, in order; a wait on the wall clock (``time.time()``) or on a thread is not sped
up. Before ``fast`` is set the loop is an ordinary one (a test starts its subject at real speed).
"""

from __future__ import annotations

import asyncio
import selectors
from typing import Any

__all__ = ["FastForwardLoop"]


class _Selector(selectors.DefaultSelector):
    def __init__(self, owner: FastForwardLoop) -> None:
        super().__init__()
        self.owner = owner

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        owner = self.owner
        if not owner.fast or timeout == 0:
            return list(super().select(timeout))
        events = list(super().select(0))
        if events:
            return events
        if timeout is None:  # nothing scheduled at all: a real wait (for a thread or a socket)
            return list(super().select(0.01))
        owner.wakeups += 1
        owner.skipped_s += timeout
        return []


class FastForwardLoop(asyncio.SelectorEventLoop):
    """``fast``: skip the loop's sleeps; ``wakeups``: how many it skipped; ``skipped_s``: how long they were."""

    def __init__(self) -> None:
        self.fast = False
        self.wakeups = 0
        self.skipped_s = 0.0
        super().__init__(selector=_Selector(self))

    def time(self) -> float:
        return super().time() + self.skipped_s

    def counts(self) -> dict[str, Any]:
        return {"wakeups": self.wakeups, "skipped_s": self.skipped_s}
