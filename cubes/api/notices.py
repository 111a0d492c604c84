"""``GET /api/v1/notices``: what changed about the rights on the caller's origins (docs/architecture.md section 6).

Each notice is a change of a right on an origin the caller holds or held a right on
(``shared.webmaster.rights``): its own right granted, lapsing, restored, ended or withdrawn, and another
tenant's right on the same origin granted, ended or withdrawn -- never naming the other tenant.
The newest first.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from cubes.api.auth import TENANT
from cubes.api.context import ctx_of
from cubes.api.errors import json_response
from shared.stores import Notice

__all__ = ["add_routes", "notice_json"]

#: notices answered (the newest)
_LIMIT = 100


def notice_json(n: Notice) -> dict[str, Any]:
    e = n.event
    return {
        "notice_id": n.notice_id,
        "at": e.at,
        "origin": e.origin,
        "host": e.host,
        "change": e.change.value,
        "yours": n.yours,
        "message": n.message,
        "ends_after": e.ends_at,
        "method": e.method,
    }


async def list_notices(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    notices = await ctx.stores.notices.notices(request[TENANT], limit=_LIMIT)
    return json_response({"notices": [notice_json(n) for n in notices]})


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_get("/api/v1/notices", list_notices, name="notices.list", allow_head=False)
