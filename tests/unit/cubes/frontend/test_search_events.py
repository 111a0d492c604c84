"""Answered searches go to search.queries without waiting for the bus, and survive a bus outage."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from aiohttp.test_utils import TestClient, TestServer

from cubes.frontend.app import create_app
from cubes.frontend.queries import QueryEvents
from cubes.kvwriter.handler import KvwriterHandler
from shared.config import Settings
from shared.errors import BusUnavailable
from shared.messages import Device, Document, SearchQueryEvent, SourceKind, SourceRef
from shared.runtime.cube import Output
from shared.search.request import Cursor
from shared.stores import open_stores

T0 = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)


class Sink:
    """A publish function that can be made to fail, and that says when it got something."""

    def __init__(self) -> None:
        self.got: list[Output] = []
        self.failing = False
        self.calls = 0
        self.arrived = asyncio.Event()
        self.called = asyncio.Event()

    async def __call__(self, outputs: Sequence[Output]) -> None:
        self.calls += 1
        self.called.set()
        if self.failing:
            raise BusUnavailable("down")
        self.got.extend(outputs)
        self.arrived.set()


def event(query: str) -> SearchQueryEvent:
    return SearchQueryEvent(event_id="e" * 16 + query, query=query, at=T0, device=Device.desktop)


async def test_events_are_published_in_the_background_and_retried() -> None:
    sink = Sink()
    sink.failing = True
    events = QueryEvents(sink, queue_max=10)
    events.start()
    events.record(event("мосты"))
    async with asyncio.timeout(5):
        await sink.called.wait()
    assert sink.got == []
    assert events.pending == 1  # kept for the next try
    sink.failing = False
    async with asyncio.timeout(5):
        await sink.arrived.wait()
    assert [o.message.query for o in sink.got] == ["мосты"]  # type: ignore[attr-defined]
    assert sink.got[0].topic == "search.queries"
    assert sink.got[0].key is None  # the topic's key field, event_id: counting needs no order
    await events.stop()


async def test_a_full_queue_drops_and_counts_and_stop_flushes() -> None:
    sink = Sink()
    events = QueryEvents(sink, queue_max=2)  # not started: nothing leaves until stop
    for q in ("a1", "a2", "a3"):
        events.record(event(q))
    assert events.pending == 2
    assert events.dropped == 1
    await events.stop()
    assert [o.message.query for o in sink.got] == ["a1", "a2"]  # type: ignore[attr-defined]


async def test_the_frontend_publishes_what_was_searched_but_not_who(tmp_path: Path) -> None:
    settings = Settings().replace(
        store={"url": f"sqlite:///{tmp_path}/store.db"},
        search={"region_header": "X-Region", "region_ranges": ["127.0.0.0/8 local"]},
    )
    stores = await open_stores(settings.store.url)
    doc = Document(
        url="https://news.example/bridges",
        host="news.example",
        source=SourceRef(kind=SourceKind.rss, id="f"),
        title="Новые мосты",
        content_html="<p>Мосты через реку.</p>",
        content_hash="h",
        version=1,
        seen_at=T0,
        parsed_at=T0,
    )
    await KvwriterHandler(stores.pages, settings).handle(doc)
    await stores.index_queue.catch_up()
    sink = Sink()
    events = QueryEvents(sink, queue_max=100)
    client = TestClient(TestServer(create_app(settings, stores, events=events), host="127.0.0.1", port=0))
    await client.start_server()
    try:
        phone = {"User-Agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4) Mobile/15E148"}
        assert (await client.get("/search", params={"q": "Мосты! -пробки"}, headers=phone)).status == 200
        await client.get("/search", params={"q": "мосты"}, headers={"X-Region": "Moscow"})
        await client.get("/search", params={"q": "мосты"}, headers={"User-Agent": "YandexBot/3.0"})
        # the next results page of a search already counted
        after = Cursor(now_us=1, score=1.0, url="https://news.example/bridges").encode()
        await client.get("/search", params={"q": "мосты", "after": after})
        await client.get("/search", params={"q": "!!!"})
    finally:
        await client.close()
        await events.stop()
        await stores.close()
    got = [o.message for o in sink.got]
    assert [(e.query, e.device, e.region, e.results, e.hosts) for e in got] == [  # type: ignore[attr-defined]
        ("мосты", Device.mobile, "local", 1, ["news.example"]),
        ("мосты", Device.desktop, "moscow", 1, ["news.example"]),
    ]
    # and the origin of each page shown: whose right sees the search (shared/wordstat/hosts.py)
    assert [e.origins for e in got] == [["https://news.example"]] * 2  # type: ignore[attr-defined]
    wire = got[0].model_dump_json()
    assert "iPhone" not in wire
    assert "127.0.0.1" not in wire
    assert len({e.event_id for e in got}) == 2  # type: ignore[attr-defined]


async def test_publishing_can_be_turned_off(tmp_path: Path) -> None:
    settings = Settings().replace(store={"url": f"sqlite:///{tmp_path}/s.db"}, search={"publish_queries": False})
    stores = await open_stores(settings.store.url)
    sink = Sink()
    events = QueryEvents(sink, queue_max=100)
    client = TestClient(TestServer(create_app(settings, stores, events=events), host="127.0.0.1", port=0))
    await client.start_server()
    try:
        await client.get("/search", params={"q": "мосты"})
    finally:
        await client.close()
        await events.stop()
        await stores.close()
    assert sink.got == []
