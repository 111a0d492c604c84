"""The indexer cube: written pages -> the search index, in batches (docs/architecture.md section 3)."""

from __future__ import annotations

from dataclasses import replace

from cubes.indexer.handler import Indexer
from shared.config import Settings
from shared.runtime.cube import Cube, Timer
from shared.runtime.deps import Deps

__all__ = ["CUBE", "build"]


#: its input is the store's queue of written pages (shared/stores/search.py), not a topic
CUBE = Cube(name="indexer")


async def build(settings: Settings, deps: Deps) -> Cube:
    indexer = Indexer((await deps.stores()).index_queue, settings.indexer)
    return replace(
        CUBE,
        timers=(Timer("search-index", settings.indexer.interval_s, indexer.round),),
        status=indexer.status,
    )
