"""The registration service: one set of rules, the row, the announcement, removal and "fetch now"."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest
from aiohttp.abc import AbstractResolver, ResolveResult

from shared.config import Settings
from shared.errors import BusUnavailable, NotFound
from shared.messages import FeedFormat, FeedRegistration
from shared.runtime.cube import Output
from shared.stores import Stores, UpsertOutcome, open_stores
from shared.webmaster.feeds import (
    SERVICE_NAME_RE,
    WEBMASTER_FORMATS,
    FeedProblem,
    FeedRegistry,
    RegistrationRefused,
    feed_id_for,
)


class Collector:
    def __init__(self) -> None:
        self.outputs: list[Output] = []
        self.fail = False

    async def __call__(self, outputs: Sequence[Output]) -> None:
        if self.fail:
            raise BusUnavailable("the bus is down")
        self.outputs.extend(outputs)


class CountingDns(AbstractResolver):
    """news.example -> a public address; counts lookups (the guard's DNS work)."""

    def __init__(self) -> None:
        self.lookups = 0

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        self.lookups += 1
        if host != "news.example":
            raise OSError(socket.EAI_NONAME, f"{host}: name not known")
        return [ResolveResult(hostname=host, host="93.184.216.34", port=port, family=family, proto=0, flags=0)]

    async def close(self) -> None:
        return None


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[Stores]:
    s = await open_stores(f"sqlite:///{tmp_path}/store.db")
    yield s
    await s.close()


URL = "https://news.example/feed.xml"


def test_validate_reports_every_problem_at_once() -> None:
    registry = FeedRegistry.from_settings(Settings(), None, Collector())  # type: ignore[arg-type]
    with pytest.raises(RegistrationRefused) as refused:
        registry.validate("ftp://news.example/x", "atom", ["news", "Sport", 7], formats=WEBMASTER_FORMATS)
    assert [p.field for p in refused.value.problems] == ["url", "format", "services[1]", "services[2]"]
    assert refused.value.problems[1] == FeedProblem("format", "required, one of rss, turbo, yml, auto")
    assert not refused.value.retriable  # bad input: asking again the same way will not help
    with pytest.raises(RegistrationRefused, match="at most 16"):
        registry.validate(URL, "rss", [f"s{i}" for i in range(17)])
    assert registry.validate("HTTPS://News.Example/a/../feed.xml", "rss", ["b", "a", "b"]) == (
        URL,
        FeedFormat.rss,
        ("a", "b"),
    )


def test_one_service_name_rule() -> None:
    assert SERVICE_NAME_RE.match("news_2-x")
    assert not SERVICE_NAME_RE.match("2news")
    assert not SERVICE_NAME_RE.match("a" * 33)


async def test_register_stores_and_announces_the_stored_feed(stores: Stores) -> None:
    pub = Collector()
    registry = FeedRegistry.from_settings(Settings(), stores.feeds, pub, resolver=CountingDns())
    done = await registry.register(URL, fmt="rss", services=["news"], tenant_id="t1", autoparser=True)
    assert done.outcome is UpsertOutcome.inserted
    assert done.feed.feed_id == feed_id_for("t1", URL)
    assert done.feed.created_at is not None  # what the store wrote, not what was asked
    [out] = pub.outputs
    assert (out.topic, out.key) == ("feeds.registry", done.feed.feed_id)
    assert isinstance(out.message, FeedRegistration)
    assert (out.message.action, out.message.url, out.message.tenant_id, out.message.autoparser) == (
        "upsert",
        URL,
        "t1",
        True,
    )
    again = await registry.register(URL, fmt="rss", services=["news"], tenant_id="t1", autoparser=True)
    assert again.outcome is UpsertOutcome.unchanged
    assert len(pub.outputs) == 2  # announced again: a registration repeated after a lost announcement repairs it


async def test_authorize_runs_before_any_dns_work_and_its_refusal_stores_nothing(stores: Stores) -> None:
    dns = CountingDns()
    pub = Collector()
    registry = FeedRegistry.from_settings(Settings(), stores.feeds, pub, resolver=dns)
    seen: list[str] = []

    async def not_yours(origin: str) -> None:
        seen.append(origin)
        raise PermissionError(origin)

    with pytest.raises(PermissionError):
        await registry.register("https://News.Example:443/feed.xml", fmt="rss", authorize=not_yours)
    assert seen == ["https://news.example"]  # the canonical origin: what a right covers
    assert dns.lookups == 0
    assert pub.outputs == []
    assert await stores.feeds.list(include_deleted=True) == []


async def test_address_refusals_store_nothing(stores: Stores) -> None:
    pub = Collector()
    registry = FeedRegistry.from_settings(Settings(), stores.feeds, pub, resolver=CountingDns())
    for url, reason in [
        ("http://127.0.0.1/feed.xml", "loopback"),
        ("https://nowhere.example/feed.xml", "cannot be resolved"),
    ]:
        with pytest.raises(RegistrationRefused, match=reason) as refused:
            await registry.register(url)
        assert [p.field for p in refused.value.problems] == ["url"]
    assert pub.outputs == []
    assert await stores.feeds.list(include_deleted=True) == []


async def test_remove_is_announced_first_so_a_bus_outage_keeps_the_feed(stores: Stores) -> None:
    pub = Collector()
    registry = FeedRegistry.from_settings(Settings(), stores.feeds, pub, resolver=CountingDns())
    feed = (await registry.register(URL)).feed
    pub.fail = True
    with pytest.raises(BusUnavailable):
        await registry.remove(feed.feed_id)
    stored = await stores.feeds.get(feed.feed_id)
    assert stored is not None
    assert not stored.deleted  # still registered: a retry finds it again
    pub.fail = False
    await registry.remove(feed.feed_id)
    stored = await stores.feeds.get(feed.feed_id)
    assert stored is not None
    assert stored.deleted
    last = pub.outputs[-1].message
    assert isinstance(last, FeedRegistration)
    assert last.action == "delete"
    with pytest.raises(NotFound):
        await registry.remove(feed.feed_id)
    with pytest.raises(NotFound):
        await registry.fetch_now(feed.feed_id)
