"""A big YML catalog through the handler: streamed in batches, batched store calls, the collector paused."""

from __future__ import annotations

import dataclasses
import gc
import gzip
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cubes.parser import handler as parser_handler
from cubes.parser.collector import collector_paused
from cubes.parser.documents import prepare_items
from cubes.parser.feed import parse_feed
from cubes.parser.handler import ParserHandler
from cubes.parser.items import BATCH
from shared.blobs import open_blobs
from shared.blobs.base import BlobStore
from shared.clock import ManualClock
from shared.errors import BusUnavailable as BusUnavailableError
from shared.messages import CrawlKind, CrawlResult, DocKind, Document, FetchStatus
from shared.runtime.cube import Context, Output
from shared.stores import Feed, Stores, open_stores

T0 = datetime(2026, 3, 1, tzinfo=UTC)
#: more than one batch, and over the 256 KB from which a catalog is streamed
OFFERS = 2 * BATCH + 500


def offer(i: int, *, url: str | None = None, price: int | None = None) -> str:
    link = f"<url>{url}</url>" if url != "" else ""
    link = link if url is not None else f"<url>https://shop.test/p/{i}</url>"
    return (
        f'<offer id="o{i}">{link}<price>{price if price is not None else i}</price><currencyId>RUR</currencyId>'
        f"<categoryId>{i % 3}</categoryId><picture>https://shop.test/i/{i}.jpg</picture>"
        f"<name>Product {i}</name><description><![CDATA[<p>About product {i}, a fine thing.</p>]]></description>"
        f'<param name="Colour">red</param></offer>\n'
    )


def catalog(offers: list[str], *, date: str = "2026-01-01 10:00", prolog: str = "", tail: bool = True) -> bytes:
    cats = "".join(f'<category id="{c}">Category {c}</category>' for c in range(3))
    end = "</offers></shop></yml_catalog>" if tail else ""
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>{prolog}\n<yml_catalog date="{date}"><shop><categories>{cats}'
        f"</categories><offers>\n{''.join(offers)}{end}"
    ).encode()


class Env:
    def __init__(self, stores: Stores, blobs: BlobStore) -> None:
        self.stores = stores
        self.blobs = blobs
        self.clock = ManualClock(start=T0.timestamp())

        async def get_blobs() -> BlobStore:
            return blobs

        self.handler = ParserHandler(stores, get_blobs, clock=self.clock)

    async def load(
        self,
        body: bytes,
        *,
        commit: bool = True,
        emitter: Callable[[Sequence[Output]], Awaitable[int]] | None = None,
        fetched_at: datetime | None = None,
    ) -> list[Output]:
        """A fetch of ``body`` parsed (``fetched_at``: another attempt at that fetch, else a new one)."""
        self.clock.advance(60)
        await self.blobs.put("feeds/shop", body)
        msg = CrawlResult(
            kind=CrawlKind.feed,
            url="https://shop.test/yml.xml",
            host="shop.test",
            status=FetchStatus.ok,
            body_ref="feeds/shop",
            feed_id="shop",
            fetched_at=fetched_at or self.clock.now(),
        )
        ctx = Context(topic="crawl.feeds", partition=0, offset=0, key=None, attempt=1, received_at=T0, emitter=emitter)
        out = list(await self.handler.handle(msg, ctx))
        if commit:
            for hook in ctx.committed_hooks or ():
                await hook()
        return out

    async def status(self) -> tuple[str | None, int | None, str | None]:
        feed = await self.stores.feeds.get("shop")
        assert feed is not None
        return feed.status.last_result, feed.status.items, feed.status.last_error


@pytest.fixture
async def env(tmp_path: Path) -> AsyncIterator[Env]:
    stores = await open_stores(f"sqlite:///{tmp_path}/store.db")
    blobs = await open_blobs(f"file://{tmp_path}/blobs")
    await stores.feeds.upsert_feed(
        Feed(feed_id="shop", url="https://shop.test/yml.xml", host="shop.test", format="yml")
    )
    try:
        yield Env(stores, blobs)
    finally:
        await stores.close()
        await blobs.close()


def all_docs(outputs: list[Output]) -> list[Document]:
    return [o.message for o in outputs if o.topic == "documents.parsed"]  # type: ignore[misc]


def docs(outputs: list[Output]) -> list[Document]:
    """The offers' documents (not the category listing pages the catalog also gives, categories.py)."""
    return [d for d in all_docs(outputs) if d.kind is DocKind.product]


async def test_streamed_catalog_publishes_what_parse_feed_reads(env: Env) -> None:
    body = catalog([offer(i) for i in range(OFFERS)])
    assert len(body) > 256 * 1024  # the streamed path
    published = all_docs(await env.load(body))
    parsed = parse_feed(body, url="https://shop.test/yml.xml")
    expected, errors = prepare_items([*parsed.items, *parsed.listings], feed_host="shop.test")
    assert errors == []
    assert [(d.url, d.title, d.content_hash) for d in published] == [(c.url, c.title, c.content_hash) for c in expected]
    # the three categories' listing pages come last
    assert [d.url for d in published[-3:]] == [f"https://shop.test/?turbo_category={c}" for c in range(3)]
    out = [d for d in published if d.kind is DocKind.product]
    assert out[5].product is not None
    assert out[5].product.category == "Category 2"
    assert len({d.version for d in out}) == 1  # one run, one version for new URLs
    assert await env.status() == ("parsed", OFFERS, None)
    assert gc.isenabled()
    stored = await env.stores.hashes.get_many("feed:shop", [d.url for d in out])
    assert {url: e.version for url, e in stored.items()} == {d.url: d.version for d in out}
    assert await env.stores.hashes.url_for_guid("feed:shop", f"offer:o{OFFERS - 1}") == out[-1].url


async def test_nothing_is_seen_before_commit_then_only_changes_are_published(env: Env) -> None:
    offers = [offer(i) for i in range(OFFERS)]
    lost = docs(await env.load(catalog(offers), commit=False))
    assert len(lost) == OFFERS
    assert await env.stores.hashes.get_many("feed:shop", [d.url for d in lost]) == {}
    first = docs(await env.load(catalog(offers)))
    assert len(first) == OFFERS  # redelivered after a crash: produced again, nothing lost
    assert first[0].version > lost[0].version
    assert await env.load(catalog(offers)) == []  # byte-identical: the body shortcut
    assert await env.load(catalog(offers, date="2026-01-02 10:00")) == []  # every offer read back unchanged
    offers[BATCH + 7] = offer(BATCH + 7, price=1)
    [edited] = docs(await env.load(catalog(offers, date="2026-01-03 10:00")))
    assert edited.url == f"https://shop.test/p/{BATCH + 7}"
    assert edited.version > first[BATCH + 7].version


async def test_bad_offers_are_refused_the_rest_published(env: Env) -> None:
    offers = [offer(i) for i in range(OFFERS)]
    offers[BATCH + 3] = offer(BATCH + 3, url="https://shop.test/p/10")  # a duplicate, in a later batch
    offers[20] = offer(20, url="")  # no link
    offers[30] = offer(30, url="https://elsewhere.test/p/30")  # another site
    out = docs(await env.load(catalog(offers, tail=False)))  # and the file is cut short
    assert len(out) == OFFERS - 3
    assert "https://shop.test/p/10" in {d.url for d in out}
    result, items, error = await env.status()
    assert (result, items) == ("partial", OFFERS)
    assert error is not None
    assert "not well-formed" in error


async def test_hostile_catalog_is_a_parse_error(env: Env) -> None:
    body = catalog([offer(i) for i in range(OFFERS)], prolog='<!DOCTYPE yml_catalog [<!ENTITY x "boom">]>')
    assert await env.load(body) == []
    result, items, error = await env.status()
    assert (result, items) == ("parse_error", 0)
    assert error is not None
    assert "entit" in error
    assert gc.isenabled()


def test_collector_pause_is_counted_and_restores_what_it_found() -> None:
    assert gc.isenabled()
    outer = collector_paused()
    inner = collector_paused()
    outer.__enter__()
    inner.__enter__()
    assert not gc.isenabled()
    outer.__exit__(None, None, None)  # another load still runs: still paused
    assert not gc.isenabled()
    inner.__exit__(None, None, None)
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # it was off before: left off
    finally:
        gc.enable()
    with pytest.raises(RuntimeError), collector_paused():
        raise RuntimeError("a failed load")
    assert gc.isenabled()


async def test_with_a_runner_a_catalog_goes_out_a_batch_at_a_time_and_a_crash_resumes(env: Env) -> None:
    offers = [offer(i) for i in range(OFFERS)]
    emitted: list[list[str]] = []

    async def broker_down_after_two(outputs: Sequence[Output]) -> int:
        if len(emitted) == 2:
            raise BusUnavailableError("the broker went away")
        emitted.append([d.url for d in docs(list(outputs))])
        return len(outputs)

    with pytest.raises(BusUnavailableError):
        await env.load(catalog(offers), emitter=broker_down_after_two)
    assert [len(b) for b in emitted] == [BATCH, BATCH]  # never the whole catalog at once
    # what the broker acknowledged is recorded as seen at once (not after a commit that never came)
    published = [url for batch in emitted for url in batch]
    assert set(await env.stores.hashes.get_many("feed:shop", published)) == set(published)

    again: list[list[str]] = []

    async def broker_back(outputs: Sequence[Output]) -> int:
        again.append([d.url for d in docs(list(outputs))])
        return len(outputs)

    returned = await env.load(catalog(offers), emitter=broker_back)
    assert docs(returned) == []  # everything went out through emit
    resumed = [url for batch in again for url in batch]
    assert resumed == [f"https://shop.test/p/{i}" for i in range(2 * BATCH, OFFERS)]  # only the rest
    assert await env.status() == ("parsed", OFFERS, None)
    assert await env.load(catalog(offers), emitter=broker_back) == []  # then the body shortcut


async def test_a_load_resumed_after_a_crash_reports_every_offer_its_fetch_published(env: Env) -> None:
    """The crawl result redelivered after a crash mid-load: the resumed attempt finds the first batches
    recorded, and counts them as the fetch's own -- its report must not say that a first load found
    them unchanged. A later fetch of the same body does find them unchanged."""
    offers = [offer(i) for i in range(OFFERS)]
    fetched_at = T0 + timedelta(seconds=1)
    emitted: list[str] = []

    async def broker_down_after_two(outputs: Sequence[Output]) -> int:
        if len(emitted) == 2 * BATCH:
            raise BusUnavailableError("the broker went away")
        emitted.extend(d.url for d in docs(list(outputs)))
        return len(outputs)

    with pytest.raises(BusUnavailableError):
        await env.load(catalog(offers), emitter=broker_down_after_two, fetched_at=fetched_at)
    assert await env.stores.problems.reports("shop") == []  # the crash came before the report

    async def broker_back(outputs: Sequence[Output]) -> int:
        emitted.extend(d.url for d in docs(list(outputs)))
        return len(outputs)

    await env.load(catalog(offers), emitter=broker_back, fetched_at=fetched_at)
    assert sorted(emitted) == sorted(f"https://shop.test/p/{i}" for i in range(OFFERS))  # each offer once
    [report] = await env.stores.problems.reports("shop")
    listings = report.changed - OFFERS  # the category pages (categories.py), published by the last batch
    assert (report.result, report.items, report.unchanged) == ("parsed", OFFERS, 0)
    assert listings == 3

    # a new fetch of a changed catalog (the body shortcut aside): the offers recorded before are unchanged
    await env.load(catalog([*offers, offer(OFFERS)]), emitter=broker_back)
    newest = (await env.stores.problems.reports("shop"))[0]
    # the new offer and its category's listing page; every other offer and listing as before
    assert (newest.items, newest.changed, newest.unchanged) == (OFFERS + 1, 2, OFFERS + listings - 1), newest


async def test_a_gzipped_catalog_streams_and_a_bomb_stops_at_the_limit(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = catalog([offer(i) for i in range(OFFERS)])
    out = docs(await env.load(gzip.compress(body)))
    assert len(out) == OFFERS
    monkeypatch.setattr(parser_handler, "STREAM_LIMIT", 450_000)  # past one batch, short of the whole
    more = catalog([offer(i, price=i + 1) for i in range(OFFERS + 1)])  # every offer changed
    out = docs(await env.load(gzip.compress(more)))
    assert 0 < len(out) < OFFERS + 1  # what came before the limit is kept
    result, _items, error = await env.status()
    assert result == "partial"
    assert error is not None
    assert "inflates past" in error


async def test_a_big_body_that_cannot_be_streamed_is_refused_with_the_reason(env: Env) -> None:
    env.handler.limits = dataclasses.replace(env.handler.limits, max_body_bytes=100_000)
    rss = (
        b'<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>t</title>'
        + b"".join(b"<item><title>t</title><link>https://shop.test/a</link></item>" for _ in range(5000))
        + b"</channel></rss>"
    )
    assert len(rss) > 256 * 1024
    assert await env.load(rss) == []
    result, _items, error = await env.status()
    assert result == "parse_error"
    assert error is not None
    assert "only a YML catalog is read as a stream" in error
