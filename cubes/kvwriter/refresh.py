"""A page shows the new copy of an image changed at its source (docs/architecture.md s.2, s.3).

The cdn cube re-checks cached images at their source (``media.recheck_s``); new
bytes under the same URL get a new CDN copy (content-addressed: a new URL, so
browsers and caches cannot keep showing the old one) and a ``media.cached``
that ``replaces`` the old copy's URL. The kvwriter then renders again every
page that shows the old copy:

* a page keeps the ready document it was rendered from (``Page.ready``), and
  the image registry knows which pages show each copy (``link_pages``, written
  with the page);
* the refreshed document is the stored one with the old copy swapped for the
  new (its URL in the HTML, its size and smaller copies in ``Document.media``),
  at the stored version **plus one**: higher than the page it replaces, and lower
  than any later edit of the source (versions are microsecond clocks), so a
  newer edit still wins, whichever arrives first;
* a page that no longer shows the old copy (edited since) is left alone: the
  links are a hint, checked against the page.

A purged image whose source gave no good copy (``shared/webmaster/refresh.py``) is announced
failed with ``replaces``: its pages are rendered again *without* it (``without_copy``:
the elements that showed it and its smaller copies go, as the media cube drops an image
that failed; a figure left with a caption alone goes too), one version up in the same way.
"""

from __future__ import annotations

import re
import zlib

from shared.images.media import MediaDoc, parse_srcset
from shared.messages import Document, Media, MediaCached
from shared.pages.safehtml import is_cdn_url

__all__ = ["pack", "shown_copies", "unpack", "with_new_copy", "without_copy"]

#: the attributes of a ready document's HTML that hold media URLs (the media cube wrote CDN URLs there)
_MEDIA_ATTR = re.compile(r'\s(src|poster|srcset)="([^"]*)"')
#: zlib level 1: ~4x smaller JSON for ~20 us per page; the column is read only for a refresh
_LEVEL = 1


def pack(doc: Document) -> bytes:
    """``Page.ready`` of ``doc``."""
    return zlib.compress(doc.model_dump_json().encode(), _LEVEL)


def unpack(ready: bytes) -> Document:
    return Document.model_validate_json(zlib.decompress(ready))


def shown_copies(doc: Document, cdn_base: str) -> set[str]:
    """The CDN URLs of the media the ready ``doc`` shows (its HTML's and ``Document.media``'s)."""
    found = {m.cdn_url for m in doc.media if m.cdn_url}
    for attr, value in _MEDIA_ATTR.findall(doc.content_html):
        urls = [u for u, _ in parse_srcset(value)] if attr == "srcset" else [value]
        found.update(u for u in urls if is_cdn_url(u, cdn_base))
    return {u for u in found if is_cdn_url(u, cdn_base)}


def _swapped(m: Media, new: MediaCached) -> Media:
    return m.model_copy(
        update={
            "cdn_url": new.cdn_url,
            "mime": new.mime or m.mime,
            "width": new.width,
            "height": new.height,
            "variants": list(new.variants),
        }
    )


def with_new_copy(doc: Document, new: MediaCached) -> Document | None:
    """``doc`` showing ``new.cdn_url`` where it showed ``new.replaces``, one version up; None if it does not."""
    old, cdn_url = new.replaces, new.cdn_url
    if not old or not cdn_url or old == cdn_url:
        return None
    # a CDN URL ends in the content's 64-hex digest and an extension: it is no prefix of another URL
    # in the HTML but of its own smaller copies, which the page derives from it (``shared.images.variants``)
    html_hit = f'"{old}"' in doc.content_html or f"{old} " in doc.content_html
    media_hit = any(m.cdn_url == old for m in doc.media)
    if not html_hit and not media_hit:
        return None
    html = doc.content_html.replace(f'"{old}"', f'"{cdn_url}"').replace(f"{old} ", f"{cdn_url} ")
    media = [_swapped(m, new) if m.cdn_url == old else m for m in doc.media]
    return doc.model_copy(update={"content_html": html, "media": media, "version": doc.version + 1})


def _is_copy_of(url: str, old: str) -> bool:
    """``url`` is the copy ``old`` or one of its smaller copies (``shared.images.variants``:
    ``<stem>.w<width>.webp``)."""
    stem = old.rsplit(".", 1)[0]
    return url == old or url.startswith(stem + ".w")


def without_copy(doc: Document, old: str) -> Document | None:
    """``doc`` without the copy ``old`` (and its smaller copies), one version up; None if it does not show it."""
    media_hit = any(m.cdn_url == old for m in doc.media)
    stem = old.rsplit(".", 1)[0]
    if not media_hit and stem not in doc.content_html:
        return None
    html = doc.content_html
    if stem in html:
        html = MediaDoc(doc).html_without(lambda url: _is_copy_of(url, old))
    media = [m for m in doc.media if m.cdn_url != old]
    if html == doc.content_html and len(media) == len(doc.media):
        return None
    return doc.model_copy(update={"content_html": html, "media": media, "version": doc.version + 1})
