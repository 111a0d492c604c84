"""The completeness guard (issue 17): it refuses extractions that lost the article, and no good one.

The losses are the issue's: a post replaced by its comment thread, a story lost with only the
footer address left, a story the page declares in JSON-LD, a lead shown in og:description, the
article's images. Each is a kept-block mask on a hand-written page, so the guard is tested
apart from any model; ``test_the_shipped_model_passes_the_guard`` runs the real extraction.
"""

from __future__ import annotations

import numpy as np
import pytest

from cubes.autoparser.completeness import assess
from cubes.autoparser.extract import Extractor
from cubes.autoparser.meta import read_meta
from cubes.autoparser.segment import Page, parse_html, segment_tree
from tests.unit.cubes.autoparser.issue17_pages import (
    ARTICLE,
    COMMENTS,
    POST,
    POST_TITLE,
    byline_merged_page,
    caption_page,
    comment_thread_page,
    declared_article_page,
    table_page,
    teaser_page,
)

MIN = 0.6  # autoparser.min_completeness


def _page(html: str) -> tuple[Page, str, str]:
    root = parse_html(html)
    meta = read_meta(root, "https://town.example/a")
    return segment_tree(root), meta.article_body, meta.description


def _mask(page: Page, keep: set[str]) -> np.ndarray:
    return np.array([t in keep for t in page.texts])


def test_comments_instead_of_the_post_are_refused() -> None:
    page, body, desc = _page(comment_thread_page())
    lost = assess(page, _mask(page, set(COMMENTS)), 0, article_body=body, description=desc)
    assert lost.score < MIN
    assert lost.region == "article"
    assert "lost 100% of the article text" in lost.reason
    good = assess(page, _mask(page, {POST_TITLE, *POST}), 0, article_body=body, description=desc)
    assert good.score == 1.0
    assert good.reason == ""


def test_a_story_lost_but_for_the_footer_is_refused() -> None:
    page, body, desc = _page(byline_merged_page())
    footer = {t for t in page.texts if t.startswith("Town Journal, 12 Market Square")}
    lost = assess(page, _mask(page, footer), 0, article_body=body, description=desc)
    assert lost.score < MIN
    assert lost.region in ("cluster", "outside-boilerplate")
    good = assess(page, _mask(page, set(ARTICLE)), 0, article_body=body, description=desc)
    assert good.score == 1.0


def test_the_declared_article_body_decides() -> None:
    page, body, desc = _page(declared_article_page())
    assert body
    assert desc
    half = assess(page, _mask(page, set(ARTICLE[:1])), 0, article_body=body, description=desc)
    assert half.region == "articleBody"
    assert half.score < MIN
    assert assess(page, _mask(page, set(ARTICLE)), 0, article_body=body, description=desc).score == 1.0


def test_a_lead_shown_in_og_description_and_dropped_lowers_the_score() -> None:
    html = teaser_page().replace("<title>", f'<meta property="og:description" content="{ARTICLE[0]}"><title>')
    page, body, desc = _page(html)
    without_lead = assess(page, _mask(page, set(ARTICLE[1:])), 0, article_body=body, description=desc)
    assert without_lead.region == "og:description"
    assert without_lead.score == 0.0
    assert assess(page, _mask(page, set(ARTICLE)), 0, article_body=body, description=desc).score == 1.0


def test_images_count() -> None:
    gallery = "".join(f'<img src="/img/{i}.jpg" width="640" height="400">' for i in range(4))
    html = teaser_page().replace(f"<p>{ARTICLE[1]}</p>", f"<p>{ARTICLE[1]}</p>{gallery}")
    page, body, desc = _page(html)
    kept = _mask(page, set(ARTICLE))
    lost = assess(page, kept, 0, article_body=body, description=desc)
    assert lost.images == 0.0
    assert lost.score == 0.0
    assert "of its images" in lost.reason
    assert assess(page, kept, 4, article_body=body, description=desc).score == 1.0


@pytest.mark.parametrize(
    "html",
    [comment_thread_page(), teaser_page(), caption_page(), byline_merged_page(), table_page(), declared_article_page()],
    ids=["comments", "teasers", "caption", "byline", "table", "declared"],
)
def test_the_shipped_model_passes_the_guard(html: str) -> None:
    ex = Extractor().extract(html, "https://town.example/a")
    assert ex.completeness >= MIN, ex.completeness_reason
