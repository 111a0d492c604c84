"""The query-statistics store contract on SQLite (a fresh file per test)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.contract.wordstat_contract import WordstatContract


class TestSqliteWordstat(WordstatContract):
    @pytest.fixture
    def store_url(self, tmp_path: Path) -> str:
        return f"sqlite:///{tmp_path}/store.db"


async def test_the_top_down_read_of_a_common_word_finds_what_the_join_finds(tmp_path: Path) -> None:
    """A common word's most searched queries are read from the top of ``ws_queries_total`` down
    (``sqlite/wordstat.py``, ``_top_down``); a word in few queries joins from its own. Both must give
    the same rows, in the same order, with a minus word and a phrase's bound too."""
    import uuid
    from datetime import UTC, datetime

    import shared.stores.sqlite.wordstat as engine
    from cubes.wordstat.handler import counted
    from shared.messages import SearchQueryEvent
    from shared.stores import open_stores
    from shared.stores.wordstat import Privacy
    from shared.wordstat.frequency import _selection
    from shared.wordstat.operators import parse

    now = datetime(2026, 11, 20, tzinfo=UTC)
    stores = await open_stores(f"sqlite:///{tmp_path}/store.db")
    try:
        words = ["слон", "кот", "пёс", "мост", "дом", "сад", "лес", "луг"]
        searches = [SearchQueryEvent(event_id=uuid.uuid4().hex, query=w, at=now) for w in words for _ in range(3)]
        for i, a in enumerate(words):
            for j, b in enumerate(words):
                q = f"{a} {b} купить" if (i + j) % 3 == 0 else f"{a} {b}"
                n = 1 + (i * 7 + j * 3) % 11
                searches += [SearchQueryEvent(event_id=uuid.uuid4().hex, query=q, at=now) for _ in range(n)]
        await stores.wordstat.count([counted(e) for e in searches], now=now, privacy=Privacy(threshold=1))
        db = stores.wordstat._db  # type: ignore[attr-defined]
        for text in ("слон", "купить", "слон -купить", '"кот"', "кот -!кота"):
            sel = _selection(parse(text).variants[0])
            top_down = await db.read(lambda conn, s=sel: engine._top_down_scan(conn, s, 2))
            assert top_down is not None, f"{text}: small data must take the top-down read here"
            got = await stores.wordstat.select(sel, limit=2)
            original = engine._top_down_scan
            engine._top_down_scan = lambda *a: None
            try:
                joined = await stores.wordstat.select(sel, limit=2)
            finally:
                engine._top_down_scan = original
            assert got == joined, text
            assert got, text
    finally:
        await stores.close()
