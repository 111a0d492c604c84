"""The frontend cube starts its HTTP service and stops it (cubes/frontend/cube.py)."""

from __future__ import annotations

from pathlib import Path

from aiohttp import ClientSession

from cubes.registry import cube_module
from shared.config import Settings
from shared.runtime import open_deps
from shared.stores import Feed


async def test_service_serves_then_stops(tmp_path: Path) -> None:
    settings = Settings().replace(
        bus={"url": f"sqlite:///{tmp_path}/bus.db"},
        store={"url": f"sqlite:///{tmp_path}/store.db"},
        cdn={"url": f"file://{tmp_path}/cdn"},
        frontend={"port": 0},
    )
    deps = await open_deps(settings)
    try:
        stores = await deps.stores()
        await stores.feeds.upsert_feed(
            Feed(feed_id="f1", url="https://news.example/rss", host="news.example", format="rss")
        )
        await stores.feeds.update_schedule("f1", fetch_result="ok", consecutive_failures=2)
        cube = await cube_module("frontend").build(settings, deps)
        assert cube.inputs == ()
        assert cube.status is not None
        (service,) = cube.services
        await service.start()
        try:
            (url,) = cube.status()["listening"]
            assert url.startswith("http://127.0.0.1:")
            async with ClientSession() as http:
                async with http.get(url + "/healthz") as r:
                    assert r.status == 200
                async with http.get(url + "/status") as r:
                    body = await r.text()
                    # pipeline aggregates (cubes/frontend/status/): one feed, failing; no host named
                    assert "<b>1</b><span>feeds whose fetches fail</span>" in body
                    assert "news.example" not in body
                async with http.get(url + "/") as r:
                    assert "registered feeds" in await r.text()
        finally:
            await service.stop()
        assert cube.status()["listening"] == []
    finally:
        await deps.close()
