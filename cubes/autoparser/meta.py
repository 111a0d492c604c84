"""Page metadata from ``<head>``, JSON-LD and the page's own markup (docs/architecture.md section 3, autoparser).

Title candidates (``og:title``, ``<title>``), ``<link rel=canonical>``, the published and
modified dates (``article:published_time`` / ``article:modified_time`` and friends, JSON-LD
``datePublished`` / ``dateModified``, then a ``<time datetime>`` of the body: one marked
``pubdate`` or ``itemprop=datePublished`` first), the author (JSON-LD ``author``, ``<meta
name=author>`` and its CMS spellings, ``rel=author`` / ``itemprop=author``), the language
(``<html lang>``, ``og:locale``, ``Content-Language``, JSON-LD ``inLanguage``), the cover
image (``og:image``, ``twitter:image``, JSON-LD ``image``), whether the page declares itself
an article (``og:type=article`` or a JSON-LD ``*Article`` / ``BlogPosting`` type) and the
JSON-LD ``articleBody`` (a feature: blocks whose words it contains are likely body).

What a page declares is read here, in one pass over ``<head>`` and its JSON-LD: that costs
microseconds. A page that declares no date at all is given to htmldate (``find_date``, its
fast mode, the original date): it knows the dates CMSs write in URLs, bylines and their own
classes, which a few rules of ours would not. It parses the page again (~2 ms), so it runs
only on those pages, and only in the cube (``undeclared_date``). trafilatura's metadata finds
the same author and date but costs ~13 ms a page, more than our whole extraction: not used.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urljoin

import orjson
from lxml import etree

__all__ = ["PageMeta", "parse_date", "read_meta", "undeclared_date"]

_DATE_KEYS = (
    "article:published_time",
    "og:published_time",
    "datepublished",
    "date",
    "dc.date",
    "dc.date.issued",
    "dcterms.created",
    "pubdate",
    "publishdate",
    "sailthru.date",
    "parsely-pub-date",
)
_MODIFIED_KEYS = (
    "article:modified_time",
    "og:updated_time",
    "datemodified",
    "dc.date.modified",
    "dcterms.modified",
    "last-modified",
)
_AUTHOR_KEYS = ("author", "article:author", "dc.creator", "parsely-author", "sailthru.author", "byl")
#: an author is a name, not a paragraph
_AUTHOR_MAX = 200
_TAG = re.compile(r"<[^>]*>")
_BY = re.compile(r"^(?:by|von|par|por|автор:?)\s+", re.I)
_ARTICLE_TYPES = {
    "article",
    "newsarticle",
    "blogposting",
    "reportagenewsarticle",
    "techarticle",
    "scholarlyarticle",
    "analysisnewsarticle",
    "opinionnewsarticle",
    "report",
    "liveblogposting",
}


@dataclass
class PageMeta:
    og_title: str = ""
    canonical: str = ""
    published_at: datetime | None = None
    image: str = ""
    declared_article: bool = False
    base_url: str = ""
    #: JSON-LD ``articleBody`` as plain text ("" when the page has none)
    article_body: str = ""
    #: ``og:description`` or ``<meta name=description>`` (the completeness guard compares with it)
    description: str = ""
    modified_at: datetime | None = None
    author: str = ""
    #: the page's language tag as the page gives it (``shared.pages.i18n.language`` checks it)
    lang: str = ""


def parse_date(value: str) -> datetime | None:
    """An ISO-8601-ish date (``2018-04-05T06:00``, ``...Z``, ``2018-04-05``); naive means UTC."""
    v = value.strip()
    if not v:
        return None
    if v.endswith("Z"):
        v = v[:-1] + "+00:00"
    try:
        dt = datetime.fromisoformat(v)
    except ValueError:
        try:
            dt = datetime.fromisoformat(v[:10])
        except ValueError:
            return None
    return dt if dt.tzinfo is not None else dt.replace(tzinfo=UTC)


def _load_jsonld(text: str) -> Any:
    """The JSON of a ld+json script; tolerates the ``<![CDATA[ ... ]]>`` and ``<!-- -->`` wrappers CMSs add."""
    t = text.strip()
    for opening, closing in (("<![CDATA[", "]]>"), ("<!--", "-->")):
        if t.startswith(opening):
            t = t[len(opening) :]
            t = t[: -len(closing)] if t.rstrip().endswith(closing) else t
            t = t.strip().removesuffix(closing).strip()
    try:
        return orjson.loads(t)
    except orjson.JSONDecodeError:
        return None  # broken JSON-LD is common; the rest of the page still counts


def _walk_jsonld(node: Any, meta: PageMeta) -> None:
    if isinstance(node, list):
        for item in node:
            _walk_jsonld(item, meta)
        return
    if not isinstance(node, dict):
        return
    types = node.get("@type")
    names = [types] if isinstance(types, str) else (types if isinstance(types, list) else [])
    if any(isinstance(t, str) and t.lower() in _ARTICLE_TYPES for t in names):
        meta.declared_article = True
        if meta.published_at is None and isinstance(node.get("datePublished"), str):
            meta.published_at = parse_date(node["datePublished"])
        if meta.modified_at is None and isinstance(node.get("dateModified"), str):
            meta.modified_at = parse_date(node["dateModified"])
        if not meta.og_title and isinstance(node.get("headline"), str):
            meta.og_title = node["headline"].strip()
        if not meta.author:
            meta.author = _person(node.get("author"))
        if not meta.lang and isinstance(node.get("inLanguage"), str):
            meta.lang = node["inLanguage"].strip()
        if not meta.image:
            meta.image = _image_url(node.get("image"))
        body = node.get("articleBody")
        if not meta.article_body and isinstance(body, str):
            # some CMSs put HTML in it; tags only separate words here
            meta.article_body = _TAG.sub(" ", body)
    if "@graph" in node:
        _walk_jsonld(node["@graph"], meta)


def _person(value: Any) -> str:
    """The name of a JSON-LD ``author``: a string, a Person, or the first of a list of them."""
    if isinstance(value, list):
        value = next((v for v in value if v), None)
    if isinstance(value, dict):
        value = value.get("name")
    return _author(value) if isinstance(value, str) else ""


def _author(value: str) -> str:
    """An author's name as shown ("By Ann Writer" is Ann Writer); "" for a URL or a paragraph."""
    name = _BY.sub("", " ".join(value.split()))
    if not name or len(name) > _AUTHOR_MAX or "://" in name or name.startswith("@"):
        return ""
    return name


def _image_url(value: Any) -> str:
    """The URL of a JSON-LD ``image``: a string, an ImageObject, or the first of a list."""
    if isinstance(value, list):
        value = next((v for v in value if v), None)
    if isinstance(value, dict):
        value = value.get("url") or value.get("contentUrl")
    return value.strip() if isinstance(value, str) else ""


#: the body's <time> elements that say they are the publication date, then any with a datetime
_TIME_PUBLISHED = etree.XPath(
    "//body//time[@datetime][@pubdate or @itemprop='datePublished' or contains(@class, 'publish')]"
)
_TIME_ANY = etree.XPath("(//body//time[@datetime])[1]")
_AUTHOR_MARKUP = etree.XPath(
    "(//body//*[@rel='author' or @itemprop='author'][not(ancestor::*[contains(@class, 'comment')])])[1]"
)


def _body_meta(root: Any, meta: PageMeta) -> None:
    """What the body's own markup says when the head said nothing: <time>, rel / itemprop author."""
    if meta.published_at is None:
        for el in (*_TIME_PUBLISHED(root), *_TIME_ANY(root)):
            meta.published_at = parse_date(el.get("datetime") or "")
            if meta.published_at is not None:
                break
    if not meta.author:
        for el in _AUTHOR_MARKUP(root):
            name = el.get("content") or " ".join(el.itertext())
            meta.author = _author(name)


def undeclared_date(html: bytes | str) -> datetime | None:
    """htmldate's reading of a page that declares no date (see the module docstring); None if it finds none.

    The cube calls it for a page ``read_meta`` found no date on; the extraction itself does not
    (the library's ``extract_article`` and the benchmarks read text, not dates).
    """
    import logging

    from htmldate import find_date

    logging.getLogger("htmldate").setLevel(logging.ERROR)
    try:
        found = find_date(html, extensive_search=False, original_date=True, outputformat="%Y-%m-%d")
    except (ValueError, TypeError):
        return None  # a page htmldate cannot read is a page without a date
    return parse_date(found) if found else None


def read_meta(root: Any, url: str = "") -> PageMeta:
    """Metadata of a parsed page; relative URLs are resolved against ``<base href>`` or ``url``."""
    meta = PageMeta(base_url=url)
    # the page's own lang attribute first: a locale in a meta tag is often the CMS's default
    meta.lang = (root.get("lang") or root.get("{http://www.w3.org/XML/1998/namespace}lang") or "").strip()
    head = root.find("head")
    if head is not None:
        _head_meta(root, head, meta)
    _body_meta(root, meta)
    if meta.image:
        meta.image = urljoin(meta.base_url, meta.image)
    return meta


def _head_meta(root: Any, head: Any, meta: PageMeta) -> None:
    base = head.find("base")
    if base is not None and base.get("href"):
        meta.base_url = urljoin(meta.base_url, base.get("href").strip())
    for el in head.iter("meta", "link", "script"):
        tag = el.tag
        if tag == "meta":
            key = (el.get("property") or el.get("name") or el.get("itemprop") or el.get("http-equiv") or "").lower()
            content = (el.get("content") or "").strip()
            if not key or not content:
                continue
            if key == "og:title" and not meta.og_title:
                meta.og_title = " ".join(content.split())
            elif key in ("og:description", "description") and (key == "og:description" or not meta.description):
                meta.description = " ".join(content.split())
            elif key in ("og:image", "twitter:image") and not meta.image:
                meta.image = urljoin(meta.base_url, content)
            elif key == "og:type" and content.lower() == "article":
                meta.declared_article = True
            elif key in _DATE_KEYS and meta.published_at is None:
                meta.published_at = parse_date(content)
            elif key in _MODIFIED_KEYS and meta.modified_at is None:
                meta.modified_at = parse_date(content)
            elif key in _AUTHOR_KEYS and not meta.author:
                meta.author = _author(content)
            elif key in ("og:locale", "content-language", "language", "dc.language") and not meta.lang:
                meta.lang = content.split(",")[0]
        elif tag == "link":
            rel = (el.get("rel") or "").lower().split()
            if "canonical" in rel and el.get("href") and not meta.canonical:
                meta.canonical = urljoin(meta.base_url, el.get("href").strip())
        elif (el.get("type") or "").lower() == "application/ld+json" and el.text:
            _walk_jsonld(_load_jsonld(el.text), meta)
    if meta.published_at is None or not meta.article_body:
        # JSON-LD often sits in <body>
        for el in root.iterfind(".//script[@type='application/ld+json']"):
            if el.text:
                _walk_jsonld(_load_jsonld(el.text), meta)
