"""A document's media references: find them, look them up, rewrite them (docs/architecture.md section 2, media/delay).

The media cube and the delay cube both need this, so it lives in ``shared``.

* ``MediaDoc(doc).refs`` — every image and video the document refers to, as
  canonical absolute URLs (relative ones resolved against the document URL),
  with their kind: ``img src`` and ``srcset``, ``picture source srcset``,
  ``video src`` / ``poster`` / ``source src`` (inside ``figure`` or not), and
  ``Document.media`` (enclosures, ``media:content``, YML ``picture``, covers).
* ``look_up(images, refs, now)`` — splits the refs into cached (a CDN URL),
  failed for good (not to be ordered again yet) and missing (to be ordered);
  an image that failed before the webmaster asked to see a fix is missing.
* ``MediaDoc.rewrite(cdn_urls)`` — the document with every reference replaced by
  its CDN URL; a reference without one is REMOVED (an ``img`` / ``source`` /
  ``video`` element, a ``srcset`` candidate, a ``poster``, a ``Document.media``
  entry): a page never hotlinks the partner.
* ``MediaDoc.template(placeholder)`` — what ``rewrite`` would make of the HTML if
  every reference had a CDN URL, each one standing as a placeholder token: a
  parked document stores it (``shared/images/parked.py``) so that its release is a
  string substitution instead of a second parse and rewrite.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from lxml import etree

from shared.messages import Document, Media, MediaKind
from shared.urls import canonical_url, resolve_url

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from shared.stores import ImageRecord

__all__ = ["Lookup", "MediaDoc", "Records", "cached_medium", "look_up", "parse_srcset"]


class Records(Protocol):
    """What ``look_up`` needs of an ``ImageRegistry`` (a batching wrapper has it too)."""

    async def get_many(self, urls: Iterable[str]) -> dict[str, ImageRecord]: ...


# mime types with which Document.media marks a video
_VIDEO_MIME_PREFIX = "video/"
_ABSOLUTE = ("http://", "https://")
#: what keeps a figure: any of these below it (looked for with ``iter``, which stops at the first
#: one: ~2 us a figure less than an XPath that collects them all)
_FIGURE_CONTENT = ("img", "video", "picture", "iframe", "svg", "table")
#: every element ``MediaDoc`` reads or changes starts with one of these tags; HTML without any
#: of them (libxml2 makes none of these elements up) is only parsed and serialized again
_MEDIA_TAG = re.compile(r"<(?:img|source|video|picture|figure)", re.IGNORECASE)
_WALKED = ("img", "source", "video", "picture", "figure")
_BODY_CLOSE = "</body>"
#: the plain lxml.etree HTML parser, one per thread (a parser is not thread-safe, and a large document is
#: parsed in a worker thread: cubes/media/handler.py): lxml.html's element-class lookup costs a third of a
#: parse, and nothing here needs its helpers. No network, comments kept (the kvwriter sanitizes them).
_PARSERS = threading.local()


def _parser() -> etree.HTMLParser:
    parser: etree.HTMLParser | None = getattr(_PARSERS, "parser", None)
    if parser is None:
        parser = _PARSERS.parser = etree.HTMLParser(no_network=True, remove_blank_text=False)
    return parser


#: a stray </body> or </html> in a partner's fragment would end our wrapper early and libxml2
#: would drop what follows; they mean nothing inside a fragment, so they go before parsing
_STRAY_END = re.compile(r"</\s*(?:body|html)\s*>", re.IGNORECASE)


def parse_srcset(value: str) -> list[tuple[str, str]]:
    """``srcset`` candidates as (url, descriptor), following the HTML spec's splitting rules.

    A URL runs to the next whitespace (so it may contain commas, as CDN URLs
    with transformations do); a comma right after it ends the candidate.
    """
    out: list[tuple[str, str]] = []
    i, n = 0, len(value)
    while i < n:
        while i < n and (value[i].isspace() or value[i] == ","):
            i += 1
        start = i
        while i < n and not value[i].isspace():
            i += 1
        url = value[start:i]
        if not url:
            break
        descriptor = ""
        if url.endswith(","):
            url = url.rstrip(",")
        else:
            start = i
            depth = 0
            while i < n and (value[i] != "," or depth):
                depth += value[i] == "("
                depth -= value[i] == ")" and depth > 0
                i += 1
            descriptor = value[start:i].strip()
        if url:
            out.append((url, descriptor))
    return out


def _drop(el: etree._Element) -> None:
    """Remove ``el`` and its subtree but keep the text that follows it (lxml.html's drop_tree)."""
    parent = el.getparent()
    if parent is None:
        return
    if el.tail:
        prev = el.getprevious()
        if prev is not None:
            prev.tail = (prev.tail or "") + el.tail
        else:
            parent.text = (parent.text or "") + el.tail
    parent.remove(el)


def cached_medium(m: Media, cdn_url: str, size: tuple[int, int] | None, variants: tuple[int, ...] = ()) -> Media:
    """``m`` as the page shows it: its CDN copy, the size the CDN measured (the source's otherwise), and
    the widths of its smaller copies."""
    update: dict[str, object] = {"cdn_url": cdn_url}
    if size is not None:
        update["width"], update["height"] = size
    if variants:
        update["variants"] = list(variants)
    return m.model_copy(update=update)


def _is_video(media: Media) -> bool:
    return media.kind == MediaKind.video or (media.mime or "").startswith(_VIDEO_MIME_PREFIX)


class MediaDoc:
    """One document's media, parsed once. ``rewrite`` / ``template`` change the parsed tree: call one, once."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        #: canonical media URL -> kind (video wins when one URL is used as both)
        self.refs: dict[str, MediaKind] = {}
        #: raw reference -> canonical URL (or None): each spelling is resolved once per document
        self._resolved: dict[str, str | None] = {}
        self._root: etree._Element | None = None
        #: img / source / video, then video / picture, then figure elements, in document order: found
        #: in one walk of the tree, as ``rewrite`` needs them (elements it detaches on the way stay
        #: in these lists, and what it does to them afterwards changes nothing in the tree)
        self._media: list[etree._Element] = []
        self._containers: list[etree._Element] = []
        self._figures: list[etree._Element] = []
        if doc.content_html.strip():
            fragment = _STRAY_END.sub("", doc.content_html)
            tree = etree.fromstring(f"<html><body>{fragment}</body></html>", _parser())
            self._root = tree.find("body") if tree is not None else None
            if self._root is not None and _MEDIA_TAG.search(fragment) is not None:
                self._walk(self._root)
                self._collect_html()
        for media in doc.media:
            self._add(media.url, MediaKind.video if _is_video(media) else MediaKind.image)

    def canonical(self, raw: str) -> str | None:
        """The canonical URL a reference in this document stands for; None when it is unusable."""
        if raw in self._resolved:
            return self._resolved[raw]
        url = raw.strip()
        resolved: str | None = None
        if url:
            try:
                # an absolute URL needs no urljoin (half the cost of resolving)
                resolved = canonical_url(url) if url.startswith(_ABSOLUTE) else resolve_url(self.doc.url, url)
            except ValueError:  # data:, javascript:, garbage: never cacheable, so removed by rewrite
                resolved = None
        self._resolved[raw] = resolved
        return resolved

    def _add(self, raw: str, kind: MediaKind) -> None:
        url = self.canonical(raw)
        if url is not None and self.refs.get(url) != MediaKind.video:
            self.refs[url] = kind

    def _walk(self, root: etree._Element) -> None:
        for el in root.iter(*_WALKED):
            tag = el.tag
            if tag == "figure":
                self._figures.append(el)
                continue
            if tag != "picture":
                self._media.append(el)
            if tag == "video" or tag == "picture":
                self._containers.append(el)

    def _collect_html(self) -> None:
        for el in self._media:
            tag = el.tag
            if tag == "video":
                src = el.get("src")
                if src:
                    self._add(src, MediaKind.video)
                poster = el.get("poster")
                if poster:
                    self._add(poster, MediaKind.image)
                continue
            kind = MediaKind.image
            if tag == "source":
                parent = el.getparent()
                if parent is not None and parent.tag == "audio":
                    continue  # audio is not cached: never ordered, and dropped by the rewrite
                typ = (el.get("type") or "").lower()
                if parent is not None and parent.tag == "video" and not typ.startswith("image/"):
                    kind = MediaKind.video
            src = el.get("src")
            if src:
                self._add(src, kind)
            srcset = el.get("srcset")
            if srcset:
                for url, _ in parse_srcset(srcset):
                    self._add(url, MediaKind.image)

    # ------------------------------------------------------------------ rewrite

    def _cdn(self, raw: str | None, cdn_urls: Mapping[str, str]) -> str | None:
        if not raw:
            return None
        url = self.canonical(raw)
        return cdn_urls.get(url) if url is not None else None

    def _rewrite_srcset(self, el: etree._Element, srcset: str, cdn_urls: Mapping[str, str]) -> list[str]:
        """Rewrite ``el``'s srcset in place; returns the CDN URLs that survived."""
        kept = [(cdn, d) for url, d in parse_srcset(srcset) if (cdn := self._cdn(url, cdn_urls))]
        if kept:
            el.set("srcset", ", ".join(f"{u} {d}".rstrip() for u, d in kept))
        else:
            del el.attrib["srcset"]
        return [u for u, _ in kept]

    def _rewrite_media(self, cdn_urls: Mapping[str, str]) -> None:
        drop: list[etree._Element] = []
        for el in self._media:
            if el.tag == "video":
                for attr in ("src", "poster"):
                    value = el.get(attr)
                    if value is not None:
                        cdn = self._cdn(value, cdn_urls)
                        if cdn:
                            el.set(attr, cdn)
                        else:
                            del el.attrib[attr]
                continue
            src = el.get("src")
            cdn = self._cdn(src, cdn_urls)
            if cdn:
                el.set("src", cdn)
            elif src is not None:
                del el.attrib["src"]
            srcset = el.get("srcset")
            survivors = [] if srcset is None else self._rewrite_srcset(el, srcset, cdn_urls)
            if not cdn:
                if el.tag == "img" and survivors:
                    el.set("src", survivors[0])  # an img whose src failed still shows its best cached size
                elif not survivors:
                    drop.append(el)
        for el in drop:
            _drop(el)
        # containers left without media go too (a video of failed sources, a figure of only a caption)
        for el in self._containers:
            if el.tag == "video":
                empty = el.get("src") is None and next(el.iter("source"), None) is None
            else:
                empty = next(el.iter("img"), None) is None
            if empty:
                _drop(el)
        for el in self._figures:
            if next(el.iter(*_FIGURE_CONTENT), None) is None:
                _drop(el)

    def _rewrite_html(self, root: etree._Element, cdn_urls: Mapping[str, str]) -> str:
        self._rewrite_media(cdn_urls)
        # one serialization of the body, its tags cut off; what a stray </body> in the
        # partner's HTML pushed out of the body is dropped, as a browser would not show it either
        out: str = etree.tostring(root, encoding="unicode", method="html", with_tail=False)
        if not out.endswith(_BODY_CLOSE):  # "<body/>": nothing left
            return ""
        # the partner may have written <body class=...>: its attributes go with the tag
        return out[out.index(">") + 1 : -len(_BODY_CLOSE)]

    def rewrite(
        self,
        cdn_urls: Mapping[str, str],
        *,
        sizes: Mapping[str, tuple[int, int]] | None = None,
        variants: Mapping[str, tuple[int, ...]] | None = None,
        media_ready_at: datetime | None = None,
    ) -> Document:
        """The document with media pointing at the CDN; references missing from ``cdn_urls`` removed.

        ``sizes``: the pixels the cdn cube measured (``Lookup.sizes``), copied into ``Document.media``
        so the page can give every image its box before it loads.
        """
        update: dict[str, object] = {}
        if self._root is not None:
            update["content_html"] = self._rewrite_html(self._root, cdn_urls)
            self._root = None
        media: list[Media] = []
        for m in self.doc.media:
            cdn = self._cdn(m.url, cdn_urls)
            if cdn:
                url = self.canonical(m.url) or ""
                media.append(cached_medium(m, cdn, (sizes or {}).get(url), (variants or {}).get(url, ())))
        update["media"] = media
        if media_ready_at is not None:
            update["media_ready_at"] = media_ready_at
        return self.doc.model_copy(update=update)

    def html_without(self, gone: Callable[[str], bool]) -> str:
        """``content_html`` without the references ``gone`` says so of (as written in the HTML), and the
        elements left without media (``rewrite``'s rule); every other reference stays as it is written."""
        if self._root is None:
            return self.doc.content_html
        # each canonical URL back to its spelling in the HTML: a relative CDN URL (/cdn/...) stays relative
        kept = {url: raw for raw, url in self._resolved.items() if url is not None and not gone(raw)}
        html = self._rewrite_html(self._root, kept)
        self._root = None
        return html

    def template(self, placeholder: Callable[[int], str]) -> str | None:
        """``rewrite(cdn_urls).content_html`` for ``cdn_urls`` holding all of ``refs``, with
        ``placeholder(i)`` in place of the CDN URL of the i-th ref (in ``refs`` order).

        None when ``rewrite`` keeps ``content_html`` as it is (nothing was parsed).
        """
        if self._root is None:
            return None
        html = self._rewrite_html(self._root, {url: placeholder(i) for i, url in enumerate(self.refs)})
        self._root = None
        return html


@dataclass
class Lookup:
    """Where each media URL of a document stands in the image registry."""

    cdn: dict[str, str] = field(default_factory=dict)
    #: failed for good (for now): removed from the document, not ordered again
    failed: set[str] = field(default_factory=set)
    #: not cached, or a failure whose re-try time has come: to be ordered
    missing: dict[str, MediaKind] = field(default_factory=dict)
    #: why each failed one failed, as the cdn cube recorded it (``http_404``, ``not_an_image``...)
    reasons: dict[str, str] = field(default_factory=dict)
    #: (width, height) the cdn cube measured, of the cached ones that have them
    sizes: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: widths of the smaller copies the cdn cube made, of the cached ones that have any
    variants: dict[str, tuple[int, ...]] = field(default_factory=dict)

    def lost(self, refs: Iterable[str]) -> dict[str, str]:
        """Of ``refs``, those a rewrite now leaves out, and why: the recorded failure, or ``late``
        for one not cached (yet) -- what the page's webmaster is told (``shared.problems.image_problem``)."""
        return {url: self.reasons.get(url, "late") for url in refs if url not in self.cdn}


async def look_up(
    images: Records, refs: Mapping[str, MediaKind], now: datetime, *, failed_before: datetime | None = None
) -> Lookup:
    """One registry round trip for all of ``refs``. ``failed_before``: an image that failed at or before it
    is missing (to be ordered again), whatever its retry time -- the webmaster asked to see a fix
    (``Document.retry_failed_before``)."""
    from shared.stores import ImageStatus

    out = Lookup()
    if not refs:
        return out
    records = await images.get_many(refs)
    for url, kind in refs.items():
        rec = records.get(url)
        if rec is not None and rec.status == ImageStatus.ok and rec.cdn_url:
            out.cdn[url] = rec.cdn_url
            if rec.width and rec.height:
                out.sizes[url] = (rec.width, rec.height)
            if rec.variants:
                out.variants[url] = rec.variants
        elif (
            rec is not None
            and rec.status == ImageStatus.failed
            and (rec.retry_after is None or rec.retry_after > now)
            and not (failed_before is not None and rec.updated_at is not None and rec.updated_at <= failed_before)
        ):
            out.failed.add(url)
            out.reasons[url] = rec.reason or "failed"
        else:
            out.missing[url] = kind
    return out
