"""Who is calling, and may they touch this host? (docs/architecture.md section 6).

Every tenant route needs ``Authorization: Bearer <token>``. The token's
plaintext never lives anywhere but the client: the ``TenantStore`` keeps its
sha256 and answers ``tenant_for_token``. This instance caches the answer for
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

import hashlib
import hmac
import math
from typing import TYPE_CHECKING

from aiohttp import web

from cubes.api.errors import ApiError
from shared.access import AccessRefused, host_claim, origin_claim
from shared.attempts import FailedAttempts
from shared.clock import Clock
from shared.stores import HostClaim, TenantStore

if TYPE_CHECKING:
    from shared.feeds import Authorize

__all__ = [
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
    """Token -> tenant id, through the store, with a short per-instance cache."""

    def __init__(self, tenants: TenantStore, clock: Clock, *, admin_sha256: str = "") -> None:
        self._tenants = tenants
        self._clock = clock
        #: the admin token presented on a tenant route is refused, but is no guess: not counted
        self._admin_sha256 = admin_sha256.lower()
        # sha256(token) -> (tenant id or None for "invalid", expires at); negatives are cached
        # too, so a client hammering with one bad token costs one database read per TOKEN_CACHE_S
        self._cache: dict[str, tuple[str | None, float]] = {}
        self.failures = FailedAttempts(clock, failures=TOKEN_FAILURES, refill_s=TOKEN_REFILL_S)

    async def tenant(self, token: str) -> str | None:
        key = _digest(token)
        now = self._clock.monotonic()
        hit = self._cache.get(key)
        if hit is not None and hit[1] > now:
            return hit[0]
        tenant_id = await self._tenants.tenant_for_token(token)
        if len(self._cache) >= _CACHE_MAX:
            self._cache.clear()
        self._cache[key] = (tenant_id, now + TOKEN_CACHE_S)
        return tenant_id

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

    async def authenticate(self, request: web.Request) -> str:
        """The caller's tenant id, or ``401`` (``429`` while its address waits out wrong tokens)."""
        token = bearer_token(request)
        if token is None:
            raise unauthorized()
        self._waiting(request)
        tenant_id = await self.tenant(token)
        if tenant_id is None:
            if not (self._admin_sha256 and hmac.compare_digest(_digest(token), self._admin_sha256)):
                self.failures.failed(request.remote or "")
            raise unauthorized("the API token is unknown or revoked")
        return tenant_id

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
    """How the API says ``shared.access``'s no: 404 for another tenant's object, else 403 naming the host."""
    if exc.missing:
        return ApiError(404, exc.code, exc.message)
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
    """The tenant's claim on ``host`` (``shared.access.host_claim``, the console's rule too); 403 when refused."""
    try:
        return await host_claim(tenants, tenant_id, host, verified=verified)
    except AccessRefused as exc:
        raise refusal(exc) from None
