"""``create_app(settings, deps)``: webmaster, partner and admin APIs in one aiohttp app (docs/architecture.md s.1, 6).

Middleware order (outermost first) — the order is the throttling design:

1. ``error_middleware`` — every error leaves as JSON (``cubes.api.errors``);
2. ``gate_middleware`` — bulkhead, authentication, declared size, tenant
   buckets (``cubes.api.gate``): all before any body is read.

The routes live in one module per audience: ``feeds`` (webmasters),
``uploads`` (partners), ``hosts`` (ownership), ``admin`` (limits), ``refresh``
(one URL again now), ``team`` (users, invitations, tokens) and ``indexnow`` (a site's changed URLs); the
OpenAPI document (``openapi``) describes all of them.

``deps`` is anything shaped like ``shared.runtime.deps.Deps``: ``publish``,
``clock``, ``resolver``, ``bus`` (for load shedding; may be None),
``await stores()``, ``await blobs()``. Stores are opened at startup.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from aiohttp import web

from cubes.api import (
    admin,
    branding,
    checks,
    docs,
    feeds,
    fetches,
    hosts,
    indexnow,
    notices,
    notifications,
    opml,
    refresh,
    signup,
    team,
    upload_list,
    uploads,
    wordstat,
)
from cubes.api.auth import Authenticator
from cubes.api.context import CTX, ApiContext, ContextSlot
from cubes.api.errors import error_middleware, json_response
from cubes.api.gate import gate_middleware
from cubes.api.limits import Limits
from cubes.api.openapi import document
from cubes.api.shedding import LoadShedder
from cubes.api.throttle import Bulkhead
from shared.config import Settings
from shared.http import AddressGuard
from shared.webmaster.rights import Rights

__all__ = ["create_app"]


async def _openapi(request: web.Request) -> web.StreamResponse:
    return json_response(document())


#: the longest request line read (method, path, query): the document allows two URLs of 4,096 characters
#: in one query (IndexNow's url and keyLocation), 49,152 bytes each percent-encoded at 12 bytes a 4-byte
#: character; aiohttp's default of 8,190 answered such a request text/plain 400 before any handler ran
REQUEST_LINE_MAX = 128 * 1024


def create_app(settings: Settings, deps: Any) -> web.Application:
    """The API application."""
    slot = ContextSlot()
    app = web.Application(
        middlewares=[error_middleware, gate_middleware],
        # bodies are streamed by hand with their own limit (cubes.api.bodies); this is a backstop
        client_max_size=settings.api.max_upload_bytes + 1,
        # whichever server runs the app (the cube's runner, a test's) reads lines this long
        handler_args={"max_line_size": REQUEST_LINE_MAX},
    )
    app[CTX] = slot
    app.router.add_get("/api/v1/openapi.json", _openapi, name="openapi", allow_head=False)
    checks.add_routes(app.router)  # before feeds: /api/v1/feeds/check is not a feed id
    opml.add_routes(app.router)  # nor /api/v1/feeds/opml
    feeds.add_routes(app.router)
    fetches.add_routes(app)
    uploads.add_routes(app.router)
    upload_list.add_routes(app.router)
    hosts.add_routes(app.router)
    branding.add_routes(app.router)
    notices.add_routes(app.router)
    notifications.add_routes(app.router)
    team.add_routes(app.router)
    admin.add_routes(app.router)
    docs.add_routes(app.router)
    signup.add_routes(app)
    wordstat.add_routes(app.router)
    refresh.add_routes(app)
    indexnow.add_routes(app)

    async def context(_: web.Application) -> AsyncIterator[None]:
        stores = await deps.stores()
        api = settings.api
        slot.ctx = ApiContext(
            settings=settings,
            stores=stores,
            publish=deps.publish,
            clock=deps.clock,
            blobs=deps.blobs,
            limits=Limits(api, stores.tenants, deps.clock),
            auth=Authenticator(stores, deps.clock, admin_sha256=settings.api.admin_token_sha256),
            bulkhead=Bulkhead(api.concurrency, api.tenant_concurrency_share),
            shedder=LoadShedder(getattr(deps, "bus", None), api.shed_group, api.shed_lag, deps.clock),
            rights=Rights.from_settings(settings, stores, deps.clock, resolver=deps.resolver),
            guard=AddressGuard(settings.http.allowlist),
            resolver=deps.resolver,
        )
        try:
            yield
        finally:
            await slot.ctx.auth.settle()
            await slot.ctx.shedder.close()
            await slot.ctx.rights.close()
            slot.ctx = None

    app.cleanup_ctx.append(context)
    return app
