"""Turbo's vocabulary of blocks, turned into the light static HTML of our pages (docs/architecture.md section 3).

Turbo content is HTML plus blocks (https://yandex.ru/dev/turbo/doc/rss/elements/):
``<div data-block="gallery">``, ``<button formaction="tel:...">``, an accordion
of ``data-block="item" data-title=...``, share and feedback widgets, a rating in
schema.org microdata, comments ... Yandex renders them with its own JavaScript;
our pages have none, so each block becomes plain HTML with a class of our
vocabulary (``shared.pages.safehtml.CLASSES``) that the page's CSS styles:

============================  ==================================================
Turbo                         here
============================  ==================================================
header menu / breadcrumbs     ``<nav class="tc-menu">`` / ``tc-crumbs`` of links
gallery, slider, carousel     ``<div class="tc-gallery|tc-slider">`` of figures
                              (CSS scroll-snap, no script)
video in a figure             ``<figure class="tc-video"><video poster>``, the
                              figure's image as the poster
accordion                     ``<details class="tc-acc"><summary>title``
button (tel:, mailto:, URL)   ``<a class="tc-btn">``; disabled: a ``<span>``
share                         ``<nav class="tc-share">`` of share links
feedback, callback form       ``<section class="tc-feedback">`` of buttons
rating (schema.org)           ``<p class="tc-rating">★★★★☆ 4/5``
comments                      ``<section class="tc-comments">``, nested replies
cards, snippets, feed, fold   ``tc-cards`` / ``tc-card``, ``tc-feed``, ``tc-fold``
histogram                     ``<table class="tc-histogram">``
audio                         a link to the audio
search form                   a link to the site's search
related items                 ``<aside class="tc-related">`` of cards
============================  ==================================================

What has no static form is reported, never dropped silently (``Note``): ads
(``data-turbo-ad-id``) and forms that would send data are left out
(``page.content_dropped``); an embed from a host that is not an allowed video
host too; an unknown ``data-block`` keeps its content as plain HTML
(``turbo.unsupported_block``). Everything made here still goes through the
safe-HTML policy next (``sanitize.py``), which decides every URL.

Only HTML that holds one of the markers is parsed (``_MARKERS``): most items of
most feeds have none and cost one scan of their lower-cased text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection

from lxml import etree

from cubes.parser import block_media as m
from cubes.parser import block_widgets as w
from cubes.parser.blockkit import Context, Note, block_of, make
from cubes.parser.model import Related
from shared.pages.players import Players

__all__ = ["Note", "crumbs_html", "related_html", "turbo_blocks"]

#: looked for in the lower-cased fragment: eight substring scans are ~10x cheaper than one
#: case-insensitive regex of eight alternatives (126 -> 13 us on a 3.7 KB article, 1.0 -> 0.5 us on
#: a YML offer's description; every item of every feed pays it). HTML's tag and attribute names are
#: ASCII-case-insensitive, which is what lower() gives for these ASCII markers.
_MARKERS = ("data-block=", "<button", "<menu", "itemscope", "<form", "<iframe", "<video", "data-turbo-ad-id")
_PARSER = etree.HTMLParser(no_network=True, remove_blank_text=False, remove_comments=True)
_STRAY_END = re.compile(r"</\s*(?:body|html)\s*>", re.IGNORECASE)
_BODY_CLOSE = "</body>"

_BLOCKS: dict[str, Callable[[etree._Element, Context], None]] = {
    "gallery": m.gallery,
    "slider": m.slider,
    "carousel": m.slider,
    "accordion": w.accordion,
    "share": w.share,
    "widget-feedback": w.feedback,
    "comments": w.comments,
    "cards": m.cards,
    "card": m.card,
    "feed": m.feed,
    "fold": w.fold,
    "histogram": w.histogram,
    "audio": w.audio,
    "breadcrumblist": w.crumbs,
    "tc-related": w.related,
    "snippet": m.lone_snippet,
    "button": m.card_button,
    "more": m.card_button,
}


def _walk_one(el: etree._Element, ctx: Context) -> None:
    """Turn ``el`` if it is a block (its handler walks what it keeps), else walk its children."""
    tag = el.tag
    if not isinstance(tag, str):
        return
    block = block_of(el)
    if block:
        handler = _BLOCKS.get(block)
        if handler is not None:
            handler(el, ctx)
            return
        ctx.note("turbo.unsupported_block", f'the Turbo block data-block="{block}" is shown as its plain content')
    elif el.get("data-turbo-ad-id") is not None or el.get("inpage") is not None:
        m.ad(el, ctx)
        return
    elif tag == "button":
        w.button(el, ctx)
        return
    elif tag == "menu":
        w.menu(el, ctx)
        return
    elif tag == "form":
        w.form(el, ctx)
        return
    elif tag == "iframe":
        m.iframe(el, ctx)
        return
    elif tag == "header" and _top_level(el):  # the page's header; a card's own is plain
        w.header(el, ctx)
        return
    elif tag == "figure" and el.find(".//video") is not None:
        m.video_figure(el, ctx)
    elif el.get("itemscope") is not None and "schema.org/Rating" in (el.get("itemtype") or ""):
        w.rating(el, ctx)
        return
    ctx.walk(el)


def _top_level(el: etree._Element) -> bool:
    parent = el.getparent()
    return parent is not None and parent.tag == "body"


def _walk(parent: etree._Element, ctx: Context) -> None:
    for child in list(parent):
        ctx.walk_one(child)


def crumbs_html(crumbs: list[tuple[str, str]]) -> str:
    """Turbo's ``<metrics>`` breadcrumbs as the block ``turbo_blocks`` renders (put before an item's content)."""
    out = make("div", None, None, data_block="breadcrumblist")
    for url, text in crumbs:
        out.append(make("a", None, text, href=url))
    return str(etree.tostring(out, encoding="unicode", method="html"))


def related_html(links: list[Related]) -> str:
    """``<yandex:related>`` links as the block ``turbo_blocks`` renders (appended to an item's content)."""
    out = make("div", None, None, data_block="tc-related")
    for link in links:
        a = make("a", None, link.title, href=link.url)
        if link.image:
            a.set("data-img", link.image)
        out.append(a)
    return str(etree.tostring(out, encoding="unicode", method="html"))


def _has_marker(fragment: str) -> bool:
    low = fragment.lower()
    return any(marker in low for marker in _MARKERS)


def turbo_blocks(
    fragment: str, *, page_url: str, lang: str | None, video_hosts: Collection[str] | Players
) -> tuple[str, list[Note]]:
    """``fragment`` with Turbo's blocks made static HTML, and what could not be carried."""
    if not fragment or not _has_marker(fragment):
        return fragment, []
    tree = etree.fromstring(f"<html><body>{_STRAY_END.sub('', fragment)}</body></html>", _PARSER)
    body = tree.find("body") if tree is not None else None
    if body is None:
        return fragment, []
    ctx = Context(page_url, lang, video_hosts if isinstance(video_hosts, Players) else Players(video_hosts))
    ctx.walk = lambda el: _walk(el, ctx)
    ctx.walk_one = lambda el: _walk_one(el, ctx)
    _walk(body, ctx)
    out: str = etree.tostring(body, encoding="unicode", method="html")
    if not out.endswith(_BODY_CLOSE):  # "<body/>": nothing left
        return "", ctx.notes
    return out[out.index(">") + 1 : -len(_BODY_CLOSE)], ctx.notes
