"""The store contract, written once and run against every engine (docs/conventions.md rule 11).

Subclasses provide ``store_url`` (a fresh database per test: a tmp_path file
for SQLite, a fresh uuid schema for PostgreSQL) and ``raw_rows(table)`` (the
raw rows of a table, to check what is really stored). The suite opens the
stores itself, so tests can open a second ``Stores`` on the same database to
play a second process.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from shared.errors import NotFound
from shared.previews import preview_key
from shared.stores import (
    ClaimOutcome,
    DeleteOutcome,
    Feed,
    ImageStatus,
    Page,
    ParkOutcome,
    Stores,
    Task,
    TaskItem,
    TaskStatus,
    TenantLimits,
    UpsertOutcome,
    open_stores,
)
from shared.stores.migrations import SQLITE

T0 = datetime(2026, 1, 1, tzinfo=UTC)
URL = "https://a.example/news/1"


def page(version: int, url: str = URL, **fields: Any) -> Page:
    values: dict[str, Any] = {
        "url": url,
        "host": url.split("/")[2],
        "version": version,
        "html": f"<p>v{version}</p>",
        "doc_json": f'{{"v": {version}}}'.encode(),
        "title": f"Title {version}",
        "text": f"body of version {version}",
        "content_hash": f"h{version}",
        "etag": f'"e{version}"',
        "seen_at": T0,
        "parsed_at": T0 + timedelta(seconds=1),
        "written_at": T0 + timedelta(seconds=2),
        "source_kind": "rss",
    }
    values.update(fields)
    return Page(**values)


class StoreContract:
    @pytest.fixture
    def store_url(self) -> str:
        raise NotImplementedError("the engine's test module provides store_url")

    async def raw_rows(self, store_url: str, table: str) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    @pytest.fixture
    async def stores(self, store_url: str) -> AsyncIterator[Stores]:
        s = await open_stores(store_url, pool_size=4)
        yield s
        await s.close()

    # ------------------------------------------------------------------- pages

    async def test_page_roundtrip_keeps_every_field(self, stores: Stores) -> None:
        p = page(3, media_ready_at=T0 + timedelta(microseconds=1500))
        assert await stores.pages.upsert(p) is UpsertOutcome.inserted
        assert await stores.pages.get(URL) == p
        assert await stores.pages.get("https://a.example/other") is None

    async def test_highest_version_wins_under_reordering(self, stores: Stores) -> None:
        versions = list(range(1, 31))
        random.Random(7).shuffle(versions)
        outcomes = [await stores.pages.upsert(page(v)) for v in versions]
        got = await stores.pages.get(URL)
        assert got is not None
        assert got.version == 30
        assert got.html == "<p>v30</p>"
        assert outcomes.count(UpsertOutcome.inserted) == 1
        after_max = outcomes[versions.index(30) + 1 :]
        assert all(o is UpsertOutcome.stale for o in after_max)

    async def test_redelivery_is_unchanged(self, stores: Stores) -> None:
        assert await stores.pages.upsert(page(5)) is UpsertOutcome.inserted
        assert await stores.pages.upsert(page(5, html="other")) is UpsertOutcome.unchanged
        assert await stores.pages.upsert(page(6)) is UpsertOutcome.updated
        assert await stores.pages.upsert(page(4)) is UpsertOutcome.stale
        got = await stores.pages.get(URL)
        assert got is not None
        assert got.version == 6

    async def test_upsert_many_reports_each_outcome(self, stores: Stores) -> None:
        other = "https://b.example/x"
        outcomes = await stores.pages.upsert_many([page(2), page(1), page(3), page(1, url=other), page(3)])
        assert outcomes == [
            UpsertOutcome.inserted,
            UpsertOutcome.stale,
            UpsertOutcome.updated,
            UpsertOutcome.inserted,
            UpsertOutcome.unchanged,
        ]
        assert await stores.pages.count() == 2
        assert await stores.pages.upsert_many([]) == []

    async def test_tombstone_fences_older_upserts(self, stores: Stores) -> None:
        await stores.pages.upsert(page(5))
        assert await stores.pages.delete(URL, 7, now=T0) is DeleteOutcome.deleted
        assert await stores.pages.get(URL) is None
        tomb = await stores.pages.get(URL, include_deleted=True)
        assert tomb is not None
        assert tomb.deleted
        assert tomb.version == 7
        assert tomb.html == ""
        assert tomb.written_at == T0
        assert await stores.pages.upsert(page(6)) is UpsertOutcome.stale
        assert await stores.pages.upsert(page(7)) is UpsertOutcome.stale  # a delete wins a tie
        assert await stores.pages.delete(URL, 7) is DeleteOutcome.unchanged
        assert await stores.pages.delete(URL, 6) is DeleteOutcome.stale
        assert await stores.pages.count() == 0
        assert await stores.pages.upsert(page(8)) is UpsertOutcome.inserted
        assert (await stores.pages.get(URL)) == page(8)

    async def test_delete_before_the_page_arrives(self, stores: Stores) -> None:
        assert await stores.pages.delete(URL, 4) is DeleteOutcome.absent
        assert await stores.pages.upsert(page(3)) is UpsertOutcome.stale
        assert await stores.pages.get(URL) is None
        assert await stores.pages.delete(URL, 5) is DeleteOutcome.absent  # raises the fence
        assert await stores.pages.upsert(page(5)) is UpsertOutcome.stale

    async def test_delete_of_an_older_version_is_stale(self, stores: Stores) -> None:
        await stores.pages.upsert(page(9))
        assert await stores.pages.delete(URL, 8) is DeleteOutcome.stale
        assert (await stores.pages.get(URL)) == page(9)

    async def test_concurrent_writers_leave_the_max(self, stores: Stores, store_url: str) -> None:
        versions = list(range(1, 61))
        random.Random(3).shuffle(versions)
        second = await open_stores(store_url, pool_size=4)  # a second "process"
        try:
            await asyncio.gather(
                *((stores if i % 2 else second).pages.upsert(page(v, title=f"t{v}")) for i, v in enumerate(versions)),
                *((stores if i % 2 else second).pages.delete(URL, v) for i, v in enumerate([10, 20])),
            )
            for s in (stores, second):
                got = await s.pages.get(URL)
                assert got is not None
                assert got.version == 60
                assert got.title == "t60"
        finally:
            await second.close()

    async def test_count_random_urls_and_recent(self, stores: Stores) -> None:
        urls = [f"https://a.example/p{i}" for i in range(10)]
        for i, u in enumerate(urls):
            await stores.pages.upsert(page(1, url=u, written_at=T0 + timedelta(seconds=i)))
        await stores.pages.delete(urls[0], 2)
        assert await stores.pages.count() == 9
        picked = await stores.pages.random_urls(5)
        assert len(picked) == len(set(picked)) == 5
        assert set(picked) <= set(urls[1:])
        assert set(await stores.pages.random_urls(50)) == set(urls[1:])
        recent = await stores.pages.recent(3)
        assert [h.url for h in recent] == [urls[9], urls[8], urls[7]]

    async def test_a_checks_previews_are_not_counted_listed_or_picked(self, stores: Stores) -> None:
        """The front page's counter counted a check's unpublished previews as Turbo pages."""
        await stores.pages.upsert(page(1, url="https://a.example/live", written_at=T0))
        preview = preview_key("task-1", "https://a.example/draft")
        await stores.pages.upsert(page(1, url=preview, written_at=T0 + timedelta(seconds=1)))
        assert await stores.pages.get(preview) is not None  # stored, and shown at its preview address
        assert await stores.pages.count() == 1
        assert [h.url for h in await stores.pages.recent(5)] == ["https://a.example/live"]
        assert await stores.pages.random_urls(5) == ["https://a.example/live"]

    # ------------------------------------------------------------------- hashes

    async def test_hash_check_and_set(self, stores: Stores) -> None:
        first = await stores.hashes.check_and_set("feed1", URL, "h1", now=T0)
        assert first.changed
        assert first.version >= int(T0.timestamp() * 1_000_000)
        assert await stores.hashes.check_and_set("feed1", URL, "h1", now=T0) == (False, first.version)
        # the clock going backwards never makes a version go backwards
        second = await stores.hashes.check_and_set("feed1", URL, "h2", now=T0 - timedelta(days=1))
        assert second.changed
        assert second.version > first.version
        other = await stores.hashes.check_and_set("feed2", URL, "h9", now=T0)
        assert other.version > second.version  # strictly increasing per URL across sources
        entry = await stores.hashes.get("feed1", URL)
        assert entry is not None
        assert (entry.content_hash, entry.version) == ("h2", second.version)
        assert await stores.hashes.urls_of_source("feed1") == [URL]
        assert await stores.hashes.forget("feed1", URL)
        assert not await stores.hashes.forget("feed1", URL)
        assert await stores.hashes.get("feed1", URL) is None

    async def test_hash_versions_distinct_under_concurrency(self, stores: Stores) -> None:
        results = await asyncio.gather(
            *(stores.hashes.check_and_set(f"src{i}", URL, f"h{i}", now=T0) for i in range(25))
        )
        versions = [r.version for r in results]
        assert all(r.changed for r in results)
        assert len(set(versions)) == 25

    async def test_claim_by_priority(self, stores: Stores) -> None:
        assert await stores.hashes.claim(URL, "rss:1", 20) is ClaimOutcome.claimed
        assert await stores.hashes.claim(URL, "auto:a", 10) is ClaimOutcome.outranked
        assert await stores.hashes.claim(URL, "yml:2", 20) is ClaimOutcome.outranked  # ties keep the owner
        assert await stores.hashes.claim(URL, "rss:1", 20) is ClaimOutcome.owned
        assert await stores.hashes.claim(URL, "upload:t", 40) is ClaimOutcome.taken_over
        owner = await stores.hashes.owner(URL)
        assert owner is not None
        assert (owner.source_id, owner.priority) == ("upload:t", 40)
        assert not await stores.hashes.release(URL, "rss:1")
        assert await stores.hashes.release(URL, "upload:t")
        assert await stores.hashes.owner(URL) is None

    async def test_guid_mapping(self, stores: Stores) -> None:
        assert await stores.hashes.url_for_guid("feed1", "g1") is None
        await stores.hashes.remember_guid("feed1", "g1", URL)
        await stores.hashes.remember_guid("feed1", "g1", URL)
        assert await stores.hashes.url_for_guid("feed1", "g1") == URL
        assert await stores.hashes.url_for_guid("feed2", "g1") is None
        await stores.hashes.remember_guid("feed1", "g1", "https://a.example/moved")
        assert await stores.hashes.url_for_guid("feed1", "g1") == "https://a.example/moved"

    # --------------------------------------------------------- hashes, batches

    @staticmethod
    async def _hash_scenario(stores: Stores, prefix: str, batch: bool) -> list[tuple[bool, int]]:
        """One history of check_and_set calls on URLs under ``prefix``, one-by-one or as batches."""
        hashes = stores.hashes

        def u(n: int) -> str:
            return f"https://{prefix}.example/{n}"

        async def apply(source: str, items: list[tuple[str, str]], now: datetime) -> list[tuple[bool, int]]:
            if batch:
                return [tuple(r) for r in await hashes.check_and_set_many(source, items, now=now)]  # type: ignore[misc]
            return [tuple(await hashes.check_and_set(source, url, h, now=now)) for url, h in items]  # type: ignore[misc]

        seed = await apply("feed1", [(u(2), "same"), (u(3), "old")], T0)
        # another source wrote u(4) later (a higher version): feed1's next version must beat it
        seed += await apply("other", [(u(4), "theirs")], T0 + timedelta(days=1))
        # 1,200 items cross the engines' chunks; u(1) and u(5) come twice, u(7) again in a later chunk
        items = [
            (u(1), "h1"),
            (u(2), "same"),
            (u(3), "new"),
            (u(4), "mine"),
            (u(1), "h1"),
            (u(5), "a"),
            (u(5), "b"),
            (u(7), "x"),
        ]
        items += [(u(100 + n), f"f{n}") for n in range(1180)] + [(u(7), "y"), (u(1), "h1")]
        return seed + await apply("feed1", items, T0)

    async def test_check_and_set_many_equals_one_by_one(self, stores: Stores) -> None:
        one = await self._hash_scenario(stores, "one", batch=False)
        many = await self._hash_scenario(stores, "many", batch=True)
        assert many == one
        seed, rest = many[:3], many[3:]
        assert rest[:8] == [
            (True, rest[0][1]),
            (False, seed[0][1]),
            (True, rest[2][1]),
            (True, rest[3][1]),
            (False, rest[0][1]),
            (True, rest[5][1]),
            (True, rest[6][1]),
            (True, rest[7][1]),
        ]
        assert rest[3][1] > seed[2][1]  # above the other source's later version of the URL
        assert rest[6][1] > rest[5][1]  # a URL twice: strictly increasing
        assert rest[-2][1] > rest[7][1]  # again in a later chunk: the earlier chunk's write is seen
        assert rest[-1] == (False, rest[0][1])
        entries = await stores.hashes.get_many("feed1", [f"https://many.example/{n}" for n in (1, 5, 7, 99)])
        assert {url: (e.content_hash, e.version) for url, e in entries.items()} == {
            "https://many.example/1": ("h1", rest[0][1]),
            "https://many.example/5": ("b", rest[6][1]),
            "https://many.example/7": ("y", rest[-2][1]),
        }
        for url, entry in entries.items():
            assert await stores.hashes.get("feed1", url) == entry

    async def test_check_and_set_many_is_idempotent_and_versions_increase(self, stores: Stores) -> None:
        items = [(f"https://a.example/{n}", f"h{n}") for n in range(30)]
        first = await stores.hashes.check_and_set_many("feed1", items, now=T0)
        assert all(r.changed for r in first)
        again = await stores.hashes.check_and_set_many("feed1", items, now=T0 + timedelta(hours=1))
        assert again == [(False, r.version) for r in first]
        assert await stores.hashes.check_and_set_many("feed1", []) == []
        assert await stores.hashes.get_many("feed1", []) == {}
        # other sources, the clock going backwards: every URL's versions still strictly increase
        second = await stores.hashes.check_and_set_many("feed2", items, now=T0 - timedelta(days=1))
        third = await stores.hashes.check_and_set_many("feed3", items, now=T0 - timedelta(days=2))
        for a, b, c in zip(first, second, third, strict=True):
            assert a.version < b.version < c.version

    async def test_a_hash_keeps_the_read_of_its_source_that_recorded_it(self, stores: Stores) -> None:
        """``seen_at``: written with a changed hash, kept while the hash is unchanged (another attempt at
        one fetch tells by it what an earlier attempt published), replaced by the next change."""
        urls = [f"https://seen.example/{n}" for n in range(3)]
        fetch1, fetch2 = T0 - timedelta(minutes=5), T0 + timedelta(minutes=5)
        await stores.hashes.check_and_set_many("feed1", [(u, "a") for u in urls[:2]], now=T0, seen_at=fetch1)
        await stores.hashes.check_and_set("feed1", urls[2], "a", now=T0, seen_at=fetch1)
        await stores.hashes.check_and_set("feed1", "https://seen.example/none", "a", now=T0)
        entries = await stores.hashes.get_many("feed1", [*urls, "https://seen.example/none"])
        assert {u: e.seen_at for u, e in entries.items()} == {
            **dict.fromkeys(urls, fetch1),
            "https://seen.example/none": None,
        }
        changes = [(urls[0], "a"), (urls[1], "b")]
        checks = await stores.hashes.check_and_set_many("feed1", changes, now=T0 + timedelta(hours=1), seen_at=fetch2)
        assert [c.changed for c in checks] == [False, True]
        assert await stores.hashes.get("feed1", urls[0]) == entries[urls[0]]  # unchanged: nothing written
        stored = await stores.hashes.get_many("feed1", urls)
        assert {u: e.seen_at for u, e in stored.items()} == {urls[0]: fetch1, urls[1]: fetch2, urls[2]: fetch1}

    async def test_concurrent_batches_never_deadlock_and_versions_stay_distinct(self, stores: Stores) -> None:
        urls = [f"https://a.example/{n}" for n in range(200)]
        # overlapping batches from four sources, in opposite orders: each URL's lock taken by all of them
        batches = [
            stores.hashes.check_and_set_many(f"src{i}", [(u, f"h{i}") for u in (urls if i % 2 else urls[::-1])], now=T0)
            for i in range(4)
        ]
        results = await asyncio.wait_for(asyncio.gather(*batches), timeout=60)
        for n in range(200):
            versions = {results[i][n if i % 2 else 199 - n].version for i in range(4)}
            assert len(versions) == 4

    async def test_owners_and_claim_many_equal_one_by_one(self, stores: Stores) -> None:
        async def scenario(prefix: str, batch: bool) -> list[ClaimOutcome]:
            urls = [f"https://{prefix}.example/{n}" for n in range(6)]
            await stores.hashes.claim(urls[0], "rss:1", 20)
            await stores.hashes.claim(urls[1], "upload:t", 40)
            await stores.hashes.claim(urls[2], "auto:a", 10)
            wanted = [urls[0], urls[1], urls[2], urls[3], urls[3], urls[4]]
            if batch:
                return await stores.hashes.claim_many(wanted, "yml:2", 20, now=T0)
            return [await stores.hashes.claim(url, "yml:2", 20, now=T0) for url in wanted]

        one, many = await scenario("one", False), await scenario("many", True)
        assert (
            many
            == one
            == [
                ClaimOutcome.outranked,
                ClaimOutcome.outranked,
                ClaimOutcome.taken_over,
                ClaimOutcome.claimed,
                ClaimOutcome.owned,
                ClaimOutcome.claimed,
            ]
        )
        urls = [f"https://many.example/{n}" for n in range(6)]
        owners = await stores.hashes.owners(urls)
        assert set(owners) == set(urls[:5])
        for url, owner in owners.items():
            assert await stores.hashes.owner(url) == owner
        assert owners[urls[2]].source_id == "yml:2"
        assert owners[urls[1]].source_id == "upload:t"
        assert await stores.hashes.claim_many([], "yml:2", 20) == []
        assert await stores.hashes.owners([]) == {}

    async def test_guid_batches(self, stores: Stores) -> None:
        await stores.hashes.remember_guid("feed1", "g0", URL)
        pairs = [(f"g{n}", f"https://a.example/{n}") for n in range(1, 700)] + [("g1", "https://a.example/last")]
        await stores.hashes.remember_guids("feed1", pairs)
        await stores.hashes.remember_guids("feed1", pairs)  # idempotent
        await stores.hashes.remember_guids("feed1", [])
        found = await stores.hashes.urls_for_guids("feed1", ["g0", "g1", "g2", "g699", "nope"])
        assert found == {
            "g0": URL,
            "g1": "https://a.example/last",
            "g2": "https://a.example/2",
            "g699": "https://a.example/699",
        }
        for guid, url in found.items():
            assert await stores.hashes.url_for_guid("feed1", guid) == url
        assert await stores.hashes.urls_for_guids("feed2", ["g1"]) == {}

    # ------------------------------------------------------------------- images

    async def test_image_ordered_once(self, stores: Stores, store_url: str) -> None:
        img = "https://a.example/i.jpg"
        second = await open_stores(store_url, pool_size=4)
        try:
            wins = await asyncio.gather(
                *((stores if i % 2 else second).images.mark_ordered(img, T0) for i in range(40))
            )
        finally:
            await second.close()
        assert wins.count(True) == 1
        rec = await stores.images.get(img)
        assert rec is not None
        assert rec.status is ImageStatus.pending
        assert not await stores.images.mark_ordered(img, T0 + timedelta(seconds=10), window_s=60)
        # a lost order is re-sent once the window has passed
        assert await stores.images.mark_ordered(img, T0 + timedelta(seconds=61), window_s=60)

    async def test_a_failed_image_is_ordered_again_when_the_webmaster_asks_after_its_failure(
        self, stores: Stores
    ) -> None:
        """A 404 put right at the same URL stayed failed for 7 days (media.failure_retry_s): "fetch now"
        orders an image again at once when it failed before the webmaster asked, whatever its retry time."""
        bad, ok = "https://a.example/fixed.png", "https://a.example/fine.png"
        await stores.images.record_failed(bad, "http_404", T0 + timedelta(days=7), now=T0)
        assert not await stores.images.mark_ordered(bad, T0 + timedelta(minutes=5))  # its retry time is far
        asked = T0 + timedelta(minutes=5)
        # a failure after the asking is no reason to order it again (the fix did not work): only earlier ones
        assert not await stores.images.mark_ordered(bad, T0 + timedelta(minutes=6), failed_before=T0 - timedelta(1))
        assert await stores.images.mark_ordered_many([bad], T0 + timedelta(minutes=6), failed_before=asked) == {bad}
        assert (await stores.images.get(bad)).status is ImageStatus.pending  # type: ignore[union-attr]
        # ordered once: a second asker in the same window does not order it again
        assert not await stores.images.mark_ordered(bad, T0 + timedelta(minutes=7), failed_before=asked)
        # it failed again after the asking: the same asking orders nothing more
        await stores.images.record_failed(bad, "http_404", T0 + timedelta(days=7), now=T0 + timedelta(minutes=8))
        assert not await stores.images.mark_ordered(bad, T0 + timedelta(minutes=9), failed_before=asked)
        # a cached image is never ordered again for it
        await stores.images.record_ok(ok, cdn_url="/cdn/img/ok.png", now=T0)
        assert not await stores.images.mark_ordered(ok, T0 + timedelta(minutes=9), failed_before=asked)

    async def test_image_ok_and_failed(self, stores: Stores) -> None:
        ok, bad = "https://a.example/ok.png", "https://a.example/bad.png"
        await stores.images.mark_ordered(ok, T0)
        await stores.images.record_ok(
            ok, cdn_url="/cdn/img/ab.png", mime="image/png", size=10, width=3, height=2, sha256="ab", now=T0
        )
        await stores.images.record_failed(ok, "timeout", now=T0)  # never downgrades a cached image
        assert not await stores.images.mark_ordered(ok, T0 + timedelta(days=9))
        await stores.images.record_failed(bad, "404", T0 + timedelta(hours=1), now=T0)
        assert not await stores.images.mark_ordered(bad, T0 + timedelta(minutes=5))
        assert await stores.images.mark_ordered(bad, T0 + timedelta(hours=1))
        got = await stores.images.get_many([ok, bad, "https://a.example/none.png", ok])
        assert set(got) == {ok, bad}
        assert got[ok].status is ImageStatus.ok
        assert (got[ok].cdn_url, got[ok].mime, got[ok].size, got[ok].width, got[ok].height, got[ok].sha256) == (
            "/cdn/img/ab.png",
            "image/png",
            10,
            3,
            2,
            "ab",
        )
        assert got[bad].status is ImageStatus.pending
        assert got[bad].reason == "404"
        many = [f"https://a.example/{i}.png" for i in range(1200)]  # more than one IN (...) chunk
        for u in many[:3]:
            await stores.images.record_failed(u, "x")
        assert len(await stores.images.get_many(many)) == 3

    async def test_a_dropped_copy_is_failed_and_ordered_again_after_its_retry(self, stores: Stores) -> None:
        """A purge whose source gave no good image forgets the copy (the one way an ``ok`` record changes)."""
        img = "https://a.example/purged.png"
        await stores.images.record_ok(img, cdn_url="/cdn/img/pp.png", sha256="pp", variants=(480,), now=T0)
        await stores.images.drop_copy(img, "http_404", T0 + timedelta(hours=1), now=T0 + timedelta(minutes=1))
        rec = await stores.images.get(img)
        assert rec is not None
        assert (rec.status, rec.cdn_url, rec.reason, rec.sha256, rec.variants) == (
            ImageStatus.failed, None, "http_404", None, (),
        )  # fmt: skip
        assert not await stores.images.mark_ordered(img, T0 + timedelta(minutes=5))
        assert await stores.images.mark_ordered(img, T0 + timedelta(hours=1))

    async def test_image_rechecks_are_claimed_once_when_due(self, stores: Stores, store_url: str) -> None:
        """A cached image is asked about again when its check says (``recheck_at``), by one sweep only."""
        old, fresh, pending = "https://a.example/old.png", "https://a.example/new.png", "https://a.example/p.png"
        short = "https://a.example/short.png"
        await stores.images.record_ok(old, cdn_url="/cdn/old", etag='"v1"', last_modified="Mon, 1 Dec 2025", now=T0)
        await stores.images.record_ok(fresh, cdn_url="/cdn/new", now=T0 + timedelta(days=6))
        # its own lifetime: due a day after it was stored, before "old" is
        await stores.images.record_ok(
            short, cdn_url="/cdn/s", now=T0 + timedelta(days=2), recheck_at=T0 + timedelta(days=3)
        )
        await stores.images.mark_ordered(pending, T0)
        rec = await stores.images.get(old)
        assert rec is not None
        assert (rec.etag, rec.last_modified, rec.checked_at) == ('"v1"', "Mon, 1 Dec 2025", T0)
        assert rec.recheck_at == T0 + timedelta(days=7)  # no due time given: the default period on
        assert (await stores.images.get(pending)).recheck_at is None  # type: ignore[union-attr]
        now = T0 + timedelta(days=8)
        hold = now + timedelta(days=7)
        second = await open_stores(store_url, pool_size=2)
        try:
            claims = await asyncio.gather(
                *((stores if i % 2 else second).images.claim_rechecks(now, 10, hold_until=hold) for i in range(6))
            )
        finally:
            await second.close()
        # due, each claimed by one of the six (the longest due first: below, with a limit of 1)
        claimed = [r for c in claims for r in c]
        assert sorted(r.url for r in claimed) == [old, short]
        by_url = {r.url: r for r in claimed}
        assert (by_url[old].cdn_url, by_url[old].etag) == ("/cdn/old", '"v1"')
        assert (by_url[old].checked_at, by_url[old].recheck_at) == (now, hold)
        assert await stores.images.claim_rechecks(now, 10, hold_until=hold) == []
        # a 304 keeps the copy and the validators it did not replace, and says when to ask again
        await stores.images.record_checked(
            old, now + timedelta(hours=1), etag='"v2"', recheck_at=now + timedelta(days=30)
        )
        rec = await stores.images.get(old)
        assert rec is not None
        assert (rec.status, rec.cdn_url, rec.etag, rec.last_modified) == (
            ImageStatus.ok,
            "/cdn/old",
            '"v2"',
            "Mon, 1 Dec 2025",
        )
        assert (rec.checked_at, rec.recheck_at) == (now + timedelta(hours=1), now + timedelta(days=30))
        later = now + timedelta(days=20)
        # "fresh" is due (day 13), "short" (held to day 15) too, "old" not before day 38
        held = later + timedelta(days=7)
        assert [r.url for r in await stores.images.claim_rechecks(later, 1, hold_until=held)] == [fresh]
        assert [r.url for r in await stores.images.claim_rechecks(later, 5, hold_until=held)] == [short]
        # a round whose orders did not go out makes them due again at once
        await stores.images.record_checked(short, later, recheck_at=later)
        assert [r.url for r in await stores.images.claim_rechecks(later, 5, hold_until=hold)] == [short]

    async def test_pages_are_linked_to_the_copies_they_show(self, stores: Stores) -> None:
        await stores.images.link_pages([("/cdn/a", URL), ("/cdn/b", URL), ("/cdn/a", URL + "2")])
        await stores.images.link_pages([("/cdn/a", URL)])  # again: nothing new
        many = [("/cdn/c", f"{URL}/{i}") for i in range(600)]  # more than one statement's worth
        await stores.images.link_pages(many)
        assert await stores.images.pages_using("/cdn/a") == [URL, URL + "2"]
        assert await stores.images.pages_using("/cdn/b") == [URL]
        assert len(await stores.images.pages_using("/cdn/c")) == 600
        assert await stores.images.pages_using("/cdn/none") == []

    # ------------------------------------------------------------------- delay

    async def test_park_versions(self, stores: Stores) -> None:
        deadline = T0 + timedelta(minutes=5)
        assert await stores.delay.park(URL, 2, b"v2", ["m1", "m2"], deadline, host="a.example") is ParkOutcome.parked
        assert await stores.delay.park(URL, 2, b"v2", ["m1"], deadline) is ParkOutcome.unchanged
        assert await stores.delay.park(URL, 1, b"v1", ["m9"], deadline) is ParkOutcome.stale
        assert await stores.delay.park(URL, 3, b"v3", ["m3"], deadline, host="a.example") is ParkOutcome.replaced
        got = await stores.delay.get(URL)
        assert got is not None
        assert (got.version, got.doc_json, got.pending, got.deadline) == (3, b"v3", frozenset({"m3"}), deadline)
        assert await stores.delay.resolve("m1") == []  # the replaced version's media no longer counts
        with pytest.raises(ValueError, match="nothing pending"):
            await stores.delay.park(URL, 4, b"v4", [], deadline)

    async def test_resolve_releases_once_under_concurrency(self, stores: Stores, store_url: str) -> None:
        deadline = T0 + timedelta(minutes=5)
        media = [f"https://a.example/m{i}.jpg" for i in range(6)]
        docs = [f"https://a.example/doc{i}" for i in range(8)]
        for i, d in enumerate(docs):
            await stores.delay.park(d, 1, d.encode(), media[i % 3 : i % 3 + 4], deadline, host="a.example")
        second = await open_stores(store_url, pool_size=4)
        try:
            calls = [(stores if n % 2 else second).delay.resolve(m, now=T0) for n, m in enumerate(media * 3)]
            random.Random(5).shuffle(calls)
            results = await asyncio.gather(*calls)
        finally:
            await second.close()
        released = [d.url for batch in results for d in batch]
        assert sorted(released) == sorted(docs)  # every doc exactly once
        assert all(d.pending == frozenset() and d.released_at == T0 for batch in results for d in batch)
        assert await stores.delay.count() == 0  # none waiting ...
        assert len(await self.raw_rows(store_url, "delay_docs")) == len(docs)  # ... but all kept until confirmed
        assert await stores.delay.due(T0 + timedelta(seconds=59), lease_s=60) == []  # still leased
        assert await stores.delay.confirm((d, 1) for d in docs[:3]) == 3
        again = await stores.delay.due(T0 + timedelta(seconds=60), lease_s=60)
        assert sorted(d.url for d in again) == sorted(docs[3:])  # unconfirmed: handed out again
        assert await stores.delay.confirm([(d.url, d.version) for d in again] * 2) == 5
        assert await self.raw_rows(store_url, "delay_docs") == []
        assert await self.raw_rows(store_url, "delay_pending") == []

    async def test_release_is_a_lease_until_confirmed(self, stores: Stores, store_url: str) -> None:
        deadline = T0 + timedelta(minutes=5)
        await stores.delay.park(URL, 1, b"v1", ["m1", "m2"], deadline, host="a.example")
        assert await stores.delay.resolve("m1", now=T0) == []
        [doc] = await stores.delay.resolve("m2", now=T0 + timedelta(seconds=1))
        assert (doc.url, doc.version, doc.doc_json, doc.pending) == (URL, 1, b"v1", frozenset())
        assert doc.released_at == T0 + timedelta(seconds=1)
        assert await stores.delay.resolve("m2", now=T0 + timedelta(seconds=2)) == []  # a redelivery: released once
        got = await stores.delay.get(URL)
        assert got is not None
        assert got.released_at == doc.released_at  # not deleted: in flight
        assert (await stores.delay.count(), await stores.delay.waiting_by_host()) == (0, {})
        assert await stores.delay.park(URL, 1, b"v1", ["m1"], deadline) is ParkOutcome.unchanged
        # the publish never happened (crash): after the lease, the sweep hands it out again
        assert await stores.delay.due(T0 + timedelta(seconds=30), lease_s=30) == []
        [back] = await stores.delay.due(T0 + timedelta(seconds=31), lease_s=30)
        assert (back.url, back.version, back.doc_json, back.pending) == (URL, 1, b"v1", frozenset())
        assert back.released_at == T0 + timedelta(seconds=31)
        assert await stores.delay.due(T0 + timedelta(seconds=60), lease_s=30) == []  # a fresh lease
        assert await stores.delay.confirm([(URL, 1)]) == 1
        assert await stores.delay.get(URL) is None
        assert await stores.delay.confirm([(URL, 1)]) == 0  # the second publish's confirm: nothing left
        assert await stores.delay.due(T0 + timedelta(days=1), lease_s=30) == []
        assert await self.raw_rows(store_url, "delay_docs") == []
        with pytest.raises(ValueError, match="lease_s"):
            await stores.delay.due(T0, lease_s=0)

    async def test_confirm_keeps_a_newer_parked_version(self, stores: Stores) -> None:
        deadline = T0 + timedelta(minutes=5)
        await stores.delay.park(URL, 1, b"v1", ["m1"], deadline, host="a.example")
        [v1] = await stores.delay.resolve("m1", now=T0)
        # a newer version arrives while v1's publish is in flight: it waits for its own media
        assert await stores.delay.park(URL, 2, b"v2", ["m2"], deadline, host="a.example") is ParkOutcome.replaced
        assert await stores.delay.confirm([(v1.url, v1.version)]) == 0
        got = await stores.delay.get(URL)
        assert got is not None
        assert (got.version, got.pending, got.released_at) == (2, frozenset({"m2"}), None)
        assert await stores.delay.count() == 1
        assert await stores.delay.confirm([(URL, 2)]) == 0  # waiting, not released: kept
        [v2] = await stores.delay.resolve("m2", now=T0)
        assert (v2.version, v2.doc_json) == (2, b"v2")
        assert await stores.delay.confirm([(URL, 2), ("https://a.example/never", 1)]) == 1
        assert await stores.delay.get(URL) is None

    async def test_due_releases_with_missing_media(self, stores: Stores) -> None:
        await stores.delay.park(
            "https://a.example/1", 1, b"1", ["m1", "m2"], T0 + timedelta(seconds=10), host="a.example"
        )
        await stores.delay.park("https://b.example/2", 1, b"2", ["m2"], T0 + timedelta(seconds=20), host="b.example")
        await stores.delay.park("https://b.example/3", 1, b"3", ["m3"], T0 + timedelta(seconds=30), host="b.example")
        assert await stores.delay.waiting_by_host() == {"a.example": 1, "b.example": 2}
        assert await stores.delay.due(T0 + timedelta(seconds=5)) == []
        due = await stores.delay.due(T0 + timedelta(seconds=25), limit=10)
        assert [(d.url, d.pending) for d in due] == [
            ("https://a.example/1", frozenset({"m1", "m2"})),
            ("https://b.example/2", frozenset({"m2"})),
        ]
        assert all(d.released_at == T0 + timedelta(seconds=25) for d in due)
        assert await stores.delay.due(T0 + timedelta(seconds=25)) == []  # leased: released once
        assert await stores.delay.resolve("m2") == []
        assert await stores.delay.count() == 1
        assert await stores.delay.waiting_by_host() == {"b.example": 1}
        # not confirmed within the lease: handed out again, with the media still missing
        again = await stores.delay.due(T0 + timedelta(seconds=85), lease_s=60)
        assert [(d.url, d.pending) for d in again] == [
            ("https://a.example/1", frozenset({"m1"})),  # m2 came meanwhile
            ("https://b.example/2", frozenset()),
            ("https://b.example/3", frozenset({"m3"})),  # its own deadline passed
        ]
        assert await stores.delay.confirm((d.url, d.version) for d in again[:2]) == 2
        assert await stores.delay.discard("https://b.example/3")
        assert not await stores.delay.discard("https://b.example/3")
        assert await stores.delay.get("https://b.example/3") is None
        assert await stores.delay.resolve("m3") == []

    async def test_due_limit_and_concurrent_callers(self, stores: Stores) -> None:
        for i in range(30):
            await stores.delay.park(f"https://a.example/{i}", 1, b"x", ["m"], T0 + timedelta(seconds=i))
        first = await stores.delay.due(T0 + timedelta(hours=1), limit=5)
        assert [d.url for d in first] == [f"https://a.example/{i}" for i in range(5)]
        batches = await asyncio.gather(*(stores.delay.due(T0 + timedelta(hours=1), limit=4) for _ in range(10)))
        urls = [d.url for b in batches for d in b]
        assert len(urls) == len(set(urls)) == 25
        # none confirmed: after the lease, concurrent sweeps hand each out again, once
        later = T0 + timedelta(hours=1, seconds=60)
        batches = await asyncio.gather(*(stores.delay.due(later, limit=4, lease_s=60) for _ in range(10)))
        urls = [d.url for b in batches for d in b]
        assert len(urls) == len(set(urls)) == 30

    # ------------------------------------------------------------------- feeds

    async def test_feed_registry_and_status(self, stores: Stores) -> None:
        feed = Feed(
            feed_id="f1",
            url="https://a.example/rss",
            host="a.example",
            format="rss",
            tenant_id="t1",
            services=("turbo", "news"),
            created_at=T0,
        )
        assert await stores.feeds.upsert_feed(feed) is UpsertOutcome.inserted
        assert await stores.feeds.upsert_feed(feed) is UpsertOutcome.unchanged
        changed = Feed(
            feed_id="f1",
            url="https://a.example/rss2",
            host="a.example",
            format="rss",
            tenant_id="t1",
            services=("turbo",),
            autoparser=True,
        )
        assert await stores.feeds.upsert_feed(changed) is UpsertOutcome.updated
        got = await stores.feeds.get("f1")
        assert got is not None
        assert (got.url, got.services, got.autoparser, got.created_at) == (
            "https://a.example/rss2",
            ("turbo",),
            True,
            T0,
        )
        await stores.feeds.upsert_feed(
            Feed(feed_id="f2", url="https://b.example/yml", host="b.example", format="yml", tenant_id="t2")
        )
        await stores.feeds.update_schedule(
            "f1",
            last_fetch_at=T0,
            last_http_status=304,
            fetch_result="not_modified",
            etag='"x"',
            next_fetch_at=T0 + timedelta(minutes=10),
            interval_s=600.0,
            consecutive_failures=2,
        )
        await stores.feeds.update_parse_status("f1", parse_result="partial", error_line=3, error_column=14)
        got = await stores.feeds.get("f1")
        assert got is not None
        assert got.status.last_http_status == 304
        assert got.status.next_fetch_at == T0 + timedelta(minutes=10)
        assert (got.status.consecutive_failures, got.status.error_line, got.status.interval_s) == (2, 3, 600.0)
        assert [f.feed_id for f in await stores.feeds.due(T0)] == ["f2"]  # never fetched: due now
        assert [f.feed_id for f in await stores.feeds.due(T0 + timedelta(hours=1))] == ["f2", "f1"]
        assert [f.feed_id for f in await stores.feeds.list()] == ["f1", "f2"]
        assert [f.feed_id for f in await stores.feeds.list("t2")] == ["f2"]
        # each writer writes its own fields only (shared/stores/feeds.py)
        with pytest.raises(ValueError, match="update_schedule does not write"):
            await stores.feeds.update_schedule("f1", owner="evil")
        with pytest.raises(ValueError, match=r"update_schedule does not write \['items'\]"):
            await stores.feeds.update_schedule("f1", items=3)
        with pytest.raises(ValueError, match="update_parse_status does not write"):
            await stores.feeds.update_parse_status("f1", next_fetch_at=T0)
        with pytest.raises(NotFound):
            await stores.feeds.update_parse_status("nope", items=3)
        await stores.feeds.set_autoparser_unavailable("f1", "robots.txt forbids images")
        got = await stores.feeds.get("f1")
        assert got is not None
        assert got.status.autoparser_unavailable_reason == "robots.txt forbids images"
        assert (got.status.last_result, got.status.parse_result) == ("not_modified", "partial")
        assert await stores.feeds.delete_feed("f2")
        assert not await stores.feeds.delete_feed("f2")
        assert [f.feed_id for f in await stores.feeds.due(T0 + timedelta(hours=1))] == ["f1"]
        assert [f.feed_id for f in await stores.feeds.list()] == ["f1"]
        assert len(await stores.feeds.list(include_deleted=True)) == 2
        deleted = await stores.feeds.get("f2")
        assert deleted is not None
        assert deleted.deleted

    async def test_a_placement_keeps_a_due_time_set_since_the_row_was_read(self, stores: Stores) -> None:
        """The scheduler's placement is one statement: a due time the row has is kept."""
        await stores.feeds.upsert_feed(Feed(feed_id="f1", url="https://a.example/rss", host="a.example", format="rss"))
        assert await stores.feeds.place("f1", 3, T0)  # new: placed, due at once
        assert not await stores.feeds.place("f1", 3, T0 + timedelta(seconds=1))  # placed already: no change
        assert await stores.feeds.lease("f1", T0, T0 + timedelta(minutes=10))
        assert await stores.feeds.place("f1", 5, T0 + timedelta(seconds=2))  # another partition rule
        got = await stores.feeds.get("f1")
        assert got is not None
        assert (got.status.schedule_partition, got.status.next_fetch_at) == (5, T0 + timedelta(minutes=10))
        await stores.feeds.delete_feed("f1")
        assert not await stores.feeds.place("f1", 1, T0)  # a removed feed is placed by nobody

    # ------------------------------------------------------------------- tenants

    async def test_tokens_are_stored_hashed(self, stores: Stores, store_url: str) -> None:
        tenant = await stores.tenants.create_tenant("Acme")
        token = await stores.tenants.issue_token(tenant.tenant_id)
        assert len(token) > 40
        assert await stores.tenants.tenant_for_token(token) == tenant.tenant_id
        assert await stores.tenants.tenant_for_token(token + "x") is None
        assert await stores.tenants.tenant_for_token("") is None
        rows = await self.raw_rows(store_url, "api_tokens")
        assert len(rows) == 1
        assert token not in repr(rows)
        assert token[3:20] not in repr(rows)
        assert await stores.tenants.revoke_token(token)
        assert not await stores.tenants.revoke_token(token)
        assert await stores.tenants.tenant_for_token(token) is None
        with pytest.raises(NotFound):
            await stores.tenants.issue_token("no-such-tenant")

    async def test_host_ownership_and_limits(self, stores: Stores) -> None:
        a = await stores.tenants.create_tenant("A", tenant_id="ta", now=T0)
        b = await stores.tenants.create_tenant("B", tenant_id="tb")
        assert await stores.tenants.create_tenant("A again", tenant_id="ta") == a  # idempotent
        claim_a = await stores.tenants.add_host("ta", "News.Example")
        assert claim_a.host == "news.example"
        assert not claim_a.verified
        assert await stores.tenants.add_host("ta", "news.example") == claim_a  # idempotent
        claim_b = await stores.tenants.add_host("tb", "news.example")
        assert claim_b.verification_token != claim_a.verification_token
        assert claim_a.origin == "https://news.example"  # a bare host: its https origin
        assert await stores.tenants.holders("news.example") == []  # unverified claims hold nothing
        # every claim, verified or not, oldest first (the demo's site publishes their tokens)
        claims = await stores.tenants.claims_on("NEWS.example")
        assert [(c.tenant_id, c.verification_token) for c in claims] == [
            ("ta", claim_a.verification_token),
            ("tb", claim_b.verification_token),
        ]
        assert await stores.tenants.claims_on("nobody.example") == []
        await stores.tenants.set_verified("ta", "news.example", method="file", now=T0)
        await stores.tenants.set_verified("tb", "news.example", method="dns", now=T0 + timedelta(seconds=1))
        # several tenants hold rights on one origin: proving control takes nothing from the first
        held = await stores.tenants.holders("NEWS.example")
        assert [(c.tenant_id, c.method, c.verified_at) for c in held] == [
            ("ta", "file", T0),
            ("tb", "dns", T0 + timedelta(seconds=1)),
        ]
        # a claim of another origin is unproven there: its right ends; the other holder's stays
        moved = await stores.tenants.add_host("ta", "news.example", origin="http://news.example:8080")
        assert (moved.origin, moved.verified, moved.method) == ("http://news.example:8080", False, None)
        assert moved.verification_token == claim_a.verification_token
        assert [c.tenant_id for c in await stores.tenants.holders("news.example")] == ["tb"]
        again = await stores.tenants.add_host("ta", "news.example")  # no origin given: the stored one stays
        assert again.origin == "http://news.example:8080"
        with pytest.raises(NotFound):
            await stores.tenants.set_verified("ta", "other.example")
        with pytest.raises(NotFound):
            await stores.tenants.add_host("nobody", "x.example")
        assert await stores.tenants.get_limits("ta") is None
        await stores.tenants.set_limits("ta", TenantLimits(rps=5, burst=10, bytes_per_s=1e6))
        assert await stores.tenants.get_limits("ta") == TenantLimits(rps=5.0, burst=10, bytes_per_s=1e6)
        assert await stores.tenants.get_limits("tb") is None
        await stores.tenants.set_limits("ta", None)
        assert await stores.tenants.get_limits("ta") is None
        with pytest.raises(NotFound):
            await stores.tenants.set_limits("nobody", None)
        assert b.created_at is not None
        assert await stores.tenants.get_tenant("nobody") is None

    async def test_a_turbo_switch_is_its_holders_own(self, stores: Stores) -> None:
        await stores.tenants.create_tenant("A", tenant_id="ta")
        await stores.tenants.create_tenant("B", tenant_id="tb")
        await stores.tenants.add_host("ta", "shop.example")
        await stores.tenants.add_host("tb", "shop.example")
        assert await stores.tenants.turbo_enabled("shop.example")  # on by default
        await stores.tenants.set_turbo("tb", "shop.example", False)  # an unverified claim decides nothing
        assert await stores.tenants.turbo_enabled("shop.example")
        assert not await stores.tenants.turbo_enabled("shop.example", "tb")  # but its own sources are off
        await stores.tenants.set_verified("ta", "shop.example")
        await stores.tenants.set_verified("tb", "shop.example")
        await stores.tenants.set_turbo("ta", "Shop.Example", False)
        assert not await stores.tenants.turbo_enabled("shop.example", "ta")
        # the pages of no tenant stay on while one holder keeps its own on... and go when none does
        assert not await stores.tenants.turbo_enabled("shop.example")
        await stores.tenants.set_turbo("tb", "shop.example", True)
        assert await stores.tenants.turbo_enabled("shop.example")
        assert await stores.tenants.turbo_enabled("shop.example", "tb")
        assert [c.turbo for c in await stores.tenants.hosts_of("ta")] == [False]
        await stores.tenants.set_turbo("ta", "shop.example", True)
        assert await stores.tenants.turbo_enabled("shop.example", "ta")
        assert await stores.tenants.turbo_enabled("never.claimed.example")
        with pytest.raises(NotFound):
            await stores.tenants.set_turbo("ta", "other.example", False)

    async def test_a_hosts_branding_is_its_claimants_own(self, stores: Stores) -> None:
        await stores.tenants.create_tenant("A", tenant_id="ta")
        await stores.tenants.create_tenant("B", tenant_id="tb")
        await stores.tenants.add_host("ta", "shop.example")
        await stores.tenants.add_host("tb", "shop.example")
        assert await stores.tenants.branding("ta", "shop.example") is None
        await stores.tenants.set_branding("ta", "shop.example", '{"name": "Shop"}')
        assert await stores.tenants.branding("ta", "shop.example") == '{"name": "Shop"}'
        assert await stores.tenants.branding("tb", "shop.example") is None  # the other claimant's is its own
        assert await stores.tenants.branding("ta", "other.example") is None
        await stores.tenants.set_branding("ta", "shop.example", None)
        assert await stores.tenants.branding("ta", "shop.example") is None

    async def test_rights_are_rechecked_once_each_and_lapse(self, stores: Stores) -> None:
        for t in ("ta", "tb"):
            await stores.tenants.create_tenant(t, tenant_id=t)
            await stores.tenants.add_host(t, "shop.example")
            await stores.tenants.set_verified(t, "shop.example", method="meta", now=T0)
        await stores.tenants.add_host("ta", "never.example")  # a claim without a right is never re-checked
        day = timedelta(days=1)
        assert await stores.tenants.due_checks(T0, now=T0) == []  # checked at T0: not due before it
        due = await stores.tenants.due_checks(T0 + day, now=T0 + day, limit=1)
        assert [(c.tenant_id, c.host) for c in due] == [("ta", "shop.example")]
        # taken: a replica sweeping at once gets the other one, never the same
        rest = await stores.tenants.due_checks(T0 + day, now=T0 + day)
        assert [c.tenant_id for c in rest] == ["tb"]
        assert await stores.tenants.due_checks(T0 + day, now=T0 + day) == []
        missed = await stores.tenants.checked("ta", "shop.example", found=False, now=T0 + day)
        assert (missed.verified, missed.lapsing_since) == (True, T0 + day)
        later = await stores.tenants.checked("ta", "shop.example", found=False, now=T0 + 2 * day)
        assert later.lapsing_since == T0 + day  # the lapse started at the first miss
        found = await stores.tenants.checked("ta", "shop.example", found=True, now=T0 + 3 * day)
        assert (found.lapsing_since, found.checked_at) == (None, T0 + 3 * day)
        await stores.tenants.set_verified("ta", "shop.example", False, now=T0 + 4 * day)
        (ended,) = [c for c in await stores.tenants.hosts_of("ta") if c.host == "shop.example"]
        assert (ended.verified, ended.verified_at, ended.method) == (False, None, None)

    async def test_notices_keep_each_event_and_who_was_told(self, stores: Stores) -> None:
        from shared.stores import Notice, RightChange, RightsEvent

        granted = RightsEvent("e1", "https://shop.example", "shop.example", RightChange.granted, "ta", T0, method="dns")
        await stores.notices.record(granted, [Notice("n1", "ta", granted, True, "yours")])
        ended = RightsEvent(
            "e2", "https://shop.example", "shop.example", RightChange.ended, "ta", T0 + timedelta(days=9)
        )
        told = [Notice("n2", "ta", ended, True, "your right ended"), Notice("n3", "tb", ended, False, "another's")]
        await stores.notices.record(ended, told)
        await stores.notices.record(ended, told)  # idempotent
        assert [(n.notice_id, n.event.change, n.yours) for n in await stores.notices.notices("ta")] == [
            ("n2", RightChange.ended, True),
            ("n1", RightChange.granted, True),
        ]
        (theirs,) = await stores.notices.notices("tb")
        assert (theirs.message, theirs.event) == ("another's", ended)
        assert await stores.notices.past_holders("https://shop.example") == {"ta"}
        assert await stores.notices.past_holders("http://shop.example") == set()

    # ------------------------------------------------------------------- tasks

    async def test_task_idempotency_and_isolation(self, stores: Stores) -> None:
        t1 = await stores.tasks.create(
            Task(task_id="task1", tenant_id="ta", host="a.example", idempotency_key="k1"), now=T0
        )
        assert t1.status is TaskStatus.queued
        assert t1.created_at == T0
        again = await stores.tasks.create(Task(task_id="task2", tenant_id="ta", host="a.example", idempotency_key="k1"))
        assert again.task_id == "task1"
        other = await stores.tasks.create(Task(task_id="task3", tenant_id="tb", host="b.example", idempotency_key="k1"))
        assert other.task_id == "task3"  # keys are per tenant
        assert await stores.tasks.get("task2") is None
        assert await stores.tasks.get("task1", tenant_id="tb") is None  # isolation
        assert (await stores.tasks.find_by_idempotency_key("tb", "k1")) == other
        assert await stores.tasks.find_by_idempotency_key("ta", "nope") is None
        updated = await stores.tasks.update(
            "task1",
            status=TaskStatus.done,
            items=[TaskItem("https://a.example/1", "ok"), TaskItem("https://a.example/2", "failed", "no title")],
            errors=["1 item failed"],
            preview_urls=["/turbo?url=x"],
            problem_counts={"item.no_title": 59_000, "item.bad_link": 2},
            item_counts={"ok": 1, "failed": 59_001},
            now=T0 + timedelta(seconds=3),
        )
        assert updated.status is TaskStatus.done
        assert updated.problem_counts == {"item.no_title": 59_000, "item.bad_link": 2}
        # every item counted, the first ones listed (the parser's cap)
        assert updated.item_counts == {"ok": 1, "failed": 59_001}
        assert (updated.item_total, updated.items_more) == (59_002, 59_000)
        assert t1.item_counts == {}
        assert (t1.item_total, t1.counts()) == (0, {})
        assert updated.problems_more == 59_002  # none of them kept in full here
        assert t1.problem_counts == {}
        assert updated.items[1] == TaskItem("https://a.example/2", "failed", "no title")
        assert updated.updated_at == T0 + timedelta(seconds=3)
        assert await stores.tasks.get("task1", tenant_id="ta") == updated
        with pytest.raises(NotFound):
            await stores.tasks.update("nope", status=TaskStatus.failed)
        races = await asyncio.gather(
            *(
                stores.tasks.create(Task(task_id=f"r{i}", tenant_id="tc", host="c.example", idempotency_key="same"))
                for i in range(10)
            )
        )
        assert len({t.task_id for t in races}) == 1

    # ------------------------------------------------------------------- migrations

    async def test_reopen_is_idempotent_and_keeps_data(self, stores: Stores, store_url: str) -> None:
        await stores.pages.upsert(page(1))
        again = await open_stores(store_url)
        try:
            assert (await again.pages.get(URL)) == page(1)
        finally:
            await again.close()
        rows = await self.raw_rows(store_url, "schema_migrations")
        assert [r[0] for r in rows] == [m[0] for m in SQLITE]  # every migration recorded, once
