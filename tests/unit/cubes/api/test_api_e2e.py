"""End to end on the embedded engines: upload -> partner.uploads -> the real parser cube -> task status."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from aiohttp.test_utils import TestClient, TestServer

from cubes.frontend.app import create_app as create_frontend
from cubes.kvwriter.handler import KvwriterHandler
from cubes.parser.cube import build as build_parser
from shared.messages import Document
from shared.runtime import run_cube
from shared.stores import Page
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


async def test_a_debug_uploads_preview_links_open_the_preview(tmp_path: Path) -> None:
    """The links were ``/turbo?url=...&preview=<task>``: a 404 for a new URL, the live page for
    a published one; the tests compared only the link string. Here the link is followed."""
    async with ApiHarness(tmp_path) as api:
        _, token = await api.tenant()
        live = Page(url="https://a.partner.test/p/0", host="a.partner.test", version=1, html="<p>THE LIVE PAGE</p>")
        await api.stores.pages.upsert(live)  # an already published URL: the preview must not show it
        task_id = (await (await api.upload(token, rss(2), mode="debug")).json())["task_id"]
        await _parse_one(api)
        done = await (await api.client.get(f"/api/v1/uploads/{task_id}", headers=api.auth(token))).json()
        assert len(done["preview_urls"]) == 2
        writer = KvwriterHandler(api.stores.pages, api.settings)
        for doc in await api.messages("documents.parsed"):
            assert isinstance(doc, Document)
            await writer.handle(doc.model_copy(update={"media_ready_at": doc.parsed_at}))
        frontend = create_frontend(api.settings, api.stores)
        async with TestClient(TestServer(frontend, host="127.0.0.1", port=0)) as browser:
            for link, n in zip(sorted(done["preview_urls"]), (0, 1), strict=True):
                parts = urlsplit(link)
                assert f"{parts.scheme}://{parts.netloc}" == api.settings.frontend.public_url
                r = await browser.get(f"{parts.path}?{parts.query}")
                assert r.status == 200, link
                body = await r.text()
                assert f"Item {n}" in body
                assert "THE LIVE PAGE" not in body
                assert r.headers["X-Robots-Tag"] == "noindex"


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
