"""The indexer cube: written pages -> the search index, in batches (docs/architecture.md section 3)."""

from __future__ import annotations

from cubes.indexer.handler import Indexer
from shared.config import Settings
from shared.runtime.cube import Cube, Timer
from shared.runtime.deps import Deps

__all__ = ["build"]


async def build(settings: Settings, deps: Deps) -> Cube:
    # its input is the store's queue of written pages (shared/stores/search.py), not a topic
    indexer = Indexer((await deps.stores()).index_queue, settings.indexer)
    return Cube(
        name="indexer",
        timers=(Timer("search-index", settings.indexer.interval_s, indexer.round),),
        status=indexer.status,
    )
