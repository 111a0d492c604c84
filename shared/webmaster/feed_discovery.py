"""The feeds an HTML page names, and whether a body is an HTML page at all (docs/architecture.md section 10).

A webmaster often gives a site's home page where a feed is wanted. Readers (Miniflux, FreshRSS, a
browser's feed button) find the feeds from the page: its ``<link rel="alternate">`` elements of an
RSS, Atom or JSON Feed type, in the document's ``<head>``. The parser answers such a page with
``feed.not_a_feed`` naming the feeds found (``cubes/parser/feed.py``), so registration, a feed
check, ``turbocubes render`` and the console all say the same; the console offers each one.

Bounded: only the first ``HTML_MAX`` bytes are read, and at most ``FOUND_MAX`` feeds kept; a link
that is not an absolute http(s) URL once resolved against the page is left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urljoin

from selectolax.lexbor import LexborHTMLParser

from shared.urls import canonical_url

__all__ = ["FOUND_MAX", "HTML_MAX", "Alternate", "alternates", "looks_like_html"]

#: a page's <head> is in its first few kilobytes; 512 KB covers the heaviest inline styles seen
HTML_MAX = 512 * 1024
#: a page naming more feeds than this names them for other reasons (one per category): the first ones
FOUND_MAX = 10
#: the ``type`` of a feed link and what it is called
_TYPES = {
    "application/rss+xml": "RSS",
    "application/atom+xml": "Atom",
    "application/feed+json": "JSON Feed",
    "application/json": "JSON Feed",
    "application/rdf+xml": "RSS",
}
#: an HTML doctype or the html / head / body tag, where the document starts (comments and blanks skipped)
_HTML_START = re.compile(rb"<(?:!doctype\s+html|html|head|body)[\s>]", re.I)
#: how far into the body its start is looked for
_START_MAX = 4096


@dataclass(frozen=True, slots=True)
class Alternate:
    url: str
    #: RSS, Atom or JSON Feed
    kind: str
    title: str = ""

    def describe(self) -> str:
        return f"{self.url} ({self.kind}{': ' + self.title if self.title else ''})"


def looks_like_html(body: bytes) -> bool:
    """The body starts as an HTML document does (a doctype, or an ``<html>``, ``<head>``, ``<body>`` tag),
    after a BOM, blanks and comments. A loop, not a pattern: a regular expression of repeated lazy
    comments backtracked for minutes over ten thousand of them (a hostile prolog)."""
    head = body[:_START_MAX]
    at = 3 if head.startswith(b"\xef\xbb\xbf") else 0
    while True:
        while at < len(head) and head[at : at + 1].isspace():
            at += 1
        if not head.startswith(b"<!--", at):
            break
        end = head.find(b"-->", at + 4)
        if end < 0:
            return False
        at = end + 3
    return _HTML_START.match(head, at) is not None


def alternates(body: bytes, base_url: str | None) -> list[Alternate]:
    """The feeds the page's ``<head>`` names, in its order, each once (canonical URL)."""
    try:
        tree = LexborHTMLParser(body[:HTML_MAX])
    except (TypeError, ValueError, UnicodeDecodeError):
        return []
    head = tree.head
    if head is None:
        return []
    base = base_url or ""
    if (node := head.css_first("base[href]")) is not None:
        base = urljoin(base, (node.attributes.get("href") or "").strip())
    found: dict[str, Alternate] = {}
    for link in head.css("link[href]"):
        attrs = link.attributes
        rels = (attrs.get("rel") or "").lower().split()
        kind = _TYPES.get((attrs.get("type") or "").split(";")[0].strip().lower())
        if "alternate" not in rels or kind is None:
            continue
        try:
            url = canonical_url(urljoin(base, (attrs.get("href") or "").strip()))
        except ValueError:
            continue  # relative without a base, another scheme: nothing a crawler can fetch
        if url not in found:
            found[url] = Alternate(url, kind, " ".join((attrs.get("title") or "").split())[:120])
        if len(found) >= FOUND_MAX:
            break
    return list(found.values())
