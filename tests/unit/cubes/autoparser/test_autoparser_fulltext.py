"""A feed item's page: a summary item gets its article, a published item is checked against it.

Through the autoparser's handler with the shipped model, on crawl results that carry the feed's
document as the crawler hands them back (``CrawlResult.document``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cubes.autoparser.extract import Extractor
from cubes.autoparser.handler import AutoparserHandler
from shared.blobs.file import FileBlobStore
from shared.clock import ManualClock
from shared.config import AutoparserConfig
from shared.messages import CrawlKind, CrawlResult, Document, FetchStatus, Media, SourceKind, SourceRef
from shared.pages.wordcount import words
from shared.runtime.cube import Context
from shared.stores import Page, Stores, open_stores
from tests.unit.cubes.autoparser.autoparser_pages import PARAGRAPHS, article_page

HOST = "news.example.com"
URL = "https://news.example.com/2024/05/harbour-bridge"
T = datetime(2024, 5, 14, 8, 0, tzinfo=UTC)
CTX = Context(topic="crawl.pages", partition=0, offset=0, key=HOST, attempt=1, received_at=T)
SUMMARY = "The city council voted on Tuesday to rebuild the old harbour bridge. Read more"


def feed_doc(content: str = f"<p>{SUMMARY}</p>") -> Document:
    return Document(
        url=URL,
        host=HOST,
        source=SourceRef(kind=SourceKind.rss, id="f1"),
        title="Bridge: the council says yes",
        published_at=datetime(2024, 5, 14, 6, 0, tzinfo=UTC),
        content_html=content,
        media=[Media(url="https://news.example.com/img/cover.jpg", role="enclosure")],
        content_hash="xxh3:feed",
        version=1_715_670_000_000_001,
        seen_at=T,
        parsed_at=T,
    )


def result(
    doc: Document, requester: str, *, status: FetchStatus = FetchStatus.ok, body: bytes | None = None
) -> CrawlResult:
    ok = status is FetchStatus.ok
    return CrawlResult(
        kind=CrawlKind.page,
        url=URL,
        host=HOST,
        status=status,
        http_status=200 if ok else 404,
        content_type="text/html; charset=utf-8",
        body=(body or article_page().encode()) if ok else None,
        requesters=[f"{requester}:f1"],
        feed_id="f1",
        fetched_at=T,
        document=doc,
    )


@pytest.fixture
async def stores(tmp_path: Path) -> AsyncIterator[Stores]:
    s = await open_stores(f"sqlite:///{tmp_path}/store.db")
    try:
        yield s
    finally:
        await s.close()


@pytest.fixture
def handler(tmp_path: Path, stores: Stores) -> AutoparserHandler:
    blobs = FileBlobStore("file://blobs", tmp_path / "blobs")

    async def get_blobs() -> FileBlobStore:
        return blobs

    return AutoparserHandler(
        AutoparserConfig(),
        Extractor(),
        get_blobs,
        hashes=stores.hashes,
        clock=ManualClock(start=1_715_670_000.0),
        problems=stores.problems,
        pages=stores.pages,
        store=stores.autoparser,
    )


async def _live(stores: Stores, doc: Document) -> None:
    """The page as the kvwriter would store it, so that its problems show."""
    await stores.pages.upsert(Page(url=doc.url, host=doc.host, version=doc.version, title=doc.title, source_kind="rss"))


async def test_a_summary_item_is_published_with_its_pages_article(handler: AutoparserHandler, stores: Stores) -> None:
    doc = feed_doc()
    (out,) = await handler.handle(result(doc, "fulltext"), CTX)
    assert out.topic == "documents.parsed"
    full = out.message
    assert isinstance(full, Document)
    # still the feed's document: its source, title, date, version and images; the page's article
    assert (full.source, full.title, full.published_at, full.version) == (
        doc.source,
        doc.title,
        doc.published_at,
        doc.version,
    )
    assert all(p in full.content_html for p in PARAGRAPHS)
    assert [(m.url, m.role) for m in full.media][:2] == [
        ("https://news.example.com/img/cover.jpg", "enclosure"),
        ("https://news.example.com/img/bridge.jpg", "content"),
    ]
    assert full.extra["full_text"] == "page"
    assert full.summary == SUMMARY
    assert await stores.hashes.owner(URL) is None  # nothing claimed: the feed owns the page
    await _live(stores, full)
    assert await stores.problems.page_problems(host=HOST) == []


async def test_an_unreadable_page_keeps_the_feeds_text_and_says_so(handler: AutoparserHandler, stores: Stores) -> None:
    doc = feed_doc()
    (out,) = await handler.handle(result(doc, "fulltext", status=FetchStatus.http_4xx), CTX)
    assert out.message == doc  # published as the feed has it
    await _live(stores, doc)
    (row,) = await stores.problems.page_problems(host=HOST)
    ((p,),) = [row.problems]
    assert p.code == "page.full_text_unavailable"
    assert "answered 404" in p.message
    assert p.hint  # how to fix it
    assert not row.held


async def test_an_unreadable_pages_message_counts_a_japanese_summarys_words(
    handler: AutoparserHandler, stores: Stores
) -> None:
    summary = "市議会は火曜日、古い港の橋を架け替えることを決めた。工事は来年の春に始まる。"  # 38 characters, no space
    doc = feed_doc(f"<p>{summary}</p>")
    (out,) = await handler.handle(result(doc, "fulltext", status=FetchStatus.http_4xx), CTX)
    assert out.message == doc
    await _live(stores, doc)
    (row,) = await stores.problems.page_problems(host=HOST)
    ((p,),) = [row.problems]
    assert p.code == "page.full_text_unavailable"
    assert p.message.endswith(f"({words(summary)} words).")  # its characters counted, not its spaces
    assert words(summary) > 10


async def test_a_feed_that_carries_the_article_keeps_its_text(handler: AutoparserHandler) -> None:
    doc = feed_doc("".join(f"<p>{p}</p>" for p in PARAGRAPHS))
    (out,) = await handler.handle(result(doc, "fulltext"), CTX)
    assert out.message == doc


async def test_a_page_much_thinner_than_its_original_is_reported(handler: AutoparserHandler, stores: Stores) -> None:
    thin = feed_doc(f"<p>{PARAGRAPHS[0]}</p>")  # one paragraph of five
    assert await handler.handle(result(thin, "parity"), CTX) == []  # published already: nothing more
    await _live(stores, thin)
    (row,) = await stores.problems.page_problems(host=HOST)
    ((p,),) = [row.problems]
    assert p.code == "page.content_mismatch"
    assert p.severity == "error"
    assert "of the text of" in p.message
    share = int(p.message.split("carries ")[1].split("%")[0])
    assert 10 <= share <= 35  # the one paragraph kept of the article's five


async def test_a_complete_page_passes_the_parity_check(handler: AutoparserHandler, stores: Stores) -> None:
    whole = feed_doc("".join(f"<p>{p}</p>" for p in PARAGRAPHS))
    assert await handler.handle(result(whole, "parity"), CTX) == []
    await _live(stores, whole)
    assert await stores.problems.page_problems(host=HOST) == []
