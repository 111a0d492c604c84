"""From one HTML page to its article: title, text, clean body HTML, images, dates (docs/architecture.md section 3).

``Extractor(model_path).extract(html, url)`` parses the page once, segments it,
builds the feature matrix and asks the model about every block in ONE batched
call (predicting block by block would cost ~100x more). Then:

* title: the block the model is surest is the title (p >= ``TITLE_MIN_P``), else
  ``og:title`` / JSON-LD ``headline``, else ``<title>``;
* body: blocks whose most likely class is body, in document order;
* images: ``<img>`` between the title (or the first body block) and the last body
  block that do not sit in a boilerplate block of their own and are not declared
  smaller than ``_MIN_IMAGE_PX``;
* with a host template: body blocks that are the host's template are dropped;
* a dropped block between body blocks that shares its DOM path with a family of blocks the body
  mostly holds is body again (``structure.complete_families``: the model's gaps in the article);
* a reader comment thread after the article (an element with a comment class or id, or
  schema.org ``Comment`` markup) is dropped from the body (``structure.drop_comments``);
* data tables with body cells inside the article are kept whole, and blocks that repeat
  an earlier body block (a caption printed again under a gallery) are dropped
  (``structure.py``);
* completeness: the share of the page's likely article region the extraction keeps
  (``completeness.py``); the cube refuses a page that lost its story (``min_completeness``);
* is_article: enough body text (``MIN_ARTICLE_WORDS``, CJK counted by characters:
  ``wordcount.words``) that is not mostly links (listings, tag pages, home pages fail this);
  ``not_article_reason`` says which, for the webmaster.
"""

from __future__ import annotations

import html as html_lib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import numpy as np

from cubes.autoparser.completeness import assess
from cubes.autoparser.features import FEATURE_NAMES, page_features
from cubes.autoparser.label import BODY, TITLE
from cubes.autoparser.meta import read_meta
from cubes.autoparser.model import BlockModel, load_model
from cubes.autoparser.page import Page
from cubes.autoparser.segment import parse_html, segment_tree
from cubes.autoparser.structure import (
    complete_families,
    drop_comments,
    drop_repeats,
    drop_teasers,
    keep_tables,
    table_html,
)
from cubes.autoparser.tags import BLOCK_TAGS, SKIP_TAGS
from cubes.autoparser.templates import FILTER_SHARE, HostTemplate
from shared.pages.wordcount import words as count_words

__all__ = ["MIN_ARTICLE_WORDS", "Extraction", "Extractor"]

#: below this the model is guessing; fall back to the page's metadata title
TITLE_MIN_P = 0.5
#: shortest body (in words) that counts as an article; listing pages keep a few teaser lines
MIN_ARTICLE_WORDS = 50
#: a body whose text is more than this share of link text is a list of links, not an article
MAX_ARTICLE_LINK_DENSITY = 0.5
#: images declared smaller than this (px, either side) are icons or tracking pixels
_MIN_IMAGE_PX = 50
_TPL_SHARE = FEATURE_NAMES.index("tpl_share")
#: the template filter stands down when it would remove more than this share of the body's text
_TEMPLATE_MAX_SHARE = 0.5
_INLINE_KEEP = frozenset(
    [
        "strong",
        "b",
        "em",
        "i",
        "u",
        "s",
        "code",
        "sub",
        "sup",
        "mark",
        "q",
        "cite",
        "abbr",
        "small",
        "kbd",
        "var",
    ]
)
_HEADING = {"h1": "h2", "h2": "h2", "h3": "h3", "h4": "h4", "h5": "h5", "h6": "h6"}
_KEEP_BLOCK = {"pre": "pre", "blockquote": "blockquote", "li": "li", "figcaption": "figcaption"}


@dataclass
class Extraction:
    title: str
    text: str
    body_html: str
    images: list[str] = field(default_factory=list)
    published_at: datetime | None = None
    modified_at: datetime | None = None
    #: the byline's name, the page's language tag, its cover image (``og:image``): ``meta.py``
    author: str = ""
    lang: str = ""
    cover: str = ""
    canonical_url: str = ""
    is_article: bool = False
    #: why the page is not an article, in words ("" when it is one)
    not_article_reason: str = ""
    completeness: float = 1.0
    #: what the completeness was measured against, and what was lost (``completeness.py``)
    completeness_region: str = "none"
    completeness_reason: str = ""
    #: block count, body block count: for logs and the extract command
    blocks: int = 0
    body_blocks: int = 0
    #: the segmented page (the cube's host template learns from it)
    page: Page | None = field(default=None, repr=False)


class Extractor:
    """Reads article pages with a block classifier. Load once, call ``extract`` per page."""

    def __init__(self, model_path: str | Path | None = None, *, model: BlockModel | None = None) -> None:
        #: ``model`` (an in-memory one, as cross-validation trains them) wins over ``model_path``
        self.model: BlockModel = model if model is not None else load_model(model_path)

    def extract(
        self,
        html: bytes | str,
        url: str = "",
        encoding: str | None = None,
        *,
        template: HostTemplate | None = None,
        template_counted: bool = False,
        body_threshold: float | None = None,
    ) -> Extraction:
        """The article of one page.

        ``template``: the page's host template (features and filter, ``templates.py``);
        ``template_counted``: the template learnt this very page (evaluation on pages it was
        learnt from), so the page's own occurrence is taken out; ``body_threshold``: the host's
        calibrated probability cut for body blocks (None: the most likely class wins).
        """
        root = parse_html(html, encoding)
        page = segment_tree(root)
        meta = read_meta(root, url)
        base = meta.base_url or url
        if page.n == 0:
            return Extraction(
                title=meta.og_title or page.html_title,
                text="",
                body_html="",
                published_at=meta.published_at,
                modified_at=meta.modified_at,
                author=meta.author,
                lang=meta.lang,
                cover=meta.image,
                canonical_url=meta.canonical or url,
                is_article=False,
                not_article_reason="the page shows no text",
                completeness=0.0,
            )
        x = page_features(page, meta.og_title, meta.article_body, template, counted=template_counted)
        proba = self.model.proba(x)  # the one batched call per page
        labels = proba.argmax(axis=1)

        title_ix = int(np.argmax(proba[:, TITLE]))
        if proba[title_ix, TITLE] >= TITLE_MIN_P:
            title = page.texts[title_ix]
        else:
            title_ix = -1
            title = meta.og_title or page.html_title
        if body_threshold is None:
            body = labels == BODY
        else:  # a host's calibration (cubes/autoparser/hosts_models.py): its own cut for "body"
            body = (proba[:, BODY] >= body_threshold) & (proba[:, BODY] >= proba[:, TITLE])
        if title_ix >= 0:
            body[title_ix] = False
        if template is not None:
            _template_filter(page, body, x[:, _TPL_SHARE])
        complete_families(page, body)
        if title_ix >= 0:
            body[title_ix] = False  # it may share its path with the article's subheadings
        drop_comments(page, body, title_ix)
        drop_teasers(page, body, page.top_candidate if page.top_candidate is not None else -1)
        tables = keep_tables(page, body)
        drop_repeats(page, body)
        idx = np.flatnonzero(body)
        texts = [page.texts[i] for i in idx]
        text = "\n".join(texts)

        images = _images(page, body, base, page.pre[title_ix] if title_ix >= 0 else None)
        captions = _captions(page, idx, images)
        body_html = _body_html(page, idx, images, base, tables, captions)
        words = sum(count_words(t) for t in texts)
        link = sum(page.link_chars[i] for i in idx)
        chars = sum(len(t) for t in texts)
        not_article = _not_article(words, link, chars)
        kept = body.copy()
        if title_ix >= 0:
            kept[title_ix] = True
        guard = assess(page, kept, len(images), article_body=meta.article_body, description=meta.description)
        return Extraction(
            title=title,
            text=text,
            body_html=body_html,
            images=[src for _, src in images],
            published_at=meta.published_at,
            modified_at=meta.modified_at,
            author=meta.author,
            lang=meta.lang,
            cover=meta.image,
            canonical_url=meta.canonical or url,
            is_article=not not_article,
            not_article_reason=not_article,
            completeness=guard.score,
            completeness_region=guard.region,
            completeness_reason=guard.reason,
            blocks=page.n,
            body_blocks=int(idx.size),
            page=page,
        )


def _not_article(words: int, link_chars: int, chars: int) -> str:
    """Why a body of ``words`` words is not an article ("" when it is one)."""
    if words < MIN_ARTICLE_WORDS:
        return f"the page's text holds {words} words of article text, under the {MIN_ARTICLE_WORDS} of an article"
    if link_chars > MAX_ARTICLE_LINK_DENSITY * max(chars, 1):
        return f"{link_chars / max(chars, 1):.0%} of the page's text is links: a list of links, not an article"
    return ""


def _template_filter(page: Page, body: np.ndarray[Any, Any], share: np.ndarray[Any, Any]) -> None:
    """Drops the host's template from the body (in place), unless it would take most of it.

    A page whose body is mostly "template" is a copy of another page of the host (a reprint,
    a print view), not a page made of chrome: the model's reading stands, and the hash
    dedupe deals with the copy.
    """
    template = body & (share >= FILTER_SHARE)
    if not template.any():
        return
    chars = page.char_counts()
    if chars[template].sum() <= _TEMPLATE_MAX_SHARE * chars[body].sum():
        body &= ~template


def _images(page: Page, body: np.ndarray[Any, Any], base: str, title_pre: int | None) -> list[tuple[int, str]]:
    """(preorder id, absolute URL) of the article's images, in document order, without repeats.

    The span runs from the title (the lead image sits between headline and text) or the
    first body block, to the end of the last body block.
    """
    idx = np.flatnonzero(body)
    if idx.size == 0:
        return []
    first_pre = page.pre[idx[0]]
    if title_pre is not None and title_pre < first_pre:
        first_pre = title_pre
    last_pre = page.end_of[page.pre[idx[-1]]]
    out: list[tuple[int, str]] = []
    seen: set[str] = set()
    for img in page.images:
        if not first_pre <= img.pre < last_pre:
            continue
        if img.src.startswith("data:"):
            continue
        if (img.width is not None and img.width < _MIN_IMAGE_PX) or (
            img.height is not None and img.height < _MIN_IMAGE_PX
        ):
            continue
        # an image inside a boilerplate block that itself lies in the article span (a share bar,
        # an author avatar) is dropped; an outer container around the whole article does not count
        if img.block >= 0 and not body[img.block] and page.pre[img.block] >= first_pre:
            continue
        src = urljoin(base, img.src)
        if src not in seen and src.startswith(("http://", "https://")):
            seen.add(src)
            out.append((img.pre, src))
    return out


def _inline_html(el: Any, base: str, out: list[str], top: bool = True) -> None:
    """The block's own content as clean inline HTML (links kept and resolved, nested blocks left out)."""
    if el.text:
        out.append(html_lib.escape(el.text))
    for child in el:
        tag = child.tag
        if isinstance(tag, str) and tag not in SKIP_TAGS and tag not in BLOCK_TAGS:
            if tag == "br":
                out.append("<br>")
            elif tag == "a":
                href = (child.get("href") or "").strip()
                absolute = urljoin(base, href) if href else ""
                if absolute.startswith(("http://", "https://")):
                    out.append(f'<a href="{html_lib.escape(absolute, quote=True)}">')
                    _inline_html(child, base, out, False)
                    out.append("</a>")
                else:
                    _inline_html(child, base, out, False)
            elif tag in _INLINE_KEEP:
                out.append(f"<{tag}>")
                _inline_html(child, base, out, False)
                out.append(f"</{tag}>")
            elif tag != "img":
                _inline_html(child, base, out, False)
        if child.tail:
            out.append(html_lib.escape(child.tail))


def _cell(el: Any, base: str) -> str:
    inner: list[str] = []
    _inline_html(el, base, inner)
    return " ".join("".join(inner).split())


def _captions(page: Page, idx: np.ndarray[Any, Any], images: list[tuple[int, str]]) -> dict[int, int]:
    """Image preorder id -> the body block that is its ``<figcaption>`` (the first image of that figure)."""
    out: dict[int, int] = {}
    pres = [pre for pre, _ in images]
    for i in idx:
        if page.tags[i] != "figcaption":
            continue
        figure = page.anc[i][0]
        el = page.block_el.get(figure) if figure >= 0 else None
        if el is None or el.tag != "figure":
            continue
        end = page.end_of[figure]
        first = next((pre for pre in pres if figure <= pre < end and pre not in out), None)
        if first is not None:
            out[first] = int(i)
    return out


def _figure(page: Page, src: str, alt: str, caption: int | None, base: str) -> str:
    """An image as a ``<figure>``: its alt text kept, and its caption inside it as on the page."""
    alt_attr = f' alt="{html_lib.escape(alt, quote=True)}"' if alt else ""
    img = f'<img src="{html_lib.escape(src, quote=True)}"{alt_attr}>'
    if caption is None:
        return f"<figure>{img}</figure>"
    inner: list[str] = []
    if page.split[caption]:
        inner.append(html_lib.escape(page.texts[caption]))
    else:
        _inline_html(page.elements[caption], base, inner)
    return f"<figure>{img}<figcaption>{' '.join(''.join(inner).split())}</figcaption></figure>"


def _body_html(
    page: Page,
    idx: np.ndarray[Any, Any],
    images: list[tuple[int, str]],
    base: str,
    tables: dict[int, Any],
    captions: dict[int, int],
) -> str:
    items: list[tuple[int, int, str]] = [(page.pre[i], 0, str(i)) for i in idx if i not in captions.values()]
    items += [(pre, 1, src) for pre, src in images]
    items.sort()
    alts = {im.pre: " ".join(im.alt.split()) for im in page.images if im.alt}
    out: list[str] = []
    in_list = False
    for pre, kind, value in items:
        if kind == 1:
            if in_list:
                out.append("</ul>")
                in_list = False
            out.append(_figure(page, value, alts.get(pre, ""), captions.get(pre), base))
            continue
        i = int(value)
        table = tables.get(i)
        if table is not None:  # a kept data table, rendered whole at its first cell
            if in_list:
                out.append("</ul>")
                in_list = False
            out.append(table_html(table, lambda el: _cell(el, base)))
            continue
        if i in tables:  # another cell of a table already rendered
            continue
        tag = page.tags[i]
        name = _HEADING.get(tag) or _KEEP_BLOCK.get(tag, "p")
        if name == "li" and not in_list:
            out.append("<ul>")
            in_list = True
        elif name != "li" and in_list:
            out.append("</ul>")
            in_list = False
        if page.split[i]:  # one paragraph of an element split at <br>: its text is the piece
            content = html_lib.escape(page.texts[i])
        else:
            inner: list[str] = []
            _inline_html(page.elements[i], base, inner)
            content = " ".join("".join(inner).split())
        out.append(f"<{name}>{content}</{name}>")
    if in_list:
        out.append("</ul>")
    return "\n".join(out)
