"""The embedded log's producer (DESIGN.md section 4): sends gathered into one transaction.

A producer collects sends for ``linger_ms`` and writes them in one transaction of the log
(``shared/bus/sqlite_log.py``); the future of each send resolves after that transaction commits
(durable: WAL + synchronous=NORMAL survives a process crash; ``?sync=full`` survives power loss).
It also runs the log's retention sweep, at most every ``RETENTION_SWEEP_S``, after a write.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time

from shared.bus.base import Delivered, Headers
from shared.bus.sqlite_log import EmbeddedLog, Pending
from shared.errors import BusUnavailable

__all__ = ["SqliteProducer"]

#: how often old records are dropped (retention)
RETENTION_SWEEP_S = 60.0


class SqliteProducer:
    def __init__(self, bus: EmbeddedLog) -> None:
        self.bus = bus
        self._pending: list[Pending] = []
        self._futures: list[asyncio.Future[Delivered]] = []
        self._flusher: asyncio.Task[None] | None = None
        self._rr = itertools.count()
        self._last_sweep = time.monotonic()

    async def send(
        self, topic: str, value: bytes, *, key: bytes | None = None, headers: Headers = ()
    ) -> asyncio.Future[Delivered]:
        fut: asyncio.Future[Delivered] = asyncio.get_running_loop().create_future()
        self._pending.append((topic, key, value, headers))
        self._futures.append(fut)
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush_after_linger())
        return fut

    async def _flush_after_linger(self) -> None:
        # linger: let a handler batch's outputs accumulate into one transaction
        await asyncio.sleep(self.bus.linger_s)
        await self._write()

    async def _write(self) -> None:
        while self._pending:
            batch, futs = self._pending, self._futures
            self._pending, self._futures = [], []
            try:
                placed = await self.bus._call(self.bus._append, batch, self._rr)
            except BaseException as exc:
                for f in futs:
                    if not f.done():
                        f.set_exception(BusUnavailable(str(exc)) if not isinstance(exc, BusUnavailable) else exc)
                if isinstance(exc, asyncio.CancelledError):
                    raise
                continue
            for f, where in zip(futs, placed, strict=True):
                if not f.done():
                    f.set_result(where)
            self.bus._notify()
        if time.monotonic() - self._last_sweep > RETENTION_SWEEP_S:
            self._last_sweep = time.monotonic()
            with contextlib.suppress(BusUnavailable):
                await self.bus._on_thread(self.bus._retention_sweep)

    async def flush(self) -> None:
        if self._flusher is not None and not self._flusher.done():
            await asyncio.shield(self._flusher)
        await self._write()
