"""Page metadata from ``<head>`` and JSON-LD (docs/architecture.md section 3, autoparser).

Title candidates (``og:title``, ``<title>``), ``<link rel=canonical>``, the published
date (``article:published_time`` and friends, then JSON-LD ``datePublished``), the
cover image (``og:image``) and whether the page declares itself an article
(``og:type=article`` or a JSON-LD ``*Article`` / ``BlogPosting`` type) and the
JSON-LD ``articleBody`` (a feature: blocks whose words it contains are likely body).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urljoin

import orjson

__all__ = ["PageMeta", "parse_date", "read_meta"]

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
_TAG = re.compile(r"<[^>]*>")
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
        if not meta.og_title and isinstance(node.get("headline"), str):
            meta.og_title = node["headline"].strip()
        body = node.get("articleBody")
        if not meta.article_body and isinstance(body, str):
            # some CMSs put HTML in it; tags only separate words here
            meta.article_body = _TAG.sub(" ", body)
    if "@graph" in node:
        _walk_jsonld(node["@graph"], meta)


def read_meta(root: Any, url: str = "") -> PageMeta:
    """Metadata of a parsed page; relative URLs are resolved against ``<base href>`` or ``url``."""
    meta = PageMeta(base_url=url)
    head = root.find("head")
    if head is None:
        return meta
    base = head.find("base")
    if base is not None and base.get("href"):
        meta.base_url = urljoin(url, base.get("href").strip())
    for el in head.iter("meta", "link", "script"):
        tag = el.tag
        if tag == "meta":
            key = (el.get("property") or el.get("name") or el.get("itemprop") or "").lower()
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
    return meta
