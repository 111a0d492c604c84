"""Listings show when a page was published, not when we wrote it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from aiohttp.test_utils import TestClient, TestServer

from cubes.frontend.app import create_app
from shared.config import Settings
from shared.stores import Page, open_stores


async def test_the_latest_pages_show_their_publication_date(tmp_path: Path) -> None:
    settings = Settings().replace(store={"url": f"sqlite:///{tmp_path}/s.db"})
    stores = await open_stores(settings.store.url)
    try:
        await stores.pages.upsert(
            Page(
                url="https://a.example/old-story",
                host="a.example",
                version=1,
                title="An old story",
                text="x",
                doc_json=b"{}",
                published_at=datetime(2024, 1, 2, 9, 30, tzinfo=UTC),
                written_at=datetime(2026, 6, 1, 8, 0, tzinfo=UTC),
            )
        )
        (hit,) = await stores.pages.recent(5)
        assert hit.published_at == datetime(2024, 1, 2, 9, 30, tzinfo=UTC)
        async with TestClient(TestServer(create_app(settings, stores), host="127.0.0.1", port=0)) as c:
            home = await (await c.get("/")).text()
        assert "02 Jan 2024, 09:30 UTC" in home
        assert "01 Jun 2026" not in home
    finally:
        await stores.close()
