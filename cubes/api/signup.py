"""Self-service sign-up: a webmaster gets a tenant and its API token (docs/architecture.md section 1).

``POST /api/v1/signup`` {name} — public. Creates a tenant and answers ``201``
with its id and its API token, which is shown this once: the store keeps only
its sha256 (``TenantStore.issue_token``), so a lost token is replaced, never
recovered. A tenant can do nothing until it claims and verifies a host
(``POST /api/v1/hosts``, then ``.../verify``), so a sign-up costs the pipeline
nothing but a row.

Rate-limited, because it is public: per client address a bucket of
``api.signup_burst`` sign-ups refilled at ``api.signup_per_hour``, and one
bucket for the whole instance (ten addresses' worth) so a botnet of
addresses cannot fill the tenant table either. A refusal is ``429`` with
``Retry-After``. ``api.signup_enabled = false`` turns it off (``403``): the
operator's ``turbocubes hosts add`` always works.

The client address is the TCP peer (``request.remote``), an IPv6 one counted by
its /64 (``shared.attempts.client_key``): a proxy in front would make every client
one address, so run it behind one that you trust to rate-limit by itself, or turn
sign-up off there.
"""

from __future__ import annotations

from aiohttp import web

from cubes.api.bodies import read_json_object
from cubes.api.context import ctx_of
from cubes.api.errors import ApiError, FieldError, ValidationFailed, json_response
from cubes.api.throttle import TokenBucket, retry_after_header
from shared.attempts import client_key
from shared.clock import Clock
from shared.config import ApiConfig

__all__ = ["SignupLimiter", "add_routes"]

_NAME_MAX = 100
_BODY_MAX = 2048
#: client addresses remembered; past this the table is emptied (bounded memory under a flood)
_ADDRESSES_MAX = 100_000
#: the instance-wide bucket is this many addresses' worth
_GLOBAL_FACTOR = 10


class SignupLimiter:
    """Buckets per client address and one for the instance, on the injected clock."""

    def __init__(self, api: ApiConfig, clock: Clock) -> None:
        self._rate = api.signup_per_hour / 3600.0
        self._burst = max(1, api.signup_burst)
        self._clock = clock
        self._by_address: dict[str, TokenBucket] = {}
        self._all = TokenBucket(self._rate * _GLOBAL_FACTOR, self._burst * _GLOBAL_FACTOR, clock)

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


def _limiter(request: web.Request) -> SignupLimiter:
    ctx = ctx_of(request)
    holder = request.app[_HOLDER]
    if holder.limiter is None:
        holder.limiter = SignupLimiter(ctx.settings.api, ctx.clock)
    return holder.limiter


class _Holder:
    limiter: SignupLimiter | None = None


_HOLDER: web.AppKey[_Holder] = web.AppKey("signup", _Holder)


async def signup(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    if not ctx.settings.api.signup_enabled:
        raise ApiError(403, "forbidden", "self-service sign-up is off here (api.signup_enabled); ask the operator")
    wait = _limiter(request).admit(request.remote or "")
    if wait:
        after = retry_after_header(wait)
        raise ApiError(
            429, "rate_limited", f"too many sign-ups from here; retry after {after} s", headers={"Retry-After": after}
        )
    body = await read_json_object(request, _BODY_MAX)
    problems = [FieldError(k[:64], "unknown field") for k in sorted(set(body) - {"name"})[:10]]
    name = body.get("name")
    if not isinstance(name, str) or not name.strip() or len(name) > _NAME_MAX:
        problems.append(FieldError("name", f"required: your site's or company's name, 1 to {_NAME_MAX} characters"))
    if problems:
        raise ValidationFailed(problems)
    assert isinstance(name, str)
    tenant = await ctx.stores.tenants.create_tenant(" ".join(name.split()))
    token = await ctx.stores.tenants.issue_token(tenant.tenant_id)
    return json_response(
        {
            "tenant_id": tenant.tenant_id,
            "name": tenant.name,
            "token": token,
            "token_shown_once": True,
            "next": {
                "claim_host": 'POST /api/v1/hosts {"url": "https://your.site/"} with Authorization: Bearer <token>',
                "verify_host": "POST /api/v1/hosts/{host}/verify once the token is published",
                "add_feed": 'POST /api/v1/feeds {"url": "https://your.site/feed.xml"}',
                "docs": "/docs",
            },
        },
        status=201,
        headers={"Cache-Control": "no-store"},
    )


def add_routes(app: web.Application) -> None:
    app[_HOLDER] = _Holder()
    app.router.add_post("/api/v1/signup", signup, name="signup")
