"""The kvwriter cube: renders ready documents into the KV page store (docs/architecture.md section 3)."""

from __future__ import annotations

from dataclasses import replace

from cubes.kvwriter.branding import BrandingLookup
from cubes.kvwriter.handler import KvwriterHandler
from cubes.kvwriter.render import PRELOAD
from shared.config import Settings
from shared.runtime.cube import Cube
from shared.runtime.deps import Deps

__all__ = ["CUBE", "build"]


CUBE = Cube(
    name="kvwriter",
    # media.cached: a copy that replaces another (a source image changed) renders its pages again, and a
    # host's logo in the CDN renders that host's branded pages; hosts.branding: a branding changed
    inputs=("documents.ready", "documents.deleted", "media.cached", "hosts.branding"),
    replicable=True,
)


async def build(settings: Settings, deps: Deps) -> Cube:
    stores = await deps.stores()
    # documents past 16 KB of HTML are rendered in a worker process (handler.rendered)
    handler = KvwriterHandler(
        stores.pages,
        settings,
        deps.clock,
        stores.images,
        brands=BrandingLookup(stores),
        offload=deps.offload(*PRELOAD),
    )
    return replace(CUBE, handler=handler.handle)
