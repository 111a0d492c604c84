"""The Turbo page: one light HTML document per document (docs/architecture.md sections 2-3, "kvwriter").

What a page is: inline minimal CSS, no JavaScript, no third-party request
(media only from the CDN, see ``sanitize.py``), readable on a phone, light and
dark. A header with the host and a rocket badge, the title, byline and date,
the body, a product block for YML offers, and a footer link to the original.
``render`` also gives the plain text that search indexes, the JSON form the
API serves, and the ETag (content hash + version + the renderer's revision).

Preview documents (debug uploads) are stored under ``preview_key(task, url)``,
never under the public URL, so a preview can never replace a published page.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from html import escape
from typing import Any

import orjson

from cubes.kvwriter.body import Measured, with_image_sizes, with_local_anchors, with_turbo_links, without_repeated_title
from cubes.kvwriter.css import PAGE_CSS
from cubes.kvwriter.product import breadcrumbs, product_block, product_text
from shared.config import Settings
from shared.i18n import format_date, label, language
from shared.messages import DocKind, Document, Media
from shared.previews import preview_key
from shared.safehtml import MediaRule, SafeHtml, plain_text

__all__ = ["PAGE_CSS", "RENDER_REVISION", "Rendered", "etag_for", "page_sanitizer", "preview_key", "render"]

#: Bumped whenever the page markup changes, so cached copies (ETags) of old markup expire.
RENDER_REVISION = 3

#: Media roles shown above the body when the body does not show them already.
_LEAD_ROLES = ("cover", "picture", "enclosure", "thumbnail")
#: A product page shows at most this many pictures: the first big, the rest as a strip.
_MAX_PICTURES = 5
_ETAG_SAFE = re.compile(r"[^A-Za-z0-9]")


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
    return SafeHtml(
        media=MediaRule.cdn,
        cdn_base=settings.cdn.public_base_url,
        video_hosts=settings.kvwriter.video_hosts,
        page=True,
    )


def etag_for(content_hash: str, version: int) -> str:
    """A strong ETag from the document's content hash, its version and the renderer's revision."""
    return f'"{_ETAG_SAFE.sub("", content_hash)[:40]}-{version}-r{RENDER_REVISION}"'


def _when(ts: datetime, lang: str | None) -> str:
    """The date in the page's language, at the source's own UTC offset (``shared.i18n``)."""
    return f'<time datetime="{ts.isoformat()}">{escape(format_date(ts, lang))}</time>'


def _lead_media(
    doc: Document, shown: list[str | None], body: str, measured: dict[str, Measured] | None = None
) -> tuple[str, int]:
    """Cover / product pictures not already in the body, from the CDN only; (html, how many).

    ``shown``: the CDN URL to show for each of ``doc.media`` (None: not in the CDN).
    """
    urls: list[str] = []
    for m, cdn in zip(doc.media, shown, strict=True):
        if m.role not in _LEAD_ROLES or m.kind.value != "image":
            continue
        if cdn and cdn not in urls and f'src="{escape(cdn)}"' not in body:
            urls.append(cdn)
    urls = urls[: _MAX_PICTURES if doc.kind is DocKind.product else 1]
    if not urls:
        return "", 0
    alt = escape(doc.title)
    lead = (measured or {}).get(urls[0])
    first = f'<img src="{escape(urls[0])}"{lead.attrs(urls[0]) if lead else ""} alt="{alt}">'
    strip = "".join(f'<img src="{escape(u)}" alt="" loading="lazy">' for u in urls[1:])
    return f'<figure class="lead">{first}{f"<div class=strip>{strip}</div>" if strip else ""}</figure>', len(urls)


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


def render(doc: Document, sanitizer: SafeHtml, *, written_at: datetime) -> Rendered:
    """Render ``doc`` (a ``documents.ready`` message) into its Turbo page."""
    media_map = {m.url: m.cdn_url for m in doc.media if m.cdn_url}
    body = sanitizer.clean(doc.content_html, base_url=doc.url, media_map=media_map) if doc.content_html else ""
    body = without_repeated_title(body, doc.title)
    body = with_local_anchors(body, doc.url)
    body = with_turbo_links(body, doc.host, listing="turbo:category" in doc.extra)
    measured = _sizes(doc.media)
    body = with_image_sizes(body, measured)
    if not body and doc.summary:
        body = f"<p>{escape(doc.summary)}</p>"
    # each medium's CDN URL, decided once for the lead pictures, the JSON form and the count
    media_urls = [sanitizer.media_url(m.cdn_url or m.url) for m in doc.media]
    lead, lead_count = _lead_media(doc, media_urls, body, measured)
    shown = body.count("<img ") + body.count("<video ") + lead_count
    dropped = media_urls.count(None)

    title = escape(doc.title)
    host = escape(doc.host)
    url = escape(doc.url)
    lang = language(_str(doc.extra.get("language")))
    by = [escape(doc.author)] if doc.author else []
    if doc.published_at:
        by.append(_when(doc.published_at, lang))
    byline = f'<p class="by">{" · ".join(by)}</p>' if by else ""
    product = product_block(doc.product, doc.url, lang) if doc.product else ""
    crumbs = breadcrumbs(doc.product, lang) if doc.product else ""
    lang_attr = f' lang="{escape(lang)}"' if lang else ""
    banner = '<div class="pre">Preview: this page is not published</div>' if doc.preview else ""
    robots = '<meta name="robots" content="noindex">' if doc.preview else ""

    page = (
        f'<!doctype html><html{lang_attr}><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"{robots}<title>{title} · {host}</title>"
        f'<link rel="canonical" href="{url}"><link rel="icon" href="/favicon.svg" type="image/svg+xml">'
        f"<style>{PAGE_CSS}</style></head><body>{banner}"
        f'<header class="bar"><div><a class="host" href="/">{host}</a>'
        '<span class="turbo" title="Turbo page">&#128640; Turbo</span></div></header>'
        f"<main><article>{crumbs}<h1>{title}</h1>{byline}{lead}{product}"
        f'<div class="body">{body}</div></article></main>'
        f'<footer>{escape(label("original", lang))}: <a href="{url}" rel="noopener">{host}</a></footer></body></html>'
    )

    text_parts = [doc.summary or "", plain_text(body) if doc.content_html else ""]
    if doc.product:
        text_parts.append(product_text(doc.product))
    text = " ".join(t for t in text_parts if t)

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
