"""Extractor: metadata, clean body HTML, images and URLs of one page."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cubes.autoparser.extract import Extractor
from cubes.autoparser.meta import read_meta
from cubes.autoparser.segment import parse_html
from tests.unit.cubes.autoparser.autoparser_pages import PARAGRAPHS, TITLE, article_page


@pytest.fixture(scope="module")
def extractor() -> Extractor:
    return Extractor()


def test_article_extraction(extractor: Extractor) -> None:
    ex = extractor.extract(article_page().encode(), "https://news.example.com/2024/05/harbour-bridge?x=1")
    assert ex.title == TITLE
    # the lead image's caption belongs to the article (as in readability's expected outputs)
    assert ex.text.split("\n") == ["The old bridge at dusk.", *PARAGRAPHS]
    assert ex.is_article
    assert ex.completeness == pytest.approx(1.0)
    assert ex.canonical_url == "https://news.example.com/2024/05/harbour-bridge"
    assert ex.images == ["https://news.example.com/img/bridge.jpg"]
    assert ex.body_html.count("<p>") >= len(PARAGRAPHS)
    assert "<script" not in ex.body_html
    assert ex.published_at == datetime(2024, 5, 14, 7, 30, tzinfo=UTC)


def test_inline_markup_links_and_lists_survive(extractor: Extractor) -> None:
    para = " ".join(PARAGRAPHS[:2])
    html = f"""<html><head><title>{TITLE}</title><base href="https://cdn.example.com/base/"></head><body>
    <article><h1>{TITLE}</h1><p>{para} See <a href="more/info.html">the <b>details</b></a>.</p>
    <p>{PARAGRAPHS[2]} <a href="javascript:alert(1)">click</a></p>
    <ul><li>{PARAGRAPHS[3]}</li><li>{PARAGRAPHS[4]}</li></ul></article></body></html>"""
    ex = extractor.extract(html, "https://news.example.com/a")
    assert '<a href="https://cdn.example.com/base/more/info.html">the <b>details</b></a>' in ex.body_html
    assert "javascript:" not in ex.body_html
    assert "<ul>\n<li>" in ex.body_html
    assert "</li>\n</ul>" in ex.body_html


def test_json_ld_date_in_cdata_and_empty_page(extractor: Extractor) -> None:
    html = """<html><head><script type="application/ld+json"><![CDATA[
      {"@context": "https://schema.org", "@graph": [{"@type": "NewsArticle", "headline": "H",
       "datePublished": "2020-02-03T04:05:06Z"}]} ]]></script></head><body></body></html>"""
    meta = read_meta(parse_html(html), "https://x.example/")
    assert meta.published_at == datetime(2020, 2, 3, 4, 5, 6, tzinfo=UTC)
    assert meta.declared_article
    ex = extractor.extract(html, "https://x.example/")
    assert ex.text == ""
    assert not ex.is_article
