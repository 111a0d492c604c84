"""The wordstat cube: counts answered searches for Wordstat-style frequencies (docs/architecture.md section 3)."""

from __future__ import annotations

from dataclasses import replace

from cubes.wordstat.handler import WordstatHandler
from shared.config import Settings
from shared.runtime.cube import Cube, Timer
from shared.runtime.deps import Deps

__all__ = ["CUBE", "build"]

#: how often old event ids are forgotten (the window is two weeks: hourly is plenty)
_FORGET_EVERY_S = 3600.0
#: handler calls at once: each only adds its search to the batch being gathered and returns (its
#: input's commit waits for the batch, batch.py), so lanes never wait for the store
_LANES = 1024


CUBE = Cube(name="wordstat", inputs=("search.queries",), replicable=True)


async def build(settings: Settings, deps: Deps) -> Cube:
    handler = WordstatHandler((await deps.stores()).wordstat, settings.wordstat, deps.clock)
    return replace(
        CUBE,
        handler=handler.handle,
        concurrency=_LANES,
        timers=(Timer(name="wordstat-forget", interval_s=_FORGET_EVERY_S, fn=handler.forget),),
    )
