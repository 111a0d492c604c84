"""The Turbo page: one light HTML document per document (docs/architecture.md sections 2-3, "kvwriter").

What a page is: inline minimal CSS, no JavaScript, no third-party request
(media only from the CDN, ``shared/pages/safehtml.py``), readable on a phone, light and
dark. A header with the host and a rocket badge, the title, byline and date,
the body, a product block for YML offers, and a footer link to the original.
``render`` also gives the plain text that search indexes, the JSON form the
API serves, and the ETag (content hash + version + the renderer's revision).

The markup is ``html/page.html``, a Jinja2 template that escapes every value
(``shared/pages/templates.py``: HTML is made one way); the body is the safe-HTML
policy's output, the one value printed as it is. It costs more than the
hand-escaped f-strings it replaced: ``bench/kvwriter.py --against 42ea9be`` measured
288 against 331 us of CPU a page in one run (1.15x, load 2.7; the template itself
is 21-35 us of it, the sanitizer most of the rest). Kept, because that is about
4% of a core at a thousand pages a second, and markup that needs a hand
``escape()`` around every value is one forgotten call away from an XSS hole on
every published page.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import orjson
from markupsafe import Markup

from cubes.kvwriter.body import (
    IMAGE_SIZES,
    Measured,
    shows_image,
    with_image_sizes,
    with_local_anchors,
    with_turbo_links,
    without_repeated_title,
)
from cubes.kvwriter.branding import PageBrand
from cubes.kvwriter.product import product_text, product_view
from shared.config import Settings
from shared.images.variants import srcset
from shared.messages import DocKind, Document, Media
from shared.pages.i18n import format_date, label, language
from shared.pages.safehtml import BLOCK_BREAK, MediaRule, SafeHtml, plain_text
from shared.pages.style import FIRST_PAINT_CSS, STYLESHEET_PATH
from shared.pages.templates import html_environment
from shared.pages.turbo_links import CATEGORY_PARAM, OFFERS_KEY, category_path
from shared.previews import preview_key
from shared.search.analysis import detect_lang

__all__ = [
    "PRELOAD",
    "RENDER_REVISION",
    "Rendered",
    "etag_for",
    "page_sanitizer",
    "preview_key",
    "render",
    "render_isolated",
    "sanitizer_config",
]

#: what a worker process imports before it renders (``shared/offload.py``)
PRELOAD = ("cubes.kvwriter.render",)
#: Bumped whenever the page markup changes, so cached copies (ETags) of old markup expire.
#: 5: the stylesheet is one shared file (shared/pages/style.py), only the first paint's rules inline
#: 6: a shop's cart and one-click order buttons; a category listing's "Original" is the shop's site
#: 7: a shop page's crumbs and a listing's category links open the categories' pages, a listing links its offers'
RENDER_REVISION = 7

#: Media roles shown above the body when the body does not show them already.
_LEAD_ROLES = ("cover", "picture", "enclosure", "thumbnail")
#: A product page shows at most this many pictures: the first big, the rest as a strip.
_MAX_PICTURES = 5
_ETAG_SAFE = re.compile(r"[^A-Za-z0-9]")
#: the extra of a catalog's category listing (the parser's ``cubes/parser/categories.py``), and its URL's key
_LISTING = "turbo:category"
#: characters of a shop page's text read to tell its language (enough letters to tell Cyrillic from Latin)
_LANG_SAMPLE = 2000
_PAGE = html_environment("cubes.kvwriter").get_template("page.html")
_CSS = Markup(FIRST_PAINT_CSS)  # noqa: S704 - our own stylesheet, a constant


@dataclass(frozen=True, slots=True)
class Rendered:
    html: str
    text: str  # plain text for search (summary + body + product facts)
    doc_json: bytes  # the JSON form served by /api/v1/pages
    etag: str
    shown_media: int  # media shown from the CDN
    dropped_media: int  # media of the document not shown: not in the CDN


def page_sanitizer(settings: Settings) -> SafeHtml:
    """The page's cleaner: the one safe-HTML policy with media from the CDN only and the page's attributes."""
    return _sanitizer(*sanitizer_config(settings))


def sanitizer_config(settings: Settings) -> tuple[str, tuple[str, ...]]:
    """What the page's cleaner is made of (the CDN's base, the players): a worker process builds it again."""
    return settings.cdn.public_base_url, tuple(settings.kvwriter.video_hosts)


@functools.lru_cache(maxsize=8)
def _sanitizer(cdn_base: str, video_hosts: tuple[str, ...]) -> SafeHtml:
    return SafeHtml(media=MediaRule.cdn, cdn_base=cdn_base, video_hosts=video_hosts, page=True)


def render_isolated(
    doc: Document, config: tuple[str, tuple[str, ...]], written_at: datetime, brand: PageBrand | None = None
) -> Rendered:
    """``render`` in a worker process (``KvwriterHandler.rendered``): ``config`` is ``sanitizer_config``'s."""
    return render(doc, _sanitizer(*config), written_at=written_at, brand=brand)


def etag_for(content_hash: str, version: int) -> str:
    """A strong ETag from the document's content hash, its version and the renderer's revision."""
    return f'"{_ETAG_SAFE.sub("", content_hash)[:40]}-{version}-r{RENDER_REVISION}"'


@dataclass(frozen=True, slots=True)
class _Picture:
    """A picture above the body: its CDN URL and, when the CDN measured it, its size and smaller copies."""

    url: str
    width: int | None = None
    height: int | None = None
    srcset: str | None = None


def _lead_media(doc: Document, shown: list[str | None], body: str, measured: dict[str, Measured]) -> list[_Picture]:
    """Cover / product pictures not already in the body, from the CDN only (the first measured).

    ``shown``: the CDN URL to show for each of ``doc.media`` (None: not in the CDN).
    """
    urls: list[str] = []
    for m, cdn in zip(doc.media, shown, strict=True):
        if m.role not in _LEAD_ROLES or m.kind.value != "image":
            continue
        if cdn and cdn not in urls and not shows_image(body, cdn):
            urls.append(cdn)
    urls = urls[: _MAX_PICTURES if doc.kind is DocKind.product else 1]
    if not urls:
        return []
    first = _Picture(urls[0])
    if (size := measured.get(urls[0])) is not None:
        copies = srcset(urls[0], size.width, size.variants) if size.variants else None
        first = _Picture(urls[0], size.width, size.height, copies)
    return [first, *(_Picture(u) for u in urls[1:])]


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _sizes(media: list[Media]) -> dict[str, Measured]:
    """CDN URL -> what the CDN measured of every medium (the media cube copies it in)."""
    return {
        m.cdn_url: Measured(m.width, m.height, tuple(m.variants)) for m in media if m.cdn_url and m.width and m.height
    }


def _media_json(media: list[Media], shown: list[str | None]) -> list[dict[str, Any]]:
    out = []
    for m, cdn in zip(media, shown, strict=True):
        if cdn:
            out.append({"url": cdn, "kind": m.kind.value, "role": m.role, "width": m.width, "height": m.height})
    return out


def _lang(doc: Document, body: str) -> str | None:
    """The page's language: its source's (RSS ``<language>``); a shop's page, whose catalog cannot say one (YML
    has no such element), is Russian when its own words are, so a Russian catalog's labels are Russian."""
    declared = language(_str(doc.extra.get("language")))
    if declared or not (doc.product or _LISTING in doc.extra):
        return declared
    # only Russian is told apart: any other text keeps the page without a language (English words, and a
    # rouble price written the Russian way, as before)
    return "ru" if detect_lang(f"{doc.title} {plain_text(body)[:_LANG_SAMPLE]}") == "ru" else None


def _original_url(doc: Document) -> str:
    """Where the footer's "Original" goes: the page itself; for a catalog's category listing, whose URL is the
    shop's site with the category in its query (no such page there), the shop's site."""
    if _LISTING not in doc.extra:
        return doc.url
    parts = urlsplit(doc.url)
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != CATEGORY_PARAM])
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))


def _all_offers(doc: Document, lang: str | None) -> tuple[str, str] | None:
    """A category listing with offers of its own links to its category's page: (the path, its words)."""
    category, offers = doc.extra.get(_LISTING), doc.extra.get(OFFERS_KEY)
    if not isinstance(category, str) or not isinstance(offers, str) or not offers.isdigit():
        return None
    return category_path(doc.host, category), label("all_offers", lang, n=offers)


def render(doc: Document, sanitizer: SafeHtml, *, written_at: datetime, brand: PageBrand | None = None) -> Rendered:
    """Render ``doc`` (a ``documents.ready`` message) into its Turbo page, in ``brand``'s look when given."""
    media_map = {m.url: m.cdn_url for m in doc.media if m.cdn_url}
    body = sanitizer.clean(doc.content_html, base_url=doc.url, media_map=media_map) if doc.content_html else ""
    body = without_repeated_title(body, doc.title)
    body = with_local_anchors(body, doc.url)
    body = with_turbo_links(body, doc.host, listing=_LISTING in doc.extra)
    measured = _sizes(doc.media)
    body = with_image_sizes(body, measured)
    if not body and doc.summary:
        body = Markup("<p>{}</p>").format(doc.summary)
    # each medium's CDN URL, decided once for the lead pictures, the JSON form and the count
    media_urls = [sanitizer.media_url(m.cdn_url or m.url) for m in doc.media]
    lead = _lead_media(doc, media_urls, body, measured)
    shown = body.count("<img ") + body.count("<video ") + len(lead)
    dropped = media_urls.count(None)

    lang = _lang(doc, body)
    page = _PAGE.render(
        doc=doc,
        lang=lang,
        css=_CSS,
        stylesheet=STYLESHEET_PATH,
        date=format_date(doc.published_at, lang) if doc.published_at else "",
        lead=lead,
        sizes=IMAGE_SIZES,
        product=(
            product_view(doc.product, doc.url, lang, shop=brand.shop if brand else None, title=doc.title)
            if doc.product
            else None
        ),
        body=Markup(body),  # noqa: S704 - the safe-HTML policy's output
        original=label("original", lang),
        original_url=_original_url(doc),
        # a category listing's link to its category's page: all its offers, paged, sorted and filtered
        all_offers=_all_offers(doc, lang),
        brand=brand,
        # the accent is checked as #rrggbb where it enters (shared/webmaster/branding.py): nothing else reaches the
        # style
        accent=Markup(f":root{{--acc:{brand.accent}}}") if brand and brand.accent else None,  # noqa: S704
    )

    text_parts = [doc.summary or "", plain_text(body) if doc.content_html else ""]
    if doc.product:
        text_parts.append(product_text(doc.product, lang))
    text = BLOCK_BREAK.join(t for t in text_parts if t)

    etag = etag_for(doc.content_hash, doc.version)
    form = doc.model_dump(mode="json", exclude={"content_html", "media", "trace_id", "schema_version"})
    form.update(
        content_html=body,
        media=_media_json(doc.media, media_urls),
        written_at=written_at.isoformat(),
        etag=etag,
    )
    return Rendered(
        html=page,
        text=text,
        doc_json=orjson.dumps(form),
        etag=etag,
        shown_media=shown,
        dropped_media=dropped,
    )
