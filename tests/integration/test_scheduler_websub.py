"""WebSub end to end on loopback: a local test hub, the scheduler's callback server, a push -> a fetch.

The hub is a real aiohttp server on 127.0.0.1:0 that behaves like a WebSub
hub: it accepts a subscription request (202), verifies the callback with a
challenge, then distributes content signed with the subscriber's secret.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import random
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web

from cubes.scheduler.callback import CallbackServer, create_app
from cubes.scheduler.handler import SchedulerHandler
from cubes.scheduler.subscriber import Subscriber
from cubes.scheduler.websub import Subscriptions
from shared.clock import ManualClock
from shared.config import Settings
from shared.messages import CrawlKind, CrawlRequest, CrawlResult, FeedFormat, FeedRegistration, FetchStatus
from shared.runtime.cube import Context, Output
from shared.stores import Feed, Stores, open_stores

TOPIC = "https://news.example/feed.xml"
WAIT_S = 5.0


class Published:
    """``deps.publish`` for the test: records outputs and signals each one."""

    def __init__(self) -> None:
        self.requests: list[CrawlRequest] = []
        self.arrived = asyncio.Event()

    async def __call__(self, outputs: Sequence[Output]) -> None:
        for o in outputs:
            assert o.topic == "crawl.requests"
            assert isinstance(o.message, CrawlRequest)
            self.requests.append(o.message)
        self.arrived.set()


@dataclass
class Hub:
    """A WebSub hub: subscribe (202) -> verify the callback -> remember the subscription."""

    url: str = ""
    requests: list[dict[str, str]] = field(default_factory=list)
    verified: asyncio.Event = field(default_factory=asyncio.Event)
    challenge_echoed: bool = False
    lease_seconds: int = 3600
    tasks: set[asyncio.Task[None]] = field(default_factory=set)
    #: where a callback URL is really sent (a load balancer in front of several scheduler replicas)
    route: Callable[[str], str] = lambda url: url

    def app(self) -> web.Application:
        async def subscribe(request: web.Request) -> web.Response:
            form = {k: str(v) for k, v in (await request.post()).items()}
            self.requests.append(form)
            task = asyncio.create_task(self._verify(form))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)
            return web.Response(status=202)

        app = web.Application()
        app.router.add_post("/", subscribe)
        return app

    async def _verify(self, form: dict[str, str]) -> None:
        params = {
            "hub.mode": form["hub.mode"],
            "hub.topic": form["hub.topic"],
            "hub.challenge": "chal-123",
            "hub.lease_seconds": str(self.lease_seconds),
        }
        async with aiohttp.ClientSession() as s, s.get(self.route(form["hub.callback"]), params=params) as resp:
            self.challenge_echoed = resp.status == 200 and await resp.text() == "chal-123"
        self.verified.set()

    async def push(self, body: bytes, *, secret: str | None = None) -> int:
        sub = self.requests[-1]
        key = (secret if secret is not None else sub["hub.secret"]).encode()
        sig = "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()
        headers = {"X-Hub-Signature": sig, "Content-Type": "application/rss+xml"}
        async with (
            aiohttp.ClientSession() as s,
            s.post(self.route(sub["hub.callback"]), data=body, headers=headers) as resp,
        ):
            return resp.status


@dataclass
class Rig:
    stores: Stores
    clock: ManualClock
    handler: SchedulerHandler
    subscriber: Subscriber
    published: Published
    hub: Hub
    callback_port: int


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    hub = Hub()
    hub_runner = web.AppRunner(hub.app())
    await hub_runner.setup()
    await web.TCPSite(hub_runner, "127.0.0.1", 0).start()
    hub.url = f"http://127.0.0.1:{hub_runner.addresses[0][1]}/"

    settings = Settings().replace(
        http={"allowlist": ["127.0.0.1/32"]},
        scheduler={"jitter": 0.0, "websub_callback_base": "http://placeholder", "websub_port": 0},
    )
    stores = await open_stores(f"sqlite:///{tmp_path}/store.db")
    clock = ManualClock(start=1_700_000_000.0)
    published = Published()
    book = Subscriptions(stores.feeds)
    subscriber = Subscriber(settings, book)
    server = CallbackServer(create_app(settings, stores.feeds, book, published, clock), "127.0.0.1", 0)
    await server.start()
    assert server.port
    subscriber.callback_base = f"http://127.0.0.1:{server.port}"  # known only once bound to port 0
    handler = SchedulerHandler(settings, stores.feeds, clock, subscriber=subscriber, rng=random.Random(1))
    try:
        yield Rig(stores, clock, handler, subscriber, published, hub, server.port)
    finally:
        await handler.close()
        await server.stop()
        await hub_runner.cleanup()
        await stores.close()


def _ctx(topic: str) -> Context:
    return Context(topic=topic, partition=0, offset=0, key=None, attempt=1, received_at=datetime.now(UTC))


def _feed_body(hub_url: str) -> bytes:
    return (
        '<?xml version="1.0"?><rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom"><channel>'
        f'<title>News</title><atom:link rel="hub" href="{hub_url}"/>'
        f'<atom:link rel="self" href="{TOPIC}"/><item><title>a</title></item></channel></rss>'
    ).encode()


async def _register_and_fetch(rig: Rig) -> None:
    # what the registration service (shared.webmaster.feeds) does: the row, then its announcement
    await rig.stores.feeds.upsert_feed(Feed(feed_id="f1", url=TOPIC, host="news.example", format="rss"))
    await rig.handler.handle(
        FeedRegistration(
            feed_id="f1",
            url=TOPIC,
            host="news.example",
            format=FeedFormat.rss,
            registered_at=datetime.now(UTC),
        ),
        _ctx("feeds.registry"),
    )
    result = CrawlResult(
        kind=CrawlKind.feed,
        url=TOPIC,
        host="news.example",
        status=FetchStatus.ok,
        http_status=200,
        body=_feed_body(rig.hub.url),
        requesters=["feed:f1"],
        feed_id="f1",
        fetched_at=rig.clock.now(),
    )
    await rig.handler.handle(result, _ctx("crawl.feeds"))


async def test_subscribe_verify_and_push_triggers_a_fetch(rig: Rig) -> None:
    await _register_and_fetch(rig)

    # the subscription request reached the hub, with our callback and a secret
    assert len(rig.hub.requests) == 1
    form = rig.hub.requests[0]
    assert form["hub.mode"] == "subscribe"
    assert form["hub.topic"] == TOPIC
    assert form["hub.callback"] == f"http://127.0.0.1:{rig.callback_port}/websub/f1"
    assert len(form["hub.secret"]) >= 32
    assert int(form["hub.lease_seconds"]) > 0

    # the hub verified the callback and got its challenge back
    await asyncio.wait_for(rig.hub.verified.wait(), WAIT_S)
    assert rig.hub.challenge_echoed
    st = (await rig.stores.feeds.get("f1")).status  # type: ignore[union-attr]
    assert st.websub_hub == rig.hub.url
    assert st.websub_expires_at == datetime.fromtimestamp(rig.clock.time() + 3600, UTC)

    # a push with a forged signature is acknowledged and ignored
    assert await rig.hub.push(b"<rss>forged</rss>", secret="not-the-secret") == 202
    assert rig.published.requests == []

    # a signed push triggers an immediate fetch within a second
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert await rig.hub.push(_feed_body(rig.hub.url)) == 202
    await asyncio.wait_for(rig.published.arrived.wait(), 1.0)
    assert loop.time() - started < 1.0
    [req] = rig.published.requests
    assert req.kind is CrawlKind.feed
    assert req.url == TOPIC
    assert req.feed_id == "f1"
    assert req.requesters == ["feed:f1"]
    assert req.priority == 0


async def test_live_subscription_polls_at_the_maximum(rig: Rig) -> None:
    rig.hub.lease_seconds = 10 * 86_400  # a long lease: no renewal due for days
    await _register_and_fetch(rig)
    await asyncio.wait_for(rig.hub.verified.wait(), WAIT_S)
    rig.clock.advance(60)
    fetched = rig.clock.time()
    result = CrawlResult(
        kind=CrawlKind.feed,
        url=TOPIC,
        host="news.example",
        status=FetchStatus.ok,
        http_status=200,
        body=_feed_body(rig.hub.url) + b"<!-- changed -->",
        requesters=["feed:f1"],
        feed_id="f1",
        fetched_at=datetime.fromtimestamp(fetched, UTC),
    )
    await rig.handler.handle(result, _ctx("crawl.feeds"))
    st = (await rig.stores.feeds.get("f1")).status  # type: ignore[union-attr]
    # polling goes on as a safety net, at the maximum interval; the hub is not asked again (lease still long)
    assert st.next_fetch_at == datetime.fromtimestamp(fetched + 21_600.0, UTC)
    assert len(rig.hub.requests) == 1


async def test_renews_before_the_lease_runs_out(rig: Rig) -> None:
    await _register_and_fetch(rig)
    await asyncio.wait_for(rig.hub.verified.wait(), WAIT_S)
    rig.hub.verified.clear()
    # 3600 s lease < two safety-net polls: the next fetch renews
    rig.clock.advance(120)
    result = CrawlResult(
        kind=CrawlKind.feed,
        url=TOPIC,
        host="news.example",
        status=FetchStatus.not_modified,
        http_status=304,
        requesters=["feed:f1"],
        feed_id="f1",
        fetched_at=rig.clock.now(),
    )
    await rig.handler.handle(result, _ctx("crawl.feeds"))
    assert len(rig.hub.requests) == 1  # a 304 has no body to learn the hub from: nothing asked
    rig.clock.advance(120)
    ok = result.model_copy(
        update={
            "status": FetchStatus.ok,
            "http_status": 200,
            "body": _feed_body(rig.hub.url),
            "fetched_at": rig.clock.now(),
        }
    )
    await rig.handler.handle(ok, _ctx("crawl.feeds"))
    assert len(rig.hub.requests) == 2
    await asyncio.wait_for(rig.hub.verified.wait(), WAIT_S)
    assert rig.hub.challenge_echoed


async def test_callback_refuses_what_we_did_not_ask_for(rig: Rig) -> None:
    await _register_and_fetch(rig)
    await asyncio.wait_for(rig.hub.verified.wait(), WAIT_S)
    base = f"http://127.0.0.1:{rig.callback_port}/websub"
    async with aiohttp.ClientSession() as s:
        wrong_topic = {"hub.mode": "subscribe", "hub.topic": "https://evil.example/", "hub.challenge": "c"}
        async with s.get(f"{base}/f1", params=wrong_topic) as resp:
            assert resp.status == 404
        unknown_feed = {"hub.mode": "subscribe", "hub.topic": TOPIC, "hub.challenge": "c"}
        async with s.get(f"{base}/nope", params=unknown_feed) as resp:
            assert resp.status == 404
        # we never asked to unsubscribe
        unsub = {"hub.mode": "unsubscribe", "hub.topic": TOPIC, "hub.challenge": "c"}
        async with s.get(f"{base}/f1", params=unsub) as resp:
            assert resp.status == 404
        async with s.post(f"{base}/nope", data=b"x") as resp:
            assert resp.status == 410
        async with s.post(f"{base}/f1", data=b"x") as resp:  # no signature at all
            assert resp.status == 202
    assert rig.published.requests == []


async def test_hub_behind_a_blocked_address_is_not_contacted(tmp_path: Path) -> None:
    settings = Settings().replace(scheduler={"websub_callback_base": "https://cb.example"})  # no allowlist
    stores = await open_stores(f"sqlite:///{tmp_path}/store.db")
    sub = Subscriber(settings, Subscriptions(stores.feeds))
    try:
        from cubes.scheduler.websub import Discovery

        for hub in (
            "http://127.0.0.1:9/",
            "http://10.0.0.1/",
            "http://169.254.169.254/",
            "file:///etc/passwd",
        ):
            error = await sub.subscribe("f1", TOPIC, Discovery(hub=hub, topic=TOPIC), 0.0)
            assert error is not None
            assert error.startswith("hub refused")
    finally:
        await sub.close()
        await stores.close()


async def test_callbacks_reach_any_replica(tmp_path: Path) -> None:
    """Three scheduler replicas behind one callback address: the hub's verification and pushes reach
    others than the replica that subscribed, which know the subscription from the store alone."""
    hub = Hub()
    hub_runner = web.AppRunner(hub.app())
    await hub_runner.setup()
    await web.TCPSite(hub_runner, "127.0.0.1", 0).start()
    hub.url = f"http://127.0.0.1:{hub_runner.addresses[0][1]}/"
    settings = Settings().replace(
        http={"allowlist": ["127.0.0.1/32"]},
        scheduler={"jitter": 0.0, "websub_callback_base": "http://placeholder", "websub_port": 0},
    )
    stores = await open_stores(f"sqlite:///{tmp_path}/store.db")
    clock = ManualClock(start=1_700_000_000.0)
    replicas: list[tuple[SchedulerHandler, CallbackServer, Published]] = []
    try:
        for _ in range(3):
            published = Published()
            book = Subscriptions(stores.feeds)  # each replica its own: nothing shared but the store
            subscriber = Subscriber(settings, book)
            server = CallbackServer(create_app(settings, stores.feeds, book, published, clock), "127.0.0.1", 0)
            await server.start()
            subscriber.callback_base = "http://lb.example"  # the public address, in front of all three
            handler = SchedulerHandler(settings, stores.feeds, clock, subscriber=subscriber)
            replicas.append((handler, server, published))
        (a, _, _), (_, b_server, _), (_, c_server, c_published) = replicas
        turns = iter([b_server.port, c_server.port])
        hub.route = lambda url: url.replace("http://lb.example", f"http://127.0.0.1:{next(turns)}")
        rig = Rig(stores, clock, a, a._subscriber, replicas[0][2], hub, 0)  # type: ignore[arg-type]
        await _register_and_fetch(rig)  # replica A fetches the feed and subscribes
        await asyncio.wait_for(hub.verified.wait(), WAIT_S)
        assert hub.challenge_echoed  # replica B answered the verification of A's subscription
        st = (await stores.feeds.get("f1")).status  # type: ignore[union-attr]
        assert st.websub_expires_at == datetime.fromtimestamp(clock.time() + 3600, UTC)
        assert await hub.push(_feed_body(hub.url)) == 202  # replica C gets the push
        [req] = c_published.requests
        assert (req.feed_id, req.host, req.priority) == ("f1", "news.example", 0)  # keyed by host: to the owners
    finally:
        for handler, server, _ in replicas:
            await handler.close()
            await server.stop()
        await hub_runner.cleanup()
        await stores.close()
