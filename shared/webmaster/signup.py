"""Self-service sign-up, one rule for the API and the console (docs/architecture.md section 1).

``POST /api/v1/signup`` (``cubes/api/signup.py``) and the console's sign-up form
(``cubes/frontend/console/``) both make a tenant here: a name of 1 to ``NAME_MAX``
characters (runs of spaces made one), a tenant, and its API token -- shown to the
webmaster once, since the store keeps only its sha256 (``TenantStore.issue_token``).

Both are public, so both are rate-limited the same way (``SignupLimiter``): per client
address a bucket of ``api.signup_burst`` sign-ups refilled at ``api.signup_per_hour``, and
one bucket for the whole instance (``GLOBAL_FACTOR`` addresses' worth) so a botnet of
addresses cannot fill the tenant table either. Each door keeps its own limiter (the API and
the frontend may run in different processes); ``api.signup_enabled = false`` closes both.

The client address is the TCP peer, an IPv6 one counted by its /64 (``shared.attempts.client_key``):
a proxy in front would make every client one address, so run it behind one that rate-limits by
itself, or turn sign-up off there.
"""

from __future__ import annotations

from dataclasses import dataclass

from shared.attempts import client_key
from shared.buckets import TokenBucket
from shared.clock import Clock
from shared.config import ApiConfig
from shared.stores import TenantStore

__all__ = ["GLOBAL_FACTOR", "NAME_MAX", "SignedUp", "SignupLimiter", "name_problem", "sign_up"]

NAME_MAX = 100
#: client addresses remembered; past this the table is emptied (bounded memory under a flood)
_ADDRESSES_MAX = 100_000
#: the instance-wide bucket is this many addresses' worth
GLOBAL_FACTOR = 10


class SignupLimiter:
    """Buckets per client address and one for the instance, on the injected clock."""

    def __init__(self, api: ApiConfig, clock: Clock) -> None:
        self._rate = api.signup_per_hour / 3600.0
        self._burst = max(1, api.signup_burst)
        self._clock = clock
        self._by_address: dict[str, TokenBucket] = {}
        self._all = TokenBucket(self._rate * GLOBAL_FACTOR, self._burst * GLOBAL_FACTOR, clock)

    def admit(self, address: str) -> float:
        """0.0 when a sign-up from ``address`` may go ahead now, else the seconds to wait."""
        client = client_key(address)
        bucket = self._by_address.get(client)
        if bucket is None:
            if len(self._by_address) >= _ADDRESSES_MAX:
                self._by_address.clear()
            bucket = self._by_address[client] = TokenBucket(self._rate, self._burst, self._clock)
        # the address's own bucket first: a refused address never spends the shared one
        wait = bucket.take()
        if wait:
            return wait
        wait = self._all.take()
        if wait:
            bucket.charge(-1)  # not signed up after all: the address keeps its token
        return wait


def name_problem(name: object) -> str | None:
    """What is wrong with a sign-up's ``name`` (None: nothing)."""
    if not isinstance(name, str) or not name.strip() or len(name) > NAME_MAX:
        return f"required: your site's or company's name, 1 to {NAME_MAX} characters"
    return None


@dataclass(frozen=True, slots=True)
class SignedUp:
    tenant_id: str
    name: str
    #: the API token, in the clear this once
    token: str


async def sign_up(tenants: TenantStore, name: str) -> SignedUp:
    """A new tenant named ``name`` (checked with ``name_problem`` first) and its API token."""
    tenant = await tenants.create_tenant(" ".join(name.split()))
    return SignedUp(tenant.tenant_id, tenant.name, await tenants.issue_token(tenant.tenant_id))
