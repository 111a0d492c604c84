"""Who is calling, and may they touch this host? (docs/architecture.md section 6).

Every tenant route needs ``Authorization: Bearer <token>``. The token's
plaintext never lives anywhere but the client: the store keeps its
sha256 and answers ``team.grant`` (the tenant, and the scope that is the call's
role: ``shared.webmaster.access.ROLE_OF_SCOPE``; the gate asks
``shared.webmaster.access.permit``). This instance caches the answer for
``TOKEN_CACHE_S`` under the token's sha256 (never the plaintext), so
authentication costs a dict lookup on the hot path and a throttled tenant's
rejections stay cheap. The price: a revoked token keeps working on an
instance for at most ``TOKEN_CACHE_S``.

Wrong tokens are throttled per client address (``shared.attempts.FailedAttempts``, as the
console's sign-in is): ``TOKEN_FAILURES`` in a row are answered ``401``, then the address waits
``TOKEN_REFILL_S`` per further try and gets ``429 too_many_failures`` with ``Retry-After`` -- before
its token is looked at, so a right guess is refused too and a scan learns nothing. A request
without a token is not a guess and is not counted. The admin token is counted the same way.

401 vs 403 vs 404 (the rule the tests pin):

* no token, a malformed header, an unknown or revoked token -> ``401`` with
  ``WWW-Authenticate: Bearer`` (RFC 6750); the caller is nobody.
* a valid token naming a host the tenant has no claim on -> ``403
  host_not_owned``; a claim that is not verified -> ``403 host_not_verified``.
  Hosts are public names, so saying "not yours" reveals nothing.
* a valid token asking for a feed or task id of another tenant -> ``404``,
  exactly as for an id that does not exist: ids are not guessable, and
  answering 403 would confirm that the other tenant's object exists.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import math
from typing import TYPE_CHECKING

from aiohttp import web

from cubes.api.errors import ApiError
from shared.attempts import FailedAttempts
from shared.clock import Clock
from shared.stores import HostClaim, Stores, TenantStore
from shared.stores.team import Grant
from shared.webmaster.access import AccessRefused, host_claim, origin_claim

if TYPE_CHECKING:
    from shared.webmaster.feeds import Authorize

__all__ = [
    "ROLE",
    "TENANT",
    "TOKEN_CACHE_S",
    "TOKEN_FAILURES",
    "TOKEN_REFILL_S",
    "Authenticator",
    "bearer_token",
    "check_admin",
    "feed_authorizer",
    "refusal",
    "require_host",
    "unauthorized",
]

log = logging.getLogger(__name__)

#: seconds an instance trusts its cached token -> tenant answer (revocation latency, see module doc)
TOKEN_CACHE_S = 2.0
#: entries kept before the cache is emptied; bounds memory under a flood of random tokens
_CACHE_MAX = 50_000
#: tokens longer than this are refused without a store lookup (ours are ~46 characters)
_TOKEN_MAX = 256
#: wrong tokens one client address may present in a row; then one more per TOKEN_REFILL_S (6 a
#: minute): a client with a stale token sees its 401s first, a scanner waits
TOKEN_FAILURES = 10
TOKEN_REFILL_S = 10.0

#: request key holding the authenticated tenant id
TENANT: web.RequestKey[str] = web.RequestKey("tenant_id", str)
#: request key holding the authenticated token's grant (its scope is the call's role)
ROLE: web.RequestKey[str] = web.RequestKey("role", str)


def unauthorized(message: str = "a valid API token is required") -> ApiError:
    return ApiError(
        401,
        "unauthorized",
        message,
        headers={"WWW-Authenticate": 'Bearer realm="turbocubes"'},
    )


def bearer_token(request: web.Request) -> str | None:
    """The token of an ``Authorization: Bearer`` header, or None."""
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or len(token) > _TOKEN_MAX:
        return None
    return token


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


class Authenticator:
    """Token -> grant (tenant id, scope), through the store, with a short per-instance cache."""

    def __init__(self, stores: Stores, clock: Clock, *, admin_sha256: str = "") -> None:
        self._stores = stores
        self._clock = clock
        #: the admin token presented on a tenant route is refused, but is no guess: not counted
        self._admin_sha256 = admin_sha256.lower()
        # sha256(token) -> (tenant id or None for "invalid", expires at); negatives are cached
        # too, so a client hammering with one bad token costs one database read per TOKEN_CACHE_S
        self._cache: dict[str, tuple[Grant | None, float]] = {}
        self.failures = FailedAttempts(clock, failures=TOKEN_FAILURES, refill_s=TOKEN_REFILL_S)
        #: last-use writes in flight (``_touch``), held so they are not collected mid-way
        self._touching: set[asyncio.Task[None]] = set()

    async def grant(self, token: str) -> Grant | None:
        key = _digest(token)
        now = self._clock.monotonic()
        hit = self._cache.get(key)
        if hit is not None and hit[1] > now:
            return hit[0]
        grant = await self._stores.tenants.team.grant(token)
        if grant is not None and grant.stale(self._clock.now()):
            self._touch(grant.token_id)
        if len(self._cache) >= _CACHE_MAX:
            self._cache.clear()
        self._cache[key] = (grant, now + TOKEN_CACHE_S)
        return grant

    def _touch(self, token_id: str) -> None:
        """Record the token's use beside the call, never in its way: a write may wait behind another."""
        task = asyncio.get_running_loop().create_task(
            self._stores.tenants.team.touch_token(token_id, now=self._clock.now())
        )
        self._touching.add(task)
        task.add_done_callback(self._touched)

    def _touched(self, task: asyncio.Task[None]) -> None:
        self._touching.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("a token's last use was not recorded: %r", task.exception())

    async def settle(self) -> None:
        """Wait for the last-use writes in flight (at shutdown; tests)."""
        while self._touching:
            await asyncio.gather(*self._touching, return_exceptions=True)

    async def tenant(self, token: str) -> str | None:
        grant = await self.grant(token)
        return None if grant is None else grant.tenant_id

    def forget(self) -> None:
        """Drop every cached answer (after a revocation made through this process)."""
        self._cache.clear()

    def _waiting(self, request: web.Request) -> None:
        """``429`` while the client's address waits out its wrong tokens (see the module docstring)."""
        wait = self.failures.wait_s(request.remote or "")
        if wait:
            seconds = max(1, math.ceil(wait))
            raise ApiError(
                429,
                "too_many_failures",
                f"too many wrong API tokens from this address; retry after {seconds} s",
                headers={"Retry-After": str(seconds)},
            )

    async def authenticate(self, request: web.Request) -> Grant:
        """The caller's grant, or ``401`` (``429`` while its address waits out wrong tokens)."""
        token = bearer_token(request)
        if token is None:
            raise unauthorized()
        self._waiting(request)
        grant = await self.grant(token)
        if grant is None:
            if not (self._admin_sha256 and hmac.compare_digest(_digest(token), self._admin_sha256)):
                self.failures.failed(request.remote or "")
            raise unauthorized("the API token is unknown or revoked")
        return grant

    async def admin(self, request: web.Request, admin_sha256: str) -> None:
        """``check_admin``, with a wrong admin token counted as a wrong tenant token is.

        A live tenant token on an admin route is refused but not counted: it is no guess, and its
        address's tenant calls must not wait for it.
        """
        token = bearer_token(request)
        if admin_sha256 and token is not None:
            self._waiting(request)
        try:
            check_admin(request, admin_sha256)
        except ApiError as exc:
            if exc.status == 401 and token is not None and await self.tenant(token) is None:
                self.failures.failed(request.remote or "")
            raise


def check_admin(request: web.Request, admin_sha256: str) -> None:
    """Admin routes: the bearer token's sha256 must equal ``settings.api.admin_token_sha256``."""
    if not admin_sha256:
        raise ApiError(403, "admin_disabled", "the admin API is off (api.admin_token_sha256 is empty)")
    token = bearer_token(request)
    if token is None or not hmac.compare_digest(_digest(token), admin_sha256.lower()):
        raise unauthorized("a valid admin token is required")


def refusal(exc: AccessRefused) -> ApiError:
    """How the API says ``shared.webmaster.access``'s no: 404 for another tenant's object, 409 for the last owner,
    else 403 naming the host."""
    if exc.missing:
        return ApiError(404, exc.code, exc.message)
    if exc.code == "last_owner":
        return ApiError(409, exc.code, exc.message)
    return ApiError(403, exc.code, exc.message, host=exc.host)


def feed_authorizer(tenants: TenantStore, tenant_id: str) -> Authorize:
    """What a feed registration or check asks of its URL's origin: the caller's right on it (403 otherwise)."""

    async def owned(origin: str) -> None:
        try:
            await origin_claim(tenants, tenant_id, origin)
        except AccessRefused as exc:
            raise refusal(exc) from None

    return owned


async def require_host(tenants: TenantStore, tenant_id: str, host: str, *, verified: bool = True) -> HostClaim:
    """The tenant's claim on ``host`` (``shared.webmaster.access.host_claim``, the console's rule too); 403 when
    refused."""
    try:
        return await host_claim(tenants, tenant_id, host, verified=verified)
    except AccessRefused as exc:
        raise refusal(exc) from None
