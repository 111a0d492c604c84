"""Load shedding reads fresh lag (cubes/api/shedding.py).

Before: the reading was refreshed only in the background of a request, so the first upload after a
quiet spell was judged on a reading from before it -- shed as "837 records behind" 110 s after the
lag had gone to 0.
"""

from __future__ import annotations

import asyncio

from cubes.api.shedding import CHECK_S, MAX_AGE_S, LoadShedder
from shared.clock import ManualClock


class Offsets:
    """A bus as the shedder sees it: partner.uploads' end offsets and the parser's commits."""

    def __init__(self) -> None:
        self.end = 0
        self.committed = 0
        self.reads = 0
        self.gate: asyncio.Event | None = None

    async def end_offsets(self, topic: str) -> dict[int, int]:
        self.reads += 1
        if self.gate is not None:
            await self.gate.wait()
        return {0: self.end}

    async def committed_offsets(self, group: str, topic: str) -> dict[int, int]:
        return {0: self.committed}


async def test_a_reading_from_before_a_quiet_spell_is_not_trusted() -> None:
    bus, clock = Offsets(), ManualClock()
    shedder = LoadShedder(bus, "parser", 100, clock)
    bus.end = 837
    busy = await shedder.pressure()
    assert (busy.shed, busy.lag) == (True, 837)

    bus.committed = 837  # the parser catches up while nobody uploads
    clock.advance(110)
    now = await shedder.pressure()
    assert (now.shed, now.reason, now.lag) == (False, "ok", 0)
    await shedder.close()


async def test_a_recent_reading_is_served_without_waiting_and_refreshed_behind() -> None:
    bus, clock = Offsets(), ManualClock()
    shedder = LoadShedder(bus, "parser", 100, clock)
    assert not (await shedder.pressure()).shed
    assert bus.reads == 1
    clock.advance(CHECK_S / 2)
    await shedder.pressure()
    assert bus.reads == 1  # fresh enough: no bus round trip at all

    bus.end = 500
    bus.gate = asyncio.Event()  # the bus is slow to answer
    clock.advance(CHECK_S)
    served = await shedder.pressure()  # older than CHECK_S, younger than MAX_AGE_S: served, refreshed behind
    assert not served.shed
    refreshing = shedder._task
    assert refreshing is not None
    assert not refreshing.done()
    bus.gate.set()
    async with asyncio.timeout(5):
        await refreshing
    assert bus.reads == 2
    assert (await shedder.pressure()).shed  # the next request sees the refreshed reading
    await shedder.close()


async def test_concurrent_requests_after_a_quiet_spell_share_one_measurement() -> None:
    bus, clock = Offsets(), ManualClock()
    shedder = LoadShedder(bus, "parser", 100, clock)
    await shedder.pressure()
    clock.advance(MAX_AGE_S + 1)
    bus.gate = asyncio.Event()
    waiting = [asyncio.create_task(shedder.pressure()) for _ in range(20)]
    await asyncio.sleep(0)
    bus.gate.set()
    async with asyncio.timeout(5):
        readings = await asyncio.gather(*waiting)
    assert {r.reason for r in readings} == {"ok"}
    assert bus.reads == 2  # the first reading and one for all twenty
    await shedder.close()
