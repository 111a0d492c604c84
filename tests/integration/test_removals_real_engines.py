"""Every removal reaches the KV store and the search index, on SQLite and on PostgreSQL.

The parser's outputs go through the kvwriter on a real store, as the pipeline
carries them (documents.parsed -> kvwriter; documents.deleted -> kvwriter):

* an offer gone from a full catalog;
* a deleted feed (``feeds.registry``, ``action=delete``);
* a Turbo item with ``turbo="false"``.

After each, the page is gone from ``pages.get`` and from search, and what
stays is still found. With ``CI=true`` a missing PostgreSQL fails the test.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cubes.kvwriter.handler import KvwriterHandler
from cubes.parser.handler import ParserHandler
from shared.blobs import open_blobs
from shared.blobs.base import BlobStore
from shared.clock import ManualClock
from shared.config import Settings
from shared.messages import (
    PARITY_PREFIX,
    CrawlKind,
    CrawlRequest,
    CrawlResult,
    Document,
    DocumentDeleted,
    FeedRegistration,
    FetchStatus,
)
from shared.runtime.cube import Context, Output
from shared.search.query import parse_query
from shared.search.request import SearchFilters, SearchRequest
from shared.stores import Feed, Stores, open_stores
from tests.pgschema import fresh_schema

T0 = datetime(2026, 3, 1, tzinfo=UTC)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def stores(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Stores]:
    async with contextlib.AsyncExitStack() as stack:
        if request.param == "sqlite":
            url = f"sqlite:///{tmp_path}/store.db"
        else:
            url = await stack.enter_async_context(fresh_schema(request.getfixturevalue("postgres_url")))
        opened = await open_stores(url)
        stack.push_async_callback(opened.close)
        for feed_id, fmt in (("shop", "yml"), ("news", "turbo")):
            await opened.feeds.upsert_feed(
                Feed(feed_id=feed_id, url=f"https://shop.test/{feed_id}.xml", host="shop.test", format=fmt)
            )
        yield opened


class Pipeline:
    """The parser and the kvwriter on one store; outputs carried from one to the other."""

    def __init__(self, stores: Stores, blobs: BlobStore) -> None:
        self.stores = stores
        self.clock = ManualClock(start=T0.timestamp())

        async def get_blobs() -> BlobStore:
            return blobs

        self.parser = ParserHandler(stores, get_blobs, clock=self.clock)
        self.kvwriter = KvwriterHandler(stores.pages, Settings(), self.clock)

    async def _carry(self, msg: CrawlResult | FeedRegistration, topic: str) -> list[Output]:
        ctx = Context(topic=topic, partition=0, offset=0, key=None, attempt=1, received_at=T0)
        out = list(await self.parser.handle(msg, ctx))
        for hook in ctx.committed_hooks or ():
            await hook()
        for o in out:
            if isinstance(o.message, CrawlRequest):  # a Turbo item checked against its page (parity:...)
                assert o.message.kind is CrawlKind.page
                assert o.message.requesters[0].startswith(PARITY_PREFIX)
                continue
            assert isinstance(o.message, Document | DocumentDeleted)
            await self.kvwriter.handle(o.message)  # media has nothing to cache here: ready as parsed
        return out

    async def fetch(self, feed_id: str, body: bytes) -> list[Output]:
        self.clock.advance(60)
        msg = CrawlResult(
            kind=CrawlKind.feed,
            url=f"https://shop.test/{feed_id}.xml",
            host="shop.test",
            status=FetchStatus.ok,
            body=body,
            feed_id=feed_id,
            fetched_at=self.clock.now(),
        )
        return await self._carry(msg, "crawl.feeds")

    async def delete_feed(self, feed_id: str) -> list[Output]:
        self.clock.advance(60)
        msg = FeedRegistration(
            action="delete",
            feed_id=feed_id,
            url=f"https://shop.test/{feed_id}.xml",
            host="shop.test",
            registered_at=self.clock.now(),
        )
        return await self._carry(msg, "feeds.registry")

    async def found(self, words: str) -> list[str]:
        await self.stores.index_queue.catch_up()  # the removals reach the index through its queue
        request = SearchRequest(
            query=parse_query(words),
            filters=SearchFilters(host="shop.test"),
            now=self.clock.now(),
        )
        return sorted(hit.url for hit in (await self.stores.search.search(request)).hits)


@pytest.fixture
async def pipeline(stores: Stores, tmp_path: Path) -> AsyncIterator[Pipeline]:
    blobs = await open_blobs(f"file://{tmp_path}/blobs")
    try:
        yield Pipeline(stores, blobs)
    finally:
        await blobs.close()


def catalog(*offers: tuple[int, str]) -> bytes:
    body = "".join(
        f'<offer id="{i}"><url>https://shop.test/p/{i}</url><price>{100 + i}</price><currencyId>RUR</currencyId>'
        f"<categoryId>1</categoryId><name>{name}</name><description>About the {name}</description></offer>"
        for i, name in offers
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?><yml_catalog date="2026-03-01 10:00"><shop><name>Shop</name>'
        '<url>https://shop.test/</url><categories><category id="1">Kitchen</category></categories>'
        f"<offers>{body}</offers></shop></yml_catalog>"
    ).encode()


def turbo(*items: tuple[int, str, str]) -> bytes:
    body = "".join(
        f'<item turbo="{flag}"><link>https://shop.test/news/{i}</link><title>{title}</title>'
        f"<turbo:content><![CDATA[<p>{title} in the news</p>]]></turbo:content></item>"
        for i, title, flag in items
    )
    return (
        '<?xml version="1.0"?><rss version="2.0" xmlns:turbo="http://turbo.yandex.ru"><channel><title>N</title>'
        f"{body}</channel></rss>"
    ).encode()


async def test_removals_reach_the_kv_store_and_search(pipeline: Pipeline) -> None:
    listing = "https://shop.test/?turbo_category=1"  # the category's page lists its offers' cards
    await pipeline.fetch("shop", catalog((1, "kettle"), (2, "teapot"), (3, "saucepan")))
    assert await pipeline.found("saucepan") == ["https://shop.test/?turbo_category=1", "https://shop.test/p/3"]
    assert await pipeline.stores.pages.get(listing) is not None

    # an offer gone from the catalog: the page and its search entry go, and its card leaves the listing
    await pipeline.fetch("shop", catalog((1, "kettle"), (2, "teapot")))
    assert await pipeline.stores.pages.get("https://shop.test/p/3") is None
    assert await pipeline.found("saucepan") == []
    assert await pipeline.found("kettle") == [listing, "https://shop.test/p/1"]

    # a turbo="false" item
    await pipeline.fetch("news", turbo((1, "Lighthouse", "true"), (2, "Harbour", "true")))
    assert await pipeline.found("harbour") == ["https://shop.test/news/2"]
    await pipeline.fetch("news", turbo((1, "Lighthouse", "true"), (2, "Harbour", "false")))
    assert await pipeline.stores.pages.get("https://shop.test/news/2") is None
    assert await pipeline.found("harbour") == []

    # the feed deleted: every page it published goes, the other feed's stay
    await pipeline.delete_feed("shop")
    for url in ("https://shop.test/p/1", "https://shop.test/p/2", "https://shop.test/?turbo_category=1"):
        assert await pipeline.stores.pages.get(url) is None
    assert await pipeline.found("kettle") == []
    assert await pipeline.found("teapot") == []
    assert await pipeline.found("lighthouse") == ["https://shop.test/news/1"]
