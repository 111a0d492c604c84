"""Post-processing of the body blocks: tables kept whole, gaps filled, repeats and comments dropped.

docs/architecture.md section 3 (autoparser).

What a block classifier that reads one block at a time gets wrong, and how it is mended:

* **Tables.** A results table is dozens of short cells full of digits, each one alone
  looking like boilerplate; the model keeps a few and the table is lost. A *data table*
  (no table nested in it, at least ``_MIN_ROWS`` rows and ``_MIN_CELLS`` cells) is kept
  whole when it lies inside the article (body blocks before and after it) and is not a
  table of links (under ``_TABLE_MAX_LINKS`` of its text), even when the model kept none of
  its cells (an article that is mostly a data table lost every cell once); or when most of
  its text is body. It is rendered as a table (``table_html``), rows and cells as on the page.
* **Repeats.** A photo caption printed under the photo, again in the gallery and again in
  the lightbox came out three times. A *caption-like* body block (a ``figcaption``, a block
  in a ``figure`` or with a caption / credit class, or one right after an image and at most
  ``_AFTER_IMAGE_MAX`` characters long) of at most ``_REPEAT_MAX`` characters and
  ``_REPEAT_MIN_WORDS`` words is dropped when an earlier body
  block has the same normalised text or contains it. Other repeats stay: an article may
  repeat a heading in its table of contents, and its reference keeps both.
* **Teaser cards.** "Related stories" before and after the article are cards: one of at
  least ``_CARD_SIBLINGS`` siblings of the same tag and class, holding a linked headline
  and little text (under ``_CARD_CHARS``), often a thumbnail and a standfirst written like
  prose. Body blocks inside such a card (the block itself, its parent or grandparent)
  are dropped, unless the card lies inside readability's densest container (a list the
  article itself holds), and only when the body keeps an article without them (at least
  ``_ARTICLE_LEFT`` characters): a listicle whose items are cards is all cards. Comment
  threads are cards too (an author link, a "Reply" link).
* **Gaps in the article.** Paragraphs of one article share their DOM path (``Page.path``: the
  ``tag.class`` of the block and of its three nearest block ancestors); the model, reading one
  block at a time, drops some of them (a short paragraph, a list item, one after a photo). A
  dropped block between the first and the last body block, not mostly links, whose path family
  (at least ``_FAMILY_MIN`` blocks) has more than ``_FAMILY_SHARE`` of its text in the body, is
  body again. Outside that span nothing is added: a teaser list after the article may share the
  article's markup.
* **Comment threads.** Under a short post, 30 comments of prose are the densest text of the
  page (readability's top candidate is the thread, so the teaser rule protects it) and the model
  kept their "Reply" lines. A body block inside an element whose class or id names comments
  (``CLASS_GROUPS["comment"]``: comment, reply, respond, discussion...; not "commentary", an
  opinion column) or that carries schema.org ``Comment`` markup is dropped, unless that element
  holds the title or the first body block (the article comes first and its thread after it), and
  only when the body keeps ``_POST_LEFT`` characters without the thread.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from cubes.autoparser.class_groups import CLASS_GROUPS, class_mask
from cubes.autoparser.page import Page
from cubes.autoparser.tags import CONTEXT_TAGS, comment_markup

__all__ = ["complete_families", "drop_comments", "drop_repeats", "drop_teasers", "keep_tables", "table_html"]

_MIN_ROWS = 2
_MIN_CELLS = 4
#: a kept table outside the article span still needs this share of its text kept by the model
_TABLE_BODY_SHARE = 0.5
#: captions are short; "Photo: AP" (two words) repeats under every photo on purpose
_REPEAT_MAX = 300
#: a block that is a caption only by following a photo is a line or two: longer, it is the story going on
#: (a paragraph may repeat an earlier one on purpose; Readability's test page of images keeps each)
_AFTER_IMAGE_MAX = 200
_REPEAT_MIN_WORDS = 5
#: a table inside the article whose text is more than this share of links is navigation, not data
_TABLE_MAX_LINKS = 0.3
_CELL_TAGS = frozenset({"td", "th", "caption"})
_FIGURE_BIT = 1 << CONTEXT_TAGS.index("figure")
#: a card repeats: three teasers make a list, two may be a pair of figures
_CARD_SIBLINGS = 3
#: a card is small: a headline, a standfirst and a date; an article section holds more
_CARD_CHARS = 400
#: the linked headline: at least this long, and mostly link text
_HEADLINE_CHARS = 15
#: text the body must keep outside the cards for them to go (two short paragraphs)
_ARTICLE_LEFT = 400
_META_BIT = 1 << list(CLASS_GROUPS).index("meta")


def _table_of(el: Any) -> Any:
    node = el.getparent()
    while node is not None and node.tag != "table":
        node = node.getparent()
    return node


def _is_data_table(table: Any) -> bool:
    if table.find(".//table") is not None:
        return False  # a layout table holding other tables
    rows = table.findall(".//tr")
    return len(rows) >= _MIN_ROWS and sum(len(r.findall("td")) + len(r.findall("th")) for r in rows) >= _MIN_CELLS


def keep_tables(page: Page, body: npt.NDArray[np.bool_]) -> dict[int, Any]:
    """Marks the cells of kept data tables as body (in place).

    Returns block index -> table element for the first block of each kept table, and
    block index -> None for its other blocks (``_body_html`` renders the table once).
    """
    by_table: dict[Any, list[int]] = {}
    for i, tag in enumerate(page.tags):
        if tag in _CELL_TAGS:
            table = _table_of(page.elements[i]) if tag != "caption" else page.elements[i].getparent()
            if table is not None and table.tag == "table":
                by_table.setdefault(table, []).append(i)
    out: dict[int, Any] = {}
    if not by_table:
        return out
    body_idx = np.flatnonzero(body)
    for table, cells in by_table.items():
        if not _is_data_table(table):
            continue
        first, last = cells[0], cells[-1]
        chars = np.asarray([len(page.texts[i]) for i in cells], dtype=np.float64)
        links = sum(page.link_chars[i] for i in cells)
        inside = body_idx.size > 0 and body_idx[0] < first and body_idx[-1] > last
        inside = inside and links < _TABLE_MAX_LINKS * chars.sum()
        kept_share = chars[body[cells]].sum() / max(chars.sum(), 1.0)
        if not inside and kept_share < _TABLE_BODY_SHARE:
            continue
        body[cells] = True
        out[first] = table
        for i in cells[1:]:
            out[i] = None
    return out


def table_html(table: Any, cell: Callable[[Any], str]) -> str:
    """The table's caption, rows and cells as clean HTML; ``cell`` renders a cell's content."""
    out = ["<table>"]
    caption = table.find("caption")
    if caption is not None:
        out.append(f"<caption>{cell(caption)}</caption>")
    for row in table.iter("tr"):
        if _table_of(row) is not table:
            continue
        cells = [c for c in row if c.tag in ("td", "th")]
        if cells:
            out.append("<tr>" + "".join(f"<{c.tag}>{cell(c)}</{c.tag}>" for c in cells) + "</tr>")
    out.append("</table>")
    return "".join(out)


_WORD = re.compile(r"[^\W_]+")


def _norm(text: str) -> str:
    """Lower-case words joined by single spaces: punctuation and spacing do not make a text new."""
    return " ".join(_WORD.findall(text.lower()))


def _caption_like(page: Page) -> npt.NDArray[np.bool_]:
    pre = np.asarray(page.pre, dtype=np.int64)
    end = np.asarray(page.end_of, dtype=np.int64)[pre]
    prev = np.concatenate(([-1], pre[:-1]))
    img = np.sort(np.fromiter((im.pre for im in page.images), dtype=np.int64, count=len(page.images)))
    # an image between the previous block and the end of this one: the block sits under a photo
    after_image = np.searchsorted(img, end, side="left") > np.searchsorted(img, prev, side="right")
    ctx = np.asarray(page.ctx, dtype=np.int64)
    own = np.asarray(page.own_class, dtype=np.int64)
    tags = np.asarray(page.tags)
    chars = page.char_counts()
    marked = ((ctx & _FIGURE_BIT) != 0) | ((own & _META_BIT) != 0) | (tags == "figcaption")
    out: npt.NDArray[np.bool_] = marked | (after_image & (chars <= _AFTER_IMAGE_MAX))
    return out


def drop_repeats(page: Page, body: npt.NDArray[np.bool_]) -> int:
    """Unmarks caption-like body blocks that repeat an earlier body block (in place); returns how many."""
    caption = _caption_like(page) if page.n else np.zeros(0, dtype=bool)
    if not (caption & body).any():
        return 0
    kept: list[str] = []
    dropped = 0
    for i in np.flatnonzero(body):
        key = _norm(page.texts[i])
        if not key:
            continue
        if (
            caption[i]
            and len(page.texts[i]) <= _REPEAT_MAX
            and key.count(" ") + 1 >= _REPEAT_MIN_WORDS
            and any(key in other for other in kept)
        ):
            body[i] = False
            dropped += 1
            continue
        kept.append(key)
    return dropped


def drop_teasers(page: Page, body: npt.NDArray[np.bool_], top: int) -> int:
    """Unmarks body blocks inside teaser cards outside the ``top`` container (in place); returns how many."""
    if not body.any():
        return 0
    pre = np.asarray(page.pre, dtype=np.int64)
    chars = page.char_counts()
    link = np.asarray(page.link_chars, dtype=np.int64)
    headline = (chars >= _HEADLINE_CHARS) & (2 * link >= chars)
    if top >= 0 and page.block_el[top].tag in ("body", "html"):
        top = -1  # the densest "container" is the whole page: it protects nothing
    top_end = page.end_of[top] if top >= 0 else -1
    siblings: dict[Any, Counter[tuple[Any, str | None]]] = {}
    cards: dict[int, bool] = {}

    def is_card(c: int) -> bool:
        hit = cards.get(c)
        if hit is None:
            hit = False
            el = page.block_el.get(c)
            parent = el.getparent() if el is not None else None
            if el is not None and parent is not None and not top <= c < top_end:
                counts = siblings.get(parent)
                if counts is None:
                    counts = siblings[parent] = Counter((s.tag, s.get("class")) for s in parent)
                if counts[(el.tag, el.get("class"))] >= _CARD_SIBLINGS:
                    a, b = np.searchsorted(pre, c), np.searchsorted(pre, page.end_of[c])
                    hit = bool(chars[a:b].sum() < _CARD_CHARS and headline[a:b].any())
            cards[c] = hit
        return hit

    idx = np.flatnonzero(body)
    in_card = np.fromiter(
        (any(c >= 0 and is_card(c) for c in (page.pre[i], page.anc[i][0], page.anc[i][1])) for i in idx),
        dtype=bool,
        count=idx.size,
    )
    if not in_card.any() or chars[idx[~in_card]].sum() < _ARTICLE_LEFT:
        return 0
    body[idx[in_card]] = False
    return int(in_card.sum())


#: a comment container's class or id: the "comment" group, not an opinion column ("commentary")
_COMMENT_BIT = 1 << list(CLASS_GROUPS).index("comment")
_NOT_COMMENTS = re.compile(r"commentary|no-?comments?|comments?-(?:count|link|closed|number)", re.I)
#: text the body must keep outside the thread for it to go (a short post of two paragraphs)
_POST_LEFT = 200


def _comment_container(el: Any) -> bool:
    for attr in ("class", "id"):
        value = el.get(attr)
        if value and class_mask(value) & _COMMENT_BIT and not _NOT_COMMENTS.search(value):
            return True
    return comment_markup(el.get("itemprop"), el.get("itemtype"))


def drop_comments(page: Page, body: npt.NDArray[np.bool_], title: int = -1) -> int:
    """Unmarks body blocks inside a reader comment thread (in place); returns how many.

    A thread is an element with a comment class or id (or schema.org ``Comment`` markup) that
    holds neither the first body block nor the title: the article comes first, its comments
    after it. It goes only when the body keeps ``_POST_LEFT`` characters without it.
    """
    idx = np.flatnonzero(body)
    if idx.size == 0:
        return 0
    protected: set[int] = set()
    for i in (idx[0], title):
        if i >= 0:
            el = page.elements[i]
            while el is not None:
                protected.add(id(el))
                el = el.getparent()
    inside: dict[int, bool] = {}

    def in_thread(el: Any) -> bool:
        seen: list[int] = []
        hit = False
        while el is not None:
            key = id(el)
            known = inside.get(key)
            if known is not None:
                hit = known
                break
            seen.append(key)
            if key not in protected and _comment_container(el):
                hit = True
                break
            el = el.getparent()
        for key in seen:
            inside[key] = hit
        return hit

    drop = np.fromiter((in_thread(page.elements[i]) for i in idx), dtype=bool, count=idx.size)
    if not drop.any():
        return 0
    left = sum(len(page.texts[i]) for i in idx[~drop])
    if left < _POST_LEFT:
        return 0
    body[idx[drop]] = False
    return int(drop.sum())


#: a family of blocks (one DOM path) whose text the body holds more than this share of is the article's
_FAMILY_SHARE = 0.5
#: three paragraphs of one path make a family; two may be a pair of anything
_FAMILY_MIN = 3


def complete_families(page: Page, body: npt.NDArray[np.bool_]) -> int:
    """Marks as body the dropped blocks inside the article that belong to a family it keeps (in place).

    Returns how many blocks it added.
    """
    idx = np.flatnonzero(body)
    if idx.size < 2:
        return 0
    chars = page.char_counts()
    link = np.asarray(page.link_chars, dtype=np.float64)
    keys: dict[str, int] = {}
    family = np.fromiter((keys.setdefault(p, len(keys)) for p in page.path), dtype=np.int64, count=page.n)
    total = np.bincount(family, weights=chars)
    kept = np.bincount(family, weights=np.where(body, chars, 0.0), minlength=total.size)
    count = np.bincount(family)
    article = (count >= _FAMILY_MIN) & (kept > _FAMILY_SHARE * total)
    pos = np.arange(page.n)
    add = ~body & article[family] & (2 * link < chars) & (pos > idx[0]) & (pos < idx[-1])
    body |= add
    return int(add.sum())
