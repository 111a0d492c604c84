"""The wordstat cube's batches through the real runtime and embedded log: nothing lost, nothing twice.

A handler call only adds its search to the batch being gathered; its input is
committed once the batch is durable (``cubes/wordstat/batch.py``). Here the store
fails around a batch's write — before it (the write is lost) and after it (the
write is durable, the runtime never hears so: a crash between the two) — and the
counts must still be exactly the searches sent, each once.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from cubes.registry import cube_module
from cubes.wordstat.batch import GroupCounter
from shared.config import Settings
from shared.errors import StoreUnavailable
from shared.messages import Device, SearchQueryEvent
from shared.runtime import Output, ensure_topics, open_deps, run_cube
from shared.stores.wordstat import CountedSearch, Privacy, WordstatStore
from shared.wordstat.frequency import frequency
from shared.wordstat.operators import parse

#: (query, searches) sent; each word's hand count follows
SENT = {"купить слона": 7, "куплю слонов": 5, "продать слона": 4, "bridges london": 6}


class Failing:
    """The real store, failing its first ``count``: before the write or after it (durable, unacknowledged)."""

    def __init__(self, store: WordstatStore, when: str) -> None:
        self.store = store
        self.when = when
        self.calls = 0

    async def count(self, searches: Sequence[CountedSearch], *, now: datetime, privacy: Privacy) -> int:
        self.calls += 1
        if self.calls == 1 and self.when == "before":
            raise StoreUnavailable("the store went away before the batch was written")
        n = await self.store.count(searches, now=now, privacy=privacy)
        if self.calls == 1 and self.when == "after":
            raise StoreUnavailable("the process died after the batch was durable, before the commit")
        return n

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


def _events() -> list[SearchQueryEvent]:
    now = datetime.now(UTC)
    return [
        SearchQueryEvent(
            event_id=uuid.uuid4().hex, query=q, at=now, device=Device.mobile, origins=["https://shop.example"]
        )
        for q, n in SENT.items()
        for _ in range(n)
    ]


@pytest.mark.parametrize("when", ["before", "after"])
async def test_a_failed_or_unacknowledged_batch_is_read_again_and_counts_once(tmp_path: Path, when: str) -> None:
    settings = Settings().replace(
        bus={"url": f"sqlite:///{tmp_path}/bus.db"},
        store={"url": f"sqlite:///{tmp_path}/store.db"},
        runtime={"metrics_port": 0},
        wordstat={"privacy_threshold": 1, "privacy_noise": 0},  # exact counts: each search is read back
    )
    deps = await open_deps(settings)
    try:
        await ensure_topics(deps, ["frontend", "wordstat"])
        sent = _events()
        await deps.publish([Output("search.queries", e) for e in sent])
        cube = await cube_module("wordstat").build(settings, deps)
        counter: GroupCounter = cube.handler.__self__.counter
        failing = Failing(counter.store, when)
        counter.store = failing
        stats = await run_cube(cube, deps, group="ws", max_messages=2 * len(sent), idle_timeout=8.0)
        assert failing.calls >= 2, "the failed batch was not written again"
        assert stats.processed >= 2 * len(sent), "the failed batch's searches were not read again"
        # everything is committed now: the same group reads nothing more
        again = await run_cube(cube, deps, group="ws", max_messages=1, idle_timeout=1.0)
        assert again.processed == 0
        stores = await deps.stores()
        now = datetime.now(UTC)

        async def total(q: str) -> int:
            return (await frequency(stores.wordstat, parse(q), now=now, threshold=1)).total.n

        assert await total("купить слона") == 7 + 5  # "куплю слонов" is the same words
        assert await total("слона") == 7 + 5 + 4
        assert await total("!слона") == 7 + 4
        assert await total("bridge") == 6
        assert sum(
            n for _, n in await stores.wordstat.host_queries("https://shop.example", 0, 999912, limit=10, threshold=1)
        ) == len(sent)
    finally:
        await deps.close()


async def test_a_caller_waits_once_too_many_searches_are_not_durable(tmp_path: Path) -> None:
    """Back-pressure: a store slower than the stream holds the handlers, not the memory."""
    gate, entered = asyncio.Event(), asyncio.Event()
    written: list[int] = []

    class Slow:
        async def count(self, searches: Sequence[CountedSearch], *, now: datetime, privacy: Privacy) -> int:
            entered.set()
            await gate.wait()
            written.append(len(searches))
            return len(searches)

    counter = GroupCounter(Slow(), Privacy(threshold=5), max_batch=3, linger_s=0.01, max_waiting=5)  # type: ignore[arg-type]
    search = CountedSearch("e" * 16, "слон", "слон", 1, 202611, "unknown", "desktop")
    futs = [counter.add(search) for _ in range(6)]
    assert counter.waiting == 6
    waiter = asyncio.ensure_future(counter.room())
    await asyncio.wait_for(entered.wait(), 5)  # the first batch is in the store's hands, which holds it
    for _ in range(20):
        await asyncio.sleep(0)  # turns of the loop: the waiter had every chance to go on
    assert not waiter.done(), "a caller went on with 6 searches not durable, past max_waiting=5"
    gate.set()
    await asyncio.wait_for(waiter, 5)
    await asyncio.wait_for(asyncio.gather(*futs), 5)
    assert written == [3, 3]
    assert counter.waiting == 0
