"""The cdn cube: crawl.images -> checked, content-addressed CDN objects -> media.cached (docs/architecture.md s.3)."""

from __future__ import annotations

from dataclasses import replace

from cubes.cdn.handler import CdnHandler
from cubes.cdn.recheck import Rechecks
from shared.config import Settings
from shared.runtime.cube import Cube, Timer
from shared.runtime.deps import Deps

__all__ = ["CUBE", "build"]


CUBE = Cube(
    name="cdn",
    inputs=("crawl.images",),
    # crawl.requests: a fetch that failed for now is ordered again (see handler.py), and cached
    # images are re-checked at their source (recheck.py)
    outputs=("media.cached", "crawl.requests"),
    replicable=True,
)


async def build(settings: Settings, deps: Deps) -> Cube:
    images = (await deps.stores()).images
    handler = CdnHandler(settings, images, await deps.cdn(), await deps.blobs(), deps.clock)
    rechecks = Rechecks(settings, images, deps.clock)
    return replace(
        CUBE,
        handler=handler.handle,
        timers=(Timer("image-recheck", settings.media.recheck_sweep_s, rechecks.sweep),)
        if settings.media.recheck_s > 0
        else (),
    )
