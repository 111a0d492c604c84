"""Block segmentation: an HTML page becomes a sequence of text blocks (docs/architecture.md section 3, autoparser).

A *block* is the text that belongs to one block-level element (``p``, ``h1``-``h6``,
``li``, ``td``, ``pre``, ``blockquote``, ``figcaption``, a ``div`` with direct text, ...):
its own text nodes plus those of its inline descendants, but not the text of nested
block-level elements, which form blocks of their own. Invisible parts (``script``,
``style``, ``noscript``, ``template``, ``svg``, elements with ``hidden``,
``aria-hidden="true"`` or ``display:none``) are skipped.

A block whose own text is cut by ``<br>`` is split where it holds separate paragraphs
(a story once sat in one ``<div>`` merged with its byline, and the whole block was
classed boilerplate): at every blank line (``<br><br>``), and after a short first line
(a byline, a dateline) followed by a long text. The pieces share their element, so
they are marked in ``Page.split`` and rendered as plain text.

One recursive walk over the tree collects everything the features need (numbers
per block, DOM context as preorder intervals), so feature extraction never walks
the tree again. Speed matters: the cube must read >= 100 pages/s on one core and
lxml's parse alone takes ~1.5 ms of that budget.

The walk reads the tree with the tag vocabulary of ``tags.py`` and the class / id vocabulary
of ``class_groups.py``, and fills a ``page.Page``.
"""

from __future__ import annotations

import itertools
import operator
import re
from typing import Any

from lxml import etree

from cubes.autoparser.class_groups import GROUP_NAMES, MASK_VECTORS, class_mask, path_step
from cubes.autoparser.page import ImageRef, Page
from cubes.autoparser.parsing import parse_html
from cubes.autoparser.tags import ARTICLE_BODY_BIT, BLOCK_TAGS, CTX_BIT, LEAF_FAST, SKIP_TAGS, comment_markup

__all__ = ["parse_html", "segment", "segment_tree"]

#: a first line up to this long, followed by at least _BYLINE_REST_CHARS of text in the same
#: paragraph, is split off as its own block: "By Ann Writer | 4 May" is ~30-80 characters, a
#: story's opening paragraph a few hundred
_BYLINE_CHARS = 100
_BYLINE_REST_CHARS = 150
_DISPLAY_NONE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.I)


def segment(html: bytes | str, encoding: str | None = None) -> Page:
    """Parse and segment ``html``."""
    return segment_tree(parse_html(html, encoding))


def _int_attr(v: str | None) -> int | None:
    if not v:
        return None
    digits = re.match(r"\s*(\d+)", v)
    return int(digits.group(1)) if digits else None


class _Walker:
    """One depth-first pass; state lives on the instance so the recursion stays cheap."""

    def __init__(self, page: Page) -> None:
        self.p = page
        self.counter = 0
        #: how many ancestors (and self) hit each CLASS_GROUPS word; an immutable tuple, so
        #: a block's snapshot is free and leaving an element just restores the outer tuple
        self.class_counts: tuple[int, ...] = (0,) * len(GROUP_NAMES)
        self.hidden: set[Any] = set()
        self.anc: list[int] = []  # preorder ids of block-level ancestors
        # the block being filled: [pieces, link_chars, n_links, n_images] or None
        self.cur_pieces: list[str] = []
        self.cur_link = 0
        self.cur_nlinks = 0
        self.cur_imgs = 0
        #: (piece index, link chars, links) at each <br> of the block being filled
        self.cur_breaks: list[tuple[int, int, int]] = []
        self.path: list[str] = []
        self.comment_depth = 0

    def walk(self, el: Any, depth: int, ctx: int, in_link: bool) -> None:
        p = self.p
        pre = self.counter
        self.counter += 1
        p.end_of.append(0)
        tag = el.tag
        is_block = tag in BLOCK_TAGS
        cls = el.get("class")
        ident = el.get("id")
        mask = 0
        if cls:
            mask = class_mask(cls)
        if ident:
            mask |= class_mask(ident)
        outer_counts = self.class_counts
        if mask:
            self.class_counts = tuple(map(operator.add, outer_counts, MASK_VECTORS[mask]))
        child_ctx = ctx | CTX_BIT.get(tag, 0)
        comment = False
        if is_block:
            itemprop = el.get("itemprop")
            if itemprop == "articleBody":  # schema.org puts it on containers
                child_ctx |= ARTICLE_BODY_BIT
            elif comment_markup(itemprop, el.get("itemtype")):
                comment = True
                self.comment_depth += 1

        if is_block:
            # save the enclosing block's accumulators and start a fresh block
            saved = (self.cur_pieces, self.cur_link, self.cur_nlinks, self.cur_imgs, self.cur_breaks)
            self.cur_pieces, self.cur_link, self.cur_nlinks, self.cur_imgs, self.cur_breaks = [], 0, 0, 0, []
            anc3 = tuple(self.anc[-3:][::-1])
            class_snapshot = self.class_counts
            first_image = len(p.images)
            self.anc.append(pre)
            p.block_el[pre] = el
            self.path.append(path_step(tag, cls) if cls else tag)
        if tag == "a":
            self.cur_nlinks += 1
            in_link = True
        elif tag == "img":
            src = el.get("src") or el.get("data-src") or el.get("data-lazy-src") or ""
            if src:
                p.images.append(
                    ImageRef(
                        pre,
                        src.strip(),
                        el.get("alt") or "",
                        _int_attr(el.get("width")),
                        _int_attr(el.get("height")),
                        -1,
                    )
                )
                self.cur_imgs += 1
        elif tag == "br":
            self.cur_breaks.append((len(self.cur_pieces), self.cur_link, self.cur_nlinks))
            self.cur_pieces.append(" ")

        text = el.text
        if text:
            self.cur_pieces.append(text)
            if in_link:
                self.cur_link += len(text.strip())
        hidden = self.hidden
        for child in el:
            ctag = child.tag
            if type(ctag) is not str:  # comments and processing instructions: only their tail counts
                pass
            elif ctag in LEAF_FAST and len(child) == 0 and child not in hidden:
                # fast path for inline leaves (<b>x</b>, <a>menu item</a>), most of a page's
                # elements: they hold no block, so they need no preorder id and no class context
                ctext = child.text
                if ctag == "a":
                    self.cur_nlinks += 1
                    if ctext:
                        self.cur_pieces.append(ctext)
                        self.cur_link += len(ctext.strip())
                elif ctext:
                    self.cur_pieces.append(ctext)
                    if in_link:
                        self.cur_link += len(ctext.strip())
            elif ctag in SKIP_TAGS or child in hidden:
                p.end_of.append(0)
                self.counter += 1
                p.end_of[self.counter - 1] = self.counter
            else:
                self.walk(child, depth + 1, child_ctx, in_link)
                if ctag in BLOCK_TAGS:
                    self.cur_pieces.append(" ")  # a nested block ends a word: "text</p>tail"
            tail = child.tail
            if tail:
                self.cur_pieces.append(tail)
                if in_link:
                    self.cur_link += len(tail.strip())

        if is_block:
            self.anc.pop()
            parts = self._parts() if self.cur_breaks else None
            if parts is None:
                txt = " ".join("".join(self.cur_pieces).split())
                parts = [(txt, self.cur_link, self.cur_nlinks)] if txt else []
            if parts:  # most block elements (wrappers, lists) hold no text of their own: nothing to record
                first_block = len(p.texts)
                anc_row = anc3 + (-1,) * (3 - len(anc3))
                path = "/".join(self.path[-4:])
                split = len(parts) > 1
                in_comment = self.comment_depth > 0
                for txt, link, nlinks in parts:
                    p.texts.append(txt)
                    p.tags.append(tag)
                    p.elements.append(el)
                    p.depth.append(depth)
                    p.pre.append(pre)
                    p.anc.append(anc_row)  # type: ignore[arg-type]
                    p.link_chars.append(min(link, len(txt)))
                    p.n_links.append(nlinks)
                    p.n_images.append(self.cur_imgs if len(p.texts) - 1 == first_block else 0)
                    p.ctx.append(ctx)
                    p.own_class.append(mask)
                    p.anc_class.append(class_snapshot)
                    p.split.append(split)
                    p.path.append(path)
                    p.in_comment.append(in_comment)
                for img in p.images[first_image:]:
                    if img.block < 0:
                        img.block = first_block
            self.path.pop()
            (self.cur_pieces, self.cur_link, self.cur_nlinks, self.cur_imgs, self.cur_breaks) = saved
        if comment:
            self.comment_depth -= 1
        self.class_counts = outer_counts
        p.end_of[pre] = self.counter

    def _parts(self) -> list[tuple[str, int, int]] | None:
        """The block's text split at its <br>s into paragraphs: (text, link chars, links) each.

        None when nothing splits: lines of one paragraph (an address, a poem) stay one block.
        """
        pieces, breaks = self.cur_pieces, self.cur_breaks
        bounds = [(0, 0, 0), *breaks, (len(pieces), self.cur_link, self.cur_nlinks)]
        lines = []
        for (a, la, na), (b, lb, nb) in itertools.pairwise(bounds):
            lines.append((" ".join("".join(pieces[a:b]).split()), lb - la, nb - na))
        # paragraphs: lines between blank lines (<br><br>)
        paras: list[list[tuple[str, int, int]]] = [[]]
        for line in lines:
            if line[0]:
                paras[-1].append(line)
            elif paras[-1]:
                paras.append([])
        out: list[tuple[str, int, int]] = []
        for para in paras:
            if not para:
                continue
            # a short first line over a long rest: a byline or dateline glued to the story
            if len(para) > 1 and len(para[0][0]) <= _BYLINE_CHARS:
                rest = sum(len(t) for t, _, _ in para[1:])
                if rest >= _BYLINE_REST_CHARS:
                    out.append(para[0])
                    para = para[1:]
            out.append((" ".join(t for t, _, _ in para), sum(x[1] for x in para), sum(x[2] for x in para)))
        out = [part for part in out if part[0]]
        return out if len(out) > 1 else None


#: one C-level XPath pass finds the hidden elements instead of three attribute reads per element
_HIDDEN_XPATH = etree.XPath(
    "//*[@hidden or @aria-hidden='true' or contains(@style, 'none') or contains(@style, 'hidden')]"
)


def _hidden_elements(root: Any) -> set[Any]:
    # lxml keeps one proxy per node while it is referenced, so set membership by identity works
    out = set()
    for el in _HIDDEN_XPATH(root):
        if el.get("hidden") is not None or el.get("aria-hidden") == "true":
            out.add(el)
        else:
            style = el.get("style")
            if style and _DISPLAY_NONE.search(style):
                out.add(el)
    return out


def segment_tree(root: Any) -> Page:
    """Segment an already parsed lxml.html tree (the tree is not modified)."""
    page = Page(root=root)
    head = root.find("head")
    if head is not None:
        t = head.find("title")
        if t is not None and t.text:
            page.html_title = " ".join(t.text.split())
    body = root.find("body")
    start = body if body is not None else root
    walker = _Walker(page)
    walker.hidden = _hidden_elements(start)
    walker.walk(start, 0, 0, False)
    _to_document_order(page)
    return page


def _to_document_order(page: Page) -> None:
    """Blocks are recorded when their element closes (children first); put them in document order."""
    pre = page.pre
    if all(pre[i] < pre[i + 1] for i in range(len(pre) - 1)):
        return
    order = sorted(range(len(pre)), key=pre.__getitem__)
    new_index = {old: new for new, old in enumerate(order)}
    for name in (
        "texts",
        "tags",
        "elements",
        "depth",
        "pre",
        "anc",
        "link_chars",
        "n_links",
        "n_images",
        "ctx",
        "own_class",
        "anc_class",
        "split",
        "path",
        "in_comment",
    ):
        col = getattr(page, name)
        setattr(page, name, [col[i] for i in order])
    for img in page.images:
        if img.block >= 0:
            img.block = new_index[img.block]
