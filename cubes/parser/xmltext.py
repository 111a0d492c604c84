"""Namespaces and text helpers shared by the RSS, Atom and Turbo readers (docs/architecture.md section 3, parser)."""

from __future__ import annotations

import html
import mimetypes
import re
from urllib.parse import urljoin

from lxml import etree

from cubes.parser.model import MediaRef

__all__ = [
    "ATOM03",
    "ATOM10",
    "CONTENT",
    "DC",
    "DCTERMS",
    "ITUNES",
    "MEDIA_NS",
    "RDF",
    "TURBO",
    "XHTML",
    "YANDEX",
    "absolute",
    "inner_html",
    "inner_xhtml",
    "media_of",
    "plain",
    "text_of",
]

RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
ATOM10 = "http://www.w3.org/2005/Atom"
ATOM03 = "http://purl.org/atom/ns#"
DC = "http://purl.org/dc/elements/1.1/"
DCTERMS = "http://purl.org/dc/terms/"
CONTENT = "http://purl.org/rss/1.0/modules/content/"
ITUNES = "http://www.itunes.com/dtds/podcast-1.0.dtd"
TURBO = "http://turbo.yandex.ru"
YANDEX = "http://news.yandex.ru"
XHTML = "http://www.w3.org/1999/xhtml"
#: Media RSS is published under both spellings
MEDIA_NS = ("http://search.yahoo.com/mrss/", "http://search.yahoo.com/mrss")

_TAGS = re.compile(r"<[^>]*>")
_XMLNS = re.compile(r'\sxmlns(:\w+)?="[^"]*"')
_SPACE = re.compile(r"\s+")


def text_of(el: etree._Element) -> str:
    """All text of an element (child elements' text too), stripped."""
    if len(el) == 0:
        return (el.text or "").strip()
    return "".join(el.itertext()).strip()


def inner_html(el: etree._Element) -> str:
    """The element's content as markup: its text plus its children serialized (naked HTML in a feed)."""
    if len(el) == 0:
        return el.text or ""
    parts = [html.escape(el.text, quote=False) if el.text else ""]
    for child in el:
        parts.append(etree.tostring(child, encoding="unicode", with_tail=False))
        if child.tail:
            parts.append(html.escape(child.tail, quote=False))
    # serialized children carry xmlns declarations of their namespace; HTML does not want them
    return _XMLNS.sub("", "".join(parts))


def inner_xhtml(el: etree._Element) -> str:
    """XHTML content (Atom ``type="xhtml"``, RSS ``xhtml:body``) as HTML.

    Unlike a feed's naked HTML, every text node here is *text*: ``Use the &lt;b&gt; tag`` stays
    escaped (``inner_html`` of an element without children returned its text as markup, and the
    sanitizer then removed the "tag" or made an image of an escaped ``<img>``). Elements written with
    a prefix (``<h:ul>``, ``<xhtml:a href>``) lose it, as a browser reading XHTML sees them, so lists
    and links survive the sanitizer.
    """
    parts = [html.escape(el.text, quote=False) if el.text else ""]
    for child in el:
        if not isinstance(child.tag, str):  # a comment or PI the parser kept
            if child.tail:
                parts.append(html.escape(child.tail, quote=False))
            continue
        for node in child.iter():
            if isinstance(node.tag, str) and node.tag.startswith("{"):
                node.tag = node.tag.split("}", 1)[1]
        etree.cleanup_namespaces(child)
        parts.append(etree.tostring(child, encoding="unicode", method="html", with_tail=False))
        if child.tail:
            parts.append(html.escape(child.tail, quote=False))
    return _XMLNS.sub("", "".join(parts))


def plain(markup: str) -> str:
    """Text of a small piece of HTML (a title given as HTML): tags dropped, entities decoded."""
    if "<" not in markup and "&" not in markup:
        return markup.strip()
    return _SPACE.sub(" ", html.unescape(_TAGS.sub(" ", markup))).strip()


def absolute(url: str | None, base: str | None) -> str | None:
    """``url`` resolved against ``base`` (xml:base or the feed URL); None stays None."""
    if not url:
        return None
    url = url.strip()
    if not url:
        return None
    if base and not url.startswith(("http://", "https://")):
        try:
            return urljoin(base, url)
        except ValueError:
            return url
    return url


def _int(value: str | None) -> int | None:
    if value and value.isdigit() and len(value) < 7:
        return int(value)
    return None


def _kind(mime: str | None, medium: str | None) -> str | None:
    """image / video, or None for what a Turbo page cannot show (audio, documents)."""
    if medium in ("image", "video"):
        return medium
    if mime:
        major = mime.split("/", 1)[0].lower()
        if major in ("image", "video"):
            return major
        return None
    return "image" if medium is None else None


def media_of(el: etree._Element, local: str, base: str | None) -> list[MediaRef]:
    """Media RSS ``content`` / ``thumbnail`` / ``group`` and RSS ``enclosure`` elements as MediaRefs."""
    if local == "group":
        out: list[MediaRef] = []
        for child in el:
            if isinstance(child.tag, str):
                out.extend(media_of(child, etree.QName(child).localname, base))
        return out
    url = absolute(el.get("url") or el.get("href"), base)
    if not url:
        return []
    if local == "thumbnail":
        return [MediaRef(url, "image", "media:thumbnail", None, _int(el.get("width")), _int(el.get("height")))]
    mime = el.get("type")
    if local == "enclosure":
        # an enclosure without a type is judged by its file extension
        kind = _kind(mime or mimetypes.guess_type(url)[0], None if mime else "other")
        return [MediaRef(url, kind, "enclosure", mime)] if kind else []
    if local == "content":
        kind = _kind(mime, el.get("medium"))
        if kind is None:
            return []
        return [MediaRef(url, kind, "media:content", mime, _int(el.get("width")), _int(el.get("height")))]
    return []
