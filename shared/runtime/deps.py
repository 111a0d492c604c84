"""What a cube's ``build(settings, deps)`` gets: the engines, opened once per process.

``Deps`` is built by ``open_deps(settings)`` (the CLI does it) and closed
with ``close()``. Stores and blob stores are opened lazily on first use, so a
cube that needs no database never opens one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from shared.clock import Clock, SystemClock
from shared.config import Settings
from shared.runtime.shutdown import bounded

if TYPE_CHECKING:
    from shared.blobs.base import BlobStore
    from shared.bus.base import Bus
    from shared.offload import Offload
    from shared.runtime.cube import Output
    from shared.stores import Stores

__all__ = ["Deps", "Publish"]

#: publish outputs and wait until each is durable (what the api cube uses to accept an upload)
Publish = Callable[["Sequence[Output]"], Awaitable[None]]


@dataclass
class Deps:
    settings: Settings
    bus: Bus
    publish: Publish
    clock: Clock = field(default_factory=SystemClock)
    #: an aiohttp resolver override; tests map *.partner.test to 127.0.0.1
    resolver: Any = None
    _stores: Stores | None = None
    _blobs: BlobStore | None = None
    _cdn: BlobStore | None = None
    _offload: Offload | None = None
    _closers: list[Callable[[], Awaitable[None]]] = field(default_factory=list)

    async def stores(self) -> Stores:
        """The stores (opened and migrated on first use)."""
        if self._stores is None:
            from shared.stores import open_configured

            self._stores = await open_configured(self.settings.store)
            self._closers.append(self._stores.close)
        return self._stores

    async def blobs(self) -> BlobStore:
        """Where large message bodies go."""
        if self._blobs is None:
            from shared.blobs import open_blobs

            self._blobs = await open_blobs(self.settings.blobs.url)
            self._closers.append(self._blobs.close)
        return self._blobs

    async def cdn(self) -> BlobStore:
        """Where cached media goes (served at settings.cdn.public_base_url)."""
        if self._cdn is None:
            from shared.blobs import open_blobs

            self._cdn = await open_blobs(self.settings.cdn.url, public_base_url=self.settings.cdn.public_base_url)
            self._closers.append(self._cdn.close)
        return self._cdn

    def offload(self, *preload: str) -> Offload:
        """The process's worker processes for CPU-heavy partner content (``shared/offload.py``; started on
        first use); ``preload``: the modules of the functions a cube will run there."""
        if self._offload is None:
            from shared.offload import Offload

            self._offload = Offload(self.settings.runtime.offload_workers)
            self._closers.append(self._close_offload)
        self._offload.preload = tuple(dict.fromkeys((*self._offload.preload, *preload)))
        return self._offload

    async def _close_offload(self) -> None:
        if self._offload is not None:
            self._offload.close()

    async def close(self) -> None:
        """Close every engine opened, the last opened first; each under a deadline (``shutdown.py``),
        so that one that does not close (a peer gone, a driver stuck) cannot keep the process alive."""
        for close in reversed(self._closers):
            await bounded(getattr(close, "__qualname__", "an engine"), close)
        self._closers.clear()
