"""shared.images.lookups: concurrent look-ups share one store query; only ok records are remembered."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from shared.images.lookups import LookupBatcher
from shared.stores import ImageRecord, ImageRegistry, ImageStatus, Stores, open_stores

T0 = datetime(2026, 3, 1, tzinfo=UTC)


class Counting:
    """The real registry, counting the queries that reach it."""

    def __init__(self, images: ImageRegistry) -> None:
        self.images = images
        self.queries: list[set[str]] = []

    async def get_many(self, urls: Iterable[str]) -> dict[str, ImageRecord]:
        wanted = set(urls)
        self.queries.append(wanted)
        return await self.images.get_many(wanted)


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[Stores]:
    s = await open_stores(f"sqlite:///{tmp_path}/store.db")
    try:
        yield s
    finally:
        await s.close()


async def test_concurrent_look_ups_are_one_query(stores: Stores) -> None:
    for i in range(8):
        await stores.images.record_ok(f"https://i.test/{i}.jpg", cdn_url=f"/cdn/{i}", now=T0)
    counting = Counting(stores.images)
    batcher = LookupBatcher(counting, cache_size=0)  # type: ignore[arg-type]
    asks = [
        [f"https://i.test/{i}.jpg", f"https://i.test/{(i + 1) % 8}.jpg", "https://i.test/none.jpg"] for i in range(8)
    ]
    answers = await asyncio.gather(*(batcher.get_many(a) for a in asks))
    assert len(counting.queries) == 1
    for ask, answer in zip(asks, answers, strict=True):
        assert set(answer) == set(ask[:2])  # each caller gets exactly its share
        assert all(answer[u].cdn_url == "/cdn/" + u.rsplit("/", 1)[1][:-4] for u in answer)


async def test_a_lone_look_up_is_not_delayed_and_errors_reach_every_caller(stores: Stores) -> None:
    class Broken:
        async def get_many(self, urls: Iterable[str]) -> dict[str, ImageRecord]:
            raise RuntimeError("store down")

    batcher = LookupBatcher(Broken(), cache_size=10)  # type: ignore[arg-type]
    results = await asyncio.gather(
        batcher.get_many(["https://i.test/a.jpg"]),
        batcher.get_many(["https://i.test/b.jpg"]),
        return_exceptions=True,
    )
    assert all(isinstance(r, RuntimeError) for r in results)
    assert await LookupBatcher(stores.images).get_many([]) == {}


async def test_only_ok_records_are_cached(stores: Stores) -> None:
    ok, failed, pending = "https://i.test/ok.jpg", "https://i.test/failed.jpg", "https://i.test/pending.jpg"
    await stores.images.record_ok(ok, cdn_url="/cdn/ok", now=T0)
    await stores.images.record_failed(failed, "http_404", now=T0)
    assert await stores.images.mark_ordered(pending, T0)
    counting = Counting(stores.images)
    batcher = LookupBatcher(counting, cache_size=100)  # type: ignore[arg-type]
    first = await batcher.get_many([ok, failed, pending])
    assert {u: r.status for u, r in first.items()} == {
        ok: ImageStatus.ok,
        failed: ImageStatus.failed,
        pending: ImageStatus.pending,
    }
    await stores.images.record_ok(pending, cdn_url="/cdn/pending", now=T0)  # pending -> ok meanwhile
    second = await batcher.get_many([ok, failed, pending])
    assert counting.queries[-1] == {failed, pending}  # ok came from the cache
    assert second[pending].status == ImageStatus.ok  # not a stale "pending"
    assert (await batcher.get_many([ok]))[ok].cdn_url == "/cdn/ok"
    assert len(counting.queries) == 2


async def test_cache_is_bounded(stores: Stores) -> None:
    for i in range(5):
        await stores.images.record_ok(f"https://i.test/{i}.jpg", cdn_url=f"/cdn/{i}", now=T0)
    counting = Counting(stores.images)
    batcher = LookupBatcher(counting, cache_size=2)  # type: ignore[arg-type]
    for i in range(5):
        await batcher.get_many([f"https://i.test/{i}.jpg"])
    await batcher.get_many(["https://i.test/4.jpg", "https://i.test/3.jpg"])  # the two most recent: cached
    assert len(counting.queries) == 5
    await batcher.get_many(["https://i.test/0.jpg"])  # evicted long ago
    assert len(counting.queries) == 6


async def test_a_remembered_cdn_url_answers_without_a_query(stores: Stores) -> None:
    url = "https://i.test/announced.jpg"
    await stores.images.record_ok(url, cdn_url="/cdn/announced", now=T0)
    counting = Counting(stores.images)
    batcher = LookupBatcher(counting, cache_size=10)  # type: ignore[arg-type]
    batcher.remember(url, "/cdn/announced")
    got = await batcher.get_many([url, "https://i.test/other.jpg"])
    assert counting.queries == [{"https://i.test/other.jpg"}]  # only what was not remembered
    assert (got[url].status, got[url].cdn_url) == (ImageStatus.ok, "/cdn/announced")
    off = LookupBatcher(counting, cache_size=0)  # type: ignore[arg-type]
    off.remember(url, "/cdn/announced")
    assert (await off.get_many([url]))[url].cdn_url == "/cdn/announced"
    assert counting.queries[-1] == {url}  # cache off: remembering is a no-op, the store answers


async def test_a_remembered_record_is_read_again_once_it_is_old(stores: Stores) -> None:
    """A copy replaced (a source image changed in place) reached new pages only on eviction."""
    url = "https://i.test/changing.jpg"
    await stores.images.record_ok(url, cdn_url="/cdn/old", now=T0)
    counting = Counting(stores.images)
    now = [100.0]
    batcher = LookupBatcher(counting, cache_size=10, max_age_s=300.0, monotonic=lambda: now[0])  # type: ignore[arg-type]
    assert (await batcher.get_many([url]))[url].cdn_url == "/cdn/old"
    await stores.images.record_ok(url, cdn_url="/cdn/new", now=T0)  # the re-check found new bytes
    now[0] += 299.0
    assert (await batcher.get_many([url]))[url].cdn_url == "/cdn/old"  # remembered, still valid
    assert len(counting.queries) == 1
    now[0] += 2.0
    assert (await batcher.get_many([url]))[url].cdn_url == "/cdn/new"
    assert len(counting.queries) == 2
