"""The console's list of uploads and checks: newest first, filtered, older pages, only the tenant's own."""

from __future__ import annotations

import re
from datetime import timedelta

from shared.stores import Task, TaskMode, TaskStatus
from tests.unit.cubes.frontend.test_console import HOST, T0, Env, env

__all__ = ["env"]  # the fixture, re-exported for pytest


def _listed(body: str) -> list[str]:
    table = body.split('id="tasks"', 1)[1].split("</table>", 1)[0] if "<table" in body else ""
    return re.findall(r'href="/console/uploads/([0-9a-z-]+)"', table)


async def _made(e: Env, tenant_id: str, n: int) -> list[str]:
    ids = []
    for i in range(n):
        task = Task(
            task_id=f"task-{i:03d}",
            tenant_id=tenant_id,
            host=HOST,
            mode=TaskMode.debug if i % 3 == 0 else TaskMode.production,
        )
        await e.stores.tasks.create(task, now=T0 + timedelta(seconds=i))
        ids.append(task.task_id)
    return ids[::-1]  # newest first


async def test_every_task_page_by_page_and_by_filter(env: Env) -> None:
    tenant_id, token = await env.tenant()
    newest_first = await _made(env, tenant_id, 55)
    await env.stores.tasks.update("task-007", status=TaskStatus.done)
    await env.sign_in(token)
    home = await (await env.client.get("/console")).text()
    assert 'href="/console/uploads"' in home  # the home page's 20 lead to the whole list
    first = await (await env.client.get("/console/uploads")).text()
    assert _listed(first) == newest_first[:50]
    older = re.search(r'href="(/console/uploads\?[^"]+)" id="older"', first)
    assert older, first[-800:]
    second = await (await env.client.get(older.group(1).replace("&amp;", "&"))).text()
    assert _listed(second) == newest_first[50:]
    assert 'id="older"' not in second

    debug = await (await env.client.get("/console/uploads", params={"mode": "debug"})).text()
    assert _listed(debug) == [t for t in newest_first if int(t[-3:]) % 3 == 0]
    assert "nothing published: previews only" in debug
    done = await (await env.client.get("/console/uploads", params={"status": "done"})).text()
    assert _listed(done) == ["task-007"]
    bad = await (await env.client.get("/console/uploads", params={"status": "lost", "mode": "debug"})).text()
    assert "status: one of queued, processing, done, failed" in bad
    assert _listed(bad) == _listed(debug)  # a filter that cannot be read filters nothing; the others still do


async def test_another_tenant_sees_none_of_them(env: Env) -> None:
    a_id, _ = await env.tenant()
    await _made(env, a_id, 3)
    _, b_token = await env.tenant("b.partner.test")
    await env.sign_in(b_token)
    for params in ({}, {"host": HOST}):
        resp = await env.client.get("/console/uploads", params=params)
        body = await resp.text()
        assert resp.status == 200
        assert _listed(body) == []
        assert "task-00" not in body
