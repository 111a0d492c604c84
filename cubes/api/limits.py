"""Per-tenant limits: stored, cached in the instance, changed at run time (docs/architecture.md section 6).

The source of truth is the ``TenantStore`` (``get_limits`` / ``set_limits``);
``None`` there means the configured defaults (``settings.api.tenant_*``).
Each API instance keeps one ``TenantBuckets`` per tenant it has seen.

A change through the admin API on *this* instance reconfigures the tenant's
buckets at once. Other instances (and changes made straight in the store)
catch up within ``REFRESH_S``: a tenant's stored limits are re-read when
its cached copy is older than that, on its next request.

Limits are per instance: with ``settings.api.instances = N`` every instance
enforces ``1/N`` of the stored rates and bursts (see ``cubes/api/README.md``).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from cubes.api.throttle import TenantBuckets
from shared.clock import Clock
from shared.config import ApiConfig
from shared.stores import TenantLimits, TenantStore

__all__ = ["REFRESH_S", "Limits"]

#: how stale an instance's copy of a tenant's stored limits may get. A few seconds keeps the
#: store read off the hot path (one read per tenant per REFRESH_S) while a change made on
#: another instance still lands quickly.
REFRESH_S = 5.0


@dataclass(slots=True)
class _Entry:
    buckets: TenantBuckets
    limits: TenantLimits  # the stored (or default) limits, before the split across instances
    loaded_at: float


class Limits:
    """Tenant id -> its buckets, built from the stored limits or the defaults."""

    def __init__(self, config: ApiConfig, tenants: TenantStore, clock: Clock) -> None:
        self._config = config
        self._tenants = tenants
        self._clock = clock
        self._entries: dict[str, _Entry] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self.defaults = TenantLimits(
            rps=config.tenant_rps, burst=config.tenant_burst, bytes_per_s=config.tenant_bytes_per_s
        )

    def _share(self, limits: TenantLimits) -> tuple[float, int, float]:
        """This instance's part of ``limits`` (the whole of it with one instance)."""
        n = max(1, self._config.instances)
        # a burst below 1 would refuse every request: each instance keeps at least one
        return limits.rps / n, max(1, limits.burst // n), limits.bytes_per_s / n

    async def _load(self, tenant_id: str) -> TenantLimits:
        stored = await self._tenants.get_limits(tenant_id)
        return stored if stored is not None else self.defaults

    def _install(self, tenant_id: str, limits: TenantLimits) -> TenantBuckets:
        rps, burst, bps = self._share(limits)
        entry = self._entries.get(tenant_id)
        if entry is None:
            entry = _Entry(TenantBuckets(rps, burst, bps, self._clock), limits, self._clock.monotonic())
            self._entries[tenant_id] = entry
        else:
            if entry.limits != limits:
                entry.buckets.reconfigure(rps, burst, bps)
            entry.limits = limits
            entry.loaded_at = self._clock.monotonic()
        return entry.buckets

    async def buckets(self, tenant_id: str) -> TenantBuckets:
        """The tenant's buckets; reads the store only on first sight and every ``REFRESH_S``."""
        entry = self._entries.get(tenant_id)
        if entry is not None and self._clock.monotonic() - entry.loaded_at < REFRESH_S:
            return entry.buckets  # the hot path: no await, no I/O
        lock = self._locks.setdefault(tenant_id, asyncio.Lock())
        async with lock:
            entry = self._entries.get(tenant_id)
            if entry is not None and self._clock.monotonic() - entry.loaded_at < REFRESH_S:
                return entry.buckets
            return self._install(tenant_id, await self._load(tenant_id))

    async def get(self, tenant_id: str) -> tuple[TenantLimits, bool]:
        """The tenant's effective limits and whether they are its own (False: the defaults)."""
        stored = await self._tenants.get_limits(tenant_id)
        return (stored if stored is not None else self.defaults), stored is not None

    async def set(self, tenant_id: str, limits: TenantLimits | None) -> TenantLimits:
        """Store new limits (None: back to the defaults) and apply them here from the next request."""
        await self._tenants.set_limits(tenant_id, limits)
        effective = limits if limits is not None else self.defaults
        self._install(tenant_id, effective)
        return effective
