"""The tenant store's contract: tenants, their hosts, API tokens and limits (docs/architecture.md section 6).

One implementation for both engines: ``sql/tenants.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

__all__ = ["HostClaim", "Tenant", "TenantLimits", "TenantStore"]


@dataclass(frozen=True, slots=True)
class TenantLimits:
    rps: float  # requests per second
    burst: int  # token bucket size, in requests
    bytes_per_s: float  # upload bytes per second


@dataclass(frozen=True, slots=True)
class Tenant:
    tenant_id: str
    name: str
    created_at: datetime
    limits: TenantLimits | None = None  # None: the configured defaults apply


@dataclass(frozen=True, slots=True)
class HostClaim:
    host: str
    tenant_id: str
    verified: bool
    verification_token: str  # the partner publishes it (DNS TXT / file) to prove control
    created_at: datetime
    #: ``scheme://host[:port]`` the tenant gave for the host, where the file and meta tag are looked
    #: for (``shared.verification``); None: https, then http, on their default ports
    origin: str | None = None
    #: Turbo pages on for the host (the webmaster's switch, ``set_turbo``): off removes them all
    turbo: bool = True


class TenantStore(Protocol):
    """Tenants, the hosts they own, their API tokens (sha256 only) and their limits.

    Hosts are normalized with ``shared.urls.canonical_host`` (``News.Example.`` ->
    ``news.example``), since ownership decides who may publish for a host.
    """

    async def create_tenant(self, name: str, *, tenant_id: str | None = None, now: datetime | None = None) -> Tenant:
        """Create a tenant (a fresh id when None); an existing ``tenant_id`` is returned as is."""
        ...

    async def get_tenant(self, tenant_id: str) -> Tenant | None: ...

    async def list_tenants(self, limit: int = 1000) -> list[Tenant]:
        """Tenants, the oldest first (the operator's ``turbocubes hosts list``)."""
        ...

    async def add_host(
        self, tenant_id: str, host: str, *, origin: str | None = None, now: datetime | None = None
    ) -> HostClaim:
        """Claim ``host`` for the tenant (unverified, with a fresh verification token); idempotent.

        ``origin`` (where the site answers, ``scheme://host[:port]``) is stored, or replaced when the
        claim exists; None leaves a stored one as it is.
        """
        ...

    async def set_verified(self, tenant_id: str, host: str, verified: bool = True) -> None:
        """Verify a claim; verifying makes it the only verified claim of the host. ``NotFound`` if absent."""
        ...

    async def host_owner(self, host: str) -> str | None:
        """The tenant whose claim on ``host`` is verified, or None."""
        ...

    async def hosts_of(self, tenant_id: str) -> list[HostClaim]: ...

    async def set_turbo(self, tenant_id: str, host: str, enabled: bool) -> None:
        """Switch Turbo pages on or off for a claimed host (the host-wide "Turbo off"). ``NotFound`` if absent."""
        ...

    async def turbo_enabled(self, host: str) -> bool:
        """False when the tenant that verified ``host`` switched its Turbo pages off; True otherwise."""
        ...

    async def issue_token(self, tenant_id: str, *, now: datetime | None = None) -> str:
        """A new API token; the plaintext is returned once and only its sha256 is stored."""
        ...

    async def tenant_for_token(self, token: str) -> str | None:
        """The tenant id of a valid (not revoked) token, or None."""
        ...

    async def revoke_token(self, token: str) -> bool:
        """Revoke by plaintext; True when a live token was revoked."""
        ...

    async def get_limits(self, tenant_id: str) -> TenantLimits | None:
        """The tenant's own limits; None means the configured defaults apply."""
        ...

    async def set_limits(self, tenant_id: str, limits: TenantLimits | None) -> None:
        """Set (or with None clear) the tenant's limits. ``NotFound`` for an unknown tenant."""
        ...
