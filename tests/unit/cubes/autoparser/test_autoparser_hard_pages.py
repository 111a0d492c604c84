"""The shipped model on the kinds of page it used to fail on, one hand-written page each.

These pin what the features were added for: a regression in the model or the features
that brings a failure back fails here.
"""

from __future__ import annotations

from html import escape

import pytest

from cubes.autoparser import extract_article
from cubes.autoparser.extract import Extractor
from cubes.autoparser.metrics import shingle_counts, shingle_prf
from cubes.autoparser.segment import segment
from cubes.autoparser.templates import HostTemplate
from tests.unit.cubes.autoparser.hard_pages import (
    ARTICLE,
    BYLINE,
    CAPTION,
    COMMENT_POLICY,
    COMMENTS,
    POST,
    STANDFIRSTS,
    TABLE_ROWS,
    TABLE_TEXT,
    TEASERS,
    byline_merged_page,
    caption_page,
    comment_thread_page,
    host_pages,
    table_page,
    teaser_page,
)

URL = "https://town.example/2024/06/story"


@pytest.fixture(scope="module")
def extractor() -> Extractor:
    return Extractor()


def test_a_short_post_under_a_comment_thread_keeps_the_post_and_drops_the_comments(extractor: Extractor) -> None:
    ex = extractor.extract(comment_thread_page(), URL)
    assert ex.text.split("\n")[:2] == POST
    assert not [c for c in COMMENTS if c in ex.text]  # none of the 30 comments, nor their headers
    assert not [line for line in ex.text.split("\n") if line.startswith(("Reader ", "Reply"))]
    # the comment policy above the thread is the host's template: learnt from the host's pages
    # it goes (test_a_comment_policy_is_the_hosts_template); a single page keeps it
    assert ex.completeness == 1.0


def test_teaser_lists_around_the_article_are_dropped(extractor: Extractor) -> None:
    ex = extractor.extract(teaser_page(), URL)
    assert ex.text.split("\n") == ARTICLE
    assert not [t for t in TEASERS + STANDFIRSTS if t in ex.text]


def test_a_caption_printed_three_times_comes_out_once(extractor: Extractor) -> None:
    ex = extractor.extract(caption_page(), URL)
    assert ex.text.count(CAPTION) == 1
    assert all(p in ex.text for p in ARTICLE)


def test_a_story_merged_with_its_byline_is_not_lost(extractor: Extractor) -> None:
    ex = extractor.extract(byline_merged_page(), URL)
    lines = [line for line in ex.text.split("\n") if line != BYLINE]
    assert lines[: len(ARTICLE)] == ARTICLE  # the story, paragraph by paragraph, apart from its byline
    assert ex.body_html.count("<p>") >= len(ARTICLE)
    assert ex.completeness == 1.0


def test_a_results_table_is_kept_as_a_table(extractor: Extractor) -> None:
    ex = extractor.extract(table_page(), URL)
    lines = ex.text.split("\n")
    assert all(t in lines for t in TABLE_TEXT)
    assert all(cell in lines for row in TABLE_ROWS for cell in row)
    assert ex.body_html.count("<table>") == 1
    assert "<tr><td>1</td><td>Ana Lopes</td><td>Riverton AC</td><td>2:31:07</td></tr>" in ex.body_html
    # in place: after the second paragraph, before the third
    html = ex.body_html
    assert html.index(escape(TABLE_TEXT[1])) < html.index("<table>") < html.index(escape(TABLE_TEXT[2]))


def test_a_host_template_beats_extraction_without_it(extractor: Extractor) -> None:
    """20 pages of one host whose template holds article-like prose: with the template, F1 goes up."""
    pages = host_pages(20)
    with_t, without_t = [], []
    for i, (url, html, paras) in enumerate(pages):
        template = HostTemplate("ledger.example")
        for j, (u, h, _) in enumerate(pages):
            if j != i:  # learnt from the host's other pages, as the cube learns from what it crawled
                template.learn(segment(h), u)
        truth = "\n".join(paras)
        without_t.append(shingle_counts(extractor.extract(html, url).text, truth))
        with_t.append(shingle_counts(extractor.extract(html, url, template=template).text, truth))
    before, after = shingle_prf(without_t), shingle_prf(with_t)
    assert after.f1 > before.f1
    assert after.precision == pytest.approx(1.0)
    assert after.recall == pytest.approx(1.0)


def test_a_comment_policy_is_the_hosts_template(extractor: Extractor) -> None:
    """The policy line repeats on every page of the host: the template filter takes it out."""
    template = HostTemplate("town.example")
    for i in range(1, 6):  # five other posts of the host, each with its own text, readers and comments
        template.learn(segment(comment_thread_page(i)), f"https://town.example/post/{i}")
    ex = extractor.extract(comment_thread_page(), URL, template=template)
    assert COMMENT_POLICY not in ex.text
    assert ex.text.split("\n")[:2] == POST


def test_extract_article_is_the_library_entry_point() -> None:
    text = extract_article(teaser_page(), "https://town.example/a")
    assert text.split("\n") == ARTICLE
    assert extract_article("<html><body></body></html>") == ""
    with pytest.raises(TypeError, match="str"):
        extract_article(b"<html></html>")  # type: ignore[arg-type]
