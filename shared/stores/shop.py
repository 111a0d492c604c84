"""The shop store's contract: a shop category's offers, paged, sorted and filtered (docs/architecture.md s. 4).

A YML catalog's offer page carries, beside its HTML, what its category's page lists of it (``Offer``: the
category, the price to sort by, the vendor and parameters to filter by, the card's price text, currency and
picture), in its own row of the page table, written with the page in the same statement (``Page.offer``),
so a deleted or replaced page takes its facts with it. ``Page.shop`` says whose shop the row is (the tenant
that published it, or its source when no tenant has it): a category's page lists only the offers of the
shop that published its listing, on its host, never a preview. A page held back keeps its last live version,
as ``/turbo`` serves it.

Engines: ``sqlite/shop.py`` (its reads on the reader thread: a category of 10,000 offers is a scan of them)
and ``postgres/shop.py``; the statements are ``sql/shop.py``, over the partial index ``pages_shop``
(host, category, shop, price, vendor, url, deleted; migration 40).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

__all__ = ["CategoryFacets", "Offer", "OfferCard", "OfferQuery", "ShopStore", "Sort"]


@dataclass(frozen=True, slots=True)
class Offer:
    """What a shop category's page knows of one offer's page."""

    #: the offer's own category (the leaf of its path): the category whose page lists it
    category: str
    #: the price as a number, to sort by (None: no readable price; listed last either way)
    price: float | None = None
    vendor: str = ""
    #: (name, value with its unit) of each parameter, to filter by
    params: tuple[tuple[str, str], ...] = ()
    #: the card's price as the catalog wrote it, its currency and its picture's CDN URL
    price_text: str = ""
    currency: str = ""
    picture: str = ""


class Sort(StrEnum):
    name = "name"  # by the offer's name
    price_asc = "price_asc"
    price_desc = "price_desc"


@dataclass(frozen=True, slots=True)
class OfferQuery:
    """One page of a category: whose (``host``, ``category``, ``shop``), in which order, with which filters.

    ``vendors``: any of them; ``params``: each (name, value) pair. Bounded by the caller
    (``cubes/frontend/category.py``)."""

    host: str
    category: str
    shop: str
    sort: Sort = Sort.name
    vendors: tuple[str, ...] = ()
    params: tuple[tuple[str, str], ...] = ()
    offset: int = 0
    limit: int = 24


@dataclass(frozen=True, slots=True)
class OfferCard:
    url: str
    title: str
    offer: Offer


@dataclass(frozen=True, slots=True)
class CategoryFacets:
    """The choices a category's filters offer: its vendors and parameter values, with their offers' counts,
    the most frequent first."""

    vendors: list[tuple[str, int]] = field(default_factory=list)
    params: list[tuple[str, list[tuple[str, int]]]] = field(default_factory=list)


class ShopStore(Protocol):
    async def offers(self, q: OfferQuery) -> tuple[int, list[OfferCard]]:
        """How many offers pass ``q``'s filters, and the page of them ``q`` asks for, in its order (ties
        broken by URL, so pages never overlap)."""
        ...

    async def facets(self, host: str, category: str, shop: str) -> CategoryFacets:
        """The vendors and parameter values of the category's offers (each list bounded)."""
        ...
