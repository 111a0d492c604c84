"""End to end on the embedded engines: upload -> partner.uploads -> the real parser cube -> task status."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from cubes.parser.cube import build as build_parser
from shared.runtime import run_cube
from tests.unit.cubes.api.apikit import ApiHarness, rss


async def _parse_one(api: ApiHarness) -> None:
    parser = await build_parser(api.settings, api.deps)
    stats = await run_cube(parser, api.deps, max_messages=1, idle_timeout=10.0)
    assert stats is not None


async def test_an_upload_is_followed_to_done_through_the_real_parser(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant()
        resp = await api.upload(token, rss(2))
        assert resp.status == 202
        task_id = (await resp.json())["task_id"]
        queued = await (await api.client.get(f"/api/v1/uploads/{task_id}", headers=api.auth(token))).json()
        assert queued["status"] == "queued"

        await _parse_one(api)

        done = await (await api.client.get(f"/api/v1/uploads/{task_id}", headers=api.auth(token))).json()
        assert done["status"] == "done", done
        assert sorted(i["url"] for i in done["items"]) == ["https://a.partner.test/p/0", "https://a.partner.test/p/1"]
        assert done["preview_urls"] == []  # production uploads publish, they do not preview


async def test_a_debug_upload_shows_frontend_preview_urls(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant()
        task_id = (await (await api.upload(token, rss(1), mode="debug")).json())["task_id"]
        await _parse_one(api)
        done = await (await api.client.get(f"/api/v1/uploads/{task_id}", headers=api.auth(token))).json()
        base = api.settings.frontend.public_url
        page = quote("https://a.partner.test/p/0", safe="")
        assert done["preview_urls"] == [f"{base}/turbo?url={page}&preview={task_id}"]


async def test_a_malformed_upload_ends_as_a_task_with_its_parse_errors(tmp_path: Path) -> None:
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant()
        resp = await api.upload(token, b"<rss><channel><item><title>x</title>")
        assert resp.status == 202
        task_id = (await resp.json())["task_id"]
        await _parse_one(api)
        got = await (await api.client.get(f"/api/v1/uploads/{task_id}", headers=api.auth(token))).json()
        assert got["status"] in ("failed", "done")
        assert got["errors"], got
