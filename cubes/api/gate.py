"""The gate every request passes before a handler runs (docs/architecture.md section 6, "Per tenant, in").

One middleware, in this order (the order is the point: each step is cheaper
than the work it protects, and nothing reads the body):

1. **bulkhead** — over ``api.concurrency`` requests in flight: ``503`` at once;
2. **route access** — public routes (the OpenAPI document) pass; admin routes
   need the admin token; every other route needs a tenant token (``401``) whose
   scope's role allows the operation (``shared.webmaster.access.permit``: a GET is a read,
   anything else a write, a ``team.`` route the team's; ``403 role_forbids``);
3. **declared size** — a ``Content-Length`` over ``api.max_upload_bytes`` is
   ``413`` before it can touch the tenant's byte budget;
4. **the tenant's share of the bulkhead** — over ``api.tenant_concurrency_share``
   of it in flight for this tenant: ``429 concurrency_limited`` (the tenant's own
   excess, so one tenant's burst never turns into every tenant's 503);
5. **tenant buckets** — one request token and ``Content-Length`` byte tokens,
   else ``429`` with ``Retry-After`` and the RateLimit headers.

Only then does the handler run. Every response to an admitted tenant
request carries the ``RateLimit`` / ``RateLimit-Policy`` headers, and so does
every 429 (the handler's own errors included; an engine outage's 503 comes
from ``error_middleware`` outside the gate and has only ``Retry-After``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

from cubes.api.auth import ROLE, TENANT, refusal
from cubes.api.bodies import too_large
from cubes.api.context import ctx_of
from cubes.api.errors import ApiError, problem
from cubes.api.throttle import TenantBuckets
from shared.webmaster.access import ROLE_OF_SCOPE, AccessRefused, need_of, permit

__all__ = ["ADMIN_PREFIX", "PUBLIC_ROUTES", "TEAM_PREFIX", "gate_middleware"]

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

#: route names anyone may call (IndexNow is public by the protocol: the site's key file is its proof)
PUBLIC_ROUTES = frozenset({"openapi", "docs", "problems", "signup", "indexnow", "indexnow.post"})
#: route names starting with this need the admin token
ADMIN_PREFIX = "admin."
#: route names starting with this are the team's (users, invitations, tokens, and where the tenant's
#: notifications go: the webhook and its secret): owners only
TEAM_PREFIX = "team."
#: what a request refused by the bulkhead is told to wait: in-flight requests finish in well under that
_BULKHEAD_RETRY_AFTER = "1"


@web.middleware
async def gate_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    ctx = ctx_of(request)
    if not ctx.bulkhead.try_enter():
        return problem(
            503,
            "overloaded",
            f"the API is at its concurrency limit ({ctx.bulkhead.limit}); retry shortly",
            headers={"Retry-After": _BULKHEAD_RETRY_AFTER},
        )
    try:
        route = request.match_info.route
        name = route.name or ""
        if request.match_info.http_exception is not None or name in PUBLIC_ROUTES:
            return await handler(request)  # unknown routes get their 404 / 405 from the router
        if name.startswith(ADMIN_PREFIX):
            await ctx.auth.admin(request, ctx.settings.api.admin_token_sha256)
            return await handler(request)

        grant = await ctx.auth.authenticate(request)
        tenant_id = grant.tenant_id
        request[TENANT] = tenant_id
        role = ROLE_OF_SCOPE.get(grant.scope, "")
        try:
            permit(role, need_of(request.method, team=name.startswith(TEAM_PREFIX)))
        except AccessRefused as exc:
            raise refusal(exc) from None
        request[ROLE] = role
        size = request.content_length or 0
        if size > ctx.settings.api.max_upload_bytes:
            raise too_large(ctx.settings.api.max_upload_bytes)
        buckets = await ctx.limits.buckets(tenant_id)
        if not ctx.bulkhead.try_enter_tenant(tenant_id):
            # before the buckets: a request refused here must not spend the tenant's rate budget
            return problem(
                429,
                "concurrency_limited",
                f"this tenant has {ctx.bulkhead.tenant_in_flight(tenant_id)} requests in flight, its share "
                f"of the API's concurrency ({ctx.bulkhead.tenant_limit} of {ctx.bulkhead.limit}); retry shortly",
                headers={**buckets.current().headers(), "Retry-After": _BULKHEAD_RETRY_AFTER},
                retry_after=int(_BULKHEAD_RETRY_AFTER),
            )
        try:
            return await _admitted(request, handler, buckets, size)
        finally:
            ctx.bulkhead.leave_tenant(tenant_id)
    finally:
        ctx.bulkhead.leave()


async def _admitted(request: web.Request, handler: Handler, buckets: TenantBuckets, size: int) -> web.StreamResponse:
    """A tenant request within its concurrency share: its rate buckets, then the handler."""
    state = buckets.admit(size)
    headers = state.headers()
    if not state.allowed:
        return problem(
            429,
            "rate_limited",
            f"too many requests or bytes for this tenant; retry after {headers['Retry-After']} s",
            headers=headers,
            retry_after=int(headers["Retry-After"]),
        )
    try:
        response = await handler(request)
    except ApiError as exc:
        response = exc.response()
    if not response.prepared:
        response.headers.update(headers)
    return response
