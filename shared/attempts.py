"""Failed attempts per client address: how guessing is slowed at every door (docs/architecture.md section 6).

The console's sign-in form and the API's bearer tokens both count the failures of each client
address as a leaky bucket on the injected clock: ``failures`` in a row are free, then the address
waits ``refill_s`` per further try. Tokens carry 256 random bits, so guessing one is hopeless
anyway; the count keeps a scanner from turning every guess into a store lookup, and makes a
flood of wrong tokens cheap to refuse (no lookup while the address waits).
"""

from __future__ import annotations

from shared.clock import Clock

__all__ = ["FailedAttempts"]

#: addresses remembered before the table is emptied: bounds memory under a flood of addresses
_ADDRESSES_MAX = 50_000


class FailedAttempts:
    """Failures per client address, as a leaky count on the injected clock."""

    def __init__(self, clock: Clock, *, failures: int, refill_s: float) -> None:
        self._clock = clock
        self._free = failures
        self._refill_s = refill_s
        self._failures: dict[str, tuple[float, float]] = {}  # address -> (count, at)

    def _level(self, address: str) -> float:
        count, at = self._failures.get(address, (0.0, 0.0))
        return max(0.0, count - (self._clock.monotonic() - at) / self._refill_s)

    def wait_s(self, address: str) -> float:
        """0 when ``address`` may try now, else seconds to wait."""
        over = self._level(address) - (self._free - 1)
        return max(0.0, over * self._refill_s)

    def failed(self, address: str) -> None:
        if len(self._failures) >= _ADDRESSES_MAX:
            self._failures.clear()
        self._failures[address] = (self._level(address) + 1.0, self._clock.monotonic())
