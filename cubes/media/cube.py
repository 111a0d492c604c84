"""The media cube: documents.parsed -> documents.ready, or image orders + a parked document (docs/architecture.md
section 3)."""

from __future__ import annotations

from dataclasses import replace

from cubes.media.handler import MediaHandler
from shared.config import Settings
from shared.runtime.cube import Cube
from shared.runtime.deps import Deps

__all__ = ["CUBE", "build"]


CUBE = Cube(
    name="media",
    inputs=("documents.parsed",),
    outputs=("documents.ready", "crawl.requests"),
    replicable=True,
)


async def build(settings: Settings, deps: Deps) -> Cube:
    stores = await deps.stores()
    handler = MediaHandler(settings, stores.images, stores.delay, deps.clock, stores.problems)
    return replace(CUBE, handler=handler.handle)
