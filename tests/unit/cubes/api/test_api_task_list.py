"""``GET /api/v1/uploads``: a partner lists its tasks, newest first, filtered, page by page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.unit.cubes.api.apikit import ApiHarness, rss


async def _list(api: ApiHarness, token: str, **params: str) -> tuple[int, Any]:
    resp = await api.client.get("/api/v1/uploads", params=params, headers=api.auth(token))
    return resp.status, await resp.json()


async def test_the_tasks_of_a_tenant_newest_first_by_filter_and_cursor(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        tenant_id, token = await api.tenant("a.partner.test")
        await api.stores.tenants.add_host(tenant_id, "b.partner.test")
        await api.stores.tenants.set_verified(tenant_id, "b.partner.test", True)
        made = []
        for i, (host, mode) in enumerate(
            [("a.partner.test", None), ("a.partner.test", "debug"), ("b.partner.test", None), ("a.partner.test", None)]
        ):
            api.clock.advance(1)  # a second apart: newest first is the order they were made
            resp = await api.upload(token, rss(i + 1, host), host=host, mode=mode)
            assert resp.status == 202, await resp.text()
            made.append((await resp.json())["task_id"])
        status, body = await _list(api, token)
        assert status == 200
        assert [t["task_id"] for t in body["tasks"]] == made[::-1]
        assert "next_cursor" not in body
        first = body["tasks"][0]
        assert (first["host"], first["mode"], first["status"]) == ("a.partner.test", "production", "queued")
        assert first["status_url"] == f"/api/v1/uploads/{made[3]}"

        assert [t["task_id"] for t in (await _list(api, token, mode="debug"))[1]["tasks"]] == [made[1]]
        assert [t["task_id"] for t in (await _list(api, token, host="B.Partner.Test"))[1]["tasks"]] == [made[2]]
        assert (await _list(api, token, status="done"))[1]["tasks"] == []

        seen: list[str] = []
        params = {"limit": "3"}
        while True:
            status, page = await _list(api, token, **params)
            assert status == 200
            seen += [t["task_id"] for t in page["tasks"]]
            if "next_cursor" not in page:
                break
            params["cursor"] = page["next_cursor"]
        assert seen == made[::-1]


async def test_another_tenant_lists_none_of_them_and_bad_filters_are_named(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, a_token = await api.tenant("a.partner.test")
        _, b_token = await api.tenant("b.partner.test")
        resp = await api.upload(a_token, rss(1))
        task_id = (await resp.json())["task_id"]
        for params in ({}, {"host": "a.partner.test"}):
            status, body = await _list(api, b_token, **params)
            assert (status, body["tasks"]) == (200, [])
        status, body = await _list(api, a_token)
        assert [t["task_id"] for t in body["tasks"]] == [task_id]
        # A's cursor in B's hands pages B's own tasks (none), never A's
        await api.upload(a_token, rss(2))
        status, body = await _list(api, a_token, limit="1")
        status, theirs = await _list(api, b_token, cursor=body["next_cursor"])
        assert (status, theirs["tasks"]) == (200, [])

        status, body = await _list(api, a_token, mode="preview", status="lost", cursor="%%%", limit="0")
        assert status == 422
        fields = {e["field"] for e in body["fields"]}
        assert fields == {"mode", "status", "cursor", "limit"}, body
