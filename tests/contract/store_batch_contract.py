"""The store contract for calls made in one turn of the event loop, on every engine.

Both engines put such calls together: SQLite in one transaction (``sqlite/db.py``), PostgreSQL in one
statement per kind of call (``postgres/batch.py``). Whatever the engine does, a caller must see what
it would have seen alone: the outcomes of calls made one by one in the same order, an error only for
the call whose data caused it, and an answer only once its write is committed.

Mixed into each engine's ``StoreContract`` subclass, which provides ``stores``, ``store_url`` and
``raw_rows``.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, TypeVar

from shared.errors import NotFound, StoreUnavailable
from shared.stores import Feed, ImageStatus, ParkOutcome, Stores, UpsertOutcome, open_stores
from tests.contract.store_contract import T0, page

T = TypeVar("T")

DEADLINE = T0 + timedelta(minutes=5)
A, B, C = "https://a.example/a", "https://a.example/b", "https://a.example/c"
#: one more than the largest BIGINT: both engines refuse it (a caller's bad value, not an outage)
TOO_BIG = 2**63


async def _acknowledged(call: Awaitable[T], committed: Callable[[], Awaitable[bool]]) -> T:
    """``call``'s result, after checking (from another connection) that its write is committed."""
    result = await call
    assert await committed(), "a caller heard back before its write was committed"
    return result


class StoreBatchContract:
    stores: Any  # the fixtures and helper come from StoreContract
    raw_rows: Any

    async def test_parks_of_one_turn_decide_as_one_by_one(self, stores: Stores) -> None:
        outcomes = await asyncio.gather(
            stores.delay.park(A, 1, b"a1", ["m1"], DEADLINE, host="a.example"),
            stores.delay.park(A, 2, b"a2", ["m2"], DEADLINE, host="a.example"),  # the same URL, after
            stores.delay.park(B, 1, b"b1", ["m1", "m3"], DEADLINE, host="a.example"),
            stores.delay.park(A, 1, b"a1", ["m9"], DEADLINE, host="a.example"),  # older than what came before
            stores.delay.park(B, 1, b"b1", ["m1", "m3"], DEADLINE, host="a.example"),  # a redelivery
        )
        assert list(outcomes) == [
            ParkOutcome.parked,
            ParkOutcome.replaced,
            ParkOutcome.parked,
            ParkOutcome.stale,
            ParkOutcome.unchanged,
        ]
        a = await stores.delay.get(A)
        assert a is not None
        assert (a.version, a.doc_json, a.pending) == (2, b"a2", frozenset({"m2"}))
        released = await asyncio.gather(
            stores.delay.resolve("m1", now=T0),  # B still waits for m3; A v2 never waited for m1
            stores.delay.resolve("m1", now=T0),
            stores.delay.resolve("m2", now=T0),
            stores.delay.resolve("m3", now=T0 + timedelta(seconds=1)),
        )
        assert [[(d.url, d.version) for d in docs] for docs in released] == [[], [], [(A, 2)], [(B, 1)]]
        assert released[3][0].released_at == T0 + timedelta(seconds=1)
        assert await stores.delay.count() == 0
        counts = await asyncio.gather(stores.delay.confirm([(A, 2)]), stores.delay.confirm([(A, 2), (B, 1)]))
        assert list(counts) == [1, 1]  # a pair two callers confirm counts for the first
        assert await self.raw_rows(stores.url, "delay_pending") == []

    async def test_the_last_media_of_a_document_resolved_together_release_it_once(self, stores: Stores) -> None:
        await stores.delay.park(A, 1, b"a", ["m1", "m2", "m3"], DEADLINE, host="a.example")
        await stores.delay.park(B, 1, b"b", ["m2"], DEADLINE, host="a.example")
        released = await asyncio.gather(*(stores.delay.resolve(m, now=T0) for m in ("m3", "m2", "m1")))
        assert [[d.url for d in docs] for docs in released] == [[], [B], [A]]

    async def test_image_calls_of_one_turn_decide_as_one_by_one(self, stores: Stores) -> None:
        x, y, z = (f"https://img.example/{n}.jpg" for n in "xyz")
        won = await asyncio.gather(
            stores.images.mark_ordered(x, T0),
            stores.images.mark_ordered(x, T0),
            stores.images.mark_ordered(y, T0),
            stores.images.mark_ordered(x, T0),
            stores.images.mark_ordered_many([x, y, z], T0),
        )
        assert list(won) == [True, False, True, False, {z}]
        ok, failed = "https://img.example/ok.jpg", "https://img.example/failed.jpg"
        await asyncio.gather(
            stores.images.record_ok(ok, cdn_url="/cdn/ok", size=5, now=T0),
            stores.images.record_failed(ok, "late failure", now=T0),  # never downgrades a cached image
            stores.images.record_failed(failed, "404", T0 + timedelta(hours=1), now=T0),
            stores.images.record_ok(x, cdn_url="/cdn/x1", now=T0),
            stores.images.record_ok(x, cdn_url="/cdn/x2", now=T0),  # the later write wins
        )
        got = await stores.images.get_many([ok, failed, x, y])
        assert (got[ok].status, got[ok].cdn_url, got[ok].size) == (ImageStatus.ok, "/cdn/ok", 5)
        assert (got[failed].status, got[failed].reason) == (ImageStatus.failed, "404")
        assert got[x].cdn_url == "/cdn/x2"
        assert got[y].status is ImageStatus.pending
        looked = await asyncio.gather(stores.images.get_many([ok, z]), stores.images.get_many([failed, "nope"]))
        assert [sorted(found) for found in looked] == [sorted([ok, z]), [failed]]

    async def test_a_batch_with_a_url_twice_writes_as_one_by_one(self, stores: Stores) -> None:
        outcomes = await stores.pages.upsert_many([page(1), page(3, url=B), page(3), page(2)])
        assert list(outcomes) == [
            UpsertOutcome.inserted,
            UpsertOutcome.inserted,
            UpsertOutcome.updated,
            UpsertOutcome.stale,
        ]
        got = await stores.pages.get(page(1).url)
        assert got is not None
        assert got.version == 3

    async def test_a_failing_call_fails_only_its_caller(self, stores: Stores) -> None:
        parks = await asyncio.gather(
            stores.delay.park(A, 1, b"a", ["m1"], DEADLINE, host="a.example"),
            stores.delay.park(B, TOO_BIG, b"b", ["m1"], DEADLINE, host="a.example"),
            stores.delay.park(C, 1, b"c", ["m1"], DEADLINE, host="a.example"),
            return_exceptions=True,
        )
        assert parks[0] is ParkOutcome.parked
        assert parks[2] is ParkOutcome.parked
        # the caller's bad value, not an outage: retried in place, it would hold up its partition forever
        assert isinstance(parks[1], Exception)
        assert not isinstance(parks[1], StoreUnavailable)
        assert sorted(r[0] for r in await self.raw_rows(stores.url, "delay_docs")) == [A, C]
        writes = await asyncio.gather(
            stores.images.record_ok("https://img.example/1.jpg", cdn_url="/cdn/1", now=T0),
            stores.images.record_ok("https://img.example/2.jpg", cdn_url="/cdn/2", size=TOO_BIG, now=T0),
            stores.images.record_ok("https://img.example/3.jpg", cdn_url="/cdn/3", now=T0),
            return_exceptions=True,
        )
        assert writes[0] is None
        assert writes[2] is None
        assert isinstance(writes[1], Exception)
        assert not isinstance(writes[1], StoreUnavailable)
        stored = await stores.images.get_many([f"https://img.example/{n}.jpg" for n in (1, 2, 3)])
        assert sorted(stored) == ["https://img.example/1.jpg", "https://img.example/3.jpg"]
        pages = await asyncio.gather(
            stores.pages.upsert_many([page(1)]),
            stores.pages.upsert_many([page(TOO_BIG, url=B)]),
            return_exceptions=True,
        )
        assert pages[0] == [UpsertOutcome.inserted]
        assert isinstance(pages[1], Exception)
        assert not isinstance(pages[1], StoreUnavailable)

    async def test_feed_reads_and_schedule_writes_of_one_turn_decide_as_one_by_one(self, stores: Stores) -> None:
        # the scheduler learns from many fetch results at once: get -> update_schedule per feed
        ids = [f"f{i}" for i in range(6)]
        for feed_id in ids:
            await stores.feeds.upsert_feed(Feed(feed_id, f"https://a.example/{feed_id}.rss", "a.example", "rss"))
        got = await asyncio.gather(*(stores.feeds.get(f) for f in [*ids, "nobody"]))
        assert [f.feed_id if f else None for f in got] == [*ids, None]
        due = T0 + timedelta(minutes=15)
        learned = {"last_fetch_at": T0, "next_fetch_at": due, "interval_s": 900.0, "fetch_result": "ok"}
        writes = await asyncio.gather(
            *(stores.feeds.update_schedule(f, **learned) for f in ids),
            # the same feed again in the same turn, other fields, then the first fields again: in order
            stores.feeds.update_schedule("f0", etag='"v2"', consecutive_failures=3),
            stores.feeds.update_schedule("f0", last_fetch_at=T0, next_fetch_at=due + timedelta(hours=1)),
            stores.feeds.update_schedule("nobody", last_fetch_at=T0, next_fetch_at=due),
            stores.feeds.update_schedule("f1", interval_s=float("inf"), consecutive_failures=2**63),  # too big
            return_exceptions=True,
        )
        assert writes[: len(ids) + 2] == [None] * (len(ids) + 2)
        assert isinstance(writes[-2], NotFound)  # only the unknown feed's caller hears it
        assert isinstance(writes[-1], Exception)
        assert not isinstance(writes[-1], StoreUnavailable)
        f0, f1, f5 = await stores.feeds.get("f0"), await stores.feeds.get("f1"), await stores.feeds.get("f5")
        assert f0 is not None
        assert f1 is not None
        assert f5 is not None
        assert (f0.status.next_fetch_at, f0.status.etag, f0.status.consecutive_failures) == (
            due + timedelta(hours=1),
            '"v2"',
            3,
        )
        assert (f5.status.last_fetch_at, f5.status.next_fetch_at, f5.status.interval_s) == (T0, due, 900.0)
        assert (f1.status.interval_s, f1.status.consecutive_failures) == (900.0, 0)  # its bad write wrote nothing

    async def test_nothing_is_acknowledged_before_its_commit(self, stores: Stores, store_url: str) -> None:
        other = await open_stores(store_url, pool_size=2)  # another process's view of the database

        async def parked(url: str) -> bool:
            return await other.delay.get(url) is not None

        async def released(url: str) -> bool:
            doc = await other.delay.get(url)
            return doc is not None and doc.released_at is not None

        async def gone(url: str) -> bool:
            return await other.delay.get(url) is None

        async def image(url: str, status: ImageStatus) -> bool:
            rec = await other.images.get(url)
            return rec is not None and rec.status is status

        async def written(url: str) -> bool:
            return await other.pages.get(url) is not None

        try:
            await asyncio.gather(
                *(
                    _acknowledged(stores.delay.park(u, 1, b"x", [u + ".jpg"], DEADLINE), functools.partial(parked, u))
                    for u in (A, B)
                ),
                _acknowledged(
                    stores.images.mark_ordered(A + ".jpg", T0), lambda: image(A + ".jpg", ImageStatus.pending)
                ),
                _acknowledged(stores.pages.upsert_many([page(1, url=C)]), lambda: written(C)),
            )
            await asyncio.gather(
                _acknowledged(
                    stores.images.record_ok(A + ".jpg", cdn_url="/cdn/a", now=T0),
                    lambda: image(A + ".jpg", ImageStatus.ok),
                ),
                *(
                    _acknowledged(stores.delay.resolve(u + ".jpg", now=T0), functools.partial(released, u))
                    for u in (A, B)
                ),
            )
            await asyncio.gather(
                *(_acknowledged(stores.delay.confirm([(u, 1)]), functools.partial(gone, u)) for u in (A, B))
            )
        finally:
            await other.close()
