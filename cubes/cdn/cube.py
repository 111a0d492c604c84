"""The cdn cube: crawl.images -> checked, content-addressed CDN objects -> media.cached (DESIGN.md s.3)."""

from __future__ import annotations

from cubes.cdn.handler import CdnHandler
from shared.config import Settings
from shared.runtime.cube import Cube
from shared.runtime.deps import Deps

__all__ = ["build"]


async def build(settings: Settings, deps: Deps) -> Cube:
    handler = CdnHandler(settings, (await deps.stores()).images, await deps.cdn(), await deps.blobs(), deps.clock)
    return Cube(
        name="cdn",
        inputs=("crawl.images",),
        # crawl.requests: a fetch that failed for now is ordered again (see handler.py)
        outputs=("media.cached", "crawl.requests"),
        handler=handler.handle,
    )
