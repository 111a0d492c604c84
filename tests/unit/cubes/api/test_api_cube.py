"""The api cube declares its outputs and serves the app on ``settings.api.host:port`` as a Service."""

from __future__ import annotations

from pathlib import Path

import aiohttp

from cubes.api.cube import build
from shared.runtime import open_deps
from tests.unit.cubes.api.apikit import api_settings


async def test_the_cube_serves_the_api_on_its_port(tmp_path: Path) -> None:
    settings = api_settings(tmp_path, port=0)
    deps = await open_deps(settings)
    try:
        cube = await build(settings, deps)
        assert cube.name == "api"
        assert cube.inputs == ()
        assert set(cube.outputs) == {"feeds.registry", "partner.uploads", "documents.deleted"}
        (service,) = cube.services
        await service.start()
        try:
            assert cube.status is not None
            url = cube.status()["url"]
            assert url.startswith("http://127.0.0.1:")
            assert not url.endswith(":0")
            async with aiohttp.ClientSession() as session:
                async with session.get(url + "/api/v1/openapi.json") as resp:
                    assert resp.status == 200
                    assert (await resp.json())["openapi"] == "3.1.0"
                async with session.get(url + "/api/v1/feeds") as resp:
                    assert resp.status == 401
        finally:
            await service.stop()
    finally:
        await deps.close()
