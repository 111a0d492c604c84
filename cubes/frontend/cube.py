"""The frontend cube: serves Turbo pages, search and status over HTTP (docs/architecture.md section 3)."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from aiohttp import web

from cubes.frontend.app import create_app
from cubes.frontend.queries import QueryEvents
from shared.config import Settings
from shared.ports import listen
from shared.runtime.cube import Cube, Service
from shared.runtime.deps import Deps

__all__ = ["CUBE", "build"]

log = logging.getLogger(__name__)


CUBE = Cube(name="frontend", outputs=("search.queries",))


async def build(settings: Settings, deps: Deps) -> Cube:
    stores = await deps.stores()
    # only the embedded file CDN is served from here; an S3 CDN has its own public URL
    cdn = await deps.cdn() if settings.cdn.url.startswith("file://") else None
    events = QueryEvents(deps.publish, queue_max=settings.search.queue_max, clock=deps.clock)
    runner = web.AppRunner(
        create_app(
            settings, stores, cdn, clock=deps.clock, events=events, publish=deps.publish, resolver=deps.resolver
        ),
        access_log=None,
    )

    def urls() -> list[str]:
        return [f"http://{a[0]}:{a[1]}" for a in runner.addresses] if runner.server else []

    async def start() -> None:
        events.start()
        await runner.setup()
        site = web.TCPSite(runner, settings.frontend.host, settings.frontend.port)
        await listen(site.start, key="frontend.port", host=settings.frontend.host, port=settings.frontend.port)
        log.info("frontend serving on %s", ", ".join(urls()))

    async def stop() -> None:
        await runner.cleanup()
        await events.stop()  # after the server: no search is answered without being queued

    def status() -> dict[str, Any]:
        return {
            "listening": urls(),
            "public_url": settings.frontend.public_url,
            "search_events_pending": events.pending,
            "search_events_dropped": events.dropped,
        }

    return replace(
        CUBE,
        services=(Service(name="frontend-http", start=start, stop=stop),),
        status=status,
    )
