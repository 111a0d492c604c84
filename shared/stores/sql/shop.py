"""The shop store's columns and statements, shared by both engines (docs/architecture.md section 4, "stores").

An offer's facts are six columns of its page row (``OFFER_COLUMNS``, migration 40): ``shop``, ``category``,
``price`` (a double, to sort by), ``vendor``, ``params`` (the JSON list of its (name, value) pairs: a filter
is a search for one pair's JSON text in it, exact and case-sensitive on both engines) and ``card`` (the
card's price text, currency and picture, JSON). A category's reads stay on the partial index
``pages_shop`` (host, category, shop, price, vendor, url, deleted), whose condition every statement here
repeats so the planner may use it; it covers a page sorted by price, its count and a vendor filter. The one
difference of the engines is how a substring is found (``contains``: SQLite ``instr``, PostgreSQL
``strpos``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import orjson

from shared.stores.shop import CategoryFacets, Offer, OfferCard, OfferQuery, Sort

__all__ = [
    "OFFER_COLUMNS",
    "card_from_row",
    "category_facets",
    "count_sql",
    "facet_sql",
    "offer_from_row",
    "offer_params",
    "offers_sql",
]

OFFER_COLUMNS = "shop, category, price, vendor, params, card"
#: the partial index's condition (``pages_shop``), repeated by every statement so that it applies
_ON_INDEX = "category IS NOT NULL AND NOT deleted"
_ORDER = {
    Sort.name: "title, url",
    Sort.price_asc: "price IS NULL, price, url",
    Sort.price_desc: "price IS NULL, price DESC, url",
}
#: choices a filter offers: vendors, parameter names, values of each name (the most frequent first)
_VENDORS = 30
_NAMES = 12
_VALUES = 20


def offer_params(shop: str, offer: Offer | None) -> tuple[Any, ...]:
    """The values of ``OFFER_COLUMNS`` of a page whose shop is ``shop`` and whose offer is ``offer``."""
    if offer is None:
        return (shop, None, None, "", "", "")
    params = orjson.dumps([list(p) for p in offer.params]).decode() if offer.params else ""
    card = {k: v for k, v in (("p", offer.price_text), ("c", offer.currency), ("i", offer.picture)) if v}
    return (shop, offer.category, offer.price, offer.vendor, params, orjson.dumps(card).decode())


def offer_from_row(row: Sequence[Any]) -> tuple[str, Offer | None]:
    """``OFFER_COLUMNS`` values back into (shop, offer)."""
    shop, category, price, vendor, params, card = row
    if category is None:
        return shop or "", None
    facts = orjson.loads(card) if card else {}
    pairs = tuple((str(n), str(v)) for n, v in orjson.loads(params)) if params else ()
    return shop, Offer(
        category=category,
        price=None if price is None else float(price),
        vendor=vendor or "",
        params=pairs,
        price_text=facts.get("p", ""),
        currency=facts.get("c", ""),
        picture=facts.get("i", ""),
    )


def _where(q: OfferQuery, contains: str) -> tuple[str, list[Any]]:
    sql = f"host = ? AND category = ? AND shop = ? AND {_ON_INDEX}"
    args: list[Any] = [q.host, q.category, q.shop]
    if q.vendors:
        sql += f" AND vendor IN ({', '.join('?' * len(q.vendors))})"
        args += q.vendors
    for pair in q.params:
        sql += " AND " + contains.format(column="params")
        args.append(orjson.dumps(list(pair)).decode())
    return sql, args


def offers_sql(q: OfferQuery, contains: str) -> tuple[str, list[Any]]:
    """The page of offers ``q`` asks for: ``url, title, price, card, vendor, params`` rows."""
    where, args = _where(q, contains)
    # the page's URLs first, from the index alone when sorted by price (an offer's row holds its HTML before
    # these columns: reading 10,000 of them to sort was most of a page's time), then those rows
    sql = (
        "SELECT url, title, price, card, vendor, params FROM pages WHERE url IN"
        f" (SELECT url FROM pages WHERE {where} ORDER BY {_ORDER[q.sort]} LIMIT ? OFFSET ?)"
        f" ORDER BY {_ORDER[q.sort]}"
    )
    return sql, [*args, q.limit, q.offset]


def count_sql(q: OfferQuery, contains: str) -> tuple[str, list[Any]]:
    where, args = _where(q, contains)
    return f"SELECT count(*) FROM pages WHERE {where}", args


def card_from_row(row: Sequence[Any], category: str) -> OfferCard:
    url, title, price, card, vendor, params = row
    _, offer = offer_from_row(("", category, price, vendor, params, card))
    assert offer is not None
    return OfferCard(url=url, title=title, offer=offer)


def facet_sql(host: str, category: str, shop: str) -> tuple[str, list[Any]]:
    """The category's offers counted by (vendor, parameters): the engine groups them, so what is decoded here
    is one row per combination (a catalog's offers share a few), not one per offer."""
    return (
        f"SELECT vendor, params, count(*) FROM pages WHERE host = ? AND category = ? AND shop = ? AND {_ON_INDEX}"
        " GROUP BY vendor, params",
        [host, category, shop],
    )


def category_facets(rows: Sequence[Sequence[Any]]) -> CategoryFacets:
    """The choices of the rows of ``facet_sql``. CPU work when every offer's parameters differ (a row per
    offer then): the engines run it off the event loop."""
    vendors: Counter[str] = Counter()
    values: dict[str, Counter[str]] = {}
    for vendor, params, n in rows:
        if vendor:
            vendors[vendor] += n
        if params:
            for name, value in orjson.loads(params):
                values.setdefault(name, Counter())[value] += n
    names = sorted(values, key=lambda n: (-values[n].total(), n))[:_NAMES]
    return CategoryFacets(
        vendors=sorted(vendors.most_common(), key=lambda vc: (-vc[1], vc[0]))[:_VENDORS],
        params=[(n, sorted(values[n].items(), key=lambda vc: (-vc[1], vc[0]))[:_VALUES]) for n in names],
    )
