"""The search contract on SQLite (a fresh file per test)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from shared.stores import Page, open_stores
from shared.stores.sql.search_impacts import PAIR, pair_token
from shared.stores.sqlite import search_queue
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


async def test_a_page_written_again_during_its_batch_is_indexed_at_its_new_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the indexer reads a batch, analyzes it off the write lock, then writes it: a page edited in between
    # must not get the old version's index rows (its edit queued it again: the next drain takes that)
    url = f"sqlite:///{tmp_path}/store.db"
    stores = await open_stores(url)
    try:
        v1 = Page(url="https://a.example/1", host="a.example", version=1, title="Zebra", text="x", doc_json=b"{}")
        await stores.pages.upsert(v1)
        plan = search_queue._plan

        def edited_meanwhile(rows: Any) -> Any:
            out = plan(rows)
            conn = sqlite3.connect(tmp_path / "store.db")  # another writer, as the kvwriter would be
            with conn:
                conn.execute("UPDATE pages SET version = 2, title = 'Giraffe' WHERE url = ?", (v1.url,))
            conn.close()
            return out

        monkeypatch.setattr(search_queue, "_plan", edited_meanwhile)
        first = await stores.index_queue.index_pending(10)
        assert (first.queued, first.indexed, first.moved_on) == (1, 0, 1)
        monkeypatch.setattr(search_queue, "_plan", plan)
        assert await stores.index_queue.pending() == 1  # the edit's own queue row
        assert await found(stores, "zebra") == []
        assert await found(stores, "giraffe") == [v1.url]
    finally:
        await stores.close()


async def test_each_terms_page_count_follows_writes_edits_and_removals(tmp_path: Path) -> None:
    # the walk's IDF and "did you mean" read search_df: it must be FTS5's own count of pages by term
    stores = await open_stores(f"sqlite:///{tmp_path}/store.db")
    try:

        def page(i: int, title: str, text: str, version: int = 1) -> Page:
            return Page(url=f"https://a.example/{i}", host="a.example", version=version, title=title, text=text,
                        doc_json=b"{}", kind="article")  # fmt: skip

        await stores.pages.upsert_many(
            [page(i, f"Мосты {i % 3}", "стали дома и мосты " * (i % 4 + 1)) for i in range(30)]
        )
        await stores.index_queue.catch_up()
        await stores.pages.upsert_many([page(i, "Реки", "берег", version=2) for i in range(0, 30, 3)])  # edits
        for i in range(1, 30, 5):
            await stores.pages.delete(f"https://a.example/{i}", 3)
        await stores.index_queue.catch_up()
        db = stores.pages._db  # type: ignore[attr-defined]

        def check(conn: sqlite3.Connection) -> list[str]:
            wrong = []
            counted = dict(conn.execute("SELECT term, docs FROM search_df").fetchall())
            for term, n in counted.items():
                # a pair's pages are those its two-word phrase matches (``sql/search_impacts.py``)
                text = " ".join(term.split(PAIR)[1:]) if term.startswith(PAIR) else term
                actual = conn.execute("SELECT count(*) FROM search_fts WHERE search_fts MATCH ?", (f'"{text}"',))
                if actual.fetchone()[0] != n:
                    wrong.append(term)
            return wrong if counted else ["nothing counted"]

        assert await db.read(check) == []
        assert await db.read(lambda conn: conn.execute("SELECT docs FROM search_df WHERE term = 'река'").fetchone())
        pair = pair_token("стать", "дом")  # "стали дома": the first lemmas, next to each other
        assert await db.read(lambda conn: conn.execute("SELECT docs FROM search_df WHERE term = ?", (pair,)).fetchone())
        assert await db.read(lambda conn: conn.execute("SELECT min(docs) FROM search_df").fetchone()[0]) > 0
    finally:
        await stores.close()
