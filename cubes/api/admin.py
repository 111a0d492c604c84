"""The admin API: per-tenant limits changed at run time (docs/architecture.md section 6).

* ``GET /api/v1/admin/limits/{tenant}`` — the tenant's effective limits and
  whether they are its own or the configured defaults.
* ``PUT /api/v1/admin/limits/{tenant}`` {rps, burst, bytes_per_s} — stored in
  the ``TenantStore`` and applied on this instance from the next request;
  other instances pick it up within ``cubes.api.limits.REFRESH_S``.
* ``DELETE /api/v1/admin/limits/{tenant}`` — back to the defaults.

Every call needs ``Authorization: Bearer <admin token>`` whose sha256 is
``settings.api.admin_token_sha256`` (empty: the admin API answers 403).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from cubes.api.bodies import read_json_object
from cubes.api.context import ctx_of
from cubes.api.errors import ApiError, FieldError, ValidationFailed, json_response
from cubes.api.params import path_id
from shared.stores import TenantLimits

__all__ = ["add_routes", "limits_json"]

_BODY_MAX = 4096
#: sanity ceilings: a typo must not turn a limit into "unlimited" by accident of magnitude
_MAX_RPS = 1_000_000.0
_MAX_BURST = 1_000_000
_MAX_BYTES_PER_S = 100 * 1024**3


def limits_json(tenant_id: str, limits: TenantLimits, custom: bool) -> dict[str, Any]:
    return {
        "tenant_id": tenant_id,
        "rps": limits.rps,
        "burst": limits.burst,
        "bytes_per_s": limits.bytes_per_s,
        "custom": custom,
    }


def _number(body: dict[str, Any], name: str, ceiling: float, errors: list[FieldError], *, integer: bool) -> float:
    value = body.get(name)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (integer and not isinstance(value, int)):
        errors.append(FieldError(name, f"required, {'an integer' if integer else 'a number'}"))
        return 0.0
    if not 0 < value <= ceiling:
        errors.append(FieldError(name, f"must be > 0 and <= {ceiling:g}"))
    return float(value)


def _parse(body: dict[str, Any]) -> TenantLimits:
    errors: list[FieldError] = []
    rps = _number(body, "rps", _MAX_RPS, errors, integer=False)
    burst = _number(body, "burst", _MAX_BURST, errors, integer=True)
    bps = _number(body, "bytes_per_s", _MAX_BYTES_PER_S, errors, integer=False)
    errors.extend(FieldError(k[:64], "unknown field") for k in sorted(set(body) - {"rps", "burst", "bytes_per_s"})[:10])
    if errors:
        raise ValidationFailed(errors)
    return TenantLimits(rps=rps, burst=int(burst), bytes_per_s=bps)


async def _tenant(request: web.Request) -> str:
    tenant_id = path_id(request, "tenant")
    if await ctx_of(request).stores.tenants.get_tenant(tenant_id) is None:
        raise ApiError(404, "not_found", f"no tenant {tenant_id!r}")
    return tenant_id


async def get_limits(request: web.Request) -> web.StreamResponse:
    tenant_id = await _tenant(request)
    limits, custom = await ctx_of(request).limits.get(tenant_id)
    return json_response(limits_json(tenant_id, limits, custom))


async def put_limits(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    tenant_id = await _tenant(request)
    limits = _parse(await read_json_object(request, _BODY_MAX))
    await ctx.limits.set(tenant_id, limits)
    return json_response(limits_json(tenant_id, limits, True))


async def delete_limits(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    tenant_id = await _tenant(request)
    limits = await ctx.limits.set(tenant_id, None)
    return json_response(limits_json(tenant_id, limits, False))


def add_routes(router: web.UrlDispatcher) -> None:
    path = "/api/v1/admin/limits/{tenant}"
    router.add_get(path, get_limits, name="admin.limits.get", allow_head=False)
    router.add_put(path, put_limits, name="admin.limits.put")
    router.add_delete(path, delete_limits, name="admin.limits.delete")
