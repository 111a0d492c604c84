"""The scheduler handler over a real SQLite feed store: registration, learning, the tick, restarts."""

from __future__ import annotations

import itertools
import random
import tracemalloc
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cubes.scheduler.handler import SchedulerHandler
from shared.blobs.file import FileBlobStore
from shared.clock import ManualClock
from shared.config import SchedulerConfig, Settings
from shared.hashing import body_hash
from shared.messages import CrawlKind, CrawlRequest, CrawlResult, FeedFormat, FeedRegistration, FetchStatus
from shared.runtime.cube import Context, Output
from shared.stores import Feed, Stores, open_stores
from tests.unit.cubes.scheduler.schedkit import Ticking, announce

SETTINGS = Settings().replace(scheduler={"jitter": 0.0, "host_gap_s": 10.0})


class Collector:
    """Publishes a tick's outputs in the test: records them (and can be told to fail)."""

    def __init__(self) -> None:
        self.outputs: list[Output] = []
        self.fail = False
        self.on_publish: Callable[[int], object] | None = None

    async def __call__(self, outputs: Sequence[Output]) -> None:
        if self.fail:
            raise ConnectionError("bus down")
        self.outputs.extend(outputs)
        if self.on_publish is not None:
            self.on_publish(len(outputs))

    def requests(self) -> list[CrawlRequest]:
        out = []
        for o in self.outputs:
            assert o.topic == "crawl.requests"
            assert isinstance(o.message, CrawlRequest)
            out.append(o.message)
        return out


def ctx(topic: str) -> Context:
    return Context(topic=topic, partition=0, offset=0, key=None, attempt=1, received_at=datetime.now(UTC))


def reg(feed_id: str, url: str, action: str = "upsert") -> FeedRegistration:
    return FeedRegistration(
        action=action,  # type: ignore[arg-type]
        feed_id=feed_id,
        url=url,
        host=url.split("/")[2],
        format=FeedFormat.rss,
        registered_at=datetime.now(UTC),
    )


def result(
    feed_id: str,
    url: str,
    at: float,
    status: FetchStatus = FetchStatus.ok,
    body: bytes | None = b"<rss/>",
    headers: dict[str, str] | None = None,
    http_status: int | None = 200,
    error: str | None = None,
) -> CrawlResult:
    return CrawlResult(
        kind=CrawlKind.feed,
        url=url,
        host=url.split("/")[2],
        status=status,
        http_status=http_status,
        headers=headers or {},
        body=body if status is FetchStatus.ok else None,
        requesters=[f"feed:{feed_id}"],
        feed_id=feed_id,
        error=error,
        fetched_at=datetime.fromtimestamp(at, UTC),
    )


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[Stores]:
    s = await open_stores(f"sqlite:///{tmp_path}/store.db")
    yield s
    await s.close()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(start=1_700_000_000.0)


def make(stores: Stores, clock: ManualClock, publish: Collector, settings: Settings = SETTINGS) -> Ticking:
    return Ticking(SchedulerHandler(settings, stores.feeds, clock, rng=random.Random(7)), publish)


URL = "https://news.example/feed.xml"


async def test_new_feed_is_due_at_once_and_emitted_once(stores: Stores, clock: ManualClock) -> None:
    pub = Collector()
    h = make(stores, clock, pub)
    await announce(h, stores.feeds, reg("f1", URL))
    await h.tick()
    [req] = pub.requests()
    assert req.kind is CrawlKind.feed
    assert req.url == URL
    assert req.host == "news.example"
    assert req.requesters == ["feed:f1"]
    assert req.feed_id == "f1"
    assert req.priority == 0  # never fetched: most urgent
    assert req.etag is None
    await h.tick()
    clock.advance(60)
    await h.tick()
    assert len(pub.requests()) == 1  # the lease keeps it from being emitted twice


async def test_state_survives_a_restart(tmp_path: Path, clock: ManualClock) -> None:
    url = f"sqlite:///{tmp_path}/restart.db"
    pub = Collector()
    s1 = await open_stores(url)
    h1 = make(s1, clock, pub)
    await announce(h1, s1.feeds, reg("f1", URL))
    await h1.tick()
    await h1.handle(result("f1", URL, clock.time(), headers={"etag": '"v1"'}), ctx("crawl.feeds"))
    await s1.close()

    s2 = await open_stores(url)  # a new process over the same store
    try:
        h2 = make(s2, clock, pub)
        await h2.tick()
        assert len(pub.requests()) == 1  # not due again right after a restart
        feed = await s2.feeds.get("f1")
        assert feed is not None
        assert feed.status.next_fetch_at is not None
        clock.advance(feed.status.next_fetch_at.timestamp() - clock.time() + 1)
        await h2.tick()
        reqs = pub.requests()
        assert len(reqs) == 2
        assert reqs[1].etag == '"v1"'  # conditional GET with what the first process learned
        assert reqs[1].priority == 5
    finally:
        await s2.close()


async def test_learning_changed_unchanged_not_modified(stores: Stores, clock: ManualClock) -> None:
    h = make(stores, clock, Collector())
    await announce(h, stores.feeds, reg("f1", URL))
    t0 = clock.time()
    body = b"<rss><channel><title>x</title></channel></rss>"
    await h.handle(
        result(
            "f1",
            URL,
            t0,
            body=body,
            headers={"etag": '"a"', "last-modified": "Mon, 01 Jan 2024 00:00:00 GMT"},
        ),
        ctx("crawl.feeds"),
    )
    st = (await stores.feeds.get("f1")).status  # type: ignore[union-attr]
    assert st.last_fetch_at == datetime.fromtimestamp(t0, UTC)
    assert st.last_http_status == 200
    assert st.last_result == "ok"
    assert st.etag == '"a"'
    assert st.last_modified == "Mon, 01 Jan 2024 00:00:00 GMT"
    assert st.last_hash == body_hash(body)
    assert st.interval_s == 120.0  # changed: at the minimum
    assert st.next_fetch_at == datetime.fromtimestamp(t0 + 120.0, UTC)
    assert st.consecutive_failures == 0

    # the same bytes again (a server without validators): longer
    await h.handle(result("f1", URL, t0 + 120, body=body), ctx("crawl.feeds"))
    st = (await stores.feeds.get("f1")).status  # type: ignore[union-attr]
    assert st.interval_s == 180.0
    assert st.next_fetch_at == datetime.fromtimestamp(t0 + 300.0, UTC)
    assert st.etag is None  # this response had none: the old one must not be sent again

    # 304: longer still, the hash is kept
    await h.handle(
        result("f1", URL, t0 + 300, status=FetchStatus.not_modified, http_status=304, headers={"etag": '"b"'}),
        ctx("crawl.feeds"),
    )
    st = (await stores.feeds.get("f1")).status  # type: ignore[union-attr]
    assert st.interval_s == 270.0
    assert st.last_result == "not_modified"
    assert st.etag == '"b"'
    assert st.last_hash == body_hash(body)

    # new content: shorter again
    await h.handle(result("f1", URL, t0 + 600, body=b"<rss>new</rss>"), ctx("crawl.feeds"))
    st = (await stores.feeds.get("f1")).status  # type: ignore[union-attr]
    assert st.interval_s == 135.0


async def test_failures_back_off_with_reason_and_recover(stores: Stores, clock: ManualClock) -> None:
    h = make(stores, clock, Collector())
    await announce(h, stores.feeds, reg("f1", URL))
    t = clock.time()
    delays = []
    for _ in range(4):
        await h.handle(
            result(
                "f1",
                URL,
                t,
                status=FetchStatus.http_5xx,
                http_status=503,
                error="HTTP 503 Service Unavailable",
            ),
            ctx("crawl.feeds"),
        )
        st = (await stores.feeds.get("f1")).status  # type: ignore[union-attr]
        assert st.next_fetch_at is not None
        delays.append(st.next_fetch_at.timestamp() - t)
        t = st.next_fetch_at.timestamp()
    assert delays == [120.0, 240.0, 480.0, 960.0]
    assert st.consecutive_failures == 4
    assert st.last_error == "http_5xx: HTTP 503 Service Unavailable"
    assert st.last_result == "http_5xx"

    await h.handle(result("f1", URL, t), ctx("crawl.feeds"))
    st = (await stores.feeds.get("f1")).status  # type: ignore[union-attr]
    assert st.consecutive_failures == 0
    assert st.last_error is None
    assert st.last_result == "ok"


async def test_throttled_honours_retry_after(stores: Stores, clock: ManualClock) -> None:
    h = make(stores, clock, Collector())
    await announce(h, stores.feeds, reg("f1", URL))
    t = clock.time()
    await h.handle(
        result("f1", URL, t, status=FetchStatus.throttled, http_status=429, headers={"retry-after": "3600"}),
        ctx("crawl.feeds"),
    )
    st = (await stores.feeds.get("f1")).status  # type: ignore[union-attr]
    assert st.next_fetch_at == datetime.fromtimestamp(t + 3600, UTC)


async def test_throttled_reads_retry_after_as_the_crawler_does(stores: Stores, clock: ManualClock) -> None:
    """The scheduler had a Retry-After parser of its own, which took a date without its zone as UTC.

    RFC 9110 dates are GMT; the crawler refuses such a date (no advice), the scheduler waited for it
    (here: weeks, clamped to its longest interval). Now both read it the same way.
    """
    h = make(stores, clock, Collector())
    await announce(h, stores.feeds, reg("f1", URL))
    t = clock.time()
    far = datetime.fromtimestamp(t + 30 * 86_400, UTC).strftime("%a, %d %b %Y %H:%M:%S")  # no "GMT"
    await h.handle(
        result("f1", URL, t, status=FetchStatus.throttled, http_status=429, headers={"retry-after": far}),
        ctx("crawl.feeds"),
    )
    st = (await stores.feeds.get("f1")).status  # type: ignore[union-attr]
    assert st.next_fetch_at is not None
    assert st.next_fetch_at < datetime.fromtimestamp(t + SchedulerConfig().max_interval_s, UTC)


async def test_redelivered_and_older_results_are_ignored(stores: Stores, clock: ManualClock) -> None:
    h = make(stores, clock, Collector())
    await announce(h, stores.feeds, reg("f1", URL))
    t = clock.time()
    failed = result("f1", URL, t, status=FetchStatus.timeout, http_status=None, error="read timeout")
    await h.handle(failed, ctx("crawl.feeds"))
    await h.handle(failed, ctx("crawl.feeds"))  # redelivery
    await h.handle(result("f1", URL, t - 100), ctx("crawl.feeds"))  # an older one, late
    st = (await stores.feeds.get("f1")).status  # type: ignore[union-attr]
    assert st.consecutive_failures == 1
    assert st.last_result == "timeout"


async def test_parser_fields_are_left_alone(stores: Stores, clock: ManualClock) -> None:
    h = make(stores, clock, Collector())
    await announce(h, stores.feeds, reg("f1", URL))
    await stores.feeds.update_parse_status("f1", items=7, parse_error="line 3: bad tag", error_line=3, error_column=9)
    await h.handle(result("f1", URL, clock.time()), ctx("crawl.feeds"))
    st = (await stores.feeds.get("f1")).status  # type: ignore[union-attr]
    assert (st.items, st.last_error, st.error_line, st.error_column) == (7, "line 3: bad tag", 3, 9)


async def test_removed_feed_is_not_emitted_or_learned(stores: Stores, clock: ManualClock) -> None:
    pub = Collector()
    h = make(stores, clock, pub)
    await announce(h, stores.feeds, reg("f1", URL))
    await announce(h, stores.feeds, reg("f1", URL, action="delete"))
    await h.tick()
    assert pub.requests() == []
    await h.handle(result("f1", URL, clock.time()), ctx("crawl.feeds"))
    feed = await stores.feeds.get("f1")
    assert feed is not None
    assert feed.deleted
    assert feed.status.last_fetch_at is None


async def test_feed_registered_again_after_removal_is_due_at_once_without_old_validators(
    stores: Stores, clock: ManualClock
) -> None:
    pub = Collector()
    h = make(stores, clock, pub)
    await announce(h, stores.feeds, reg("f1", URL))
    await h.tick()
    await h.handle(result("f1", URL, clock.time(), headers={"etag": '"x"'}), ctx("crawl.feeds"))
    await announce(h, stores.feeds, reg("f1", URL, action="delete"))
    await announce(h, stores.feeds, reg("f1", URL))
    await h.tick()
    reqs = pub.requests()
    assert [r.url for r in reqs] == [URL, URL]
    assert reqs[1].etag is None


async def test_announcements_never_write_the_registration_fields(stores: Stores, clock: ManualClock) -> None:
    """The row is the registration service's; a late or replayed announcement must not undo it."""
    h = make(stores, clock, Collector())
    await announce(h, stores.feeds, reg("f1", URL))
    await stores.feeds.upsert_feed(Feed(feed_id="f1", url=URL, host="news.example", format="rss", services=("a",)))
    stale = reg("f1", URL).model_copy(update={"services": ["b"], "format": FeedFormat.yml})
    await h.handle(stale, ctx("feeds.registry"))  # an older announcement, read again
    feed = await stores.feeds.get("f1")
    assert feed is not None
    assert (feed.services, feed.format) == (("a",), "rss")
    await h.handle(reg("gone", "https://news.example/gone.xml"), ctx("feeds.registry"))
    assert await stores.feeds.get("gone") is None  # announced, never stored: nothing to follow


async def test_feeds_of_one_host_are_spread(stores: Stores, clock: ManualClock) -> None:
    h = make(stores, clock, Collector())
    t = clock.time()
    for i in range(6):
        await announce(h, stores.feeds, reg(f"f{i}", f"https://news.example/f{i}.xml"))
    await announce(h, stores.feeds, reg("other", "https://other.example/f.xml"))
    for i in range(6):  # all fetched at the same moment, all changed: all would fall due together
        await h.handle(result(f"f{i}", f"https://news.example/f{i}.xml", t), ctx("crawl.feeds"))
    await h.handle(result("other", "https://other.example/f.xml", t), ctx("crawl.feeds"))
    dues = []
    for i in range(6):
        st = (await stores.feeds.get(f"f{i}")).status  # type: ignore[union-attr]
        assert st.next_fetch_at is not None
        dues.append(st.next_fetch_at.timestamp())
    dues.sort()
    assert dues[0] == t + 120.0
    assert min(b - a for a, b in itertools.pairwise(dues)) >= 10.0 - 1e-6
    # another host is not held back by this one
    other = (await stores.feeds.get("other")).status  # type: ignore[union-attr]
    assert other.next_fetch_at == datetime.fromtimestamp(t + 120.0, UTC)


async def test_failed_publish_leaves_feeds_due(stores: Stores, clock: ManualClock) -> None:
    pub = Collector()
    h = make(stores, clock, pub)
    await announce(h, stores.feeds, reg("f1", URL))
    pub.fail = True
    with pytest.raises(ConnectionError):
        await h.tick()
    pub.fail = False
    await h.tick()
    assert [r.feed_id for r in pub.requests()] == ["f1"]


async def test_tick_drains_what_is_due_in_batches_most_overdue_first(stores: Stores, clock: ManualClock) -> None:
    pub = Collector()
    settings = SETTINGS.replace(scheduler={"tick_batch": 2})
    h = make(stores, clock, pub, settings)
    for i in (2, 1, 0):
        await announce(h, stores.feeds, reg(f"f{i}", f"https://h{i}.example/feed.xml"))
        clock.advance(1.0)
    batches: list[int] = []
    pub.on_publish = lambda n: batches.append(n)
    await h.tick()
    assert [r.feed_id for r in pub.requests()] == ["f2", "f1", "f0"]
    assert batches == [2, 1]  # tick_batch at a time, until nothing is left


async def test_a_tick_leaves_the_rest_to_the_next_once_its_time_is_spent(stores: Stores, clock: ManualClock) -> None:
    pub = Collector()
    settings = SETTINGS.replace(scheduler={"tick_batch": 2, "tick_s": 1.0})
    h = make(stores, clock, pub, settings)
    for i in range(5):
        await announce(h, stores.feeds, reg(f"f{i}", f"https://h{i}.example/feed.xml"))
    pub.on_publish = lambda n: clock.advance(1.0)  # a slow bus: each batch takes the whole tick
    await h.tick()
    assert len(pub.requests()) == 2
    await h.tick()
    assert len(pub.requests()) == 4


async def test_lease_reemits_a_lost_request(stores: Stores, clock: ManualClock) -> None:
    pub = Collector()
    h = make(stores, clock, pub)
    await announce(h, stores.feeds, reg("f1", URL))
    await h.tick()
    clock.advance(timedelta(seconds=121).total_seconds())  # no result came back within one interval
    await h.tick()
    assert len(pub.requests()) == 2


async def test_lease_of_a_failing_feed_follows_its_backoff(stores: Stores, clock: ManualClock) -> None:
    pub = Collector()
    h = make(stores, clock, pub)
    await announce(h, stores.feeds, reg("f1", URL))
    await stores.feeds.update_schedule("f1", consecutive_failures=3, interval_s=120.0)
    await h.tick()
    st = (await stores.feeds.get("f1")).status  # type: ignore[union-attr]
    assert st.next_fetch_at == datetime.fromtimestamp(clock.time() + 480.0, UTC)
    assert len(pub.requests()) == 1


async def test_a_big_feed_body_is_hashed_as_a_stream(stores: Stores, clock: ManualClock, tmp_path: Path) -> None:
    """A 32 MB body in the blob store is hashed a chunk at a time (it was read whole)."""
    blobs = FileBlobStore("file://blobs", tmp_path / "blobs")

    async def get_blobs() -> FileBlobStore:
        return blobs

    body = b"<rss><channel>" + b"<item><title>x</title></item>" * (32 * 1024 * 1024 // 29) + b"</channel></rss>"
    digest = body_hash(body)
    await blobs.put("feeds/big", body)
    size = len(body)
    del body
    h = SchedulerHandler(SETTINGS, stores.feeds, clock, rng=random.Random(7), blobs=get_blobs)
    await announce(h, stores.feeds, reg("big", URL))
    fetched = result("big", URL, clock.time() + 1, body=None).model_copy(update={"body_ref": "feeds/big"})

    tracemalloc.start()
    try:
        await h.handle(fetched, ctx("crawl.feeds"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    feed = await stores.feeds.get("big")
    assert feed is not None
    assert feed.status.last_hash == digest
    assert peak < size / 4, f"hashing a {size:,}-byte body peaked at {peak:,} bytes"
    await blobs.close()
