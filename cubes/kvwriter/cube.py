"""The kvwriter cube: renders ready documents into the KV page store (DESIGN.md section 3)."""

from __future__ import annotations

from cubes.kvwriter.handler import KvwriterHandler
from shared.config import Settings
from shared.runtime.cube import Cube
from shared.runtime.deps import Deps

__all__ = ["build"]


async def build(settings: Settings, deps: Deps) -> Cube:
    handler = KvwriterHandler((await deps.stores()).pages, settings, deps.clock)
    return Cube(
        name="kvwriter",
        inputs=("documents.ready", "documents.deleted"),
        outputs=(),
        handler=handler.handle,
    )
