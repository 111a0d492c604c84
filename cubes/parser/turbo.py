"""Yandex Turbo RSS on top of the RSS reader (docs/architecture.md section 3, parser).

What Turbo adds to RSS 2.0 (https://yandex.ru/dev/turbo/doc/rss/markup.html):

* ``<turbo:content>`` holds the whole page as HTML -- a ``<header>`` with
  ``<h1>`` (the title when ``<title>`` is missing), ``<h2>``, a cover
  ``<figure><img>`` -- then the body. It is kept whole; sanitizing happens
  later and keeps the structure;
* ``<item turbo="false">`` means *remove this page* -> a deletion;
* ``turbo:source``, ``turbo:topic``, ``yandex:related`` -> ``extra``;
* the documented limits: at most 1000 items per feed and a bounded content
  size per item. Past either the item is refused with an error that says
  which limit and by how much; the other items are kept.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from cubes.parser.model import ItemError, MediaRef, ParsedItem, ParseResult, Severity
from cubes.parser.xmltext import absolute, plain

__all__ = ["Limits", "apply_limits", "apply_turbo", "oversized"]

_H1 = re.compile(r"<h1[^>]*>(.*?)</h1>", re.S | re.I)
_HEADER = re.compile(r"<header[^>]*>(.*?)</header>", re.S | re.I)
_IMG = re.compile(r"""<img\b[^>]*?\bsrc\s*=\s*["']([^"']+)["']""", re.I)


@dataclass(frozen=True, slots=True)
class Limits:
    #: Turbo's documented limit on items per feed (settings.parser.max_items)
    max_items: int = 1000
    #: limit on one item's content HTML in bytes (settings.parser.max_item_bytes)
    max_item_bytes: int = 1024 * 1024
    #: the most of a body read whole, and of a gzipped one inflated in memory (settings.parser.max_body_bytes)
    max_body_bytes: int = 50 * 1024 * 1024


def apply_turbo(result: ParseResult) -> None:
    """Split off ``turbo="false"`` deletions; title and cover from the ``<header>``."""
    kept = []
    for it in result.items:
        flag = it.extra.pop("turbo", None)
        if flag == "false":
            result.deletions.append(it)
            continue
        if "<h" in it.content_html:  # "<header" or "<h1": what the two regexes below need
            header = _HEADER.search(it.content_html)
            if header is not None:
                if not it.title and (h1 := _H1.search(header.group(1))):
                    it.title = plain(h1.group(1))
                if (img := _IMG.search(header.group(1))) and (url := absolute(html.unescape(img.group(1)), it.base)):
                    it.media.insert(0, MediaRef(url, "image", "cover"))
        if flag == "true" and not it.content_html.strip():
            result.errors.append(
                ItemError(
                    "turbo item has no <turbo:content>; nothing to build the page from",
                    it.line,
                    None,
                    it.index,
                    it.link,
                    Severity.error,
                    code="turbo.no_content",
                )
            )
            continue
        kept.append(it)
    result.items = kept


def apply_limits(result: ParseResult, limits: Limits) -> None:
    """Refuse items past the per-feed count and items whose content is too large, each with its reason."""
    kept = []
    for n, it in enumerate(result.items):
        if n >= limits.max_items:
            result.errors.append(
                ItemError(
                    f"item {n + 1} is past the limit of {limits.max_items} items per feed; split the feed",
                    it.line,
                    None,
                    it.index,
                    it.link,
                    code="item.too_many",
                )
            )
            continue
        if (refused := oversized(it, limits)) is not None:
            result.errors.append(refused)
            continue
        kept.append(it)
    result.items = kept


def oversized(it: ParsedItem, limits: Limits) -> ItemError | None:
    """The refusal of an item whose content is larger than ``limits.max_item_bytes``, else None.

    Every format's items are held to it (an RSS item, a JSON document, a YML offer's description):
    the work an item costs downstream (sanitizing, rendering) grows with its size.
    """
    # len(str) <= bytes <= 4 * len(str): the exact byte count is only computed near the limit
    size = len(it.content_html)
    if size * 4 > limits.max_item_bytes:
        size = len(it.content_html.encode("utf-8", "surrogatepass"))
    if size <= limits.max_item_bytes:
        return None
    return ItemError(
        f"content is {size} bytes, over the limit of {limits.max_item_bytes} bytes per item",
        it.line,
        None,
        it.index,
        it.link,
        code="item.too_large",
    )
