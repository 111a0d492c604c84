"""The tenant store's contract: tenants, their hosts, API tokens and limits (docs/architecture.md section 6).

A claim is a tenant's on a host, for one origin (``shared.origins``): the origin the tenant named
(``https://host`` when it named none). A *right* is a verified claim: it covers that origin only.
Several tenants may hold rights on one origin at once; verifying a claim never touches another
tenant's (``shared.webmaster.rights`` owns every change of rights and tells those who hold or held one).

One implementation for both engines: ``sql/tenants.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from shared.stores.team import TeamStore

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
    #: True while the claim is a right: its proof was found and has not lapsed past its grace
    verified: bool
    verification_token: str  # the partner publishes it (DNS TXT / file / meta) to prove control
    created_at: datetime
    #: ``scheme://host[:port]``, canonical (``shared.origins``): where the file and the meta tag are
    #: looked for, and what the right covers; ``https://host`` for a claim that named no URL
    origin: str = ""
    #: the tenant's Turbo switch for its pages on the host (``set_turbo``): off removes them
    turbo: bool = True
    #: when the current right began (None: no right)
    verified_at: datetime | None = None
    #: how the proof was found: "dns", "file" or "meta" (None: no right)
    method: str | None = None
    #: the last check of the proof, first or re-check (None: never checked)
    checked_at: datetime | None = None
    #: the first failed re-check since the proof was last found: the right ends a grace after it
    lapsing_since: datetime | None = None


class TenantStore(Protocol):
    """Tenants, the hosts they own, their API tokens (sha256 only) and their limits.

    Hosts are normalized with ``shared.urls.canonical_host`` (``News.Example.`` ->
    ``news.example``), since ownership decides who may publish for a host.
    """

    #: the tenants' users, invitations and named, scoped API tokens (``shared/stores/team.py``)
    team: TeamStore

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

        ``origin`` (canonical, on ``host``) is stored; None: ``https://host`` for a new claim, the
        stored one for an existing claim. A verified claim given another origin is a claim of that
        origin: its right ends there and then (the proof was of the old origin).
        """
        ...

    async def set_verified(
        self,
        tenant_id: str,
        host: str,
        verified: bool = True,
        *,
        method: str | None = None,
        now: datetime | None = None,
    ) -> None:
        """Make the claim a right (its proof was found ``now`` by ``method``) or end its right.

        Another tenant's right on the host is not touched. ``NotFound`` if the claim is absent.
        """
        ...

    async def holders(self, host: str) -> list[HostClaim]:
        """The verified claims on ``host``, of every tenant (the oldest right first)."""
        ...

    async def claims_on(self, host: str) -> list[HostClaim]:
        """Every claim on ``host``, verified or not, of every tenant (the oldest first): what a site
        that proves its owners itself (the demo's) publishes the tokens of."""
        ...

    async def hosts_of(self, tenant_id: str) -> list[HostClaim]: ...

    async def checked(self, tenant_id: str, host: str, *, found: bool, now: datetime | None = None) -> HostClaim:
        """Record a re-check of a right: ``found`` clears its lapse, else the lapse starts (if it had not)."""
        ...

    async def due_checks(self, before: datetime, *, now: datetime | None = None, limit: int = 100) -> list[HostClaim]:
        """Rights last checked before ``before``, oldest check first, each taken for this caller.

        Taking one marks it checked ``now``, in one guarded statement per claim, so replicas that
        sweep at once check each right once.
        """
        ...

    async def set_turbo(self, tenant_id: str, host: str, enabled: bool) -> None:
        """Switch Turbo pages on or off for a claimed host (the host-wide "Turbo off"). ``NotFound`` if absent."""
        ...

    async def set_branding(self, tenant_id: str, host: str, branding: str | None) -> None:
        """Keep a claimed host's branding for this tenant (``shared.webmaster.branding.Branding`` as JSON; None
        removes it). ``NotFound`` when the tenant has not claimed the host."""
        ...

    async def branding(self, tenant_id: str, host: str) -> str | None:
        """The tenant's branding of ``host`` (JSON), None when it set none."""
        ...

    async def turbo_enabled(self, host: str, tenant_id: str | None = None) -> bool:
        """Whether a source's pages on ``host`` are on.

        A tenant's source: its own claim's switch (a claim it does not have: on; its scope refuses
        it anyway). A source of no tenant (the operator's feeds, the autoparser): off only when every
        tenant that holds a right on the host switched its pages off (no holder: on).
        """
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
