"""Atom 1.0 and Atom 0.3 entries read straight from an lxml tree (docs/architecture.md section 3, parser).

Atom 0.3 differs from 1.0 in names (``issued`` / ``modified`` for
``published`` / ``updated``), its namespace, and ``mode="escaped|xml|base64"``
on text constructs; both are read by the same table. Text constructs follow
RFC 4287: ``type="text"`` is escaped into HTML, ``html`` is taken as is,
``xhtml`` is the serialized content of its wrapping ``<div>``.
"""

from __future__ import annotations

import base64
import binascii
import html

from lxml import etree

from cubes.parser.dates import parse_date
from cubes.parser.model import FeedMeta, ParsedItem
from cubes.parser.xmltext import ATOM03, ATOM10, MEDIA_NS, XHTML, absolute, inner_html, inner_xhtml, media_of, plain

__all__ = ["ENTRY_TAGS", "MISPLACED_ITEM_TAGS", "atom_meta", "read_atom_entries"]

ENTRY_TAGS = (f"{{{ATOM10}}}entry", f"{{{ATOM03}}}entry")
#: RSS items written inside an Atom feed (a template mixing the two): read as entries, with a warning
MISPLACED_ITEM_TAGS = (f"{{{ATOM10}}}item", f"{{{ATOM03}}}item", "item")

_TITLE, _LINK, _ID, _CONTENT, _SUMMARY, _PUB, _UPD, _AUTHOR, _MEDIA = range(9)
_FIELDS: dict[str, int] = {}
for _ns in (ATOM10, ATOM03):
    _FIELDS.update(
        {
            f"{{{_ns}}}title": _TITLE,
            f"{{{_ns}}}link": _LINK,
            f"{{{_ns}}}id": _ID,
            f"{{{_ns}}}content": _CONTENT,
            f"{{{_ns}}}summary": _SUMMARY,
            f"{{{_ns}}}published": _PUB,
            f"{{{_ns}}}issued": _PUB,
            f"{{{_ns}}}updated": _UPD,
            f"{{{_ns}}}modified": _UPD,
            f"{{{_ns}}}author": _AUTHOR,
            # the RSS names, as a feed mixing the two writes them (read the way the RSS reader does)
            f"{{{_ns}}}description": _SUMMARY,
            f"{{{_ns}}}pubDate": _PUB,
            f"{{{_ns}}}guid": _ID,
        }
    )
for _m in MEDIA_NS:
    for _local in ("content", "thumbnail", "group"):
        _FIELDS[f"{{{_m}}}{_local}"] = _MEDIA


_BINARY = ("application/octet-stream", "image/", "audio/", "video/", "application/pdf", "application/zip")


def _text_construct(el: etree._Element) -> str:
    """An Atom text construct as HTML."""
    kind = (el.get("type") or "text").lower()
    mode = (el.get("mode") or "").lower()  # Atom 0.3
    if mode == "base64" or kind.startswith(_BINARY):
        # RFC 4287 4.1.3.3: binary media types are base64 (Atom 0.3 says it with mode="base64");
        # an unknown non-binary type is read as text, as gofeed and feedparser do
        try:
            return base64.b64decode(el.text or "").decode("utf-8", "replace")
        except (binascii.Error, ValueError):
            return ""
    if kind in ("xhtml", "application/xhtml+xml") or mode == "xml":
        div = el[0] if len(el) == 1 and el[0].tag in (f"{{{XHTML}}}div", "div") else el
        return inner_xhtml(div)
    if kind in ("html", "text/html") or mode == "escaped":
        return inner_html(el)
    if len(el):  # declared text but carries markup: keep the markup, as feedparser does
        return inner_html(el)
    return html.escape(el.text or "", quote=False)


def _is_html(mime: str | None) -> bool:
    return mime is None or mime in ("text/html", "application/xhtml+xml")


_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"


def _read_entry(el: etree._Element, index: int, base: str | None) -> ParsedItem:
    it = ParsedItem(index=index, base=base, line=el.sourceline, language=el.get(_XML_LANG))
    content = summary = None
    alternate = first_link = None
    alt_html = False
    for c in el:
        code = _FIELDS.get(c.tag)
        if code is None:
            continue
        if code == _TITLE:
            t = _text_construct(c)
            it.title = plain(t) if c.get("type", "text") != "text" or "<" in t or "&" in t else t.strip()
        elif code == _LINK:
            rel = c.get("rel", "alternate")
            href = c.get("href") or (c.text or "").strip() or None  # RSS style: the URL as text
            if rel == "alternate":
                # the first HTML alternate wins (like feedparser); any alternate beats other rels
                if alternate is None or (not alt_html and _is_html(c.get("type"))):
                    alternate, alt_html = href, _is_html(c.get("type"))
            elif rel == "enclosure":
                it.media.extend(media_of(c, "enclosure", base))
            first_link = first_link or href
        elif code == _ID:
            it.guid = (c.text or "").strip() or None
        elif code == _CONTENT:
            if content is None:
                src = c.get("src")
                content = _text_construct(c) if src is None else ""
        elif code == _SUMMARY:
            summary = _text_construct(c)
        elif code == _PUB:
            it.published = it.published or parse_date(c.text)
        elif code == _UPD:
            it.updated = it.updated or parse_date(c.text)
        elif code == _AUTHOR:
            if it.author is None:
                name = c.find(f"{{{ATOM10}}}name")
                if name is None:
                    name = c.find(f"{{{ATOM03}}}name")
                it.author = (name.text or "").strip() if name is not None else None
        elif code == _MEDIA:
            it.media.extend(media_of(c, c.tag.rsplit("}", 1)[-1], base))
    it.link = absolute(alternate or first_link, base)
    if content:
        it.content_html = content
        it.summary = summary
    elif summary is not None:
        it.content_html = summary
        it.summary_only = True
    return it


def read_atom_entries(
    root: etree._Element, feed_url: str | None, *, xml_base: bool, tags: tuple[str, ...] = ENTRY_TAGS
) -> list[ParsedItem]:
    items = []
    for i, el in enumerate(root.iter(*tags)):
        base = (el.base or feed_url) if xml_base else feed_url
        items.append(_read_entry(el, i, base))
    return items


def atom_meta(root: etree._Element, feed_url: str | None) -> FeedMeta:
    ns = ATOM03 if root.tag == f"{{{ATOM03}}}feed" else ATOM10
    meta = FeedMeta(parser="lxml", version="atom03" if ns == ATOM03 else "atom10")
    for c in root:
        if c.tag == f"{{{ns}}}title":
            meta.title = plain(_text_construct(c))
        elif c.tag == f"{{{ns}}}link":
            rel = c.get("rel", "alternate")
            if rel == "hub":
                meta.hub = c.get("href")
            elif rel == "self":
                meta.self_url = c.get("href")
            elif rel == "alternate" and meta.link is None:
                meta.link = absolute(c.get("href"), feed_url)
    meta.language = root.get(_XML_LANG)
    return meta
