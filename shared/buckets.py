"""A token bucket and ``Retry-After`` in whole seconds: the arithmetic of every rate limit (docs/architecture.md
section 6).

The API's per-tenant throttling (``cubes/api/throttle.py``) and the sign-up limit the API and the
console share (``shared/webmaster/signup.py``) count with these. Nothing here does I/O or reads the wall
clock: time comes from an injected ``shared.clock.Clock``.

A ``TokenBucket`` holds up to ``capacity`` tokens and gains ``rate`` per second. ``take(n)`` either
takes ``n`` tokens (answer ``0.0``) or takes nothing and answers how many seconds until ``n`` tokens
are there. A request larger than the whole bucket (one big upload against a small bytes/s limit)
would otherwise never pass, so it is let through when the bucket is *full* and leaves the bucket in
debt: the average rate still holds, the tenant just waits longer afterwards. ``reconfigure`` keeps
the tokens it has (clipped to the new capacity), so a runtime limit change applies to the very next
request without handing out a fresh burst.
"""

from __future__ import annotations

import math

from shared.clock import Clock

__all__ = ["TokenBucket", "retry_after_header"]


def retry_after_header(seconds: float) -> str:
    """``Retry-After`` is whole seconds (RFC 9110); round up so a client that obeys it succeeds."""
    return str(max(1, math.ceil(seconds - 1e-9)))


class TokenBucket:
    """``capacity`` tokens, refilled at ``rate`` per second, on an injected clock."""

    __slots__ = ("_clock", "_stamp", "capacity", "rate", "tokens")

    def __init__(self, rate: float, capacity: float, clock: Clock) -> None:
        if rate <= 0 or capacity <= 0:
            raise ValueError(f"a bucket needs rate > 0 and capacity > 0, got {rate=} {capacity=}")
        self.rate = float(rate)
        self.capacity = float(capacity)
        self.tokens = float(capacity)  # a new tenant starts with its full burst
        self._clock = clock
        self._stamp = clock.monotonic()

    def _refill(self) -> None:
        now = self._clock.monotonic()
        elapsed = now - self._stamp
        if elapsed > 0:
            self.tokens = min(self.capacity, self.tokens + elapsed * self.rate)
        self._stamp = now

    def take(self, n: float = 1.0) -> float:
        """Take ``n`` tokens -> 0.0, or take none -> seconds until they would be there."""
        self._refill()
        need = min(n, self.capacity)  # larger than the bucket: wait for a full bucket, then go in debt
        if self.tokens >= need:
            self.tokens -= n
            return 0.0
        return (need - self.tokens) / self.rate

    def charge(self, n: float) -> None:
        """Take ``n`` tokens unconditionally (a body whose size was only known after reading it)."""
        self._refill()
        self.tokens -= n

    def peek(self) -> float:
        """Tokens now (may be negative while in debt)."""
        self._refill()
        return self.tokens

    def time_to_full(self) -> float:
        self._refill()
        return max(0.0, (self.capacity - self.tokens) / self.rate)

    def reconfigure(self, rate: float, capacity: float) -> None:
        """New limits from the next call on; tokens are kept (clipped), so no free burst is handed out."""
        if rate <= 0 or capacity <= 0:
            raise ValueError(f"a bucket needs rate > 0 and capacity > 0, got {rate=} {capacity=}")
        self._refill()
        self.rate = float(rate)
        self.capacity = float(capacity)
        self.tokens = min(self.tokens, self.capacity)
