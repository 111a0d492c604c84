"""A host's branding on its Turbo pages (docs/architecture.md sections 1 and 10; ``shared/webmaster/branding.py``).

* ``GET /api/v1/hosts/{host}/branding`` — your branding of the host (null: none) and where its logo is
  (``none``, ``pending`` on its way to the CDN, ``ok`` with its CDN copy, ``failed`` with the reason);
* ``PUT /api/v1/hosts/{host}/branding`` {display_name, logo_url, accent, menu, contacts} — set it,
  for a host you hold a right on: every page of yours there wears it from now (the kvwriter renders
  them again, ``hosts.branding``), and a logo not in the CDN yet is ordered through the host's polite
  lane, the pages rendered again once it is there;
* ``DELETE /api/v1/hosts/{host}/branding`` — back to the default look.

A branding is the tenant's own: another holder of the host sets its own, for its own pages.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from cubes.api.auth import TENANT, require_host
from cubes.api.bodies import read_json_object
from cubes.api.context import ApiContext, ctx_of
from cubes.api.errors import FieldError, ValidationFailed, json_response
from cubes.api.feeds import unavailable_on_outage
from cubes.api.params import path_host
from shared.webmaster.branding import Branding, BrandingRefused, apply_branding, logo_state, parse_branding

__all__ = ["add_routes"]

#: a branding is a few hundred bytes: eight menu links and six contacts at most
_BODY_MAX = 16 * 1024


async def _view(ctx: ApiContext, host: str, branding: Branding | None) -> dict[str, Any]:
    shown = None if branding is None else branding.model_dump(mode="json", exclude_defaults=True)
    return {"host": host, "branding": shown, "logo": await logo_state(ctx.stores, branding)}


async def get_branding(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    host = path_host(request)
    tenant_id: str = request[TENANT]
    await require_host(ctx.stores.tenants, tenant_id, host)
    return json_response(await _view(ctx, host, Branding.from_json(await ctx.stores.tenants.branding(tenant_id, host))))


async def put_branding(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    host = path_host(request)
    tenant_id: str = request[TENANT]
    await require_host(ctx.stores.tenants, tenant_id, host)  # the tenant's own right in force
    body = await read_json_object(request, _BODY_MAX)
    try:
        branding = parse_branding(body, host)
    except BrandingRefused as exc:
        raise ValidationFailed([FieldError(f[:64], m) for f, m in exc.problems]) from None
    await unavailable_on_outage(apply_branding(ctx.stores, ctx.publish, tenant_id, host, branding, ctx.clock.now()))
    return json_response(await _view(ctx, host, branding))


async def delete_branding(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    host = path_host(request)
    tenant_id: str = request[TENANT]
    await require_host(ctx.stores.tenants, tenant_id, host)
    await unavailable_on_outage(apply_branding(ctx.stores, ctx.publish, tenant_id, host, None, ctx.clock.now()))
    return web.Response(status=204)


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_get("/api/v1/hosts/{host}/branding", get_branding, name="hosts.branding.get", allow_head=False)
    router.add_put("/api/v1/hosts/{host}/branding", put_branding, name="hosts.branding.put")
    router.add_delete("/api/v1/hosts/{host}/branding", delete_branding, name="hosts.branding.delete")
