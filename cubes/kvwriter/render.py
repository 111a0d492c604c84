"""The Turbo page: one light HTML document per document (DESIGN.md sections 2-3, "kvwriter").

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

from shared.config import Settings
from shared.messages import DocKind, Document, Media, Product
from shared.previews import preview_key
from shared.safehtml import MediaRule, SafeHtml, plain_text

__all__ = ["PAGE_CSS", "RENDER_REVISION", "Rendered", "etag_for", "page_sanitizer", "preview_key", "render"]

#: Bumped whenever the page markup changes, so cached copies (ETags) of old markup expire.
RENDER_REVISION = 1

#: Media roles shown above the body when the body does not show them already.
_LEAD_ROLES = ("cover", "picture", "enclosure", "thumbnail")
#: A product page shows at most this many pictures: the first big, the rest as a strip.
_MAX_PICTURES = 5
_ETAG_SAFE = re.compile(r"[^A-Za-z0-9]")
_CURRENCY = {"RUR": "₽", "RUB": "₽", "USD": "$", "EUR": "€", "GBP": "£", "KZT": "₸", "UAH": "₴", "BYN": "Br"}

PAGE_CSS = (
    ":root{color-scheme:light dark;--fg:#18181b;--mut:#5f6368;--bg:#fff;--card:#f4f5f7;--line:#e5e7eb;"
    "--acc:#e8490f;--ok:#137333;--bad:#c5221f}"
    "@media(prefers-color-scheme:dark){:root{--fg:#e8eaed;--mut:#9aa0a6;--bg:#111214;--card:#1c1d21;"
    "--line:#2c2e33;--acc:#ff7a45;--ok:#81c995;--bad:#f28b82}}"
    "*{box-sizing:border-box}html{-webkit-text-size-adjust:100%}"
    "body{margin:0;background:var(--bg);color:var(--fg);"
    "font:17px/1.65 system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif}"
    ".bar{position:sticky;top:0;z-index:1;background:var(--bg);border-bottom:1px solid var(--line)}"
    ".bar div{display:flex;align-items:center;gap:.6rem;max-width:42rem;margin:0 auto;padding:.55rem 1.1rem}"
    ".bar a{color:inherit;text-decoration:none}.host{font-weight:650;overflow:hidden;text-overflow:ellipsis;"
    "white-space:nowrap}.turbo{margin-left:auto;flex:none;font-size:.78rem;font-weight:650;"
    "padding:.12rem .6rem;border-radius:999px;background:var(--acc);color:#fff}"
    ".pre{background:#fbbc04;color:#202124;text-align:center;font-size:.85rem;padding:.3rem}"
    "main,footer{max-width:42rem;margin:0 auto;padding:1.4rem 1.1rem}"
    "h1{font-size:clamp(1.6rem,5vw,2.3rem);line-height:1.18;letter-spacing:-.015em;margin:.2rem 0 .7rem}"
    ".by{color:var(--mut);font-size:.9rem;margin:0 0 1.6rem}"
    "img,video{max-width:100%;height:auto;border-radius:.5rem}"
    "iframe{width:100%;height:auto;aspect-ratio:16/9;border:0;border-radius:.5rem}"
    "figure{margin:1.6rem 0}figcaption{color:var(--mut);font-size:.85rem;margin-top:.4rem}"
    "a{color:var(--acc);text-underline-offset:2px}"
    "blockquote{margin:1.6rem 0;padding:.1rem 1.1rem;border-left:3px solid var(--acc);color:var(--mut)}"
    "pre{overflow:auto;background:var(--card);padding:1rem;border-radius:.5rem;font-size:.88rem}"
    "code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.92em}"
    "table{border-collapse:collapse;display:block;overflow-x:auto;max-width:100%}"
    "td,th{border:1px solid var(--line);padding:.35rem .6rem;text-align:left}"
    ".lead{margin:0 0 1.4rem}.strip{display:flex;gap:.5rem;overflow-x:auto;margin-top:.5rem}"
    ".strip img{height:4.5rem;width:auto}"
    ".product{background:var(--card);border-radius:.8rem;padding:1rem 1.2rem;margin:0 0 1.6rem}"
    ".price{font-size:1.7rem;font-weight:750;margin:0}.old{color:var(--mut);font-size:1rem;font-weight:400;"
    "margin-left:.5rem}.stock{margin:.1rem 0 .8rem;font-weight:600}.in{color:var(--ok)}.out{color:var(--bad)}"
    ".params{display:grid;grid-template-columns:minmax(6rem,auto) 1fr;gap:.3rem 1rem;margin:0}"
    ".params dt{color:var(--mut)}.params dd{margin:0}"
    "footer{border-top:1px solid var(--line);color:var(--mut);font-size:.9rem;padding-bottom:2.5rem}"
    "footer a{font-weight:600}"
)


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


def _when(ts: datetime) -> str:
    return f'<time datetime="{ts.isoformat()}">{ts.strftime("%d %b %Y, %H:%M")} UTC</time>'


def _money(amount: str, currency: str | None) -> str:
    sign = _CURRENCY.get((currency or "").upper())
    if sign:
        return f"{escape(amount)}&nbsp;{escape(sign)}"
    return f"{escape(amount)}&nbsp;{escape(currency)}" if currency else escape(amount)


def _product_block(p: Product) -> str:
    parts = ['<section class="product" aria-label="Product">']
    if p.price:
        old = f'<s class="old">{_money(p.old_price, p.currency)}</s>' if p.old_price else ""
        parts.append(f'<p class="price">{_money(p.price, p.currency)}{old}</p>')
    stock = '<p class="stock in">In stock</p>' if p.available else '<p class="stock out">Out of stock</p>'
    parts.append(stock)
    facts = [("Vendor", p.vendor), ("Model", p.model), ("Category", p.category)]
    facts += [(q.name, f"{q.value} {q.unit}" if q.unit else q.value) for q in p.params]
    rows = "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in facts if v)
    if rows:
        parts.append(f'<dl class="params">{rows}</dl>')
    parts.append("</section>")
    return "".join(parts)


def _product_text(p: Product) -> str:
    words = [p.vendor, p.model, p.category, p.price and f"{p.price} {p.currency or ''}".strip()]
    words += [f"{q.name} {q.value}" for q in p.params]
    return " ".join(w for w in words if w)


def _lead_media(doc: Document, shown: list[str | None], body: str) -> tuple[str, int]:
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
    first = f'<img src="{escape(urls[0])}" alt="{alt}">'
    strip = "".join(f'<img src="{escape(u)}" alt="" loading="lazy">' for u in urls[1:])
    return f'<figure class="lead">{first}{f"<div class=strip>{strip}</div>" if strip else ""}</figure>', len(urls)


def _media_json(media: list[Media], shown: list[str | None]) -> list[dict[str, Any]]:
    out = []
    for m, cdn in zip(media, shown, strict=True):
        if cdn:
            out.append({"url": cdn, "kind": m.kind.value, "role": m.role, "width": m.width, "height": m.height})
    return out


#: a leading <h1> of the body (Turbo's <header><h1> repeats the title), after sanitizing
_LEADING_H1 = re.compile(r"^\s*(<header>\s*)?<h1>(.*?)</h1>", re.S)


def _without_repeated_title(body: str, title: str) -> str:
    """Drop the body's leading <h1> when it only repeats the page title (shown once, above)."""
    m = _LEADING_H1.match(body)
    if m is None:
        return body
    if " ".join(plain_text(m.group(2)).split()).casefold() != " ".join(title.split()).casefold():
        return body
    return body[: m.start(2) - len("<h1>")] + body[m.end() :]


def render(doc: Document, sanitizer: SafeHtml, *, written_at: datetime) -> Rendered:
    """Render ``doc`` (a ``documents.ready`` message) into its Turbo page."""
    media_map = {m.url: m.cdn_url for m in doc.media if m.cdn_url}
    body = sanitizer.clean(doc.content_html, base_url=doc.url, media_map=media_map) if doc.content_html else ""
    body = _without_repeated_title(body, doc.title)
    if not body and doc.summary:
        body = f"<p>{escape(doc.summary)}</p>"
    # each medium's CDN URL, decided once for the lead pictures, the JSON form and the count
    media_urls = [sanitizer.media_url(m.cdn_url or m.url) for m in doc.media]
    lead, lead_count = _lead_media(doc, media_urls, body)
    shown = body.count("<img ") + body.count("<video ") + lead_count
    dropped = media_urls.count(None)

    title = escape(doc.title)
    host = escape(doc.host)
    url = escape(doc.url)
    by = [escape(doc.author)] if doc.author else []
    if doc.published_at:
        by.append(_when(doc.published_at))
    byline = f'<p class="by">{" · ".join(by)}</p>' if by else ""
    product = _product_block(doc.product) if doc.product else ""
    lang = doc.extra.get("language")
    lang_attr = f' lang="{escape(lang)}"' if isinstance(lang, str) and lang.isascii() and len(lang) < 16 else ""
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
        f"<main><article><h1>{title}</h1>{byline}{lead}{product}"
        f'<div class="body">{body}</div></article></main>'
        f'<footer>Original: <a href="{url}" rel="noopener">{host}</a></footer></body></html>'
    )

    text_parts = [doc.summary or "", plain_text(body) if doc.content_html else ""]
    if doc.product:
        text_parts.append(_product_text(doc.product))
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
