"""The store contract on PostgreSQL (started by ``ops/postgres/start``), one fresh schema per test."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import asyncpg
import pytest

from shared.errors import ConfigError, StoreUnavailable
from shared.stores import Stores, open_stores
from shared.stores.postgres import split_schema
from tests.contract.lane_store_contract import LaneStoreContract
from tests.contract.notify_store_contract import NotifyStoreContract
from tests.contract.problem_store_contract import ProblemHistoryContract, ProblemStoreContract
from tests.contract.shop_store_contract import ShopStoreContract
from tests.contract.store_batch_contract import StoreBatchContract
from tests.contract.store_contract import StoreContract
from tests.contract.task_list_contract import TaskListContract
from tests.pgschema import fresh_schema


@pytest.mark.postgres
class TestPostgresStores(
    StoreContract,
    StoreBatchContract,
    ProblemStoreContract,
    LaneStoreContract,
    TaskListContract,
    ProblemHistoryContract,
    NotifyStoreContract,
    ShopStoreContract,
):
    @pytest.fixture
    async def store_url(self, postgres_url: str) -> AsyncIterator[str]:
        async with fresh_schema(postgres_url) as url:
            yield url

    async def raw_rows(self, store_url: str, table: str) -> list[tuple[Any, ...]]:
        dsn, schema = split_schema(store_url)
        conn = await asyncpg.connect(dsn, server_settings={"search_path": schema or "public"})
        try:
            return [tuple(r) for r in await conn.fetch(f"SELECT * FROM {table}")]
        finally:
            await conn.close()


async def test_unreachable_server_is_store_unavailable() -> None:
    # port 9 (discard) on loopback: nothing listens, the connection is refused at once
    with pytest.raises(StoreUnavailable, match="postgresql"):
        await open_stores("postgresql://u:p@127.0.0.1:9/db")


async def test_schema_name_is_validated() -> None:
    with pytest.raises(ConfigError, match="schema"):
        await open_stores("postgresql://u:p@127.0.0.1:9/db?schema=x;drop")
    assert split_schema("postgres://u:p@h:1/db?schema=abc&sslmode=disable") == (
        "postgresql://u:p@h:1/db?sslmode=disable",
        "abc",
    )


async def test_a_released_connection_costs_no_reset_round_trip_and_never_keeps_a_transaction(
    postgres_url: str,
) -> None:
    from shared.stores.postgres import open_postgres

    async with fresh_schema(postgres_url) as url:
        await _released_connection_costs_no_reset(await open_postgres(url, pool_size=1))


async def _released_connection_costs_no_reset(stores: Stores) -> None:
    try:
        pool = stores.pages._db.pool  # type: ignore[attr-defined]
        conn = await pool.acquire()
        await conn.execute("BEGIN")  # a transaction left open, as a cancelled caller could
        await pool.release(conn)
        conn = await pool.acquire()  # the pool's one connection again
        assert not conn.is_in_transaction()
        queries = conn._protocol.queries_count
        await pool.release(conn)
        conn = await pool.acquire()
        assert conn._protocol.queries_count == queries  # released without asyncpg's reset query
        await pool.release(conn)
    finally:
        await stores.close()


async def test_processes_opening_a_new_schema_at_once_all_succeed(postgres_url: str) -> None:
    """A dozen cubes starting together (ops/topology) migrate one new schema: none may fail."""
    from shared.stores.postgres import PgDb

    schema = f"t_{uuid.uuid4().hex[:12]}"
    pools = [
        await asyncpg.create_pool(postgres_url, min_size=1, max_size=1, server_settings={"search_path": schema})
        for _ in range(12)
    ]
    try:
        # every migration starts in the same instant, as the processes' first store calls did
        got = await asyncio.gather(*(PgDb(p, postgres_url).migrate(schema) for p in pools), return_exceptions=True)
        assert [g for g in got if isinstance(g, BaseException)] == []
    finally:
        for p in pools:
            await p.close()
        conn = await asyncpg.connect(postgres_url)
        try:
            await conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        finally:
            await conn.close()


def _round_trips(store: str) -> float:
    from prometheus_client import REGISTRY

    value = REGISTRY.get_sample_value("turbocubes_postgres_round_trips_total", {"store": store})
    return value or 0.0


@asynccontextmanager
async def _own_stores(postgres_url: str, pool_size: int) -> AsyncIterator[tuple[Stores, str]]:
    """Stores on a schema of their own (its name too, for raw reads), closed and the schema dropped after."""
    async with fresh_schema(postgres_url) as url:
        stores = await open_stores(url, pool_size=pool_size)
        try:
            yield stores, split_schema(url)[1] or ""
        finally:
            await stores.close()


async def test_round_trips_are_counted_per_store(postgres_url: str) -> None:
    """What ``bench/e2e.py`` divides by documents: every request the engine waits for, by store."""
    async with _own_stores(postgres_url, pool_size=2) as (stores, _):
        images, pages = _round_trips("images"), _round_trips("pages")
        assert await stores.images.get("https://a.example/x.jpg") is None
        assert _round_trips("images") - images == 1
        assert _round_trips("pages") == pages  # another store's count did not move
        await stores.pages.upsert_many([])  # nothing to write: no round trip at all
        assert _round_trips("pages") == pages


async def test_an_outage_fails_the_whole_group_and_writes_none_of_it(postgres_url: str) -> None:
    """The calls of one turn share a statement: when its connection dies, every caller hears
    ``StoreUnavailable`` (the runtime retries them all, in place) and none of it is written."""
    from shared.stores import ParkOutcome
    from tests.contract.store_contract import T0

    a, b = "https://a.example/a", "https://a.example/b"
    async with _own_stores(postgres_url, pool_size=1) as (stores, schema):
        admin = await asyncpg.connect(postgres_url, server_settings={"search_path": schema})
        watch = await asyncpg.connect(postgres_url)  # outside any transaction: sees pg_stat_activity as it is now
        try:
            assert await stores.delay.park(a, 1, b"a1", ["m1"], T0) is ParkOutcome.parked
            blocker = admin.transaction()
            await blocker.start()
            await admin.execute("SELECT 1 FROM delay_docs WHERE url = $1 FOR UPDATE", a)  # a's park must wait
            me = admin.get_server_pid()
            group = asyncio.gather(
                stores.delay.park(a, 2, b"a2", ["m2"], T0),
                stores.delay.park(b, 1, b"b1", ["m1"], T0),
                return_exceptions=True,
            )
            victim = None
            async with asyncio.timeout(30):
                while victim is None:  # the group's statement, waiting for the lock
                    victim = await watch.fetchval(
                        "SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))", me
                    )
                    await asyncio.sleep(0.02)  # a poll interval, not a synchronization
            assert await watch.fetchval("SELECT pg_terminate_backend($1)", victim)
            outcomes = await asyncio.wait_for(group, timeout=30)
            assert [type(o) for o in outcomes] == [StoreUnavailable, StoreUnavailable]
            await blocker.rollback()
            assert await stores.delay.get(b) is None  # not half of the group: none of it
            parked = await stores.delay.get(a)
            assert parked is not None
            assert parked.version == 1
            retried = await asyncio.gather(
                stores.delay.park(a, 2, b"a2", ["m2"], T0), stores.delay.park(b, 1, b"b1", ["m1"], T0)
            )
            assert list(retried) == [ParkOutcome.replaced, ParkOutcome.parked]
        finally:
            await watch.close()
            await admin.close()


async def test_the_calls_of_one_turn_cost_one_round_trip_per_kind(postgres_url: str) -> None:
    """Parking a document with N missing images is one round trip, releasing it is one; and
    the documents of one loop turn share them."""
    from datetime import timedelta

    from tests.contract.store_contract import T0

    # one connection, each statement used once before it is counted: a statement's first use on a
    # connection costs a few more requests (preparing it, looking up its types), once
    docs = [f"https://a.example/doc/{i}" for i in range(50)]
    media = {d: [f"{d}/img/{k}.jpg" for k in range(5)] for d in docs}
    async with _own_stores(postgres_url, pool_size=1) as (stores, _):
        warm = "https://warm.example/x"
        await stores.images.mark_ordered_many([warm], T0)
        await stores.delay.park(warm, 1, b"x", [warm], T0 + timedelta(minutes=5))
        await stores.images.record_ok(warm, cdn_url="/c", now=T0)
        await stores.images.get_many([warm])
        await stores.delay.resolve(warm, now=T0)
        await stores.delay.confirm([(warm, 1)])

        async def costs(store: str, *calls: Any) -> tuple[float, list[Any]]:
            before = _round_trips(store)
            results = await asyncio.gather(*calls)
            return _round_trips(store) - before, list(results)

        spent, won = await costs("images", *(stores.images.mark_ordered_many(media[d], T0) for d in docs))
        assert (spent, sum(len(w) for w in won)) == (1, 250)
        spent, _ = await costs(
            "delay", *(stores.delay.park(d, 1, b"x", media[d], T0 + timedelta(minutes=5)) for d in docs)
        )
        assert spent == 1
        spent, _ = await costs(
            "images", *(stores.images.record_ok(m, cdn_url="/c", now=T0) for d in docs for m in media[d])
        )
        assert spent == 1
        spent, found = await costs("images", *(stores.images.get_many(media[d]) for d in docs))
        assert (spent, sum(len(f) for f in found)) == (1, 250)
        for k in range(4):  # all but the last image of each document: nothing is released
            spent, released = await costs("delay", *(stores.delay.resolve(media[d][k], now=T0) for d in docs))
            assert (spent, sum(len(r) for r in released)) == (1, 0)
        spent, released = await costs("delay", *(stores.delay.resolve(media[d][4], now=T0) for d in docs))
        assert (spent, sorted(doc.url for r in released for doc in r)) == (1, sorted(docs))
        spent, confirmed = await costs("delay", *(stores.delay.confirm([(d, 1)]) for d in docs))
        assert (spent, sum(confirmed)) == (1, 50)


async def test_the_schedulers_reads_and_writes_of_one_turn_cost_one_round_trip_each(postgres_url: str) -> None:
    """The scheduler's learn step, fetch results of one loop turn: their feed reads are one query,
    their schedule writes one statement per set of fields (each was a round trip of its own)."""
    from datetime import timedelta

    from shared.stores import Feed
    from shared.stores.postgres.feeds import SCHEDULE_TYPES
    from tests.contract.store_contract import T0

    ids = [f"feed-{i}" for i in range(40)]
    fields = {"last_fetch_at": T0, "next_fetch_at": T0 + timedelta(minutes=15), "interval_s": 900.0}
    async with _own_stores(postgres_url, pool_size=1) as (stores, schema):
        for feed_id in ids:
            await stores.feeds.upsert_feed(Feed(feed_id, f"https://a.example/{feed_id}", "a.example", "rss"))
        await stores.feeds.get(ids[0])  # each statement's first use on the connection prepares it
        await stores.feeds.update_schedule(ids[0], **fields)
        before = _round_trips("feeds")
        got = await asyncio.gather(*(stores.feeds.get(f) for f in ids))
        assert (_round_trips("feeds") - before, [f.feed_id for f in got if f]) == (1, ids)
        before = _round_trips("feeds")
        await asyncio.gather(*(stores.feeds.update_schedule(f, **fields) for f in ids))
        assert _round_trips("feeds") - before == 1
        assert {f.status.interval_s for f in await stores.feeds.list()} == {900.0}
        # the column types the batched write casts to are the table's
        conn = await asyncpg.connect(postgres_url)
        try:
            rows = await conn.fetch(
                "SELECT column_name, data_type FROM information_schema.columns"
                " WHERE table_schema = $1 AND table_name = 'feeds'",
                schema,
            )
        finally:
            await conn.close()
        table = {r[0]: r[1] for r in rows}
        assert {n: table[n] for n in SCHEDULE_TYPES} == SCHEDULE_TYPES


async def test_an_unchanged_documents_hash_check_is_one_plain_read(postgres_url: str) -> None:
    """Most items of most polls are unchanged: their check writes nothing, so it takes no lock and no
    transaction (a batch was BEGIN, lock, read, read, COMMIT: 5 round trips; one URL 4); a changed batch
    still decides under its locks."""
    from tests.contract.store_contract import T0

    items = [(f"https://a.example/{i}", f"h{i}") for i in range(30)]
    async with _own_stores(postgres_url, pool_size=1) as (stores, _):
        first = await stores.hashes.check_and_set_many("feed:a", items, now=T0)
        assert all(c.changed for c in first)
        await stores.hashes.check_and_set("feed:a", "https://a.example/one", "h", now=T0)
        before = _round_trips("hashes")
        again = await stores.hashes.check_and_set_many("feed:a", items, now=T0)
        assert [(c.changed, c.version) for c in again] == [(False, c.version) for c in first]
        assert _round_trips("hashes") - before == 1
        before = _round_trips("hashes")
        single = await stores.hashes.check_and_set("feed:a", "https://a.example/one", "h", now=T0)
        assert (single.changed, _round_trips("hashes") - before) == (False, 1)
        # one item changed: the locked path decides, and only that item is new
        edited = [*items[:-1], (items[-1][0], "h-edited")]
        checks = await stores.hashes.check_and_set_many("feed:a", edited, now=T0)
        assert [c.changed for c in checks] == [False] * 29 + [True]
        assert checks[-1].version > first[-1].version
        # another source's copy of a URL is not this source's: changed for it
        other = await stores.hashes.check_and_set_many("feed:b", items[:1], now=T0)
        assert other[0].changed


async def test_a_server_that_may_lose_acknowledged_commits_is_refused_unless_accepted(
    postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    # ops/postgres/start runs the server durable; a session told synchronous_commit=off (the DSN's
    # parameter, as a role's or database's SET would) acknowledges commits before they are on disk
    async with fresh_schema(postgres_url) as url:
        stores = await open_stores(url)  # the server as ops/ runs it: accepted without a word
        await stores.close()
        lossy = f"{url}&synchronous_commit=off"
        with pytest.raises(ConfigError, match=r"store\.accept_lossy_commits.*synchronous_commit=off"):
            await open_stores(lossy)
        with caplog.at_level("WARNING", logger="turbocubes.stores"):
            stores = await open_stores(lossy, accept_lossy_commits=True)
        await stores.close()
        assert any("synchronous_commit=off" in r.getMessage() for r in caplog.records), caplog.text


def test_each_setting_that_loses_commits_is_named_with_its_risk() -> None:
    from shared.stores.postgres.durability import check_durable, lossy

    durable = {"synchronous_commit": "on", "fsync": "on", "full_page_writes": "on"}
    assert lossy(durable) == {}
    # every value but off waits for the local WAL flush
    for value in ("local", "remote_write", "remote_apply"):
        assert lossy({**durable, "synchronous_commit": value}) == {}
    for name in durable:
        found = lossy({**durable, name: "off"})
        assert list(found) == [name]
        with pytest.raises(ConfigError, match=f"{name}=off"):
            check_durable("h:1", {**durable, name: "off"}, accept=False)
        check_durable("h:1", {**durable, name: "off"}, accept=True)  # accepted: no error


async def test_a_feeds_schedule_writes_of_other_fields_commit_in_the_order_they_were_made(postgres_url: str) -> None:
    """A write of other fields never overtakes an earlier write of the same feed. Each set of fields
    had a batch of its own, on a connection of its own: when the fetch's write waited behind its
    batch's statement in flight, a later write of two fields went at once and committed first, and
    the fetch's then overwrote it (the scheduler's next due time went back; the batch contract's
    test of one turn failed so under load)."""
    from datetime import timedelta

    from shared.stores import Feed
    from tests.contract.store_contract import T0

    due = T0 + timedelta(minutes=15)
    learned = {"last_fetch_at": T0, "next_fetch_at": due, "interval_s": 900.0, "fetch_result": "ok"}
    async with _own_stores(postgres_url, pool_size=2) as (stores, schema):
        # at once: the pool opens its connections now, so a write later sent goes out without connecting
        ids = ("held", "f0", "f1", "f2")
        await asyncio.gather(
            *(stores.feeds.upsert_feed(Feed(f, f"https://a.example/{f}.rss", "a.example", "rss")) for f in ids)
        )
        for _ in range(4):  # both kinds of write on every connection: each statement prepared, its types known
            await asyncio.gather(
                stores.feeds.update_schedule("f1", **learned),
                stores.feeds.update_schedule("f2", last_fetch_at=T0, next_fetch_at=due),
            )
        dsn, _ = split_schema(postgres_url)
        locker = await asyncpg.connect(dsn, server_settings={"search_path": schema})
        try:
            tx = locker.transaction()
            await tx.start()
            await locker.execute("SELECT 1 FROM feeds WHERE feed_id = 'held' FOR UPDATE")
            held = asyncio.ensure_future(stores.feeds.update_schedule("held", **learned))
            async with asyncio.timeout(60):  # its statement is at the server, waiting for the row
                while not await locker.fetchval(
                    "SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))",
                    locker.get_server_pid(),
                ):
                    pass
            # the fetch's write waits behind the statement in flight; then the same feed's next due time
            first = asyncio.ensure_future(stores.feeds.update_schedule("f0", **learned))
            second = asyncio.ensure_future(
                stores.feeds.update_schedule("f0", last_fetch_at=T0, next_fetch_at=due + timedelta(hours=1))
            )
            # the locker's round trips: time enough for a write sent at once to commit
            for _ in range(3):
                assert await locker.fetchval("SELECT count(*) FROM feeds") == len(ids)
            await tx.commit()
            async with asyncio.timeout(60):
                await asyncio.gather(held, first, second)
        finally:
            await locker.close()
        f0 = await stores.feeds.get("f0")
        assert f0 is not None
        assert (f0.status.next_fetch_at, f0.status.interval_s) == (due + timedelta(hours=1), 900.0)
