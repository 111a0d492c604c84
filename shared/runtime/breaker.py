"""The DLQ storm breaker (docs/architecture.md section 4, runtime).

When more than ``ratio`` of the last ``window`` outcomes were dead letters, the
cube is not looking at bad data but at a bug or an outage: instead of emptying a
whole topic into its DLQ it stops. The breaker *opens* (the runner pauses its
inputs; the message that would have been dead-lettered waits), and after
``cooldown_s`` turns *half-open*: waiting messages run again, and the first
outcome decides — a success closes the breaker, another dead letter re-opens it.
"""

from __future__ import annotations

import asyncio
from collections import deque
from enum import StrEnum

__all__ = ["Breaker", "BreakerState"]


class BreakerState(StrEnum):
    closed = "closed"
    open = "open"
    half_open = "half_open"


class Breaker:
    def __init__(self, window: int, ratio: float, cooldown_s: float) -> None:
        self.window = window
        self.ratio = ratio
        self.cooldown_s = cooldown_s
        self.state = BreakerState.closed
        self.trips = 0
        self._outcomes: deque[bool] = deque(maxlen=window)
        self._dead = 0
        #: set whenever the breaker is not open: waiting messages may run again
        self.passable = asyncio.Event()
        self.passable.set()

    def success(self) -> None:
        self._push(False)
        if self.state is BreakerState.half_open:
            self.state = BreakerState.closed

    def dead_letter_allowed(self) -> bool:
        """Whether one more dead letter may go out; False means: trip (or stay tripped) instead."""
        if self.state is BreakerState.open:
            return False
        if self.state is BreakerState.half_open:
            return False
        return self._dead + 1 <= self.ratio * self.window

    def dead_lettered(self) -> None:
        self._push(True)

    def trip(self) -> bool:
        """Open the breaker; True if it was not open already."""
        if self.state is BreakerState.open:
            return False
        self.state = BreakerState.open
        self.trips += 1
        self.passable.clear()
        return True

    def half_open(self) -> None:
        self.state = BreakerState.half_open
        self._outcomes.clear()
        self._dead = 0
        self.passable.set()

    def _push(self, dead: bool) -> None:
        if len(self._outcomes) == self._outcomes.maxlen and self._outcomes[0]:
            self._dead -= 1
        self._outcomes.append(dead)
        if dead:
            self._dead += 1
