"""A kill -9 of the indexer loses nothing: the search index catches up with every written page (docs/architecture.md
section 3, "indexer"; ``shared/stores/search.py``).

The indexer cube runs in an OS process of its own (``cubeproc.py``) on a store
the test has filled with pages (and tombstones) queued for the index. It is
killed with SIGKILL in the middle of its drain — some pages indexed, many still
queued, a batch most likely half analyzed or half written — and started again:
once the queue is empty, every live page is in the index exactly once and
found by search, and no removed page is. On SQLite and on PostgreSQL.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from shared.search.query import parse_query
from shared.search.request import SearchFilters, SearchRequest
from shared.stores import Page, Stores, open_stores
from tests.integration.cubeproc import CubeProcess, write_config
from tests.pgschema import fresh_schema

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

T = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
PAGES = 3000
#: removed before the indexer ever runs, and after it indexed them: neither kind may be found
GONE_EARLY, GONE_LATE = range(0, 3000, 100), range(50, 3000, 100)
#: small batches, so that the drain takes many transactions and the kill lands inside it
BATCH = 20
WAIT_S = 120.0


def _page(i: int, version: int = 1) -> Page:
    # every page has the word of its own number ("w123") and a word all pages share
    return Page(
        url=f"https://h{i % 7}.example/{i}",
        host=f"h{i % 7}.example",
        version=version,
        html="<p></p>",
        doc_json=b"{}",
        title=f"Заметка w{i}",
        text=f"Мосты и реки города, страница w{i}. " * 20,
        written_at=T,
        kind="article",
        lang="ru",
    )


@pytest.fixture(params=["sqlite", "postgres"])
async def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/store.db"
        return
    async with fresh_schema(request.getfixturevalue("postgres_url")) as url:
        yield url


async def _wait(what: str, check: object, proc: CubeProcess) -> None:
    deadline = time.monotonic() + WAIT_S
    while not await check():  # type: ignore[operator]
        assert proc.proc is not None
        if proc.proc.returncode is not None:
            pytest.fail(f"the indexer exited ({proc.proc.returncode}) before {what}:\n{proc.tail()}")
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}:\n{proc.tail()}")
        await asyncio.sleep(0.05)  # a poll interval, not a synchronization


async def _indexed(stores: Stores, url: str) -> int:
    table = "search_docs"
    if url.startswith("sqlite"):
        db = stores.pages._db  # type: ignore[attr-defined]
        row = await db.read(lambda conn: conn.execute(f"SELECT count(*) FROM {table}").fetchone())
    else:
        row = await stores.pages._db.fetchone(f"SELECT count(*) FROM {table}")  # type: ignore[attr-defined]
    return int(row[0])


async def test_a_killed_indexer_loses_nothing(store_url: str, tmp_path: Path) -> None:
    stores = await open_stores(store_url, pool_size=2)
    try:
        for i in range(0, PAGES, 500):
            await stores.pages.upsert_many([_page(j) for j in range(i, min(i + 500, PAGES))])
        for i in GONE_EARLY:
            await stores.pages.delete(_page(i).url, 2)
        queued = await stores.index_queue.pending()
        assert queued == PAGES + len(GONE_EARLY)
        config = write_config(
            tmp_path / "turbocubes.toml",
            {
                "bus": {"url": f"sqlite:///{tmp_path}/bus.db"},
                "store": {"url": store_url, "pool_size": 2},
                "runtime": {"metrics_port": 0, "shutdown_timeout_s": 5.0},
                "indexer": {"batch": BATCH, "interval_s": 0.05},
            },
        )
        first = CubeProcess(config, "indexer", log=tmp_path / f"indexer-{uuid.uuid4().hex[:6]}.log")
        await first.start()
        try:
            await first.ready()

            async def some_indexed() -> bool:
                return await _indexed(stores, store_url) >= 10 * BATCH

            await _wait("the indexer to index its first batches", some_indexed, first)
            first.kill()
            assert first.proc is not None
            await first.proc.wait()
        finally:
            await first.stop()
        left = await stores.index_queue.pending()
        assert 0 < left < queued, f"the kill did not land inside the drain ({left} of {queued} left)"
        # pages removed while the index holds them: their tombstones reach it through the same queue
        for i in GONE_LATE:
            await stores.pages.delete(_page(i).url, 2)

        second = CubeProcess(config, "indexer", log=tmp_path / "indexer-again.log")
        await second.start()
        try:
            await second.ready()

            async def drained() -> bool:
                return await stores.index_queue.pending() == 0

            await _wait("the restarted indexer to empty the queue", drained, second)
        finally:
            assert await second.stop() == 0
        live = PAGES - len(set(GONE_EARLY) | set(GONE_LATE))
        assert await _indexed(stores, store_url) == live  # every live page once, no removed one
        for i in (1, 999, 1500, PAGES - 1, *GONE_EARLY[:3], *GONE_LATE[:3]):
            request = SearchRequest(
                parse_query(f"w{i}"), filters=SearchFilters(host=f"h{i % 7}.example"), now=T, limit=5
            )
            urls = [h.url for h in (await stores.search.search(request)).hits]
            gone = i in GONE_EARLY or i in GONE_LATE
            assert urls == ([] if gone else [_page(i).url]), i
    finally:
        await stores.close()
