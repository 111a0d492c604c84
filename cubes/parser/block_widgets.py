"""Turbo's interactive blocks as static HTML: header, accordion, buttons, share, feedback, rating ...

... comments, fold, histogram, audio and related items; ``blocks.py`` has the table of what each becomes.
"""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit, urlunsplit

from lxml import etree

from cubes.parser.blockkit import Context, block_of, children, make, move_content, replace, text_of
from shared.pages.i18n import label

__all__ = [
    "accordion",
    "audio",
    "button",
    "comments",
    "crumbs",
    "feedback",
    "fold",
    "form",
    "header",
    "histogram",
    "menu",
    "rating",
    "related",
    "share",
]

#: share networks Turbo names, with the link that shares ``{url}`` on each
_SHARE = {
    "vkontakte": ("VK", "https://vk.com/share.php?url={url}"),
    "facebook": ("Facebook", "https://www.facebook.com/sharer/sharer.php?u={url}"),
    "twitter": ("X", "https://twitter.com/intent/tweet?url={url}"),
    "odnoklassniki": ("OK", "https://connect.ok.ru/offer?url={url}"),
    "telegram": ("Telegram", "https://t.me/share/url?url={url}"),
    "whatsapp": ("WhatsApp", "https://wa.me/?text={url}"),
    "viber": ("Viber", "viber://forward?text={url}"),
}
_DEFAULT_SHARE = ("vkontakte", "telegram", "odnoklassniki", "whatsapp", "twitter")
#: feedback widget types that are a link of the partner's, with their name
_CHANNELS = {
    "whatsapp": "WhatsApp",
    "telegram": "Telegram",
    "vkontakte": "VK",
    "facebook": "Facebook",
    "viber": "Viber",
    "odnoklassniki": "OK",
    "twitter": "X",
    "google": "Google",
}
_STARS = 5


def header(el: etree._Element, ctx: Context) -> None:
    el.set("class", "tc-head")
    for child in children(el):
        if child.tag == "menu":
            menu(child, ctx)
        elif block_of(child) == "breadcrumblist":
            _links(child, "tc-crumbs")
        else:
            ctx.walk_one(child)


def _links(el: etree._Element, cls: str) -> None:
    nav = make("nav", cls)
    for a in el.iter("a"):
        nav.append(make("a", None, text_of(a), href=a.get("href") or ""))
    replace(el, [nav])


def menu(el: etree._Element, ctx: Context) -> None:
    _links(el, "tc-menu")


def accordion(el: etree._Element, ctx: Context) -> None:
    out = make("div", "tc-acc-list")
    for item in children(el):
        details = make("details", "tc-acc")
        if (item.get("data-expanded") or "").strip().lower() == "true":
            details.set("open", "open")
        title = (item.get("data-title") or "").strip()
        details.append(make("summary", None, title or "…"))
        move_content(item, details, ctx)
        out.append(details)
    replace(el, [out])


def button(el: etree._Element, ctx: Context) -> None:
    text = text_of(el) or label("more", ctx.lang)
    target = (el.get("formaction") or "").strip()
    if not target and el.get("data-send-to"):
        target = "mailto:" + el.get("data-send-to", "").strip()
    primary = (el.get("data-primary") or "").strip().lower() == "true"
    if el.get("disabled") is not None or not target:
        replace(el, [make("span", "tc-btn tc-off", text)])
        return
    replace(el, [make("a", "tc-btn tc-primary" if primary else "tc-btn", text, href=target)])


def share(el: etree._Element, ctx: Context) -> None:
    wanted = [n.strip().lower() for n in (el.get("data-network") or "").split(",") if n.strip()]
    nav = make("nav", "tc-share")
    nav.append(make("span", "tc-label", label("share", ctx.lang) + ":"))
    page = quote(ctx.page_url, safe="")
    for network in wanted or _DEFAULT_SHARE:
        if network in _SHARE:
            name, pattern = _SHARE[network]
            link = make("a", "tc-share-link", name, href=pattern.format(url=page))
            link.tail = " "
            nav.append(link)
    replace(el, [nav])


def _tel(value: str) -> str:
    value = value.strip()
    return value if value.lower().startswith("tel:") else "tel:" + value


def feedback(el: etree._Element, ctx: Context) -> None:
    out = make("section", "tc-feedback")
    out.append(make("p", "tc-cap", (el.get("data-title") or "").strip() or label("feedback", ctx.lang)))
    buttons = make("p", "tc-buttons")
    for child in el.iter():
        kind = (child.get("data-type") or "").strip().lower() if isinstance(child.tag, str) else ""
        if not kind:
            continue
        url = (child.get("data-url") or "").strip()
        if kind == "call" and url:
            link = make("a", "tc-btn tc-primary", label("call", ctx.lang), href=_tel(url))
        elif kind == "mail" and url:
            link = make("a", "tc-btn", label("write", ctx.lang), href=url)
        elif kind == "callback" and child.get("data-send-to"):
            link = make("a", "tc-btn", label("callback", ctx.lang), href="mailto:" + child.get("data-send-to", ""))
        elif kind in _CHANNELS and url:
            link = make("a", "tc-btn", _CHANNELS[kind], href=url)
        elif kind == "chat" and url:
            link = make("a", "tc-btn", label("chat", ctx.lang), href=url)
        else:
            ctx.note(
                "page.content_dropped",
                f"a feedback button of type {kind!r} without a link (data-url / data-send-to) is not shown",
            )
            continue
        link.tail = " "
        buttons.append(link)
    out.append(buttons)
    replace(el, [out])


def form(el: etree._Element, ctx: Context) -> None:
    kind = (el.get("data-type") or "").strip().lower()
    if kind == "callback" and el.get("data-send-to"):
        out = make("section", "tc-feedback")
        out.append(make("p", "tc-cap", label("feedback", ctx.lang)))
        buttons = make("p", "tc-buttons")
        buttons.append(make("a", "tc-btn", label("callback", ctx.lang), href="mailto:" + el.get("data-send-to", "")))
        out.append(buttons)
        replace(el, [out])
        return
    action = (el.get("action") or "").strip()
    if el.find(".//input[@type='search']") is not None and action:
        parts = urlsplit(action)  # the query is a template ({text}): the site's search page without it
        page = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
        note = make("p", "tc-note")
        note.append(make("a", "tc-btn", label("search", ctx.lang), href=page))
        replace(el, [note])
        return
    ctx.note("page.content_dropped", "a form is not shown: these pages send nothing to anyone")
    replace(el, [])


#: a rating's numbers as Schema.org's Rating writes them: at most three digits, and three after a point
_RATING_NUMBER = re.compile(r"\d{1,3}(?:[.,]\d{1,3})?")


def _rating_number(text: str | None) -> float | None:
    return float(text.replace(",", ".")) if text and _RATING_NUMBER.fullmatch(text) else None


def rating(el: etree._Element, ctx: Context) -> None:
    props = {m.get("itemprop"): (m.get("content") or "").strip() for m in el.iter("meta")}
    value = _rating_number(props.get("ratingValue"))
    best = _rating_number(props.get("bestRating") or str(_STARS))
    if value is None or best is None:
        # a number of any other form (1e999, nan, -1) is not a rating a page can show (bounds.py)
        ctx.note(
            "turbo.unsupported_block",
            "a rating is shown only when its ratingValue and bestRating are numbers of at most three digits",
        )
        replace(el, [])
        return
    best = best if best > 0 else _STARS
    filled = max(0, min(_STARS, round(value / best * _STARS)))
    shown = f"{value:g}/{best:g}"
    out = make("p", "tc-rating", None, title=f"{label('rating', ctx.lang)}: {value:g} {label('of', ctx.lang)} {best:g}")
    out.append(make("span", "tc-stars", "★" * filled + "☆" * (_STARS - filled)))
    out[-1].tail = " " + shown
    replace(el, [out])


def _comment(el: etree._Element, ctx: Context) -> etree._Element:
    art = make("article", "tc-comment")
    who = make("p", "tc-author")
    if avatar := (el.get("data-avatar-url") or "").strip():
        who.append(make("img", None, None, src=avatar, alt="", width="32", height="32"))
    who.append(make("b", None, (el.get("data-author") or "").strip() or "—"))
    if when := (el.get("data-subtitle") or "").strip():
        who[-1].tail = " "
        who.append(make("span", "tc-when", when))
    art.append(who)
    for child in children(el):
        block = block_of(child)
        if block == "content":
            for part in children(child):
                if part.tag == "header":
                    part.tag = "p"
                    part.attrib.clear()
                    bold = make("b", None, text_of(part))
                    part.text = None
                    for sub in list(part):
                        part.remove(sub)
                    part.append(bold)
            move_content(child, art, ctx)
        elif block == "comments":
            replies = make("div", "tc-replies")
            for reply in children(child):
                if block_of(reply) == "comment":
                    replies.append(_comment(reply, ctx))
            art.append(replies)
    return art


def comments(el: etree._Element, ctx: Context) -> None:
    out = make("section", "tc-comments")
    out.append(make("p", "tc-cap", label("comments", ctx.lang)))
    for child in children(el):
        if block_of(child) == "comment":
            out.append(_comment(child, ctx))
    replace(el, [out])


def fold(el: etree._Element, ctx: Context) -> None:
    out = make("div", "tc-fold")
    move_content(el, out, ctx)
    replace(el, [out])


def histogram(el: etree._Element, ctx: Context) -> None:
    table = make("table", "tc-histogram")
    body = etree.SubElement(table, "tbody")
    for item in children(el):
        row = etree.SubElement(body, "tr")
        row.append(make("th", None, (item.get("data-title") or "").strip()))
        row.append(make("td", None, (item.get("data-value") or "").strip()))
    replace(el, [table])


def audio(el: etree._Element, ctx: Context) -> None:
    src = (el.get("src") or el.get("data-src") or "").strip()
    if not src:
        ctx.note("turbo.unsupported_block", "an audio block without a src is not shown")
        replace(el, [])
        return
    note = make("p", "tc-note")
    note.append(make("a", None, label("listen", ctx.lang), href=src))
    replace(el, [note])


def related(el: etree._Element, ctx: Context) -> None:
    out = make("aside", "tc-related")
    out.append(make("p", "tc-cap", label("related", ctx.lang)))
    cards = make("div", "tc-cards")
    for link in el.iter("a"):
        href = link.get("href") or ""
        card = make("a", "tc-card", None, href=href)
        if img := link.get("data-img"):
            card.append(make("img", None, None, src=img, alt=""))
        card.append(make("span", None, text_of(link) or href))
        cards.append(card)
    out.append(cards)
    replace(el, [out])


def crumbs(el: etree._Element, ctx: Context) -> None:
    _links(el, "tc-crumbs")
