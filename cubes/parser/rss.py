"""RSS 0.9x / 1.0 (RDF) / 2.0 and Turbo RSS items read straight from an lxml tree (docs/architecture.md section 3).

This is the fast path: one pass over each item's children with a tag ->
field table, no per-element namespace parsing. Its choices follow
feedparser's so the two agree (feedparser is the fallback for bodies lxml
cannot read, and the oracle of the benchmark's gates):

* ``pubDate`` / ``dcterms:issued`` -> published; ``dc:date`` /
  ``dcterms:modified`` / ``atom:updated`` -> updated;
* the link is ``<link>``, else an ``atom:link``, else a ``<guid>`` that is
  not ``isPermaLink="false"``;
* content is ``turbo:content``, else ``content:encoded``, else
  ``xhtml:body``, else Yandex News' ``yandex:full-text``, else ``description`` (then also the summary), else
  ``dc:description``, else ``itunes:summary`` (a podcast's show notes);
* Turbo's ``<metrics>`` breadcrumbs are the item's ``crumbs`` (rendered above the content);
  Turbo and Yandex markup that is not rendered is told, never dropped silently: an item's as a
  note (``turbo.extended_html_ignored``, ``turbo.markup_ignored``), the channel's analytics and
  ad networks in ``FeedMeta.ignored`` (``turbo.analytics_ignored``, ``turbo.ads_ignored``).
"""

from __future__ import annotations

import html

from lxml import etree

from cubes.parser.dates import parse_date
from cubes.parser.model import FeedMeta, Note, ParsedItem, Related
from cubes.parser.xmltext import (
    ATOM10,
    CONTENT,
    DC,
    DCTERMS,
    ITUNES,
    MEDIA_NS,
    RDF,
    TURBO,
    XHTML,
    YANDEX,
    absolute,
    inner_html,
    inner_xhtml,
    media_of,
    plain,
    text_of,
)

__all__ = ["ITEM_TAGS", "read_rss_items", "rss_meta"]

#: namespaces the core RSS elements are found in: none (0.9x/2.0), RSS 1.0, RSS 0.90, Userland's
_RSS_NS = (
    "",
    "http://purl.org/rss/1.0/",
    "http://my.netscape.com/rdf/simple/0.9/",
    "http://backend.userland.com/rss2",
    "http://backend.userland.com/rss",
)


def _q(ns: str, local: str) -> str:
    return f"{{{ns}}}{local}" if ns else local


ITEM_TAGS = tuple(_q(ns, "item") for ns in _RSS_NS)

# field codes; ints compare faster than strings in the hot loop
(
    _TITLE,
    _LINK,
    _GUID,
    _DESC,
    _ENCODED,
    _PUB,
    _UPD,
    _AUTHOR,
    _MEDIA,
    _ATOMLINK,
    _TURBO_CONTENT,
    _TURBO_SOURCE,
    _TURBO_TOPIC,
    _RELATED,
    _CATEGORY,
    _ENCLOSURE,
    _DCTITLE,
    _XBODY,
    _OTHER_DESC,
    _METRICS,
    _EXTENDED,
    _FULL_TEXT,
) = range(22)

_FIELDS: dict[str, int] = {}
for _ns in _RSS_NS:
    _FIELDS.update(
        {
            _q(_ns, "title"): _TITLE,
            _q(_ns, "link"): _LINK,
            _q(_ns, "guid"): _GUID,
            _q(_ns, "description"): _DESC,
            _q(_ns, "pubDate"): _PUB,
            _q(_ns, "author"): _AUTHOR,
            _q(_ns, "category"): _CATEGORY,
            _q(_ns, "enclosure"): _ENCLOSURE,
            # Atom-style dates without a namespace; feedparser reads them too
            _q(_ns, "published"): _PUB,
            _q(_ns, "issued"): _PUB,
            _q(_ns, "updated"): _UPD,
            _q(_ns, "modified"): _UPD,
        }
    )
_FIELDS.update(
    {
        _q(CONTENT, "encoded"): _ENCODED,
        _q(DC, "date"): _UPD,
        _q(DC, "creator"): _AUTHOR,
        _q(DC, "title"): _DCTITLE,
        _q(DC, "description"): _OTHER_DESC,
        _q(ITUNES, "summary"): _OTHER_DESC,
        _q(XHTML, "body"): _XBODY,
        _q(DCTERMS, "issued"): _PUB,
        _q(DCTERMS, "modified"): _UPD,
        _q(ITUNES, "author"): _AUTHOR,
        _q(ATOM10, "link"): _ATOMLINK,
        _q(ATOM10, "updated"): _UPD,
        _q(ATOM10, "published"): _PUB,
        _q(TURBO, "content"): _TURBO_CONTENT,
        _q(TURBO, "source"): _TURBO_SOURCE,
        _q(TURBO, "topic"): _TURBO_TOPIC,
        _q(YANDEX, "related"): _RELATED,
        "metrics": _METRICS,
        _q(YANDEX, "full-text"): _FULL_TEXT,
        _q(TURBO, "extendedHtml"): _EXTENDED,
    }
)
#: Turbo elements of an item that are not rendered and need no word: ``turbo:topic`` is read above, the
#: rest of these are the channel's; anything else in the Turbo or Yandex namespaces is told as ignored
_TOLD_NAMESPACES = (f"{{{TURBO}}}", f"{{{YANDEX}}}")
for _m in MEDIA_NS:
    for _local in ("content", "thumbnail", "group"):
        _FIELDS[_q(_m, _local)] = _MEDIA


def _crumbs(el: etree._Element, base: str | None) -> list[tuple[str, str]]:
    """``<metrics><yandex><breadcrumblist><breadcrumb url= text=/>``: the page's place in the site."""
    out = []
    for crumb in el.iter("breadcrumb"):
        url, text = absolute(crumb.get("url"), base), " ".join((crumb.get("text") or "").split())
        if url and text:
            out.append((url, text[:200]))
    return out[:_MAX_CRUMBS]


#: a site's path from its root is a few steps; a longer list is not breadcrumbs
_MAX_CRUMBS = 10


def _related(el: etree._Element, base: str | None) -> list[Related]:
    """``<yandex:related><link url= img=>title</link>``: the pages Turbo shows below this one."""
    out = []
    for link in el:
        if isinstance(link.tag, str) and (url := absolute(link.get("url"), base)):
            out.append(Related(url, text_of(link), absolute(link.get("img"), base)))
    return out


_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"


def _read_item(el: etree._Element, index: int, base: str | None) -> ParsedItem:
    it = ParsedItem(index=index, base=base, line=el.sourceline, language=el.get(_XML_LANG))
    desc = encoded = turbo = xbody = other_desc = full_text = None
    link = atom_link = guid_link = dctitle = None
    authors: list[str] = []
    for c in el:
        code = _FIELDS.get(c.tag)
        if code is None:
            if isinstance(c.tag, str) and c.tag.startswith(_TOLD_NAMESPACES):
                name = c.prefix + ":" + etree.QName(c).localname if c.prefix else etree.QName(c).localname
                it.notes.append(Note("turbo.markup_ignored", f"<{name}> is not rendered on the Turbo page"))
            continue
        if code == _TITLE:
            it.title = text_of(c) if len(c) else (c.text or "").strip()
        elif code == _LINK:
            link = (c.text or "").strip() or c.get("href") or link
        elif code == _GUID:
            it.guid = (c.text or "").strip() or None
            # the attribute's case varies in the wild (isPermalink); feedparser ignores it too
            permalink = c.get("isPermaLink") or c.get("isPermalink") or c.get("ispermalink") or "true"
            if it.guid and permalink.strip().lower() != "false":
                guid_link = it.guid
        elif code == _DESC:
            desc = inner_html(c)
        elif code == _ENCODED:
            encoded = inner_html(c)
        elif code == _FULL_TEXT:
            # Yandex News' whole article, as plain text: the item's article when it has no other
            full_text = text_of(c)
        elif code == _TURBO_CONTENT:
            turbo = inner_html(c)
        elif code == _PUB:
            it.published = it.published or parse_date(c.text)
        elif code == _UPD:
            it.updated = it.updated or parse_date(c.text)
        elif code == _AUTHOR:
            if c.text and c.text.strip():
                authors.append(c.text.strip())
        elif code in (_MEDIA, _ENCLOSURE):
            local = c.tag.rsplit("}", 1)[-1]
            it.media.extend(media_of(c, local, base))
        elif code == _ATOMLINK:
            rel = c.get("rel", "alternate")
            if rel == "alternate" and atom_link is None:
                atom_link = c.get("href")
            elif rel == "enclosure":
                it.media.extend(media_of(c, "enclosure", base))
        elif code == _DCTITLE:
            dctitle = text_of(c)
        elif code == _XBODY:
            xbody = inner_xhtml(c)
        elif code == _OTHER_DESC:
            # dc:description before itunes:summary, whatever their order (both are text)
            if other_desc is None or c.tag == f"{{{DC}}}description":
                other_desc = inner_html(c)
        elif code == _TURBO_SOURCE:
            it.extra["turbo:source"] = (c.text or "").strip()
        elif code == _TURBO_TOPIC:
            it.extra["turbo:topic"] = (c.text or "").strip()
        elif code == _RELATED:
            it.related = _related(c, base)
            it.extra["yandex:related"] = [r.url for r in it.related]
        elif code == _METRICS:
            it.crumbs = _crumbs(c, base)
        elif code == _EXTENDED:
            if (c.text or "").strip().lower() == "true":
                it.notes.append(
                    Note("turbo.extended_html_ignored", "turbo:extendedHtml: the item's own styles are not carried")
                )
        elif code == _CATEGORY:
            cats = it.extra.setdefault("category", [])
            if isinstance(cats, list) and c.text and c.text.strip():
                cats.append(c.text.strip())
    if it.title is None and dctitle:
        it.title = dctitle
    if it.title is not None:
        it.title = plain(it.title)
    if authors:
        it.author = authors[0]
    if it.guid is None:
        about = el.get(f"{{{RDF}}}about")
        if about:
            it.guid = about
    it.link = absolute(link or atom_link or guid_link, base)
    if turbo is not None:
        it.content_html = turbo
        it.summary = desc
    elif encoded is not None:
        it.content_html = encoded
        it.summary = desc
    elif xbody is not None:
        it.content_html = xbody
        it.summary = desc
    elif full_text:
        it.content_html = "".join(f"<p>{html.escape(p)}</p>" for p in full_text.split("\n") if p.strip())
        it.summary = desc
    elif desc is not None:
        it.content_html = desc
        it.summary_only = True
    elif other_desc is not None:
        it.content_html = other_desc
        it.summary_only = True
    if el.get("turbo") is not None:
        it.extra["turbo"] = el.get("turbo", "").strip().lower()
    return it


def _channel_markup(el: etree._Element, local: str, meta: FeedMeta) -> None:
    """The channel's Turbo markup that is not rendered, told once per fetch (``FeedMeta.ignored``)."""
    if local == "analytics":
        what = " ".join(f"{k}={v!r}" for k, v in el.attrib.items() if k in ("type", "id")) or "a counter"
        meta.ignored.append(("turbo.analytics_ignored", f"turbo:analytics ({what}) is not installed", el.sourceline))
    elif local == "adNetwork":
        what = " ".join(f"{k}={v!r}" for k, v in el.attrib.items() if k in ("type", "id", "turbo-ad-id")) or "a block"
        meta.ignored.append(("turbo.ads_ignored", f"turbo:adNetwork ({what}) is not shown", el.sourceline))
    elif local == "extendedHtml":
        if (el.text or "").strip().lower() == "true":
            message = "turbo:extendedHtml: the feed's own styles are not carried"
            meta.ignored.append(("turbo.extended_html_ignored", message, el.sourceline))
    else:
        meta.ignored.append(("turbo.markup_ignored", f"<{el.prefix or 'turbo'}:{local}> is not used", el.sourceline))


def read_rss_items(root: etree._Element, feed_url: str | None, *, xml_base: bool) -> list[ParsedItem]:
    """Every ``<item>`` in the tree, in document order (RSS 1.0 items sit beside the channel)."""
    items = []
    for i, el in enumerate(root.iter(*ITEM_TAGS)):
        # el.base walks xml:base up the tree; only pay for it when the body uses xml:base
        base = (el.base or feed_url) if xml_base else feed_url
        items.append(_read_item(el, i, base))
    return items


def rss_meta(root: etree._Element, feed_url: str | None) -> FeedMeta:
    meta = FeedMeta(parser="lxml")
    channel = None
    for ns in _RSS_NS:
        channel = root.find(_q(ns, "channel"))
        if channel is not None:
            break
    if channel is None:
        channel = root
    for c in channel:
        tag = c.tag
        if not isinstance(tag, str):
            continue
        local = tag.rsplit("}", 1)[-1]
        if local == "title" and meta.title is None:
            meta.title = text_of(c)
        elif local == "link" and tag.startswith(f"{{{ATOM10}}}"):
            rel = c.get("rel")
            if rel == "hub":
                meta.hub = c.get("href")
            elif rel == "self":
                meta.self_url = c.get("href")
        elif local == "link" and meta.link is None:
            meta.link = absolute(text_of(c) or None, feed_url)
        elif local == "language":
            meta.language = text_of(c)
        elif tag.startswith(_TOLD_NAMESPACES):
            _channel_markup(c, local, meta)
    meta.version = "rss" + (root.get("version") or ("1.0" if root.tag == f"{{{RDF}}}RDF" else ""))
    return meta
