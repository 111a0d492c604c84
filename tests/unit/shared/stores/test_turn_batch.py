"""The PostgreSQL engine's turn batch, on its own (no server: the statement is a function we hold).

The contract tests run it against PostgreSQL; these pin the ordering rules a server's timing
only sometimes shows (``tests/contract/store_batch_contract.py`` failed 1 run in 12 under load:
a nested ``gather``'s calls, made one turn later, raced the first statement for the same rows).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import pytest

from shared.errors import StoreUnavailable
from shared.stores.postgres.batch import Inflight, TurnBatch


class Statements:
    """A fake connection pool and statement: records each statement's items; each waits for ``gate``."""

    def __init__(self) -> None:
        self.sent: list[list[str]] = []
        self.running = 0
        self.most_at_once = 0
        self.gate = asyncio.Event()

    @asynccontextmanager
    async def connect(self) -> AsyncIterator[None]:
        yield None

    async def run(self, _conn: Any, items: Sequence[str]) -> list[str]:
        self.sent.append(list(items))
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        try:
            await self.gate.wait()
        finally:
            self.running -= 1
        return [f"done:{i}" for i in items]


async def _turns(n: int) -> None:
    for _ in range(n):
        await asyncio.sleep(0)  # one loop turn each: the thing under test is per turn


async def test_a_later_turns_calls_wait_for_the_statement_in_flight_and_go_together() -> None:
    st = Statements()
    batch: TurnBatch[str, str] = TurnBatch(st.connect, st.run, Inflight(), key=lambda i: i)
    first = [asyncio.ensure_future(batch(i)) for i in ("x", "y")]
    await _turns(3)
    assert st.sent == [["x", "y"]]
    later = [asyncio.ensure_future(batch(i)) for i in ("x", "z")]
    more = asyncio.ensure_future(batch("w"))
    await _turns(3)
    assert st.sent == [["x", "y"]]  # nothing overtakes the statement in flight
    st.gate.set()
    assert await asyncio.gather(*first, *later, more) == ["done:x", "done:y", "done:x", "done:z", "done:w"]
    assert st.sent == [["x", "y"], ["x", "z", "w"]]  # what came meanwhile went as one statement
    assert st.most_at_once == 1


async def test_calls_of_one_turn_with_one_key_twice_go_in_rounds_in_order() -> None:
    st = Statements()
    st.gate.set()
    batch: TurnBatch[str, str] = TurnBatch(st.connect, st.run, Inflight(), key=lambda i: i)
    assert await asyncio.gather(*(batch(i) for i in ("a", "a", "b", "a"))) == ["done:a"] * 2 + ["done:b", "done:a"]
    assert st.sent == [["a", "b"], ["a"], ["a"]]


async def test_a_cancelled_sender_fails_the_calls_waiting_behind_it() -> None:
    st = Statements()
    inflight = Inflight()
    batch: TurnBatch[str, str] = TurnBatch(st.connect, st.run, inflight)
    first = asyncio.ensure_future(batch("a"))
    await _turns(3)
    waiting = asyncio.ensure_future(batch("b"))
    await _turns(1)
    for task in list(inflight._tasks):
        task.cancel()
    with pytest.raises(StoreUnavailable):
        await first
    with pytest.raises(StoreUnavailable):
        await waiting
    # the batch works again afterwards
    st.gate.set()
    assert await batch("c") == "done:c"
