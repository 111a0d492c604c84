"""The embedded log's producer (docs/architecture.md section 4): sends gathered into one transaction.

A producer collects sends for ``linger_ms`` and writes them in one transaction of the log
(``shared/bus/sqlite_log.py``); the future of each send resolves after that transaction commits
(durable: WAL + synchronous=NORMAL survives a process crash; ``?sync=full`` survives power loss).
``send_batch`` queues many records behind one future (a handler's outputs, a catalog's batch of
documents): a future, its callback and its wake-up for each of 1,000 records cost about as much
as their inserts' Python side.
It also runs the log's retention sweep, at most every ``RETENTION_SWEEP_S``, after a write.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Sequence
from typing import Any

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
        #: who waits for the pending records, in their order: (how many records, the future,
        #: whether it resolves to a list of placements -- ``send_batch`` -- or to one)
        self._waiters: list[tuple[int, asyncio.Future[Any], bool]] = []
        self._flusher: asyncio.Task[None] | None = None
        self._rr = itertools.count()
        self._last_sweep = time.monotonic()

    async def send(
        self, topic: str, value: bytes, *, key: bytes | None = None, headers: Headers = ()
    ) -> asyncio.Future[Delivered]:
        fut: asyncio.Future[Delivered] = asyncio.get_running_loop().create_future()
        self._pending.append((topic, key, value, headers))
        self._waiters.append((1, fut, False))
        self._linger()
        return fut

    async def reset(self) -> None:
        """Nothing to reset: a failed transaction leaves nothing behind that would fail the next."""

    async def send_batch(self, records: Sequence[Pending]) -> asyncio.Future[list[Delivered]]:
        """Queue ``records`` (topic, key, value, headers) in order; one future for them all, which
        resolves to their placements once the transaction that holds them commits."""
        fut: asyncio.Future[list[Delivered]] = asyncio.get_running_loop().create_future()
        if not records:
            fut.set_result([])
            return fut
        self._pending.extend(records)
        self._waiters.append((len(records), fut, True))
        self._linger()
        return fut

    def _linger(self) -> None:
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush_after_linger())

    async def _flush_after_linger(self) -> None:
        # linger: let a handler batch's outputs accumulate into one transaction
        await asyncio.sleep(self.bus.linger_s)
        await self._write()

    async def _write(self) -> None:
        while self._pending:
            batch, waiters = self._pending, self._waiters
            self._pending, self._waiters = [], []
            try:
                placed = await self.bus._call(self.bus._append, batch, self._rr)
            except BaseException as exc:
                for _, f, _ in waiters:
                    if not f.done():
                        f.set_exception(BusUnavailable(str(exc)) if not isinstance(exc, BusUnavailable) else exc)
                if isinstance(exc, asyncio.CancelledError):
                    raise
                continue
            assert len(placed) == len(batch), "the log placed a different number of records"
            at = 0
            for n, f, many in waiters:
                if not f.done():
                    f.set_result(placed[at : at + n] if many else placed[at])
                at += n
            self.bus._notify()
        if time.monotonic() - self._last_sweep > RETENTION_SWEEP_S:
            self._last_sweep = time.monotonic()
            with contextlib.suppress(BusUnavailable):
                await self.bus._on_thread(self.bus._retention_sweep)

    async def flush(self) -> None:
        if self._flusher is not None and not self._flusher.done():
            await asyncio.shield(self._flusher)
        await self._write()
