"""PostgreSQL shop store (docs/architecture.md section 4, "stores"; the contract is ``shared/stores/shop.py``).

The count and the page are two statements on one pooled connection; the facets' rows are counted in a
worker thread (``asyncio.to_thread``: decoding 10,000 offers' parameters is not work for the event loop).
"""

from __future__ import annotations

import asyncio

from shared.stores.postgres.db import PgDb
from shared.stores.shop import CategoryFacets, OfferCard, OfferQuery
from shared.stores.sql.shop import card_from_row, category_facets, count_sql, facet_sql, offers_sql

__all__ = ["PgShopStore"]

_CONTAINS = "strpos({column}, ?) > 0"


class PgShopStore:
    def __init__(self, db: PgDb) -> None:
        self._db = db

    async def offers(self, q: OfferQuery) -> tuple[int, list[OfferCard]]:
        count, count_args = count_sql(q, _CONTAINS)
        row = await self._db.fetchone(count, *count_args)
        total = int(row[0]) if row is not None else 0
        if total <= q.offset:
            return total, []
        page, page_args = offers_sql(q, _CONTAINS)
        rows = await self._db.fetch(page, *page_args)
        return total, [card_from_row(r, q.category) for r in rows]

    async def facets(self, host: str, category: str, shop: str) -> CategoryFacets:
        sql, args = facet_sql(host, category, shop)
        rows = await self._db.fetch(sql, *args)
        return await asyncio.to_thread(category_facets, rows)
