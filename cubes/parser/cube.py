"""The parser cube's wiring (docs/architecture.md section 3; docs/conventions.md rule 1).

Consumes ``crawl.feeds`` (fetched registered feeds), ``partner.uploads``
(pushed payloads) and ``feeds.registry`` (a deleted feed's pages go with it,
``lifecycle.py``); publishes ``documents.parsed`` (key: canonical URL) and
``documents.deleted``. The work is in ``handler.py``; parsing itself is pure
(``feed.parse_feed``) and also serves ``turbocubes parse`` and the benchmark.
"""

from __future__ import annotations

from dataclasses import replace

from cubes.parser.handler import ParserHandler
from cubes.parser.preparing import PRELOAD
from cubes.parser.sanitize import ContentCleaner
from shared.config import Settings
from shared.runtime.cube import Cube
from shared.runtime.deps import Deps

__all__ = ["CUBE", "build"]


CUBE = Cube(
    name="parser",
    inputs=("crawl.feeds", "partner.uploads", "feeds.registry"),
    outputs=("documents.parsed", "documents.deleted", "crawl.requests"),  # a summary item's page (fulltext.py)
    replicable=True,
)


async def build(settings: Settings, deps: Deps) -> Cube:
    handler = ParserHandler(
        await deps.stores(),
        deps.blobs,
        settings.parser,
        deps.clock,
        cleaner=ContentCleaner(settings.kvwriter.video_hosts, hold_incomplete=settings.media.hold_incomplete),
        max_body_bytes=settings.parser.max_body_bytes,
        offload=deps.offload(*PRELOAD),  # items past 16 KB of HTML (preparing.py)
    )
    return replace(
        CUBE,
        handler=handler.handle,
        # a big catalog's first load is one long handler call (see handler.py, "Big catalogs")
        handler_timeout_s=settings.parser.handler_timeout_s,
        concurrency=settings.parser.concurrency,
    )
