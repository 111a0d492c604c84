"""Load shedding: refuse uploads with 503 before the pipeline behind collapses (docs/architecture.md section 6).

Uploads end in ``partner.uploads``; the parser drains it at its own pace
(queue-based load leveling). When the parser's group falls more than
``settings.api.shed_lag`` records behind, accepting more only grows a queue
nobody will reach soon, so uploads are answered ``503`` with ``Retry-After``
until the lag drops. An unreachable bus is shed the same way: nothing could
be made durable anyway.

Lag = sum over partitions of (end offset - the group's committed offset),
from ``bus.end_offsets`` and ``bus.committed_offsets`` (both engines have
it; an engine without it counts as lag 0 and only reachability is checked).
A partition the group never committed counts from 0: the group starts at
the beginning.

Reading offsets costs a round trip (on Kafka, a metadata request), so the
answer is cached for ``CHECK_S`` and refreshed in the background while the
cached answer is served (stale-while-revalidate). A background refresh only
happens when a request comes, though, so after a quiet spell the cached
reading can be from before it: an upload was shed as "837 records behind"
about 110 s after the lag had gone to 0. So a reading
older than ``MAX_AGE_S`` is never used: the request waits for a fresh one
(at most ``TIMEOUT_S``; a bus that does not answer in time is shed as
unreachable, as before). Requests wait only after start and after an idle
spell; under steady traffic the reading is never older than ``CHECK_S`` plus
one round trip.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import Any

from shared.clock import Clock

__all__ = ["CHECK_S", "MAX_AGE_S", "RETRY_AFTER_S", "LoadShedder", "Pressure"]

log = logging.getLogger(__name__)

#: how old a lag reading may be before a background refresh; one bus round trip per second per instance
#: is negligible
CHECK_S = 1.0
#: a reading older than this is not used at all: a few refresh periods, so a slow bus round trip under
#: steady traffic never makes requests wait, while a reading from before a quiet spell is never trusted
MAX_AGE_S = 5.0
#: a lag or bus reading that takes longer than this counts as "bus unreachable"
TIMEOUT_S = 2.0
#: what a shed client is told to wait: long enough for a few parser batches to drain
RETRY_AFTER_S = 5

TOPIC = "partner.uploads"


@dataclass(frozen=True, slots=True)
class Pressure:
    """The last reading: shed or not, and why."""

    shed: bool
    reason: str  # "ok", "lag", "bus_unreachable"
    lag: int = 0


class LoadShedder:
    """Decides whether uploads are shed, from the consumer lag of ``partner.uploads``."""

    def __init__(self, bus: Any, group: str, threshold: int, clock: Clock) -> None:
        self._bus = bus
        self._group = group
        self._threshold = threshold
        self._clock = clock
        self._reading: Pressure | None = None
        self._read_at = float("-inf")
        self._task: asyncio.Task[Pressure] | None = None

    async def _measure(self) -> Pressure:
        if self._bus is None:
            return Pressure(False, "ok")
        try:
            async with asyncio.timeout(TIMEOUT_S):
                ends: dict[int, int] = await self._bus.end_offsets(TOPIC)
                committed_of = getattr(self._bus, "committed_offsets", None)
                if committed_of is None:
                    return Pressure(False, "ok")
                committed: dict[int, int] = await committed_of(self._group, TOPIC)
        except Exception as exc:  # any failure to read the bus is "unreachable" for shedding
            log.warning("load shedding: cannot read %s offsets: %s", TOPIC, exc)
            return Pressure(True, "bus_unreachable")
        lag = sum(max(0, end - committed.get(p, 0)) for p, end in ends.items())
        return Pressure(lag > self._threshold, "lag" if lag > self._threshold else "ok", lag)

    async def refresh(self) -> Pressure:
        """Measure now and keep the reading."""
        reading = await self._measure()
        self._reading = reading
        self._read_at = self._clock.monotonic()
        return reading

    def _refresh_in_background(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self.refresh())

    async def pressure(self) -> Pressure:
        """A reading at most ``MAX_AGE_S`` old; waits for the bus only when the last one is older."""
        age = self._clock.monotonic() - self._read_at
        if self._reading is None or age >= MAX_AGE_S:
            if self._task is not None and not self._task.done():
                return await asyncio.shield(self._task)  # one measurement in flight serves everybody
            self._task = asyncio.get_running_loop().create_task(self.refresh())
            return await asyncio.shield(self._task)
        if age >= CHECK_S:
            self._refresh_in_background()
        return self._reading

    async def close(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
