"""A tenant's feeds as OPML: ``GET /api/v1/feeds/opml`` exports them, ``POST /api/v1/feeds/opml`` imports a file.

The format and our namespace are ``shared/webmaster/opml.py``; an import registers each outline as ``POST
/api/v1/feeds`` would (``shared/webmaster/opml_import.py``) and answers ``200`` with every line's result
(``added``, ``updated``, ``unchanged``, ``refused`` and why). A file that cannot be read at all is
``422`` naming ``body``. Idempotent: the same file again says ``unchanged`` for every line.
"""

from __future__ import annotations

from aiohttp import web

from cubes.api.auth import TENANT
from cubes.api.bodies import check_declared_size, check_media_type, read_body
from cubes.api.context import ctx_of
from cubes.api.errors import FieldError, ValidationFailed, json_response
from cubes.api.feeds import registry_of, unavailable_on_outage
from shared.webmaster.opml import MAX_BYTES, OpmlRefused, write_opml
from shared.webmaster.opml_import import import_opml

__all__ = ["OPML_TYPES", "add_routes"]

#: what an OPML file is sent as (text/x-opml is what readers use; XML types are accepted too)
OPML_TYPES = frozenset({"text/x-opml", "application/xml", "text/xml"})


async def export_opml(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    tenant_id: str = request[TENANT]
    tenant = await ctx.stores.tenants.get_tenant(tenant_id)
    feeds = [f for f in await ctx.stores.feeds.list(tenant_id) if not f.deleted]
    body = write_opml(feeds, title=f"turbocubes feeds of {tenant.name if tenant else tenant_id}")
    return web.Response(
        body=body,
        content_type="text/x-opml",
        charset="utf-8",
        headers={"Content-Disposition": 'attachment; filename="turbocubes-feeds.opml"'},
    )


async def import_feeds(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    check_media_type(request, OPML_TYPES)
    check_declared_size(request, MAX_BYTES)
    body = await read_body(request, MAX_BYTES)
    try:
        report = await unavailable_on_outage(import_opml(registry_of(ctx), ctx.stores.tenants, request[TENANT], body))
    except OpmlRefused as exc:
        raise ValidationFailed([FieldError("body", str(exc))]) from None
    return json_response({"lines": [r.as_dict() for r in report.lines], "counts": report.counts(), "more": report.more})


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_get("/api/v1/feeds/opml", export_opml, name="feeds.opml_out", allow_head=False)
    router.add_post("/api/v1/feeds/opml", import_feeds, name="feeds.opml_in")
