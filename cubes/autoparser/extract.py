"""From one HTML page to its article: title, text, clean body HTML, images, dates (DESIGN.md section 3).

``Extractor(model_path).extract(html, url)`` parses the page once, segments it,
builds the feature matrix and asks the model about every block in ONE batched
call (predicting block by block would cost ~100x more). Then:

* title: the block the model is surest is the title (p >= ``TITLE_MIN_P``), else
  ``og:title`` / JSON-LD ``headline``, else ``<title>``;
* body: blocks whose most likely class is body, in document order;
* images: ``<img>`` between the title (or the first body block) and the last body
  block that do not sit in a boilerplate block of their own and are not declared
  smaller than ``_MIN_IMAGE_PX``;
* completeness: the share of the page's *main visible text* the body keeps (see
  ``_completeness``: paragraph-like blocks in the densest text container, or outside
  every boilerplate region, whichever the body keeps more of). A model that dropped
  real paragraphs scores low and the cube refuses the page (``min_completeness``);
* is_article: enough body text (``MIN_ARTICLE_WORDS``) that is not mostly links
  (listings, tag pages, home pages fail this).
"""

from __future__ import annotations

import html as html_lib
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import numpy as np

from cubes.autoparser.features import page_features, readability_scores
from cubes.autoparser.label import BODY, TITLE
from cubes.autoparser.meta import read_meta
from cubes.autoparser.model import BlockModel, load_model
from cubes.autoparser.segment import (
    BLOCK_TAGS,
    CLASS_GROUPS,
    CONTEXT_TAGS,
    SKIP_TAGS,
    Page,
    parse_html,
    segment_tree,
)

__all__ = ["MIN_ARTICLE_WORDS", "Extraction", "Extractor"]

#: below this the model is guessing; fall back to the page's metadata title
TITLE_MIN_P = 0.5
#: shortest body (in words) that counts as an article; listing pages keep a few teaser lines
MIN_ARTICLE_WORDS = 50
#: a body whose text is more than this share of link text is a list of links, not an article
MAX_ARTICLE_LINK_DENSITY = 0.5
#: images declared smaller than this (px, either side) are icons or tracking pixels
_MIN_IMAGE_PX = 50
_PARAGRAPH_CHARS = 80
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
    canonical_url: str = ""
    is_article: bool = False
    completeness: float = 1.0
    #: block count, body block count: for logs and the extract command
    blocks: int = 0
    body_blocks: int = 0


class Extractor:
    """Reads article pages with a block classifier. Load once, call ``extract`` per page."""

    def __init__(self, model_path: str | Path | None = None) -> None:
        self.model: BlockModel = load_model(model_path)

    def extract(self, html: bytes | str, url: str = "", encoding: str | None = None) -> Extraction:
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
                canonical_url=meta.canonical or url,
                is_article=False,
                completeness=0.0,
            )
        x = page_features(page, meta.og_title, meta.article_body)
        proba = self.model.proba(x)  # the one batched call per page
        labels = proba.argmax(axis=1)

        title_ix = int(np.argmax(proba[:, TITLE]))
        if proba[title_ix, TITLE] >= TITLE_MIN_P:
            title = page.texts[title_ix]
        else:
            title_ix = -1
            title = meta.og_title or page.html_title
        body = labels == BODY
        if title_ix >= 0:
            body[title_ix] = False
        idx = np.flatnonzero(body)
        texts = [page.texts[i] for i in idx]
        text = "\n".join(texts)

        images = _images(page, body, base, page.pre[title_ix] if title_ix >= 0 else None)
        body_html = _body_html(page, idx, images, base)
        words = sum(t.count(" ") + 1 for t in texts)
        link = sum(page.link_chars[i] for i in idx)
        chars = sum(len(t) for t in texts)
        is_article = words >= MIN_ARTICLE_WORDS and link <= MAX_ARTICLE_LINK_DENSITY * max(chars, 1)
        return Extraction(
            title=title,
            text=text,
            body_html=body_html,
            images=[src for _, src in images],
            published_at=meta.published_at,
            canonical_url=meta.canonical or url,
            is_article=is_article,
            completeness=_completeness(page, body | (labels == TITLE)),
            blocks=page.n,
            body_blocks=int(idx.size),
        )


_BOILER_CTX = sum(1 << CONTEXT_TAGS.index(t) for t in ("header", "footer", "nav", "aside", "form"))
_BOILER_GROUPS = [
    list(CLASS_GROUPS).index(g) for g in ("nav", "footer", "comment", "share", "related", "sidebar", "ad", "hidden")
]


def _completeness(page: Page, kept: np.ndarray[Any, Any]) -> float:
    """Share of the page's main visible text that ``kept`` keeps: the larger of two estimates.

    Main visible text is paragraph-like blocks (>= 80 chars, < 30 % link text) either
    (a) inside readability's top candidate (the densest text container), or (b) outside
    every boilerplate region (header / footer / nav / aside / form, comment / sidebar /
    share / related / ad classes). Each estimate alone wrongly refuses a few good pages
    (a long comment thread wins (a); a "column" class on the article wrapper fools (b));
    the content counts as clearly lost only when both agree.
    """
    chars = np.fromiter((len(t) for t in page.texts), dtype=np.float64, count=page.n)
    link = np.asarray(page.link_chars, dtype=np.float64)
    paragraph = (chars >= _PARAGRAPH_CHARS) & (link < 0.3 * chars)
    estimates = []
    top = page.top_candidate
    if top is None:
        commas = np.fromiter((t.count(",") for t in page.texts), dtype=np.float64, count=page.n)
        _, top = readability_scores(page, chars, commas, link)
    if top >= 0:
        pre = np.asarray(page.pre)
        estimates.append(paragraph & (pre >= top) & (pre < page.end_of[top]))
    ctx = np.asarray(page.ctx, dtype=np.int64)
    anc = page.anc_class_array()
    estimates.append(paragraph & ((ctx & _BOILER_CTX) == 0) & (anc[:, _BOILER_GROUPS].sum(axis=1) == 0))
    best = 0.0
    for main in estimates:
        total = chars[main].sum()
        best = max(best, 1.0 if total == 0 else float(chars[main & kept].sum() / total))
    return best


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


def _body_html(page: Page, idx: np.ndarray[Any, Any], images: list[tuple[int, str]], base: str) -> str:
    items: list[tuple[int, int, str]] = [(page.pre[i], 0, str(i)) for i in idx]
    items += [(pre, 1, src) for pre, src in images]
    items.sort()
    out: list[str] = []
    in_list = False
    for _, kind, value in items:
        if kind == 1:
            if in_list:
                out.append("</ul>")
                in_list = False
            out.append(f'<figure><img src="{html_lib.escape(value, quote=True)}"></figure>')
            continue
        i = int(value)
        tag = page.tags[i]
        name = _HEADING.get(tag) or _KEEP_BLOCK.get(tag, "p")
        if name == "li" and not in_list:
            out.append("<ul>")
            in_list = True
        elif name != "li" and in_list:
            out.append("</ul>")
            in_list = False
        inner: list[str] = []
        _inline_html(page.elements[i], base, inner)
        content = " ".join("".join(inner).split())
        out.append(f"<{name}>{content}</{name}>")
    if in_list:
        out.append("</ul>")
    return "\n".join(out)
