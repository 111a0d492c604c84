"""``POST /api/v1/feeds/check``: check a feed before registering it, publishing nothing.

{url} — the feed is fetched through the host's polite crawler lane (a
``crawl.requests`` message keyed by host, ``shared.webmaster.feeds.check_request``),
parsed as the parser cube parses feeds, and every page rendered as a preview
(``cubes/parser/checks.py``: the body is handled as a debug upload). ``202``
with an upload task whose status (``GET /api/v1/uploads/{task_id}``) gives
every item's result with its problems, the feed's problems and the preview
links. The host must be a verified host of the tenant, as for a registration
(the crawler fetches nobody else's site on a tenant's behalf), and the URL
passes the SSRF guard.

A body in hand (a feed not online yet) is checked the same way by
``POST /api/v1/uploads?host=H&format=F&mode=debug``.
"""

from __future__ import annotations

from aiohttp import web

from cubes.api.auth import TENANT, feed_authorizer
from cubes.api.bodies import read_json_object
from cubes.api.context import ctx_of
from cubes.api.errors import FieldError, ValidationFailed, json_response
from cubes.api.feeds import registry_of, unavailable_on_outage
from shared.urls import canonical_url

__all__ = ["add_routes"]

#: a check's body: a URL of up to 4,096 characters, 12 bytes each at most as JSON escapes them
_BODY_MAX = 64 * 1024


async def check_feed(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    tenant_id: str = request[TENANT]
    body = await read_json_object(request, _BODY_MAX)
    problems = [FieldError(k[:64], "unknown field") for k in sorted(set(body) - {"url"})[:10]]
    if problems:
        raise ValidationFailed(problems)

    owned = feed_authorizer(ctx.stores.tenants, tenant_id)
    task = await unavailable_on_outage(
        registry_of(ctx).check(body.get("url"), tasks=ctx.stores.tasks, tenant_id=tenant_id, authorize=owned)
    )
    status_url = f"/api/v1/uploads/{task.task_id}"
    console = ctx.settings.frontend.public_url.rstrip("/") + f"/console/uploads/{task.task_id}"
    return json_response(
        {
            "task_id": task.task_id,
            "url": canonical_url(str(body["url"])),
            "status_url": status_url,
            "console_url": console,
        },
        status=202,
        headers={"Location": status_url},
    )


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_post("/api/v1/feeds/check", check_feed, name="feeds.check")
