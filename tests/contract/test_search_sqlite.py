"""The search contract on SQLite (a fresh file per test)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from shared.stores import Page, open_stores
from tests.contract.search_contract import SearchContract
from tests.searching import found


class TestSqliteSearch(SearchContract):
    @pytest.fixture
    def store_url(self, tmp_path: Path) -> str:
        return f"sqlite:///{tmp_path}/store.db"


async def test_a_stale_index_is_rebuilt_at_open_and_pages_are_left_as_written(tmp_path: Path) -> None:
    # a page of no type (as written before pages had one, or by another process while this one opens)
    url = f"sqlite:///{tmp_path}/store.db"
    stores = await open_stores(url)
    page = Page(
        url="https://a.example/1", host="a.example", version=1, title="Мосты", text="через реку", doc_json=b"{}"
    )
    await stores.pages.upsert(page)
    await stores.close()
    conn = sqlite3.connect(tmp_path / "store.db")
    with conn:  # as after an upgrade of the analyzer: nothing says which version made the index
        conn.execute("DELETE FROM search_meta")
        conn.execute("DELETE FROM search_fts")
    conn.close()
    stores = await open_stores(url)
    try:
        assert await found(stores, "мост") == ["https://a.example/1"]  # re-indexed at open
        assert await stores.pages.get(page.url) == page  # and the page itself untouched (kind, lang)
    finally:
        await stores.close()
