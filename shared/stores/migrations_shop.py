"""Migration 40: a shop category's page lists its offers from the page table (docs/architecture.md section 4).

Each offer's facts are columns of its own page row, written with the page (``shared/stores/shop.py``), and
its category's reads stay on the partial index ``pages_shop``: one category's offers of one shop, by price
(a category of 10,000 offers among the host's other pages is read through the index, not by a scan of
every page of the host; ``bench/category.py``). The statements run unchanged on both engines.
"""

from __future__ import annotations

__all__ = ["SHOP", "extend_shop"]

SHOP: tuple[str, ...] = (
    "ALTER TABLE pages ADD COLUMN shop TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE pages ADD COLUMN category TEXT",
    "ALTER TABLE pages ADD COLUMN price DOUBLE PRECISION",
    "ALTER TABLE pages ADD COLUMN vendor TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE pages ADD COLUMN params TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE pages ADD COLUMN card TEXT NOT NULL DEFAULT ''",
    # covering what a page of offers sorted by price, its count and a vendor filter read (url, the order's tie;
    # deleted, which SQLite reads for the condition however the index implies it): the row itself, with its
    # HTML before these columns, is read only for the 24 offers shown
    "CREATE INDEX IF NOT EXISTS pages_shop ON pages (host, category, shop, price, vendor, url, deleted)"
    " WHERE category IS NOT NULL AND NOT deleted",
)


def extend_shop(
    sqlite: list[tuple[int, str, tuple[str, ...]]], postgres: list[tuple[int, str, tuple[str, ...]]]
) -> None:
    """Append migration 40 to each engine's list."""
    for engine in (sqlite, postgres):
        engine.append((40, "pages: a shop's offers by category", SHOP))
