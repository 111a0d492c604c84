"""The commit tracker on the embedded log: contiguous prefixes, hooks after the commit, the backwards guard."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from shared.bus.base import Bus, Consumed, Consumer, TopicSpec
from shared.bus.sqlite import SqliteBus
from shared.clock import ManualClock
from shared.errors import CommitOrderError
from shared.runtime.commits import CommitTracker
from shared.runtime.stats import Meter, RunStats
from tests.contract.bus_contract import drain, produce


@pytest.fixture
async def bus(tmp_path: Path) -> AsyncIterator[Bus]:
    b = SqliteBus(f"sqlite:///{tmp_path}/bus.db")
    await b.start()
    yield b
    await b.close()


async def _read(bus: Bus, uid: str, n: int) -> tuple[Consumer, list[Consumed]]:
    topic = f"t-{uid}"
    await bus.create_topics([TopicSpec(topic, 1)])
    await produce(bus, topic, [("k", str(i).encode()) for i in range(n)])
    consumer = await bus.consumer(f"g-{uid}", [topic])
    records = sorted(await drain(consumer, n), key=lambda r: r.offset)
    return consumer, records


def _tracker(bus: Bus, consumer: Consumer, stats: RunStats) -> CommitTracker:
    return CommitTracker("c", consumer, bus.producer(), ManualClock(), stats, Meter("c"))


async def test_only_the_contiguously_finished_prefix_is_committed(bus: Bus, uid: str) -> None:
    consumer, records = await _read(bus, uid, 3)
    stats = RunStats()
    tracker = _tracker(bus, consumer, stats)
    slots = [tracker.admit(r) for r in records]
    [tp] = consumer.assignment()

    slots[1].done = True  # finished out of order: offset 0 is still running
    await tracker.commit_finished()
    assert await consumer.committed(tp) is None
    assert stats.commits == 0

    slots[0].done = True
    await tracker.commit_finished()
    assert await consumer.committed(tp) == 2  # 0 and 1: the offset after the last of them

    slots[2].done = True
    await tracker.commit_finished()
    assert await consumer.committed(tp) == 3
    assert stats.commits == 2
    await consumer.stop()


async def test_hooks_run_after_the_commit_and_a_failing_hook_does_not_stop_the_rest(bus: Bus, uid: str) -> None:
    consumer, records = await _read(bus, uid, 2)
    tracker = _tracker(bus, consumer, RunStats())
    [tp] = consumer.assignment()
    seen: list[tuple[str, int | None]] = []

    async def failing() -> None:
        seen.append(("failing", await consumer.committed(tp)))
        raise RuntimeError("the state it cleans up is cleaned up later")

    async def after() -> None:
        seen.append(("after", await consumer.committed(tp)))

    first, second = (tracker.admit(r) for r in records)
    first.hooks = [failing]
    second.hooks = [after]
    first.done = second.done = True
    await tracker.commit_finished()
    assert seen == [("failing", 2), ("after", 2)]  # both saw the commit already made
    await consumer.stop()


async def test_a_commit_that_would_go_backwards_is_refused(bus: Bus, uid: str) -> None:
    consumer, records = await _read(bus, uid, 3)
    tracker = _tracker(bus, consumer, RunStats())
    [tp] = consumer.assignment()
    for r in records:
        tracker.admit(r).done = True
    await tracker.commit_finished()
    assert await consumer.committed(tp) == 3

    tracker.admit(records[0]).done = True  # a bug would hand offset 0 in again
    with pytest.raises(CommitOrderError, match="would go back from 3 to 1"):
        await tracker.commit_finished()
    assert await consumer.committed(tp) == 3
    await consumer.stop()


async def test_hooks_of_different_keys_run_side_by_side_and_one_keys_in_order(bus: Bus, uid: str) -> None:
    # side by side, the store calls of a round's hooks share one batch (the delay cube confirms each
    # released document in a hook: one after another, that was a round trip per document)
    topic = f"t-{uid}"
    await bus.create_topics([TopicSpec(topic, 1)])
    await produce(bus, topic, [("a", b"1"), ("b", b"2"), ("a", b"3")])
    consumer = await bus.consumer(f"g-{uid}", [topic])
    records = sorted(await drain(consumer, 3), key=lambda r: r.offset)
    tracker = _tracker(bus, consumer, RunStats())
    seen: list[str] = []
    b_ran = asyncio.Event()

    async def a1() -> None:
        async with asyncio.timeout(5):  # only if b's hook runs meanwhile
            await b_ran.wait()
        seen.append("a1")

    async def b() -> None:
        seen.append("b")
        b_ran.set()

    async def a2() -> None:
        seen.append("a2")

    slots = [tracker.admit(r) for r in records]
    for slot, hook in zip(slots, (a1, b, a2), strict=True):
        slot.hooks = [hook]
        slot.done = True
    await tracker.commit_finished()
    assert seen == ["b", "a1", "a2"]  # a2 after a1: one key's hooks keep their order
    await consumer.stop()


async def test_records_whose_commit_failed_are_read_again_after_the_rewind(
    bus: Bus, uid: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A commit the bus refuses leaves its records to be handled again: their after-commit hooks (a
    parser's recorded hashes, an upload task's "done") never ran. Here the partition was never
    committed and the bus cannot say what the group committed, so the rewind can only go back to
    the first record it still tracks: the records of the failed round must be among them."""
    consumer, records = await _read(bus, uid, 2)
    tracker = _tracker(bus, consumer, RunStats())
    ran: list[int] = []
    for r in records:
        slot = tracker.admit(r)
        slot.done = True
        slot.hooks = [functools.partial(_note, ran, r.offset)]

    async def bus_away(*args: object, **kwargs: object) -> None:
        raise ConnectionError("the broker went away")

    monkeypatch.setattr(consumer, "commit", bus_away)
    monkeypatch.setattr(consumer, "committed", bus_away)
    with pytest.raises(ConnectionError):
        await tracker.commit_finished()
    assert ran == []
    await tracker.rewind()
    monkeypatch.undo()

    again = sorted(await drain(consumer, 2), key=lambda r: r.offset)
    assert [r.offset for r in again] == [0, 1]
    for r in again:
        slot = tracker.admit(r)
        slot.done = True
        slot.hooks = [functools.partial(_note, ran, r.offset)]
    await tracker.commit_finished()
    assert ran == [0, 1]
    assert await consumer.committed(consumer.assignment().pop()) == 2
    await consumer.stop()


async def _note(ran: list[int], offset: int) -> None:
    ran.append(offset)
