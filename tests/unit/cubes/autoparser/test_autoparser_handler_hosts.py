"""The cube uses what it learns per host: templates, training pairs, calibrations.

All through the real handler on the embedded store: the template is learnt from the pages
the cube reads and changes what it publishes; a page a full-text feed owns becomes a pair;
a host calibration from ``train`` changes how its pages are read; a page that lost its
article is refused with a structured problem.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from cubes.autoparser.extract import Extractor
from cubes.autoparser.handler import MIN_PAIR_WORDS, AutoparserHandler
from cubes.autoparser.templates import HostTemplate
from shared.blobs.file import FileBlobStore
from shared.clock import ManualClock
from shared.config import AutoparserConfig
from shared.messages import SOURCE_PRIORITY, CrawlKind, CrawlResult, Document, FetchStatus, SourceKind
from shared.runtime.cube import Context
from shared.stores import Page, Stores, open_stores
from shared.stores.autoparser import HostCalibration
from tests.unit.cubes.autoparser.hard_pages import JAPANESE, host_pages, japanese_page

HOST = "ledger.example"
CTX = Context(
    topic="crawl.pages", partition=0, offset=0, key=HOST, attempt=1, received_at=datetime(2024, 5, 14, tzinfo=UTC)
)


def skipped(reason: str) -> float:
    return REGISTRY.get_sample_value("turbocubes_autoparser_skipped_total", {"reason": reason}) or 0.0


@pytest.fixture(scope="module")
def extractor() -> Extractor:
    return Extractor()


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[Stores]:
    s = await open_stores(f"sqlite:///{tmp_path}/store.db")
    try:
        yield s
    finally:
        await s.close()


def handler_for(extractor: Extractor, tmp_path: Path, stores: Stores, *, learn: bool = True) -> AutoparserHandler:
    blobs = FileBlobStore("file://blobs", tmp_path / "blobs")

    async def get_blobs() -> FileBlobStore:
        return blobs

    return AutoparserHandler(
        AutoparserConfig(),
        extractor,
        get_blobs,
        hashes=stores.hashes,
        clock=ManualClock(start=1_715_670_000.0),
        store=stores.autoparser if learn else None,
        pages=stores.pages,
    )


def crawled(url: str, html: str) -> CrawlResult:
    return CrawlResult(
        kind=CrawlKind.page,
        url=url,
        host=HOST,
        status=FetchStatus.ok,
        http_status=200,
        content_type="text/html; charset=utf-8",
        body=html.encode(),
        size=len(html),
        fetched_at=datetime(2024, 5, 14, 8, 0, tzinfo=UTC),
    )


async def _publish_all(handler: AutoparserHandler, pages: list[tuple[str, str, list[str]]]) -> list[Document]:
    docs = []
    for url, html, _ in pages:
        for out in await handler.handle(crawled(url, html), CTX):
            assert isinstance(out.message, Document)
            docs.append(out.message)
    return docs


async def test_the_cube_learns_the_host_template_and_it_changes_what_is_published(
    extractor: Extractor, tmp_path: Path, stores: Stores
) -> None:
    pages = host_pages(21)
    appeal, about = "Good local journalism costs money", "The Riverton Ledger is an independent"
    with_template = await _publish_all(handler_for(extractor, tmp_path, stores), pages)
    assert len(with_template) == 21
    stored = await stores.autoparser.get_template(HOST)
    assert stored is not None
    # written after each of the first 20 pages, then every 10: the 21st waits for the next flush
    assert HostTemplate.from_bytes(HOST, stored).pages == 20
    last = with_template[-1]
    assert all(p in last.content_html for p in pages[-1][2])
    assert appeal not in last.content_html
    assert about not in last.content_html

    # the same pages read without the store (no template): the template's prose is published as article
    async with _fresh(tmp_path) as other:
        plain = await _publish_all(handler_for(extractor, tmp_path, other, learn=False), pages)
    assert any(appeal in d.content_html or about in d.content_html for d in plain)


class _fresh:
    def __init__(self, tmp_path: Path) -> None:
        self.url = f"sqlite:///{tmp_path}/other.db"

    async def __aenter__(self) -> Stores:
        self.stores = await open_stores(self.url)
        return self.stores

    async def __aexit__(self, *exc: object) -> None:
        await self.stores.close()


async def test_a_page_a_full_text_feed_owns_becomes_a_training_pair(
    extractor: Extractor, tmp_path: Path, stores: Stores
) -> None:
    url, html, paras = host_pages(1)[0]
    feed_text = "\n".join(paras * 3)  # the feed's full text (the three paragraphs, long enough)
    assert len(feed_text.split()) >= MIN_PAIR_WORDS
    await stores.hashes.claim(url, "feed:ledger", SOURCE_PRIORITY[SourceKind.rss])
    await stores.pages.upsert(Page(url=url, host=HOST, version=1, title="Plans", text=feed_text, source_kind="rss"))
    before = skipped("outranked")
    assert await handler_for(extractor, tmp_path, stores).handle(crawled(url, html), CTX) == []
    assert skipped("outranked") == before + 1
    pairs = await stores.autoparser.pairs(HOST)
    assert [(p.url, p.text, p.html) for p in pairs] == [(url, feed_text, html.encode())]

    # a feed with a summary only is no pair
    url2, html2, _ = host_pages(2)[1]
    await stores.hashes.claim(url2, "feed:ledger", SOURCE_PRIORITY[SourceKind.rss])
    await stores.pages.upsert(Page(url=url2, host=HOST, version=1, text="A short summary.", source_kind="rss"))
    assert await handler_for(extractor, tmp_path, stores).handle(crawled(url2, html2), CTX) == []
    assert await stores.autoparser.pair_hosts() == {HOST: 1}


async def test_a_japanese_full_text_feed_makes_training_pairs_too(
    extractor: Extractor, tmp_path: Path, stores: Stores
) -> None:
    # its 12 paragraphs are 464 characters and no space: "12 words" by spaces, never a pair
    url = f"https://{HOST}/ja/otters"
    feed_text = "\n".join(JAPANESE)
    await stores.hashes.claim(url, "feed:ledger", SOURCE_PRIORITY[SourceKind.rss])
    await stores.pages.upsert(Page(url=url, host=HOST, version=1, title="ja", text=feed_text, source_kind="rss"))
    assert await handler_for(extractor, tmp_path, stores).handle(crawled(url, japanese_page()), CTX) == []
    assert [p.url for p in await stores.autoparser.pairs(HOST)] == [url]


async def test_a_host_calibration_changes_how_its_pages_are_read(
    extractor: Extractor, tmp_path: Path, stores: Stores
) -> None:
    url, html, _ = host_pages(1)[0]
    # a threshold no block reaches: every page of the host comes out empty, its story lost: refused
    await stores.autoparser.put_calibration(HostCalibration(HOST, "threshold", threshold=1.01))
    before = skipped("incomplete")
    assert await handler_for(extractor, tmp_path, stores).handle(crawled(url, html), CTX) == []
    assert skipped("incomplete") == before + 1
    await stores.autoparser.drop_calibration(HOST)
    assert len(await handler_for(extractor, tmp_path, stores).handle(crawled(url, html), CTX)) == 1


async def test_a_refusal_is_a_structured_problem(
    extractor: Extractor, tmp_path: Path, stores: Stores, caplog: pytest.LogCaptureFixture
) -> None:
    url, html, _ = host_pages(1)[0]
    handler = handler_for(extractor, tmp_path, stores)
    handler.config = AutoparserConfig.model_construct(min_completeness=1.01)
    with caplog.at_level(logging.WARNING, logger="cubes.autoparser.handler"):
        assert await handler.handle(crawled(url, html), CTX) == []
    (record,) = [r for r in caplog.records if "refused" in r.getMessage()]
    assert '"code":"autoparser.incomplete"' in record.getMessage()
    assert url in record.getMessage()


async def test_a_refused_page_is_shown_to_its_webmaster_until_it_is_published(
    extractor: Extractor, tmp_path: Path, stores: Stores
) -> None:
    """Refusals were only logged and counted; the host's status now lists them."""
    url, html, _ = host_pages(1)[0]
    handler = handler_for(extractor, tmp_path, stores)
    handler.problems = stores.problems
    handler.config = AutoparserConfig.model_construct(min_completeness=1.01)
    assert await handler.handle(crawled(url, html), CTX) == []
    (row,) = await stores.problems.page_problems(host=HOST)
    assert row.held
    assert row.source_kind == "autoparser"
    ((code, where),) = [(p.code, p.where.link if p.where else None) for p in row.problems]
    assert code == "autoparser.incomplete"
    assert where == url
    # the guard lets it through later: the page is published, and the hold is over
    handler.config = AutoparserConfig()
    handler.clock.advance(60)  # type: ignore[attr-defined]
    (out,) = await handler.handle(crawled(url, html), CTX)
    doc = out.message
    assert isinstance(doc, Document)
    await stores.pages.upsert(Page(url=doc.url, host=doc.host, version=doc.version, title=doc.title))
    assert await stores.problems.page_problems(host=HOST) == []
