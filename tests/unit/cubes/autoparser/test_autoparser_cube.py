"""The autoparser cube on the real runtime (embedded SQLite bus and store): crawl.pages -> documents.parsed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from cubes.autoparser.cube import build
from shared import contracts
from shared.config import Settings
from shared.messages import CrawlKind, CrawlResult, Document, FetchStatus
from shared.runtime import Deps, Output, ensure_topics, open_deps, run_cube
from tests.unit.cubes.autoparser.autoparser_pages import PARAGRAPHS, TITLE, article_page, listing_page

T0 = datetime(2026, 3, 1, tzinfo=UTC)


async def read_all(deps: Deps, topic: str) -> list[Any]:
    out = []
    for partition, end in (await deps.bus.end_offsets(topic)).items():
        for rec in await deps.bus.read(topic, partition, 0, end + 1):
            out.append(contracts.decode(topic, rec.value))
    return out


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings().replace(
        bus={"url": f"sqlite:///{tmp_path}/bus.db"},
        store={"url": f"sqlite:///{tmp_path}/store.db"},
        blobs={"url": f"file://{tmp_path}/blobs"},
        runtime={"metrics_port": 0},
    )


@pytest.fixture
async def deps(settings: Settings) -> AsyncIterator[Deps]:
    d = await open_deps(settings)
    await ensure_topics(d, ["autoparser"])
    try:
        yield d
    finally:
        await d.close()


def page(url: str, body: bytes) -> CrawlResult:
    return CrawlResult(
        kind=CrawlKind.page,
        url=url,
        host="news.example.com",
        status=FetchStatus.ok,
        http_status=200,
        content_type="text/html",
        body=body,
        size=len(body),
        fetched_at=T0,
    )


async def test_pages_in_documents_out(settings: Settings, deps: Deps) -> None:
    await deps.publish(
        [
            Output("crawl.pages", page("https://news.example.com/2024/05/harbour-bridge", article_page().encode())),
            Output("crawl.pages", page("https://news.example.com/city", listing_page().encode())),
        ]
    )
    stats = await run_cube(await build(settings, deps), deps, group="autoparser-t", max_messages=2, idle_timeout=10.0)
    assert (stats.processed, stats.dead_lettered) == (2, 0)
    [doc] = await read_all(deps, "documents.parsed")  # the listing page was skipped
    assert isinstance(doc, Document)
    assert doc.title == TITLE
    assert all(p in doc.content_html for p in PARAGRAPHS)
