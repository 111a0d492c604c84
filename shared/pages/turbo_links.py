"""Where the frontend shows a Turbo page (docs/architecture.md section 3, frontend).

* ``/turbo?url=<original URL>``: a page as the kvwriter wrote it;
* ``/turbo/shop/<host>/category/<id>``: a shop category's offers, paged, sorted by price and filtered by
  vendor and parameters (``?page=&sort=price_asc|price_desc&vendor=&param.<name>=``;
  ``cubes/frontend/category.py``). ``<id>`` is the category's id in the shop's catalog and ``<host>`` the
  shop's host, so the address stays the same from one fetch of the catalog to the next.

The frontend serves the routes; pages link to each other through them (a shop page's breadcrumbs to its
categories, a listing's cards to its products), so the paths are written once, here, as is the query
parameter that marks a catalog category's listing page on the shop's site (``?turbo_category=<id>``).
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

__all__ = ["CATEGORY_PARAM", "OFFERS_KEY", "category_path", "listing_category", "turbo_path"]

#: the query parameter of a catalog category's listing page on the shop's site (``cubes/parser/yml.py``)
CATEGORY_PARAM = "turbo_category"
#: a listing's ``extra`` key of how many offers the category holds itself (the parser writes it,
#: ``cubes/parser/categories.py``; the kvwriter links such a listing to its category's page)
OFFERS_KEY = "turbo:offers"


def turbo_path(url: str) -> str:
    """The frontend path of the Turbo page of ``url`` (a canonical URL)."""
    return "/turbo?" + urlencode({"url": url})


def category_path(host: str, category_id: str, query: Sequence[tuple[str, str]] = ()) -> str:
    """The frontend path of the shop ``host``'s category ``category_id``, with ``query`` (page, sort, filters)."""
    path = f"/turbo/shop/{quote(host, safe='')}/category/{quote(category_id, safe='')}"
    return f"{path}?{urlencode(list(query))}" if query else path


def listing_category(url: str) -> str | None:
    """The category id of a listing page's ``url`` (``https://shop/?turbo_category=7`` -> ``7``), else None."""
    parts = urlsplit(url)
    if CATEGORY_PARAM not in parts.query:
        return None
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key == CATEGORY_PARAM:
            return value or None
    return None
