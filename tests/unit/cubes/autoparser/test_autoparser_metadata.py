"""An autoparsed page keeps its metadata: author, dates, language, cover, image alt, captions.

Each was lost once: the source had ``<time datetime>`` and the document got ``published_at:
None``; ``lang``, the author and the images' ``alt`` were dropped; a caption was moved out of its
figure. Through the real handler with the shipped model.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from cubes.autoparser.extract import Extractor
from cubes.autoparser.handler import AutoparserHandler
from cubes.autoparser.meta import read_meta, undeclared_date
from cubes.autoparser.segment import parse_html
from shared.blobs.file import FileBlobStore
from shared.clock import ManualClock
from shared.config import AutoparserConfig
from shared.messages import CrawlKind, CrawlResult, Document, FetchStatus
from shared.runtime.cube import Context
from tests.unit.cubes.autoparser.autoparser_pages import PARAGRAPHS, TITLE

HOST = "news.example.com"
CTX = Context(
    topic="crawl.pages", partition=0, offset=0, key=HOST, attempt=1, received_at=datetime(2024, 5, 14, tzinfo=UTC)
)


def page(*, head: str = "", lang: str = ' lang="en-GB"', time: str = "") -> str:
    paras = "".join(f"<p>{p}</p>" for p in PARAGRAPHS)
    nav = "".join(f'<li><a href="/section/{i}">Section {i}</a></li>' for i in range(10))
    return (
        f'<!doctype html><html{lang}><head><meta charset="utf-8"><title>{TITLE} | Example News</title>{head}</head>'
        f"<body><nav class='menu'><ul>{nav}</ul></nav><article><h1>{TITLE}</h1>{time}"
        f"<p>{PARAGRAPHS[0]}</p>"
        '<figure><img src="/img/bridge.jpg" alt="The bridge at dusk, seen from the river" width="800">'
        "<figcaption>The old bridge at dusk. Photo: Ann Writer</figcaption></figure>"
        f"{paras[len(PARAGRAPHS[0]) + 7 :]}</article>"
        "<footer class='site-footer'><p>Copyright 2024 Example News.</p></footer></body></html>"
    )


def _handler(tmp_path: Path) -> AutoparserHandler:
    blobs = FileBlobStore("file://blobs", tmp_path / "blobs")

    async def get_blobs() -> FileBlobStore:
        return blobs

    return AutoparserHandler(
        AutoparserConfig(),
        Extractor(),
        get_blobs,
        clock=ManualClock(start=1_715_670_000.0),
    )


def _crawled(html: str, url: str = f"https://{HOST}/news/harbour-bridge") -> CrawlResult:
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


async def _doc(tmp_path: Path, html: str, **kw: str) -> Document:
    (out,) = await _handler(tmp_path).handle(_crawled(html, **kw), CTX)
    assert isinstance(out.message, Document)
    return out.message


async def test_author_dates_language_and_cover_are_kept(tmp_path: Path) -> None:
    ld = json.dumps(
        {
            "@context": "https://schema.org",
            "@type": "NewsArticle",
            "author": [{"@type": "Person", "name": "Ann Writer"}],
            "dateModified": "2024-05-15T10:00:00Z",
        }
    )
    head = f'<script type="application/ld+json">{ld}</script><meta property="og:image" content="/img/cover.jpg">'
    time = '<time datetime="2024-05-14T07:30:00Z" pubdate>14 May</time>'
    doc = await _doc(tmp_path, page(head=head, time=time))
    assert doc.author == "Ann Writer"
    assert doc.published_at == datetime(2024, 5, 14, 7, 30, tzinfo=UTC)  # from <time>: None before
    assert doc.updated_at == datetime(2024, 5, 15, 10, 0, tzinfo=UTC)
    assert doc.extra["language"] == "en-GB"
    assert (doc.media[0].url, doc.media[0].role) == (f"https://{HOST}/img/cover.jpg", "cover")


async def test_image_alt_and_caption_stay_in_their_figure(tmp_path: Path) -> None:
    doc = await _doc(tmp_path, page())
    assert (
        f'<figure><img src="https://{HOST}/img/bridge.jpg" alt="The bridge at dusk, seen from the river">'
        "<figcaption>The old bridge at dusk. Photo: Ann Writer</figcaption></figure>"
    ) in doc.content_html
    assert doc.content_html.count("The old bridge at dusk. Photo") == 1  # not again outside the figure


def test_the_author_is_read_from_meta_tags_and_markup() -> None:
    meta = read_meta(parse_html(page(head='<meta name="author" content="By Tom Reed">')), "")
    assert meta.author == "Tom Reed"
    meta = read_meta(parse_html(page(head='<meta name="author" content="https://x.example/tom">')), "")
    assert meta.author == ""  # a URL is no name
    marked = page(time='<span class="byline">by <a rel="author" href="/tom">Tom Reed</a></span>')
    assert read_meta(parse_html(marked), "").author == "Tom Reed"


def test_the_language_comes_from_the_page_then_its_meta_tags() -> None:
    assert read_meta(parse_html(page(lang="", head='<meta property="og:locale" content="de_DE">')), "").lang == "de_DE"
    assert (
        read_meta(parse_html(page(lang=' lang="ru"', head='<meta property="og:locale" content="en_US">')), "").lang
        == "ru"
    )


async def test_a_page_that_declares_no_date_gets_htmldate_s(tmp_path: Path) -> None:
    html = page().replace(f"<h1>{TITLE}</h1>", f"<h1>{TITLE}</h1><p class='date'>Published 14 May 2024</p>")
    assert read_meta(parse_html(html), "").published_at is None
    assert undeclared_date(html) == datetime(2024, 5, 14, tzinfo=UTC)
    doc = await _doc(tmp_path, html)
    assert doc.published_at == datetime(2024, 5, 14, tzinfo=UTC)
