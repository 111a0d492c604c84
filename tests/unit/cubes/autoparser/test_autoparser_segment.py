"""Segmentation of hand-written pages into text blocks."""

from __future__ import annotations

import numpy as np

from cubes.autoparser.features import FEATURE_NAMES, page_features
from cubes.autoparser.segment import segment
from tests.unit.cubes.autoparser.autoparser_pages import article_page


def test_blocks_follow_document_order_and_own_only_their_direct_text() -> None:
    page = segment(
        "<html><body><div>intro <b>bold</b> text<p>first <a href='/x'>link</a> para</p>tail of div"
        "<ul><li>one</li><li>two</li></ul></div><h2>Heading</h2></body></html>"
    )
    assert page.texts == ["intro bold text tail of div", "first link para", "one", "two", "Heading"]
    assert page.tags == ["div", "p", "li", "li", "h2"]
    assert page.link_chars[1] == len("link")
    # nested blocks are deeper than their container
    assert page.depth[1] > page.depth[0]


def test_invisible_parts_are_dropped() -> None:
    page = segment(
        "<html><head><title>T</title><style>.a{}</style></head><body><script>var x=1;</script>"
        "<noscript>enable js</noscript><template><p>tpl</p></template><svg><text>svg</text></svg>"
        "<p hidden>hidden attr</p><p aria-hidden='true'>aria</p><p style='display: none'>styled</p>"
        "<p>visible</p></body></html>"
    )
    assert page.texts == ["visible"]
    assert page.html_title == "T"


def test_images_are_recorded_with_their_block() -> None:
    page = segment("<html><body><p>text <img src='/a.png' width='300'> more</p><img src='/b.png'></body></html>")
    assert [i.src for i in page.images] == ["/a.png", "/b.png"]
    assert page.images[0].width == 300
    assert page.texts[page.images[0].block] == "text more"
    assert page.n_images[0] == 1


def test_encodings() -> None:
    assert segment("<html><body><p>Zázrak jedné sezony</p></body></html>".encode()).texts == ["Zázrak jedné sezony"]
    cp1251 = '<html><head><meta charset="windows-1251"></head><body><p>Привет мир</p></body></html>'
    assert segment(cp1251.encode("cp1251")).texts == ["Привет мир"]
    # declared latin-1 but served as UTF-8 (common): the bytes win
    mislabelled = '<html><head><meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">'
    assert segment((mislabelled + "<p>Zürich</p></html>").encode()).texts == ["Zürich"]
    assert segment((mislabelled + "<p>Zürich</p></html>").encode("latin-1")).texts == ["Zürich"]
    # the HTTP charset comes first
    assert segment("<p>Zürich</p>".encode("latin-1"), encoding="ISO-8859-1").texts == ["Zürich"]


def test_feature_matrix_shape_and_hints() -> None:
    page = segment(article_page())
    x = page_features(page)
    assert x.shape == (page.n, len(FEATURE_NAMES))
    assert np.isfinite(x).all()
    col = FEATURE_NAMES.index("ctx_article")
    h1 = page.tags.index("h1")
    assert x[h1, col] == 1.0  # the h1 sits inside <article>
    nav_col = FEATURE_NAMES.index("anc_nav")
    menu = page.texts.index("Section 3")
    assert x[menu, nav_col] >= 1.0
    assert "hidden tracking text" not in page.texts
