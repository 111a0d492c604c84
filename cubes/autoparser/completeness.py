"""The completeness guard: did the extraction keep the page's article? (docs/architecture.md section 3).

A Turbo page that drops the story is worse than no Turbo page (the site gets banned for
it), so the cube refuses a page whose extraction lost its article. The guard compares
what the model kept with the page's *likely article region*, from what the page declares
to what its layout shows:

* ``articleBody``: the JSON-LD ``articleBody`` text, or the blocks inside an
  ``itemprop="articleBody"`` element;
* ``article``: the ``<article>`` element holding the most paragraph text;
* ``og:description``: the page's description, when the page shows it in its text (only
  when nothing above applies: a page without paragraphs);
* ``cluster``: readability's densest text container (its top candidate);
* ``outside-boilerplate``: the paragraphs outside every header / footer / nav / aside /
  form and every nav / footer / comment / share / related / sidebar / ad class.

Only *article text* counts, so a region's menus and comment threads never decide: a paragraph
(>= 80 characters, < 30 % link text, not in a comment) whatever its tag (a story told in one
``<div>`` of text without ``<p>`` counts), and the items of a list or the cells of a table
whose list or table holds that much text, under that share of links (an article made of a data
table or of a list: its cells are short, one by one). Lengths are counted as a spaced script
would have them (``wordcount.spaced_chars``: a Japanese paragraph of 30 characters is a
paragraph). Images count too, for a quarter, but only on a page whose text already lost more
than a tenth (``_TEXT_COMPLETE``): the images of the region (not icons, not declared under
50 px) against the images kept. A complete text is never refused for its images alone: a
region's images are often thumbnails of other stories.

Declared regions (``articleBody``, ``article``) are trusted first: when one exists, the
score is its kept share; otherwise the layout estimates decide, the larger of the two
(each alone wrongly refuses a few good pages: a long comment thread wins ``cluster``, a
``column`` class on the article wrapper fools ``outside-boilerplate``). An ``<article>``
holding under ``_ARTICLE_MIN_SHARE`` of the page's paragraphs is a teaser, not the story.
``og:description`` lowered every score at first and refused 48 good pages of the corpus (a
description the site shows as a standfirst that the reference leaves out too), so it is
the region of last resort only. A score below ``autoparser.min_completeness`` is refused
with ``reason``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from cubes.autoparser.class_groups import CLASS_GROUPS
from cubes.autoparser.page import Page
from cubes.autoparser.readability import readability_scores
from cubes.autoparser.tags import ARTICLE_BODY_BIT, CONTEXT_TAGS
from shared.pages.wordcount import CJK_TOKEN, spaced_chars

__all__ = ["Completeness", "assess"]

_PARAGRAPH_CHARS = 80
#: a declared region smaller than this (characters of paragraphs) says too little to refuse on
_REGION_MIN_CHARS = 200
#: og:description: at least this many words, this share of its 3-shingles on the page
_DESCRIPTION_MIN_WORDS = 12
_DESCRIPTION_ON_PAGE = 0.6
#: images: a region with at least this many images is checked for them too
_REGION_MIN_IMAGES = 2
_IMAGE_WEIGHT = 0.25
#: a text score from which the images no longer weigh: the text is complete but for a line or two
_TEXT_COMPLETE = 0.9
#: a paragraph's most link text, and a list's or table's (a menu is a list of links)
_MAX_LINK_SHARE = 0.3
#: blocks that are one item of a list or one cell of a table, and those containers
_ITEM_TAGS = frozenset({"li", "td", "th", "dd", "dt"})
_CONTAINERS = frozenset({"ul", "ol", "dl", "table"})
#: an <article> is the story's region only when it holds this share of the page's paragraph text
_ARTICLE_MIN_SHARE = 0.3
_MIN_IMAGE_PX = 50
_BOILER_CTX = sum(1 << CONTEXT_TAGS.index(t) for t in ("header", "footer", "nav", "aside", "form"))
_BOILER_GROUPS = [
    list(CLASS_GROUPS).index(g) for g in ("nav", "footer", "comment", "share", "related", "sidebar", "ad", "hidden")
]
_COMMENT_GROUP = list(CLASS_GROUPS).index("comment")
_WORD = CJK_TOKEN


@dataclass(frozen=True)
class Completeness:
    #: kept share of the likely article region's text (1.0 when there is nothing to compare with)
    score: float
    #: the region it was measured against
    region: str
    #: kept share of that region's images (None: the region has too few to tell)
    images: float | None = None
    #: what was lost, in words, for the refusal ("" when nothing was)
    reason: str = ""


#: word 3-shingles of a region text checked against the page: evenly spread, at most this many
#: (a substring test each on the page's text: an articleBody of 2,000 words costs no more)
_MAX_SHINGLES = 60


def _words(text: str) -> str:
    return " " + " ".join(_WORD.findall(text.lower())) + " "


def _text_share(region_text: str, page_words: str, kept_words: str) -> float | None:
    """Kept share of a region given as text, among its shingles that the page shows; None if the page barely does."""
    t = _WORD.findall(region_text.lower())
    sh = [f" {t[i]} {t[i + 1]} {t[i + 2]} " for i in range(len(t) - 2)]
    if len(sh) > _MAX_SHINGLES:
        step = len(sh) / _MAX_SHINGLES
        sh = [sh[int(k * step)] for k in range(_MAX_SHINGLES)]
    on_page = [s for s in sh if s in page_words]
    if not sh or len(on_page) < _DESCRIPTION_ON_PAGE * len(sh):
        return None
    return sum(1 for s in on_page if s in kept_words) / len(on_page)


def assess(
    page: Page,
    kept: npt.NDArray[np.bool_],
    kept_images: int,
    *,
    article_body: str = "",
    description: str = "",
) -> Completeness:
    """How much of the page's likely article ``kept`` keeps (see the module docstring)."""
    if page.n == 0:
        return Completeness(1.0, "none")
    chars = np.fromiter((spaced_chars(t) for t in page.texts), dtype=np.float64, count=page.n)
    link = np.asarray(page.link_chars, dtype=np.float64)
    anc = page.anc_class_array()
    comment = np.asarray(page.in_comment, dtype=bool) | (anc[:, _COMMENT_GROUP] > 0)
    paragraph = (chars >= _PARAGRAPH_CHARS) & (link < _MAX_LINK_SHARE * chars) | _listed_text(page, chars, link)
    paragraph &= ~comment
    pre = np.asarray(page.pre, dtype=np.int64)
    ctx = np.asarray(page.ctx, dtype=np.int64)

    def share(region: npt.NDArray[np.bool_]) -> float | None:
        total = chars[region].sum()
        return None if total < _REGION_MIN_CHARS else float(chars[region & kept].sum() / total)

    def inside(el_pre: int) -> npt.NDArray[np.bool_]:
        return (pre >= el_pre) & (pre < page.end_of[el_pre])

    declared: list[tuple[str, float, npt.NDArray[np.bool_] | None]] = []
    page_words = kept_words = ""
    if article_body and len(_WORD.findall(article_body)) >= _DESCRIPTION_MIN_WORDS:
        page_words = _words("\n".join(page.texts))
        kept_words = _words("\n".join(t for t, k in zip(page.texts, kept, strict=True) if k))
        s = _text_share(article_body, page_words, kept_words)
        if s is not None:
            declared.append(("articleBody", s, None))
    if not declared:
        region = paragraph & ((ctx & ARTICLE_BODY_BIT) != 0)
        s = share(region)
        if s is not None:
            declared.append(("articleBody", s, region))
    articles = [p for p, el in page.block_el.items() if el.tag == "article"]
    if articles:
        best = max(articles, key=lambda p: chars[paragraph & inside(p)].sum())
        region = paragraph & inside(best)
        s = share(region)
        # an <article> holding a small part of the page's paragraphs is a teaser or a comment, not the story
        if s is not None and chars[region].sum() >= _ARTICLE_MIN_SHARE * chars[paragraph].sum():
            declared.append(("article", s, region))

    if declared:
        name, score, region_mask = declared[0]
    else:
        layout: list[tuple[str, float, npt.NDArray[np.bool_] | None]] = []
        top = page.top_candidate
        if top is None:
            commas = np.fromiter((t.count(",") for t in page.texts), dtype=np.float64, count=page.n)
            _, top = readability_scores(page, chars, commas, link)
        if top >= 0:
            region = paragraph & inside(top)
            s = share(region)
            if s is not None:
                layout.append(("cluster", s, region))
        region = paragraph & ((ctx & _BOILER_CTX) == 0) & (anc[:, _BOILER_GROUPS].sum(axis=1) == 0)
        s = share(region)
        if s is not None:
            layout.append(("outside-boilerplate", s, region))
        if not layout:
            return _description_only(page, kept, description)
        name, score, region_mask = max(layout, key=lambda r: r[1])
    reason = ""
    images = _image_share(page, region_mask, kept_images) if region_mask is not None else None
    # images weigh a quarter: a lost gallery tips a page that also lost text, but the images of a
    # region are often thumbnails of other stories, so they never refuse a complete text alone
    weighs = images is not None and score < _TEXT_COMPLETE
    final = score * (1.0 - _IMAGE_WEIGHT * (1.0 - images)) if weighs and images is not None else score
    if final < 1.0 or (images is not None and images < 1.0):
        lost = f"{1 - score:.0%} of the {name} text" if score < 1.0 else ""
        lost_img = f"{1 - images:.0%} of its images" if images is not None and images < 1.0 else ""
        reason = "the extraction lost " + " and ".join(x for x in (lost, lost_img) if x)
    return Completeness(final, name, images, reason)


def _listed_text(page: Page, chars: npt.NDArray[np.float64], link: npt.NDArray[np.float64]) -> npt.NDArray[np.bool_]:
    """Items and cells of the lists and tables that hold article text (see the module docstring)."""
    out = np.zeros(page.n, dtype=bool)
    members: dict[int, list[int]] = {}
    for i, tag in enumerate(page.tags):
        if tag in _ITEM_TAGS:
            for a in page.anc[i]:
                el = page.block_el.get(a) if a >= 0 else None
                if el is not None and el.tag in _CONTAINERS:
                    members.setdefault(a, []).append(i)
                    break
    for blocks in members.values():
        total, links = chars[blocks].sum(), link[blocks].sum()
        if len(blocks) >= 2 and total >= _PARAGRAPH_CHARS and links < _MAX_LINK_SHARE * total:
            out[blocks] = True
    return out


def _description_only(page: Page, kept: npt.NDArray[np.bool_], description: str) -> Completeness:
    """The page's og:description as the region of last resort (a page with no paragraphs at all)."""
    if description and len(_WORD.findall(description)) >= _DESCRIPTION_MIN_WORDS:
        page_words = _words("\n".join(page.texts))
        kept_words = _words("\n".join(t for t, k in zip(page.texts, kept, strict=True) if k))
        s = _text_share(description, page_words, kept_words)
        if s is not None:
            reason = f"the extraction lost {1 - s:.0%} of the og:description text" if s < 1.0 else ""
            return Completeness(s, "og:description", None, reason)
    return Completeness(1.0, "none")


def _image_share(page: Page, region: npt.NDArray[np.bool_], kept_images: int) -> float | None:
    """Kept images over the content images inside the region's blocks' span."""
    idx = np.flatnonzero(region)
    if idx.size == 0:
        return None
    lo, hi = page.pre[idx[0]], page.end_of[page.pre[idx[-1]]]
    n = 0
    seen: set[str] = set()
    for img in page.images:
        if not lo <= img.pre < hi or img.src.startswith("data:") or img.src in seen:
            continue
        if (img.width is not None and img.width < _MIN_IMAGE_PX) or (
            img.height is not None and img.height < _MIN_IMAGE_PX
        ):
            continue
        seen.add(img.src)
        n += 1
    if n < _REGION_MIN_IMAGES:
        return None
    return min(1.0, kept_images / n)
