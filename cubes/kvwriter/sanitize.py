"""Partner HTML made safe for a Turbo page (DESIGN.md sections 3 "kvwriter" and 6 "secure by default").

nh3 (ammonia, an HTML5 parser) cleans against an EXPLICIT allowlist below:
tags, attributes per tag, http/https URLs only. Everything else goes: scripts,
styles, event handlers, ``javascript:``/``data:`` URLs, forms, object/embed,
SVG/MathML. Every URL-bearing attribute is then decided by ``_filter_attr``
(nh3 calls it for every kept attribute, and does not re-check what it returns,
so the filter itself enforces the schemes):

* ``a href``: resolved against the document's URL, kept only as http(s).
* ``img src``, ``source src``, ``video src|poster``: kept only when the URL is a
  CDN URL (starts with ``settings.cdn.public_base_url``); a source URL the media
  cube cached is mapped to its CDN URL first. The Turbo page never hotlinks.
* ``iframe src``: kept only when its host is an allowlisted video host,
  rewritten to https; the iframe is sandboxed and sends no referrer.

A last pass over nh3's output removes the elements whose URL was refused
(an ``img`` without ``src`` is dropped entirely, as is a bare ``iframe``).
That pass may use regular expressions because nh3's serializer escapes ``<``
``>`` and ``"`` inside attribute values and text: in its output a literal
``<`` only ever opens a tag (iframe bodies are emptied first, being raw text).
"""

from __future__ import annotations

import html
import re
import threading
from collections.abc import Iterable, Mapping
from urllib.parse import urljoin, urlsplit, urlunsplit

import nh3

__all__ = ["ALLOWED_ATTRIBUTES", "ALLOWED_TAGS", "Sanitizer", "is_cdn_url", "plain_text"]

#: Tags a Turbo page body may contain. Anything not here is unwrapped (its text kept)
#: unless it is in ``_DROPPED_WITH_CONTENT``.
ALLOWED_TAGS: frozenset[str] = frozenset(
    {
        "a", "abbr", "b", "blockquote", "br", "caption", "code", "dd", "del", "div", "dl", "dt",
        "em", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "iframe",
        "img", "ins", "kbd", "li", "mark", "ol", "p", "picture", "pre", "q", "s", "small",
        "source", "span", "strong", "sub", "sup", "table", "tbody", "td", "tfoot", "th", "thead",
        "time", "tr", "u", "ul", "video",
    }
)  # fmt: skip

#: Attributes per tag. No ``style``, ``class``, ``id`` (DOM clobbering), ``on*``, ``srcset``,
#: ``target`` or ``cite``; ``rel`` on links is set by nh3 (``_LINK_REL``).
ALLOWED_ATTRIBUTES: Mapping[str, frozenset[str]] = {
    "*": frozenset({"title", "lang", "dir"}),
    "a": frozenset({"href"}),
    "img": frozenset({"src", "alt", "width", "height"}),
    "iframe": frozenset({"src", "width", "height", "allowfullscreen"}),
    "video": frozenset({"src", "poster", "controls", "width", "height"}),
    "source": frozenset({"src", "type"}),
    "td": frozenset({"colspan", "rowspan"}),
    "th": frozenset({"colspan", "rowspan", "scope"}),
    "ol": frozenset({"start", "reversed"}),
    "time": frozenset({"datetime"}),
}

#: Removed together with everything inside them (their text is not content).
_DROPPED_WITH_CONTENT = frozenset(
    {
        "applet", "base", "button", "embed", "form", "frame", "frameset", "head", "input", "link",
        "math", "meta", "noembed", "noframes", "noscript", "object", "param", "plaintext", "script",
        "select", "style", "svg", "template", "textarea", "title", "xmp",
    }
)  # fmt: skip

#: Fixed attributes: lazy media, a sandboxed referrer-less player, videos with controls.
_SET_ATTRIBUTES = {
    "img": {"loading": "lazy", "decoding": "async"},
    "iframe": {
        "sandbox": "allow-scripts allow-same-origin allow-presentation",
        "referrerpolicy": "no-referrer",
        "loading": "lazy",
    },
    "video": {"preload": "none"},
}

#: Partner links are user content for search engines, and leak neither opener nor referrer.
_LINK_REL = "noopener noreferrer nofollow ugc"
_SCHEMES = frozenset({"http", "https"})
_CONTROL = re.compile(r"[\x00-\x20\x7f]")
_DIMENSION = re.compile(r"\d{1,5}%?")
_IFRAME = re.compile(r"<iframe\b([^>]*)>.*?</iframe>", re.DOTALL)
#: an img / source whose src the filter refused (the lookahead: no ' src="' inside the tag)
_MEDIA_NO_SRC = re.compile(r'<(?:img|source)\b(?![^>]*\ssrc=")[^>]*>')
_IFRAME_NO_SRC = re.compile(r'<iframe\b(?![^>]*\ssrc=")[^>]*>.*?</iframe>', re.DOTALL)
#: tags whose text runs on with its neighbours' (no word break at their edges)
_INLINE_TAG = re.compile(r"</?(?:abbr|a|b|code|del|em|i|ins|kbd|mark|q|small|span|strong|sub|sup|s|time|u)\b[^>]*>")
_ANY_TAG = re.compile(r"<[^>]*>")
#: attributes the filter passes through untouched (text, or set by nh3 itself)
_PLAIN_ATTRS = frozenset(
    {
        "alt",
        "title",
        "lang",
        "dir",
        "rel",
        "loading",
        "decoding",
        "type",
        "scope",
        "controls",
        "allowfullscreen",
        "reversed",
        "datetime",
        "sandbox",
        "referrerpolicy",
        "preload",
    }
)


def is_cdn_url(url: str, cdn_base: str) -> bool:
    """True when ``url`` is under the CDN's public base (``/cdn`` or ``https://cdn.example/``).

    The base is matched with its trailing slash, so ``https://cdn.example.evil/`` is not under
    ``https://cdn.example``; control characters and a scheme-relative ``//`` are refused.
    """
    base = cdn_base.rstrip("/") + "/"
    if not url.startswith(base) or _CONTROL.search(url) or "\\" in url:
        return False
    return not url.startswith("//")


def _origin(url: str) -> str:
    """``scheme://host[:port]`` of an absolute URL ("" when it has none)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else ""


def _web_url(value: str, base_url: str, base_origin: str = "") -> str | None:
    """``value`` resolved against ``base_url`` when it is an http(s) URL with a host, else None."""
    value = value.strip()
    if _CONTROL.search(value):
        return None
    # Fast paths, ~10x cheaper than urljoin: a value spelled "http://" / "https://" in lower case is
    # an http(s) URL for every browser, and a root-relative "/path" joins to the page's origin.
    if value.startswith(("https://", "http://")):
        return value
    if base_origin and value.startswith("/") and not value.startswith("//") and "\\" not in value:
        return base_origin + value
    try:
        parts = urlsplit(urljoin(base_url, value))
    except ValueError:
        return None
    if parts.scheme.lower() not in _SCHEMES or not parts.hostname:
        return None
    return urlunsplit(parts)


class _CallState(threading.local):
    """What the attribute filter needs about the document being cleaned.

    nh3's callback has no user argument, so the current call's state lives here;
    thread-local so that two threads cleaning at once never see each other's.
    """

    base_url: str = ""
    base_origin: str = ""
    media_map: Mapping[str, str] = {}


class Sanitizer:
    """A reusable cleaner for one configuration (the CDN base and the video hosts)."""

    def __init__(self, *, cdn_base: str, video_hosts: Iterable[str]) -> None:
        self.cdn_base = cdn_base
        self.video_hosts = frozenset(h.lower() for h in video_hosts)
        self._state = _CallState()
        self._cleaner = nh3.Cleaner(
            tags=set(ALLOWED_TAGS),
            clean_content_tags=set(_DROPPED_WITH_CONTENT),
            attributes={tag: set(attrs) for tag, attrs in ALLOWED_ATTRIBUTES.items()},
            attribute_filter=self._filter_attr,
            strip_comments=True,
            link_rel=_LINK_REL,
            set_tag_attribute_values=_SET_ATTRIBUTES,
            url_schemes=set(_SCHEMES),
        )

    def clean(self, fragment: str, *, base_url: str, media_map: Mapping[str, str] | None = None) -> str:
        """The safe form of ``fragment``. ``media_map``: source URL -> CDN URL of cached media."""
        self._state.base_url = base_url
        self._state.base_origin = _origin(base_url)
        self._state.media_map = media_map or {}
        try:
            out = self._cleaner.clean(fragment)
        finally:
            self._state.media_map = {}
        # Raw text inside an iframe is never shown; empty it, then drop iframes without a src.
        if "<iframe" in out:
            out = _IFRAME_NO_SRC.sub("", out)
            out = _IFRAME.sub(r"<iframe\1></iframe>", out)
        return _MEDIA_NO_SRC.sub("", out) if "<img" in out or "<source" in out else out

    def media_url(self, url: str, media_map: Mapping[str, str] | None = None) -> str | None:
        """The CDN URL to show for ``url`` (mapped through ``media_map``), or None: never hotlink."""
        mapped = (media_map or {}).get(url, url)
        return mapped if is_cdn_url(mapped, self.cdn_base) else None

    def video_src(self, value: str) -> str | None:
        """An allowlisted player URL, rewritten to https with no userinfo or port; else None."""
        value = value.strip()
        if _CONTROL.search(value):
            return None
        try:
            parts = urlsplit(value if not value.startswith("//") else "https:" + value)
        except ValueError:
            return None
        host = (parts.hostname or "").lower()
        if parts.scheme.lower() not in _SCHEMES or host not in self.video_hosts:
            return None
        return urlunsplit(("https", host, parts.path, parts.query, ""))

    def _filter_attr(self, tag: str, attr: str, value: str) -> str | None:
        if attr in _PLAIN_ATTRS:  # most calls: nothing to check
            return value
        state = self._state
        if tag == "a" and attr == "href":
            return _web_url(value, state.base_url, state.base_origin)
        if (attr == "src" and tag in ("img", "source", "video")) or (tag == "video" and attr == "poster"):
            return self.media_url(value.strip(), state.media_map)
        if tag == "iframe" and attr == "src":
            return self.video_src(value)
        if attr in ("width", "height"):
            return value if _DIMENSION.fullmatch(value.strip()) else None
        if attr in ("colspan", "rowspan", "start"):
            return value if value.strip().isdigit() and len(value.strip()) <= 4 else None
        return value


def plain_text(safe_html: str) -> str:
    """Visible text of *sanitized* HTML (nh3 output), whitespace collapsed, for search."""
    text = _IFRAME.sub(" ", safe_html) if "<iframe" in safe_html else safe_html
    # In nh3's output a literal "<" always opens a tag and ">" closes it (both are escaped elsewhere),
    # so these patterns are exact. Inline tags join their text ("wor<b>ld</b>" is one word),
    # every other tag separates it.
    text = _INLINE_TAG.sub("", text)
    text = _ANY_TAG.sub(" ", text)
    return " ".join(html.unescape(text).split())
