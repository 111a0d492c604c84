"""Group commit of page writes (cubes/kvwriter/batch.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from cubes.kvwriter.batch import GroupWriter
from shared.errors import StoreUnavailable
from shared.stores import Page, PageStore, Stores, UpsertOutcome, open_stores


class CountingPages:
    """The real SQLite page store, counting the batches it is given (and failing when told to)."""

    def __init__(self, inner: PageStore) -> None:
        self.inner = inner
        self.batches: list[int] = []
        self.fail_next = False
        self.gate: asyncio.Event | None = None
        self.entered = asyncio.Event()

    async def upsert_many(self, pages: Sequence[Page]) -> list[UpsertOutcome]:
        self.batches.append(len(pages))
        self.entered.set()
        if self.gate is not None:
            await self.gate.wait()
        if self.fail_next:
            self.fail_next = False
            raise StoreUnavailable("database is down")
        return await self.inner.upsert_many(pages)


def page(i: int, version: int = 1) -> Page:
    return Page(url=f"https://news.example/{i}", host="news.example", version=version, title=f"t{i}")


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[Stores]:
    async with await open_stores(f"sqlite:///{tmp_path}/store.db") as s:
        yield s


async def test_concurrent_writes_share_transactions(stores: Stores) -> None:
    pages = CountingPages(stores.pages)
    writer = GroupWriter(pages, max_batch=16)  # type: ignore[arg-type]
    outcomes = await asyncio.gather(*(writer.upsert(page(i)) for i in range(40)))
    assert outcomes == [UpsertOutcome.inserted] * 40
    assert sum(pages.batches) == 40
    assert len(pages.batches) < 40  # grouped
    assert max(pages.batches) <= 16
    assert await stores.pages.count() == 40
    # each caller gets its own page's outcome
    mixed = await asyncio.gather(writer.upsert(page(1)), writer.upsert(page(1, 2)), writer.upsert(page(99)))
    assert list(mixed) == [UpsertOutcome.unchanged, UpsertOutcome.updated, UpsertOutcome.inserted]


async def test_a_failed_batch_fails_its_callers_only(stores: Stores) -> None:
    pages = CountingPages(stores.pages)
    writer = GroupWriter(pages)  # type: ignore[arg-type]
    pages.fail_next = True
    results = await asyncio.gather(*(writer.upsert(page(i)) for i in range(3)), return_exceptions=True)
    assert all(isinstance(r, StoreUnavailable) for r in results)
    assert await writer.upsert(page(7)) is UpsertOutcome.inserted


async def test_a_cancelled_caller_does_not_strand_the_others(stores: Stores) -> None:
    pages = CountingPages(stores.pages)
    pages.gate = asyncio.Event()
    writer = GroupWriter(pages)  # type: ignore[arg-type]
    first = asyncio.create_task(writer.upsert(page(1)))
    second = asyncio.create_task(writer.upsert(page(2)))
    await asyncio.wait_for(pages.entered.wait(), 10)  # both are queued and their batch is being written
    assert pages.batches == [2]
    first.cancel()
    pages.gate.set()
    assert await asyncio.wait_for(second, 10) is UpsertOutcome.inserted
    with pytest.raises(asyncio.CancelledError):
        await first
    # the cancelled caller's page was written anyway: harmless, writes are idempotent
    assert await stores.pages.get("https://news.example/1") is not None
