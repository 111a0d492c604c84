"""SQLite shop store (docs/architecture.md section 4, "stores"; the contract is ``shared/stores/shop.py``).

Its reads run on the reader thread, not inline on the loop: a category's count and its facets read every
offer of the category (10,000 of them in milliseconds, but that is too long for the loop that serves pages),
and the facets are counted on that thread too.
"""

from __future__ import annotations

import sqlite3

from shared.stores.shop import CategoryFacets, OfferCard, OfferQuery
from shared.stores.sql.shop import card_from_row, category_facets, count_sql, facet_sql, offers_sql
from shared.stores.sqlite.db import SqliteDb

__all__ = ["SqliteShopStore"]

_CONTAINS = "instr({column}, ?) > 0"


class SqliteShopStore:
    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def offers(self, q: OfferQuery) -> tuple[int, list[OfferCard]]:
        count, count_args = count_sql(q, _CONTAINS)
        page, page_args = offers_sql(q, _CONTAINS)

        def run(conn: sqlite3.Connection) -> tuple[int, list[OfferCard]]:
            total = int(conn.execute(count, count_args).fetchone()[0])
            rows = conn.execute(page, page_args).fetchall() if total > q.offset else []
            return total, [card_from_row(r, q.category) for r in rows]

        return await self._db.read(run)

    async def facets(self, host: str, category: str, shop: str) -> CategoryFacets:
        sql, args = facet_sql(host, category, shop)
        return await self._db.read(lambda conn: category_facets(conn.execute(sql, args).fetchall()))
