"""The console's OPML: ``GET /console/opml`` downloads the tenant's feeds, ``POST /console/opml`` imports a file.

The API's formats and rules (``shared/webmaster/opml.py``, ``shared/webmaster/opml_import.py``): each outline a
registration, each line's result on the page that answers. The import form is multipart (a file
input), so it is read here rather than by the routes' ``action`` (whose forms are a few text
fields): the same checks, in the same order -- our own origin, a session, its CSRF token.
"""

from __future__ import annotations

from aiohttp import web

from cubes.frontend.console import views
from cubes.frontend.console.context import ConsoleContext, NoBus
from shared.errors import TurbocubesError
from shared.webmaster.opml import MAX_BYTES, OpmlRefused, write_opml
from shared.webmaster.opml_import import import_opml

__all__ = ["add_opml_routes"]


def add_opml_routes(app: web.Application, c: ConsoleContext) -> None:
    async def export(request: web.Request) -> web.StreamResponse:
        signed = await c.gate.signed(request)
        if signed is None:
            return views.login_page(c)
        tenant = await c.stores.tenants.get_tenant(signed.tenant_id)
        feeds = [f for f in await c.stores.feeds.list(signed.tenant_id) if not f.deleted]
        return web.Response(
            body=write_opml(feeds, title=f"turbocubes feeds of {tenant.name if tenant else signed.tenant_id}"),
            content_type="text/x-opml",
            charset="utf-8",
            headers={
                "Content-Disposition": 'attachment; filename="turbocubes-feeds.opml"',
                "Cache-Control": "no-store",
                "X-Content-Type-Options": "nosniff",
                # a file, never a page to frame (the console's pages say the same)
                "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
                "X-Frame-Options": "DENY",
            },
        )

    async def import_(request: web.Request) -> web.StreamResponse:
        if not c.gate.same_origin(request):
            return views.login_page(c, error="This form came from another site: refused.", status=403)
        signed = await c.gate.signed(request)
        if signed is None:
            return views.login_page(c, error="Your session has ended: sign in again.", status=401)
        refused = views.refused_for_role(c, signed, "POST")  # a viewer registers no feed, by file either
        if refused is not None:
            return refused
        if (request.content_length or 0) > MAX_BYTES + 16 * 1024:
            return await views.home_page(c, signed, feed_errors=[f"the file is over {MAX_BYTES:,} bytes"], status=413)
        try:
            form = await request.post()
        except (UnicodeDecodeError, LookupError) as exc:  # as every console form: not UTF-8 is a 400
            return views.login_page(c, error=f"the form is not valid UTF-8 text: {exc.__class__.__name__}.", status=400)
        except ValueError as exc:
            return views.login_page(c, error=f"the form cannot be read: {exc}.", status=400)
        csrf = form.get("csrf")
        if not isinstance(csrf, str) or not c.gate.csrf_ok(signed, csrf):
            return views.login_page(c, error="This form is out of date: sign in again.", status=403)
        upload = form.get("opml")
        body = upload.file.read(MAX_BYTES + 1) if isinstance(upload, web.FileField) else b""
        try:
            report = await import_opml(c.registry(), c.stores.tenants, signed.tenant_id, body)
        except OpmlRefused as exc:
            return await views.home_page(c, signed, feed_errors=[f"OPML: {exc}"], status=422)
        except (NoBus, TurbocubesError) as exc:
            return await views.home_page(c, signed, feed_errors=[f"not now: {exc}"], status=503)
        return c.page("console/opml.html", "OPML import", signed=signed, report=report)

    app.router.add_get("/console/opml", export)
    app.router.add_post("/console/opml", import_)
