"""The console's list of upload tasks and feed checks: ``GET /console/uploads?host=&mode=&status=&cursor=``.

The API's list (``GET /api/v1/uploads``) in a page: the same reading of the filters
(``shared.webmaster.task_list``), newest first, a link to the older ones. A filter that cannot be read is
said on the page and filters nothing. Only the signed-in tenant's tasks are ever read.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlencode

from aiohttp import web

from cubes.frontend.console.context import ConsoleContext
from cubes.frontend.console.session import Signed
from cubes.frontend.status.view import moment
from shared.stores import TaskMode, TaskStatus
from shared.webmaster.task_list import cursor_of, read_task_query
from shared.webmaster.words import task_word

__all__ = ["task_list_page"]

#: tasks on a page of the console's list
_PAGE = 50


async def task_list_page(c: ConsoleContext, signed: Signed, params: Mapping[str, str]) -> web.Response:
    query, errors = read_task_query(signed.tenant_id, params, limit=_PAGE)
    page = await c.stores.tasks.page(query)
    now = c.clock.time()
    rows = [(t, moment(t.created_at, now), task_word(t.status.value)) for t in page.tasks]
    kept = {k: params[k] for k in ("host", "mode", "status") if params.get(k) and k not in errors}
    cursor = cursor_of(page.next_after)
    older = "/console/uploads?" + urlencode({**kept, "cursor": cursor}) if cursor else ""
    return c.page(
        "console/tasks.html",
        "Uploads and checks",
        signed=signed,
        tasks=rows,
        hosts=[h.host for h in await c.claims(signed.tenant_id)],
        modes=[m.value for m in TaskMode],
        statuses=[s.value for s in TaskStatus],
        chosen=kept,
        errors=[f"{name}: {why}" for name, why in errors.items()],
        older=older,
        paged=query.after is not None,
    )
