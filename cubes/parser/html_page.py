"""An HTML page where a feed was wanted: ``feed.not_a_feed`` naming the feeds the page names.

A site's home page given as a feed used to be answered ``xml.malformed`` at line 1 with a hint to
fix the XML -- advice about a document that was never meant to be XML. The page's own
``<link rel="alternate">`` feeds (``shared.webmaster.feed_discovery``) are what the webmaster meant: the
problem names them and offers them (``Problem.offers``, which the console turns into buttons);
a page that names none is pointed at the usual places and at the autoparser, which reads a site
without a feed page by page.
"""

from __future__ import annotations

from cubes.parser.model import DetectedFormat, ItemError, ParseResult
from shared.webmaster.feed_discovery import alternates

__all__ = ["not_a_feed"]

_NONE_HINT = (
    "Give the URL of the site's feed instead (often /feed, /rss.xml, /atom.xml or /feed.xml; a page names its "
    'feed with <link rel="alternate" type="application/rss+xml" href="..."> in its <head>). A site without a '
    "feed can be read page by page: keep this URL and switch the autoparser on, it builds Turbo pages from the "
    "site's HTML."
)


def not_a_feed(body: bytes, url: str | None) -> ParseResult:
    """The fatal result for an HTML page: what it is, which feeds it names, what to do."""
    found = alternates(body, url)
    if found:
        names = "; ".join(a.describe() for a in found)
        one = len(found) == 1
        message = f"this is an HTML page, not a feed; it names {len(found)} feed{'' if one else 's'}: {names}"
        hint = (
            f"Register {'that feed' if one else 'one of those feeds'} instead of the page (the console offers "
            f"{'it' if one else 'each'}); the page itself is not read as a feed."
        )
    else:
        message = (
            'this is an HTML page, not a feed, and it names no feed (no <link rel="alternate"> of an RSS, Atom '
            "or JSON Feed type in its <head>)"
        )
        hint = _NONE_HINT
    err = ItemError(message, 1, 1, code="feed.not_a_feed", hint=hint, offers=tuple(a.url for a in found))
    return ParseResult(DetectedFormat.unknown, errors=[err], fatal=True)
