"""Scheduler replicas over one store: each ticks its partitions, each poll is emitted once."""

from __future__ import annotations

import random
import zlib
from collections.abc import AsyncIterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cubes.scheduler.handler import SchedulerHandler
from cubes.scheduler.ownership import OWNED_TOPIC, Ownership
from shared.bus.base import TopicPartition
from shared.clock import ManualClock
from shared.config import Settings
from shared.messages import CrawlKind, CrawlRequest, CrawlResult, FeedFormat, FeedRegistration, FetchStatus
from shared.runtime.cube import Context, Output
from shared.stores import Feed, Stores, open_stores
from tests.unit.cubes.scheduler.schedkit import Ticking, announce

SETTINGS = Settings().replace(scheduler={"jitter": 0.0})
PARTITIONS = 4


def place(key: bytes) -> int:
    return zlib.crc32(key) % PARTITIONS


class Collector:
    def __init__(self) -> None:
        self.requests: list[CrawlRequest] = []
        self.during: list[object] = []  # what to run while "publishing" (a result racing the tick)
        self.die_after_send = False

    async def __call__(self, outputs: Sequence[Output]) -> None:
        for o in outputs:
            assert isinstance(o.message, CrawlRequest)
            self.requests.append(o.message)
        for hook in self.during:
            await hook()  # type: ignore[operator]
        if self.die_after_send:
            raise SystemExit("killed after its requests went out, before it leased them")


def replica(stores: Stores, clock: ManualClock, owned: set[int]) -> tuple[Ticking, Collector]:
    ownership = Ownership(place)
    ownership.follow(lambda: {TopicPartition(OWNED_TOPIC, p) for p in owned} | {TopicPartition("crawl.pages", 0)})
    pub = Collector()
    return Ticking(SchedulerHandler(SETTINGS, stores.feeds, clock, rng=random.Random(1), ownership=ownership), pub), pub


def reg(i: int) -> FeedRegistration:
    host = f"h{i % 9}.example"
    return FeedRegistration(
        feed_id=f"f{i}",
        url=f"https://{host}/{i}.xml",
        host=host,
        format=FeedFormat.rss,
        registered_at=datetime.now(UTC),
    )


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[Stores]:
    s = await open_stores(f"sqlite:///{tmp_path}/store.db")
    yield s
    await s.close()


async def test_each_replica_ticks_its_partitions_and_together_every_feed_once(stores: Stores) -> None:
    clock = ManualClock(start=1_700_000_000.0)
    (a, pub_a), (b, pub_b), (c, pub_c) = (replica(stores, clock, owned) for owned in ({0, 3}, {1}, {2}))
    for i in range(30):
        await announce((a, b, c)[i % 3], stores.feeds, reg(i))  # an announcement reaches any replica
    for h in (a, b, c):
        await h.tick()
    for pub, owned in ((pub_a, {0, 3}), (pub_b, {1}), (pub_c, {2})):
        assert {place(r.host.encode()) for r in pub.requests} <= owned
        assert pub.requests, "every replica owns some of the nine hosts"
    emitted = sorted(r.feed_id or "" for pub in (pub_a, pub_b, pub_c) for r in pub.requests)
    assert emitted == sorted(f"f{i}" for i in range(30))  # each exactly once
    for h in (a, b, c):
        await h.tick()
    assert sum(len(p.requests) for p in (pub_a, pub_b, pub_c)) == 30  # leased: not again


async def test_a_replica_waits_to_be_told_its_partitions() -> None:
    class Bus:
        url = "sqlite:///x"

        async def partitioner(self, topic: str) -> object:
            assert topic == OWNED_TOPIC
            return place

    ownership = await Ownership.of(Bus())  # type: ignore[arg-type]
    assert ownership.owned() == frozenset()  # timers start before the group is joined: own nothing yet
    ownership.follow(lambda: {TopicPartition(OWNED_TOPIC, 2)})
    assert ownership.owned() == frozenset({2})
    assert Ownership().owned() is None  # a lone scheduler owns everything


async def test_a_poll_published_but_not_leased_is_emitted_again_with_the_same_due_at(stores: Stores) -> None:
    """The replica dies between publishing and leasing: its successor re-emits the very poll, which the
    crawler recognizes by ``due_at`` (cubes/crawler/coalesce.py) and fetches once."""
    clock = ManualClock(start=1_700_000_000.0)
    dying, pub = replica(stores, clock, {0, 1, 2, 3})
    await announce(dying, stores.feeds, reg(1))
    pub.die_after_send = True
    with pytest.raises(SystemExit):
        await dying.tick()
    successor, pub2 = replica(stores, clock, {0, 1, 2, 3})
    clock.advance(10.0)  # the group's session timeout
    await successor.tick()
    [first], [again] = pub.requests, pub2.requests
    assert first.due_at is not None
    assert again.due_at == first.due_at  # the same poll: the crawler fetches it once
    clock.advance(10.0)
    await successor.tick()
    assert len(pub2.requests) == 1  # and now it is leased


async def test_a_result_learned_while_the_tick_publishes_is_kept(stores: Stores) -> None:
    clock = ManualClock(start=1_700_000_000.0)
    h, pub = replica(stores, clock, {0, 1, 2, 3})
    await announce(h, stores.feeds, reg(1))

    async def result_arrives() -> None:
        res = CrawlResult(
            kind=CrawlKind.feed,
            url="https://h1.example/1.xml",
            host="h1.example",
            status=FetchStatus.throttled,
            http_status=429,
            headers={"retry-after": "1000"},
            requesters=["feed:f1"],
            feed_id="f1",
            fetched_at=clock.now(),
        )
        ctx = Context(topic="crawl.feeds", partition=0, offset=0, key=None, attempt=1, received_at=datetime.now(UTC))
        await h.handle(res, ctx)

    pub.during.append(result_arrives)
    await h.tick()
    st = (await stores.feeds.get("f1")).status  # type: ignore[union-attr]
    # the learned due time (what the partner asked for), not the tick's lease (the 120 s interval)
    assert st.next_fetch_at == datetime.fromtimestamp(clock.time() + 1000.0, UTC)


async def test_feeds_no_announcement_placed_are_placed_and_a_changed_rule_places_all_again(stores: Stores) -> None:
    clock = ManualClock(start=1_700_000_000.0)
    for i in range(5):  # rows from before migration 9, or whose announcement was lost
        r = reg(i)
        await stores.feeds.upsert_feed(Feed(feed_id=r.feed_id, url=r.url, host=r.host, format="rss"))
    h, pub = replica(stores, clock, {0, 1, 2, 3})
    await h.tick()
    assert sorted(r.feed_id or "" for r in pub.requests) == [f"f{i}" for i in range(5)]
    for feed in await stores.feeds.list():
        assert feed.status.schedule_partition == place(feed.host.encode())

    def other_rule(key: bytes) -> int:  # another engine, or another partition count
        return (place(key) + 1) % PARTITIONS

    ownership = Ownership(other_rule)
    ownership.follow(lambda: {TopicPartition(OWNED_TOPIC, p) for p in range(PARTITIONS)})
    moved = Ticking(SchedulerHandler(SETTINGS, stores.feeds, clock, ownership=ownership), Collector())
    await moved.tick()
    for feed in await stores.feeds.list():
        assert feed.status.schedule_partition == other_rule(feed.host.encode())


async def test_a_placement_read_before_another_replica_ticked_leaves_its_lease_alone(stores: Stores) -> None:
    """CI, under load, on the embedded log: a feed fetched twice 0.2 s apart at start. One replica's
    sweep had read the feed unplaced; another placed it (the announcement), ticked and leased it;
    the sweep's placement of its stale row then made the feed due again, a new poll (another
    ``due_at``) that the crawler rightly fetched. Placing only sets a due time the row lacks."""
    clock = ManualClock(start=1_700_000_000.0)
    ticking, pub = replica(stores, clock, {0, 1, 2, 3})
    sweeping, idle = replica(stores, clock, set())  # no partition yet: it sweeps, it does not tick
    r = reg(1)
    await stores.feeds.upsert_feed(Feed(feed_id=r.feed_id, url=r.url, host=r.host, format="rss"))
    [stale] = await stores.feeds.unscheduled(10)  # the sweep reads its batch ...
    await announce(ticking, stores.feeds, r)  # ... the announcement places the feed elsewhere ...
    await ticking.tick()  # ... which is emitted and leased
    clock.advance(0.2)
    await sweeping.ticker.place(stale)  # the sweep goes on with the row it read
    await ticking.tick()
    await sweeping.tick()
    assert [q.feed_id for q in pub.requests + idle.requests] == ["f1"]  # one poll, not two
    st = (await stores.feeds.get("f1")).status  # type: ignore[union-attr]
    assert st.next_fetch_at is not None
    assert st.next_fetch_at.timestamp() > clock.time() + 60  # the lease holds
