"""feedparser for the bodies lxml cannot read (docs/architecture.md section 3, parser).

feedparser's loose parser recovers from broken markup, undefined entities
and odd formats that a strict XML parser refuses. It is always given the
bytes (in a ``BytesIO``): ``feedparser.parse`` with a string fetches URLs and
opens local files, which a partner must never be able to make us do.
Sanitizing is off here (nh3 sanitizes every item later, feedparser's
sanitizer would only cost time); relative URLs are resolved against the
feed URL passed as ``content-location``.
"""

from __future__ import annotations

import contextlib
import html
import io
import threading
from collections.abc import Iterator
from typing import Any

import feedparser
import feedparser.api
from feedparser.datetimes import _parse_date

from cubes.parser.dates import from_struct_time
from cubes.parser.model import DetectedFormat, FeedMeta, ItemError, MediaRef, ParsedItem, ParseResult, Severity
from cubes.parser.xmltext import plain

__all__ = ["parse_with_feedparser"]


class _FirstDateWins:
    """feedparser's date handlers, keeping the first date of each kind instead of the last."""

    def _keep_first(self, element: str, key: str) -> None:
        value = self.pop(element)  # type: ignore[attr-defined]
        context = self._get_context()  # type: ignore[attr-defined]
        if context.get(key) is None:
            context[key] = _parse_date(value)

    def _end_published(self) -> None:
        self._keep_first("published", "published_parsed")

    def _end_updated(self) -> None:
        self._keep_first("updated", "updated_parsed")

    # feedparser binds these names to its own functions at class creation: each is pointed here
    _end_issued = _end_pubdate = _end_published
    _end_modified = _end_lastbuilddate = _end_updated


_PATCHED = {
    name: type(name, (_FirstDateWins, getattr(feedparser.api, name)), {})
    for name in ("StrictFeedParser", "LooseFeedParser")
}
#: feedparser looks its parser classes up in its module at each call; they are swapped for ours
#: during our call only (a rare path: bodies lxml could not read), one call at a time
_SWAP = threading.Lock()


@contextlib.contextmanager
def _first_date_wins() -> Iterator[None]:
    with _SWAP:
        saved = {name: getattr(feedparser.api, name) for name in _PATCHED}
        for name, cls in _PATCHED.items():
            setattr(feedparser.api, name, cls)
        try:
            yield
        finally:
            for name, cls in saved.items():
                setattr(feedparser.api, name, cls)


def _media(e: dict[str, Any]) -> list[MediaRef]:
    out: list[MediaRef] = []
    for m in e.get("media_content") or ():
        url = m.get("url")
        medium = m.get("medium") or (m.get("type") or "image").split("/", 1)[0]
        if url and medium in ("image", "video"):
            out.append(MediaRef(url, medium, "media:content", m.get("type")))
    for m in e.get("media_thumbnail") or ():
        if m.get("url"):
            out.append(MediaRef(m["url"], "image", "media:thumbnail"))
    for m in e.get("enclosures") or ():
        mime = m.get("type") or ""
        major = mime.split("/", 1)[0]
        if m.get("href") and major in ("image", "video"):
            out.append(MediaRef(m["href"], major, "enclosure", mime))
    return out


def _turbo_content(value: str) -> str:
    # the loose parser hands CDATA back escaped; an escaped page has no '<' at all
    if "<" not in value and "&lt;" in value:
        return html.unescape(value)
    return value


def _item(e: dict[str, Any], index: int, base: str | None) -> ParsedItem:
    it = ParsedItem(index=index, base=base)
    it.link = e.get("link") or None
    it.guid = e.get("id") or None
    title = e.get("title")
    it.title = plain(title) if title else None
    it.author = e.get("author") or None
    it.published = from_struct_time(e.get("published_parsed"))
    it.updated = from_struct_time(e.get("updated_parsed"))
    summary = e.get("summary")
    if e.get("turbo_content"):
        it.content_html = _turbo_content(e["turbo_content"])
        it.summary = summary
    elif e.get("content"):
        it.content_html = e["content"][0].get("value") or ""
        it.summary = summary
    else:
        it.content_html = summary or ""
    it.media = _media(e)
    for key in ("turbo_source", "turbo_topic"):
        if e.get(key):
            it.extra[key.replace("_", ":", 1)] = str(e[key])
    return it


def parse_with_feedparser(body: bytes, url: str | None, content_type: str | None) -> ParseResult:
    headers = {"content-location": url or "", "content-type": content_type or "application/xml"}
    with _first_date_wins():
        d = feedparser.parse(io.BytesIO(body), response_headers=headers, sanitize_html=False)
    version = d.get("version") or ""
    fmt = DetectedFormat.atom if version.startswith("atom") else DetectedFormat.rss
    if version.startswith("rss09") or version == "rss10":
        fmt = DetectedFormat.rdf
    feed = d.get("feed", {})
    meta = FeedMeta(
        title=feed.get("title"),
        link=feed.get("link"),
        language=feed.get("language"),
        parser="feedparser",
        version=version,
    )
    for link in feed.get("links") or ():
        if link.get("rel") == "hub":
            meta.hub = link.get("href")
        elif link.get("rel") == "self":
            meta.self_url = link.get("href")
    result = ParseResult(fmt, meta=meta, encoding=d.get("encoding"))
    result.items = [_item(e, i, url) for i, e in enumerate(d.get("entries") or ())]
    if d.get("bozo"):
        exc = d.get("bozo_exception")
        line = col = None
        if hasattr(exc, "getLineNumber"):
            line, col = exc.getLineNumber(), exc.getColumnNumber() + 1
        sev = Severity.warning if result.items else Severity.error
        code = "xml.recovered" if result.items else "feed.not_readable"
        result.errors.append(ItemError(f"{type(exc).__name__}: {exc}", line, col, None, None, sev, code=code))
    if not result.items and not version:
        result.fatal = True
    return result
