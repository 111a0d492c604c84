"""Token buckets and the bulkhead: the pure arithmetic of throttling (docs/architecture.md section 6, "Per tenant, in").

Nothing here does I/O or reads the wall clock: time comes from an injected
``shared.clock.Clock``, so tests drive a ``ManualClock`` and assert exact
``Retry-After`` values instead of sleeping.

The bucket itself is ``shared/buckets.py`` (the sign-up limit counts with it too).
A ``TokenBucket`` holds up to ``capacity`` tokens and gains ``rate`` per
second. ``take(n)`` either takes ``n`` tokens (answer ``0.0``) or takes
nothing and answers how many seconds until ``n`` tokens are there. A request
larger than the whole bucket (one big upload against a small bytes/s limit)
would otherwise never pass, so it is let through when the bucket is *full*
and leaves the bucket in debt: the average rate still holds, the tenant just
waits longer afterwards.

Changing a bucket's rate or capacity (``reconfigure``) keeps the tokens it
has (clipped to the new capacity), so a runtime limit change applies to the
very next request without handing out a fresh burst.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from shared.buckets import TokenBucket, retry_after_header
from shared.clock import Clock

__all__ = ["Bulkhead", "RateState", "TenantBuckets", "TokenBucket", "retry_after_header"]


@dataclass(frozen=True, slots=True)
class RateState:
    """What the RateLimit headers say after a decision on the requests bucket."""

    allowed: bool
    #: seconds until the request would be allowed (0 when allowed)
    retry_after: float
    #: the policy: quota (the burst) per window (seconds to refill it from empty)
    quota: int
    window: float
    #: whole tokens left and seconds until the bucket is full again
    remaining: int
    reset: float

    def headers(self) -> dict[str, str]:
        """The IETF draft headers (draft-ietf-httpapi-ratelimit-headers): one policy named "default"."""
        out = {
            "RateLimit-Policy": f'"default";q={self.quota};w={max(1, math.ceil(self.window))}',
            "RateLimit": f'"default";r={self.remaining};t={math.ceil(self.reset - 1e-9)}',
        }
        if not self.allowed:
            out["Retry-After"] = retry_after_header(self.retry_after)
        return out


class TenantBuckets:
    """One tenant's two buckets: requests (rps, burst) and upload bytes (bytes/s, one second of burst)."""

    __slots__ = ("bytes", "requests")

    def __init__(self, rps: float, burst: int, bytes_per_s: float, clock: Clock) -> None:
        self.requests = TokenBucket(rps, burst, clock)
        # one second's worth of bytes; an upload bigger than that passes on a full bucket (see module doc)
        self.bytes = TokenBucket(bytes_per_s, bytes_per_s, clock)

    def reconfigure(self, rps: float, burst: int, bytes_per_s: float) -> None:
        self.requests.reconfigure(rps, burst)
        self.bytes.reconfigure(bytes_per_s, bytes_per_s)

    def current(self) -> RateState:
        """The requests bucket's state, taking nothing (the headers of a refusal made elsewhere)."""
        req = self.requests
        req._refill()
        return RateState(
            allowed=True,
            retry_after=0.0,
            quota=int(req.capacity),
            window=req.capacity / req.rate,
            remaining=max(0, math.floor(req.tokens)),
            reset=max(0.0, (req.capacity - req.tokens) / req.rate),
        )

    def admit(self, size: int = 0) -> RateState:
        """Decide one request carrying ``size`` declared body bytes.

        The bytes bucket is asked first and only a request that passes both
        buckets takes from either (a rejected request must not eat the
        tenant's byte budget, nor a byte rejection its request budget).
        This is the hot path of every rejection: each bucket is refilled once.
        """
        req, byt = self.requests, self.bytes
        req._refill()
        wait = 0.0
        if size > 0:
            byt._refill()
            need = min(float(size), byt.capacity)
            if byt.tokens < need:
                wait = (need - byt.tokens) / byt.rate
        if wait == 0.0:
            if req.tokens >= 1.0:
                req.tokens -= 1.0
                byt.tokens -= size
            else:
                wait = (1.0 - req.tokens) / req.rate
        return RateState(
            allowed=wait == 0.0,
            retry_after=wait,
            quota=int(req.capacity),
            window=req.capacity / req.rate,
            remaining=max(0, math.floor(req.tokens)),
            reset=max(0.0, (req.capacity - req.tokens) / req.rate),
        )


class Bulkhead:
    """The global concurrency cap, and each tenant's share of it.

    At most ``limit`` requests are in the handlers at once, and at most ``tenant_limit`` of them
    for any one tenant: ``max(1, floor(limit * share))``. One busy tenant gets its share and the
    others still find room -- before this, one tenant's burst filled the bulkhead and every other
    tenant got 503. With the default share of a quarter, four tenants at
    their cap together fill it; ``api.concurrency`` is sized for the tenants expected at peak.

    It never queues: a request over either cap is refused at once, because queueing in front of a
    saturated service only adds latency to every request. The global slot is taken first, before
    authentication (a refusal under overload costs nothing); the tenant's once the token says who.
    Per-tenant counts are dropped at zero, so the table holds only tenants with requests in flight.
    """

    __slots__ = ("_tenants", "in_flight", "limit", "tenant_limit")

    def __init__(self, limit: int, share: float = 1.0) -> None:
        if limit < 1 or not 0 < share <= 1:
            raise ValueError(f"a bulkhead needs limit >= 1 and 0 < share <= 1, got {limit=} {share=}")
        self.limit = limit
        self.tenant_limit = max(1, math.floor(limit * share))
        self.in_flight = 0
        self._tenants: dict[str, int] = {}

    def try_enter(self) -> bool:
        if self.in_flight >= self.limit:
            return False
        self.in_flight += 1
        return True

    def leave(self) -> None:
        self.in_flight -= 1

    def try_enter_tenant(self, tenant_id: str) -> bool:
        """Take one of the tenant's slots (the caller holds a global one already)."""
        held = self._tenants.get(tenant_id, 0)
        if held >= self.tenant_limit:
            return False
        self._tenants[tenant_id] = held + 1
        return True

    def leave_tenant(self, tenant_id: str) -> None:
        held = self._tenants.get(tenant_id, 0) - 1
        if held > 0:
            self._tenants[tenant_id] = held
        else:
            self._tenants.pop(tenant_id, None)

    def tenant_in_flight(self, tenant_id: str) -> int:
        return self._tenants.get(tenant_id, 0)
