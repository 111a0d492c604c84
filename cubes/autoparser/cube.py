"""The autoparser cube: crawl.pages -> CatBoost block classifier -> documents.parsed (docs/architecture.md s.3).

It also reads ``media.cached`` to learn which hosts forbid their images in robots.txt
and marks those hosts *autoparser unavailable* (see ``hosts.py``). Each host's template
and calibration live in the autoparser store (``knowledge.py``), and pages a full-text
feed owns become training pairs there (``handler.py``). The model is loaded
at build time, so a missing or corrupt model file fails the start with a
``ConfigError`` naming ``autoparser.model_path``.
"""

from __future__ import annotations

from dataclasses import replace

from cubes.autoparser.extract import Extractor
from cubes.autoparser.handler import AutoparserHandler
from cubes.autoparser.hosts import HostMarker
from shared.config import Settings
from shared.runtime.cube import Cube
from shared.runtime.deps import Deps

__all__ = ["CUBE", "build"]


CUBE = Cube(
    name="autoparser",
    inputs=("crawl.pages", "media.cached"),
    outputs=("documents.parsed", "documents.deleted"),
    replicable=True,
)


async def build(settings: Settings, deps: Deps) -> Cube:
    extractor = Extractor(settings.autoparser.model_path)  # fails fast on a bad model file
    stores = await deps.stores()
    handler = AutoparserHandler(
        settings.autoparser,
        extractor,
        deps.blobs,
        hashes=stores.hashes,
        hosts=HostMarker(stores.feeds, deps.clock),
        clock=deps.clock,
        store=stores.autoparser,  # host templates, training pairs, host calibrations
        pages=stores.pages,  # a feed's full text of a page, for the pairs
        turbo_enabled=stores.tenants.turbo_enabled,  # a host whose Turbo pages are switched off: nothing
        problems=stores.problems,  # a page the completeness guard refused, for its webmaster
    )
    return replace(CUBE, handler=handler.handle)
