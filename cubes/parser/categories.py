"""A YML catalog's categories as listing pages (docs/architecture.md section 3, parser).

A shop page shows its breadcrumbs (``categoryId`` through ``parentId``); each
crumb opens the category's listing page: a Turbo page of the same feed, made
here from the catalog itself at each fetch, so it always lists what the
catalog holds now. A listing has the category's breadcrumbs, its
subcategories, and cards of its offers (picture, title, price) -- the first
``MAX_CARDS`` in catalog order, then how many more there are. Its URL is on the
shop's site with ``?turbo_category=<id>`` (``yml.category_url``): the frontend
serves it like any page, the kvwriter links its cards to the Turbo pages they
stand for and its crumbs to the categories' pages. Its ``extra`` says how many
offers the category holds itself (``turbo:offers``) and which subcategories it has
(``turbo:subcategories``, ``[id, name, offers]`` each): the category's page on the
frontend (``cubes/frontend/category.py``) pages through those offers, sorted and
filtered, from the page store, and links the subcategories.

``Listings`` sees every offer once as it streams by and keeps a bounded
summary per category, so a catalog of any size costs at most
``MAX_CARDS`` cards per category.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

import orjson

from cubes.parser.model import ParsedItem
from cubes.parser.yml import CATEGORY_PARAM, Catalog, category_url
from shared.pages.i18n import format_price
from shared.pages.turbo_links import OFFERS_KEY

__all__ = ["CATEGORY_PARAM", "MAX_CARDS", "SUBCATEGORIES_KEY", "Listings"]

#: offers shown on a listing page (a phone scrolls through ~50 cards; more is a catalog, not a page)
MAX_CARDS = 48
#: the extra key of a listing's subcategories, one JSON ``[id, name, offers]`` each (at most MAX_CARDS)
SUBCATEGORIES_KEY = "turbo:subcategories"
#: a card shows a line or two of its offer's name: a longer one is cut (a listing's size stays bounded
#: by its cards whatever the names, which only the offer's own page shows whole)
_CARD_TITLE = 200


@dataclass(slots=True)
class _Card:
    url: str
    title: str
    price: str
    picture: str | None


@dataclass(slots=True)
class _Category:
    cards: list[_Card] = field(default_factory=list)
    offers: int = 0


class Listings:
    """Offers by category, as they stream by; ``items`` makes the listing pages at the end."""

    def __init__(self) -> None:
        self._by_id: dict[str, _Category] = {}

    def add(self, item: ParsedItem) -> None:
        product = item.product or {}
        path = product.get("category_path")
        if not path or not item.link or not item.title:
            return
        own = self._by_id.setdefault(str(path[-1]["id"]), _Category())
        own.offers += 1
        if len(own.cards) < MAX_CARDS:
            price = str(product.get("price") or "")
            picture = item.media[0].url if item.media else None
            shown = format_price(price, product.get("currency"), None) if price else ""
            title = item.title if len(item.title) <= _CARD_TITLE else item.title[: _CARD_TITLE - 1] + "…"
            own.cards.append(_Card(item.link, title, shown, picture))

    def items(self, catalog: Catalog, first_index: int) -> list[ParsedItem]:
        """A listing page for every category that holds an offer, itself or below it."""
        if not catalog.site or not self._by_id:
            return []
        children: dict[str, list[str]] = {}
        for cid, (_, parent) in catalog.categories.items():
            if parent:
                children.setdefault(parent, []).append(cid)
        # a category's offers count for it and each category on its path (bounded, loop-safe: Catalog.path)
        totals: dict[str, int] = {}
        for cid, own in self._by_id.items():
            for step in catalog.path(cid):
                at = str(step["id"])
                totals[at] = totals.get(at, 0) + own.offers
        out: list[ParsedItem] = []
        for cid, (name, _) in catalog.categories.items():
            if not name or not totals.get(cid):
                continue
            subs = [c for c in children.get(cid, ()) if totals.get(c)]
            html = self._page(cid, catalog, subs, totals)
            extra: dict[str, str | list[str]] = {"turbo:category": cid}
            held = self._by_id.get(cid)
            if held is not None and held.offers:
                extra[OFFERS_KEY] = str(held.offers)
            if subs:
                extra[SUBCATEGORIES_KEY] = [
                    orjson.dumps([c, catalog.categories[c][0], totals[c]]).decode() for c in subs[:MAX_CARDS]
                ]
            out.append(
                ParsedItem(
                    index=first_index + len(out),
                    link=category_url(catalog.site, cid),
                    guid=f"category:{cid}",
                    title=name,
                    content_html=html,
                    base=catalog.site,
                    extra=extra,
                )
            )
        return out

    def _page(self, cid: str, catalog: Catalog, subs: list[str], totals: dict[str, int]) -> str:
        parts = []
        path = catalog.path(cid)
        if len(path) > 1:
            crumbs = "".join(f'<a href="{escape(str(p["url"]))}">{escape(str(p["name"]))}</a>' for p in path[:-1])
            parts.append(f'<nav class="tc-crumbs">{crumbs}</nav>')
        if subs:
            more = len(subs) - MAX_CARDS
            subs = subs[:MAX_CARDS]
            links = "".join(
                f'<a class="tc-card" href="{escape(category_url(str(catalog.site), c))}">'
                f"<span>{escape(catalog.categories[c][0])} ({totals[c]})</span></a>"
                for c in subs
            )
            parts.append(f'<div class="tc-cards">{links}</div>')
            if more > 0:
                parts.append(f'<p class="tc-note">+ {more}</p>')
        own = self._by_id.get(cid)
        if own is not None and own.cards:
            cards = []
            for card in own.cards:
                pic = f'<img src="{escape(card.picture)}" alt="">' if card.picture else ""
                price = f"<b>{escape(card.price)}</b>" if card.price else ""
                cards.append(
                    f'<a class="tc-card" href="{escape(card.url)}">{pic}<span>{escape(card.title)}</span>{price}</a>'
                )
            parts.append(f'<div class="tc-cards">{"".join(cards)}</div>')
            if own.offers > len(own.cards):
                parts.append(f'<p class="tc-note">+ {own.offers - len(own.cards)}</p>')
        return "".join(parts)
