"""The autoparser handler: a crawled page becomes a Document; robots-denied images mark the host."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from prometheus_client import REGISTRY

from cubes.autoparser.extract import Extractor
from cubes.autoparser.handler import AutoparserHandler
from cubes.autoparser.hosts import HostMarker
from shared.blobs.file import FileBlobStore
from shared.clock import ManualClock
from shared.config import AutoparserConfig
from shared.errors import Reject
from shared.hashing import content_hash
from shared.messages import (
    CrawlKind,
    CrawlResult,
    Document,
    DocumentDeleted,
    FetchStatus,
    MediaCached,
    MediaStatus,
    SourceKind,
)
from shared.runtime.cube import Context
from shared.stores import Feed, Stores, open_stores
from tests.unit.cubes.autoparser.autoparser_pages import PARAGRAPHS, TITLE, article_page, listing_page


def skipped(reason: str) -> float:
    return REGISTRY.get_sample_value("turbocubes_autoparser_skipped_total", {"reason": reason}) or 0.0


CTX = Context(
    topic="crawl.pages",
    partition=0,
    offset=0,
    key="news.example.com",
    attempt=1,
    received_at=datetime(2024, 5, 14, tzinfo=UTC),
)
FETCHED = datetime(2024, 5, 14, 8, 0, tzinfo=UTC)


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


def crawled(
    body: bytes | None,
    *,
    url: str = "https://news.example.com/2024/05/harbour-bridge?utm=x",
    body_ref: str | None = None,
    status: FetchStatus = FetchStatus.ok,
) -> CrawlResult:
    return CrawlResult(
        kind=CrawlKind.page,
        url=url,
        host="news.example.com",
        status=status,
        http_status=200,
        content_type="text/html; charset=utf-8",
        body=body,
        body_ref=body_ref,
        size=len(body or b""),
        fetched_at=FETCHED,
    )


def make_handler(extractor: Extractor, tmp_path: Path, stores: Stores | None = None) -> AutoparserHandler:
    blobs = FileBlobStore("file://blobs", tmp_path / "blobs")

    async def get_blobs() -> FileBlobStore:
        return blobs

    clock = ManualClock(start=1_715_670_000.0)
    return AutoparserHandler(
        AutoparserConfig(),
        extractor,
        get_blobs,
        hashes=stores.hashes if stores else None,
        hosts=HostMarker(stores.feeds, clock) if stores else None,
        clock=clock,
        store=stores.autoparser if stores else None,
        pages=stores.pages if stores else None,
    )


async def test_crawled_page_becomes_a_document(extractor: Extractor, tmp_path: Path, stores: Stores) -> None:
    handler = make_handler(extractor, tmp_path, stores)
    out = await handler.handle(crawled(article_page().encode()), CTX)
    assert len(out) == 1
    assert out[0].topic == "documents.parsed"
    doc = out[0].message
    assert isinstance(doc, Document)
    assert doc.title == TITLE
    assert doc.url == "https://news.example.com/2024/05/harbour-bridge"  # from <link rel=canonical>
    assert out[0].key == doc.url
    assert doc.source.kind == SourceKind.autoparser
    assert doc.source.id == "news.example.com"
    for p in PARAGRAPHS:
        assert p in doc.content_html
    for noise in ("Section 3", "Copyright 2024", "Another story", "do not read me", "hidden tracking"):
        assert noise not in doc.content_html
    assert [m.url for m in doc.media] == ["https://news.example.com/img/bridge.jpg"]
    assert '<img src="https://news.example.com/img/bridge.jpg">' in doc.content_html
    assert doc.published_at == datetime(2024, 5, 14, 7, 30, tzinfo=UTC)
    assert doc.seen_at == FETCHED
    assert doc.version >= 1_715_670_000_000_000
    text = "\n".join(PARAGRAPHS)
    assert doc.content_hash.startswith("xxh3:")  # the one format
    assert len(doc.content_hash) == 37
    assert doc.content_hash != content_hash([TITLE, ""])
    assert text.split()[0] in doc.content_html

    # the same page again: unchanged, not republished
    again = await handler.handle(crawled(article_page().encode()), CTX)
    assert again == []


async def test_body_from_the_blob_store(extractor: Extractor, tmp_path: Path) -> None:
    handler = make_handler(extractor, tmp_path)
    blobs = FileBlobStore("file://blobs", tmp_path / "blobs")
    await blobs.put("pages/abc.html", article_page().encode())
    out = await handler.handle(crawled(None, body_ref="pages/abc.html"), CTX)
    assert len(out) == 1
    assert isinstance(out[0].message, Document)
    assert out[0].message.title == TITLE
    with pytest.raises(Reject, match="gone"):
        await handler.handle(crawled(None, body_ref="pages/missing.html"), CTX)


async def test_canonical_on_another_host_is_ignored(extractor: Extractor, tmp_path: Path) -> None:
    handler = make_handler(extractor, tmp_path)
    page = article_page(canonical="https://evil.example.org/hijack").encode()
    out = await handler.handle(crawled(page), CTX)
    assert out[0].message.url == "https://news.example.com/2024/05/harbour-bridge?utm=x"  # type: ignore[attr-defined]


async def test_a_redirect_off_the_host_keeps_the_requested_url(extractor: Extractor, tmp_path: Path) -> None:
    """A host's page redirecting to another site's must not publish under that site's URL (shared.webmaster.hosts)."""
    handler = make_handler(extractor, tmp_path)
    page = article_page(canonical="https://www.victim.example/story/1").encode()
    res = crawled(page).model_copy(update={"final_url": "https://www.victim.example/story/1"})
    [out] = await handler.handle(res, CTX)
    assert out.message.url == "https://news.example.com/2024/05/harbour-bridge?utm=x"  # type: ignore[attr-defined]
    assert out.message.host == "news.example.com"  # type: ignore[attr-defined]


async def test_listing_and_failed_fetches_are_skipped_with_a_reason(extractor: Extractor, tmp_path: Path) -> None:
    handler = make_handler(extractor, tmp_path)
    before = skipped("not_article")
    assert await handler.handle(crawled(listing_page().encode()), CTX) == []
    assert skipped("not_article") == before + 1
    before = skipped("fetch_http_4xx")
    assert await handler.handle(crawled(None, status=FetchStatus.http_4xx), CTX) == []
    assert skipped("fetch_http_4xx") == before + 1


async def test_incomplete_extraction_is_refused(extractor: Extractor, tmp_path: Path) -> None:
    handler = make_handler(extractor, tmp_path)
    handler.config = AutoparserConfig.model_construct(min_completeness=1.01)  # nothing can be this complete
    before = skipped("incomplete")
    assert await handler.handle(crawled(article_page().encode()), CTX) == []
    assert skipped("incomplete") == before + 1


async def test_robots_denied_images_mark_the_host_unavailable(
    extractor: Extractor, tmp_path: Path, stores: Stores
) -> None:
    await stores.feeds.upsert_feed(
        Feed(feed_id="f1", url="https://news.example.com/rss", host="news.example.com", format="rss", autoparser=True)
    )
    await stores.feeds.upsert_feed(
        Feed(feed_id="f2", url="https://other.example.org/rss", host="other.example.org", format="rss", autoparser=True)
    )
    handler = make_handler(extractor, tmp_path, stores)
    denied = MediaCached(
        url="https://img.example.com/a.jpg", status=MediaStatus.failed, reason="robots_denied", cached_at=FETCHED
    )
    assert await handler.handle(denied, CTX) == []
    f1, f2 = await stores.feeds.get("f1"), await stores.feeds.get("f2")
    assert f1 is not None
    assert f2 is not None
    assert f1.status.autoparser_unavailable_reason == "robots.txt forbids fetching the host's images"
    assert f2.status.autoparser_unavailable_reason is None
    # and the host's pages are skipped from now on
    before = skipped("host_unavailable")
    assert await handler.handle(crawled(article_page().encode()), CTX) == []
    assert skipped("host_unavailable") == before + 1
    # a fresh handler (another process) learns it from the store
    fresh = make_handler(extractor, tmp_path, stores)
    assert await fresh.handle(crawled(article_page().encode()), CTX) == []


async def test_big_page_is_read_in_a_worker_thread(extractor: Extractor, tmp_path: Path) -> None:
    handler = make_handler(extractor, tmp_path)
    padding = "<div style='display:none'>" + "x " * 400_000 + "</div>"
    body = article_page().replace("</body>", padding + "</body>").encode()
    assert len(body) > 512 * 1024
    out = await handler.handle(crawled(body), CTX)
    assert isinstance(out[0].message, Document)
    assert isinstance(out[0].message, Document)
    assert out[0].message.title == TITLE


async def test_discovery_fetches_are_skipped_but_shared_fetches_are_read(extractor: Extractor, tmp_path: Path) -> None:
    handler = make_handler(extractor, tmp_path)
    page = article_page().encode()
    before = skipped("discovery")
    # the scheduler's own fetch of a home page / sitemap: not a page for the autoparser
    alone = crawled(page).model_copy(update={"requesters": ["discover:news.example.com"]})
    assert await handler.handle(alone, CTX) == []
    assert skipped("discovery") == before + 1
    # the same URL also asked for by the autoparser (coalesced in the crawler): read as usual
    both = crawled(page).model_copy(update={"requesters": ["discover:news.example.com", "autoparser:news.example.com"]})
    out = await handler.handle(both, CTX)
    assert [o.topic for o in out] == ["documents.parsed"]
    assert skipped("discovery") == before + 1


@pytest.mark.parametrize("code", [404, 410])
async def test_a_page_that_is_gone_loses_its_turbo_page(
    extractor: Extractor, tmp_path: Path, stores: Stores, code: int
) -> None:
    """An autoparser page whose source answers 404 or 410 is removed (it stayed forever)."""
    handler = make_handler(extractor, tmp_path, stores)
    url = "https://news.example.com/2024/05/harbour-bridge"
    [published] = await handler.handle(crawled(article_page().encode(), url=url), CTX)
    gone = crawled(None, url=url, status=FetchStatus.http_4xx).model_copy(update={"http_status": code})
    [out] = await handler.handle(gone, CTX)
    assert out.topic == "documents.deleted"
    assert out.key == url
    tomb = out.message
    assert isinstance(tomb, DocumentDeleted)
    assert tomb.url == url
    assert tomb.reason == f"the page answered HTTP {code}"
    assert tomb.version > published.message.version  # type: ignore[attr-defined]
    assert await stores.hashes.owner(url) is None  # free for a feed to publish
    assert await handler.handle(gone, CTX) == []  # removed once
    other = crawled(None, url="https://news.example.com/never-published", status=FetchStatus.http_4xx)
    assert await handler.handle(other.model_copy(update={"http_status": 404}), CTX) == []
