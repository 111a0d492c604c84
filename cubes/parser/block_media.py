"""Turbo's picture blocks: galleries, sliders, snippets, cards, feeds, videos, embeds, ads (see ``blocks.py``)."""

from __future__ import annotations

from urllib.parse import urlsplit

from lxml import etree

from cubes.parser.blockkit import Context, block_of, caption, children, make, move_content, replace, text_of
from cubes.parser.embeds import brand, site_name, watch_url
from shared.pages.i18n import label

__all__ = [
    "ad",
    "card",
    "card_button",
    "cards",
    "feed",
    "gallery",
    "iframe",
    "lone_snippet",
    "slider",
    "snippet",
    "video_figure",
]


def _figure_of(img: etree._Element) -> etree._Element:
    fig = make("figure", "tc-slide")
    fig.append(make("img", None, None, src=img.get("src") or "", alt=img.get("alt") or ""))
    return fig


def gallery(el: etree._Element, ctx: Context, cls: str = "tc-gallery") -> None:
    out = make("div", cls)
    title = caption(el)  # above the scroller, not one of its slides
    for child in children(el):
        if child.get("data-turbo-ad-id") is not None:
            ctx.note("page.content_dropped", "an ad slot (data-turbo-ad-id) is not shown: these pages carry no ads")
        elif child.tag == "img":
            out.append(_figure_of(child))
        elif child.tag == "figure":
            child.set("class", "tc-slide")
            if child.find(".//video") is not None:
                video_figure(child, ctx)
                child.set("class", "tc-slide")
            else:
                ctx.walk(child)
            out.append(child)
        elif block_of(child) == "snippet":
            out.append(snippet(child))
        else:
            holder = make("figure", "tc-slide")
            holder.append(child)
            ctx.walk(holder)
            out.append(holder)
    replace(el, [*title, out])


def cards(el: etree._Element, ctx: Context) -> None:
    out = make("div", "tc-cards")
    for child in children(el):
        block = block_of(child)
        if block == "card":
            art = make("article", "tc-card")
            move_content(child, art, ctx)
            out.append(art)
        elif block == "carousel":
            holder = make("div")
            holder.append(child)
            gallery(child, ctx, "tc-slider")
            out.extend(list(holder))  # the carousel's caption and scroller, in the cards' place
        else:
            out.append(child)
            ctx.walk_one(child)
    replace(el, [out])


def snippet(el: etree._Element) -> etree._Element:
    url = (el.get("data-url") or "").strip()
    fig = make("figure", "tc-slide")
    if img := (el.get("data-img") or "").strip():
        pic = make("a", None, None, href=url)
        pic.append(make("img", None, None, src=img, alt=""))
        fig.append(pic)
    cap = make("figcaption")
    cap.append(make("a", None, (el.get("data-title") or "").strip() or url, href=url))
    fig.append(cap)
    return fig


def feed(el: etree._Element, ctx: Context) -> None:
    out = make("div", "tc-feed")
    if title := (el.get("data-title") or "").strip():
        out.append(make("p", "tc-cap", title))
    for item in children(el):
        href = (item.get("data-href") or "").strip()
        card = make("article", "tc-card")
        if thumb := (item.get("data-thumb") or "").strip():
            pic = make("a", None, None, href=href)
            pic.append(make("img", None, None, src=thumb, alt=""))
            card.append(pic)
        head = make("h3")
        head.append(make("a", None, (item.get("data-title") or "").strip() or href, href=href))
        card.append(head)
        if desc := (item.get("data-description") or "").strip():
            card.append(make("p", None, desc))
        out.append(card)
    replace(el, [out])


def video_figure(el: etree._Element, ctx: Context) -> None:
    """Turbo's video: ``<figure><video><source/></video><img poster/><figcaption/></figure>``."""
    el.set("class", "tc-video")
    video = el.find(".//video")
    if video is None:  # pragma: no cover - the caller found one
        return
    for img in [c for c in children(el) if c.tag == "img"]:
        if not video.get("poster") and img.get("src"):
            video.set("poster", img.get("src", ""))
        replace(img, [])


def iframe(el: etree._Element, ctx: Context) -> None:
    """An allowed player, with its title and a "watch on <site>" link under it (``embeds.py``: why)."""
    src = (el.get("src") or "").strip()
    full = "https:" + src if src.startswith("//") else src
    host = (urlsplit(full).hostname or "").lower() if src else ""
    if not src or ctx.players.player_url(src) is None:  # the sanitizer rewrote it already: only checked here
        where = f"{host}'s page {urlsplit(full).path or '/'}" if host in ctx.players.hosts else (host or "nowhere")
        ctx.note(
            "page.content_dropped",
            f"an embed from {where} is not shown: only players of kvwriter.video_hosts are",
        )
        replace(el, [])
        return
    parent = el.getparent()
    if parent is not None and parent.get("class") == "tc-embed":  # made by us already
        return
    # the title: the partner's (the iframe's title, or the figure's caption that already shows it)
    figure = parent if parent is not None and parent.tag == "figure" else None
    shown = figure is not None and any(c.tag == "figcaption" and text_of(c) for c in children(figure))
    title = (el.get("title") or "").strip()
    default = label("video_on", ctx.lang, site=brand(host))
    box = make("div", "tc-embed")
    frame = make("iframe", None, None, **{k: v for k, v in el.attrib.items() if isinstance(k, str)})
    frame.set("title", title or default)
    box.append(frame)
    if title or not shown:
        box.append(make("p", "tc-cap", title or default))
    link = make("p", "tc-sub")
    link.append(make("a", None, label("watch_on", ctx.lang, site=site_name(host)), href=watch_url(full)))
    box.append(link)
    replace(el, [box])


def ad(el: etree._Element, ctx: Context) -> None:
    ctx.note("page.content_dropped", "an ad slot (data-turbo-ad-id) is not shown: these pages carry no ads")
    replace(el, [])


def slider(el: etree._Element, ctx: Context) -> None:
    gallery(el, ctx, "tc-slider")


def card(el: etree._Element, ctx: Context) -> None:
    cards(_wrapped(el), ctx)


def lone_snippet(el: etree._Element, ctx: Context) -> None:
    replace(el, [snippet(el)])


def card_button(el: etree._Element, ctx: Context) -> None:
    """A card's footer link (``<a data-block="button">``, ``"more"``) shown as a button."""
    for link in el.iter("a"):
        link.set("class", "tc-btn")


def _wrapped(el: etree._Element) -> etree._Element:
    """A lone ``card`` as the ``cards`` block it belongs in."""
    holder = make("div", None, None, data_block="cards")
    parent = el.getparent()
    if parent is not None:
        parent.replace(el, holder)
        holder.tail, el.tail = el.tail, None
    holder.append(el)
    return holder
