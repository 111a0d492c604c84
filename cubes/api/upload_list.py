"""``GET /api/v1/uploads``: the caller's upload tasks, newest first (docs/architecture.md section 1, "partner").

As the Turbo API lists its upload tasks: ``?host=&mode=production|debug&status=queued|processing|done|failed
&cursor=&limit=`` (``shared.webmaster.task_list`` reads them, as the console's list does). Every task is the
caller's own: another tenant's never appear, whatever the filters name. A task here is a summary (its
counts by item status and by problem code); ``status_url`` gives the whole of it. ``next_cursor`` is
absent on the last page.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from cubes.api.auth import TENANT
from cubes.api.context import ctx_of
from cubes.api.errors import FieldError, ValidationFailed, json_response
from cubes.api.params import HOST_MAX, too_long
from shared.stores import Task
from shared.webmaster.task_list import cursor_of, read_task_query

__all__ = ["add_routes", "task_summary"]


def task_summary(task: Task) -> dict[str, Any]:
    return {
        "task_id": task.task_id,
        "host": task.host,
        "mode": task.mode.value,
        "status": task.status.value,
        "source_url": task.source_url,
        "created_at": task.created_at,
        "updated_at": task.updated_at,
        "counts": task.counts(),
        "problem_counts": dict(task.problem_counts),
        "status_url": f"/api/v1/uploads/{task.task_id}",
    }


async def list_uploads(request: web.Request) -> web.StreamResponse:
    ctx = ctx_of(request)
    query, errors = read_task_query(request[TENANT], request.query)
    if (long := too_long("host", request.query.get("host", ""), HOST_MAX)) is not None:
        errors["host"] = long.message
    if errors:
        raise ValidationFailed([FieldError(name, why) for name, why in errors.items()])
    page = await ctx.stores.tasks.page(query)
    body: dict[str, Any] = {"tasks": [task_summary(t) for t in page.tasks]}
    if (cursor := cursor_of(page.next_after)) is not None:
        body["next_cursor"] = cursor
    return json_response(body)


def add_routes(router: web.UrlDispatcher) -> None:
    router.add_get("/api/v1/uploads", list_uploads, name="uploads.list", allow_head=False)
