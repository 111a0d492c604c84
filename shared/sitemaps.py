"""Article-URL discovery for autoparser hosts (docs/architecture.md sections 2-3; used by the scheduler).

Pure functions, no I/O: the scheduler fetches ``/sitemap.xml`` (and the host's home
page) through the polite crawler, then calls

    urls = discover_article_urls(sitemap_body, page_links(home_html, home_url), host="example.com")

and orders ``kind=page`` crawl requests for the URLs it has not requested yet
(``requesters=["autoparser:<host>"]``). A sitemap *index* lists more sitemaps, not
articles: ``sitemap_children`` returns them for the scheduler to fetch in turn.

What looks like an article: an http(s) URL of the host whose path is not the home
page, not a listing (``/tag/``, ``/category/``, ``/page/2``, ``/search`` ...) and not
a file (images, PDFs, feeds); Google News sitemap entries always count. Sitemap
entries come first, newest ``lastmod`` first, then page links in their order.

It lives in ``shared/`` because two cubes use it (the scheduler discovers, the
autoparser relates image hosts to page hosts) and a cube never imports another cube.
"""

from __future__ import annotations

import gzip
import io
import re
from collections.abc import Iterable
from datetime import UTC, datetime

import lxml.html
from lxml import etree

from shared.urls import host_of, resolve_url, try_canonical_url
from shared.xmlguard import declared_entity

__all__ = [
    "MAX_SITEMAP_BYTES",
    "discover_article_urls",
    "hosts_related",
    "is_sitemap",
    "looks_like_article",
    "page_links",
    "sitemap_children",
]

#: the sitemaps.org limit for one (uncompressed) sitemap file
MAX_SITEMAP_BYTES = 50 * 1024 * 1024
_NOT_ARTICLE = re.compile(
    r"/(?:tags?|category|categories|topics?|authors?|page|search|login|signin|register|account|cart|"
    r"feed|rss|wp-admin|wp-login|about|contact|privacy|terms|impressum|archive)(?:/|$|\?)"
    r"|\.(?:jpe?g|png|gif|webp|svg|pdf|zip|mp3|mp4|xml|rss|atom|json|css|js)(?:$|\?)",
    re.I,
)
_DATE_OR_SLUG = re.compile(r"/\d{4}/\d{1,2}/|\d{4,}|[a-z0-9]+-[a-z0-9]+-[a-z0-9]+", re.I)
_XML_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, recover=True)
#: links read from one page: a home page has a few hundred; more is a link farm, not a front page
MAX_PAGE_LINKS = 5000


def hosts_related(host: str, other: str) -> bool:
    """Equal, one a subdomain of the other, or siblings under one parent domain (img.x.com, www.x.com)."""
    a, b = host.lower().rstrip("."), other.lower().rstrip(".")
    if a == b or a.endswith("." + b) or b.endswith("." + a):
        return True
    pa, pb = a.split(".", 1), b.split(".", 1)
    # siblings: both have a parent of at least two labels, and it is the same
    return len(pa) == 2 and len(pb) == 2 and "." in pa[1] and pa[1] == pb[1]


def _lastmod(text: str) -> float:
    """W3C datetime of a sitemap ``lastmod`` as a timestamp (0 when unreadable; naive = UTC)."""
    v = text.strip().replace("Z", "+00:00")
    for candidate in (v, v[:10]):
        try:
            dt = datetime.fromisoformat(candidate)
        except ValueError:
            continue
        return (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).timestamp()
    return 0.0


def _local(tag: object) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def _parse(sitemap_xml: bytes) -> etree._Element | None:
    data = sitemap_xml
    if data[:2] == b"\x1f\x8b":
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as f:
            try:
                data = f.read(MAX_SITEMAP_BYTES + 1)  # never inflate a gzip bomb past the limit
            except (OSError, EOFError):
                return None
    if not data.strip() or len(data) > MAX_SITEMAP_BYTES:
        return None
    if declared_entity(data) is not None:
        return None  # entity declarations are an attack (shared/xmlguard.py); no sitemap needs one
    try:
        return etree.fromstring(data, _XML_PARSER)
    except etree.XMLSyntaxError:
        return None


def looks_like_article(url: str) -> bool:
    path = url.split("://", 1)[-1].partition("/")[2]
    if not path.strip("/") or _NOT_ARTICLE.search("/" + path):
        return False
    # a real article path has a date, a long number (an id) or a slug of 3+ words
    return _DATE_OR_SLUG.search("/" + path) is not None


def is_sitemap(body: bytes) -> bool:
    """Whether ``body`` is a sitemap or a sitemap index (gzipped or not), not an HTML page."""
    root = _parse(body)
    return root is not None and _local(root.tag) in ("urlset", "sitemapindex")


def page_links(html: bytes, base_url: str, *, limit: int = MAX_PAGE_LINKS) -> list[str]:
    """The canonical http(s) targets of a page's ``<a href>`` links, in page order, no repeats."""
    if not html.strip():
        return []
    try:
        root = lxml.html.document_fromstring(html)
    except (etree.ParserError, ValueError):
        return []
    out: list[str] = []
    seen: set[str] = set()
    for a in root.iter("a"):
        href = a.get("href")
        if not href or href.lstrip().lower().startswith(("javascript:", "mailto:", "tel:", "data:")):
            continue
        try:
            url = resolve_url(base_url, href)
        except ValueError:
            continue
        if url not in seen:
            seen.add(url)
            out.append(url)
            if len(out) >= limit:
                break
    return out


def sitemap_children(sitemap_xml: bytes) -> list[str]:
    """The sitemaps a sitemap index lists (empty for an ordinary sitemap)."""
    root = _parse(sitemap_xml)
    if root is None or _local(root.tag) != "sitemapindex":
        return []
    out = []
    for sm in root:
        for child in sm:
            if _local(child.tag) == "loc" and child.text and (u := try_canonical_url(child.text.strip())):
                out.append(u)
    return out


def discover_article_urls(
    sitemap_xml: bytes | None,
    html_links: Iterable[str],
    *,
    host: str | None = None,
    limit: int = 1000,
) -> list[str]:
    """Canonical article URLs of ``host`` from a sitemap and a page's links, best first, no repeats."""
    entries: list[tuple[float, int, str]] = []
    root = _parse(sitemap_xml) if sitemap_xml else None
    if root is not None and _local(root.tag) == "urlset":
        for i, url_el in enumerate(root):
            loc, lastmod, news = None, 0.0, False
            for child in url_el:
                name = _local(child.tag)
                if name == "loc" and child.text:
                    loc = child.text.strip()
                elif name == "lastmod" and child.text:
                    lastmod = _lastmod(child.text)
                elif name == "news":
                    news = True
            if loc and (news or looks_like_article(loc)):
                entries.append((-lastmod, i, loc))
    entries.sort()
    candidates = [loc for _, _, loc in entries]
    candidates += [u for u in html_links if looks_like_article(u)]
    out: list[str] = []
    seen: set[str] = set()
    for raw in candidates:
        url = try_canonical_url(raw)
        if url is None or url in seen:
            continue
        if host is not None and not hosts_related(host_of(url), host):
            continue
        seen.add(url)
        out.append(url)
        if len(out) >= limit:
            break
    return out
