"""The frontend cube: serves Turbo pages, search and status over HTTP (DESIGN.md section 3)."""

from __future__ import annotations

import logging
from typing import Any

from aiohttp import web

from cubes.frontend.app import create_app
from shared.config import Settings
from shared.runtime.cube import Cube, Service
from shared.runtime.deps import Deps

__all__ = ["build"]

log = logging.getLogger(__name__)


async def build(settings: Settings, deps: Deps) -> Cube:
    stores = await deps.stores()
    # only the embedded file CDN is served from here; an S3 CDN has its own public URL
    cdn = await deps.cdn() if settings.cdn.url.startswith("file://") else None
    runner = web.AppRunner(create_app(settings, stores, cdn), access_log=None)

    def urls() -> list[str]:
        return [f"http://{a[0]}:{a[1]}" for a in runner.addresses] if runner.server else []

    async def start() -> None:
        await runner.setup()
        await web.TCPSite(runner, settings.frontend.host, settings.frontend.port).start()
        log.info("frontend serving on %s", ", ".join(urls()))

    def status() -> dict[str, Any]:
        return {"listening": urls(), "public_url": settings.frontend.public_url}

    return Cube(
        name="frontend",
        services=(Service(name="frontend-http", start=start, stop=runner.cleanup),),
        status=status,
    )
