"""An upload task lists its first items and counts every one (``status.MAX_TASK_ITEMS``).

Before, an upload of 100,000 empty ``<offer/>`` stored 100,000 results (8 MB of JSON), written and
then, at every read of the task (the API's status, the console), decoded on the event loop: 3.6 s a
read, while every other request of the process waited.
"""

from __future__ import annotations

from pathlib import Path

from cubes.parser.cube import build as build_parser
from cubes.parser.status import MAX_TASK_ITEMS
from shared.runtime import run_cube
from tests.unit.cubes.api.apikit import ApiHarness, api_settings

HOST = "a.partner.test"


async def test_a_huge_upload_lists_its_first_items_and_counts_them_all(tmp_path: Path) -> None:
    empty = 3 * MAX_TASK_ITEMS
    offers = "<offer/>" * empty + f'<offer id="1"><url>https://{HOST}/p/1</url><name>N</name><price>5</price></offer>'
    body = f'<?xml version="1.0"?><yml_catalog><shop><url>https://{HOST}/</url><offers>{offers}</offers></shop></yml_catalog>'
    async with ApiHarness(tmp_path, settings=api_settings(tmp_path, tenant_bytes_per_s=1e9)) as api:
        _, token = await api.tenant(HOST)
        resp = await api.upload(token, body.encode(), host=HOST, fmt="yml", content_type="application/xml")
        task_id = (await resp.json())["task_id"]
        await run_cube(await build_parser(api.settings, api.deps), api.deps, max_messages=1, idle_timeout=10.0)
        task = await (await api.client.get(f"/api/v1/uploads/{task_id}", headers=api.auth(token))).json()
        assert task["counts"] == {"rejected": empty, "ok": 1}
        assert len(task["items"]) == MAX_TASK_ITEMS
        assert task["items_more"] == empty + 1 - MAX_TASK_ITEMS
        assert task["problem_counts"] == {"item.no_link": empty}
        stored = await api.stores.tasks.get(task_id)
        assert stored is not None
        assert len(stored.items) == MAX_TASK_ITEMS
        assert stored.item_total == empty + 1
