"""The one safe-HTML policy: what partner HTML may carry onto a Turbo page (docs/architecture.md section 6).

Two cubes clean partner HTML, with ONE allowlist written here: the parser
(``MediaRule.source``: its output is an intermediate that the media cube reads
next, so images keep the partner's URLs, made absolute) and the kvwriter
(``MediaRule.cdn``: the page itself, where media may only come from the CDN).
That rule, and the presentation attributes only the page wants (lazy images,
sandboxed players, videos with controls), are the only differences, each a
parameter of ``SafeHtml`` with its reason; everything else -- tags,
attributes, classes, URL schemes, link ``rel``, the video hosts -- is the same
for both, so the two can never drift apart again (they had: ``class`` / ``id``).

What the allowlist keeps: the structure of an article (headings, paragraphs,
lists, tables, figures, quotes, code, ``details``), images and HTML5 video,
links (http / https / mailto / tel), iframes of the allowlisted video hosts
(rewritten to https, sandboxed, no referrer), and the classes of our own Turbo
vocabulary (``CLASSES``, written by ``cubes/parser/blocks.py``). Everything
else goes: scripts and styles with their content, ``on*`` handlers, ``style``,
forms and their fields, object / embed, SVG / MathML, ``javascript:`` /
``data:`` URLs, ``target``, and partner classes (they mean nothing on our
page). Ids are kept with the prefix ``c-`` (``ID_PREFIX``), so in-page anchors
still work and no partner id can clobber a name of the page.

nh3 (ammonia, an html5ever parser) does the cleaning. When the page's URL
rules apply, ``_filter_attr`` decides every URL-bearing attribute (nh3 calls it
for every kept attribute and does not re-check what it returns, so the filter
enforces the schemes itself). A last pass removes the elements whose URL was
refused (an ``img`` without ``src``, an ``iframe`` without one); regular
expressions are safe there because nh3's serializer escapes ``<`` ``>`` and
``"`` inside attribute values and text: in its output a literal ``<`` only
ever opens a tag (iframe bodies are emptied first, being raw text).
"""

from __future__ import annotations

import html
import re
import threading
from collections.abc import Iterable, Mapping
from enum import StrEnum
from urllib.parse import urljoin, urlsplit, urlunsplit

import nh3

from shared.config import KvwriterConfig
from shared.images.media import parse_srcset
from shared.pages.players import Players

__all__ = [
    "ATTRIBUTES",
    "BLOCK_BREAK",
    "CLASSES",
    "EMBED_HOSTS",
    "ID_PREFIX",
    "LINK_SCHEMES",
    "TAGS",
    "MediaRule",
    "SafeHtml",
    "is_cdn_url",
    "plain_text",
    "web_url",
]

#: Tags a Turbo page body may contain. Anything else is unwrapped (its text kept), unless it is in
#: ``_DROPPED_WITH_CONTENT``.
TAGS: frozenset[str] = frozenset(
    {
        "a", "abbr", "article", "aside", "b", "blockquote", "br", "caption", "code", "col", "colgroup",
        "dd", "del", "details", "dfn", "div", "dl", "dt", "em", "figcaption", "figure", "footer", "h1",
        "h2", "h3", "h4", "h5", "h6", "header", "hr", "i", "iframe", "img", "ins", "kbd", "li", "main",
        "mark", "nav", "ol", "p", "picture", "pre", "q", "s", "samp", "section", "small", "source",
        "span", "strike", "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th",
        "thead", "time", "tr", "u", "ul", "var", "video", "wbr",
    }
)  # fmt: skip

#: Attributes per tag. No ``style``, ``on*``, ``target``, ``name`` (DOM clobbering), ``cite`` (a URL
#: nobody sees); ``class`` only from ``CLASSES``; ``rel`` on links is set (``LINK_REL``).
ATTRIBUTES: Mapping[str, frozenset[str]] = {
    "*": frozenset({"title", "lang", "dir", "id"}),
    "a": frozenset({"href"}),
    "img": frozenset({"src", "srcset", "sizes", "alt", "width", "height"}),
    "iframe": frozenset({"src", "width", "height", "allowfullscreen"}),
    "video": frozenset({"src", "poster", "controls", "width", "height", "muted", "loop"}),
    "source": frozenset({"src", "srcset", "sizes", "type", "media"}),
    "td": frozenset({"colspan", "rowspan", "align"}),
    "th": frozenset({"colspan", "rowspan", "align", "scope"}),
    "col": frozenset({"span"}),
    "ol": frozenset({"start", "reversed"}),
    "time": frozenset({"datetime"}),
    "details": frozenset({"open"}),
}

#: The classes of our Turbo vocabulary, per tag (``cubes/parser/blocks.py`` writes them, the page's
#: CSS in ``cubes/kvwriter/render.py`` styles them). A partner writing one gets our styling, nothing more.
CLASSES: Mapping[str, frozenset[str]] = {
    "a": frozenset({"tc-btn", "tc-primary", "tc-card", "tc-share-link"}),
    "article": frozenset({"tc-card", "tc-comment"}),
    "aside": frozenset({"tc-related"}),
    "details": frozenset({"tc-acc"}),
    "div": frozenset(
        {"tc-gallery", "tc-slider", "tc-cards", "tc-feed", "tc-fold", "tc-acc-list", "tc-replies", "tc-embed"}
    ),
    "figure": frozenset({"tc-slide", "tc-video"}),
    "header": frozenset({"tc-head"}),
    "nav": frozenset({"tc-menu", "tc-crumbs", "tc-share"}),
    "p": frozenset({"tc-rating", "tc-author", "tc-cap", "tc-buttons", "tc-sub", "tc-note"}),
    "section": frozenset({"tc-feedback", "tc-comments"}),
    "span": frozenset({"tc-stars", "tc-btn", "tc-off", "tc-when", "tc-label"}),
    "table": frozenset({"tc-histogram"}),
}

#: Removed together with everything inside them (their text is not content).
_DROPPED_WITH_CONTENT = frozenset(
    {
        "applet", "base", "button", "embed", "form", "frame", "frameset", "head", "input", "link",
        "math", "meta", "noembed", "noframes", "noscript", "object", "param", "plaintext", "script",
        "select", "style", "svg", "template", "textarea", "title", "xmp",
    }
)  # fmt: skip

#: URL schemes of links: the web, and the buttons of Turbo's vocabulary (call, write)
LINK_SCHEMES = frozenset({"http", "https", "mailto", "tel"})
#: Partner links are user content for search engines, and leak neither opener nor referrer.
LINK_REL = "noopener noreferrer nofollow ugc"
#: Partner ids keep their meaning (in-page anchors) under a prefix no name of the page has.
ID_PREFIX = "c-"
#: Players a page may embed unless configured otherwise: ``kvwriter.video_hosts``'s default (YouTube,
#: Vimeo, Rutube and VK video, the embeds Turbo itself supports), which owns the list.
EMBED_HOSTS: tuple[str, ...] = tuple(KvwriterConfig().video_hosts)

#: The page's fixed attributes: lazy media, a sandboxed referrer-less player, videos with controls
#: (a page without JavaScript cannot start a video any other way).
_PAGE_ATTRIBUTES = {
    "img": {"loading": "lazy", "decoding": "async"},
    "iframe": {
        "sandbox": "allow-scripts allow-same-origin allow-presentation",
        "referrerpolicy": "no-referrer",
        "loading": "lazy",
    },
    "video": {"preload": "none", "controls": ""},
}
_WEB = frozenset({"http", "https"})
_CONTROL = re.compile(r"[\x00-\x20\x7f]")
_DIMENSION = re.compile(r"\d{1,5}%?")
_IFRAME = re.compile(r"<iframe\b([^>]*)>.*?</iframe>", re.DOTALL)
#: an img / source whose src the filter refused (the lookahead: no ' src="' / ' srcset="' inside the tag)
_MEDIA_NO_SRC = re.compile(r'<(?:img|source)\b(?![^>]*\ssrc(?:set)?=")[^>]*>')
_IFRAME_NO_SRC = re.compile(r'<iframe\b(?![^>]*\ssrc=")[^>]*>.*?</iframe>', re.DOTALL)
#: tags whose text runs on with its neighbours' (no word break at their edges)
_INLINE = r"(?:abbr|a|b|code|del|em|i|ins|kbd|mark|q|small|span|strong|sub|sup|s|time|u)\b"
_INLINE_TAG = re.compile(rf"</?{_INLINE}[^>]*>")
#: an inline element closed and another opened at once: two fields side by side (a card's name and its
#: price, ``<span>Чайник, 2 л</span><b>2 490 ₽</b>``), which the page's style sets apart; a word split
#: across two elements is a rarer thing than that
_SIBLINGS = re.compile(rf"</{_INLINE}[^>]*>(?=<{_INLINE})")
_ANY_TAG = re.compile(r"<[^>]*>")
#: whitespace but line breaks, and line breaks with the whitespace around them
_SPACES = re.compile(r"[^\S\n]+")
_BREAKS = re.compile(r" ?\n[\s]*")
#: between two blocks of ``plain_text``: search reads it as a space, a snippet as a separator
BLOCK_BREAK = "\n"
#: attributes the filter passes through untouched (text, or set by nh3 itself)
_PLAIN_ATTRS = frozenset(
    {
        "alt", "title", "lang", "dir", "rel", "loading", "decoding", "type", "scope", "controls",
        "allowfullscreen", "reversed", "datetime", "sandbox", "referrerpolicy", "preload", "class", "id",
        "open", "muted", "loop", "sizes", "media", "align", "span",
    }
)  # fmt: skip


class MediaRule(StrEnum):
    """Which image / video URLs survive."""

    #: any http(s) URL, resolved against the base: the parser's output, which the media cube caches
    source = "source"
    #: only CDN URLs (a cached source URL is mapped to its CDN copy first): the page never hotlinks
    cdn = "cdn"


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


def web_url(value: str, base_url: str, base_origin: str = "", *, schemes: frozenset[str] = _WEB) -> str | None:
    """``value`` resolved against ``base_url`` when it is a URL of ``schemes`` (with a host for the web)."""
    value = value.strip()
    if not value or _CONTROL.search(value):
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
    scheme = parts.scheme.lower()
    if scheme not in schemes:
        return None
    if scheme in _WEB:
        return urlunsplit(parts) if parts.hostname else None
    return value if parts.path else None  # mailto: / tel: need something to call or write to


class _CallState(threading.local):
    """What the attribute filter needs about the document being cleaned.

    nh3's callback has no user argument, so the current call's state lives here;
    thread-local so that two threads cleaning at once never see each other's.
    """

    base_url: str = ""
    base_origin: str = ""
    #: the document's own URL without its fragment: what a bare "#fragment" link points into
    page_url: str = ""
    media_map: Mapping[str, str] = {}


class SafeHtml:
    """A reusable cleaner for one configuration.

    ``media``: see ``MediaRule``. ``video_hosts``: the players iframes may show (``host`` or
    ``host/player-path`` entries, ``shared.pages.players``). ``cdn_base``: the
    CDN's public base (the ``cdn`` rule). ``page``: add the page's presentation attributes (lazy
    media, sandbox, controls); the parser's output is an intermediate, which does not want them.
    """

    def __init__(
        self, *, media: MediaRule, video_hosts: Iterable[str] = EMBED_HOSTS, cdn_base: str = "", page: bool = False
    ) -> None:
        self.media = media
        self.cdn_base = cdn_base
        #: the players iframes may show: a host and its player paths (``shared.pages.players``)
        self.players = Players(video_hosts)
        self._state = _CallState()
        attributes = {tag: set(attrs) for tag, attrs in ATTRIBUTES.items()}
        self._cleaner = nh3.Cleaner(
            tags=set(TAGS),
            clean_content_tags=set(_DROPPED_WITH_CONTENT),
            attributes=attributes,
            attribute_filter=self._filter_attr,
            strip_comments=True,
            link_rel=LINK_REL,
            set_tag_attribute_values=_PAGE_ATTRIBUTES if page else None,
            url_schemes=set(LINK_SCHEMES),
            allowed_classes={tag: set(names) for tag, names in CLASSES.items()},
            id_prefix=ID_PREFIX,
        )

    def clean(
        self,
        fragment: str,
        *,
        base_url: str,
        page_url: str | None = None,
        media_map: Mapping[str, str] | None = None,
    ) -> str:
        """The safe form of ``fragment``; relative URLs resolved against ``base_url``.

        ``page_url``: the document's own URL (default ``base_url``), which a bare ``#fragment``
        link points into. ``media_map`` (the ``cdn`` rule): source URL -> CDN URL of cached media.
        """
        state = self._state
        state.base_url = base_url
        state.base_origin = _origin(base_url)
        state.page_url = (page_url or base_url).partition("#")[0]
        state.media_map = media_map or {}
        try:
            out: str = self._cleaner.clean(fragment)
        finally:
            state.media_map = {}
        # Raw text inside an iframe is never shown; empty it, then drop iframes without a src.
        if "<iframe" in out:
            out = _IFRAME_NO_SRC.sub("", out)
            out = _IFRAME.sub(r"<iframe\1></iframe>", out)
        return _MEDIA_NO_SRC.sub("", out) if "<img" in out or "<source" in out else out

    def media_url(self, url: str, media_map: Mapping[str, str] | None = None) -> str | None:
        """The URL to show for medium ``url``, or None. ``cdn``: its CDN copy only, never a hotlink."""
        if self.media is MediaRule.source:
            state = self._state
            return web_url(url, state.base_url, state.base_origin)
        mapped = (media_map or {}).get(url, url)
        return mapped if is_cdn_url(mapped, self.cdn_base) else None

    def video_src(self, value: str) -> str | None:
        """An allowlisted player URL (``shared.pages.players``: its host and player path), https and canonical."""
        if _CONTROL.search(value):
            return None
        return self.players.player_url(value)

    def _srcset(self, value: str) -> str | None:
        kept = []
        for url, descriptor in parse_srcset(value):
            shown = self.media_url(url, self._state.media_map)
            if shown is not None:
                kept.append(f"{shown} {descriptor}".rstrip())
        return ", ".join(kept) or None

    def _filter_attr(self, tag: str, attr: str, value: str) -> str | None:
        if attr in _PLAIN_ATTRS:  # most calls: nothing to check
            return value
        state = self._state
        if attr == "href":  # only <a> has one
            if value.startswith("#"):  # into this very document (the fragment is kept as written)
                return state.page_url + value if state.page_url and len(value) > 1 else None
            return web_url(value, state.base_url, state.base_origin, schemes=LINK_SCHEMES)
        if attr == "src" and tag == "iframe":
            return self.video_src(value)
        if attr == "src" or (tag == "video" and attr == "poster"):
            return self.media_url(value.strip(), state.media_map)
        if attr == "srcset":
            return self._srcset(value)
        if attr in ("width", "height"):
            return value if _DIMENSION.fullmatch(value.strip()) else None
        if attr in ("colspan", "rowspan", "start"):
            return value if value.strip().isdigit() and len(value.strip()) <= 4 else None
        return value


def plain_text(safe_html: str) -> str:
    """Visible text of *sanitized* HTML (nh3 output), for search and its snippets: whitespace collapsed,
    one ``BLOCK_BREAK`` between blocks (a paragraph, a heading, a caption, a list item, a line break, a
    card's fields), so that a snippet shows where one ends and the next begins."""
    text = _IFRAME.sub(" ", safe_html) if "<iframe" in safe_html else safe_html
    # In nh3's output a literal "<" always opens a tag and ">" closes it (both are escaped elsewhere),
    # so these patterns are exact. Inline tags join their text ("wor<b>ld</b>" is one word) but for
    # siblings side by side; every other tag ends a block.
    text = _SIBLINGS.sub("\n", text)
    text = _INLINE_TAG.sub("", text)
    text = _ANY_TAG.sub("\n", text)
    return _BREAKS.sub("\n", _SPACES.sub(" ", html.unescape(text))).strip()
