"""Host routes: list the tenant's hosts and trigger the ownership check (issue 7 "Tenants").

* ``GET /api/v1/hosts`` — every host the tenant claimed, verified or not,
  with its verification token and how to publish it, and its ``alias``: the
  ``www.`` spelling it is one site with, when the tenant verified both
  (``shared.hosts``; otherwise the two are separate hosts).
* ``POST /api/v1/hosts/{host}/verify`` — fetch the token through the SSRF
  guard (``cubes.api.verify``); on success the claim is verified (and any
  other tenant's verified claim on the host is dropped by the store).
  ``200`` either way, with ``verified`` and what each attempt found.

Hosts are added by the operator (``turbocubes hosts add``), not through the
API: a claim creates a tenant's right to publish, which is the operator's call.
"""

from __future__ import annotations

from aiohttp import web

from cubes.api.auth import TENANT, require_host
from cubes.api.context import ctx_of
from cubes.api.errors import FieldError, ValidationFailed, json_response
from cubes.api.verify import instructions
from shared.hosts import scope_for
from shared.urls import canonical_host

__all__ = ["add_routes"]


async def list_hosts(request: web.Request) -> web.StreamResponse:
    claims = await ctx_of(request).stores.tenants.hosts_of(request[TENANT])
    verified = [c.host for c in claims if c.verified]
    return json_response(
        {
            "hosts": [
                {
                    "host": c.host,
                    "verified": c.verified,
                    # the www. spelling this host is one site with (shared.hosts): both verified by you
                    "alias": scope_for(c.host, verified).alias if c.verified else None,
                    "verification_token": c.verification_token,
                    "how_to_verify": instructions(c.host, c.verification_token),
                }
                for c in claims
            ]
        }
    )


async def verify_host(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    try:
        host = canonical_host(request.match_info["host"])
    except ValueError as exc:
        raise ValidationFailed([FieldError("host", str(exc))]) from None
    tenant_id: str = request[TENANT]
    claim = await require_host(ctx.stores.tenants, tenant_id, host, verified=False)
    result = await ctx.verifier.check(host, claim.verification_token)
    if result.verified:
        await ctx.stores.tenants.set_verified(tenant_id, host, True)
    return json_response(
        {
            "host": host,
            "verified": result.verified,
            "method": result.method.value if result.method else None,
            "attempts": list(result.attempts),
        }
    )


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_get("/api/v1/hosts", list_hosts, name="hosts.list", allow_head=False)
    router.add_post("/api/v1/hosts/{host}/verify", verify_host, name="hosts.verify")
