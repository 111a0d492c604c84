"""The delay cube: media.cached (+ a deadline sweep) -> documents.ready (docs/architecture.md section 3)."""

from __future__ import annotations

from dataclasses import replace

from cubes.delay.handler import DelayHandler
from shared.config import Settings
from shared.runtime.cube import Cube, Timer
from shared.runtime.deps import Deps

__all__ = ["CUBE", "build"]


CUBE = Cube(name="delay", inputs=("media.cached",), outputs=("documents.ready",), replicable=True)


async def build(settings: Settings, deps: Deps) -> Cube:
    stores = await deps.stores()
    handler = DelayHandler(settings, stores.images, stores.delay, deps.clock, stores.problems)
    return replace(
        CUBE,
        handler=handler.handle,
        timers=(Timer("deadline-sweep", settings.delay.sweep_interval_s, handler.sweep),),
    )
