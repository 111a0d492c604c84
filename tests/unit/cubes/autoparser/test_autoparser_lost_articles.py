"""Every kind of lost article the completeness guard and the cube missed, each caught now.

The guard is tested on kept-block masks of hand-written pages (no model): an article that is
mostly a data table, an article that is a list, a Japanese article, a complete text whose
images were lost. The cube is tested through its handler with the shipped model: a Japanese
article is published, a story in one ``<div>`` the extraction lost is refused with a problem
(it was skipped as "empty", silently), and a listing is reported as not an article.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from cubes.autoparser.completeness import assess
from cubes.autoparser.extract import Extractor
from cubes.autoparser.handler import AutoparserHandler
from cubes.autoparser.meta import read_meta
from cubes.autoparser.page import Page
from cubes.autoparser.segment import parse_html, segment, segment_tree
from shared.blobs.file import FileBlobStore
from shared.clock import ManualClock
from shared.config import AutoparserConfig
from shared.messages import CrawlKind, CrawlResult, Document, FetchStatus
from shared.runtime.cube import Context
from shared.stores import Stores, open_stores
from shared.stores.autoparser import HostCalibration
from tests.unit.cubes.autoparser.autoparser_pages import listing_page
from tests.unit.cubes.autoparser.hard_pages import (
    JAPANESE,
    JAPANESE_TITLE,
    LIST_ITEMS,
    TABLE_TEXT,
    div_story_page,
    japanese_page,
    list_article_page,
)

MIN = AutoparserConfig().min_completeness
HOST = "town.example"
CTX = Context(
    topic="crawl.pages", partition=0, offset=0, key=HOST, attempt=1, received_at=datetime(2024, 5, 14, tzinfo=UTC)
)


def _page(html: str) -> tuple[Page, str, str]:
    root = parse_html(html)
    meta = read_meta(root, f"https://{HOST}/a")
    return segment_tree(root), meta.article_body, meta.description


def _score(html: str, keep: set[str]) -> float:
    page, body, desc = _page(html)
    kept = np.array([t in keep for t in page.texts])
    return assess(page, kept, 0, article_body=body, description=desc).score


def results_page() -> str:
    """An article that is mostly a data table: a lead, then 40 rows of results."""
    rows = "".join(
        f"<tr><td>{i}</td><td>Runner {i:02d}</td><td>Club {i % 7}</td><td>2:{31 + i // 2}:{i % 60:02d}</td></tr>"
        for i in range(1, 41)
    )
    return (
        "<!doctype html><html><head><title>Marathon results</title></head><body>"
        "<nav class='menu'><a href='/'>Home</a> <a href='/sport'>Sport</a></nav>"
        f"<article><h1>Marathon results</h1><p>{TABLE_TEXT[0]}</p>"
        f"<table><tr><th>Place</th><th>Name</th><th>Club</th><th>Time</th></tr>{rows}</table></article>"
        "<aside class='sidebar'><p>Most read: the new bridge, the harbour festival and the river otters "
        "are back, with photos and a video from the volunteers.</p></aside></body></html>"
    )


def test_an_article_that_is_a_data_table_is_refused_when_its_cells_are_lost() -> None:
    html = results_page()
    assert _score(html, {TABLE_TEXT[0]}) < MIN  # the lead kept, every cell lost (scored 1.00 before)
    page, _, _ = _page(html)
    assert _score(html, set(page.texts) - {"Marathon results"}) == 1.0


def test_an_article_that_is_a_list_is_refused_when_its_items_are_lost() -> None:
    html = list_article_page()
    assert _score(html, {"Our guide's list."}) < MIN
    assert _score(html, {"Our guide's list.", *LIST_ITEMS}) == 1.0


def test_a_menu_is_no_article_text() -> None:
    # the page's menu is a list too, of links: losing it loses nothing
    html = list_article_page()
    assert _score(html, {"Our guide's list.", *LIST_ITEMS}) == 1.0


def test_a_japanese_article_is_measured_by_its_characters() -> None:
    html = japanese_page()
    assert _score(html, set(JAPANESE[:3])) < MIN  # its paragraphs are 30-45 characters: none counted before
    assert _score(html, set(JAPANESE)) == 1.0


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


def _handler(extractor: Extractor, tmp_path: Path, stores: Stores) -> AutoparserHandler:
    blobs = FileBlobStore("file://blobs", tmp_path / "blobs")

    async def get_blobs() -> FileBlobStore:
        return blobs

    return AutoparserHandler(
        AutoparserConfig(),
        extractor,
        get_blobs,
        hashes=stores.hashes,
        clock=ManualClock(start=1_715_670_000.0),
        store=stores.autoparser,
        pages=stores.pages,
        problems=stores.problems,
    )


def _crawled(url: str, html: str) -> CrawlResult:
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


async def test_a_japanese_article_is_published(extractor: Extractor, tmp_path: Path, stores: Stores) -> None:
    # 12 paragraphs of Japanese were "18 words" (spaces + 1), under the article line: never published
    (out,) = await _handler(extractor, tmp_path, stores).handle(_crawled(f"https://{HOST}/ja", japanese_page()), CTX)
    doc = out.message
    assert isinstance(doc, Document)
    assert doc.title == JAPANESE_TITLE
    assert all(p in doc.content_html for p in JAPANESE)
    assert await stores.problems.page_problems(host=HOST) == []


async def test_a_story_the_extraction_lost_is_refused_with_a_problem(
    extractor: Extractor, tmp_path: Path, stores: Stores
) -> None:
    # a calibration no block reaches: the story in one <div> comes out empty, as the lost page did;
    # it was skipped as "empty" with no word to the webmaster
    await stores.autoparser.put_calibration(HostCalibration(HOST, "threshold", threshold=1.01))
    url = f"https://{HOST}/story"
    assert await _handler(extractor, tmp_path, stores).handle(_crawled(url, div_story_page()), CTX) == []
    (row,) = await stores.problems.page_problems(host=HOST)
    assert row.held
    ((p,),) = [row.problems]
    assert p.code == "autoparser.incomplete"
    assert "lost 100% of the" in p.message


async def test_a_page_that_is_not_an_article_is_reported_with_its_reason(
    extractor: Extractor, tmp_path: Path, stores: Stores
) -> None:
    url = f"https://{HOST}/news/"
    assert await _handler(extractor, tmp_path, stores).handle(_crawled(url, listing_page()), CTX) == []
    (row,) = await stores.problems.page_problems(host=HOST)
    assert row.held
    ((p,),) = [row.problems]
    assert p.code == "autoparser.not_article"
    assert p.where is not None
    assert p.where.link == url
    assert "words of article text" in p.message or "links" in p.message


def test_a_page_converted_to_utf8_that_kept_its_old_declaration_is_read() -> None:
    # a Chinese story served as UTF-8 under <meta charset=gb2312> came out with no text at all
    story = "谷歌在2014年收购的人工智能公司开发出一款能够用自己的记忆学习新知识的计算机。"
    html = (
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=gb2312">'
        f"<title>新闻</title></head><body><p>{story}</p></body></html>"
    ).encode()
    page, _, _ = _page(html.decode())  # as text: the declaration does not matter
    assert page.texts == [story]
    assert segment(html).texts == [story]  # as bytes: UTF-8 wins over the declaration
